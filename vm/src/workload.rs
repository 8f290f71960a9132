//! The workloads on the virtual machine: every thread repeatedly takes the
//! lock, runs a critical section, releases, and does `nCS * U(0.85, 1.15)`
//! ns of virtual work outside it. Threads start at `U(0, nCS + skew)` ns.
//!
//! * `micro`: the critical section reads and writes `K` data lines, as
//!   independent accesses (up to `Costs::mlp` misses at once).
//! * `ron-micro`: the RON paper's Algorithm 4: the critical section reads
//!   and writes 100 shared 4-byte integers (7 lines of 64 bytes).
//! * `kv`: the CNA paper's key-value map, an AVL tree of up to 1024 keys
//!   (see [`crate::kv`]), 80 % lookups or update-only.
//!
//! Every workload records, per acquisition, the time its data accesses
//! took inside the critical section and the threads waiting for the lock
//! when it was taken.

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::time::Instant;

use lock_api::RawMutex;
use ron_stats::SplitMix64;
use ron_vm::{Costs, Vm};

use crate::fixed::{Block, RunMemory, isolated};
use crate::machine::VirtualMachine;
pub use crate::run_stats::RunStats;
use crate::run_stats::{LINES_KEPT, LineKind, LineShare};

/// What the critical section does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Workload {
    /// Read and write `K` data lines (`--cs-lines`).
    Micro,
    /// Read and write 100 shared 4-byte integers (RON paper, Algorithm 4).
    RonMicro,
    /// An AVL tree of up to 1024 keys: 80 % lookups, 10 % inserts, 10 %
    /// removes (CNA paper, key-value map).
    Kv,
    /// The same tree, updates only (inserts and removes, even odds).
    KvUpdate,
}

impl Workload {
    /// The command-line name.
    pub fn name(self) -> &'static str {
        match self {
            Workload::Micro => "micro",
            Workload::RonMicro => "ron-micro",
            Workload::Kv => "kv",
            Workload::KvUpdate => "kv-update",
        }
    }
}

/// Shared integers of the `ron-micro` critical section.
pub const RON_MICRO_INTS: usize = 100;

/// One point of the workload.
#[derive(Debug, Clone)]
pub struct Point {
    /// What the critical section does.
    pub workload: Workload,
    /// Threads start within `U(0, ncs_ns + start_skew_ns)` ns (so that
    /// their first arrival order is not their spawn order).
    pub start_skew_ns: f64,
    /// CPU of each thread (threads that share a CPU run in turn).
    pub cpus: Vec<usize>,
    /// Mean non-critical section (virtual ns).
    pub ncs_ns: f64,
    /// Data lines written per critical section.
    pub cs_lines: usize,
    /// Acquisitions in all (shared by the threads).
    pub acquisitions: u64,
    /// Seed of the jitter.
    pub seed: u64,
    /// Costs of the VM.
    pub costs: Costs,
}

#[derive(Default)]
struct Shared {
    /// Acquisitions claimed so far (bookkeeping, not simulated memory).
    claimed: Cell<u64>,
    /// Release time (ps) and thread of the previous critical section.
    last_release: Cell<Option<(u64, usize)>>,
    /// Per acquisition index: (acquire time, release time) in ps.
    times: RefCell<Vec<(u64, u64)>>,
    /// Per acquisition index: the thread and the handover (ps, if any).
    owner: RefCell<Vec<(usize, Option<u64>, u64)>>,
    /// Threads between asking for the lock and taking it.
    waiting: Cell<u32>,
    /// Per acquisition index: waiters at the acquisition, data time (ps).
    cs: RefCell<Vec<(u32, u64)>>,
}

