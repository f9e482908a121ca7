//! A generator's budgets: what `[sandbox]` in `seams.toml` sets.

use std::time::Duration;

/// The native stack a run's thread has beyond `[sandbox] stack-kib` (the
/// wasm stack), and each thread doing host work beside it: for the host's
/// parsers, query engine and renders, which recurse over what the
/// generator hands them (a template's expression of 200,000 terms, say).
/// Reserved, and used only as deep as the input nests.
pub(crate) const HOST_STACK_BYTES: usize = 128 << 20;

/// The sandbox's limits, from `[sandbox]` in `seams.toml`.
///
/// The defaults are sized for the largest model the benchmark builds,
/// expense x1000 (241,007 triples; 3,000 pages that each link to all
/// 3,000; 458 MB of HTML and 1.45 GB of sidecars): the htmx built-in
/// spends 32.6 billion fuel there and 36 to 39 s on a 2-core machine,
/// with a peak of 754 to 837 MB for the whole process.
#[derive(Debug, Clone, PartialEq)]
pub struct Limits {
    /// Fuel (about one unit per wasm instruction) for one generator run.
    /// `[sandbox] fuel`, default 150 billion.
    pub fuel: u64,
    /// Wall-clock time for one run, host services included.
    /// `[sandbox] timeout-seconds`, default 300.
    pub timeout: Duration,
    /// Linear memory a generator may grow to. `[sandbox] memory-mib`,
    /// default 512.
    pub memory_bytes: usize,
    /// Files one generator may write. `[sandbox] max-outputs`, default
    /// 10000.
    pub max_outputs: usize,
    /// Total bytes of one generator's files (and of the text it has the
    /// host render). `[sandbox] max-output-mib`, default 1024.
    pub max_output_bytes: usize,
    /// Bytes of log, stdout and stderr kept; the rest is cut.
    /// `[sandbox] max-log-kib`, default 64.
    pub max_log_bytes: usize,
    /// The wasm stack of every run. `[sandbox] stack-kib`, default 1024;
    /// an engine setting, so read where the runtime is made
    /// ([`crate::Runtime::with_stack`]).
    pub stack_bytes: usize,
    /// Handles (resources such as rendered texts) a generator may hold at
    /// once. `[sandbox] max-handles`, default 10000.
    pub max_handles: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            fuel: 150_000_000_000,
            timeout: Duration::from_secs(300),
            memory_bytes: 512 << 20,
            max_outputs: 10_000,
            max_output_bytes: 1024 << 20,
            max_log_bytes: 64 << 10,
            stack_bytes: 1 << 20,
            max_handles: 10_000,
        }
    }
}
