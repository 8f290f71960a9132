//! Panic safety of every lock: user code that runs inside a lock operation
//! (a `Relax` policy's `relax`, the CPU hint provider) may panic, and the
//! lock must stay sound and usable, or the process must abort.
//!
//! For every lock type:
//! * (a) a waiter whose `relax` panics while another thread holds the lock
//!   (after it registered, claimed, queued or took a ticket), and a waiter
//!   whose `relax` panics right after the holder handed the lock to its
//!   slot: after the panic is caught, the lock is free once the holder
//!   unlocks, `try_lock` takes it, and two threads still exclude each
//!   other;
//! * (b) one thread holds a guard and calls `lock()` again inside
//!   `catch_unwind` (its `relax` panics): after the first guard unlocks,
//!   the lock works;
//! * (c) a hint provider that panics during unlock (with a waiter present
//!   where the lock only asks the hint then): the unlock panics but the
//!   lock ends up released, and `MutexGuard::unlocked` does not deadlock.
//!
//! The FIFO queue and ticket locks (`Ticket`, `Mcs`, `Cna`, `CBoMcs`'s
//! group queue, `Fsl`, `RonTicket`) abort the process instead in (a) and
//! (b): those run in a child process (this binary, re-run with
//! `RON_PANIC_SAFETY_CHILD` naming the scenario), and the parent checks the
//! child died of `SIGABRT` after printing the lock's message. Those tests
//! are ignored under Miri (no processes); the others run under Miri in
//! `.ci/miri`.
//!
//! The hint provider is process-global and the relax policy is configured
//! through per-thread state, so every test takes the `SERIAL` lock.
#![cfg(not(loom))]

use std::cell::Cell;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::SeqCst};
use std::sync::{Mutex as StdMutex, MutexGuard as StdGuard, Once};
use std::thread;

use lock_api::{Mutex, MutexGuard, RawMutex};
use ron_core::coverage;
use ron_core::relax::Relax;
use ron_core::{
    CBoMcs, Cna, Fsl, Mcs, NxtRonInline, Ron, RonGrant, RonInline, RonPark, RonPlockInline, RonRaw,
    RonTicketInline,
};
use ron_core::{NxtRon, RonPlock, RonTicket, ShRon, Tas, Ticket, Ttas};
use ron_testkit::{for_each_lock, if_lock};

/// Acquisitions per thread in the exclusion check (Miri is ~10^4x slower;
/// there, the check after the unwind dominated each test's time at 8, and
/// 3 still hand the lock between the two threads).
const ITERS: u64 = if cfg!(miri) { 3 } else { 100 };

/// What the test relax policy does on the current thread.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Mode {
    /// Yields.
    Calm,
    /// Sets `WAITING`, yields.
    Signal,
    /// Sets `WAITING`; panics on its `n`-th call on this thread.
    PanicAt(u32),
    /// Sets `WAITING`, waits for `RELEASED` (the holder unlocked, handing
    /// the lock to this waiter's slot where the lock does that), panics.
    PanicAfterRelease,
}

thread_local! {
    static MODE: Cell<Mode> = const { Cell::new(Mode::Calm) };
    static CALLS: Cell<u32> = const { Cell::new(0) };
    /// How many of this thread's next hint lookups panic.
    static HINT_PANICS: Cell<u32> = const { Cell::new(0) };
}

/// A waiter called `relax` (so it is registered / queued / ticketed).
static WAITING: AtomicBool = AtomicBool::new(false);
/// The holder released the lock.
static RELEASED: AtomicBool = AtomicBool::new(false);
/// Hint lookups that panicked.
static HINT_PANICKED: AtomicU64 = AtomicU64::new(0);

const RELAX_PANIC: &str = "relax panics (test)";
const HINT_PANIC: &str = "hint panics (test)";

/// The relax policy of every lock under test; see [`Mode`].
#[derive(Default)]
struct TestRelax;

