//! The facts the README and the crate docs state about the tool and the
//! locks are checked against the tool itself, so that they cannot drift as
//! locks and subcommands are added: every subcommand is in `ron --help` and
//! the README, every own lock of `ron bench --list` has a row in the
//! README's and ron-core's lock tables, and the README's default grid is
//! the tool's.

use std::process::Command;

fn ron(args: &[&str]) -> String {
    let o = Command::new(env!("CARGO_BIN_EXE_ron"))
        .args(args)
        .env("RON_CALIBRATION", "")
        .output()
        .expect("run ron");
    assert!(o.status.success(), "{args:?}");
    String::from_utf8(o.stdout).unwrap()
}

fn file(rel: &str) -> String {
    let p = format!("{}/../{rel}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{p}: {e}"))
}

#[test]
fn every_subcommand_is_in_help_and_readme() {
    let help = ron(&["--help"]);
    let names: Vec<&str> = help
        .lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|&n| n != "help")
        .collect();
    for expected in [
        "topo",
        "calibrate",
        "route",
        "bench",
        "compare",
        "simulate",
        "plot",
    ] {
        assert!(
            names.contains(&expected),
            "{expected} not in --help: {help}"
        );
    }
    assert!(help.contains("vm/target/release/ron-vm-bench"), "{help}");
    assert!(help.contains("cd vm && cargo build --release"), "{help}");
    let readme = file("README.md");
    for n in &names {
        assert!(
            readme.contains(&format!("`ron {n}")),
            "README lacks `ron {n}`"
        );
    }
    assert!(readme.contains("vm/target/release/ron-vm-bench"));
}

/// `(name, kind, type)` of every row of `ron bench --list`'s lock table.
fn locks() -> Vec<(String, String, String)> {
    ron(&["bench", "--list"])
        .lines()
        .skip(3)
        .take_while(|l| l.starts_with('|'))
        .map(|l| {
            let c: Vec<String> = l.split('|').map(|c| c.trim().to_string()).collect();
            (c[1].clone(), c[2].clone(), c[3].clone())
        })
        .collect()
}

/// Whether the first cell of some table row of `text` names `bare` (as
/// `` `Bare` ``, `` `Bare<..>` `` or a rustdoc link `` [`Bare`] ``).
fn a_row_names(text: &str, bare: &str) -> bool {
    text.lines()
        .filter_map(|l| l.trim_start_matches("//!").trim().strip_prefix('|'))
        .filter_map(|l| l.split('|').next())
        .any(|cell| cell.contains(&format!("`{bare}`")) || cell.contains(&format!("`{bare}<")))
}

#[test]
fn every_own_lock_is_in_the_lock_tables() {
    let readme = file("README.md");
    let lib = file("ron-core/src/lib.rs");
    // ron-core's front page: the "Which lock to pick" table.
    let pick = lib
        .split("//! ## Which lock to pick")
        .nth(1)
        .and_then(|rest| rest.split("//! ## ").next())
        .expect("ron-core's docs have a \"Which lock to pick\" section");
    let own: Vec<_> = locks().into_iter().filter(|l| l.1 != "peer").collect();
    assert!(own.len() > 5, "{own:?}");
    for (name, _, ty) in &own {
        // `RonInline<16>` -> `RonInline`.
        let bare = ty.split('<').next().unwrap();
        assert!(
            a_row_names(&readme, bare),
            "README's lock table has no row for {bare} ({name})"
        );
        assert!(
            a_row_names(pick, bare),
            "ron-core's \"Which lock to pick\" has no row for {bare} ({name})"
        );
    }
}

#[test]
fn the_readme_default_grid_is_the_tools() {
    let list = ron(&["bench", "--list"]);
    let defaults: Vec<&str> = list
        .lines()
        .next()
        .and_then(|l| l.split("`default` = ").nth(1))
        .map(|d| d.trim_end_matches("):").split(',').collect())
        .expect("the default list");
    let readme = file("README.md");
    let para: String = readme
        .split("\n\n")
        .find(|p| p.starts_with("The default grid runs"))
        .expect("README: `The default grid runs` paragraph")
        .to_string();
    let all = locks();
    let named: Vec<&str> = all
        .iter()
        .map(|l| l.0.as_str())
        .filter(|n| para.contains(&format!("`{n}`")))
        .map(|n| defaults.iter().copied().find(|d| d == &n).unwrap_or(n))
        .collect();
    let mut named_sorted = named.clone();
    named_sorted.sort_unstable();
    let mut want = defaults.clone();
    want.sort_unstable();
    assert_eq!(named_sorted, want, "README's default grid: {para}");
}

#[test]
fn the_readme_lists_the_papers_workloads() {
    let help = ron(&["bench", "--help"]);
    let readme = file("README.md");
    let bench = readme
        .split("### `ron bench`")
        .nth(1)
        .expect("README: `ron bench` section");
    for w in ["kv", "kv-update", "ron-micro"] {
        assert!(help.contains(w), "`ron bench --help` lacks {w}");
        assert!(
            bench.contains(&format!("`{w}`")),
            "README's `ron bench` section lacks `{w}`"
        );
    }
    let repro = file("docs/reproduction.md");
    let repro = repro.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(repro.contains("`ron bench --workload kv|kv-update|ron-micro`"));
}
