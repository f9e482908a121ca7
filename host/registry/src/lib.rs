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
mod pull;
mod reference;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use oci_client::client::{ClientConfig, ClientProtocol};
use oci_client::errors::OciDistributionError;
use oci_client::secrets::RegistryAuth;
use seams_model::input_text::escape_line;

pub use artifact::{
    Artifact, CONFIG_MEDIA_TYPE, LAYER_MEDIA_TYPE, MANIFEST_MEDIA_TYPE, PROTOCOL_ANNOTATION,
    digest_of,
};
pub use credentials::Login;
pub use reference::{Reference, ReferenceError};

use artifact::{Layer, check};

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
use blobs::Blobs;

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

/// Where the blob cache is, which registries may be spoken to over plain
/// HTTP, which credentials to use, and how long to wait.
#[derive(Debug, Clone)]
pub struct Settings {
    /// The blob cache directory.
    pub cache: PathBuf,
    /// Registries (host and port) spoken to over plain HTTP although not
    /// on a loopback address. Loopback registries always are.
    pub insecure: Vec<String>,
    /// A login for one registry.
    pub login: Option<Login>,
    /// Whether to look in Docker's config file for credentials.
    pub docker_config: bool,
    /// The most a whole pull or push may take.
    pub timeout: Duration,
}

impl Settings {
    /// Settings with the cache in `cache`, no insecure registries, no
    /// login, Docker's config and a two-minute timeout.
    pub fn new(cache: PathBuf) -> Settings {
        Settings {
            cache,
            insecure: Vec::new(),
            login: None,
            docker_config: true,
            timeout: Duration::from_secs(120),
        }
    }

    /// [`Settings::new`] as the environment adjusts it:
    /// `SEAMS_INSECURE_REGISTRIES` (comma-separated hosts) and a
    /// [`Login`].
    pub fn from_env(cache: PathBuf) -> Settings {
        Settings {
            insecure: std::env::var("SEAMS_INSECURE_REGISTRIES")
                .unwrap_or_default()
                .split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
                .collect(),
            login: Login::from_env(),
            ..Settings::new(cache)
        }
    }
}

/// What pins a pulled generator: its manifest and its component layer,
/// each as `sha256:HEX`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pin {
    /// The manifest's digest.
    pub manifest: String,
    /// The component layer's digest.
    pub layer: String,
}

/// Whether `digest` is `sha256:` and 64 lowercase hex digits, the only
/// digests seams pins.
pub fn is_digest(digest: &str) -> bool {
    reference::is_sha256_digest(digest)
}

/// A component as pulled (or found in the cache).
#[derive(Debug, Clone)]
pub struct Fetched {
    /// The component's bytes, checked against `pin.layer`.
    pub component: Vec<u8>,
    /// Its digests.
    pub pin: Pin,
    /// The manifest's annotations.
    pub annotations: BTreeMap<String, String>,
    /// Whether the network was used.
    pub pulled: bool,
}

/// A registry client with its blob cache.
#[derive(Debug, Clone)]
pub struct Registry {
    settings: Settings,
    blobs: Blobs,
}

impl Registry {
    /// A client with `settings`.
    pub fn new(settings: Settings) -> Registry {
        let blobs = Blobs::new(&settings.cache);
        Registry { settings, blobs }
    }

    /// The most a whole pull or push may take.
    pub fn timeout(&self) -> Duration {
        self.settings.timeout
    }

