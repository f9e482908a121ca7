//! Writing seams generators: a generator package is a crate built to a
//! component, with its templates and golden files.
//!
//! - [`new_generator`] (`seams new-generator`) scaffolds a package whose
//!   test passes as written, from a reference output.
//! - [`test_generator`] (`seams test-generator`) builds a package and runs
//!   its four tests: golden match, determinism, output parses, sources name
//!   the files.
//! - [`draft_generator`] (`seams draft-generator`) asks an LLM, through a
//!   provider command, for a package drawn from a reference output, and
//!   keeps it only when it compiles and passes its tests.
//! - [`publish`] (`seams publish`) builds and tests a package and pushes
//!   its component to an OCI registry.
//!
//! The "output parses" test uses tree-sitter grammars, the `syntax`
//! feature (on by default).

#![deny(missing_docs)]

mod authority;
mod build;
mod child;
mod draft;
mod eval;
mod extract_rules;
mod golden;
mod jail;
mod language;
mod output_syntax;
mod probe;
mod prompt;
pub mod provider;
mod publish;
mod scaffold;
mod script_rules;
mod toolchain;

/// The readers of what a provider answers, for the fuzz targets
/// (`fuzz/`): built only under cargo-fuzz's `--cfg fuzzing`.
#[cfg(fuzzing)]
#[doc(hidden)]
pub mod fuzzing {
    pub use crate::draft::parse_answer;
    pub use crate::extract_rules::{check as check_extract, copied_values};
    pub use crate::script_rules::{check as check_script, strings as script_strings};

    /// The answer's text in a response body of `api`, as a draft reads it.
    pub fn answer_text(api: crate::provider::Api, body: &[u8]) -> Option<String> {
        let body: serde_json::Value = serde_json::from_slice(body).ok()?;
        crate::provider::answer_text(api, &body)
    }
}

pub use build::{
    BuildError, Built, DEFAULT_BUILD_MEMORY_MIB, DEFAULT_BUILD_TIMEOUT, ProjectPackages,
    build_package,
};
pub use draft::{
    DEFAULT_RETRIES, DEFAULT_TIMEOUT, DraftError, DraftReport, DraftRequest, draft_generator,
    draft_prompt,
};
pub use eval::{Case, CaseResult, EvalError, EvalReport, read_cases, run_case};
pub use golden::{
    SuiteError, SuiteReport, TestOutcome, golden_match, output_parses, test_generator,
};
pub use language::Language;
pub use output_syntax::SyntaxProblem;
/// The probes' soundness on random models (a property test and a fuzz
/// target): built for seams's own tests only.
#[cfg(any(test, fuzzing, feature = "soundness"))]
pub use probe::soundness;
pub use prompt::{PROMPT_CAP, TooLarge, build_prompt};
pub use publish::{PublishError, PublishReport, PublishRequest, publish};
pub use scaffold::{Package, Reference, ScaffoldError, Sdk, new_generator};
pub use toolchain::ToolchainError;
