//! Hostile environments: calibration files for another machine or with a
//! broken route, `RON_CALIBRATION` pointing at a directory, an empty or a
//! missing file, an affinity mask that excludes half the route, and CPU
//! hints above the route's size. Each case must end in a clear error or the
//! documented fallback (the topology route), and the locks must keep
//! working afterwards: after every setup, 4 threads take `RonGrant`, `RonRaw`,
//! `NxtRon<16>` and `ShRon` with a non-atomic counter whose total must be
//! exact.
//!
//! The route table, the hint provider and the environment are
//! process-wide, so every test holds [`SERIAL`] for its whole run.

use std::path::{Path, PathBuf};
use std::sync::{Mutex as StdMutex, MutexGuard as StdGuard};

use ron_core::{NxtRon, RonGrant, RonRaw, ShRon, hint, route};
use ron_testkit::conformance::{mutual_exclusion_checked, with_watchdog};
use ron_topo::calibration::{Calibration, Fingerprint};
use ron_topo::install::{ENV_CALIBRATION, RouteSource, install_with};
use ron_topo::{InstallReport, LatencyMatrix, SolveOptions, Topology, solve};

static SERIAL: StdMutex<()> = StdMutex::new(());

/// Takes the process-wide test lock (a failed test must not poison the rest).
fn serial() -> StdGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

fn tmp(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join("ron-suite-hostile-env");
    std::fs::create_dir_all(&d).unwrap();
    d.join(name)
}

fn this_topology() -> Topology {
    Topology::detect().expect("this machine's topology")
}

/// A valid calibration over `topo`'s CPUs (synthetic matrix) carrying
/// `fingerprint`.
fn calibration(topo: &Topology, fingerprint: Fingerprint) -> Calibration {
    let cpus = topo.cpus();
    let m = LatencyMatrix::from_fn(cpus.len(), |i, j| {
        if i == j {
            0.0
        } else if cpus[i].core == cpus[j].core {
            5.0
        } else {
            20.0 + ((i + 2 * j) % 3) as f64
        }
    })
    .unwrap()
    .with_cpus(topo.cpu_ids())
    .unwrap();
    let r = solve(
        &m,
        &SolveOptions {
            max_iterations: Some(50),
            ..Default::default()
        },
    );
    Calibration::new(fingerprint, m, &r).unwrap()
}

/// The report says "calibration refused, topology route installed", and
/// ron-core's table holds exactly that route.
fn assert_topology_fallback(r: &InstallReport, topo: &Topology, reason_has: &[&str]) {
    let reason = r
        .fallback_reason
        .as_deref()
        .unwrap_or_else(|| panic!("no fallback_reason in {r:?}"));
    for s in reason_has {
        assert!(reason.contains(s), "fallback_reason {reason:?} lacks {s:?}");
    }
    assert_eq!(r.source, RouteSource::Topology, "{r:?}");
    assert_eq!(r.route, topo.route());
    assert_installed(&r.route);
}

/// ron-core's route table holds `want`, position by position.
fn assert_installed(want: &[usize]) {
    assert_eq!(route::len(), want.len());
    for (p, &cpu) in want.iter().enumerate() {
        assert_eq!(route::position(cpu), Some(p), "CPU {cpu}");
        assert_eq!(route::cpu_at(p), Some(cpu));
    }
}

const THREADS: usize = 4;
const ITERS: usize = 3000;

/// The locks keep working (under a watchdog: a lost wakeup fails the test
/// instead of hanging it).
fn locks_still_work(what: &str, check: fn()) {
    with_watchdog(what, move || {
        mutual_exclusion_checked::<RonGrant>(THREADS, ITERS, check);
        mutual_exclusion_checked::<RonRaw>(THREADS, ITERS, check);
        mutual_exclusion_checked::<NxtRon>(THREADS, ITERS, check);
        mutual_exclusion_checked::<ShRon>(THREADS, ITERS, check);
    });
}

fn no_check() {}

/// Clears the hint provider on drop (also when a test fails).
struct ProviderGuard;

impl Drop for ProviderGuard {
    fn drop(&mut self) {
        hint::clear_provider();
    }
}

/// Removes `RON_CALIBRATION` on drop.
struct EnvGuard;

impl Drop for EnvGuard {
    fn drop(&mut self) {
        // SAFETY: every test of this binary holds SERIAL, and no other
        // thread of this process reads the environment meanwhile.
        unsafe { std::env::remove_var(ENV_CALIBRATION) };
    }
}

