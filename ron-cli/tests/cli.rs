//! The `ron` binary: errors are one line and a non-zero exit, never a
//! panic; small runs produce the documented output; a closed pipe ends it
//! quietly; `--out` is checked before any work; every `--matrix` accepts a
//! calibration file; lock names have aliases; latencies are bounded; plots
//! need no system font.

use std::process::{Command, Output, Stdio};

fn ron(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ron"))
        .args(args)
        .env("RON_CALIBRATION", "")
        .output()
        .expect("run ron")
}

fn assert_one_line_error(args: &[&str], needle: &str) {
    let o = ron(args);
    assert!(!o.status.success(), "{args:?} succeeded");
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
    assert!(err.contains(needle), "{args:?}: {err}");
    assert!(err.starts_with("error: "), "{args:?}: {err}");
    assert!(!err.contains("panicked"), "{args:?}: {err}");
}

#[test]
fn bench_errors_are_one_line() {
    assert_one_line_error(&["bench", "--locks", "ron,nope"], "unknown lock `nope`");
    assert_one_line_error(&["bench", "--threads", "0"], "--threads");
    assert_one_line_error(&["bench", "--threads", "two"], "--threads");
    assert_one_line_error(&["bench", "--duration", "0"], "--duration");
    assert_one_line_error(&["bench", "--duration", "5 parsecs"], "--duration");
    assert_one_line_error(&["bench", "--repeat", "0"], "repeat");
    assert_one_line_error(&["bench", "--duration", "1e9"], "--duration");
    assert_one_line_error(&["bench", "--ncs=-5"], "--ncs");
    assert_one_line_error(
        &["bench", "--workload", "corunner", "--policies", "nope"],
        "unknown co-runner policy `nope`",
    );
    let o = ron(&["bench", "--workload", "corunner", "--policies", "nope"]);
    assert!(!String::from_utf8_lossy(&o.stderr).contains("unknown lock"));
}