thread_local! {
    /// The measured window's first and last release (indices in release
    /// order) and the line transfers the VM had charged by each (a
    /// measurement; it changes no cost). Kept out of the heap, so that it
    /// moves no heap object the run prices. The fibers all run on the
    /// thread that runs the VM.
    static WINDOW_TRANSFERS: [Cell<u64>; 4] = const {
        [Cell::new(0), Cell::new(0), Cell::new(0), Cell::new(0)]
    };
    /// With [`measure_lines`] on: every line's cost at the window's first
    /// and last release (`ron_vm::line_costs`).
    static WINDOW_LINES: std::cell::RefCell<[Vec<ron_vm::LineCost>; 2]> =
        const { std::cell::RefCell::new([Vec::new(), Vec::new()]) };
}

/// Whether runs measure what each cache line cost their window
/// ([`RunStats::lines`]).
static MEASURE_LINES: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Makes the runs of this process measure what each cache line cost their
/// measured window ([`RunStats::lines`]: a per-line breakdown of the
/// handover). Off by default: the snapshots allocate during the run.
pub fn measure_lines(on: bool) {
    MEASURE_LINES.store(on, std::sync::atomic::Ordering::Relaxed);
}

/// The lines of `at_end` that cost most since `at_start` (by the time
/// their requesters waited), each with its kind: the lock's own bytes
/// `lock`, a data line in `data`, or other; and every line's cost summed
/// by kind.
fn costliest_lines(
    at_start: &[ron_vm::LineCost],
    at_end: &[ron_vm::LineCost],
    lock: std::ops::Range<u64>,
    data: &[u64],
) -> (Vec<LineShare>, [(u64, u64); 3]) {
    let before: std::collections::HashMap<u64, (u64, u64)> = at_start
        .iter()
        .map(|c| (c.addr, (c.transfers, c.wait_ps)))
        .collect();
    let mut lines: Vec<LineShare> = at_end
        .iter()
        .filter_map(|c| {
            let (t0, w0) = before.get(&c.addr).copied().unwrap_or((0, 0));
            let transfers = c.transfers - t0;
            (transfers > 0).then(|| LineShare {
                kind: if lock.contains(&c.addr) {
                    LineKind::Lock
                } else if data.contains(&c.addr) {
                    LineKind::Data
                } else {
                    LineKind::Other
                },
                addr: c.addr,
                transfers,
                wait_ps: c.wait_ps - w0,
            })
        })
        .collect();
    let mut totals = [(0, 0); 3];
    for l in &lines {
        let t = &mut totals[l.kind.code() as usize];
        *t = (t.0 + l.transfers, t.1 + l.wait_ps);
    }
    lines.sort_by(|a, b| b.wait_ps.cmp(&a.wait_ps).then(a.addr.cmp(&b.addr)));
    lines.truncate(LINES_KEPT);
    (lines, totals)
}

/// The measured window of a run of `total` acquisitions by `threads`
/// threads: the first 10 % are warm-up, the last `threads` the drain.
/// Returns the release indices `(warm, end)`; the window is `warm..end`.
fn window(total: usize, threads: usize) -> (usize, usize) {
    let warm = (total / 10).max(1);
    let end = total.saturating_sub(threads).max(warm + 1).min(total);
    (warm, end)
}

/// ron-core's route and group table are process-wide, and every run uses
/// the same fixed addresses (see [`crate::fixed`]): runs in one process
/// take turns, so that parallel tests cannot see each other's.
static ONE_RUN_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Takes this process's turn to run (see `ONE_RUN_AT_A_TIME`).
pub(crate) fn one_run_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    ONE_RUN_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner())
}

/// Runs the micro workload with lock `R` on `vm`, in a process of its own
/// (see [`crate::fixed`]): the same inputs give the same run whatever ran
/// before in this process.
pub fn run<R: RawMutex + 'static>(vm: &VirtualMachine, p: &Point) -> RunStats {
    let _turn = one_run_at_a_time();
    isolated(|| run_here::<R>(vm, p))
}

