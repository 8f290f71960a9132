//! Loading a machine: a latency matrix (CSV, or JSON as written by
//! `ron-topo`) or a calibration file, its route, and thread placements.

use std::path::Path;
use std::time::Duration;

use ron_topo::{Calibration, LatencyMatrix, SolveOptions};

use crate::groups::{Groups, GroupsChoice};

/// A machine to simulate: its matrix (indices are the virtual CPUs), the
/// route over those indices, and a display name.
#[derive(Debug, Clone)]
pub struct VirtualMachine {
    /// File stem of the matrix or calibration.
    pub name: String,
    /// Latencies in ns, row = from.
    pub matrix: LatencyMatrix,
    /// The route (matrix indices in tour order) RON locks hand over along.
    pub route: Vec<usize>,
    /// The group table every run installs (socket groups unless
    /// [`set_groups`](Self::set_groups) chose another).
    pub groups: Groups,
}

impl VirtualMachine {
    /// Reads `path`: a calibration JSON (matrix and route), a matrix JSON,
    /// or a matrix CSV; a route is solved when the file has none.
    pub fn load(path: &Path) -> Result<Self, String> {
        let name = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "machine".into());
        let err = |e: &dyn std::fmt::Display| format!("{}: {e}", path.display());
        let is_json = path.extension().is_some_and(|e| e == "json");
        if is_json {
            if let Ok(cal) = Calibration::read(path) {
                let route = cal.route_indices().map_err(|e| err(&e))?;
                let groups = Groups::derive(&cal.matrix, &GroupsChoice::Socket)?;
                return Ok(VirtualMachine {
                    name,
                    matrix: cal.matrix,
                    route,
                    groups,
                });
            }
            let m = LatencyMatrix::read_json(path).map_err(|e| err(&e))?;
            return Ok(Self::with_solved_route(name, m));
        }
        let m = LatencyMatrix::read_csv(path).map_err(|e| err(&e))?;
        Ok(Self::with_solved_route(name, m))
    }

    /// A machine from a matrix, with a route from `ron-topo`'s solver
    /// (deterministic: a fixed seed and iteration budget).
    pub fn with_solved_route(name: String, matrix: LatencyMatrix) -> Self {
        let route = solve_route(&matrix);
        let groups = Groups {
            of_cpu: crate::groups::sockets(&matrix),
            kind: "socket",
        };
        VirtualMachine {
            name,
            matrix,
            route,
            groups,
        }
    }

    /// Replaces the group table with the one `choice` names.
    pub fn set_groups(&mut self, choice: &GroupsChoice) -> Result<(), String> {
        self.groups = Groups::derive(&self.matrix, choice)?;
        Ok(())
    }

    /// CPUs.
    pub fn n(&self) -> usize {
        self.matrix.n()
    }

    /// The machine for the VM.
    pub fn to_vm_machine(&self) -> ron_vm::Machine {
        ron_vm::Machine::new(self.n(), self.matrix.as_slice().to_vec())
            .expect("a LatencyMatrix is a valid ron-vm machine")
    }

    /// CPUs for `threads` threads under `placement`. Up to [`n`](Self::n)
    /// threads get a CPU each; beyond that thread `i` shares the CPU of
    /// thread `i % n` (the VM's scheduler runs them in turn).
    pub fn place(&self, threads: usize, placement: Placement, seed: u64) -> Vec<usize> {
        let n = self.n();
        assert!(threads >= 1, "at least one thread");
        let first = threads.min(n);
        let mut cpus = match placement {
            Placement::Route => self.route[..first].to_vec(),
            Placement::First => (0..first).collect(),
            Placement::Random => {
                // A seeded partial Fisher-Yates shuffle.
                let mut rng = ron_stats::SplitMix64::new(seed ^ 0x9_1ace);
                let mut all: Vec<usize> = (0..n).collect();
                for i in 0..first {
                    let j = i + rng.below(n - i);
                    all.swap(i, j);
                }
                all.truncate(first);
                all
            }
        };
        for i in first..threads {
            cpus.push(cpus[i % n]);
        }
        cpus
    }
}

/// A deterministic route: the solver with a fixed seed and a bounded number
/// of local-search iterations (its time limit is generous enough not to bind).
pub fn solve_route(m: &LatencyMatrix) -> Vec<usize> {
    let opts = SolveOptions {
        time_limit: Duration::from_secs(600),
        max_iterations: Some(2_000),
        ..SolveOptions::default()
    };
    ron_topo::solve(m, &opts).order
}

/// Where threads run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Placement {
    /// Consecutive CPUs along the route (as `ron bench` pins them).
    Route,
    /// CPUs 0, 1, .. T-1.
    First,
    /// T CPUs drawn at random with the seed.
    Random,
}

impl Placement {
    /// The command-line name.
    pub fn name(self) -> &'static str {
        match self {
            Placement::Route => "route",
            Placement::First => "first",
            Placement::Random => "random",
        }
    }
}
