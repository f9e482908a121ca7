//! Generators as Wasm OCI artifacts: published to a registry by digest,
//! pulled once into a blob cache checked by digest on every read, and
//! found there afterwards without the network.
//!
//! A registry is untrusted: a manifest is cut off past 1 MiB and a
//! component past 128 MiB as the bytes arrive, the whole exchange is
//! bounded in time, every byte is checked against its digest, and what a
//! registry says is escaped before it reaches an error message.

mod artifact;
mod blobs;
mod credentials;
mod error;
mod pull;
mod reference;
mod registry;
mod settings;
mod transport;

pub use artifact::{
    Artifact, CONFIG_MEDIA_TYPE, LAYER_MEDIA_TYPE, MANIFEST_MEDIA_TYPE, PROTOCOL_ANNOTATION,
    digest_of,
};
pub use credentials::Login;
pub use error::RegistryError;
pub use reference::{Reference, ReferenceError};
pub use registry::{Fetched, Pin, Registry, is_digest};
pub use settings::Settings;

/// The reader of untrusted manifests, for the fuzz targets (`fuzz/`):
/// built only under cargo-fuzz's `--cfg fuzzing`.
#[cfg(fuzzing)]
#[doc(hidden)]
pub mod fuzzing {
    /// Reads a manifest's bytes as a pull does.
    pub fn manifest(bytes: &[u8]) -> bool {
        crate::artifact::check(bytes).is_ok()
    }
}
