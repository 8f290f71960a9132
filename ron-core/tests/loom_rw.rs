//! Loom models of `RonRw`, the reader-writer lock.
//!
//! Run: `RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=target/loom cargo test -p
//! ron-core --release --test loom_rw -- --nocapture` (the path counts go
//! to stderr).
//!
//! Every model guards a `loom::cell::UnsafeCell` with the lock: readers
//! read it, writers write it, and loom reports a write concurrent with any
//! other access. Each model then asserts, over all its executions, that
//! the paths it is named after were reached (`ron_core::coverage`).
//!
//! * `readers_and_writer`: two central readers and a writer: readers wait
//!   out a writer phase, the writer drains readers.
//! * `two_writers_and_reader`: writers queue on the `RonRaw` (route order)
//!   and set `PRES` in turn; a writer that finds the other's phase on,
//!   with no writer queued, first retries the one-CAS path
//!   (`POLITE_TRIES` is 1 under loom) and enters at a try that finds the
//!   lock free. Weakening both the load and the CAS of that path to
//!   Relaxed makes this model fail.
//! * `publication_race`: a biased lock, two readers in the visible-readers
//!   table (groups 0 and 1) and a writer revoking: the reader-side and
//!   writer-side `SeqCst` fences decide who backs off (a reader that
//!   backs off waits for the writer's phase reading only). Deleting the
//!   reader's fence makes this model fail.
//! * `joiner_and_writer`: as `publication_race`, with both readers in
//!   one slot: the first claims it, the second joins the claim while the
//!   writer revokes.
//! * `rebias_after_write`: a writer, then a thread that biases the lock
//!   again, then a reader through the table: the reader's Acquire load of
//!   the word must see the writer's data through the biasing RMW (weakening
//!   it to Relaxed makes this model fail).
//! * `bias_given_back`: a biased lock, a writer that writes twice and a
//!   reader: a write revokes the bias and gives it back at its end; a
//!   revocation that finds no table reader strikes, two in a row let the
//!   bias lapse (`STRIKES` is 2 under loom), one that finds a reader
//!   clears the strikes; a reader that finds a writer phase that will give
//!   the bias back waits writing nothing, then enters through the table.
//! * `upgrade_and_downgrade`: an upgradable reader that upgrades and then
//!   downgrades, a reader and a writer.
//! * `upgradable_unlock_then_writer`: an upgradable reader that unlocks
//!   without upgrading (queue first, its read counted out last) and a
//!   writer: weakening the count's `Release` makes this model fail.
//! * `upgrade_against_writer`: an upgradable reader that upgrades and a
//!   writer, which must not set its flag under the upgradable holder
//!   (the fast path's look at the writers' queue).
//! * `shared_slot`: two biased locks whose readers of group 0 share one
//!   table slot (the loom table maps every lock there): a reader of one
//!   claims the slot or joins it, a reader of the other finds it busy,
//!   claims it once idle, or races a claim and takes its count back,
//!   while a writer of the first revokes; neither lock's readers may meet
//!   its writer.
//! * `writer_run`: a writer writes twice, another once (every loom
//!   thread's CPU hint is 0): a writer phase taken after a contended wait
//!   records its CPU, and a write on that CPU that finds the phase just
//!   ended takes the next one past the queue (`WRITER_RUN`), here on the
//!   other thread, so its CAS must see that thread's writes: weakening
//!   its `Acquire` makes this model fail.
//! * `phase_bound`: a writer writes twice; a reader that arrived during
//!   the first writer phase must get in before the second (phase-fair:
//!   at most one writer phase), which it checks by the value it reads.
#![cfg(loom)]

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use loom::cell::UnsafeCell;
use loom::sync::Arc;
use loom::thread;
use ron_core::{RonRw, coverage};

/// Executions explored per model (see `run`).
const CAP: usize = 20_000;

/// The counters are process-wide: one model at a time.
static SERIAL: Mutex<()> = Mutex::new(());

struct Shared {
    lock: RonRw,
    cell: UnsafeCell<u64>,
}

impl Shared {
    fn new() -> Arc<Shared> {
        Arc::new(Shared {
            lock: RonRw::new(),
            cell: UnsafeCell::new(0),
        })
    }

    fn reader(&self, group: usize) -> u64 {
        let t = self.lock.read_in(group);
        // SAFETY: shared access held; loom checks no writer is concurrent.
        let v = self.cell.with(|p| unsafe { *p });
        // SAFETY: acquired above with `t`.
        unsafe { self.lock.unread(t) };
        v
    }

