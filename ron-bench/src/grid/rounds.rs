//! The repeat loop of the many-locks and reader-writer grids: every point
//! once per round, `repeat` rounds (so slow drift spreads over all locks),
//! until a stop request.

use crate::stop;

/// Runs `run` on every point of `points`, `repeat` rounds, calling
/// `progress(done, total, label)` before each run (the label is
/// `label(point)` plus the round) and `progress(total, total, "done")` at
/// the end. A [`stop::request`] ends the loop after the run in progress;
/// returns whether one did.
pub(super) fn run_rounds<P>(
    points: &mut [P],
    repeat: usize,
    mut progress: impl FnMut(usize, usize, &str),
    label: impl Fn(&P) -> String,
    mut run: impl FnMut(&mut P),
) -> bool {
    let total = points.len() * repeat;
    let mut done = 0;
    for rep in 0..repeat {
        for p in points.iter_mut() {
            progress(
                done,
                total,
                &format!("{} run {}/{}", label(p), rep + 1, repeat),
            );
            done += 1;
            run(p);
            if stop::requested() {
                return true;
            }
        }
    }
    progress(total, total, "done");
    false
}
