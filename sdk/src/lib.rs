//! Write [seams](https://example.org/seams) generators in Rust.
//!
//! A generator reads the project's RDF model through SPARQL, builds a *view
//! model* (JSON), and renders its own templates through the host's template
//! service. The host runs it as a sandboxed WebAssembly component; this crate
//! hides the component bindings behind one trait, [`Generator`], and one
//! macro, [`register_generator!`].
//!
//! # Example
//!
//! A complete generator: one page listing every labelled thing in the model.
//!
//! ```no_run
//! use seams_sdk::{File, Generator, Meta, Model, Result, Syntax, Template, Traced};
//! use serde::{Deserialize, Serialize};
//!
//! struct Things;
//!
//! /// One query row: a field per variable.
//! #[derive(Deserialize)]
//! struct Row {
//!     thing: String,
//!     label: String,
//! }
//!
//! /// The view model the template prints.
//! #[derive(Serialize, Deserialize)]
//! struct View {
//!     things: Vec<Traced<Thing>>,
//! }
//!
//! #[derive(Serialize, Deserialize)]
//! struct Thing {
//!     label: String,
//! }
//!
//! impl Generator for Things {
//!     type View = View;
//!
//!     fn meta() -> Meta {
//!         Meta::new("things", "0.1.0", "A page listing every labelled thing")
//!             .syntax(Syntax::Brackets)
//!             .template(Template::new(
//!                 "things.html",
//!                 "<ul>\n[% for t in things %]  <li>[[ t.label ]]</li>\n[% endfor %]</ul>\n",
//!             ))
//!     }
//!
//!     fn extract(model: &Model) -> Result<View> {
//!         let rows: Vec<Row> = model.select_as(
//!             "SELECT ?thing ?label WHERE { ?thing rdfs:label ?label } ORDER BY ?thing",
//!         )?;
//!         let things = rows
//!             .into_iter()
//!             .map(|r| Traced::new(r.thing, Thing { label: r.label }))
//!             .collect();
//!         Ok(View { things })
//!     }
//!
//!     fn render(view: &View) -> Result<Vec<File>> {
//!         Ok(vec![File::rendered("things.html", seams_sdk::render("things.html", view)?)])
//!     }
//! }
//!
//! seams_sdk::register_generator!(Things);
//! ```
//!
//! Build it with `cargo build --release --target wasm32-wasip2`; the `.wasm`
//! in `target/wasm32-wasip2/release/` is the component to name in a
//! project's `seams.toml`.
//!
//! # View objects and traces
//!
//! The host traces every file it renders: for each non-blank line, the
//! template lines that wrote it and the model IRIs behind it (the
//! `<output>.trace.json` sidecar). The IRIs come from *view objects*: a
//! JSON object with a string `iri` and optionally a sorted array `origins`
//! of further IRIs its extraction read. [`Traced`] wraps a typed view as
//! one; [`ViewObject`] builds one untyped.
//!
//! - A value read off a view object (`{{ field.label }}`) carries the
//!   object's `iri` and `origins`. A filter, call or operator
//!   (`{{ field.label|upper }}`) loses them: keep computation in extract.
//! - A line that prints no such value takes the IRIs of the innermost
//!   enclosing `for` loop or macro argument that is a view object, else of
//!   the view object the enclosing `include` saw in its loop, else of the
//!   render context itself when it is a view object.
//!
//! Files returned as plain text ([`File::text`]) are traced only by
//! [`Generator::trace`], which the host checks; otherwise their lock
//! sources come from [`Generator::sources`].

#![deny(missing_docs)]

mod decode;
mod error;
mod files;
mod meta;
mod model;
#[cfg(not(target_arch = "wasm32"))]
pub mod native;
mod row;
mod view;

pub use decode::{Date, Iri};
pub use error::{Error, Result};
pub use files::{Body, File, FileSources, FileTrace, Rendered, Shared, TraceLine, render};
pub use meta::{Meta, Syntax, Template, Vocabulary};
pub use model::Model;
pub use row::{Row, Term, TermKind};
pub use view::{Traced, ViewObject};

