//! The path counters of `ron_core::coverage` count when compiled in and
//! stay silent (0) otherwise.

use ron_core::coverage;

#[test]
fn counts_only_when_enabled() {
    coverage::record("test.coverage_a");
    coverage::record("test.coverage_a");
    coverage::record("test.coverage_b");
    let expect = |n: u64| if coverage::ENABLED { n } else { 0 };
    assert_eq!(coverage::count("test.coverage_a"), expect(2));
    assert_eq!(coverage::count("test.coverage_b"), expect(1));
    assert_eq!(coverage::count("test.never_recorded"), 0);
    let seen: Vec<_> = coverage::snapshot().map(|(n, _)| n).collect();
    assert_eq!(seen.contains(&"test.coverage_a"), coverage::ENABLED);
    coverage::reset();
    assert_eq!(coverage::count("test.coverage_a"), 0);
}
