//! Why a template could not be loaded, rendered or traced.

/// Why a template could not be loaded or rendered.
#[derive(Debug, Clone, thiserror::Error, PartialEq, Eq)]
#[error("template {template}{}: {message}", line.map(|l| format!(":{l}")).unwrap_or_default())]
pub struct TemplateError {
    /// The template's name.
    pub template: String,
    /// The 1-based line, when known.
    pub line: Option<usize>,
    /// What went wrong.
    pub message: String,
}

impl TemplateError {
    pub(crate) fn from_minijinja(template: &str, e: &minijinja::Error) -> Self {
        TemplateError {
            template: e.name().unwrap_or(template).to_owned(),
            line: e.line(),
            message: match e.detail() {
                Some(detail) => format!("{}: {detail}", e.kind()),
                None => e.kind().to_string(),
            },
        }
    }
}
