//! The machine being simulated: a core-to-core latency matrix and the
//! per-operation costs that are not in it.

use core::fmt;

/// The largest number of virtual CPUs (the sharer sets are fixed bitsets).
pub const MAX_CPUS: usize = 512;

/// Why a [`Machine`] was refused.
#[derive(Debug, Clone, PartialEq)]
pub enum MachineError {
    /// No CPUs, or more than [`MAX_CPUS`].
    BadSize(usize),
    /// The latency table does not have `n * n` entries.
    BadLength {
        /// CPUs.
        n: usize,
        /// Entries given.
        len: usize,
    },
    /// An entry is negative or not finite.
    BadValue {
        /// From-CPU.
        from: usize,
        /// To-CPU.
        to: usize,
    },
}

impl fmt::Display for MachineError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MachineError::BadSize(n) => write!(f, "{n} CPUs (1 to {MAX_CPUS} supported)"),
            MachineError::BadLength { n, len } => {
                write!(f, "{len} latencies for {n} CPUs (need {})", n * n)
            }
            MachineError::BadValue { from, to } => {
                write!(f, "latency {from} -> {to} is negative or not finite")
            }
        }
    }
}

impl std::error::Error for MachineError {}

/// `n` virtual CPUs and the one-way cost (ns) of moving a cache line from
/// CPU `from` to CPU `to` (a core-to-core latency matrix, row = from).
#[derive(Debug, Clone, PartialEq)]
pub struct Machine {
    n: usize,
    /// Row-major `n * n`, in ps.
    ps: Vec<u64>,
}

impl Machine {
    /// A machine from a row-major `n x n` table in ns (the diagonal is ignored).
    ///
    /// ```
    /// let m = ron_vm::Machine::new(2, vec![0.0, 20.0, 30.0, 0.0]).unwrap();
    /// assert_eq!(m.latency_ps(1, 0), 30_000);
    /// ```
    pub fn new(n: usize, ns: Vec<f64>) -> Result<Self, MachineError> {
        if n == 0 || n > MAX_CPUS {
            return Err(MachineError::BadSize(n));
        }
        if ns.len() != n * n {
            return Err(MachineError::BadLength { n, len: ns.len() });
        }
        let mut ps = Vec::with_capacity(n * n);
        for (i, &v) in ns.iter().enumerate() {
            if !v.is_finite() || v < 0.0 {
                return Err(MachineError::BadValue {
                    from: i / n,
                    to: i % n,
                });
            }
            ps.push(ns_to_ps(v));
        }
        Ok(Machine { n, ps })
    }

    /// A machine whose latency `from -> to` is `f(from, to)` ns.
    pub fn from_fn(n: usize, mut f: impl FnMut(usize, usize) -> f64) -> Result<Self, MachineError> {
        let ns = (0..n * n).map(|i| f(i / n, i % n)).collect();
        Self::new(n, ns)
    }

    /// Virtual CPUs.
    pub fn n(&self) -> usize {
        self.n
    }

    /// Latency `from -> to` in ps (both below [`n`](Self::n)).
    #[inline]
    pub fn latency_ps(&self, from: usize, to: usize) -> u64 {
        self.ps[from * self.n + to]
    }
}

