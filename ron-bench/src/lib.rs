//! Microbenchmark harness, workloads, fairness metrics and the lock-policy
//! simulator of the ron lock family.
