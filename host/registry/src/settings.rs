//! How seams talks to registries: the blob cache, plain HTTP for loopback
//! and named registries, credentials and timeouts.

use std::path::PathBuf;
use std::time::Duration;

use crate::Login;

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
