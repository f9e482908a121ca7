//! The journal's seal: a journal is replayed only when this machine's
//! seams wrote it. A journal may rewrite a model file and vouches for
//! output bytes, so one committed to a repository (or copied into a
//! project) would hand its author a write into the clone; each journal
//! therefore carries a keyed blake3 hash of its content under a secret
//! kept outside every project, in the user's state directory, and one
//! whose seal does not match is refused before anything in it is used.

use std::io::{Read, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

/// The key file's name in the state directory.
const KEY_FILE: &str = "journal.key";

/// The secret journals are sealed with: 32 random bytes, made once per
/// user and machine.
#[derive(Clone)]
pub(crate) struct SealKey {
    key: [u8; 32],
    /// Where it is kept, for messages.
    path: PathBuf,
}

impl std::fmt::Debug for SealKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SealKey").field("path", &self.path).finish()
    }
}

/// Why the key could not be had.
#[derive(Debug, thiserror::Error)]
#[error("the journal key {}: {message}", path.display())]
pub struct SealKeyError {
    path: PathBuf,
    message: String,
}

/// seams's state directory: `$SEAMS_STATE_DIR`, else the user's state
/// directory's `seams` (`$XDG_STATE_HOME/seams`, `~/.local/state/seams`).
pub(crate) fn state_dir() -> Option<PathBuf> {
    match std::env::var_os("SEAMS_STATE_DIR") {
        Some(dir) if !dir.is_empty() => Some(PathBuf::from(dir)),
        _ => dirs::state_dir()
            .or_else(|| dirs::home_dir().map(|h| h.join(".local").join("state")))
            .map(|d| d.join("seams")),
    }
}

impl SealKey {
    /// This user's key, made (private, atomically) when there is none.
    ///
    /// # Errors
    ///
    /// No state directory, one that is not private (owned by this user,
    /// writable by nobody else), or a key file that is not a private
    /// regular file of 32 bytes.
    pub(crate) fn for_user() -> Result<SealKey, SealKeyError> {
        let Some(dir) = state_dir() else {
            return Err(SealKeyError {
                path: PathBuf::from(KEY_FILE),
                message: "no state directory (set HOME or SEAMS_STATE_DIR)".into(),
            });
        };
        SealKey::in_dir(&dir)
    }

    /// The key kept in `dir`, made there when missing.
    pub(crate) fn in_dir(dir: &Path) -> Result<SealKey, SealKeyError> {
        let path = dir.join(KEY_FILE);
        let error = |message: String| SealKeyError {
            path: path.clone(),
            message,
        };
        if seams_runtime::private_dir(dir).is_none() {
            return Err(error(format!(
                "its directory {} cannot be made, or is not private (a directory of yours that nobody else may write); fix its owner and mode (chmod 700)",
                dir.display()
            )));
        }
        match read_key(&path) {
            Ok(key) => return Ok(SealKey { key, path }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(error(e.to_string())),
        }
        let mut key = [0u8; 32];
        getrandom::fill(&mut key).map_err(|e| error(format!("no randomness: {e}")))?;
        // A private temporary, linked into place only if no other run made
        // one meanwhile: then that one is the key.
        let mut file = tempfile::Builder::new()
            .permissions(std::os::unix::fs::PermissionsExt::from_mode(0o600))
            .tempfile_in(dir)
            .map_err(|e| error(e.to_string()))?;
        file.write_all(&key)
            .and_then(|()| file.as_file().sync_all())
            .map_err(|e| error(e.to_string()))?;
        match file.persist_noclobber(&path) {
            Ok(_) => Ok(SealKey { key, path }),
            Err(e) if e.error.kind() == std::io::ErrorKind::AlreadyExists => {
                let key = read_key(&path).map_err(|e| error(e.to_string()))?;
                Ok(SealKey { key, path })
            }
            Err(e) => Err(error(e.error.to_string())),
        }
    }

    /// The seal of `content`: hex of its keyed blake3 hash.
    pub(crate) fn seal(&self, content: &str) -> String {
        blake3::keyed_hash(&self.key, content.as_bytes())
            .to_hex()
            .to_string()
    }

    /// Whether `seal` is this key's seal of `content` (compared in constant
    /// time).
    pub(crate) fn verifies(&self, content: &str, seal: &str) -> bool {
        blake3::Hash::from_hex(seal)
            .is_ok_and(|given| given == blake3::keyed_hash(&self.key, content.as_bytes()))
    }

    /// Where the key is kept.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }
}

/// The key at `path`: a private regular file (not a link) of 32 bytes.
fn read_key(path: &Path) -> std::io::Result<[u8; 32]> {
    let mut file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags((rustix::fs::OFlags::NOFOLLOW | rustix::fs::OFlags::NONBLOCK).bits() as i32)
        .open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() || !seams_runtime::private(&meta) || meta.len() != 32 {
        return Err(std::io::Error::other(
            "not a private regular file of 32 bytes that seams made; remove it (seams makes a new one, and refuses the journals the old one sealed)",
        ));
    }
    let mut key = [0u8; 32];
    file.read_exact(&mut key)?;
    Ok(key)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn a_key_is_made_once_private_and_seals_only_what_it_sealed() {
        let dir = tempfile::tempdir().unwrap();
        let state = dir.path().join("state");
        let key = SealKey::in_dir(&state).unwrap();
        let again = SealKey::in_dir(&state).unwrap();
        assert_eq!(key.key, again.key);
        let meta = std::fs::metadata(state.join(KEY_FILE)).unwrap();
        assert_eq!(meta.permissions().mode() & 0o777, 0o600);
        let seal = key.seal("journal");
        assert!(again.verifies("journal", &seal));
        assert!(!again.verifies("journal ", &seal));
        assert!(!again.verifies("journal", "00"));
        assert!(!again.verifies("journal", &"0".repeat(64)));
        // Another machine's (or user's) key does not verify it.
        let other = SealKey::in_dir(&dir.path().join("other")).unwrap();
        assert!(!other.verifies("journal", &seal));
    }

    #[test]
    fn a_key_anyone_could_have_written_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let state = dir.path().join("state");
        SealKey::in_dir(&state).unwrap();
        let file = state.join(KEY_FILE);
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o666)).unwrap();
        assert!(SealKey::in_dir(&state).is_err());
        std::fs::remove_file(&file).unwrap();
        std::os::unix::fs::symlink(dir.path().join("elsewhere"), &file).unwrap();
        std::fs::write(dir.path().join("elsewhere"), [7u8; 32]).unwrap();
        assert!(SealKey::in_dir(&state).is_err());
        std::fs::remove_file(&file).unwrap();
        std::fs::set_permissions(&state, std::fs::Permissions::from_mode(0o777)).unwrap();
        let error = SealKey::in_dir(&state).unwrap_err().to_string();
        assert!(error.contains("not private"), "{error}");
    }
}
