//! The reader-writer workload on the virtual machine: every thread
//! repeatedly takes a reader-writer lock, shared with probability
//! `read_pct` % and else exclusively, runs a critical section over `K`
//! data lines, releases, and does `nCS * U(0.85, 1.15)` ns of virtual work
//! outside it. Threads start at `U(0, nCS + skew)` ns, as in
//! [`crate::workload`].
//!
//! * A reader loads the `K` lines (independent accesses, up to
//!   `Costs::mlp` at once) and checks they hold one value before and after
//!   its priced loads (a torn or changing value is a writer inside).
//! * A writer checks the lines hold one value, writes the first, makes
//!   its priced stores of all `K`, then writes the others (in between the
//!   lines are torn, so a reader or writer that overlaps it sees it), and
//!   checks no reader is inside. At the end every line must equal the
//!   writes made.
//!
//! Besides throughput it records, per operation, its kind, request,
//! acquisition and release times, so that the writers' handover (from the
//! last release of any holder to a waiting writer's acquisition) and the
//! writers' critical section can be reported.

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::time::Instant;

use lock_api::RawRwLock;
use ron_stats::SplitMix64;
use ron_vm::{Costs, Vm};

use crate::fixed::{Block, RunMemory, Wire, isolated};
use crate::machine::VirtualMachine;

/// The reader-writer locks of `vm-rw`, in display order.
pub const RW_LOCKS: &[&str] = &["ron-rw", "one-counter", "ttas"];

/// One point of the reader-writer workload.
#[derive(Debug, Clone)]
pub struct RwPoint {
    /// Threads start within `U(0, ncs_ns + start_skew_ns)` ns.
    pub start_skew_ns: f64,
    /// CPU of each thread.
    pub cpus: Vec<usize>,
    /// Share of operations that read, in percent (0 to 100).
    pub read_pct: f64,
    /// Mean non-critical section (virtual ns).
    pub ncs_ns: f64,
    /// Data lines read (or written) per critical section (at least 1).
    pub cs_lines: usize,
    /// Operations in all (shared by the threads).
    pub ops: u64,
    /// Seed of the jitter and of the read/write draws.
    pub seed: u64,
    /// Costs of the VM.
    pub costs: Costs,
}

/// What a reader-writer run measured (virtual times unless named `wall`).
#[derive(Debug, Clone, PartialEq)]
pub struct RwStats {
    /// Operations in the measured window (the first 10 % are warm-up and
    /// the last `threads` the drain).
    pub window_ops: u64,
    /// The measured window (virtual ns).
    pub window_ns: f64,
    /// Million operations per virtual second in the window.
    pub mops_per_s: f64,
    /// Reads and writes in the window.
    pub reads: u64,
    /// Writes in the window.
    pub writes: u64,
    /// Mean time from the last release of any holder to the acquisition
    /// by a writer that was already waiting then (ns; 0 if none).
    pub writer_handover_ns: f64,
    /// Writer acquisitions counted in `writer_handover_ns`.
    pub writer_handovers: u64,
    /// Mean writer critical section, acquisition to release (ns).
    pub writer_cs_ns: f64,
    /// Mean reader critical section, acquisition to release (ns).
    pub reader_cs_ns: f64,
    /// Mean acquire latency of readers and of writers (ns).
    pub acquire_ns: [f64; 2],
    /// Operations per thread in the window.
    pub per_thread: Vec<u64>,
    /// Every line counted every write, and no reader or writer ever saw
    /// another writer inside (torn or changing lines, or a reader count).
    pub exclusion_ok: bool,
    /// Exclusion violations seen (0 when `exclusion_ok`).
    pub violations: u64,
    /// Wall-clock seconds the simulation took.
    pub wall_s: f64,
    /// Fiber switches of the executor.
    pub switches: u64,
}

/// One finished operation: thread, write?, request, acquisition, release
/// (ps), and the writer handover (ps) if it waited for a release.
type Op = (usize, bool, u64, u64, u64, Option<u64>);

#[derive(Default)]
struct Shared {
    claimed: Cell<u64>,
    /// Latest release time (ps) of any holder.
    last_release: Cell<u64>,
    readers_in: Cell<u64>,
    writer_in: Cell<bool>,
    writes: Cell<u64>,
    violations: Cell<u64>,
    ops: RefCell<Vec<Op>>,
}

impl Shared {
    fn violated(&self) {
        self.violations.set(self.violations.get() + 1);
    }
}

/// Whether every line holds the same value.
fn even(vals: &[u64]) -> bool {
    vals.windows(2).all(|w| w[0] == w[1])
}

