//! The VM against real hardware: the rows of a `ron bench --out` run
//! (micro workload) next to the VM's runs of the same points on the
//! machine's own calibration, lock by lock, with each lock's ratio to a
//! reference lock on both and the rank correlation of the locks' order.
//! `vm-hwcheck` is the command; this module parses, pairs and renders.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use serde::Deserialize;

/// One row of a `ron bench` JSON file (the fields the check uses).
#[derive(Debug, Clone, Deserialize, PartialEq)]
pub struct HwRow {
    /// `micro` for the rows the VM can run.
    pub workload: String,
    /// Lock name (`ron bench --list`).
    pub lock: String,
    /// Threads.
    pub threads: usize,
    /// Mean non-critical section (ns).
    pub ncs_ns: f64,
    /// Data lines per critical section.
    pub cs_lines: usize,
    /// Million acquisitions per second (mean over the runs).
    pub mlocks_per_s: f64,
    /// Mean handover (ns); absent or `null` without handovers.
    #[serde(default)]
    pub handover_ns: Option<f64>,
    /// Whether the threads were pinned (along the route, as the VM places
    /// them); absent in hand-written files.
    #[serde(default)]
    pub pinned: Option<bool>,
}

/// A `ron bench --out` file: `{"meta": .., "rows": [..]}`, or a bare array
/// of rows.
#[derive(Deserialize)]
#[serde(untagged)]
enum BenchFile {
    Wrapped { rows: Vec<HwRow> },
    Bare(Vec<HwRow>),
}

/// Reads the rows of a `ron bench --out` JSON file.
pub fn load_bench(path: &Path) -> Result<Vec<HwRow>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let file: BenchFile = serde_json::from_str(&text).map_err(|e| {
        format!(
            "{}: not the JSON of `ron bench --out` ({e})",
            path.display()
        )
    })?;
    Ok(match file {
        BenchFile::Wrapped { rows } | BenchFile::Bare(rows) => rows,
    })
}

/// A point of the benchmark: threads, nCS (ns, as bits for ordering) and K.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct PointKey {
    /// Threads.
    pub threads: usize,
    /// nCS in ns (`f64::to_bits` of a non-negative value orders as the value).
    ncs_bits: u64,
    /// Data lines per critical section.
    pub cs_lines: usize,
}

impl PointKey {
    /// The point of `row`.
    pub fn of(row: &HwRow) -> Self {
        PointKey {
            threads: row.threads,
            ncs_bits: row.ncs_ns.max(0.0).to_bits(),
            cs_lines: row.cs_lines,
        }
    }

    /// nCS in ns.
    pub fn ncs_ns(&self) -> f64 {
        f64::from_bits(self.ncs_bits)
    }
}

/// The hardware rows the VM can run, by point, each point's locks in the
/// file's order; and the names of the locks left out (not ron-core locks,
/// or another workload), each once.
pub fn points(rows: &[HwRow], vm_locks: &[&str]) -> (BTreeMap<PointKey, Vec<HwRow>>, Vec<String>) {
    let mut by_point: BTreeMap<PointKey, Vec<HwRow>> = BTreeMap::new();
    let mut left_out = Vec::new();
    for r in rows {
        if r.workload != "micro" || !vm_locks.contains(&r.lock.as_str()) {
            let what = if r.workload != "micro" {
                format!("{} ({} workload)", r.lock, r.workload)
            } else {
                r.lock.clone()
            };
            if !left_out.contains(&what) {
                left_out.push(what);
            }
            continue;
        }
        by_point.entry(PointKey::of(r)).or_default().push(r.clone());
    }
    (by_point, left_out)
}

/// One lock at one point: the hardware's numbers and the VM's, one per seed.
#[derive(Debug, Clone)]
pub struct Compared {
    /// The point.
    pub point: PointKey,
    /// The hardware's row.
    pub hw: HwRow,
    /// The VM's Mlocks/s, one per seed.
    pub vm_mlocks: Vec<f64>,
    /// The VM's mean handover (ns), one per seed.
    pub vm_handover: Vec<f64>,
}

impl Compared {
    /// The VM's median Mlocks/s.
    pub fn vm(&self) -> f64 {
        ron_stats::median(&mut self.vm_mlocks.clone())
    }

    /// The VM's median handover (ns).
    pub fn vm_handover(&self) -> f64 {
        ron_stats::median(&mut self.vm_handover.clone())
    }
}

/// `x` with `decimals` decimals, or `-` when it is absent or not finite.
fn num(x: Option<f64>, decimals: usize) -> String {
    match x.filter(|v| v.is_finite()) {
        Some(v) => format!("{v:.decimals$}"),
        None => "-".into(),
    }
}

