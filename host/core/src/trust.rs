//! The user's trust in a project's settings: what in `seams.toml` runs a
//! command or spends a secret (`[propose]` provider, base_url, key_env) is
//! used only when the user said so with `seams trust`, in the spirit of
//! `direnv allow`. The record is kept outside every project, in the
//! user's state directory, named by the project's directory and the exact
//! settings trusted: a changed setting (a `git pull` that swaps the
//! provider) is untrusted again.

use std::io::Write;
use std::path::{Path, PathBuf};

use serde::Serialize;
use sha2::{Digest, Sha256};

use crate::project::{Project, Propose};
use crate::seal::state_dir;

/// The settings of `[propose]` that carry authority: a command to run, a
/// host to send a key to, and which key.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Authority {
    /// A provider command or API.
    pub provider: Option<String>,
    /// An API's base URL.
    pub base_url: Option<String>,
    /// The environment variable holding an API key.
    pub key_env: Option<String>,
}

impl Authority {
    /// The authority `propose` sets.
    pub fn of(propose: &Propose) -> Authority {
        Authority {
            provider: propose.provider.clone(),
            base_url: propose.base_url.clone(),
            key_env: propose.key_env.clone(),
        }
    }

    /// Whether it sets nothing.
    pub fn is_empty(&self) -> bool {
        *self == Authority::default()
    }

    /// The keys it sets, as `seams.toml` names them.
    pub fn keys(&self) -> Vec<&'static str> {
        [
            ("provider", self.provider.is_some()),
            ("base_url", self.base_url.is_some()),
            ("key_env", self.key_env.is_some()),
        ]
        .into_iter()
        .filter_map(|(key, set)| set.then_some(key))
        .collect()
    }
}

/// Why trust could not be read or recorded.
#[derive(Debug, thiserror::Error)]
pub enum TrustError {
    /// No state directory to keep the record in.
    #[error("no state directory to keep trust records in (set HOME or SEAMS_STATE_DIR)")]
    NoStateDir,
    /// The record could not be read or written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
}

/// Where the record of `project`'s current settings is, if there is a
/// state directory: named by the project's canonical directory and the
/// settings, so that neither another project nor changed settings match.
fn record_path(project: &Project, authority: &Authority) -> Result<PathBuf, TrustError> {
    let dir = state_dir().ok_or(TrustError::NoStateDir)?.join("trust");
    let root = project
        .root
        .canonicalize()
        .map_err(|source| TrustError::Io {
            path: project.root.clone(),
            source,
        })?;
    let mut hash = Sha256::new();
    hash.update(b"seams trust 1\0");
    hash.update(root.as_os_str().as_encoded_bytes());
    hash.update(b"\0");
    hash.update(serde_json::to_vec(authority).expect("settings serialize"));
    Ok(dir.join(seams_model::hex(&hash.finalize())))
}

/// Whether the user trusted `project`'s current `[propose]` authority
/// with `seams trust`. A record in a state directory that is not private
/// does not count.
///
/// # Errors
///
/// No state directory, or the project directory cannot be resolved.
pub fn trusted(project: &Project) -> Result<bool, TrustError> {
    let authority = Authority::of(&project.propose);
    let path = record_path(project, &authority)?;
    let Some(dir) = path.parent() else {
        return Ok(false);
    };
    let private = |p: &Path| {
        std::fs::symlink_metadata(p).is_ok_and(|m| !m.is_symlink() && seams_runtime::private(&m))
    };
    Ok(private(dir) && private(&path))
}

/// What `seams trust` did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrustReport {
    /// The settings now trusted (or no longer, with `revoke`).
    pub authority: Authority,
    /// The record written or removed.
    pub record: PathBuf,
}

/// Records (or, with `revoke`, removes) the user's trust in `project`'s
/// current `[propose]` authority.
///
/// # Errors
///
/// No state directory, or the record cannot be written.
pub fn trust(project: &Project, revoke: bool) -> Result<TrustReport, TrustError> {
    let authority = Authority::of(&project.propose);
    let record = record_path(project, &authority)?;
    let io = |path: &Path| {
        let path = path.to_owned();
        move |source| TrustError::Io { path, source }
    };
    if revoke {
        match std::fs::remove_file(&record) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(io(&record)(e)),
        }
    } else {
        let dir = record.parent().expect("a record has a directory");
        if seams_runtime::private_dir(dir).is_none() {
            return Err(io(dir)(std::io::Error::other(
                "not a private directory (yours, writable by nobody else); fix its owner and mode (chmod 700)",
            )));
        }
        let mut file = tempfile::Builder::new()
            .permissions(std::os::unix::fs::PermissionsExt::from_mode(0o600))
            .tempfile_in(dir)
            .map_err(io(dir))?;
        let text = format!(
            "{}\n{}\n",
            project.root.display(),
            serde_json::to_string(&authority).expect("settings serialize")
        );
        file.write_all(text.as_bytes()).map_err(io(&record))?;
        file.persist(&record).map_err(|e| io(&record)(e.error))?;
    }
    Ok(TrustReport { authority, record })
}
