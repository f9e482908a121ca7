//! The registry client: fetching a generator by reference or pin (from the
//! blob cache when it holds it) and publishing one.

use std::collections::BTreeMap;
use std::time::Duration;

use oci_client::client::ClientConfig;
use oci_client::errors::OciDistributionError;
use oci_client::secrets::RegistryAuth;
use seams_model::input_text::escape_line;

use crate::artifact::{self, Layer, MANIFEST_MEDIA_TYPE, check, digest_of};
use crate::blobs::Blobs;
use crate::error::root_cause;
use crate::transport::{CONNECT_TIMEOUT, READ_TIMEOUT, protocol, scheme};
use crate::{Artifact, Reference, RegistryError, Settings, credentials, pull};

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
    crate::reference::is_sha256_digest(digest)
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
                &|host: &str| self.auth_for(host),
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
        self.auth_for(reference.registry())
    }

    /// The user's credentials for `host` (`host[:port]`).
    fn auth_for(&self, host: &str) -> Result<RegistryAuth, RegistryError> {
        credentials::auth(
            host,
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
