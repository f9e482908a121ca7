//! The model of a seams project: RDF files (Turtle, TriG, N-Triples,
//! N-Quads) loaded into an in-memory oxigraph store, with
//!
//! - a hash that depends only on the graph (canonical N-Quads, RDFC-1.0
//!   labels for blank nodes), not on file layout, prefixes or order;
//! - labels (`IRI<TAB>label` lines, what a draft prompt shows);
//! - read-only SPARQL (SELECT, ASK, CONSTRUCT) bounded by a deadline,
//!   answered as SPARQL 1.1 JSON results.
//!
//! ```
//! let model = seams_model::Model::parse(
//!     "model.ttl",
//!     "<urn:a> <http://www.w3.org/2000/01/rdf-schema#label> \"A\" .",
//! )?;
//! assert_eq!(model.label("urn:a"), Some("A"));
//! # Ok::<(), seams_model::ModelError>(())
//! ```
//!
//! [`input_text`] is how every text file a user hands seams is decoded and
//! echoed in messages (the model files here, `seams.toml` and the lock in
//! `seams-core`).

#![deny(missing_docs)]

mod answer;
mod cores;
mod edit;
mod elements;
mod finding;
pub mod input_file;
pub mod input_text;
mod model;
pub mod position;
pub mod query_shape;
mod shapes;
pub mod ui_shapes;
pub mod vocabulary;
mod watchdog;
pub mod written;

pub use cores::{WORTH_A_THREAD_BYTES, beside, cores};
pub use edit::Edit;
pub use finding::Finding;
pub use model::{
    MODEL_SUFFIXES, Model, ModelError, QueryError, hex, is_iri, sha256_hex, sha256_hex_of,
};
pub use vocabulary::{Vocabulary, VocabularyError, is_namespace};
