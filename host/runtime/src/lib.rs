//! The sandbox: a wasmtime component engine that runs untrusted generator
//! components with nothing but the model and the template service.
//!
//! A generator gets WASI with no preopened directories, no environment, no
//! arguments, no network and an empty stdin; its stdout and stderr are
//! captured, bounded, into the log. Clocks are fixed and randomness is
//! seeded from the model hash, so a run is deterministic. Fuel is the
//! reproducible CPU budget, an epoch deadline the wall-clock backstop (host
//! services check it too); memory, output count and output size are capped.
//! Every limit names the `[sandbox]` key that raises it.
//!
//! What the host spends on a generator's behalf is inside its budgets too:
//! each run has its own thread, whose heap allocations the process's global
//! allocator (this crate's) charges to the run's `memory-mib` with its
//! linear memory, and which the host stops at the first allocation past the
//! cap or the deadline. Whatever a generator does, its run is over within
//! `timeout-seconds` plus a fixed grace.
//!
//! ```no_run
//! use seams_runtime::{Limits, Runtime};
//! let runtime = Runtime::new(None)?;
//! let bytes = std::fs::read("generator.wasm")?;
//! let generator = runtime.load("generator.wasm", &bytes)?;
//! let model = std::sync::Arc::new(seams_model::Model::load(&["model.ttl"])?);
//! let run = runtime.run(&generator, &model, &Limits::default())?;
//! for output in &run.outputs {
//!     println!("{}", output.path);
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Each protocol version has its own bindings module (`since_v0_1_0` for
//! `wit/since_v0.1.0`, `since_v0_2_0` for `wit/since_v0.2.0`), generated
//! alike by `protocol::bindings_for_version!`; a component of a version
//! the host does not speak is refused naming its version and the host's.

#![deny(missing_docs)]

mod budget;
mod cache;
mod capture;
mod clock;
mod error;
mod flush;
mod function_cache;
mod keeper;
mod limits;
mod linked;
mod meta;
mod output_path;
mod protocol;
mod runtime;
mod sandbox;
mod seeded;
mod since_v0_1_0;
mod since_v0_2_0;
mod sink;
mod terms;
mod versions;

/// The runtime's own tests run as the `seams` binary does: with the
/// accounting allocator.
#[cfg(test)]
#[global_allocator]
static ALLOCATOR: Accounting = Accounting;

pub use budget::{Accounting, Exceeded, capped};
pub use cache::{evict, private, private_dir};
pub use error::{GeneratorError, GeneratorErrorKind, ProtocolError, RuntimeError, SourceError};
pub use limits::Limits;
pub use meta::MetaError;
pub use meta::{GENERATOR_NAME_RULE, Meta, is_generator_name};
pub use output_path::{TEMP_PREFIX, validate as validate_output_path};
pub use runtime::{GeneratorRun, LoadedGenerator, Output, Runtime, Stored};
pub use sink::{Blob, HOLD_BYTES, SMALL_BLOB, Sink};

/// Hooks for seams' own tests and benchmarks; not part of the stable API.
#[cfg(feature = "testing")]
pub mod testing {
    use crate::Runtime;

    /// `runtime` with the tracing render turned off: no traces, no
    /// sidecars; lock sources come from the `sources` export. For
    /// measuring what tracing costs.
    pub fn without_tracing(runtime: Runtime) -> Runtime {
        runtime.without_tracing()
    }

    /// `runtime` without the model check against the generators'
    /// vocabularies. For measuring what the check costs.
    pub fn without_model_check(runtime: Runtime) -> Runtime {
        runtime.without_model_check()
    }
}
