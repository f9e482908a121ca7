//! Looking inside generators: `seams inspect FILE.wasm` (what a component
//! is) and `seams view GENERATOR` (the view model its extract step builds
//! from the project's model).

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use seams_model::input_text::escape_line;
use seams_registry::{Reference, Registry, RegistryError};

use crate::error::GenerateError;
use crate::inputs::load_generator;
use crate::project::{GeneratorSource, Project};
use seams_model::{Model, sha256_hex};
use seams_runtime::{GeneratorError, Limits, Meta, Runtime};
use seams_templates::Syntax;

/// Why a generator cannot be inspected or viewed.
#[derive(Debug, thiserror::Error)]
pub enum InspectError {
    /// The file cannot be read.
    #[error("cannot read {}: {source}", path.display())]
    Io {
        /// The file.
        path: std::path::PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// Not a seams generator, or one that fails.
    #[error(transparent)]
    Generator(#[from] GeneratorError),
    /// The project cannot be loaded.
    #[error(transparent)]
    Generate(#[from] GenerateError),
    /// The registry failed.
    #[error(transparent)]
    Registry(#[from] RegistryError),
    /// No generator of the project has that name.
    #[error("the project has no generator {name:?}; its generators are: {known}")]
    UnknownGenerator {
        /// The name asked for.
        name: String,
        /// The project's generators.
        known: String,
    },
}

/// What `seams inspect` shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Inspection {
    /// The protocol version the component targets.
    pub protocol: String,
    /// Its meta.
    pub meta: Meta,
    /// The sha256 of the file.
    pub sha256: String,
    /// Its size in bytes.
    pub size: usize,
    /// For a component pulled from a registry, what the registry says.
    pub pulled: Option<Pulled>,
}

/// What a registry says of a component it serves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pulled {
    /// The manifest's digest.
    pub manifest_digest: String,
    /// The manifest's annotations (title, version, source, protocol...).
    pub annotations: BTreeMap<String, String>,
}

impl Inspection {
    /// The JSON form of `seams inspect --format json`, with a final newline.
    pub fn to_json(&self, file: &str) -> String {
        let templates: serde_json::Map<String, serde_json::Value> = self
            .meta
            .templates
            .iter()
            .map(|(name, source)| (name.clone(), source.lines().count().into()))
            .collect();
        let value = serde_json::json!({
            "file": file,
            "protocol": format!("seams:generator@{}", self.protocol),
            "name": self.meta.name,
            "version": self.meta.version,
            "description": self.meta.description,
            "syntax": match self.meta.syntax {
                Syntax::Jinja => "jinja",
                Syntax::Brackets => "brackets",
            },
            "template_lines": templates,
            "vocabularies": self.meta.vocabularies.iter().map(|v| serde_json::json!({
                "namespace": v.namespace,
                "terms": v.defined_terms().map(|t| t.len()).ok(),
                "shapes": v.shapes.is_some(),
            })).collect::<Vec<_>>(),
            "sha256": self.sha256,
            "size": self.size,
        });
        let mut value = value;
        if let Some(pulled) = &self.pulled {
            value["manifest_digest"] = pulled.manifest_digest.clone().into();
            value["annotations"] = serde_json::json!(pulled.annotations);
        }
        let mut text = serde_json::to_string_pretty(&value).expect("JSON serializes");
        text.push('\n');
        text
    }

    /// The text `seams inspect` prints.
    pub fn to_text(&self, file: &str) -> String {
        let mut out = format!(
            "{file}\n  protocol:    seams:generator@{}\n  name:        {}\n  version:     {}\n  description: {}\n  syntax:      {}\n  templates:\n",
            self.protocol,
            self.meta.name,
            self.meta.version,
            self.meta.description,
            match self.meta.syntax {
                Syntax::Jinja => "jinja ({{ }}, {% %}, {# #})",
                Syntax::Brackets => "brackets ([[ ]], [% %], [# #])",
            }
        );
        for (name, source) in &self.meta.templates {
            out.push_str(&format!("    {name} ({} lines)\n", source.lines().count()));
        }
        if self.meta.vocabularies.is_empty() {
            out.push_str("  vocabularies: none (the model is not checked for it)\n");
        } else {
            out.push_str("  vocabularies:\n");
        }
        for v in &self.meta.vocabularies {
            // A generator's words: escaped.
            let terms = match v.defined_terms() {
                Ok(terms) => format!("{} terms", terms.len()),
                Err(e) => escape_line(&e.message, 200).into_owned(),
            };
            let shapes = if v.shapes.is_some() {
                ", with shapes"
            } else {
                ""
            };
            out.push_str(&format!(
                "    {} ({terms}{shapes})\n",
                escape_line(&v.namespace, 200)
            ));
        }
        out.push_str(&format!(
            "  sha256:      {}\n  size:        {} bytes\n",
            self.sha256, self.size
        ));
        if let Some(pulled) = &self.pulled {
            out.push_str(&format!("  manifest:    {}\n", pulled.manifest_digest));
            for (key, value) in &pulled.annotations {
                // A registry's words: escaped, one line each.
                out.push_str(&format!(
                    "  annotation:  {} = {}\n",
                    escape_line(key, 200),
                    escape_line(value, 500)
                ));
            }
        }
        out
    }
}

/// Inspects a component file: checks it is a seams generator and asks for
/// its meta, in the sandbox, on an empty model.
///
/// # Errors
///
/// The file cannot be read, or is not a seams generator (naming what it is).
pub fn inspect(runtime: &Runtime, path: &Path) -> Result<Inspection, InspectError> {
    let bytes = crate::project_file::read(path, crate::project_file::COMPONENT_LIMIT).map_err(
        |source| InspectError::Io {
            path: path.to_owned(),
            source,
        },
    )?;
    inspect_bytes(runtime, &path.display().to_string(), &bytes, None)
}

/// Inspects the component a registry reference names, pulling it into the
/// blob cache (or finding it there).
///
/// # Errors
///
/// The registry fails or the artifact is not a seams generator.
pub fn inspect_reference(
    runtime: &Runtime,
    registry: &Registry,
    reference: &Reference,
) -> Result<Inspection, InspectError> {
    let fetched = crate::inputs::fetch(registry, reference, None)?;
    inspect_bytes(
        runtime,
        &reference.to_string(),
        &fetched.component,
        Some(Pulled {
            manifest_digest: fetched.pin.manifest,
            annotations: fetched.annotations,
        }),
    )
}

/// A component's meta, asked for in the sandbox on an empty model.
pub(crate) fn inspect_bytes(
    runtime: &Runtime,
    label: &str,
    bytes: &[u8],
    pulled: Option<Pulled>,
) -> Result<Inspection, InspectError> {
    let loaded = runtime.load(label, bytes)?;
    let empty = Arc::new(Model::parse("empty.nt", "").expect("an empty model parses"));
    let meta = runtime.meta(&loaded, &empty, &Limits::default())?;
    Ok(Inspection {
        protocol: loaded.protocol().to_owned(),
        meta,
        sha256: sha256_hex(bytes),
        size: bytes.len(),
        pulled,
    })
}

/// The view model the project's generator `name` (a built-in name or the
/// `.wasm` path as `seams.toml` gives it) builds from the project's model,
/// pretty-printed.
///
/// # Errors
///
/// No such generator, or it fails.
pub fn view(project: &Project, runtime: &Runtime, name: &str) -> Result<String, InspectError> {
    // As the error below lists it (`builtin:htmx`), or as seams.toml says it.
    let matches = |source: &GeneratorSource| {
        source.label() == name
            || match source {
                GeneratorSource::Builtin(builtin) => builtin == name,
                GeneratorSource::Wasm { path, .. } | GeneratorSource::Package { path } => {
                    Path::new(name) == path.as_path()
                }
                GeneratorSource::Oci(reference) => reference.to_string() == name,
            }
    };
    let Some(source) = project.generators.iter().find(|s| matches(s)) else {
        return Err(InspectError::UnknownGenerator {
            name: name.to_owned(),
            known: project
                .generators
                .iter()
                .map(GeneratorSource::label)
                .collect::<Vec<_>>()
                .join(", "),
        });
    };
    let model = Arc::new(Model::load(&project.model_files).map_err(GenerateError::from)?);
    let lock = crate::inputs::read_lock(project)?;
    let loaded = load_generator(project, runtime, source, lock.as_ref())?;
    let view = runtime.extract(&loaded, &model, &project.limits)?;
    let value: serde_json::Value =
        serde_json::from_str(&view).unwrap_or(serde_json::Value::String(view));
    let mut text = serde_json::to_string_pretty(&value).expect("JSON serializes");
    text.push('\n');
    Ok(text)
}