/// Messages to the user, shown prefixed with the generator's name.
pub mod log {
    #[cfg(target_arch = "wasm32")]
    use crate::__internal::wit::seams::generator::log::{Level, write};

    /// Shows an informational message.
    pub fn info(message: &str) {
        #[cfg(target_arch = "wasm32")]
        write(Level::Info, message);
        #[cfg(not(target_arch = "wasm32"))]
        eprintln!("{message}");
    }

    /// Shows a warning.
    pub fn warn(message: &str) {
        #[cfg(target_arch = "wasm32")]
        write(Level::Warn, message);
        #[cfg(not(target_arch = "wasm32"))]
        eprintln!("warning: {message}");
    }
}

/// A generator: what [`register_generator!`] exports as a component.
///
/// Only [`meta`](Generator::meta), [`extract`](Generator::extract) and
/// [`render`](Generator::render) are required.
pub trait Generator {
    /// The view model: what [`extract`](Generator::extract) builds and the
    /// other calls get back. A struct deriving `Serialize` and
    /// `Deserialize`, its model elements as [`Traced`] values (or
    /// `serde_json::Value`, for a generator that builds it untyped). It
    /// must read back from its JSON as the value it was written from: the
    /// other calls get the value `extract` built when the host hands back
    /// the text it wrote, and that text read back otherwise.
    type View: serde::Serialize + serde::de::DeserializeOwned;

    /// Who the generator is and which templates it ships.
    fn meta() -> Meta;

    /// Reads the model and builds the view model.
    fn extract(model: &Model) -> Result<Self::View>;

    /// Turns the view model into files.
    fn render(view: &Self::View) -> Result<Vec<File>>;

    /// Traces of files whose body is plain text. By default none: such
    /// files then get no sidecar, and their lock sources come from
    /// [`sources`](Generator::sources).
    fn trace(_view: &Self::View) -> Result<Vec<FileTrace>> {
        Ok(Vec::new())
    }

    /// Lock sources of files that have no trace. By default none.
    fn sources(_view: &Self::View) -> Result<Vec<FileSources>> {
        Ok(Vec::new())
    }
}

/// The templates a generator ships, read at build time by name from the
/// `templates/` directory beside the `src/` directory of the file that
/// invokes it (`src/lib.rs`), for [`Meta::templates`]:
///
/// ```ignore
/// Meta::new("pages", "0.1.0", "One page per ui:Page")
///     .templates(seams_sdk::templates!["layout.html", "page.html"])
/// ```
///
/// A name without its file is a build error, naming the path.
#[macro_export]
macro_rules! templates {
    ($($name:literal),* $(,)?) => {
        [$($crate::Template::new(
            $name,
            // Relative to the invoking file, as include_str! resolves.
            include_str!(concat!("../templates/", $name)),
        )),*]
    };
}

/// Exports a [`Generator`] as the component's implementation of the seams
/// protocol. Use it once, at the crate root of a `cdylib`.
#[macro_export]
macro_rules! register_generator {
    ($generator:ty) => {
        #[doc(hidden)]
        struct __SeamsExport;

        impl $crate::__internal::wit::exports::seams::generator::generator_api::Guest
            for __SeamsExport
        {
            fn meta() -> $crate::__internal::wit::exports::seams::generator::generator_api::Metadata {
                $crate::__internal::meta::<$generator>()
            }
            fn extract() -> ::core::result::Result<::std::string::String, $crate::__internal::WitError> {
                $crate::__internal::extract::<$generator>()
            }
            fn render(
                view: ::std::string::String,
            ) -> ::core::result::Result<
                ::std::vec::Vec<$crate::__internal::wit::seams::generator::templates::File>,
                $crate::__internal::WitError,
            > {
                $crate::__internal::render::<$generator>(view)
            }
            fn trace(
                view: ::std::string::String,
            ) -> ::core::result::Result<
                ::std::vec::Vec<$crate::__internal::wit::exports::seams::generator::generator_api::FileTrace>,
                $crate::__internal::WitError,
            > {
                $crate::__internal::trace::<$generator>(view)
            }
            fn sources(
                view: ::std::string::String,
            ) -> ::core::result::Result<
                ::std::vec::Vec<$crate::__internal::wit::exports::seams::generator::generator_api::FileSources>,
                $crate::__internal::WitError,
            > {
                $crate::__internal::sources::<$generator>(view)
            }
        }

        $crate::__internal::export_generator!(__SeamsExport with_types_in $crate::__internal::wit);
    };
}