impl Relax for TestRelax {
    fn relax(&mut self) {
        let n = CALLS.with(|c| {
            c.set(c.get() + 1);
            c.get()
        });
        match MODE.get() {
            Mode::Calm => {}
            Mode::Signal => WAITING.store(true, SeqCst),
            Mode::PanicAt(k) => {
                WAITING.store(true, SeqCst);
                if n >= k {
                    MODE.set(Mode::Calm);
                    panic!("{RELAX_PANIC}");
                }
            }
            Mode::PanicAfterRelease => {
                WAITING.store(true, SeqCst);
                while !RELEASED.load(SeqCst) {
                    thread::yield_now();
                }
                MODE.set(Mode::Calm);
                panic!("{RELAX_PANIC}");
            }
        }
        thread::yield_now();
    }
}

/// The test hint provider: the thread's number, or a panic while
/// `HINT_PANICS` is non-zero on this thread.
fn test_hint() -> usize {
    if HINT_PANICS.get() > 0 {
        HINT_PANICS.set(HINT_PANICS.get() - 1);
        HINT_PANICKED.fetch_add(1, SeqCst);
        panic!("{HINT_PANIC}");
    }
    ron_core::hint::thread_number()
}

static SERIAL: StdMutex<()> = StdMutex::new(());

/// Serializes the tests, installs the hint provider and a panic hook that
/// keeps the expected panics quiet, and resets the shared flags.
fn serial() -> StdGuard<'static, ()> {
    let g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let quiet = info
                .payload_as_str()
                .is_some_and(|s| s == RELAX_PANIC || s == HINT_PANIC);
            if !quiet {
                default(info);
            }
        }));
    });
    ron_core::hint::set_provider(test_hint);
    WAITING.store(false, SeqCst);
    RELEASED.store(false, SeqCst);
    MODE.set(Mode::Calm);
    HINT_PANICS.set(0);
    g
}

fn wait_for(flag: &AtomicBool) {
    while !flag.load(SeqCst) {
        thread::yield_now();
    }
}

/// Runs `f` with the relax policy in `mode` on this thread; returns whether
/// it panicked.
fn panics_with(mode: Mode, f: impl FnOnce()) -> bool {
    MODE.set(mode);
    CALLS.set(0);
    let r = catch_unwind(AssertUnwindSafe(f));
    MODE.set(Mode::Calm);
    if let Err(e) = &r {
        let msg = e
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| e.downcast_ref::<&str>().copied());
        assert!(
            msg == Some(RELAX_PANIC) || msg == Some(HINT_PANIC),
            "an unexpected panic: {msg:?}"
        );
    }
    r.is_err()
}

/// The lock is free, `try_lock` takes it, and two threads exclude each
/// other on it.
fn check_usable<L: RawMutex + Sync>(m: &Mutex<L, u64>) {
    assert!(!m.is_locked(), "the lock is still held after the panic");
    let g = m
        .try_lock()
        .expect("try_lock fails on a free lock after the panic");
    drop(g);
    assert!(!m.is_locked(), "is_locked after unlock");
    let start = *m.lock();
    let inside = AtomicBool::new(false);
    thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| {
                for _ in 0..ITERS {
                    let mut g = m.lock();
                    assert!(!inside.swap(true, SeqCst), "two threads inside");
                    *g += 1;
                    thread::yield_now();
                    inside.store(false, SeqCst);
                }
            });
        }
    });
    assert_eq!(*m.lock(), start + 2 * ITERS, "lost updates");
    assert!(!m.is_locked());
}

/// (a) A waiter's relax panics (3rd call) while this thread holds the lock.
fn waiter_panics_while_held<L: RawMutex + Sync>(m: &Mutex<L, u64>) {
    let g = m.lock();
    thread::scope(|s| {
        let panicked = s
            .spawn(|| panics_with(Mode::PanicAt(3), || drop(m.lock())))
            .join()
            .unwrap();
        assert!(panicked, "the waiter's relax did not panic");
    });
    assert!(m.is_locked());
    drop(g);
    check_usable(m);
}