    /// The component `reference` names. With a `pin` (from the lock), the
    /// pinned digests are used whatever the tag points at now, and the
    /// cache answers without the network when it has both blobs; without
    /// one, a tag is resolved at the registry.
    ///
    /// # Errors
    ///
    /// The registry cannot be reached or refuses, the artifact does not
    /// exist or is not a Wasm component, a digest does not match, or the
    /// cache was tampered with.
    pub fn fetch(
        &self,
        reference: &Reference,
        pin: Option<&Pin>,
    ) -> Result<Fetched, RegistryError> {
        let wanted = pin
            .map(|p| p.manifest.clone())
            .or_else(|| reference.digest().map(str::to_owned));
        if let Some(digest) = &wanted
            && let Some(manifest) = self.blobs.get(digest)?
        {
            let (layer, annotations) = self.layer_of(reference, &manifest, pin)?;
            if let Some(component) = self.blobs.get(&layer.digest)? {
                return Ok(Fetched {
                    component,
                    pin: Pin {
                        manifest: digest.clone(),
                        layer: layer.digest,
                    },
                    annotations,
                    pulled: false,
                });
            }
        }
        self.block_on(reference, async {
            let auth = self.auth(reference)?;
            let target = match &wanted {
                Some(digest) => reference.at(digest),
                None => reference.oci().clone(),
            };
            let http = self.http(reference)?;
            let session = pull::Session::open(
                &http,
                scheme(reference, &self.settings.insecure),
                reference,
                &target,
                &auth,
            )
            .await?;
            let at = target.digest().or(target.tag()).unwrap_or("latest");
            let manifest = session.manifest(at, MANIFEST_MEDIA_TYPE).await?;
            let manifest_digest = digest_of(&manifest);
            if let Some(expected) = &wanted
                && *expected != manifest_digest
            {
                return Err(RegistryError::Mismatch {
                    reference: reference.to_string(),
                    what: "manifest",
                    expected: expected.clone(),
                    actual: manifest_digest,
                });
            }
            let (layer, annotations) = self.layer_of(reference, &manifest, pin)?;
            let component = match self.blobs.get(&layer.digest)? {
                Some(component) => component,
                None => session.blob(&layer).await?,
            };
            self.blobs.put(&layer.digest, &component)?;
            self.blobs.put(&manifest_digest, &manifest)?;
            Ok(Fetched {
                component,
                pin: Pin {
                    manifest: manifest_digest,
                    layer: layer.digest,
                },
                annotations,
                pulled: true,
            })
        })
    }

    /// Pushes `artifact` under `reference` (a tag) and gives its digests.
    ///
    /// # Errors
    ///
    /// The registry cannot be reached or refuses.
    pub fn publish(
        &self,
        reference: &Reference,
        artifact: &Artifact,
    ) -> Result<Pin, RegistryError> {
        let (config, manifest) = artifact::build(artifact);
        let body = serde_json::to_vec(&manifest).expect("a manifest serializes");
        let pin = Pin {
            manifest: digest_of(&body),
            layer: manifest.layers[0].digest.clone(),
        };
        self.block_on(reference, async {
            let client = self.client(reference);
            let auth = self.auth(reference)?;
            let fail = |e| self.error(reference, e);
            client
                .auth(reference.oci(), &auth, oci_client::RegistryOperation::Push)
                .await
                .map_err(fail)?;
            client
                .push_blob(reference.oci(), artifact.component.clone(), &pin.layer)
                .await
                .map_err(fail)?;
            client
                .push_blob(reference.oci(), config, &manifest.config.digest)
                .await
                .map_err(fail)?;
            client
                .push_manifest_raw(
                    reference.oci(),
                    body,
                    MANIFEST_MEDIA_TYPE.parse().expect("a valid header value"),
                )
                .await
                .map_err(fail)?;
            Ok(())
        })?;
        Ok(pin)
    }

    fn layer_of(
        &self,
        reference: &Reference,
        manifest: &[u8],
        pin: Option<&Pin>,
    ) -> Result<(Layer, BTreeMap<String, String>), RegistryError> {
        let (layer, annotations) = check(manifest).map_err(|why| RegistryError::NotAComponent {
            reference: reference.to_string(),
            why,
        })?;
        if let Some(pin) = pin
            && pin.layer != layer.digest
        {
            return Err(RegistryError::Mismatch {
                reference: reference.to_string(),
                what: "component layer",
                expected: pin.layer.clone(),
                actual: layer.digest,
            });
        }
        Ok((layer, annotations))
    }

    fn client(&self, reference: &Reference) -> oci_client::Client {
        oci_client::Client::new(ClientConfig {
            protocol: protocol(reference, &self.settings.insecure),
            connect_timeout: Some(CONNECT_TIMEOUT),
            read_timeout: Some(READ_TIMEOUT),
            // An index is not a component: it is refused, never resolved.
            platform_resolver: None,
            ..ClientConfig::default()
        })
    }

    /// The HTTP client for what seams reads itself (a manifest), set up
    /// as [`Registry::client`] sets up oci-client's.
    fn http(&self, reference: &Reference) -> Result<reqwest::Client, RegistryError> {
        reqwest::Client::builder()
            .connect_timeout(CONNECT_TIMEOUT)
            .read_timeout(READ_TIMEOUT)
            .build()
            .map_err(|e| RegistryError::Registry {
                registry: reference.registry().to_owned(),
                reason: format!("cannot start an HTTP client: {}", root_cause(&e)),
            })
    }