/// Plumbing for [`register_generator!`]; not part of the stable API.
#[doc(hidden)]
pub mod __internal {
    /// The wit-bindgen output for `wit/since_v0.2.0`: the crate's own copy
    /// of the protocol, so that it builds as published (a test checks it
    /// equals the repository's `wit/`).
    #[allow(missing_docs, clippy::all)]
    pub mod wit {
        wit_bindgen::generate!({
            world: "generator",
            path: "wit/since_v0.2.0",
            pub_export_macro: true,
            export_macro_name: "export_generator",
            default_bindings_module: "seams_sdk::__internal::wit",
        });
    }

    pub use wit::export_generator;
    pub use wit::seams::generator::types::Error as WitError;

    use crate::{Error, Generator, Model};
    use wit::exports::seams::generator::generator_api as api;

    pub fn meta<G: Generator>() -> api::Metadata {
        G::meta().into_wit()
    }

    pub fn extract<G: Generator>() -> Result<String, WitError>
    where
        G::View: 'static,
    {
        let view = G::extract(&Model::new()).map_err(Error::into_wit)?;
        let text =
            serde_json::to_string(&view).map_err(|e| Error::Failed(e.to_string()).into_wit())?;
        // The host hands this text back to render: the view it was
        // written from serves then, not read back (at ten copies of the
        // expense example, 112 KB of JSON in the guest).
        READ_BACK.set(Some(ReadBack {
            text: text.clone(),
            view: Box::new(view),
        }));
        Ok(text)
    }

    /// The view model [`extract`] wrote, read back as the generator's type.
    fn parse_view<G: Generator>(view: &str) -> Result<G::View, WitError> {
        serde_json::from_str(view).map_err(|e| {
            Error::InvalidInput(format!(
                "view model does not fit the generator's view type: {e}"
            ))
            .into_wit()
        })
    }

    /// The view last read back, and the text it was read from.
    struct ReadBack {
        text: String,
        view: Box<dyn std::any::Any>,
    }

    std::thread_local! {
        /// The host hands `render`, `trace` and `sources` the view text
        /// `extract` wrote, one after the other; reading a large view back
        /// (and freeing it) is most of what `trace` and `sources` cost
        /// when they have nothing to say, so the view `extract` built (or
        /// one reading) serves every call given the same text. A view
        /// type reads back to what it wrote (see [`Generator::View`]).
        static READ_BACK: std::cell::RefCell<Option<ReadBack>> =
            const { std::cell::RefCell::new(None) };
    }

    /// Calls `call` with the view `text` reads back to.
    fn with_view<G: Generator, T>(
        text: String,
        call: impl FnOnce(&G::View) -> crate::Result<T>,
    ) -> Result<T, WitError>
    where
        G::View: 'static,
    {
        let kept = READ_BACK.take().filter(|kept| kept.text == text);
        let (text, view) = match kept.map(|kept| (kept.text, kept.view.downcast::<G::View>())) {
            Some((text, Ok(view))) => (text, view),
            _ => {
                let view = Box::new(parse_view::<G>(&text)?);
                (text, view)
            }
        };
        let result = call(&view).map_err(Error::into_wit);
        READ_BACK.set(Some(ReadBack { text, view }));
        result
    }

    pub fn render<G: Generator>(
        view: String,
    ) -> Result<Vec<wit::seams::generator::templates::File>, WitError>
    where
        G::View: 'static,
    {
        let files = with_view::<G, _>(view, G::render)?;
        Ok(files.into_iter().map(crate::File::into_wit).collect())
    }