/// Runs the reader-writer workload with lock `L` on `vm`, in a process of
/// its own with the lock and data lines at fixed addresses (as
/// [`crate::workload::run`]): the same inputs give the same run whatever
/// ran before in this process (ron-core's reader table and lock ids are
/// process-wide).
pub fn run_rw<L: RawRwLock + 'static>(vm: &VirtualMachine, p: &RwPoint) -> RwStats {
    assert!(p.cs_lines >= 1, "the reader-writer workload needs K >= 1");
    let _turn = crate::workload::one_run_at_a_time();
    isolated(|| run_rw_here::<L>(vm, p))
}

/// [`run_rw`] in this process.
fn run_rw_here<L: RawRwLock + 'static>(vm: &VirtualMachine, p: &RwPoint) -> RwStats {
    let wall = Instant::now();
    ron_core::route::install(&vm.route).expect("the route is a permutation of the matrix indices");
    ron_core::groups::install(&vm.groups.of_cpu).expect("group ids are checked when derived");
    let k = p.cs_lines;
    // Declared before the VM, so they outlive its fibers.
    let mem = RunMemory::new(L::INIT, k);
    // SAFETY: only the fibers of `sim` below use these, and `sim.run()`
    // returns (or unwinds) only once every fiber is gone, before `mem` is
    // dropped.
    let (lock, lines) = unsafe { (mem.lock(), mem.lines()) };
    let mut sim = Vm::new(vm.to_vm_machine(), p.costs.clone()).fixed_stacks(true);
    let shared = Rc::new(Shared::default());
    shared.ops.borrow_mut().reserve(p.ops as usize);
    for (t, &cpu) in p.cpus.iter().enumerate() {
        let sh = Rc::clone(&shared);
        let (ncs, total, skew, read_pct) = (p.ncs_ns, p.ops, p.start_skew_ns, p.read_pct);
        let mut rng = SplitMix64::new(p.seed.wrapping_mul(0x2545_F491_4F6C_DD1D) ^ t as u64);
        sim.spawn(cpu, move || {
            ron_vm::work((ncs + skew) * rng.next_f64());
            let addrs: Vec<usize> = lines
                .iter()
                .map(|l| l as *const Block<Cell<u64>> as usize)
                .collect();
            let values = || lines.iter().map(|l| l.0.get()).collect::<Vec<u64>>();
            loop {
                // Bookkeeping at this thread's own virtual time.
                ron_vm::interleave();
                let idx = sh.claimed.get();
                if idx >= total {
                    break;
                }
                sh.claimed.set(idx + 1);
                let write = rng.next_f64() * 100.0 >= read_pct;
                let t_req = ron_vm::now_ps();
                if write {
                    let guard = lock.0.lock_exclusive();
                    let t_acq = ron_vm::now_ps();
                    let last = sh.last_release.get();
                    let handover = (t_req <= last).then(|| t_acq - last);
                    if sh.writer_in.get() || sh.readers_in.get() != 0 {
                        sh.violated();
                    }
                    sh.writer_in.set(true);
                    let vals = values();
                    if !even(&vals) {
                        sh.violated();
                    }
                    let v = vals[0] + 1;
                    lines[0].0.set(v);
                    ron_vm::access_all(&addrs, ron_vm::Access::Store);
                    if sh.readers_in.get() != 0 || lines[0].0.get() != v {
                        sh.violated();
                    }
                    for l in &lines[1..] {
                        l.0.set(v);
                    }
                    sh.writer_in.set(false);
                    sh.writes.set(sh.writes.get() + 1);
                    let t_rel = ron_vm::now_ps();
                    sh.last_release.set(sh.last_release.get().max(t_rel));
                    sh.ops
                        .borrow_mut()
                        .push((t, true, t_req, t_acq, t_rel, handover));
                    // SAFETY: `guard` came from `lock_exclusive` on this
                    // thread and is released exactly once.
                    unsafe { lock.0.unlock_exclusive(guard) };
                } else {
                    let guard = lock.0.lock_shared();
                    let t_acq = ron_vm::now_ps();
                    if sh.writer_in.get() {
                        sh.violated();
                    }
                    sh.readers_in.set(sh.readers_in.get() + 1);
                    let before = values();
                    ron_vm::access_all(&addrs, ron_vm::Access::Load);
                    let after = values();
                    if !even(&before) || before != after || sh.writer_in.get() {
                        sh.violated();
                    }
                    sh.readers_in.set(sh.readers_in.get() - 1);
                    let t_rel = ron_vm::now_ps();
                    sh.last_release.set(sh.last_release.get().max(t_rel));
                    sh.ops
                        .borrow_mut()
                        .push((t, false, t_req, t_acq, t_rel, None));
                    // SAFETY: `guard` came from `lock_shared` on this thread
                    // and is released exactly once.
                    unsafe { lock.0.unlock_shared(guard) };
                }
                let jitter = 0.85 + 0.3 * rng.next_f64();
                ron_vm::work(ncs * jitter);
            }
        });
    }
    let report = sim.run();
    let threads = p.cpus.len();
    let ops = shared.ops.borrow();
    let total = ops.len();
    let writes_made = shared.writes.get();
    let lines_ok = lines.iter().all(|l| l.0.get() == writes_made);
    let violations = shared.violations.get() + u64::from(!lines_ok);
    // `ops` is in release order (each pushed at its release time).
    let warm = (total / 10).max(1);
    let end = total.saturating_sub(threads).max(warm + 1).min(total);
    let (t0, t1) = (ops[warm - 1].4, ops[end - 1].4);
    let window = &ops[warm..end];
    let window_ns = (t1 - t0) as f64 / 1000.0;
    let mut per_thread = vec![0u64; threads];
    let (mut reads, mut writes) = (0u64, 0u64);
    let (mut wcs, mut rcs, mut racq, mut wacq) = (0u64, 0u64, 0u64, 0u64);
    let (mut ho, mut hos) = (0u64, 0u64);
    for &(t, w, req, acq, rel, h) in window {
        per_thread[t] += 1;
        if w {
            writes += 1;
            wcs += rel - acq;
            wacq += acq - req;
            if let Some(h) = h {
                ho += h;
                hos += 1;
            }
        } else {
            reads += 1;
            rcs += rel - acq;
            racq += acq - req;
        }
    }
    let mean = |sum: u64, n: u64| {
        if n == 0 {
            0.0
        } else {
            sum as f64 / n as f64 / 1000.0
        }
    };
    let window_ops = window.len() as u64;
    RwStats {
        window_ops,
        window_ns,
        mops_per_s: if window_ns > 0.0 {
            window_ops as f64 / window_ns * 1e3
        } else {
            0.0
        },
        reads,
        writes,
        writer_handover_ns: mean(ho, hos),
        writer_handovers: hos,
        writer_cs_ns: mean(wcs, writes),
        reader_cs_ns: mean(rcs, reads),
        acquire_ns: [mean(racq, reads), mean(wacq, writes)],
        per_thread,
        exclusion_ok: violations == 0,
        violations,
        wall_s: wall.elapsed().as_secs_f64(),
        switches: report.switches,
    }
}