/// Costs of the operations that the latency matrix does not price.
/// All times in ns; see the crate docs for what each one stands for.
#[derive(Debug, Clone, PartialEq)]
pub struct Costs {
    /// A load, store or RMW on a line the CPU already holds (L1 hit).
    pub hit_ns: f64,
    /// Added to every RMW (a locked instruction drains the store buffer).
    pub rmw_ns: f64,
    /// One `spin_loop` (x86 `pause`: about 140 cycles on Skylake and later,
    /// some 40 ns at 3.5 GHz).
    pub pause_ns: f64,
    /// One `yield_now` with nothing else to run on the CPU (a syscall).
    pub yield_ns: f64,
    /// A miss on a line no CPU holds (DRAM).
    pub cold_ns: f64,
    /// How transfers of one line queue (see the crate docs).
    pub line_model: LineModel,
    /// [`LineModel::Directory`]: how long the line's home (directory or
    /// snoop filter entry) is busy with one request; the next request for
    /// the line starts no earlier (ns).
    pub dir_occupancy_ns: f64,
    /// Misses one thread can have outstanding at once in
    /// [`access_all`](crate::access_all) (memory-level parallelism; 1
    /// issues them one after the other).
    pub mlp: usize,
    /// Cache-line size in bytes (a power of two; 128 models adjacent-line
    /// prefetch).
    pub line_bytes: usize,
    /// A run stops with a panic when a virtual thread passes this time
    /// (a livelock or a lost wake-up would otherwise run forever).
    pub max_virtual_ns: f64,
    /// Whether a spinner in [`spin_while`](crate::spin_while) or a waiting
    /// loop that calls [`park_looks`](crate::park_looks) is suspended until
    /// one of its lines is written or its spin is over (the clock jumps)
    /// instead of running every look. Not a cost: an optimisation of the
    /// executor that leaves every result unchanged (tested byte for byte);
    /// `false` runs the looks one by one.
    pub suspend_spinners: bool,
    /// Scheduler: the time slice of a thread while others are queued on
    /// its CPU (Linux EEVDF's base slice, `sysctl_sched_base_slice`:
    /// 0.75 ms scaled by `1 + ilog2(min(CPUs, 8))`, so 3 ms on 8 CPUs or
    /// more; CFS's minimum granularity is the same).
    pub slice_ns: f64,
    /// Scheduler: switching a CPU from one thread of the process to
    /// another (about 1.2 to 1.5 us measured by a futex ping-pong of two
    /// threads pinned to one core: E. Bendersky, "Measuring context
    /// switching and memory overheads for Linux threads", 2018).
    pub switch_ns: f64,
    /// [`futex_wake`](crate::futex_wake) to the woken thread running on an
    /// idle CPU: a reschedule IPI to that CPU ([`Costs::ipi_ns`]) and a
    /// switch to the thread ([`Costs::switch_ns`]).
    pub wake_ns: f64,
    /// One inter-processor interrupt, from the write of the sender's
    /// interrupt command register to the handler running on the target:
    /// 1.5 us, the middle of the 1-2 us measured on x86 servers (the
    /// AEX-Notify paper's APIC IPI microbenchmarks, `sgx-step`, and the
    /// usual rule of about 2 us per target CPU for an IPI-based operation
    /// such as a TLB shootdown). [`membarrier`](crate::membarrier) pays it
    /// per CPU it interrupts.
    pub ipi_ns: f64,
    /// [`membarrier`](crate::membarrier): what the IPI's handler (interrupt
    /// entry, a full barrier, exit) takes from the thread it interrupts.
    /// Not measured: a third of [`Costs::ipi_ns`] (the delivery dominates
    /// an IPI's latency); vary it to see what it moves.
    pub ipi_handler_ns: f64,
}

impl Costs {
    /// The first model: reads of a line relayed one after the other at
    /// full latency, and one miss at a time ([`LineModel::Relay`], `mlp`
    /// 1); every other cost as in [`Costs::default`].
    pub fn relay() -> Self {
        Costs {
            line_model: LineModel::Relay,
            mlp: 1,
            ..Costs::default()
        }
    }
}

impl Default for Costs {
    fn default() -> Self {
        Costs {
            hit_ns: 1.0,
            rmw_ns: 5.0,
            pause_ns: 40.0,
            yield_ns: 300.0,
            cold_ns: 100.0,
            line_model: LineModel::Directory,
            dir_occupancy_ns: 10.0,
            mlp: 10,
            line_bytes: 64,
            max_virtual_ns: 60e9,
            suspend_spinners: true,
            slice_ns: 3e6,
            switch_ns: 1200.0,
            wake_ns: 1500.0 + 1200.0,
            ipi_ns: 1500.0,
            ipi_handler_ns: 500.0,
        }
    }
}

/// How the transfers of one cache line queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LineModel {
    /// Every miss on a line, read or write, waits for the transfer asked
    /// for before it (`busy_until`): `k` readers of a line just written
    /// see it `L`, `2L`, .. `kL` after the write (the first model).
    Relay,
    /// A directory: a miss waits for the line's home to be free (one
    /// [`Costs::dir_occupancy_ns`] per request) and, for a read, for the
    /// last write asked for; reads asked for together then overlap, the
    /// `j`-th of `k` readers seeing the line `(j - 1) * occupancy + L`
    /// after the write. A write still waits for every transfer before it.
    #[default]
    Directory,
}

impl LineModel {
    /// The command-line name.
    pub fn name(self) -> &'static str {
        match self {
            LineModel::Relay => "relay",
            LineModel::Directory => "directory",
        }
    }
}

/// ns (f64) to ps (u64), rounded; the executor's clocks are integer ps so
/// that sums are exact and runs are reproducible.
#[inline]
pub fn ns_to_ps(ns: f64) -> u64 {
    (ns * 1000.0).round().max(0.0) as u64
}