/// (a) The holder unlocks (handing over to the waiter's slot where the lock
/// does) while the waiter is inside `relax`; then `relax` panics.
fn waiter_panics_after_handover<L: RawMutex + Sync>(m: &Mutex<L, u64>) {
    WAITING.store(false, SeqCst);
    RELEASED.store(false, SeqCst);
    let g = m.lock();
    thread::scope(|s| {
        let h = s.spawn(|| panics_with(Mode::PanicAfterRelease, || drop(m.lock())));
        wait_for(&WAITING);
        drop(g);
        RELEASED.store(true, SeqCst);
        assert!(h.join().unwrap(), "the waiter's relax did not panic");
    });
    check_usable(m);
}

/// (b) One thread holds a guard and calls `lock()` again inside
/// `catch_unwind`; its relax panics.
fn nested_lock_panics<L: RawMutex + Sync>(m: &Mutex<L, u64>) {
    let g = m.lock();
    assert!(
        panics_with(Mode::PanicAt(3), || drop(m.lock())),
        "the nested lock's relax did not panic"
    );
    drop(g);
    check_usable(m);
}

/// (c) The hint panics during unlock. Where this unlock asks the hint
/// (`hint_in_unlock`), inside `MutexGuard::unlocked`, whose cleanup
/// re-locks: a deadlock if the unlock unwound with the lock held. Where it
/// does not, a plain unlock with every hint lookup panicking must not
/// panic.
fn unlock_hint_panics<L: RawMutex + Sync>(m: &Mutex<L, u64>, hint_in_unlock: bool) {
    let mut g = m.lock();
    let before = HINT_PANICKED.load(SeqCst);
    if hint_in_unlock {
        HINT_PANICS.set(1);
        let panicked = panics_with(Mode::Calm, || MutexGuard::unlocked(&mut g, || ()));
        HINT_PANICS.set(0);
        assert!(panicked, "the unlock did not ask the hint");
        assert_eq!(HINT_PANICKED.load(SeqCst) - before, 1);
        assert!(m.is_locked(), "the guard holds the lock again");
        drop(g);
    } else {
        HINT_PANICS.set(u32::MAX);
        let panicked = panics_with(Mode::Calm, || drop(g));
        HINT_PANICS.set(0);
        assert!(!panicked, "the unlock asked the hint");
        assert_eq!(HINT_PANICKED.load(SeqCst), before);
    }
    check_usable(m);
}

/// (c) As [`unlock_hint_panics`], with a waiter registered in its slot (the
/// RON locks whose unlock asks the hint only when someone waits).
fn unlock_hint_panics_with_waiter<L: RawMutex + Sync>(m: &Mutex<L, u64>) {
    WAITING.store(false, SeqCst);
    let mut g = m.lock();
    thread::scope(|s| {
        s.spawn(|| {
            MODE.set(Mode::Signal);
            *m.lock() += 1;
            MODE.set(Mode::Calm);
        });
        wait_for(&WAITING);
        HINT_PANICS.set(1);
        let panicked = panics_with(Mode::Calm, || MutexGuard::unlocked(&mut g, || ()));
        HINT_PANICS.set(0);
        assert!(panicked, "the unlock did not ask the hint");
        drop(g);
    });
    check_usable(m);
}

