//! LatencyMatrix I/O on the recorded matrices and on hostile input.

use std::path::PathBuf;

use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64Mcg;
use ron_topo::{LatencyMatrix, MatrixError};

#[test]
fn recorded_matrices_round_trip() {
    let d = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/data/latency");
    if !d.is_dir() {
        println!("SKIP: {} not found", d.display());
        return;
    }
    let mut seen = 0;
    for e in std::fs::read_dir(&d).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_none_or(|x| x != "csv") {
            continue;
        }
        let m = LatencyMatrix::read_csv(&p).unwrap();
        assert!(m.n() >= 10 && m.n() <= 256, "{}", p.display());
        for i in 0..m.n() {
            assert_eq!(m.get(i, i), 0.0, "{}: diagonal", p.display());
        }
        let back = LatencyMatrix::from_csv_str(&m.to_csv_string()).unwrap();
        assert_eq!(back.as_slice(), m.as_slice());
        let back = LatencyMatrix::from_json_str(&m.to_json_string()).unwrap();
        assert_eq!(back, m);
        assert!(m.fifo_mean() > 0.0);
        seen += 1;
    }
    assert_eq!(seen, 10);
}

#[test]
fn too_many_rows_refused_early() {
    let mut s = String::new();
    for _ in 0..=ron_topo::matrix::MAX_N {
        s.push_str("0\n");
    }
    assert!(matches!(
        LatencyMatrix::from_csv_str(&s),
        Err(MatrixError::TooLarge { .. })
    ));
}

#[test]
fn random_input_never_panics() {
    let mut rng = Pcg64Mcg::seed_from_u64(7);
    let alphabet = b"0123456789.,-+eE\n #cpus:NaNinf\r\"x";
    for _ in 0..3000 {
        let len = rng.random_range(0..60);
        let s: String = (0..len)
            .map(|_| alphabet[rng.random_range(0..alphabet.len())] as char)
            .collect();
        if let Ok(m) = LatencyMatrix::from_csv_str(&s) {
            assert!(m.as_slice().iter().all(|v| v.is_finite() && *v >= 0.0));
            assert_eq!(m.as_slice().len(), m.n() * m.n());
        }
        let _ = LatencyMatrix::from_json_str(&s);
        let _ = ron_topo::tsplib::parse(&s);
        let _ = ron_topo::Calibration::from_json_str(&s);
    }
}