/// [`run`] in this process.
fn run_here<R: RawMutex + 'static>(vm: &VirtualMachine, p: &Point) -> RunStats {
    let wall = Instant::now();
    let cpu = thread_cpu_s();
    ron_core::route::install(&vm.route).expect("the route is a permutation of the matrix indices");
    ron_core::groups::install(&vm.groups.of_cpu).expect("group ids are checked when derived");
    let (warm, end) = window(p.acquisitions as usize, p.cpus.len());
    WINDOW_TRANSFERS.with(|w| {
        for (c, v) in w.iter().zip([warm as u64 - 1, end as u64 - 1, 0, 0]) {
            c.set(v);
        }
    });
    // The data lines: K for micro, the 100 integers' lines for ron-micro,
    // one counter line for kv (the exclusion check).
    let k = match p.workload {
        Workload::Micro => p.cs_lines,
        Workload::RonMicro => (RON_MICRO_INTS * 4).div_ceil(p.costs.line_bytes),
        Workload::Kv | Workload::KvUpdate => 0,
    };
    // The lock and the lines at the same addresses in every run (see
    // `fixed`); declared before the VM, so they outlive its fibers.
    let mem = RunMemory::new(R::INIT, k.max(1));
    // SAFETY: only the fibers of `sim` below use these, and `sim.run()`
    // returns (or unwinds) only once every fiber is gone, before `mem`
    // is dropped.
    let (lock, lines) = unsafe { (mem.lock(), mem.lines()) };
    let mut sim = Vm::new(vm.to_vm_machine(), p.costs.clone()).fixed_stacks(true);
    let measure = MEASURE_LINES.load(std::sync::atomic::Ordering::Relaxed);
    let tree = Rc::new(RefCell::new(crate::kv::Tree::half_full(p.seed)));
    let lookup = match p.workload {
        Workload::Kv => 0.8,
        _ => 0.0,
    };
    let is_kv = matches!(p.workload, Workload::Kv | Workload::KvUpdate);
    let shared = Rc::new(Shared::default());
    shared.times.borrow_mut().reserve(p.acquisitions as usize);
    for (t, &cpu) in p.cpus.iter().enumerate() {
        let (sh, tree) = (Rc::clone(&shared), Rc::clone(&tree));
        let (ncs, total, skew) = (p.ncs_ns, p.acquisitions, p.start_skew_ns);
        let mut rng = SplitMix64::new(p.seed.wrapping_mul(0x2545_F491_4F6C_DD1D) ^ t as u64);
        sim.spawn(cpu, move || {
            // Start spread over one nCS and the skew, so threads do not
            // all arrive at t = 0 in spawn order.
            ron_vm::work((ncs + skew) * rng.next_f64());
            let addrs: Vec<usize> = lines[..k]
                .iter()
                .map(|l| l as *const Block<Cell<u64>> as usize)
                .collect();
            loop {
                // Run the bookkeeping below at this thread's own virtual
                // time (after its nCS), not when the fiber last ran: the
                // waiting count must not include threads still in their nCS.
                ron_vm::interleave();
                let idx = sh.claimed.get();
                if idx >= total {
                    break;
                }
                sh.claimed.set(idx + 1);
                let t_req = ron_vm::now_ps();
                sh.waiting.set(sh.waiting.get() + 1);
                let guard = lock.0.lock();
                let t_acq = ron_vm::now_ps();
                sh.waiting.set(sh.waiting.get() - 1);
                let waiters = sh.waiting.get();
                let handover = match sh.last_release.get() {
                    Some((t_rel, who)) if who != t => Some(t_acq.saturating_sub(t_rel)),
                    _ => None,
                };
                if is_kv {
                    tree.borrow_mut().op(&mut rng, lookup);
                }
                // The data lines, each read and written: the reads are
                // taken first and the writes made after the priced
                // accesses, so a thread switch between them would expose
                // a second thread in the section as a lost update.
                let vals: Vec<u64> = lines.iter().map(|l| l.0.get()).collect();
                if k > 0 {
                    ron_vm::access_all(&addrs, ron_vm::Access::Store);
                } else {
                    ron_vm::interleave();
                }
                for (line, v) in lines.iter().zip(vals) {
                    line.0.set(v + 1);
                }
                let t_rel = ron_vm::now_ps();
                sh.last_release.set(Some((t_rel, t)));
                sh.owner.borrow_mut().push((t, handover, t_acq - t_req));
                sh.times.borrow_mut().push((t_acq, t_rel));
                sh.cs.borrow_mut().push((waiters, t_rel - t_acq));
                WINDOW_TRANSFERS.with(|w| {
                    let done = sh.times.borrow().len() as u64;
                    for i in 0..2 {
                        if done == w[i].get() + 1 {
                            w[2 + i].set(ron_vm::cost_stats().map_or(0, |c| c.transfers));
                            if measure {
                                let now = ron_vm::line_costs().unwrap_or_default();
                                WINDOW_LINES.with(|l| l.borrow_mut()[i] = now);
                            }
                        }
                    }
                });
                // SAFETY: `guard` came from `lock` on this thread and is
                // released exactly once.
                unsafe { lock.0.unlock(guard) };
                let jitter = 0.85 + 0.3 * rng.next_f64();
                ron_vm::work(ncs * jitter);
            }
        });
    }
    let report = sim.run();
    let threads = p.cpus.len();
    let times = shared.times.borrow();
    let owner = shared.owner.borrow();
    let total = times.len() as u64;
    let exclusion_ok = lines.iter().all(|l| l.0.get() == total) && tree.borrow().valid();
    let (warm, end) = window(total as usize, threads);
    let (t0, t1) = (times[warm - 1].1, times[end - 1].1);
    let window_transfers = WINDOW_TRANSFERS.with(|w| w[3].get().saturating_sub(w[2].get()));
    let (line_shares, kind_totals) = if measure {
        let lock_at = lock as *const _ as u64;
        let lock_bytes = lock_at..lock_at + size_of::<R>().max(1) as u64;
        let data: Vec<u64> = lines.iter().map(|l| l as *const _ as u64).collect();
        WINDOW_LINES.with(|l| {
            let l = l.borrow();
            costliest_lines(&l[0], &l[1], lock_bytes, &data)
        })
    } else {
        (Vec::new(), [(0, 0); 3])
    };
    let window_acquisitions = (end - warm) as u64;
    let window_ns = (t1 - t0) as f64 / 1000.0;
    let mut per_thread = vec![0u64; threads];
    let mut handovers = Vec::new();
    let mut lat = Vec::new();
    for &(t, h, l) in &owner[warm..end] {
        per_thread[t] += 1;
        handovers.extend(h);
        lat.push(l);
    }
    handovers.sort_unstable();
    lat.sort_unstable();
    let mean = |v: &[u64]| {
        if v.is_empty() {
            0.0
        } else {
            v.iter().sum::<u64>() as f64 / v.len() as f64 / 1000.0
        }
    };
    let pct = |v: &[u64], q: f64| {
        if v.is_empty() {
            0.0
        } else {
            v[((v.len() - 1) as f64 * q).round() as usize] as f64 / 1000.0
        }
    };
    let cs_samples = shared.cs.borrow()[warm..end]
        .iter()
        .map(|&(w, d)| (w, d as f64 / 1000.0))
        .collect();
    RunStats {
        cs_samples,
        total,
        window_acquisitions,
        window_ns,
        mlocks_per_s: if window_ns > 0.0 {
            window_acquisitions as f64 / window_ns * 1e3
        } else {
            0.0
        },
        handover_ns: mean(&handovers),
        handover_p50_ns: pct(&handovers, 0.5),
        handovers: handovers.len() as u64,
        latency_ns: [pct(&lat, 0.5), pct(&lat, 0.99), pct(&lat, 0.999)],
        per_thread,
        exclusion_ok,
        wall_s: wall.elapsed().as_secs_f64(),
        cpu_s: thread_cpu_s() - cpu,
        switches: report.switches,
        memory: report.stats,
        window_transfers,
        lines: line_shares,
        kind_totals,
    }
}

/// The calling thread's CPU time in seconds (0 where unsupported).
fn thread_cpu_s() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; the call only writes it.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    if rc != 0 {
        return 0.0;
    }
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}
