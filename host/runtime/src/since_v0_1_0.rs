//! The host side of `wit/since_v0.1.0`: generated bindings, version
//! detection and conversions.

use wasmtime::Engine;
use wasmtime::component::{Component, HasSelf, Linker};

use crate::error::GeneratorErrorKind;
use crate::meta::{GENERATOR_NAME_RULE, Meta, is_generator_name};
use crate::protocol::PROTOCOL_VERSION;
use crate::sandbox::{Sandbox, ServiceError};
use seams_templates::{Rendered, Syntax};
use wasmtime::component::Resource;

mod generated {
    wasmtime::component::bindgen!({
        path: "../../wit/since_v0.1.0",
        world: "generator",
        imports: { default: trappable },
        with: {
            "seams:generator/templates.rendered": seams_templates::Rendered,
        },
    });
}

pub(crate) use generated::exports::seams::generator::generator_api as api;
pub(crate) use generated::seams::generator::templates::Body;
pub(crate) use generated::seams::generator::types::Error as WitError;
pub(crate) use generated::seams::generator::{log, model, templates, types};
pub(crate) use generated::{Generator, GeneratorPre};

/// The protocol version these bindings speak.
const VERSION: &str = crate::protocol::V0_1_0;

const EXPORT_PREFIX: &str = "seams:generator/generator-api@";

pub(crate) fn add_to_linker(linker: &mut Linker<Sandbox>) -> wasmtime::Result<()> {
    generated::Generator::add_to_linker::<Sandbox, HasSelf<Sandbox>>(linker, |s| s)
}

/// Refuses a component of another protocol version or another world,
/// naming what it targets.
pub(crate) fn check_version(
    engine: &Engine,
    component: &Component,
) -> Result<(), GeneratorErrorKind> {
    let ty = component.component_type();
    let exports: Vec<String> = ty
        .exports(engine)
        .map(|(name, _)| name.to_owned())
        .collect();
    if exports
        .iter()
        .any(|e| e == &format!("{EXPORT_PREFIX}{VERSION}"))
    {
        return Ok(());
    }
    if let Some(found) = exports.iter().find_map(|e| e.strip_prefix(EXPORT_PREFIX)) {
        return Err(GeneratorErrorKind::UnsupportedVersion {
            found: found.to_owned(),
            supported: PROTOCOL_VERSION,
        });
    }
    Err(GeneratorErrorKind::NotAGenerator {
        exports: if exports.is_empty() {
            "nothing".to_owned()
        } else {
            exports.join(", ")
        },
    })
}

/// A generator's error as one line: escaped so it cannot drive a terminal
/// or fake a line of seams's, and cut.
pub(crate) fn error_message(e: &WitError) -> String {
    let line = |m: &str| seams_model::input_text::escape_line(m, ERROR_LIMIT).into_owned();
    match e {
        WitError::InvalidInput(m) => format!("invalid input: {}", line(m)),
        WitError::Query(m) => format!("query: {}", line(m)),
        WitError::Template(m) => format!("template: {}", line(m)),
        WitError::Failed(m) => line(m),
    }
}

/// The most characters of a generator's error message kept.
const ERROR_LIMIT: usize = 2000;

pub(crate) fn meta_from_wit(m: api::Metadata) -> Result<Meta, String> {
    if !is_generator_name(&m.name) {
        return Err(format!("name {:?} must be {GENERATOR_NAME_RULE}", m.name));
    }
    if m.version.is_empty() || m.version.len() > 64 || m.version.chars().any(char::is_control) {
        return Err(format!(
            "version {:?} must be a short version string such as 0.1.0",
            m.version
        ));
    }
    let mut names = std::collections::BTreeSet::new();
    for t in &m.templates {
        if !names.insert(t.name.as_str()) {
            return Err(format!("template {:?} is listed twice", t.name));
        }
    }
    Ok(Meta {
        name: m.name,
        version: m.version,
        description: m.description,
        syntax: match m.syntax {
            api::Syntax::Jinja => Syntax::Jinja,
            api::Syntax::Brackets => Syntax::Brackets,
        },
        templates: m
            .templates
            .into_iter()
            .map(|t| (t.name, t.source))
            .collect(),
    })
}

// The generated `Host` traits, on the version-independent services.

fn wit_error(e: ServiceError) -> WitError {
    match e {
        ServiceError::Query(m) => WitError::Query(m),
        ServiceError::Template(m) => WitError::Template(m),
    }
}

impl types::Host for Sandbox {}

impl model::Host for Sandbox {
    fn query(&mut self, sparql: String) -> wasmtime::Result<Result<String, WitError>> {
        Ok(Sandbox::query(self, &sparql)?.map_err(wit_error))
    }

    fn hash(&mut self) -> wasmtime::Result<String> {
        Ok(self.model().hash().to_owned())
    }

    fn labels(&mut self) -> wasmtime::Result<Vec<model::Label>> {
        Ok(self
            .model()
            .labels()
            .iter()
            .map(|(iri, label)| model::Label {
                iri: iri.clone(),
                label: label.clone(),
            })
            .collect())
    }
}

impl templates::Host for Sandbox {
    fn render(
        &mut self,
        name: String,
        context: String,
    ) -> wasmtime::Result<Result<Resource<Rendered>, WitError>> {
        Ok(Sandbox::render(self, &name, &context)?.map_err(wit_error))
    }
}

impl templates::HostRendered for Sandbox {
    fn text(&mut self, rendered: Resource<Rendered>) -> wasmtime::Result<String> {
        self.rendered_text(&rendered)
    }

    fn drop(&mut self, rendered: Resource<Rendered>) -> wasmtime::Result<()> {
        self.drop_rendered(rendered)
    }
}

impl log::Host for Sandbox {
    fn write(&mut self, level: log::Level, message: String) -> wasmtime::Result<()> {
        Sandbox::log(self, matches!(level, log::Level::Warn), &message);
        Ok(())
    }
}