    fn writer(&self) {
        self.lock.write();
        // SAFETY: exclusive access held; loom checks it.
        self.cell.with_mut(|p| unsafe { *p += 1 });
        // SAFETY: exclusive access held (taken above).
        unsafe { self.lock.unwrite() };
    }
}

fn run(name: &str, preemptions: usize, paths: &[&str], f: impl Fn() + Sync + Send + 'static) {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    coverage::reset();
    let mut b = loom::model::Builder::new();
    b.preemption_bound = Some(preemptions);
    b.max_branches = 100_000;
    // Depth-first within the preemption bound, capped: a complete search
    // of the three-thread models takes hours; the weakened orderings they
    // exist for fail within the first few thousand.
    b.max_permutations = Some(CAP);
    let executions = std::sync::Arc::new(AtomicUsize::new(0));
    let e = std::sync::Arc::clone(&executions);
    b.check(move || {
        e.fetch_add(1, Ordering::Relaxed);
        f()
    });
    eprintln!("{name}: {} executions", executions.load(Ordering::Relaxed));
    for p in paths {
        let n = coverage::count(p);
        eprintln!("  {p:<36} {n}");
        assert!(n > 0, "{name}: path {p} never reached");
    }
}

#[test]
fn readers_and_writer() {
    run(
        "readers_and_writer",
        2,
        &[
            "ron_rw.read_central",
            "ron_rw.read_waits_phase",
            "ron_rw.write_fast",
            "ron_rw.write_waits_readers",
        ],
        || {
            let s = Shared::new();
            // Main reads, the writer is spawned (see `publication_race`).
            let w = {
                let s = s.clone();
                thread::spawn(move || s.writer())
            };
            let r = {
                let s = s.clone();
                thread::spawn(move || s.reader(1))
            };
            assert!(s.reader(0) <= 1);
            assert!(r.join().unwrap() <= 1);
            w.join().unwrap();
            assert_eq!(s.reader(0), 1);
            assert!(!s.lock.is_held(), "lock left held");
        },
    );
}

#[test]
fn two_writers_and_reader() {
    run(
        "two_writers_and_reader",
        2,
        &[
            "ron_rw.write_queued",
            "ron_rw.write_fast",
            "ron_rw.write_polite",
            "ron_rw.read_waits_phase",
        ],
        || {
            let s = Shared::new();
            let w = {
                let s = s.clone();
                thread::spawn(move || s.writer())
            };
            let r = {
                let s = s.clone();
                thread::spawn(move || s.reader(0))
            };
            s.writer();
            w.join().unwrap();
            assert!(r.join().unwrap() <= 2);
            assert_eq!(s.reader(0), 2);
            assert!(!s.lock.is_held(), "lock left held");
        },
    );
}

/// A biased lock, a writer and two readers, the main thread's on group 0
/// and a spawned one's on `group`. The writer is a spawned thread and the
/// main thread reads first: loom's depth-first search varies the end of
/// the schedule first, so this order puts the readers' publication and
/// the writer's revocation in the part it explores.
fn biased_readers_and_writer(group: usize) {
    let s = Shared::new();
    assert!(s.lock.bias_now(), "could not bias a fresh lock");
    let w = {
        let s = s.clone();
        thread::spawn(move || s.writer())
    };
    let r = {
        let s = s.clone();
        thread::spawn(move || s.reader(group))
    };
    assert!(s.reader(0) <= 1);
    assert!(r.join().unwrap() <= 1);
    w.join().unwrap();
    assert_eq!(s.reader(0), 1);
    // One revocation is one strike at most (`STRIKES` is 2 here).
    assert!(s.lock.is_biased(), "the write did not give the bias back");
    assert!(!s.lock.is_held(), "lock left held (a table count stayed?)");
}

#[test]
fn publication_race() {
    run(
        "publication_race",
        2,
        &[
            "ron_rw.biased",
            "ron_rw.read_table",
            "ron_rw.read_table_backoff",
            "ron_rw.read_table_missed",
            "ron_rw.read_waits_rebias",
            "ron_rw.revoke",
            "ron_rw.revoke_waits",
            "ron_rw.bias_restored",
        ],
        || biased_readers_and_writer(1),
    );
}

