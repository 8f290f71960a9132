//! `ron bench --list`: every lock, reader-writer lock and co-runner policy.

use ron_bench::registry::{self, LockKind};
use ron_bench::workload::{corunner, rw};

use crate::output::table;

/// The lock and policy tables.
pub(super) fn list() -> String {
    let cells: Vec<Vec<String>> = registry::registry()
        .iter()
        .map(|e| {
            vec![
                e.info.name.to_string(),
                match e.info.kind {
                    LockKind::Ron => "ron",
                    LockKind::Baseline => "baseline",
                    LockKind::Peer => "peer",
                }
                .to_string(),
                e.info.type_name.to_string(),
                e.info.about.to_string(),
            ]
        })
        .collect();
    let defaults: Vec<&str> = registry::defaults().iter().map(|e| e.name()).collect();
    let mut s = format!(
        "locks (--locks; names or type names, any case; `all` = every one, `default` = {}):\n",
        defaults.join(",")
    );
    s.push_str(&table::table(
        &["name", "kind", "type", "description"],
        &cells,
    ));
    s.push_str("\nreader-writer locks (--workload rw, rw-map; `all` or `default` = every one):\n");
    let cells: Vec<Vec<String>> = rw::rw_locks()
        .iter()
        .map(|e| {
            vec![
                e.name.to_string(),
                e.type_name.to_string(),
                e.about.to_string(),
            ]
        })
        .collect();
    s.push_str(&table::table(&["name", "type", "description"], &cells));
    s.push_str("\nco-runner policies (--workload corunner --policies):\n");
    let cells: Vec<Vec<String>> = corunner::policies()
        .iter()
        .map(|p| vec![p.name.to_string(), p.type_name.to_string()])
        .collect();
    s.push_str(&table::table(&["policy", "type"], &cells));
    s
}
