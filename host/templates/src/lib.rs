//! The template service of seams: generators ship their templates, the
//! host renders them with minijinja, so that it knows the text of every
//! rendered file and can trace it.
//!
//! Tracing is the second render of ADR-0019: the same templates,
//! instrumented, print a sentinel after the text of every template line and
//! after every value that carries model IRIs; the sentinels give each
//! output line its template origins and its terms ([`TraceLine`]), and
//! stripping them must give the normal render byte for byte. The sidecar
//! format (`<output>.trace.json`) is [`Trace`].
//!
//! ```
//! use seams_templates::{Syntax, TemplateService};
//! let service = TemplateService::new(
//!     vec![("hello.txt".into(), "Hello {{ name }}!\n".into())],
//!     Syntax::Jinja,
//! )?;
//! let rendered = service.render("hello.txt", serde_json::json!({ "name": "seams" }))?;
//! assert_eq!(rendered.text, "Hello seams!\n");
//! # Ok::<(), seams_templates::TemplateError>(())
//! ```
//!
//! This crate does not depend on wasmtime: it builds and tests in seconds.

#![deny(missing_docs)]

mod citations;
mod context;
#[cfg(test)]
mod corpus;
mod environment;
mod error;
mod fragment;
mod instrument;
mod recorder;
mod scan;
mod sentinel;
mod service;
mod syntax;
mod trace;
mod view;
mod walk;

pub use citations::Citations;
pub use error::TemplateError;
pub use service::{Rendered, TemplateService};
pub use syntax::Syntax;
pub use trace::{
    SIDECAR_SUFFIX, TRACE_VERSION, Trace, TraceLine, check_lines, sidecar_path, sidecar_tail,
    sources_of,
};