/// The comparison as markdown: a table of every lock at every point (the
/// VM's median over the seeds with their min-max, its ratio to the
/// hardware's, each side's ratio to `reference` at the point, the two
/// mean handovers), then per point the rank correlation of the locks'
/// throughput, hardware against VM.
pub fn render(rows: &[Compared], reference: &str) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "| threads | nCS ns | K | lock | hardware Mlocks/s | VM (seeds min-max) | VM / hw | x {reference} hw | x {reference} VM | handover hw ns | handover VM ns |"
    );
    out += "|--:|--:|--:|---|--:|--:|--:|--:|--:|--:|--:|\n";
    let mut by_point: BTreeMap<PointKey, Vec<&Compared>> = BTreeMap::new();
    for c in rows {
        by_point.entry(c.point).or_default().push(c);
    }
    for (p, cs) in &by_point {
        let refs = cs.iter().find(|c| c.hw.lock == reference);
        for c in cs {
            let (lo, hi) = c
                .vm_mlocks
                .iter()
                .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &x| {
                    (a.min(x), b.max(x))
                });
            let x_hw = refs.and_then(|r| ron_stats::ratio(c.hw.mlocks_per_s, r.hw.mlocks_per_s));
            let x_vm = refs.and_then(|r| ron_stats::ratio(c.vm(), r.vm()));
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {:.3} | {:.3} ({lo:.3}-{hi:.3}) | {} | {} | {} | {} | {} |",
                p.threads,
                p.ncs_ns(),
                p.cs_lines,
                c.hw.lock,
                c.hw.mlocks_per_s,
                c.vm(),
                num(ron_stats::ratio(c.vm(), c.hw.mlocks_per_s), 2),
                num(x_hw, 2),
                num(x_vm, 2),
                num(c.hw.handover_ns, 0),
                num(Some(c.vm_handover()).filter(|&h| h > 0.0), 0),
            );
        }
    }
    out += "\nRank correlation (Spearman, ties averaged) of the locks' throughput, hardware against VM:\n\n";
    for (p, cs) in &by_point {
        let hw: Vec<f64> = cs.iter().map(|c| c.hw.mlocks_per_s).collect();
        let vm: Vec<f64> = cs.iter().map(|c| c.vm()).collect();
        let _ = writeln!(
            out,
            "- {} threads, nCS {} ns, K = {}: {} ({} locks)",
            p.threads,
            p.ncs_ns(),
            p.cs_lines,
            num(ron_stats::spearman(&hw, &vm), 2),
            cs.len()
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(lock: &str, threads: usize, mlocks: f64) -> HwRow {
        HwRow {
            workload: "micro".into(),
            lock: lock.into(),
            threads,
            ncs_ns: 0.0,
            cs_lines: 2,
            mlocks_per_s: mlocks,
            handover_ns: Some(100.0),
            pinned: Some(true),
        }
    }

    #[test]
    fn points_keep_the_vm_locks_and_name_the_others_once() {
        let rows = vec![
            row("mcs", 4, 2.0),
            row("parking_lot", 4, 3.0),
            row("ron", 16, 1.0),
            row("parking_lot", 16, 3.0),
        ];
        let (p, left) = points(&rows, &["mcs", "ron"]);
        assert_eq!(p.len(), 2);
        assert_eq!(p.values().map(Vec::len).sum::<usize>(), 2);
        assert_eq!(left, vec!["parking_lot".to_string()]);
    }

    #[test]
    fn render_gives_ratios_to_the_reference_and_the_rank_correlation() {
        let p = PointKey::of(&row("mcs", 4, 2.0));
        let c = |lock: &str, hw: f64, vm: f64| Compared {
            point: p,
            hw: row(lock, 4, hw),
            vm_mlocks: vec![vm, vm * 1.1, vm * 0.9],
            vm_handover: vec![50.0; 3],
        };
        let text = render(
            &[
                c("mcs", 2.0, 4.0),
                c("ron", 3.0, 8.0),
                c("ticket", 1.0, 1.0),
            ],
            "mcs",
        );
        // ron: 1.50x MCS on the hardware, 2.00x in the VM, VM / hw 2.67.
        assert!(
            text.contains(
                "| 4 | 0 | 2 | ron | 3.000 | 8.000 (7.200-8.800) | 2.67 | 1.50 | 2.00 | 100 | 50 |"
            ),
            "{text}"
        );
        assert!(
            text.contains("- 4 threads, nCS 0 ns, K = 2: 1.00 (3 locks)"),
            "{text}"
        );
    }

    #[test]
    fn load_bench_reads_wrapped_and_bare_files_and_says_what_is_wrong() {
        let dir = std::env::temp_dir().join(format!("ron-hwcheck-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let r = r#"{"workload":"micro","lock":"mcs","threads":4,"ncs_ns":0.0,"cs_lines":2,"mlocks_per_s":2.5,"handover_ns":null,"extra":1}"#;
        let wrapped = dir.join("w.json");
        std::fs::write(&wrapped, format!(r#"{{"meta":{{}},"rows":[{r}]}}"#)).unwrap();
        let bare = dir.join("b.json");
        std::fs::write(&bare, format!("[{r}]")).unwrap();
        let bad = dir.join("bad.json");
        std::fs::write(&bad, "{}").unwrap();
        assert_eq!(load_bench(&wrapped).unwrap()[0].mlocks_per_s, 2.5);
        assert_eq!(load_bench(&bare).unwrap()[0].handover_ns, None);
        let e = load_bench(&bad).unwrap_err();
        assert!(e.contains("not the JSON of `ron bench --out`"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
