//! A generator's code run natively, outside the sandbox: what seams'
//! benchmark uses as its floor (the same queries, view building and
//! templates with no sandbox and no tracing), and a way to debug a
//! generator with native tools. Only on targets other than wasm.
//!
//! The program installs a [`Backend`] that answers the model's queries and
//! renders the templates, then [`run`]s the generator: meta, extract and
//! render, as the host would, with no trace or sources.

use std::sync::OnceLock;

use crate::{Body, Error, Generator, Result, Syntax};

/// What the host does for a generator: answers queries and renders
/// templates.
pub trait Backend: Send + Sync {
    /// A SPARQL query's answer, as the host gives it (SPARQL JSON results
    /// for SELECT and ASK).
    fn query(&self, sparql: &str) -> std::result::Result<String, String>;
    /// Template `name` rendered with `context`, a JSON object's text.
    fn render(&self, name: &str, context: &str) -> std::result::Result<String, String>;
    /// The model hash.
    fn hash(&self) -> String;
    /// Every labelled subject as `(iri, label)`, sorted by IRI.
    fn labels(&self) -> Vec<(String, String)>;
}

static BACKEND: OnceLock<Box<dyn Backend>> = OnceLock::new();

/// Installs the backend every model call and render goes to, once per
/// process; false when one was installed already.
pub fn install(backend: Box<dyn Backend>) -> bool {
    BACKEND.set(backend).is_ok()
}

fn backend() -> &'static dyn Backend {
    BACKEND
        .get()
        .map(Box::as_ref)
        .expect("seams_sdk::native::install a backend before running a generator natively")
}

pub(crate) fn query(sparql: &str) -> Result<String> {
    backend().query(sparql).map_err(Error::Query)
}

pub(crate) fn render(name: &str, context: &str) -> Result<String> {
    backend().render(name, context).map_err(Error::Template)
}

pub(crate) fn hash() -> String {
    backend().hash()
}

pub(crate) fn labels() -> Vec<(String, String)> {
    backend().labels()
}

/// A generator's templates, by name, and their syntax.
pub fn templates<G: Generator>() -> (Syntax, Vec<(String, String)>) {
    let meta = G::meta();
    (meta.syntax_of(), meta.templates_of())
}

/// Runs the generator's meta, extract and render against the installed
/// backend; its files as `(path, text)`, in the order render gave them.
///
/// # Errors
///
/// What extract or render report.
pub fn run<G: Generator>() -> Result<Vec<(String, String)>> {
    let view = G::extract(&crate::Model::new())?;
    Ok(G::render(&view)?
        .into_iter()
        .map(|file| {
            let text = match file.body {
                Body::Rendered(rendered) => rendered.text(),
                Body::Text(text) => text,
            };
            (file.path, text)
        })
        .collect())
}