impl Wire for RwStats {
    fn to_words(&self) -> Vec<u64> {
        let mut w = vec![
            self.window_ops,
            self.window_ns.to_bits(),
            self.mops_per_s.to_bits(),
            self.reads,
            self.writes,
            self.writer_handover_ns.to_bits(),
            self.writer_handovers,
            self.writer_cs_ns.to_bits(),
            self.reader_cs_ns.to_bits(),
            self.acquire_ns[0].to_bits(),
            self.acquire_ns[1].to_bits(),
            self.exclusion_ok as u64,
            self.violations,
            self.wall_s.to_bits(),
            self.switches,
            self.per_thread.len() as u64,
        ];
        w.extend_from_slice(&self.per_thread);
        w
    }

    fn from_words(next: &mut dyn FnMut() -> Option<u64>) -> Option<Self> {
        let f = |x: u64| f64::from_bits(x);
        let window_ops = next()?;
        let window_ns = f(next()?);
        let mops_per_s = f(next()?);
        let reads = next()?;
        let writes = next()?;
        let writer_handover_ns = f(next()?);
        let writer_handovers = next()?;
        let writer_cs_ns = f(next()?);
        let reader_cs_ns = f(next()?);
        let acquire_ns = [f(next()?), f(next()?)];
        let exclusion_ok = next()? != 0;
        let violations = next()?;
        let wall_s = f(next()?);
        let switches = next()?;
        let n = next()? as usize;
        let per_thread = (0..n).map(|_| next()).collect::<Option<Vec<u64>>>()?;
        Some(RwStats {
            window_ops,
            window_ns,
            mops_per_s,
            reads,
            writes,
            writer_handover_ns,
            writer_handovers,
            writer_cs_ns,
            reader_cs_ns,
            acquire_ns,
            per_thread,
            exclusion_ok,
            violations,
            wall_s,
            switches,
        })
    }
}

/// Runs reader-writer lock `name` (one of [`RW_LOCKS`]) at point `p`.
pub fn run_rw_named(name: &str, vm: &VirtualMachine, p: &RwPoint) -> Result<RwStats, String> {
    use crate::one_counter_rw::{Exclusive, OneCounterRw};
    Ok(match name {
        "ron-rw" => run_rw::<ron_core::RonRw>(vm, p),
        "one-counter" => run_rw::<OneCounterRw>(vm, p),
        "ttas" => run_rw::<Exclusive<ron_core::Ttas>>(vm, p),
        _ => {
            return Err(format!(
                "unknown reader-writer lock {name:?}; one of {RW_LOCKS:?}"
            ));
        }
    })
}
