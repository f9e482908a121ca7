//! The progress bar: drawn on stderr by indicatif (rate, ETA, redraws that
//! do not flood a slow terminal), only once work has run for a second, and
//! cleared when it ends so that nothing of it stays in the scrollback.

use std::sync::Mutex;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use seams_core::Progress;

/// Work shorter than this shows no bar at all.
const SHOW_AFTER: Duration = Duration::from_secs(1);

/// A [`Progress`] drawn on the terminal's stderr.
#[derive(Default)]
pub(crate) struct TerminalProgress {
    current: Mutex<Option<ProgressBar>>,
}

fn style(total: Option<u64>) -> ProgressStyle {
    let template = match total {
        Some(_) => "{spinner} {prefix} [{bar:30}] {pos}/{len}, ETA {eta} {wide_msg}",
        None => "{spinner} {prefix} ({elapsed}) {wide_msg}",
    };
    ProgressStyle::with_template(template)
        .expect("the template is valid")
        .progress_chars("=> ")
}

impl Progress for TerminalProgress {
    fn start(&self, what: &str, total: Option<u64>) {
        let bar = ProgressBar::with_draw_target(total, ProgressDrawTarget::hidden());
        bar.set_style(style(total));
        bar.set_prefix(what.to_owned());
        let later = bar.clone();
        std::thread::spawn(move || {
            std::thread::sleep(SHOW_AFTER);
            if !later.is_finished() {
                later.set_draw_target(ProgressDrawTarget::stderr());
                later.enable_steady_tick(Duration::from_millis(120));
            }
        });
        if let Some(old) = self.replace(Some(bar)) {
            old.finish_and_clear();
        }
    }

    fn advance(&self, steps: u64, now: &str) {
        if let Some(bar) = self.lock().as_ref() {
            // A count cargo could not predict must not overflow the bar.
            if bar.length().is_some_and(|len| bar.position() + steps > len) {
                bar.set_length(bar.position() + steps);
            }
            bar.inc(steps);
            bar.set_message(now.to_owned());
        }
    }

    fn finish(&self) {
        if let Some(bar) = self.replace(None) {
            bar.finish_and_clear();
        }
    }

    fn is_shown(&self) -> bool {
        true
    }
}

impl TerminalProgress {
    fn lock(&self) -> std::sync::MutexGuard<'_, Option<ProgressBar>> {
        self.current.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn replace(&self, bar: Option<ProgressBar>) -> Option<ProgressBar> {
        std::mem::replace(&mut *self.lock(), bar)
    }
}
