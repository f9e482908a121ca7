//! What can go wrong talking to a registry, in words that name the
//! reference or registry and say what to do.

use std::path::PathBuf;

use crate::ReferenceError;

/// Why a registry operation failed; names the reference or registry and
/// says what to do.
#[derive(Debug, thiserror::Error)]
pub enum RegistryError {
    /// The reference is malformed.
    #[error(transparent)]
    Reference(#[from] ReferenceError),
    /// The registry could not be reached.
    #[error(
        "cannot reach the registry {registry}: {reason}; check the address and that it runs (a pulled generator is found in the cache afterwards, offline)"
    )]
    Unreachable {
        /// The registry.
        registry: String,
        /// What the connection said.
        reason: String,
    },
    /// The registry took too long.
    #[error("the registry {registry} did not answer within {seconds} s; try again later")]
    Timeout {
        /// The registry.
        registry: String,
        /// The time allowed.
        seconds: u64,
    },
    /// No artifact under that reference.
    #[error("{reference} does not exist in the registry; check the name and the tag or digest")]
    NotFound {
        /// The reference.
        reference: String,
    },
    /// The registry wants credentials seams does not have, or refused them.
    #[error(
        "the registry {registry} refused access; log in with `docker login {registry}` (seams reads Docker's config) or set SEAMS_REGISTRY_HOST={registry}, SEAMS_REGISTRY_USERNAME and SEAMS_REGISTRY_PASSWORD"
    )]
    Unauthorized {
        /// The registry.
        registry: String,
    },
    /// Credentials could not be looked up.
    #[error("cannot get credentials for {registry}: {why}")]
    Credentials {
        /// The registry.
        registry: String,
        /// What failed.
        why: String,
    },
    /// Any other answer of the registry.
    #[error("the registry {registry} failed: {reason}")]
    Registry {
        /// The registry.
        registry: String,
        /// What it said, escaped and cut short.
        reason: String,
    },
    /// The artifact is not a Wasm component.
    #[error("{reference} is not a seams generator: {why}")]
    NotAComponent {
        /// The reference.
        reference: String,
        /// What it is instead.
        why: String,
    },
    /// Bytes did not have the digest they were asked for by.
    #[error(
        "{reference}: the {what} has digest {actual}, not {expected}; the registry served other bytes than the ones pinned, so nothing was used"
    )]
    Mismatch {
        /// The reference.
        reference: String,
        /// What was checked (`manifest`, `component`).
        what: &'static str,
        /// The digest asked for.
        expected: String,
        /// The digest of what came.
        actual: String,
    },
    /// A cached blob was changed after it was stored.
    #[error(
        "the cached blob {} does not match its digest ({actual}, not {expected}); something changed the cache: delete the file and generate again to pull it anew", path.display()
    )]
    Tampered {
        /// The file in the cache.
        path: PathBuf,
        /// Its digest, as named.
        expected: String,
        /// The digest of its bytes.
        actual: String,
    },
    /// The cache could not be read or written.
    #[error("cannot use the blob cache at {}: {source}", path.display())]
    Cache {
        /// The file or directory.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
}

impl RegistryError {
    /// The message without the reference it starts with, for a caller
    /// that names the reference already (a failing generator).
    pub fn reason(&self) -> String {
        let text = self.to_string();
        match self {
            RegistryError::NotFound { reference }
            | RegistryError::NotAComponent { reference, .. }
            | RegistryError::Mismatch { reference, .. } => text
                .strip_prefix(reference.as_str())
                .map(|rest| rest.trim_start_matches(':').trim_start().to_owned())
                .unwrap_or(text),
            _ => text,
        }
    }
}

/// The innermost cause of an error: what a connection failure is about
/// ("Connection refused"), not the URL around it.
pub(crate) fn root_cause(error: &(dyn std::error::Error + 'static)) -> String {
    let mut cause = error;
    while let Some(inner) = cause.source() {
        cause = inner;
    }
    cause.to_string()
}