#[test]
fn calibration_for_another_machine_falls_back_naming_both_fingerprints() {
    let _serial = serial();
    let topo = this_topology();
    let this = Fingerprint::of(&topo);
    let other = Fingerprint {
        cpu_model: "Imaginary EPYC 9999 128-Core".into(),
        logical_cpus: this.logical_cpus,
        topology_hash: "feedfacecafebeef".into(),
    };
    let p = tmp("other-machine.json");
    calibration(&topo, other.clone()).save(&p).unwrap();

    route::clear();
    let r = install_with(Some((&p, true)), Ok(topo.clone()));
    println!("fallback_reason: {:?}", r.fallback_reason);
    assert_topology_fallback(
        &r,
        &topo,
        &[
            "another machine",
            &other.cpu_model,
            &other.topology_hash,
            &this.cpu_model,
            &this.topology_hash,
        ],
    );
    assert_eq!(r.calibration_path.as_deref(), Some(p.as_path()));

    // The same file with this machine's fingerprint is accepted (so the
    // refusal above was the fingerprint, nothing else).
    let ok = tmp("this-machine.json");
    let cal = calibration(&topo, this);
    cal.save(&ok).unwrap();
    let r = install_with(Some((&ok, true)), Ok(topo.clone()));
    assert_eq!(r.source, RouteSource::Calibration(ok.clone()), "{r:?}");
    assert_eq!(r.route, cal.route);
    assert_installed(&cal.route);

    locks_still_work("after a foreign calibration", no_check);
}

#[test]
fn calibration_route_missing_or_repeating_a_cpu_is_refused() {
    let _serial = serial();
    let topo = this_topology();
    let good = calibration(&topo, Fingerprint::of(&topo));
    let n = good.route.len();
    let first = good.route[0];
    let last = good.route[n - 1];

    let mut missing = good.clone();
    missing.route.pop();
    let mut repeated = good.clone();
    repeated.route[n - 1] = first;
    let mut foreign = good.clone();
    foreign.route[0] = 4000;

    let cases: [(&str, Calibration, Vec<String>); 3] = [
        (
            "missing.json",
            missing,
            vec!["not a permutation".into(), format!("CPU {last} is missing")],
        ),
        (
            "repeated.json",
            repeated,
            if n > 1 {
                vec![
                    "not a permutation".into(),
                    format!("CPU {first} appears twice"),
                ]
            } else {
                // One CPU: replacing the last entry by the first changes nothing.
                vec![]
            },
        ),
        (
            "foreign-cpu.json",
            foreign,
            vec!["CPU 4000 is not in the matrix".into()],
        ),
    ];
    for (name, cal, want) in cases {
        if want.is_empty() {
            println!("{name}: skipped on a 1-CPU machine");
            continue;
        }
        let p = tmp(name);
        cal.save(&p).unwrap();
        let err = Calibration::read(&p).expect_err(name).to_string();
        println!("{name}: {err}");
        route::clear();
        let r = install_with(Some((&p, true)), Ok(topo.clone()));
        let want: Vec<&str> = want.iter().map(String::as_str).collect();
        assert_topology_fallback(&r, &topo, &want);
        assert_eq!(r.fallback_reason.as_deref(), Some(err.as_str()));
    }

    // ron-core itself refuses such routes and keeps the installed one.
    assert!(route::install(&[first, first]).is_err());
    assert!(route::install(&[]).is_err());
    assert_installed(&topo.route());

    locks_still_work("after refused calibration routes", no_check);
}

/// In a thread restricted to the first CPU of the route (and its
/// children), the hint is that CPU, on the route, and maps to a valid slot.
fn check_restricted_hint() {
    let cpu = hint::current_cpu();
    assert_eq!(
        Some(cpu),
        route::cpu_at(0),
        "hint outside the affinity mask"
    );
    assert_eq!(route::position(cpu), Some(0));
    for slots in [1, 2, 3, 16, 256] {
        assert!(route::slot_of(cpu, slots) < slots);
    }
}