    pub fn trace<G: Generator>(view: String) -> Result<Vec<api::FileTrace>, WitError>
    where
        G::View: 'static,
    {
        let traces = with_view::<G, _>(view, G::trace)?;
        Ok(traces.into_iter().map(crate::FileTrace::into_wit).collect())
    }

    pub fn sources<G: Generator>(view: String) -> Result<Vec<api::FileSources>, WitError>
    where
        G::View: 'static,
    {
        let sources = with_view::<G, _>(view, G::sources)?;
        Ok(sources
            .into_iter()
            .map(crate::FileSources::into_wit)
            .collect())
    }

    #[cfg(test)]
    mod tests {
        use super::*;
        use crate::{File, Meta};
        use std::sync::atomic::{AtomicUsize, Ordering};

        /// How many times a [`Counted`] view was read back.
        static READS: AtomicUsize = AtomicUsize::new(0);

        #[derive(serde::Serialize)]
        struct Counted(String);

        impl<'de> serde::Deserialize<'de> for Counted {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                READS.fetch_add(1, Ordering::Relaxed);
                String::deserialize(d).map(Counted)
            }
        }

        struct First;
        struct Second;

        impl Generator for First {
            type View = Counted;
            fn meta() -> Meta {
                Meta::new("first", "0.1.0", "test")
            }
            fn extract(_: &Model) -> crate::Result<Counted> {
                Ok(Counted(String::new()))
            }
            fn render(_: &Counted) -> crate::Result<Vec<File>> {
                Ok(Vec::new())
            }
        }

        impl Generator for Second {
            type View = String;
            fn meta() -> Meta {
                Meta::new("second", "0.1.0", "test")
            }
            fn extract(_: &Model) -> crate::Result<String> {
                Ok(String::new())
            }
            fn render(_: &String) -> crate::Result<Vec<File>> {
                Ok(Vec::new())
            }
        }

        fn seen(text: &str) -> String {
            with_view::<First, _>(text.to_owned(), |view| Ok(view.0.clone())).unwrap()
        }

        #[test]
        fn one_view_serves_every_call_given_the_same_text() {
            let reads = || READS.load(Ordering::Relaxed);
            // The view extract built serves the calls given the text it
            // wrote: nothing is read back.
            let written = extract::<First>().unwrap();
            assert_eq!(written, r#""""#);
            assert_eq!(seen(&written), "");
            assert_eq!(reads(), 0);
            assert_eq!(seen(r#""a""#), "a");
            assert_eq!(reads(), 1);
            // render, trace and sources of one run: read once.
            assert_eq!(seen(r#""a""#), "a");
            assert_eq!(seen(r#""a""#), "a");
            assert_eq!(reads(), 1);
            // Other text is read anew, and kept in its place.
            assert_eq!(seen(r#""b""#), "b");
            assert_eq!(reads(), 2);
            assert_eq!(seen(r#""b""#), "b");
            assert_eq!(reads(), 2);
            // The same text for a generator of another view type is read
            // as that type; back to the first, it is read again.
            let other = with_view::<Second, _>(r#""b""#.to_owned(), |view| Ok(view.len()));
            assert_eq!(other.unwrap(), 1);
            assert_eq!(seen(r#""b""#), "b");
            assert_eq!(reads(), 3);
            // A call's own failure is its answer; the view stays read.
            let failed =
                with_view::<First, ()>(r#""b""#.to_owned(), |_| Err(Error::Failed("no".into())));
            assert!(failed.is_err());
            assert_eq!(seen(r#""b""#), "b");
            assert_eq!(reads(), 3);
            // Text that does not read back is refused.
            let refused = with_view::<First, ()>("[1]".to_owned(), |_| Ok(()));
            let Err(error) = refused else {
                panic!("a view that does not fit was accepted")
            };
            assert!(format!("{error:?}").contains("does not fit"), "{error:?}");
        }
    }
}
