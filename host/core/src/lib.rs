//! The pipeline of a seams project: `seams.toml` ([`Project`]), the model
//! and the generators' runs (through `seams-model` and `seams-runtime`),
//! the audit of the files against `seams.lock`, and applying its plan to
//! the output directory: [`generate`] and [`check`].
//!
//! ```no_run
//! let project = seams_core::Project::load(std::path::Path::new("examples/chat"))?;
//! let runtime = seams_runtime::Runtime::new(None)?;
//! let report = seams_core::generate(&project, &runtime, &seams_core::GenerateOptions::default())?;
//! println!("{} files written", report.written.len());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Core concepts
//!
//! - [`Project`]: a parsed `seams.toml`, with the sandbox's
//!   [`Limits`](seams_runtime::Limits) from `[sandbox]`.
//! - [`Lock`]: the contents of `seams.lock`.
//! - [`generate()`]: `seams generate`; [`check()`]: `seams check`;
//!   [`trace_view()`]: `seams trace`; [`inspect()`]: `seams inspect`.
//! - [`OutputDir`]: the only writer of files, confined to one directory.

#![deny(missing_docs)]

mod audit;
pub mod builtin;
mod check;
mod generate;
mod inspect;
mod journal;
mod lock;
mod output_dir;
mod progress;
mod project;
mod project_lock;
mod trace_view;

pub use audit::{FileAudit, FileState, audit, locked_path};
pub use check::{CHECK_VERSION, CheckReport, Problem, check, check_with};
pub use generate::{
    ComponentBytes, GenerateError, GenerateOptions, GenerateReport, Generation, Inputs, SourcedRun,
    files_of, generate, lock_for, read_inputs, read_lock, run_generators, run_with_inputs,
    source_label,
};
pub use inspect::{InspectError, Inspection, inspect, view};
pub use journal::{JOURNAL_FILE, JOURNAL_VERSION, Journal, JournalWrite};
pub use lock::{LOCK_FILE, LOCK_VERSION, Lock, LockError, LockedGenerator, LockedOutput};
pub use output_dir::{OutputDir, Staged};
pub use progress::{Progress, Silent};
pub use project::{GeneratorSource, MANIFEST, Project, ProjectError, Propose};
pub use project_lock::Wait;
pub use trace_view::{
    LineView, OriginView, TermView, TraceView, TraceViewError, parse_target, trace_view,
};
