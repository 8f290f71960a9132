//! The `ron` binary's manners with bad input and Ctrl-C: every mistake is
//! one `error: --OPTION: ...` line on stderr with exit code 2 (negative
//! numbers and clap's own errors included); Ctrl-C cuts a single long run
//! short, prints its partial row marked interrupted and exits with 130.

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

fn ron(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ron"))
        .args(args)
        .env("RON_CALIBRATION", "")
        .output()
        .expect("run ron")
}

fn tmp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ron-cli-errors-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

/// A 2-CPU latency matrix (CSV).
fn matrix() -> String {
    let p = tmp("m.csv");
    std::fs::write(&p, "0,50\n50,0\n").unwrap();
    p.to_str().unwrap().to_string()
}

/// `ron ARGS` fails with exit code 2 and one line `error: OPTION: ...`.
fn assert_usage_error(args: &[&str], option: &str) {
    let o = ron(args);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
    assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
    assert!(
        err.starts_with(&format!("error: {option}")),
        "{args:?} should start with `error: {option}`: {err}"
    );
    assert!(!err.contains("panicked"), "{args:?}: {err}");
}

#[test]
fn bench_numeric_options_fail_in_one_line() {
    for (args, option) in [
        (&["--duration", "-1"][..], "--duration"),
        (&["--duration=-1"], "--duration"),
        (&["--duration", "NaN"], "--duration"),
        (&["--duration", "0"], "--duration"),
        (&["--warmup", "-5ms"], "--warmup"),
        (&["--threads", "-1"], "--threads"),
        (&["--threads", "1,,2"], "--threads"),
        (&["--threads", "0"], "--threads"),
        (&["--ncs", "-5"], "--ncs"),
        (&["--ncs", "1,,2"], "--ncs"),
        (&["--cs-lines", "-1"], "--cs-lines"),
        (&["--cs-lines", "99999999"], "--cs-lines"),
        (&["--repeat", "-1"], "--repeat"),
        (&["--repeat", "0"], "--repeat"),
        (&["--seed", "-1"], "--seed"),
        (&["--max-lock-memory", "-1"], "--max-lock-memory"),
        (&["--locks", ""], "--locks"),
        (&["--format", "yaml"], "--format"),
        (&["--workload", "ron-mikro"], "--workload"),
        (&["--workload", "kv-update", "--ncs", "-5"], "--ncs"),
        (&["--workload", "ron-micro", "--threads", "0"], "--threads"),
        (
            &["--workload", "many-locks", "--n-locks", "-1"],
            "--n-locks",
        ),
        (&["--workload", "corunner", "--waiters", "-1"], "--waiters"),
        (&["--workload", "rw", "--read-pct", "101"], "--read-pct"),
        (&["--workload", "rw", "--read-pct", "-1"], "--read-pct"),
        (
            &["--workload", "rw-map", "--read-pct", "99,,50"],
            "--read-pct",
        ),
        (&["--workload", "rw", "--read-pct", "half"], "--read-pct"),
        (&["--workload", "rw", "--read-pct", ""], "--read-pct"),
        (&["--workload", "rw", "--ncs", "40x"], "--ncs"),
        (&["--workload", "rw-map", "--ncs", "-5"], "--ncs"),
        (&["--workload", "rw", "--threads", "0"], "--threads"),
        (
            &["--workload", "rw", "--cs-lines", "99999999"],
            "--cs-lines",
        ),
        (&["--workload", "rw", "--locks", ""], "--locks"),
        (&["--workload", "rw", "--duration", "0"], "--duration"),
        (&["--workload", "rw", "--baseline", "b.json"], "--baseline"),
        (&["--frobnicate"], "--frobnicate"),
        (&["--out", "b.txt"], "--out"),
    ] {
        let mut a = vec!["bench"];
        a.extend_from_slice(args);
        assert_usage_error(&a, option);
    }
}

#[test]
fn simulate_route_calibrate_numeric_options_fail_in_one_line() {
    let m = matrix();
    let m = m.as_str();
    for (args, option) in [
        (&["simulate", "--matrix", m, "--cs", "-5"][..], "--cs"),
        (&["simulate", "--matrix", m, "--ncs", "-5"], "--ncs"),
        (
            &["simulate", "--matrix", m, "--duration", "-1"],
            "--duration",
        ),
        (&["simulate", "--matrix", m, "--threads", "-1"], "--threads"),
        (&["simulate", "--matrix", m, "--threads", "3"], "--threads"),
        (
            &["simulate", "--matrix", m, "--cna-threshold", "-1"],
            "--cna-threshold",
        ),
        (
            &["simulate", "--matrix", m, "--cohort-threshold", "0"],
            "--cohort-threshold",
        ),
        (
            &["simulate", "--matrix", m, "--cohort-group-size", "0"],
            "--cohort-group-size",
        ),
        (
            &["simulate", "--matrix", m, "--ttas-jitter", "-1"],
            "--ttas-jitter",
        ),
        (
            &["simulate", "--matrix", m, "--route-iterations", "-1"],
            "--route-iterations",
        ),
        (
            &["simulate", "--matrix", m, "--time-limit", "-1"],
            "--time-limit",
        ),
        (&["simulate", "--matrix", m, "--seed", "-1"], "--seed"),
        (&["simulate", "--matrix", m, "--format", "yaml"], "--format"),
        (
            &["route", "--matrix", m, "--time-limit", "-1"],
            "--time-limit",
        ),
        (
            &["route", "--matrix", m, "--iterations", "-1"],
            "--iterations",
        ),
        (&["route", "--matrix", m, "--seed", "-1"], "--seed"),
        (&["route", "--matrix"], "--matrix"),
        (&["calibrate", "--rounds", "-3"], "--rounds"),
        (&["calibrate", "--rounds", "0"], "--rounds"),
        (
            &["calibrate", "--pairs-per-class", "0"],
            "--pairs-per-class",
        ),
        (&["calibrate", "--time-limit", "-1"], "--time-limit"),
        (&["topo", "--format", "yaml"], "--format"),
        (
            &["plot", "--input", "x.json", "--matrix", m, "--out", "p.svg"],
            "--input",
        ),
        (&["compare", "--format", "yaml", "a", "b"], "--format"),
    ] {
        assert_usage_error(args, option);
    }
    // Missing arguments and unknown commands: one line too.
    for args in [&["compare", "a.json"][..], &["frob"]] {
        let o = ron(args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.starts_with("error: "), "{args:?}: {err}");
    }
}

