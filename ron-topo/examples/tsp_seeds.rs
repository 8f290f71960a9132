//! Temporary tuning helper.
use ron_topo::{SolveOptions, solve, tsplib};
use std::time::Duration;
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let inst = tsplib::read(&args[1]).unwrap();
    let ms: u64 = args.get(2).map_or(1000, |s| s.parse().unwrap());
    let mut v = Vec::new();
    for seed in 0..8 {
        let r = solve(
            &inst.matrix,
            &SolveOptions {
                time_limit: Duration::from_millis(ms),
                seed,
                ..SolveOptions::default()
            },
        );
        v.push(r.cost);
    }
    println!("{} {:?}", inst.name, v);
}