/// (c) for `RonRaw` and `RonInline`, which have no relax policy to say when a waiter is
/// registered: unlock with a panicking hint while another thread keeps
/// acquiring, until unlocks found it registered and asked the hint; each
/// such unlock must have released the lock (the other thread goes on).
fn hint_only_unlock_hint_panics_with_waiter<L: RawMutex + Sync>(m: &Mutex<L, u64>, in_slot: &str) {
    if cfg!(miri) {
        return hint_only_unlock_hint_panics_with_fresh_waiters(m, in_slot);
    }
    let stop = AtomicBool::new(false);
    let mut hits = 0;
    thread::scope(|s| {
        s.spawn(|| {
            while !stop.load(SeqCst) {
                *m.lock() += 1;
            }
        });
        for _ in 0..100_000 {
            let g = m.lock();
            // Long enough for the other thread to get through its
            // unregistered looks and register.
            for _ in 0..20 {
                thread::yield_now();
            }
            // A plain unlock, not `MutexGuard::unlocked`: when this unlock
            // does not ask the hint, its re-lock could (slow path) and
            // would panic inside lock_api's abort-on-panic clean-up.
            HINT_PANICS.set(1);
            if panics_with(Mode::Calm, || drop(g)) {
                hits += 1;
            }
            HINT_PANICS.set(0);
            if hits >= 3 {
                break;
            }
        }
        stop.store(true, SeqCst);
    });
    assert!(hits > 0, "no unlock found a registered waiter");
    check_usable(m);
}

/// [`hint_only_unlock_hint_panics_with_waiter`] under Miri, where the
/// paths are counted and a yield is slow: a waiter whose yield came back
/// slowly takes its CPU for shared and parks or yields instead of
/// registering, so the one long-lived acquiring thread of the native test
/// soon never registers. Each attempt here starts a fresh waiter, holds
/// the lock until the waiter has counted its entry into its slot, then
/// unlocks with a panicking hint; the waiter must get the lock.
fn hint_only_unlock_hint_panics_with_fresh_waiters<L: RawMutex + Sync>(
    m: &Mutex<L, u64>,
    in_slot: &str,
) {
    let mut hits = 0;
    // The waiter leaves its slot when its registered round ends (short
    // under Miri), so an attempt can miss it: try until an unlock hits.
    for _ in 0..40 {
        if hits >= 1 {
            break;
        }
        let g = m.lock();
        let before = *g;
        let registered = coverage::count(in_slot);
        thread::scope(|s| {
            s.spawn(|| *m.lock() += 1);
            let mut yields = 0u32;
            // It counts right after entering its slot, and spins there for
            // a while (every spin a thread switch under Miri).
            while coverage::count(in_slot) == registered {
                assert!(yields < 100_000, "the waiter never registered");
                thread::yield_now();
                yields += 1;
            }
            HINT_PANICS.set(1);
            if panics_with(Mode::Calm, || drop(g)) {
                hits += 1;
            }
            HINT_PANICS.set(0);
        });
        assert_eq!(*m.lock(), before + 1, "the waiter did not get the lock");
    }
    assert!(hits > 0, "no unlock found a registered waiter");
    check_usable(m);
}

/// Runs `f`; where the path counters are compiled in (Miri, or
/// `--cfg ron_coverage`), checks that it passed through `path`.
fn reaches(path: Option<&str>, f: impl FnOnce()) {
    let before = path.map_or(0, coverage::count);
    f();
    if let Some(p) = path
        && coverage::ENABLED
    {
        assert!(coverage::count(p) > before, "the test never reached {p}");
    }
}

// ----- non-aborting locks: Tas, Ttas, Ron, RonPlock, NxtRon, ShRon, RonRaw

macro_rules! unwinding_lock_tests {
    ($($name:ident: $ty:ty, hint_in_unlock = $hint:expr, with_waiter = $with_waiter:expr,
       left = $left:expr, took_grant = $took:expr;)*) => {$(
        mod $name {
            use super::*;

            #[test]
            fn waiter_panics_while_held() {
                let _s = serial();
                reaches($left, || super::waiter_panics_while_held(&Mutex::<$ty, u64>::new(0)));
            }

            #[test]
            fn waiter_panics_after_handover() {
                let _s = serial();
                reaches($took, || super::waiter_panics_after_handover(&Mutex::<$ty, u64>::new(0)));
            }

            #[test]
            fn nested_lock_panics() {
                let _s = serial();
                reaches($left, || super::nested_lock_panics(&Mutex::<$ty, u64>::new(0)));
            }

            #[test]
            fn unlock_hint_panics() {
                let _s = serial();
                super::unlock_hint_panics(&Mutex::<$ty, u64>::new(0), $hint);
                if $with_waiter {
                    super::unlock_hint_panics_with_waiter(&Mutex::<$ty, u64>::new(0));
                }
            }
        }
    )*};
}