#[test]
fn joiner_and_writer() {
    run(
        "joiner_and_writer",
        2,
        &[
            "reader_table.claim",
            "reader_table.join",
            "ron_rw.read_table",
            "ron_rw.revoke",
            "ron_rw.revoke_waits",
        ],
        // Both readers on group 0: one claims the slot, the other joins it.
        || biased_readers_and_writer(0),
    );
}

#[test]
fn rebias_after_write() {
    run(
        "rebias_after_write",
        2,
        &["ron_rw.biased", "ron_rw.read_table", "ron_rw.write_fast"],
        || {
            let s = Shared::new();
            let w = {
                let s = s.clone();
                thread::spawn(move || s.writer())
            };
            // Biases once the write is over (seen through Relaxed snapshots
            // only: no happens-before with the writer from here).
            let b = {
                let s = s.clone();
                thread::spawn(move || {
                    while !(s.lock.phase_parity() && !s.lock.is_write_held()) {
                        thread::yield_now();
                    }
                    while !s.lock.bias_now() {
                        thread::yield_now();
                    }
                })
            };
            while !s.lock.is_biased() {
                thread::yield_now();
            }
            let v = s.reader(0);
            assert_eq!(v, 1, "a table reader after the write missed it");
            w.join().unwrap();
            b.join().unwrap();
            assert!(!s.lock.is_held(), "lock left held");
        },
    );
}

#[test]
fn bias_given_back() {
    run(
        "bias_given_back",
        2,
        &[
            "ron_rw.revoke",
            "ron_rw.revoke_struck",
            "ron_rw.bias_lapses",
            "ron_rw.strikes_cleared",
            "ron_rw.bias_restored",
            "ron_rw.read_waits_rebias",
            "ron_rw.read_table_after_phase",
        ],
        || {
            let s = Shared::new();
            assert!(s.lock.bias_now(), "could not bias a fresh lock");
            // A reader in the table, or one that waits (writing nothing)
            // for a phase that gives the bias back and then takes the table,
            // against two writes that revoke the bias, strike, clear the
            // strikes, give the bias back or let it lapse.
            let r = {
                let s = s.clone();
                thread::spawn(move || s.reader(0))
            };
            s.writer();
            s.writer();
            assert!(r.join().unwrap() <= 2);
            assert_eq!(s.reader(1), 2, "a reader after both writes missed one");
            assert!(!s.lock.is_held(), "lock left held (a table count stayed?)");
        },
    );
}

#[test]
fn upgrade_and_downgrade() {
    run(
        "upgrade_and_downgrade",
        2,
        &[
            "ron_rw.upgrade",
            "ron_rw.downgrade",
            "ron_rw.read_waits_phase",
        ],
        || {
            let s = Shared::new();
            let u = {
                let s = s.clone();
                thread::spawn(move || {
                    let t = s.lock.read_upgradable();
                    // SAFETY: upgradable (shared) access held.
                    let before = s.cell.with(|p| unsafe { *p });
                    // SAFETY: held with `t`.
                    unsafe { s.lock.upgrade(t) };
                    // SAFETY: exclusive access held.
                    s.cell.with_mut(|p| unsafe { *p += 1 });
                    // SAFETY: exclusive access held (taken above).
                    let r = unsafe { s.lock.downgrade() };
                    // SAFETY: shared access held; nobody wrote since.
                    let after = s.cell.with(|p| unsafe { *p });
                    assert_eq!(
                        after,
                        before + 1,
                        "a writer got in during upgrade/downgrade"
                    );
                    // SAFETY: held with `r`.
                    unsafe { s.lock.unread(r) };
                })
            };
            let r = {
                let s = s.clone();
                thread::spawn(move || s.reader(1))
            };
            s.writer();
            u.join().unwrap();
            assert!(r.join().unwrap() <= 2);
            assert_eq!(s.reader(0), 2);
            assert!(!s.lock.is_held(), "lock left held");
        },
    );
}

/// An upgradable reader that reads and unlocks without upgrading, and a
/// writer: the writer's write must come after the upgradable read (loom
/// reports the cell's race otherwise). The upgradable unlock releases the
/// writers' queue first and counts its read out last, so a writer that
/// takes the lock by its fast path after the queue is free synchronises
/// with the read through that count alone (its `Release`).
#[test]
fn upgradable_unlock_then_writer() {
    run(
        "upgradable_unlock_then_writer",
        2,
        &["ron_rw.write_fast"],
        || {
            let s = Shared::new();
            let u = {
                let s = s.clone();
                thread::spawn(move || {
                    let t = s.lock.read_upgradable();
                    // SAFETY: upgradable (shared) access held.
                    let v = s.cell.with(|p| unsafe { *p });
                    // SAFETY: held with `t`.
                    unsafe { s.lock.unread_upgradable(t) };
                    v
                })
            };
            s.writer();
            assert!(u.join().unwrap() <= 1);
            assert_eq!(s.reader(0), 1);
            assert!(!s.lock.is_held(), "lock left held");
        },
    );
}

