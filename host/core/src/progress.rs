//! Progress of long work (building a package, running generators,
//! drafting), reported to whoever shows it: the CLI draws a bar on a
//! terminal, library callers and tests usually pass [`Silent`].

/// Receives the progress of one piece of work at a time.
///
/// Implementations must be cheap: work reports every step, and generators
/// report from several threads at once.
pub trait Progress: Sync {
    /// Work named `what` starts, with `total` steps (`None` when unknown).
    fn start(&self, what: &str, total: Option<u64>);
    /// `steps` more steps are done; `now` says what is running now.
    fn advance(&self, steps: u64, now: &str);
    /// The work ended (done or failed); whatever was drawn disappears.
    fn finish(&self);
    /// Whether anything is shown, so that work may skip measuring its
    /// total (for example asking cargo for the number of crates).
    fn is_shown(&self) -> bool {
        false
    }
}

/// Shows nothing.
#[derive(Debug, Clone, Copy, Default)]
pub struct Silent;

impl Progress for Silent {
    fn start(&self, _what: &str, _total: Option<u64>) {}
    fn advance(&self, _steps: u64, _now: &str) {}
    fn finish(&self) {}
}