/// Runs `ron ARGS`, sends SIGINT after 1.5 s and waits for the end (a
/// generous bound only catches a run that ignores the signal).
#[cfg(unix)]
fn interrupted(args: &[&str]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_ron"))
        .args(args)
        .env("RON_CALIBRATION", "")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run ron");
    std::thread::sleep(Duration::from_millis(1500));
    let pid = libc::pid_t::try_from(child.id()).unwrap();
    // SAFETY: sending a signal to our own child process, which has not
    // been waited for yet, so its pid cannot have been reused.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGINT) }, 0);
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > Duration::from_secs(40) {
            let _ = child.kill();
            panic!("{args:?} did not stop within 40 s of Ctrl-C");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

/// Ctrl-C during a single long run: the run stops at once (well before
/// its 60 s), its partial row is printed and marked interrupted, stderr
/// has one `error:` line, the exit code is 130.
#[cfg(unix)]
#[test]
fn ctrl_c_cuts_a_single_run_short() {
    let json = tmp("single.json");
    let _ = std::fs::remove_file(&json);
    let o = interrupted(&[
        "bench",
        "--locks",
        "ron-raw",
        "--threads",
        "1",
        "--ncs",
        "0",
        "--duration",
        "60s",
        "--warmup",
        "0",
        "--repeat",
        "1",
        "--out",
        json.to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(130), "{err}");
    // Besides `wrote FILE`, one line: the error.
    let errors: Vec<&str> = err.lines().filter(|l| !l.starts_with("wrote ")).collect();
    assert_eq!(errors.len(), 1, "{err}");
    assert!(
        errors[0].starts_with("error: interrupted by Ctrl-C"),
        "{err}"
    );
    assert!(out.contains("interrupted by Ctrl-C"), "{out}");
    assert!(out.contains("| ron-raw"), "{out}");
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(v["meta"]["interrupted"], true);
    let row = &v["rows"][0];
    assert_eq!(row["lock"], "ron-raw");
    assert!(row["total"].as_u64().unwrap() > 0, "{row}");
    assert!(row["duration_s"].as_f64().unwrap() < 60.0, "{row}");
    let _ = std::fs::remove_file(json);
}

/// The same for a single many-locks run.
#[cfg(unix)]
#[test]
fn ctrl_c_cuts_a_single_many_locks_run_short() {
    let o = interrupted(&[
        "bench",
        "--workload",
        "many-locks",
        "--locks",
        "ron-raw",
        "--threads",
        "1",
        "--n-locks",
        "2",
        "--duration",
        "60s",
        "--warmup",
        "0",
        "--repeat",
        "1",
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(130), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("error: interrupted by Ctrl-C"), "{err}");
    assert!(out.contains("interrupted by Ctrl-C"), "{out}");
    assert!(out.contains("| ron-raw"), "{out}");
}

/// The same for a single reader-writer run.
#[cfg(unix)]
#[test]
fn ctrl_c_cuts_a_single_rw_run_short() {
    let o = interrupted(&[
        "bench",
        "--workload",
        "rw",
        "--locks",
        "ron-rw",
        "--threads",
        "2",
        "--read-pct",
        "90",
        "--ncs",
        "0",
        "--duration",
        "60s",
        "--warmup",
        "0",
        "--repeat",
        "1",
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(130), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("error: interrupted by Ctrl-C"), "{err}");
    assert!(out.contains("interrupted by Ctrl-C"), "{out}");
    assert!(out.contains("| ron-rw"), "{out}");
}

/// Co-runner rows: Ctrl-C stops the pair in progress at once and drops it
/// (its phases were cut unequally), keeping the rows before it.
#[cfg(unix)]
#[test]
fn ctrl_c_stops_the_corunner() {
    let o = interrupted(&[
        "bench",
        "--workload",
        "corunner",
        "--policies",
        "spin-then-yield",
        "--waiters",
        "1",
        "--duration",
        "60s",
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(130), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("error: interrupted by Ctrl-C: 0 of 1 point"),
        "{err}"
    );
    assert!(String::from_utf8_lossy(&o.stdout).contains("interrupted by Ctrl-C"));
}
