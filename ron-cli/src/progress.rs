//! Progress bars on stderr (hidden when stderr is not a terminal).

use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// A progress bar of `total` steps, drawn on stderr only when stderr is a
/// terminal and `expected` (the expected run time) exceeds a second.
pub fn bar(total: u64, expected: Duration, what: &str) -> ProgressBar {
    let visible = std::io::stderr().is_terminal() && expected > Duration::from_secs(1);
    let pb = ProgressBar::with_draw_target(
        Some(total),
        if visible {
            ProgressDrawTarget::stderr()
        } else {
            ProgressDrawTarget::hidden()
        },
    );
    let style = ProgressStyle::with_template(
        "{prefix} [{elapsed_precise}] {bar:40} {pos}/{len} (eta {eta}) {msg}",
    )
    .unwrap_or_else(|_| ProgressStyle::default_bar());
    pb.set_style(style);
    pb.set_prefix(what.to_string());
    pb
}

/// The `progress(done, total, label)` callback of ron-bench's grids,
/// moving `pb` to `done` with `label` as its message.
pub fn follow(pb: &ProgressBar) -> impl FnMut(usize, usize, &str) + '_ {
    move |done, _, label| {
        pb.set_position(done as u64);
        pb.set_message(label.to_string());
    }
}
