//! The `ron` binary: errors are one line and a non-zero exit, never a
//! panic; small runs produce the documented output.

use std::process::{Command, Output};

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
    assert!(!err.contains("panicked"), "{args:?}: {err}");
}

#[test]
fn bench_errors_are_one_line() {
    assert_one_line_error(&["bench", "--locks", "ron,nope"], "unknown lock `nope`");
    assert_one_line_error(&["bench", "--threads", "0"], "--threads");
    assert_one_line_error(&["bench", "--threads", "two"], "--threads");
    assert_one_line_error(&["bench", "--duration", "0"], "--duration");
    assert_one_line_error(&["bench", "--duration", "1e9"], "--duration");
    assert_one_line_error(&["bench", "--ncs=-5"], "--ncs");
    assert_one_line_error(
        &["bench", "--workload", "corunner", "--policies", "nope"],
        "nope",
    );
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
        "ron,spin",
        "--threads",
        "1,2",
        "--ncs",
        "0",
        "--duration",
        "0.02",
        "--warmup",
        "0",
        "--format",
        "json",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON on stdout");
    let rows = v.as_array().unwrap();
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
    ] {
        assert!(rows[0].get(k).is_some(), "field {k}");
    }
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
