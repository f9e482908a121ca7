use crate::__internal::wit::exports::seams::generator::generator_api as api;
use crate::__internal::wit::seams::generator::templates as host;
#[cfg(target_arch = "wasm32")]
use crate::Error;
use crate::Result;

/// Text the host rendered from one of the generator's templates. The host
/// knows (and traces) its text, so a file with this body needs no `trace`.
#[derive(Debug)]
pub struct Rendered(RenderedText);

/// The host's handle; natively, the text itself.
#[cfg(target_arch = "wasm32")]
type RenderedText = host::Rendered;
#[cfg(not(target_arch = "wasm32"))]
type RenderedText = String;

impl Rendered {
    /// The rendered text.
    pub fn text(&self) -> String {
        #[cfg(target_arch = "wasm32")]
        return self.0.text();
        #[cfg(not(target_arch = "wasm32"))]
        return self.0.clone();
    }
}

/// Renders the generator's template `name` with `context`, which must
/// serialize to a JSON object; its keys become the template's variables.
pub fn render(name: &str, context: &impl serde::Serialize) -> Result<Rendered> {
    let context = serde_json::to_string(context)?;
    #[cfg(target_arch = "wasm32")]
    return host::render(name, &context)
        .map(Rendered)
        .map_err(Error::from_wit);
    #[cfg(not(target_arch = "wasm32"))]
    return crate::native::render(name, &context).map(Rendered);
}

/// A render context's field serialized once, for a value that many renders
/// share (the navigation every page shows): each render copies its JSON
/// text instead of serializing the value again, which for a list that
/// grows with the model is most of a generator's work.
///
/// ```
/// # use seams_sdk::Shared;
/// let nav = Shared::new(&["home", "about"]).unwrap();
/// let context = serde_json::json!({ "nav": &nav, "page": "home" });
/// assert_eq!(context["nav"][1], "about");
/// ```
#[derive(Debug, Clone)]
pub struct Shared(Box<serde_json::value::RawValue>);

impl Shared {
    /// `value`, serialized.
    ///
    /// # Errors
    ///
    /// `value` cannot be serialized to JSON.
    pub fn new(value: &impl serde::Serialize) -> Result<Shared> {
        Ok(Shared(serde_json::value::to_raw_value(value)?))
    }
}

impl serde::Serialize for Shared {
    fn serialize<S: serde::Serializer>(
        &self,
        serializer: S,
    ) -> std::result::Result<S::Ok, S::Error> {
        self.0.serialize(serializer)
    }
}

/// What a file holds.
#[derive(Debug)]
pub enum Body {
    /// Text the host rendered.
    Rendered(Rendered),
    /// Text the generator made itself.
    Text(String),
}

/// One output file: a relative posix path inside the output directory and
/// its body.
#[derive(Debug)]
pub struct File {
    /// Relative, normalized, no `..`, no absolute or drive prefix.
    pub path: String,
    /// The file's content.
    pub body: Body,
}

impl File {
    /// A file whose body the host rendered.
    pub fn rendered(path: impl Into<String>, rendered: Rendered) -> Self {
        File {
            path: path.into(),
            body: Body::Rendered(rendered),
        }
    }

    /// A file of plain text.
    pub fn text(path: impl Into<String>, text: impl Into<String>) -> Self {
        File {
            path: path.into(),
            body: Body::Text(text.into()),
        }
    }

    pub(crate) fn into_wit(self) -> host::File {
        host::File {
            path: self.path,
            body: match self.body {
                #[cfg(target_arch = "wasm32")]
                Body::Rendered(r) => host::Body::Rendered(r.0),
                // Natively there is no host: export glue is never called.
                #[cfg(not(target_arch = "wasm32"))]
                Body::Rendered(r) => host::Body::Text(r.0),
                Body::Text(t) => host::Body::Text(t),
            },
        }
    }
}

/// One traced line of a plain-text file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceLine {
    /// 1-based number of a non-blank line.
    pub line: u32,
    /// `<template>:<line>` origins, outermost first; never empty.
    pub templates: Vec<String>,
    /// Full IRIs behind the line.
    pub terms: Vec<String>,
}

/// The trace of one plain-text file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileTrace {
    /// The file's path, as `render` returned it.
    pub path: String,
    /// One entry per non-blank line.
    pub lines: Vec<TraceLine>,
}

impl FileTrace {
    pub(crate) fn into_wit(self) -> api::FileTrace {
        api::FileTrace {
            path: self.path,
            lines: self
                .lines
                .into_iter()
                .map(|l| api::TraceLine {
                    line: l.line,
                    templates: l.templates,
                    terms: l.terms,
                })
                .collect(),
        }
    }
}

/// The model elements a file without a trace was made from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileSources {
    /// The file's path, as `render` returned it.
    pub path: String,
    /// Full IRIs; the host sorts them.
    pub iris: Vec<String>,
}

impl FileSources {
    pub(crate) fn into_wit(self) -> api::FileSources {
        api::FileSources {
            path: self.path,
            iris: self.iris,
        }
    }
}
