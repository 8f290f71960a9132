//! Calibration file round trip, validation, machine check, and install().

use std::path::{Path, PathBuf};

use ron_topo::calibration::{Calibration, CalibrationError, FORMAT_VERSION, Fingerprint};
use ron_topo::install::{RouteSource, install_with};
use ron_topo::{LatencyMatrix, Route, Topology, tsp};

fn tmp(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join("ron-topo-calibration");
    std::fs::create_dir_all(&d).unwrap();
    d.join(name)
}

/// A calibration for the given topology with a synthetic matrix on its CPUs
/// (SMT siblings 5 ns, same L3 20 ns, else 100 ns).
fn synthetic(topo: &Topology) -> Calibration {
    let cpus = topo.cpus();
    let m = LatencyMatrix::from_fn(cpus.len(), |i, j| {
        let (a, b) = (&cpus[i], &cpus[j]);
        if i == j {
            0.0
        } else if a.core == b.core {
            5.0
        } else if a.l3 == b.l3 {
            20.0 + (i + 2 * j) as f64 % 3.0
        } else {
            100.0
        }
    })
    .unwrap()
    .with_cpus(topo.cpu_ids())
    .unwrap();
    // The cheaper of the topology order and the identity order: what the
    // file holds matters here, not how good the solver is (that is
    // tests/tsp.rs), so this test needs no `tools` feature.
    let r = [
        tsp::order_from_cpus(&m, &topo.route()),
        (0..m.n()).collect(),
    ]
    .into_iter()
    .map(|order| Route {
        cost: m.tour_cost(&order),
        order,
    })
    .min_by(|a, b| a.cost.total_cmp(&b.cost))
    .unwrap();
    Calibration::new(Fingerprint::of(topo), m, &r).unwrap()
}

fn fake_topo() -> Topology {
    Topology::flat(&[0, 1, 2, 3, 4, 5]).unwrap()
}

#[test]
fn round_trip_and_baselines() {
    let topo = fake_topo();
    let cal = synthetic(&topo);
    assert_eq!(cal.version, FORMAT_VERSION);
    assert!(cal.cost <= cal.baselines.identity_cost);
    assert_eq!(cal.baselines.fifo_mean, cal.matrix.fifo_mean());
    let p = tmp("roundtrip.json");
    cal.save(&p).unwrap();
    let back = Calibration::load(&p, &Fingerprint::of(&topo)).unwrap();
    assert_eq!(back, cal);
}

#[test]
fn wrong_machine_names_both_fingerprints() {
    let cal = synthetic(&fake_topo());
    let p = tmp("other-machine.json");
    cal.save(&p).unwrap();
    let mut other = cal.fingerprint.clone();
    other.cpu_model = "Some Other CPU 9000".into();
    other.topology_hash = "0123456789abcdef".into();
    let err = Calibration::load(&p, &other).unwrap_err();
    assert!(matches!(err, CalibrationError::WrongMachine { .. }));
    let msg = err.to_string();
    assert!(
        msg.contains("Some Other CPU 9000") && msg.contains("0123456789abcdef"),
        "{msg}"
    );
    assert!(msg.contains(&cal.fingerprint.topology_hash), "{msg}");
}

#[test]
fn tampered_files_are_refused() {
    let cal = synthetic(&fake_topo());
    let good: serde_json::Value = serde_json::from_str(&cal.to_json_string()).unwrap();
    let edit = |f: &dyn Fn(&mut serde_json::Value)| {
        let mut v = good.clone();
        f(&mut v);
        Calibration::from_json_str(&v.to_string())
    };
    assert!(matches!(
        edit(&|v| v["version"] = 99.into()),
        Err(CalibrationError::Version { found: 99 })
    ));
    assert!(matches!(
        edit(&|v| v["cost"] = 1.0.into()),
        Err(CalibrationError::Inconsistent { field: "cost", .. })
    ));
    assert!(matches!(
        edit(&|v| v["baselines"]["fifo_mean"] = 1.0.into()),
        Err(CalibrationError::Inconsistent { .. })
    ));
    assert!(matches!(
        edit(&|v| v["route"][0] = v["route"][1].clone()),
        Err(CalibrationError::BadRoute { .. })
    ));
    assert!(matches!(
        edit(&|v| v["route"][0] = 777.into()),
        Err(CalibrationError::BadRoute { .. })
    ));
    assert!(matches!(
        edit(&|v| v["fingerprint"]["logical_cpus"] = 2.into()),
        Err(CalibrationError::CpuCount { .. })
    ));
    assert!(edit(&|v| v["matrix"]["rows"][0][1] = (-1.0).into()).is_err());
    assert!(edit(&|v| v["matrix"]["rows"][0] = serde_json::json!([0.0])).is_err());
    for junk in [
        "",
        "{",
        "null",
        "[]",
        "{\"version\":1}",
        "\u{0}\u{1}garbage",
    ] {
        assert!(Calibration::from_json_str(junk).is_err(), "{junk:?}");
    }
}

#[test]
fn empty_file_directory_and_missing_file() {
    let empty = tmp("empty.json");
    std::fs::write(&empty, b"").unwrap();
    assert!(matches!(
        Calibration::read(&empty),
        Err(CalibrationError::EmptyFile(_))
    ));
    let dir = tmp("a-directory");
    std::fs::create_dir_all(&dir).unwrap();
    assert!(matches!(
        Calibration::read(&dir),
        Err(CalibrationError::IsDirectory(_))
    ));
    assert!(matches!(
        Calibration::read(tmp("missing.json")),
        Err(CalibrationError::Io { .. })
    ));
}

#[test]
fn install_prefers_calibration_then_topology() {
    let topo = fake_topo();
    let cal = synthetic(&topo);
    let p = tmp("install.json");
    cal.save(&p).unwrap();
    let r = install_with(Some((&p, true)), Ok(topo.clone()));
    assert_eq!(r.source, RouteSource::Calibration(p.clone()));
    assert_eq!(r.route, cal.route);
    assert!(r.fallback_reason.is_none());
    assert!(r.groups_installed);

    // Explicit path that is a directory: falls back, says why.
    let dir = tmp("install-dir");
    std::fs::create_dir_all(&dir).unwrap();
    let r = install_with(Some((&dir, true)), Ok(topo.clone()));
    assert_eq!(r.source, RouteSource::Topology);
    assert_eq!(r.route, topo.route());
    assert!(r.fallback_reason.unwrap().contains("directory"));

    // Default path absent: the normal uncalibrated case, no reason given.
    let r = install_with(Some((&tmp("nope.json"), false)), Ok(topo.clone()));
    assert_eq!(r.source, RouteSource::Topology);
    assert!(r.fallback_reason.is_none());

    // A file for another machine is refused.
    let other = Topology::flat(&[0, 1, 2, 3, 4, 5, 6, 7]).unwrap();
    let r = install_with(Some((&p, true)), Ok(other));
    assert_eq!(r.source, RouteSource::Topology);
    assert!(r.fallback_reason.unwrap().contains("another machine"));

    // No topology at all: nothing installed, no panic.
    let r = install_with(None, Err(ron_topo::TopologyError::NoCpus));
    assert_eq!(r.source, RouteSource::None);
    assert!(!r.errors.is_empty());
}

#[test]
fn install_on_this_machine_never_panics() {
    let r = ron_topo::install();
    println!(
        "install(): source {}, route {:?}, reason {:?}, errors {:?}",
        r.source, r.route, r.fallback_reason, r.errors
    );
    if r.source != RouteSource::None {
        assert!(ron_core::route::is_installed());
    }
}
