//! The latency-matrix readers (CSV, JSON, TSPLIB): no panic on any input, no
//! allocation out of proportion to the input, and anything accepted is a
//! valid matrix that round-trips through the writer.
//!
//! The first byte picks the reader; the rest is the input.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ron_topo::matrix::{LatencyMatrix, MAX_N};

fn check_valid(m: &LatencyMatrix) {
    let n = m.n();
    assert!((1..=MAX_N).contains(&n), "size {n}");
    assert_eq!(m.as_slice().len(), n * n);
    assert!(m.as_slice().iter().all(|v| v.is_finite() && *v >= 0.0));
    let cpus = m.cpus();
    assert_eq!(cpus.len(), n);
    let mut sorted = cpus.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    assert_eq!(sorted.len(), n, "duplicate CPU ids accepted");
    assert!(cpus.iter().all(|&c| c < ron_core::route::MAX_CPUS));
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-12 * a.abs().max(b.abs()).max(1.0)
}

fuzz_target!(|data: &[u8]| {
    let Some((&which, input)) = data.split_first() else {
        return;
    };
    match which % 3 {
        0 => {
            // CSV from raw bytes (bad UTF-8 included).
            if let Ok(m) = LatencyMatrix::from_csv_reader(input) {
                check_valid(&m);
                // Shortest round-trip floats: the CSV cycle is exact.
                let again =
                    LatencyMatrix::from_csv_str(&m.to_csv_string()).expect("CSV round trip");
                assert_eq!(again.cpus(), m.cpus());
                assert_eq!(again.as_slice(), m.as_slice());
            }
        }
        1 => {
            let text = String::from_utf8_lossy(input);
            if let Ok(m) = LatencyMatrix::from_json_str(&text) {
                check_valid(&m);
                let again =
                    LatencyMatrix::from_json_str(&m.to_json_string()).expect("JSON round trip");
                assert_eq!(again.cpus(), m.cpus());
                // serde_json's default float parser may be off by an ulp.
                assert!(
                    again
                        .as_slice()
                        .iter()
                        .zip(m.as_slice())
                        .all(|(a, b)| close(*a, *b))
                );
            }
        }
        _ => {
            let text = String::from_utf8_lossy(input);
            if let Ok(inst) = ron_topo::tsplib::parse(&text) {
                check_valid(&inst.matrix);
            }
        }
    }
});
