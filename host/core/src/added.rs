//! The digests `seams add` resolved a generator to, kept in the project's
//! `.seams/added.json` until a generate pins them in the lock: so that the
//! generate after an add takes the component `add` checked, from the blob
//! cache, with the registry down. `generate --update` resolves the tag
//! again, as it does for a locked one.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::lock::LockedOci;

/// The record, in the project's `.seams` directory.
const ADDED: &str = ".seams/added.json";

/// The most bytes of the record read: a few digests per generator.
const MAX_BYTES: u64 = 1 << 20;

fn path(root: &Path) -> PathBuf {
    root.join(ADDED)
}

fn read(root: &Path) -> BTreeMap<String, LockedOci> {
    let Ok(bytes) = crate::project_file::read(&path(root), MAX_BYTES) else {
        return BTreeMap::new();
    };
    serde_json::from_slice(&bytes).unwrap_or_default()
}

/// The digests `seams add` recorded for the generator `label` in the
/// project at `root`; a missing, unreadable or malformed record is none.
pub(crate) fn recorded(root: &Path, label: &str) -> Option<LockedOci> {
    let pin = read(root).remove(label)?;
    (seams_registry::is_digest(&pin.manifest_digest)
        && seams_registry::is_digest(&pin.layer_digest))
    .then_some(pin)
}

/// Records `pin` for the generator `label`, replacing the file whole.
///
/// # Errors
///
/// The record cannot be written.
pub(crate) fn record(root: &Path, label: &str, pin: LockedOci) -> std::io::Result<()> {
    let mut all = read(root);
    all.insert(label.to_owned(), pin);
    let dir = root.join(".seams");
    std::fs::create_dir_all(&dir)?;
    let mut text = serde_json::to_string_pretty(&all).map_err(std::io::Error::other)?;
    text.push('\n');
    let mut file = tempfile::NamedTempFile::new_in(&dir)?;
    std::io::Write::write_all(&mut file, text.as_bytes())?;
    file.as_file().sync_all()?;
    file.persist(path(root)).map_err(|e| e.error)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_recorded_pin_is_read_back_and_a_bad_record_is_none() {
        let dir = tempfile::tempdir().unwrap();
        let digest = |c: char| format!("sha256:{}", c.to_string().repeat(64));
        assert_eq!(recorded(dir.path(), "oci:x/y:1"), None);
        let pin = LockedOci {
            manifest_digest: digest('a'),
            layer_digest: digest('b'),
            signature_digest: None,
        };
        record(dir.path(), "oci:x/y:1", pin.clone()).unwrap();
        record(
            dir.path(),
            "oci:x/z:1",
            LockedOci {
                manifest_digest: "sha256:nothex".into(),
                ..pin.clone()
            },
        )
        .unwrap();
        assert_eq!(recorded(dir.path(), "oci:x/y:1"), Some(pin));
        assert_eq!(recorded(dir.path(), "oci:x/z:1"), None, "not a digest");
        std::fs::write(path(dir.path()), "{ not json").unwrap();
        assert_eq!(recorded(dir.path(), "oci:x/y:1"), None);
    }
}
