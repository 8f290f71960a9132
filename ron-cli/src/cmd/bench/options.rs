//! The options of `ron bench`.

use std::path::PathBuf;

use ron_bench::pin::Pinning;

use crate::output::Format;

/// Which workload to run.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Workload {
    /// lock; read+write K cache lines; unlock; busy-wait nCS.
    Micro,
    /// A BTreeMap of 1024 keys under one lock: 80% lookups, 20% updates.
    Kv,
    /// The kv map, updates only: 50% inserts, 50% removes.
    KvUpdate,
    /// The RON paper's Algorithm 4: read+write 100 shared 4-byte integers;
    /// records the data time in the critical section and the waiters.
    RonMicro,
    /// A compute thread sharing its CPU with W waiters: its slowdown per
    /// waiting policy.
    Corunner,
    /// T threads, N locks (`--n-locks`): each operation locks a random one,
    /// increments its counter, unlocks; with bytes per lock and resident
    /// memory.
    ManyLocks,
    /// A reader-writer lock: each operation a read (`--read-pct`) or a
    /// write of K cache lines (`--cs-lines`).
    Rw,
    /// A HashMap of 4096 keys behind a reader-writer lock: gets, and
    /// inserts (updates) for the rest (`--read-pct`, default 99).
    RwMap,
}

/// Thread placement.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pin {
    /// Pin thread i round-robin along the installed route.
    Route,
    /// Let the scheduler place threads.
    None,
}

/// Arguments of `ron bench`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Print every lock name (and co-runner policy) and exit.
    #[arg(long)]
    pub list: bool,
    /// Workload.
    #[arg(long, value_enum, default_value_t = Workload::Micro)]
    pub workload: Workload,
    /// Locks, comma-separated: `default` (the RON and baseline locks and
    /// peers `--list` names as default), `all` (every lock of `--list`), or
    /// names from `--list` (command-line or type names, any case).
    #[arg(long, default_value = "default", value_name = "LIST")]
    pub locks: String,
    /// Thread counts, comma-separated [default: 1,2,8,32; many-locks:
    /// 1,2,16].
    #[arg(long, value_name = "LIST")]
    pub threads: Option<String>,
    /// Mean non-critical sections, comma-separated: ns, or a multiple of
    /// the uncontended lock+CS+unlock time with an `x` suffix (`40x`).
    /// Each is jittered +-15%.
    #[arg(long, default_value = "0,1000", value_name = "LIST")]
    pub ncs: String,
    /// Cache lines read and written in each critical section (micro, rw).
    #[arg(long, default_value_t = 2, value_name = "K")]
    pub cs_lines: usize,
    /// Measured time per run (seconds, or with a unit: 250ms); co-runner:
    /// per phase.
    #[arg(long, default_value = "100ms", value_name = "DURATION")]
    pub duration: String,
    /// Warm-up per run (seconds, or with a unit).
    #[arg(long, default_value = "50ms", value_name = "DURATION")]
    pub warmup: String,
    /// Runs per point; the table shows their mean and standard deviation.
    #[arg(long, default_value_t = 3, value_name = "N")]
    pub repeat: usize,
    /// Thread placement.
    #[arg(long, value_enum, default_value_t = Pin::Route)]
    pub pin: Pin,
    /// Do not install the calibrated (or topology) route first.
    #[arg(long)]
    pub no_install: bool,
    /// Seed of the nCS jitter and key generators.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Rw, rw-map: percent of operations that are reads, comma-separated
    /// (0..=100) [default: rw 50,90,99,100; rw-map 99].
    #[arg(long, value_name = "LIST")]
    pub read_pct: Option<String>,
    /// Many-locks: numbers of locks, comma-separated (each operation takes
    /// a uniformly random one of them).
    #[arg(long, default_value = "2,1000,1000000", value_name = "LIST")]
    pub n_locks: String,
    /// Many-locks: skip a (lock, N) point whose locks would take more than
    /// this many MiB (a note says so).
    #[arg(long, default_value_t = 1024, value_name = "MIB")]
    pub max_lock_memory: u64,
    /// Co-runner: waiters sharing the compute thread's CPU, comma-separated.
    #[arg(long, default_value = "1,3", value_name = "LIST")]
    pub waiters: String,
    /// Co-runner: waiting policies, comma-separated (`all` or names from
    /// `--list`).
    #[arg(long, default_value = "all", value_name = "LIST")]
    pub policies: String,
    /// Format on stdout.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    /// Also write the results to FILE, in the format of its extension
    /// (.json, .csv, .md); rewritten after every run.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Compare with an earlier `ron bench` JSON or CSV file (as `ron compare
    /// FILE new` would).
    #[arg(long, value_name = "FILE")]
    pub baseline: Option<PathBuf>,
}

impl Pin {
    /// The placement this option asks for.
    pub fn pinning(self) -> Pinning {
        match self {
            Pin::Route => Pinning::Route,
            Pin::None => Pinning::None,
        }
    }
}