unwinding_lock_tests! {
    tas: Tas<TestRelax>, hint_in_unlock = false, with_waiter = false,
        left = None, took_grant = None;
    ttas: Ttas<TestRelax>, hint_in_unlock = false, with_waiter = false,
        left = None, took_grant = None;
    ron: Ron<4, TestRelax>, hint_in_unlock = true, with_waiter = true,
        left = Some("ron.unwind_left"), took_grant = Some("ron.unwind_took_grant");
    ron_plock_inline: RonPlockInline<4, TestRelax>, hint_in_unlock = true, with_waiter = true,
        left = Some("plock.unwind_left"), took_grant = Some("plock.unwind_took_grant");
    nxt_ron_inline: NxtRonInline<4, TestRelax>, hint_in_unlock = false, with_waiter = true,
        left = Some("plock.unwind_left"), took_grant = Some("plock.unwind_took_grant");
    // Pooled: an unlock with no block frees at once, asking no hint.
    ron_plock: RonPlock<TestRelax>, hint_in_unlock = false, with_waiter = true,
        left = Some("plock.unwind_left"), took_grant = Some("plock.unwind_took_grant");
    nxt_ron: NxtRon<TestRelax>, hint_in_unlock = false, with_waiter = true,
        left = Some("plock.unwind_left"), took_grant = Some("plock.unwind_took_grant");
    sh_ron: ShRon<TestRelax>, hint_in_unlock = false, with_waiter = true,
        left = Some("sh_ron.unwind_left"), took_grant = Some("sh_ron.unwind_took_grant");
}

/// `RonGrant`, `RonRaw`, `RonInline` and `RonPark` have no relax policy:
/// their only user code is the hint, asked on the slow path before the
/// waiter registers, and (`RonGrant`, `RonRaw`, `RonInline`) in an unlock
/// with registered waiters and no recorded slot (`in_slot`: the path a
/// waiter counts once it is in its slot, for the Miri variant).
macro_rules! hint_only_lock_tests {
    ($($name:ident: $ty:ty, unlock_with_waiter = $with_waiter:expr, in_slot = $in_slot:literal;)*) => {$(
        mod $name {
            use super::*;

            #[test]
            fn waiter_hint_panics_while_held() {
                let _s = serial();
                let m = Mutex::<$ty, u64>::new(0);
                let g = m.lock();
                thread::scope(|s| {
                    let panicked = s
                        .spawn(|| {
                            HINT_PANICS.set(1);
                            panics_with(Mode::Calm, || drop(m.lock()))
                        })
                        .join()
                        .unwrap();
                    assert!(panicked, "the waiter did not ask the hint");
                });
                drop(g);
                check_usable(&m);
            }

            #[test]
            fn nested_lock_hint_panics() {
                let _s = serial();
                let m = Mutex::<$ty, u64>::new(0);
                let g = m.lock();
                HINT_PANICS.set(1);
                assert!(panics_with(Mode::Calm, || drop(m.lock())));
                drop(g);
                check_usable(&m);
            }

            #[test]
            fn unlock_hint_panics() {
                let _s = serial();
                super::unlock_hint_panics(&Mutex::<$ty, u64>::new(0), false);
                if $with_waiter {
                    hint_only_unlock_hint_panics_with_waiter(&Mutex::<$ty, u64>::new(0), $in_slot);
                }
            }
        }
    )*};
}

