//! The version-neutral calls the runtime makes on a generator ([`Exports`]),
//! and the macro that makes each version's bindings (`since_v0_1_0`,
//! `since_v0_2_0`, from `wit/since_vX.Y.Z/`) speak them.

use wasmtime::Store;
use wasmtime::component::Resource;

use seams_templates::Rendered;

use crate::meta::{Meta, MetaError};
use crate::sandbox::Sandbox;

/// A file `render` returned.
pub(crate) struct File {
    pub(crate) path: String,
    pub(crate) body: Body,
}

/// What a returned file holds.
pub(crate) enum Body {
    Text(String),
    Rendered(Resource<Rendered>),
}

/// One line of a generator's own trace.
pub(crate) struct TraceLine {
    pub(crate) line: u32,
    pub(crate) templates: Vec<String>,
    pub(crate) terms: Vec<String>,
}

/// A generator's own trace of one plain-text file.
pub(crate) struct FileTrace {
    pub(crate) path: String,
    pub(crate) lines: Vec<TraceLine>,
}

/// What the `sources` export says one file was made from.
pub(crate) struct FileSources {
    pub(crate) path: String,
    pub(crate) iris: Vec<String>,
}

/// A call's result: the trap, else the generator's answer, its error
/// already one escaped line.
pub(crate) type Called<T> = wasmtime::Result<Result<T, String>>;

/// The exports of an instance, whatever its version.
pub(crate) trait Exports {
    /// `meta`, checked: the error says what is wrong with it.
    fn meta(&self, store: &mut Store<Sandbox>) -> wasmtime::Result<Result<Meta, MetaError>>;
    fn extract(&self, store: &mut Store<Sandbox>) -> Called<String>;
    fn render(&self, store: &mut Store<Sandbox>, view: &str) -> Called<Vec<File>>;
    fn trace(&self, store: &mut Store<Sandbox>, view: &str) -> Called<Vec<FileTrace>>;
    fn sources(&self, store: &mut Store<Sandbox>, view: &str) -> Called<Vec<FileSources>>;
}

/// The most characters of a generator's error message kept.
const ERROR_LIMIT: usize = 2000;

/// A generator's error message as one line: escaped so it cannot drive a
/// terminal or fake a line of seams's, and cut.
pub(crate) fn error_line(message: &str) -> String {
    seams_model::input_text::escape_line(message, ERROR_LIMIT).into_owned()
}

/// One version's bindings, generated from its WIT at `$wit`, and what is
/// the same in every version: the host services on [`Sandbox`] and the
/// calls of the exports. Expanded inside each `since_v*` module, which
/// adds `vocabularies`, what its meta says it reads.
macro_rules! bindings_for_version {
    ($wit:tt) => {
        mod generated {
            wasmtime::component::bindgen!({
                path: $wit,
                world: "generator",
                imports: { default: trappable },
                with: {
                    "seams:generator/templates.rendered": seams_templates::Rendered,
                },
            });
        }

        use wasmtime::component::{HasSelf, Linker, Resource};

        use crate::meta::Meta;
        use crate::protocol::{self, Called, Exports, error_line};
        use crate::sandbox::{Sandbox, ServiceError};
        use seams_templates::Rendered;

        use generated::Generator;
        pub(crate) use generated::GeneratorPre;
        use generated::exports::seams::generator::generator_api as api;
        use generated::seams::generator::types::Error as WitError;
        use generated::seams::generator::{log, model, templates, types};

        pub(crate) fn add_to_linker(linker: &mut Linker<Sandbox>) -> wasmtime::Result<()> {
            Generator::add_to_linker::<Sandbox, HasSelf<Sandbox>>(linker, |s| s)
        }

        fn error_message(e: WitError) -> String {
            match e {
                WitError::InvalidInput(m) => format!("invalid input: {}", error_line(&m)),
                WitError::Query(m) => format!("query: {}", error_line(&m)),
                WitError::Template(m) => format!("template: {}", error_line(&m)),
                WitError::Failed(m) => error_line(&m),
            }
        }

        fn wit_error(e: ServiceError) -> WitError {
            match e {
                ServiceError::Query(m) => WitError::Query(m),
                ServiceError::Template(m) => WitError::Template(m),
            }
        }

        impl Exports for Generator {
            fn meta(
                &self,
                store: &mut wasmtime::Store<Sandbox>,
            ) -> wasmtime::Result<Result<Meta, crate::meta::MetaError>> {
                let api = self.seams_generator_generator_api();
                Ok(meta_from_wit(api.call_meta(store)?))
            }

            fn extract(&self, store: &mut wasmtime::Store<Sandbox>) -> Called<String> {
                let api = self.seams_generator_generator_api();
                Ok(api.call_extract(store)?.map_err(error_message))
            }

            fn render(
                &self,
                store: &mut wasmtime::Store<Sandbox>,
                view: &str,
            ) -> Called<Vec<protocol::File>> {
                let api = self.seams_generator_generator_api();
                Ok(api
                    .call_render(store, view)?
                    .map_err(error_message)
                    .map(|files| {
                        files
                            .into_iter()
                            .map(|f| protocol::File {
                                path: f.path,
                                body: match f.body {
                                    templates::Body::Text(text) => protocol::Body::Text(text),
                                    templates::Body::Rendered(r) => protocol::Body::Rendered(r),
                                },
                            })
                            .collect()
                    }))
            }

            fn trace(
                &self,
                store: &mut wasmtime::Store<Sandbox>,
                view: &str,
            ) -> Called<Vec<protocol::FileTrace>> {
                let api = self.seams_generator_generator_api();
                Ok(api
                    .call_trace(store, view)?
                    .map_err(error_message)
                    .map(|traces| {
                        traces
                            .into_iter()
                            .map(|t| protocol::FileTrace {
                                path: t.path,
                                lines: t
                                    .lines
                                    .into_iter()
                                    .map(|l| protocol::TraceLine {
                                        line: l.line,
                                        templates: l.templates,
                                        terms: l.terms,
                                    })
                                    .collect(),
                            })
                            .collect()
                    }))
            }

            fn sources(
                &self,
                store: &mut wasmtime::Store<Sandbox>,
                view: &str,
            ) -> Called<Vec<protocol::FileSources>> {
                let api = self.seams_generator_generator_api();
                Ok(api
                    .call_sources(store, view)?
                    .map_err(error_message)
                    .map(|sources| {
                        sources
                            .into_iter()
                            .map(|s| protocol::FileSources {
                                path: s.path,
                                iris: s.iris,
                            })
                            .collect()
                    }))
            }
        }

        fn meta_from_wit(mut m: api::Metadata) -> Result<Meta, crate::meta::MetaError> {
            let vocabularies = vocabularies(&mut m);
            Meta::checked(
                m.name,
                m.version,
                m.description,
                match m.syntax {
                    api::Syntax::Jinja => seams_templates::Syntax::Jinja,
                    api::Syntax::Brackets => seams_templates::Syntax::Brackets,
                },
                m.templates.into_iter().map(|t| (t.name, t.source)).collect(),
                vocabularies,
            )
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
    };
}

pub(crate) use bindings_for_version;
