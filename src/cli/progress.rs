//! Progress bars on stderr, only when stderr is a terminal (never in pipes or CI logs).

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use super::output::stderr_is_terminal;

/// A bar counting `len` items (e.g. jobs enqueued), hidden off a terminal or when `quiet`.
pub fn counter(len: u64, what: &str, quiet: bool) -> ProgressBar {
    let template = format!("{{spinner}} {what} [{{bar:32}}] {{human_pos}}/{{human_len}} ({{per_sec}}, {{eta}} left)");
    bar(len, &template, quiet)
}

/// A 0–100 bar for one job's progress, hidden off a terminal or when `quiet`.
pub fn percent(prefix: &str, quiet: bool) -> ProgressBar {
    let template = format!("{{spinner}} {prefix} [{{bar:32}}] {{pos:>3}}% {{msg}}");
    bar(100, &template, quiet)
}

/// A bar of `len` steps drawn on stderr by `template`, hidden off a terminal or when `quiet`.
fn bar(len: u64, template: &str, quiet: bool) -> ProgressBar {
    if quiet || !stderr_is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::with_draw_target(Some(len), ProgressDrawTarget::stderr());
    bar.set_style(
        ProgressStyle::with_template(template)
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
    );
    bar
}

/// A spinner counting items of a total not known beforehand, hidden off a terminal or when `quiet`.
pub fn count(what: &str, items: &str, quiet: bool) -> ProgressBar {
    if quiet || !stderr_is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
    let template = format!("{{spinner}} {what} {{human_pos}} {items} ({{per_sec}})");
    bar.set_style(ProgressStyle::with_template(&template).unwrap_or_else(|_| ProgressStyle::default_spinner()));
    bar
}