hint_only_lock_tests! {
    ron_grant: RonGrant, unlock_with_waiter = true, in_slot = "ron_grant.registered";
    ron_raw: RonRaw, unlock_with_waiter = true, in_slot = "ron_raw.in_slot";
    ron_inline: RonInline<4>, unlock_with_waiter = true, in_slot = "ron_raw.in_slot";
    ron_park: RonPark<4>, unlock_with_waiter = false, in_slot = "(not asked)";
}

/// `RonGrant`'s user code besides the hint: `keep_waiting` of
/// `try_acquire_in_while`, asked after every round that did not take the
/// lock, with nothing registered. A panic in it unwinds with the waiter
/// out of its slot and its block reference dropped: the lock is usable,
/// and the next contended waiter registers and is granted the lock.
#[test]
fn ron_grant_keep_waiting_panics() {
    let _s = serial();
    let m = Mutex::<RonGrant, u64>::new(0);
    let g = m.lock();
    thread::scope(|s| {
        let panicked = s
            .spawn(|| {
                panics_with(Mode::Calm, || {
                    // SAFETY: the raw lock is only waited on here; the
                    // wait panics in its first `keep_waiting`, while `g`
                    // holds the lock, so it never acquires it.
                    let raw = unsafe { m.raw() };
                    let _ = raw.try_acquire_in_while(1, || panic!("{}", RELAX_PANIC));
                })
            })
            .join()
            .unwrap();
        assert!(panicked, "keep_waiting was never asked");
    });
    drop(g);
    check_usable(&m);
}

/// `CBoMcs` waits for its global lock while holding its group's queue
/// lock, which it can give back: a panic there unwinds (its group queue
/// aborts, below).
#[test]
fn cbo_mcs_global_waiter_panics() {
    let _s = serial();
    let m = CBoMcs::<2, TestRelax>::new();
    let holder = m.acquire_in(0);
    reaches(Some("cbo_mcs.unwind_released_local"), || {
        thread::scope(|s| {
            let panicked = s
                .spawn(|| {
                    panics_with(Mode::PanicAt(3), || {
                        let _ = m.acquire_in(1);
                    })
                })
                .join()
                .unwrap();
            assert!(panicked);
        })
    });
    // SAFETY: `holder` is this thread's acquisition.
    unsafe { m.release(holder) };
    assert!(!m.is_held());
    for g in [0, 1, 0] {
        let t = m.acquire_in(g);
        // SAFETY: acquired just above.
        unsafe { m.release(t) };
    }
    check_usable(&Mutex::<CBoMcs<2, TestRelax>, u64>::from_raw(m, 0));
}

/// Unlock never asks the hint in these locks (the guard carries the slot
/// or group, or there is none), so a panicking hint cannot touch unlock.
#[test]
fn unlock_never_asks_the_hint() {
    let _s = serial();
    unlock_hint_panics(&Mutex::<Ticket<TestRelax>, u64>::new(0), false);
    unlock_hint_panics(&Mutex::<Mcs<TestRelax>, u64>::new(0), false);
    unlock_hint_panics(&Mutex::<Cna<16, true, TestRelax>, u64>::new(0), false);
    unlock_hint_panics(&Mutex::<CBoMcs<2, TestRelax>, u64>::new(0), false);
    unlock_hint_panics(&Mutex::<Fsl<1, 4, TestRelax>, u64>::new(0), false);
}

#[test]
fn ron_ticket_unlock_hint_panics() {
    let _s = serial();
    unlock_hint_panics(&Mutex::<RonTicketInline<4, TestRelax>, u64>::new(0), true);
    unlock_hint_panics_with_waiter(&Mutex::<RonTicketInline<4, TestRelax>, u64>::new(0));
    // Pooled: an unlock with no block frees at once, asking no hint.
    unlock_hint_panics(&Mutex::<RonTicket<TestRelax>, u64>::new(0), false);
    unlock_hint_panics_with_waiter(&Mutex::<RonTicket<TestRelax>, u64>::new(0));
}