    fn auth(&self, reference: &Reference) -> Result<RegistryAuth, RegistryError> {
        credentials::auth(
            reference.registry(),
            self.settings.login.as_ref(),
            self.settings.docker_config,
        )
    }

    /// Runs `work` on a runtime of its own, within the timeout.
    fn block_on<T>(
        &self,
        reference: &Reference,
        work: impl Future<Output = Result<T, RegistryError>>,
    ) -> Result<T, RegistryError> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| RegistryError::Registry {
                registry: reference.registry().to_owned(),
                reason: format!("cannot start the network runtime: {e}"),
            })?;
        let timeout = self.settings.timeout;
        runtime.block_on(async {
            tokio::time::timeout(timeout, work)
                .await
                .unwrap_or_else(|_| {
                    Err(RegistryError::Timeout {
                        registry: reference.registry().to_owned(),
                        seconds: timeout.as_secs(),
                    })
                })
        })
    }

    /// What an oci-client error means for the user.
    fn error(&self, reference: &Reference, error: OciDistributionError) -> RegistryError {
        let registry = reference.registry().to_owned();
        let said = |text: String| escape_line(&text, 300).into_owned();
        match error {
            OciDistributionError::AuthenticationFailure(_)
            | OciDistributionError::UnauthorizedError { .. } => {
                RegistryError::Unauthorized { registry }
            }
            OciDistributionError::ImageManifestNotFoundError(_) => RegistryError::NotFound {
                reference: reference.to_string(),
            },
            OciDistributionError::RegistryError { envelope, .. } => {
                pull::refused(reference, None, &envelope.errors, &envelope.to_string())
            }
            OciDistributionError::ServerError { code, message, .. } => {
                pull::refused(reference, Some(code), &[], &message)
            }
            OciDistributionError::RequestError(e) if e.is_connect() || e.is_timeout() => {
                RegistryError::Unreachable {
                    registry,
                    reason: said(root_cause(&e)),
                }
            }
            OciDistributionError::UnsupportedMediaTypeError(media_type) => {
                RegistryError::NotAComponent {
                    reference: reference.to_string(),
                    why: said(format!("its manifest has media type {media_type}")),
                }
            }
            other => RegistryError::Registry {
                registry,
                reason: said(root_cause(&other)),
            },
        }
    }
}

/// How long a connection may take to open, and a read to bring bytes.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
const READ_TIMEOUT: Duration = Duration::from_secs(30);

/// The URL scheme [`protocol`] chooses.
fn scheme(reference: &Reference, insecure: &[String]) -> &'static str {
    match protocol(reference, insecure) {
        ClientProtocol::Http => "http",
        _ => "https",
    }
}

/// Plain HTTP for a registry on a loopback address (as Docker does) or one
/// the user names as insecure; HTTPS for every other.
fn protocol(reference: &Reference, insecure: &[String]) -> ClientProtocol {
    if reference.is_loopback() || insecure.iter().any(|r| r == reference.registry()) {
        ClientProtocol::Http
    } else {
        ClientProtocol::Https
    }
}

/// The innermost cause of an error: what a connection failure is about
/// ("Connection refused"), not the URL around it.
fn root_cause(error: &(dyn std::error::Error + 'static)) -> String {
    let mut cause = error;
    while let Some(inner) = cause.source() {
        cause = inner;
    }
    cause.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_loopback_and_named_registries_go_without_tls() {
        let insecure = vec!["registry.lan:5000".to_owned()];
        for (reference, expected) in [
            ("127.0.0.1:5000/a:1", ClientProtocol::Http),
            ("localhost:5000/a:1", ClientProtocol::Http),
            ("registry.lan:5000/a:1", ClientProtocol::Http),
            ("registry.lan/a:1", ClientProtocol::Https),
            ("ghcr.io/a/b:1", ClientProtocol::Https),
            ("10.0.0.1:5000/a:1", ClientProtocol::Https),
        ] {
            let reference: Reference = reference.parse().unwrap();
            assert_eq!(protocol(&reference, &insecure), expected, "{reference}");
        }
    }
}
