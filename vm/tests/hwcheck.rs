//! `vm-hwcheck` end to end: a small machine, a hardware run with a peer
//! the VM cannot run, and its errors.

use std::process::Command;

fn dir(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("ron-vm-hwcheck-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn row(lock: &str, mlocks: f64) -> String {
    format!(
        r#"{{"workload":"micro","lock":"{lock}","threads":2,"ncs_ns":0.0,"cs_lines":1,"mlocks_per_s":{mlocks},"handover_ns":300.0}}"#
    )
}

#[test]
fn compares_the_ron_core_locks_and_leaves_the_peers_out() {
    let d = dir("ok");
    let matrix = d.join("m.csv");
    std::fs::write(&matrix, "0,40,90,90\n40,0,90,90\n90,90,0,40\n90,90,40,0\n").unwrap();
    // Two files (a sweep run as two commands), one wrapped, one bare.
    let (first, second) = (d.join("a.json"), d.join("b.json"));
    let rows = [row("mcs", 2.0), row("parking_lot", 3.0)].join(",");
    std::fs::write(&first, format!(r#"{{"meta":{{}},"rows":[{rows}]}}"#)).unwrap();
    std::fs::write(&second, format!("[{}]", row("ron-ticket", 2.5))).unwrap();
    let benches = format!("{},{}", first.display(), second.display());
    let out = Command::new(env!("CARGO_BIN_EXE_vm-hwcheck"))
        .args(["--matrix", matrix.to_str().unwrap()])
        .args(["--bench", &benches])
        .args(["--repeat", "2", "--acquisitions", "2000"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    // The reference's own ratio is 1 on both sides.
    assert!(
        stdout
            .lines()
            .any(|l| l.starts_with("| 2 | 0 | 1 | mcs | 2.000 |") && l.contains("| 1.00 | 1.00 |")),
        "{stdout}"
    );
    assert!(stdout.contains("| ron-ticket | 2.500 |"), "{stdout}");
    assert!(!stdout.contains("parking_lot"), "{stdout}");
    assert!(
        stdout.contains("- 2 threads, nCS 0 ns, K = 1: "),
        "{stdout}"
    );
    assert!(
        stderr.contains("left out") && stderr.contains("parking_lot"),
        "{stderr}"
    );
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn says_what_is_wrong_in_one_line() {
    let d = dir("err");
    let matrix = d.join("m.csv");
    std::fs::write(&matrix, "0,40\n40,0\n").unwrap();
    let only_peers = d.join("peers.json");
    std::fs::write(&only_peers, format!("[{}]", row("parking_lot", 1.0))).unwrap();
    for (bench, expect) in [
        (d.join("absent.json"), "absent.json"),
        (only_peers, "no micro-workload row of a lock the VM runs"),
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_vm-hwcheck"))
            .args(["--matrix", matrix.to_str().unwrap()])
            .args(["--bench", bench.to_str().unwrap()])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success());
        let errors: Vec<&str> = stderr
            .lines()
            .filter(|l| l.starts_with("error: "))
            .collect();
        assert_eq!(errors.len(), 1, "{stderr}");
        assert!(errors[0].contains(expect), "{stderr}");
    }
    std::fs::remove_dir_all(&d).unwrap();
}