/// An upgradable reader that upgrades, and a writer: the writer must not
/// set its flag under the upgradable holder. Its fast path checks the
/// writers' queue, which the upgradable reader holds
/// (`ron_rw.write_queued`: the writer goes through the queue); without
/// that check the two write at once (loom: concurrent writes to the
/// cell).
#[test]
fn upgrade_against_writer() {
    run(
        "upgrade_against_writer",
        2,
        &["ron_rw.upgrade", "ron_rw.write_queued"],
        || {
            let s = Shared::new();
            let u = {
                let s = s.clone();
                thread::spawn(move || {
                    let t = s.lock.read_upgradable();
                    // SAFETY: held with `t`.
                    unsafe { s.lock.upgrade(t) };
                    // SAFETY: exclusive access held.
                    s.cell.with_mut(|p| unsafe { *p += 1 });
                    // SAFETY: exclusive access held (taken above).
                    unsafe { s.lock.unwrite() };
                })
            };
            s.writer();
            u.join().unwrap();
            assert_eq!(s.reader(0), 2);
            assert!(!s.lock.is_held(), "lock left held");
        },
    );
}

#[test]
fn shared_slot() {
    run(
        "shared_slot",
        2,
        &[
            "reader_table.claim",
            "reader_table.join",
            "reader_table.join_raced",
            "reader_table.busy",
            "ron_rw.read_table",
            "ron_rw.revoke",
        ],
        || {
            let a = Shared::new();
            let b = Shared::new();
            assert!(a.lock.bias_now() && b.lock.bias_now(), "could not bias");
            // Leaves group 0's slot tagged with `a`'s id, idle.
            assert_eq!(a.reader(0), 0);
            let w = {
                let a = a.clone();
                thread::spawn(move || a.writer())
            };
            let rb = {
                let b = b.clone();
                thread::spawn(move || b.reader(0))
            };
            assert!(a.reader(0) <= 1);
            w.join().unwrap();
            assert_eq!(rb.join().unwrap(), 0);
            assert_eq!(a.reader(0), 1);
            assert!(!a.lock.is_held(), "lock a left held");
            assert!(!b.lock.is_held(), "lock b left held");
        },
    );
}

#[test]
fn writer_run() {
    run(
        "writer_run",
        3,
        &["ron_rw.write_run", "ron_rw.write_polite"],
        || {
            let s = Shared::new();
            let w = {
                let s = s.clone();
                thread::spawn(move || s.writer())
            };
            s.writer();
            s.writer();
            w.join().unwrap();
            assert_eq!(s.reader(0), 3);
            assert!(!s.lock.is_held(), "lock left held");
        },
    );
}

/// Executions in which the reader arrived during the first writer phase.
static IN_FIRST_PHASE: AtomicUsize = AtomicUsize::new(0);

#[test]
fn phase_bound() {
    IN_FIRST_PHASE.store(0, Ordering::Relaxed);
    run(
        "phase_bound",
        2,
        &["ron_rw.read_waits_phase", "ron_rw.write_fast"],
        || {
            let s = Shared::new();
            let first = !s.lock.phase_parity(); // the first writer flips it
            let r = {
                let s = s.clone();
                thread::spawn(move || {
                    let (t, phase) = s.lock.read_central_observing();
                    // SAFETY: shared access held.
                    let v = s.cell.with(|p| unsafe { *p });
                    // SAFETY: held with `t`.
                    unsafe { s.lock.unread(t) };
                    if phase == Some(first) {
                        IN_FIRST_PHASE.fetch_add(1, Ordering::Relaxed);
                        assert_eq!(v, 1, "a reader waited past a second writer phase");
                    }
                })
            };
            s.writer();
            s.writer();
            r.join().unwrap();
            assert!(!s.lock.is_held(), "lock left held");
        },
    );
    let n = IN_FIRST_PHASE.load(Ordering::Relaxed);
    eprintln!("  reader arrived in the first writer phase: {n}");
    assert!(
        n > 0,
        "phase_bound: the reader never arrived during a writer phase"
    );
}