// ----- aborting locks: a child process must die of SIGABRT

const CHILD_ENV: &str = "RON_PANIC_SAFETY_CHILD";

/// In the child (`CHILD_ENV` = `test`), runs `scenario`, which must abort;
/// in the parent, runs this test in a child and checks that it aborted
/// with the message naming `lock`.
#[cfg(unix)]
fn must_abort(test: &str, lock: &str, scenario: impl FnOnce()) {
    use std::os::unix::process::ExitStatusExt;
    use std::process::{Command, Stdio};
    use std::time::{Duration, Instant};

    if std::env::var(CHILD_ENV).as_deref() == Ok(test) {
        let _s = serial();
        scenario();
        eprintln!("child: the scenario returned without aborting");
        std::process::exit(3);
    }
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([test, "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD_ENV, test)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // A watchdog, not a synchronisation: a child that neither aborts nor
    // exits (a hang, the bug this test guards against) is killed.
    let deadline = Instant::now() + Duration::from_secs(120);
    let status = loop {
        if let Some(st) = child.try_wait().unwrap() {
            break st;
        }
        if Instant::now() > deadline {
            child.kill().unwrap();
            panic!("{test}: the child hung instead of aborting");
        }
        thread::sleep(Duration::from_millis(20));
    };
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    assert_eq!(
        status.signal(),
        Some(libc_sigabrt()),
        "{test}: the child did not abort ({status}); stderr:\n{stderr}"
    );
    assert!(
        stderr.contains("ron-core") && stderr.contains(lock) && stderr.contains("aborting"),
        "{test}: no abort message naming {lock}; stderr:\n{stderr}"
    );
}

/// SIGABRT (6 on every Unix Rust supports).
#[cfg(unix)]
fn libc_sigabrt() -> i32 {
    6
}

/// The aborting (FIFO) locks of `ron_testkit::for_each_lock!` (small
/// types, with the test relax policy).
macro_rules! aborting_lock_tests {
    ($name:ident, $ty:ty, { name: $n:literal, type_name: $lock:literal, $($rest:tt)* }) => {
        if_lock!(fifo_abort in { name: $n, type_name: $lock, $($rest)* } => {
            #[cfg(unix)]
            mod $name {
                use super::*;

                /// The lock's name as its abort message spells it.
                fn lock() -> &'static str {
                    $lock.split('<').next().unwrap()
                }

                #[test]
                #[cfg_attr(miri, ignore = "Miri cannot spawn processes")]
                fn waiter_panics_while_held_aborts() {
                    must_abort(concat!(stringify!($name), "::waiter_panics_while_held_aborts"), lock(), || {
                        super::waiter_panics_while_held(&Mutex::<$ty, u64>::new(0))
                    });
                }

                #[test]
                #[cfg_attr(miri, ignore = "Miri cannot spawn processes")]
                fn nested_lock_panics_aborts() {
                    must_abort(concat!(stringify!($name), "::nested_lock_panics_aborts"), lock(), || {
                        super::nested_lock_panics(&Mutex::<$ty, u64>::new(0))
                    });
                }
            }
        });
    };
}

for_each_lock!(aborting_lock_tests, small, relax = TestRelax);

/// Every lock of the list has panic-safety tests here: the aborting ones
/// through the list, the others by hand (their parameters differ per lock).
#[test]
fn every_lock_is_covered() {
    let mut covered = vec![
        "tas",
        "ttas",
        "ron",
        "ron-plock",
        "nxt-ron",
        "ron-plock-inline",
        "nxt-ron-inline",
        "sh-ron",
        "ron-grant",
        "ron-raw",
        "ron-inline",
        "ron-park",
    ];
    covered.extend(
        ron_testkit::locks::all()
            .iter()
            .filter(|l| l.fifo_abort)
            .map(|l| l.name),
    );
    ron_testkit::assert_covers("panic_safety", &covered);
}