#[test]
fn corunner_says_which_options_it_ignores() {
    let o = ron(&[
        "bench",
        "--workload",
        "corunner",
        "--policies",
        "spin-then-yield",
        "--waiters",
        "1",
        "--duration",
        "10ms",
        "--locks",
        "ttas",
        "--repeat",
        "2",
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains("warning: --locks, --repeat do not apply to --workload corunner"),
        "{err}"
    );
    assert!(String::from_utf8_lossy(&o.stdout).contains("spin-then-yield"));
}

#[test]
fn matrix_errors_are_one_line() {
    assert_one_line_error(
        &["route", "--matrix", "/nonexistent/m.csv"],
        "/nonexistent/m.csv",
    );
    assert_one_line_error(
        &[
            "plot",
            "--matrix",
            "/nonexistent/m.csv",
            "--out",
            "/tmp/x.png",
        ],
        "/nonexistent/m.csv",
    );
    assert_one_line_error(
        &[
            "plot",
            "--input",
            "/nonexistent/b.json",
            "--out",
            "/tmp/x.svg",
        ],
        "b.json",
    );
}

#[test]
fn bench_list_names_every_lock() {
    let o = ron(&["bench", "--list"]);
    assert!(o.status.success());
    let out = String::from_utf8_lossy(&o.stdout);
    for name in [
        "ron-raw",
        "ron",
        "nxt-ron",
        "ron-plock",
        "ron-ticket",
        "parking_lot",
        "std",
        "spin",
        "spin-ticket",
    ] {
        assert!(out.contains(name), "{name} missing from --list");
    }
}

fn tmp(name: &str) -> std::path::PathBuf {
    std::env::temp_dir().join(format!("ron-cli-test-{}-{name}", std::process::id()))
}

#[test]
fn bench_json_then_plot() {
    let o = ron(&[
        "bench",
        "--locks",
        "ron-raw,spin",
        "--threads",
        "1,2",
        "--ncs",
        "0",
        "--duration",
        "0.02",
        "--warmup",
        "0",
        "--repeat",
        "2",
        "--format",
        "json",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON on stdout");
    for k in [
        "version",
        "command_line",
        "date",
        "cpu_model",
        "cpus",
        "route_source",
    ] {
        assert!(v["meta"].get(k).is_some(), "meta field {k}");
    }
    let rows = v["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 4);
    for k in [
        "lock",
        "threads",
        "ncs_ns",
        "cs_lines",
        "duration_s",
        "mlocks_per_s",
        "fairness_factor",
        "cv",
        "p50_ns",
        "p99_ns",
        "handover_ns",
        "cpu_per_wall",
        "cpu_ns_per_lock",
        "mlocks_per_s_sd",
    ] {
        assert!(rows[0].get(k).is_some(), "field {k}");
    }
    assert_eq!(rows[0]["repeats"], 2);
    let json = tmp("bench.json");
    std::fs::write(&json, &o.stdout).unwrap();
    let svg = tmp("bench.svg");
    let p = ron(&[
        "plot",
        "--input",
        json.to_str().unwrap(),
        "--out",
        svg.to_str().unwrap(),
    ]);
    assert!(p.status.success(), "{}", String::from_utf8_lossy(&p.stderr));
    assert!(std::fs::read_to_string(&svg).unwrap().contains("<svg"));
    let _ = std::fs::remove_file(json);
    let _ = std::fs::remove_file(svg);
}

#[test]
fn route_json_has_the_documented_fields() {
    let csv = tmp("m.csv");
    std::fs::write(&csv, "0,10,50,50\n10,0,50,50\n50,50,0,10\n50,50,10,0\n").unwrap();
    let o = ron(&[
        "route",
        "--matrix",
        csv.to_str().unwrap(),
        "--format",
        "json",
        "--time-limit",
        "0.2",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    for k in ["route", "cost", "identity_cost", "fifo_mean"] {
        assert!(v.get(k).is_some(), "field {k}");
    }
    assert_eq!(v["route"].as_array().unwrap().len(), 4);
    assert!((v["cost"].as_f64().unwrap() - 120.0).abs() < 1e-9);
    let png = tmp("m.png");
    let p = ron(&[
        "plot",
        "--matrix",
        csv.to_str().unwrap(),
        "--route",
        "0,1,2,3",
        "--out",
        png.to_str().unwrap(),
    ]);
    assert!(p.status.success(), "{}", String::from_utf8_lossy(&p.stderr));
    assert!(std::fs::metadata(&png).unwrap().len() > 0);
    assert_one_line_error(
        &[
            "plot",
            "--matrix",
            csv.to_str().unwrap(),
            "--route",
            "0,1,9",
            "--out",
            png.to_str().unwrap(),
        ],
        "--route",
    );
    let _ = std::fs::remove_file(csv);
    let _ = std::fs::remove_file(png);
}

/// A pipe whose reader is gone: `ron` must end without a word (no panic,
/// no "Broken pipe" message), as `cat` or `ls` do.
#[test]
fn closed_pipe_is_quiet() {
    for args in [
        &["bench", "--list"][..],
        &["completions", "bash"][..],
        &["man"][..],
    ] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_ron"))
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("run ron");
        drop(child.stdout.take()); // the reader goes away at once
        let o = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.is_empty(), "{args:?}: {err}");
        #[cfg(unix)]
        {
            use std::os::unix::process::ExitStatusExt;
            assert!(
                o.status.success() || o.status.signal() == Some(libc_sigpipe()),
                "{args:?}: {:?}",
                o.status
            );
        }
    }
}

#[cfg(unix)]
fn libc_sigpipe() -> i32 {
    13 // SIGPIPE on every Unix Rust supports
}

#[test]
fn bench_out_is_checked_before_running() {
    // A path below a regular file can never be created.
    let file = tmp("not-a-dir");
    std::fs::write(&file, "").unwrap();
    let bad = file.join("x.json");
    let o = ron(&["bench", "--out", bad.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.starts_with("error: --out"), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(
        o.stdout.is_empty(),
        "ran before failing: {}",
        String::from_utf8_lossy(&o.stdout)
    );
    let _ = std::fs::remove_file(file);
}

#[test]
fn bench_out_creates_directories_and_keeps_the_table_on_stdout() {
    let dir = tmp("outdir");
    let csv = dir.join("deeper").join("b.csv");
    let o = ron(&[
        "bench",
        "--locks",
        "NxtRon,RONRAW,std",
        "--threads",
        "1",
        "--ncs",
        "2x",
        "--duration",
        "10ms",
        "--warmup",
        "0",
        "--repeat",
        "1",
        "--out",
        csv.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let table = String::from_utf8_lossy(&o.stdout);
    // One canonical spelling in the output, whatever the input spelling.
    assert!(
        table.contains("| nxt-ron") && table.contains("| ron-raw"),
        "{table}"
    );
    assert!(table.contains("Summary"), "{table}");
    assert!(table.contains("nCS multiples (`x`) are of"), "{table}");
    assert!(!table.contains("wrote"), "status line on stdout: {table}");
    assert!(String::from_utf8_lossy(&o.stderr).contains("wrote"));
    let text = std::fs::read_to_string(&csv).unwrap();
    assert!(text.starts_with("workload,lock,threads,"), "{text}");
    assert_eq!(text.lines().count(), 4);
    // The CSV reads back: compare it with itself, and plot it.
    let c = ron(&["compare", csv.to_str().unwrap(), csv.to_str().unwrap()]);
    assert!(c.status.success(), "{}", String::from_utf8_lossy(&c.stderr));
    let cmp = String::from_utf8_lossy(&c.stdout);
    // One run per point: no spread to judge a difference by.
    assert_eq!(cmp.matches("? (1 run)").count(), 3, "{cmp}");
    let png = dir.join("b.png");
    let p = ron(&[
        "plot",
        "--input",
        csv.to_str().unwrap(),
        "--out",
        png.to_str().unwrap(),
    ]);
    assert!(p.status.success(), "{}", String::from_utf8_lossy(&p.stderr));
    let _ = std::fs::remove_dir_all(dir);
}

fn write_calibration(path: &std::path::Path) {
    use ron_topo::{Calibration, Fingerprint, LatencyMatrix, tsp};
    let m = LatencyMatrix::from_rows(vec![
        vec![0.0, 10.0, 50.0, 50.0],
        vec![10.0, 0.0, 50.0, 50.0],
        vec![50.0, 50.0, 0.0, 10.0],
        vec![50.0, 50.0, 10.0, 0.0],
    ])
    .unwrap();
    let route = tsp::solve(&m, &ron_topo::SolveOptions::default());
    let fp = Fingerprint {
        cpu_model: "test".into(),
        logical_cpus: 4,
        topology_hash: "0".into(),
    };
    Calibration::new(fp, m, &route).unwrap().save(path).unwrap();
}

#[test]
fn calibration_files_are_matrices_everywhere() {
    let cal = tmp("cal.json");
    write_calibration(&cal);
    let c = cal.to_str().unwrap();
    let r = ron(&[
        "route",
        "--matrix",
        c,
        "--format",
        "json",
        "--time-limit",
        "200ms",
    ]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let v: serde_json::Value = serde_json::from_slice(&r.stdout).unwrap();
    assert!((v["cost"].as_f64().unwrap() - 120.0).abs() < 1e-9);
    let s = ron(&[
        "simulate",
        "--matrix",
        c,
        "--threads",
        "2",
        "--ncs",
        "1x",
        "--duration",
        "1ms",
        "--time-limit",
        "1s",
    ]);
    assert!(s.status.success(), "{}", String::from_utf8_lossy(&s.stderr));
    assert!(String::from_utf8_lossy(&s.stdout).contains("fifo"));
    let png = tmp("cal.png");
    let p = ron(&["plot", "--matrix", c, "--out", png.to_str().unwrap()]);
    assert!(p.status.success(), "{}", String::from_utf8_lossy(&p.stderr));
    let _ = std::fs::remove_file(cal);
    let _ = std::fs::remove_file(png);
}

#[test]
fn huge_latencies_are_refused_at_load() {
    for big in ["1e15", "1e308"] {
        let csv = tmp(&format!("big-{big}.csv"));
        std::fs::write(&csv, format!("0,{big}\n1,0\n")).unwrap();
        for cmd in ["route", "simulate"] {
            assert_one_line_error(&[cmd, "--matrix", csv.to_str().unwrap()], "too large");
        }
        let _ = std::fs::remove_file(csv);
    }
}

#[test]
fn plots_need_no_system_font() {
    // An empty fontconfig setup: a plot must not look for system fonts.
    let conf = tmp("fonts.conf");
    std::fs::write(&conf, "<?xml version=\"1.0\"?><fontconfig></fontconfig>\n").unwrap();
    let csv = tmp("one.csv");
    std::fs::write(&csv, "0\n").unwrap();
    let png = tmp("one.png");
    let o = Command::new(env!("CARGO_BIN_EXE_ron"))
        .args([
            "plot",
            "--matrix",
            csv.to_str().unwrap(),
            "--out",
            png.to_str().unwrap(),
        ])
        .env("FONTCONFIG_FILE", &conf)
        .env("FONTCONFIG_PATH", std::env::temp_dir())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(std::fs::metadata(&png).unwrap().len() > 1000);
    for f in [conf, csv, png] {
        let _ = std::fs::remove_file(f);
    }
}

#[test]
fn completions_and_man_page() {
    let o = ron(&["completions", "bash"]);
    assert!(o.status.success());
    assert!(String::from_utf8_lossy(&o.stdout).contains("bench"));
    let o = ron(&["man"]);
    assert!(o.status.success());
    assert!(String::from_utf8_lossy(&o.stdout).contains(".TH ron 1"));
}

/// Ctrl-C during `ron bench --out`: the run stops after the current point,
/// prints what it measured, keeps it in the file (marked interrupted) and
/// exits with 130.
#[cfg(unix)]
#[test]
fn ctrl_c_keeps_the_rows_measured_so_far() {
    let json = tmp("interrupted.json");
    let _ = std::fs::remove_file(&json);
    let child = Command::new(env!("CARGO_BIN_EXE_ron"))
        .args([
            "bench",
            "--locks",
            "ttas",
            "--threads",
            "1",
            "--ncs",
            "0",
            "--duration",
            "10ms",
            "--warmup",
            "0",
            "--repeat",
            "1000",
            "--out",
            json.to_str().unwrap(),
        ])
        .env("RON_CALIBRATION", "")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run ron");
    // Wait until a first run has been saved (polling the file; the bound
    // only guards against a hang).
    let mut saved = false;
    for _ in 0..6000 {
        if let Ok(text) = std::fs::read_to_string(&json)
            && serde_json::from_str::<serde_json::Value>(&text)
                .is_ok_and(|v| v["rows"].as_array().is_some_and(|r| !r.is_empty()))
        {
            saved = true;
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    assert!(saved, "no row saved");
    let kill = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let o = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(130), "{err}");
    assert!(err.contains("interrupted"), "{err}");
    assert!(String::from_utf8_lossy(&o.stdout).contains("| ttas"));
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(v["meta"]["interrupted"], true);
    let runs = v["rows"][0]["repeats"].as_u64().unwrap();
    assert!((1..1000).contains(&runs), "{runs}");
    let _ = std::fs::remove_file(json);
}

#[test]
fn calibrate_and_topo_export_csv_and_json() {
    let cal = tmp("own-cal.json");
    let o = ron(&[
        "calibrate",
        "--rounds",
        "20",
        "--out",
        cal.to_str().unwrap(),
        "--format",
        "csv",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // Stdout is the matrix as CSV: `--matrix` reads it, as it reads the file.
    let csv = tmp("own-cal.csv");
    std::fs::write(&csv, &o.stdout).unwrap();
    for m in [&csv, &cal] {
        let r = ron(&["route", "--matrix", m.to_str().unwrap(), "--format", "json"]);
        assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    }
    let t = ron(&["topo", "--format", "json"]);
    assert!(t.status.success(), "{}", String::from_utf8_lossy(&t.stderr));
    let v: serde_json::Value = serde_json::from_slice(&t.stdout).unwrap();
    assert!(!v["cpus"].as_array().unwrap().is_empty());
    let t = ron(&["topo", "--format", "csv"]);
    assert!(String::from_utf8_lossy(&t.stdout).starts_with("cpu,core,l3,"));
    let _ = std::fs::remove_file(cal);
    let _ = std::fs::remove_file(csv);
}

#[test]
fn bench_many_locks_json_csv_and_skip_note() {
    let o = ron(&[
        "bench",
        "--workload",
        "many-locks",
        "--locks",
        "ron-raw,ron-inline,parking_lot",
        "--threads",
        "2",
        "--n-locks",
        "2,1000",
        "--max-lock-memory",
        "1",
        "--duration",
        "10ms",
        "--warmup",
        "0",
        "--repeat",
        "2",
        "--format",
        "json",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON on stdout");
    let rows = v["rows"].as_array().unwrap();
    // ron-inline's 1000 locks take more than 1 MiB: 5 of the 6 points run.
    assert_eq!(rows.len(), 5, "{rows:?}");
    for r in rows {
        assert_eq!(r["workload"], "many-locks");
        assert_eq!(r["repeats"], 2);
        assert_eq!(r["exclusion_ok"], true);
        assert!(r["total"].as_u64().unwrap() > 0, "{r}");
        assert!(r["bytes_per_lock"].as_u64().unwrap() > 0, "{r}");
        assert_eq!(
            r["lock_bytes"].as_u64().unwrap(),
            r["bytes_per_lock"].as_u64().unwrap() * r["n_locks"].as_u64().unwrap()
        );
        assert!(r["vs_parking_lot"].is_number(), "{r}");
        if cfg!(target_os = "linux") {
            assert!(r["rss_bytes"].as_u64().unwrap() > 0, "{r}");
            assert!(r["rss_delta_bytes"].is_u64(), "{r}");
        }
    }
    let pl = rows.iter().find(|r| r["lock"] == "parking_lot").unwrap();
    assert_eq!(pl["vs_parking_lot"], 1.0);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("note: skipped ron-inline at 1000 locks"),
        "{err}"
    );
    assert!(err.contains("note: ron-grant, ron-raw:"), "{err}");

    let o = ron(&[
        "bench",
        "--workload",
        "many-locks",
        "--locks",
        "std",
        "--threads",
        "1",
        "--n-locks",
        "64",
        "--duration",
        "10ms",
        "--warmup",
        "0",
        "--repeat",
        "1",
        "--format",
        "csv",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.starts_with("workload,lock,threads,n_locks,"), "{text}");
    assert!(text.contains("bytes_per_lock") && text.contains("rss_bytes"));
    assert_eq!(text.lines().count(), 2, "{text}");
    assert_one_line_error(
        &["bench", "--workload", "many-locks", "--n-locks", "0"],
        "--n-locks",
    );
}

/// A tiny run of each reader-writer workload in each format: every lock,
/// reads and writes counted apart, ratios to parking_lot, the same rows
/// in table, CSV and JSON.
#[test]
fn bench_rw_and_rw_map_in_every_format() {
    for workload in ["rw", "rw-map"] {
        let run = |format: &str| {
            let o = ron(&[
                "bench",
                "--workload",
                workload,
                "--locks",
                "all",
                "--threads",
                "2",
                "--read-pct",
                "50,100",
                "--ncs",
                "0",
                "--duration",
                "0.05",
                "--warmup",
                "0",
                "--repeat",
                "2",
                "--format",
                format,
            ]);
            assert!(
                o.status.success(),
                "{workload} {format}: {}",
                String::from_utf8_lossy(&o.stderr)
            );
            String::from_utf8_lossy(&o.stdout).into_owned()
        };
        let v: serde_json::Value = serde_json::from_str(&run("json")).expect("JSON on stdout");
        let rows = v["rows"].as_array().unwrap();
        // 5 locks x 2 read percentages.
        assert_eq!(rows.len(), 10, "{rows:?}");
        assert_eq!(v["meta"]["interrupted"], false);
        for r in rows {
            assert_eq!(r["workload"], workload);
            assert_eq!(r["repeats"], 2);
            assert_eq!(r["exclusion_ok"], true, "{r}");
            let (reads, writes) = (r["reads"].as_u64().unwrap(), r["writes"].as_u64().unwrap());
            assert_eq!(r["total"].as_u64().unwrap(), reads + writes);
            assert!(reads > 0, "{r}");
            if r["read_pct"] == 100 {
                assert_eq!(writes, 0, "{r}");
                assert!(r["fairness_writes"].is_null(), "{r}");
            } else {
                assert!(writes > 0, "{r}");
                assert!(r["fairness_writes"].is_number(), "{r}");
            }
            assert!(r["vs_parking_lot"].is_number(), "{r}");
            assert_eq!(r["per_thread_reads"].as_array().unwrap().len(), 2);
        }
        let locks: Vec<&str> = rows.iter().map(|r| r["lock"].as_str().unwrap()).collect();
        for l in ["ron-rw", "parking_lot", "std", "spin", "sharded"] {
            assert!(locks.contains(&l), "{locks:?}");
        }
        let pl = rows.iter().find(|r| r["lock"] == "parking_lot").unwrap();
        assert_eq!(pl["vs_parking_lot"], 1.0);

        let csv = run("csv");
        assert!(
            csv.starts_with("workload,lock,threads,read_pct,ncs_ns,cs_lines,"),
            "{csv}"
        );
        assert_eq!(csv.lines().count(), 11, "{csv}");
        assert!(csv.contains("fairness_reads,fairness_writes,cpu_ns_per_op"));

        let table = run("table");
        assert!(
            table.starts_with(&format!("ron bench --workload {workload}:")),
            "{table}"
        );
        assert!(table.contains("| x parking_lot |"), "{table}");
        assert!(table.contains("| fair reads |"), "{table}");
        assert!(table.contains("| sharded "), "{table}");
        assert!(
            table.contains("ron-rw ran") && table.contains("times as fast as parking_lot"),
            "{table}"
        );
    }
    // A mutex is not a reader-writer lock.
    assert_one_line_error(
        &["bench", "--workload", "rw", "--locks", "ron-rw,ron"],
        "unknown lock `ron`",
    );
    // --list names the reader-writer locks.
    let list = String::from_utf8_lossy(&ron(&["bench", "--list"]).stdout).into_owned();
    assert!(list.contains("reader-writer locks"), "{list}");
    assert!(
        list.contains("crossbeam_utils::sync::ShardedLock"),
        "{list}"
    );
}

#[test]
fn bench_many_locks_resident_memory_grows_with_a_million_locks() {
    if !std::path::Path::new("/proc/self/statm").exists() {
        eprintln!("skipped: no /proc/self/statm here");
        return;
    }
    let o = ron(&[
        "bench",
        "--workload",
        "many-locks",
        "--locks",
        "parking_lot",
        "--threads",
        "1",
        "--n-locks",
        "1000000",
        "--duration",
        "20ms",
        "--warmup",
        "0",
        "--repeat",
        "1",
        "--format",
        "json",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON on stdout");
    let r = &v["rows"][0];
    assert_eq!(r["lock_bytes"], 16_000_000, "{r}");
    // A fresh process: the 16 MB of locks come from the system, and their
    // constructors write every page.
    let delta = r["rss_delta_bytes"].as_u64().unwrap();
    assert!(delta >= 8 << 20, "RSS grew by {delta} bytes only: {r}");
    assert!(r["rss_bytes"].as_u64().unwrap() >= delta);
}

#[test]
fn bench_paper_workloads_in_every_format() {
    let run = |workload: &str, format: &str| {
        let o = ron(&[
            "bench",
            "--workload",
            workload,
            "--locks",
            "ron-raw,mcs",
            "--threads",
            "2",
            "--ncs",
            "0",
            "--duration",
            "0.05",
            "--warmup",
            "0",
            "--repeat",
            "1",
            "--format",
            format,
        ]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    for workload in ["kv-update", "ron-micro"] {
        let probed = workload == "ron-micro";
        let v: serde_json::Value = serde_json::from_str(&run(workload, "json")).unwrap();
        let rows = v["rows"].as_array().unwrap();
        assert_eq!(rows.len(), 2);
        for r in rows {
            assert_eq!(r["workload"], workload);
            assert_eq!(r["exclusion_ok"], true, "{r}");
            // Present in every row: a number where measured, else null.
            let has = probed && r["total"].as_u64().unwrap() > 0;
            assert_eq!(r["cs_data_ns"].is_number(), has, "{r}");
            assert_eq!(r["waiters"].is_number(), has, "{r}");
            assert!(r["cs_data_ns"].is_number() || r["cs_data_ns"].is_null());
            if has {
                let w = r["waiters"].as_f64().unwrap();
                assert!((0.0..=1.0).contains(&w), "{r}");
            }
        }

        let csv = run(workload, "csv");
        let mut lines = csv.lines();
        let header = lines.next().unwrap();
        assert!(
            header.ends_with(",exclusion_ok,cs_data_ns,waiters"),
            "{header}"
        );
        for line in lines {
            assert!(line.starts_with(&format!("{workload},")), "{line}");
            let f: Vec<&str> = line.split(',').collect();
            let (data, waiters) = (f[f.len() - 2], f[f.len() - 1]);
            if probed {
                assert!(
                    waiters.is_empty() || waiters.parse::<f64>().is_ok(),
                    "{line}"
                );
                assert_eq!(data.is_empty(), waiters.is_empty(), "{line}");
            } else {
                assert!(data.is_empty() && waiters.is_empty(), "{line}");
            }
        }

        let table = run(workload, "table");
        assert!(
            table.contains(&format!("ron bench: {workload} workload")),
            "{table}"
        );
        assert_eq!(table.contains("CS data ns"), probed, "{table}");
        assert_eq!(table.contains("| waiters |"), probed, "{table}");
    }
}

#[test]
fn bench_cs_lines_is_micro_only() {
    let o = ron(&[
        "bench",
        "--workload",
        "ron-micro",
        "--cs-lines",
        "4",
        "--locks",
        "mcs",
        "--threads",
        "1",
        "--ncs",
        "0",
        "--duration",
        "10ms",
        "--warmup",
        "0",
        "--repeat",
        "1",
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains("warning: --cs-lines does not apply to --workload ron-micro"),
        "{err}"
    );
}
