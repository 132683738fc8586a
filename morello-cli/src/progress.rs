//! Progress on standard error: the one place indicatif bars are set up, and the renderer of the
//! search's progress callback.
//!
//! A bar is drawn only when asked (`--progress`) or when standard error is a terminal, and never
//! with `--quiet`; otherwise it is hidden and every call on it does nothing.

use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use morello_search::{Phase, Progress};

/// Whether to draw progress: asked for (`--progress`) or standard error is a terminal, and not
/// `--quiet`.
pub fn shown(asked: bool, quiet: bool) -> bool {
    !quiet && (asked || std::io::stderr().is_terminal())
}

/// A bar (with a length) or spinner (without) on standard error in `template` (indicatif's
/// syntax, e.g. `{spinner} {msg} [{bar:30}] {pos}/{len}`), or a hidden one unless `shown`.
pub fn bar(shown: bool, length: Option<u64>, template: &str) -> ProgressBar {
    if !shown {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::with_draw_target(length, ProgressDrawTarget::stderr());
    bar.set_style(
        ProgressStyle::with_template(template)
            .expect("the progress templates are valid")
            .progress_chars("=> "),
    );
    bar.enable_steady_tick(Duration::from_millis(120));
    bar
}

/// A bar for a search, and the callback ([`morello_search::Search::on_progress`]) that moves it.
pub fn search_bar(shown: bool) -> (ProgressBar, impl Fn(Progress) + Send + Sync + 'static) {
    let bar = bar(shown, Some(0), "{spinner} {msg:8} [{bar:30}] {pos}/{len} specs, {elapsed}");
    let handle = bar.clone();
    let report = move |p: Progress| {
        handle.set_message(match p.phase {
            Phase::Explore => "explore",
            Phase::Solve => "solve",
        });
        handle.set_length(p.total);
        handle.set_position(p.done);
    };
    (bar, report)
}
