//! seams turns an RDF model into files through sandboxed WebAssembly
//! generators.
//!
//! A project's `seams.toml` names model files (Turtle, TriG, N-Triples,
//! N-Quads), an output directory and generators. Each generator is a
//! WebAssembly component speaking the `seams:generator@0.1.0` protocol
//! (`wit/`): it queries the model through SPARQL, builds a view model, and
//! renders its own templates through the host's template service. The host
//! runs it in a sandbox and writes its files, and `seams.lock` pins every
//! output with its hash, its generator and the model elements behind it.
//!
//! ```no_run
//! # fn main() -> anyhow::Result<()> {
//! let project = seams::Project::load(std::path::Path::new("examples/chat"))?;
//! let runtime = seams::Runtime::new(None)?;
//! let report = seams::generate(&project, &runtime, &seams::GenerateOptions::default())?;
//! println!("{} files written", report.written.len());
//! # Ok(()) }
//! ```
//!
//! # Core concepts
//!
//! - [`Project`]: a parsed `seams.toml`.
//! - [`Model`]: the RDF dataset, its hash, labels and read-only queries.
//! - [`Runtime`]: the wasmtime engine and sandbox; [`Limits`] are its
//!   budgets, [`GeneratorError`] what it reports.
//! - [`TemplateService`]: renders a generator's templates.
//! - [`Lock`]: the contents of `seams.lock`.
//! - [`generate()`]: the `seams generate` command; [`check()`] `seams check`;
//!   [`trace_view`] `seams trace`; [`cli::run`] the whole CLI.

#![deny(missing_docs)]

mod audit;
pub mod builtin;
mod check;
pub mod cli;
mod draft;
mod generate;
mod golden;
mod input_text;
mod inspect;
mod journal;
mod lock;
mod model;
mod output_dir;
mod output_syntax;
mod progress;
mod project;
mod project_lock;
mod runtime;
mod scaffold;
mod templates;
mod trace;

pub use audit::{FileAudit, FileState, audit, locked_path};
pub use check::{CHECK_VERSION, CheckReport, Problem, check, check_with};
pub use draft::{
    Answer, DEFAULT_RETRIES, DEFAULT_TIMEOUT, DraftError, DraftReport, DraftRequest, PROMPT,
    REPAIR_PROMPT, build_prompt, check_no_logic, check_no_restated_labels, draft_generator,
    parse_answer,
};
pub use generate::{
    ComponentBytes, GenerateError, GenerateOptions, GenerateReport, Generation, Inputs, SourcedRun,
    files_of, generate, lock_for, read_inputs, read_lock, run_generators, run_with_inputs,
    source_label,
};
pub use golden::{
    Golden, GoldenError, Marker, SuiteError, SuiteReport, TESTS, TestOutcome,
    build as build_package, compare as compare_golden, diff, golden_match, output_parses,
    test_generator,
};
pub use inspect::{InspectError, Inspection, inspect, view};
pub use journal::{JOURNAL_FILE, JOURNAL_VERSION, Journal, JournalWrite};
pub use lock::{LOCK_FILE, LOCK_VERSION, Lock, LockError, LockedGenerator, LockedOutput};
pub use model::{Model, ModelError, QueryError};
pub use output_dir::{OutputDir, Staged, check_distinct, validate as validate_output_path};
pub use output_syntax::{SUFFIXES, SyntaxProblem, check as check_syntax, language_of};
pub use progress::{Progress, Silent};
pub use project::{GeneratorSource, MANIFEST, Project, ProjectError, Propose};
pub use project_lock::Wait;
pub use runtime::{
    GeneratorError, GeneratorErrorKind, GeneratorRun, Limits, LoadedGenerator, Meta, Output,
    PROTOCOL_VERSION, Runtime, RuntimeError,
};
pub use scaffold::{
    Package, Reference, ScaffoldError, check_dir, check_name, new_generator, read_reference,
    scaffold, write_package,
};
pub use templates::{Rendered, Syntax, TemplateError, TemplateService};
pub use trace::{
    LineView, OriginView, SIDECAR_SUFFIX, TRACE_VERSION, TermView, Trace, TraceLine, TraceView,
    TraceViewError, check_lines, parse_target, sidecar_path, trace_view,
};