#[test]
fn affinity_mask_excluding_half_the_route() {
    let _serial = serial();
    let topo = this_topology();
    let allowed = core_affinity::get_core_ids().unwrap_or_default();
    if topo.len() < 2 || allowed.len() < 2 {
        println!(
            "SKIPPED affinity_mask_excluding_half_the_route: needs 2 usable CPUs \
             (topology {}, affinity mask {})",
            topo.len(),
            allowed.len()
        );
        return;
    }
    route::clear();
    let r = install_with(None, Ok(topo.clone()));
    assert_eq!(r.source, RouteSource::Topology);
    let full = topo.route();
    let keep = full[0];
    assert!(
        allowed.iter().any(|c| c.id == keep),
        "CPU {keep} not in this process's affinity mask"
    );

    // A helper thread restricted to `keep`: the threads it spawns inherit
    // the mask, as in a process started under `taskset -c <keep>`.
    std::thread::scope(|s| {
        s.spawn(|| {
            assert!(core_affinity::set_for_current(core_affinity::CoreId {
                id: keep
            }));
            let mask: Vec<usize> = core_affinity::get_core_ids()
                .unwrap()
                .iter()
                .map(|c| c.id)
                .collect();
            assert_eq!(mask, vec![keep]);
            println!(
                "affinity {mask:?} of route {full:?}: hint {}",
                hint::current_cpu()
            );

            // Installing under the restricted mask still sees every online
            // CPU (sysfs), so the route still names the excluded ones.
            let r = install_with(None, Topology::detect());
            assert_eq!(r.source, RouteSource::Topology, "{r:?}");
            assert_eq!(r.route, full);
            assert_installed(&full);

            check_restricted_hint();
            // Every thread shares one CPU (one slot) and half the slots
            // (the excluded CPUs') stay empty.
            locks_still_work(
                "affinity mask excluding half the route",
                check_restricted_hint,
            );
        })
        .join()
        .unwrap();
    });

    locks_still_work("after the restricted threads", no_check);
}

/// Hints above the installed 2-CPU route: ids off the route, at the route
/// table's limit and beyond, up to `usize::MAX`, varied per thread.
fn above_route() -> usize {
    let t = hint::thread_number();
    match t % 4 {
        0 => 2 + t,
        1 => route::MAX_CPUS - 1 - t % 8,
        2 => route::MAX_CPUS + t,
        _ => usize::MAX - t,
    }
}

fn check_big_hint() {
    let cpu = hint::current_cpu();
    assert!(cpu >= 2, "provider not in effect: {cpu}");
    assert_eq!(route::position(cpu), None);
    for slots in [1, 2, 3, 16, 256] {
        assert!(
            route::slot_of(cpu, slots) < slots,
            "cpu {cpu}, {slots} slots"
        );
    }
}

#[test]
fn cpu_ids_above_the_route_size() {
    let _serial = serial();
    route::install(&[0, 1]).unwrap();
    assert_installed(&[0, 1]);
    for cpu in [2, 3, 4095, 4096, 1 << 40, usize::MAX - 1, usize::MAX] {
        assert_eq!(route::position(cpu), None);
        for slots in [0, 1, 2, 3, 7, 16, 64, 65, 256] {
            let s = route::slot_of(cpu, slots);
            assert!(s < slots.max(1), "cpu {cpu}: slot {s} of {slots}");
        }
    }
    // On-route CPUs still split the slots in arcs.
    assert_eq!(route::slot_of(0, 16), 0);
    assert_eq!(route::slot_of(1, 16), 8);

    let _provider = ProviderGuard;
    hint::set_provider(above_route);
    check_big_hint();
    locks_still_work("hints above the route's size", check_big_hint);
}

#[test]
fn ron_calibration_directory_empty_or_missing_file() {
    let _serial = serial();
    let topo = this_topology();
    let dir = tmp("a-directory");
    std::fs::create_dir_all(&dir).unwrap();
    let empty = tmp("empty.json");
    std::fs::write(&empty, b"").unwrap();
    let missing = tmp("does-not-exist.json");
    let _ = std::fs::remove_file(&missing);
    let missing_err = std::fs::metadata(&missing).unwrap_err().to_string();

    for (path, why) in [
        (&dir, "is a directory".to_string()),
        (&empty, "empty calibration file".to_string()),
        (&missing, missing_err),
    ] {
        route::clear();
        let r = install_with(Some((path, true)), Topology::detect());
        println!("{}: {:?}", path.display(), r.fallback_reason);
        let shown = path.display().to_string();
        assert_topology_fallback(&r, &topo, &[&shown, &why]);
        assert!(r.errors.is_empty(), "{:?}", r.errors);
        locks_still_work(&format!("after RON_CALIBRATION={shown}"), no_check);
    }

    // The same through the environment variable and install() itself.
    let _env = EnvGuard;
    // SAFETY: as in `EnvGuard::drop`.
    unsafe { std::env::set_var(ENV_CALIBRATION, &empty) };
    route::clear();
    let r = ron_topo::install();
    assert_eq!(r.calibration_path.as_deref(), Some(empty.as_path()));
    assert_topology_fallback(&r, &topo, &["empty calibration file"]);
    // An empty value counts as unset: the default path is used.
    // SAFETY: as above.
    unsafe { std::env::set_var(ENV_CALIBRATION, "") };
    let r = ron_topo::install();
    assert_eq!(
        r.calibration_path,
        ron_topo::install::default_calibration_path()
    );
    assert_ne!(r.source, RouteSource::None, "{r:?}");
    locks_still_work("after RON_CALIBRATION via install()", no_check);
}
