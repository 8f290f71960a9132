//! The calibration-file loader: any bytes must give `Ok` or a clean error,
//! never a panic or an allocation out of proportion to the input. What is
//! accepted must be internally consistent and survive a save/load cycle.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ron_topo::calibration::{Calibration, Fingerprint};
use ron_topo::tsp::is_permutation;

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-6 * a.abs().max(b.abs()).max(1.0)
}

fuzz_target!(|data: &[u8]| {
    // Invalid UTF-8 is part of the input space: a file read from disk may
    // hold anything, so the lossy decoding is what a reader would see after
    // the UTF-8 check fails; both paths must be clean.
    let text = String::from_utf8_lossy(data);
    let Ok(cal) = Calibration::from_json_str(&text) else {
        return;
    };
    // Accepted: everything `validate` promises must hold.
    let n = cal.matrix.n();
    assert!(n >= 1 && n <= cal.fingerprint.logical_cpus);
    let idx = cal
        .route_indices()
        .expect("accepted route maps to the matrix");
    assert!(is_permutation(&idx, n), "route is not a permutation");
    assert!(close(cal.cost, cal.matrix.tour_cost(&idx)), "stored cost");
    for i in 0..n {
        for j in 0..n {
            let v = cal.matrix.get(i, j);
            assert!(v.is_finite() && v >= 0.0, "entry ({i}, {j}) = {v}");
        }
    }
    // Save/load cycle: what we write we must read back.
    let again = Calibration::from_json_str(&cal.to_json_string()).expect("round trip");
    assert_eq!(again.route, cal.route);
    assert_eq!(again.fingerprint, cal.fingerprint);
    assert_eq!(again.matrix.cpus(), cal.matrix.cpus());
    assert!(close(again.cost, cal.cost));
    // A different machine is refused, the same one accepted.
    assert!(cal.check_machine(&cal.fingerprint).is_ok());
    let other = Fingerprint {
        logical_cpus: cal.fingerprint.logical_cpus.wrapping_add(1),
        ..cal.fingerprint.clone()
    };
    assert!(cal.check_machine(&other).is_err());
});
