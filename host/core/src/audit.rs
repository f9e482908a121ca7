//! The project's files against the lock: for every file that generation
//! gives now or that the lock lists, what state it is in. A pure decision
//! on hashes: what generation gives, what the lock records and what is on
//! disk are read before, elsewhere. `seams check` reports these states;
//! `seams generate` plans from them ([`crate::plan`]).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use seams_model::sha256_hex;
use seams_runtime::Blob;

use crate::lock::LockError;
use crate::project::Project;

/// Where one file stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum FileState {
    /// On disk as generated and as locked.
    Current,
    /// On disk as generated, but the lock records other bytes (or none):
    /// an interrupted generate, say.
    Unlocked,
    /// Generated, locked or not, but not on disk.
    Missing,
    /// On disk as locked, but generation now gives other bytes.
    Stale,
    /// On disk with bytes neither generated nor locked: someone edited it
    /// (or it was never seams's).
    HandEdited,
    /// Locked, no longer generated, on disk as locked: safe to delete.
    Orphan,
    /// Locked, no longer generated, and edited since.
    EditedOrphan,
    /// Locked, no longer generated, already gone from disk.
    Gone,
}

/// The state of a file from the sha256 generation gives, the lock records
/// and the disk holds (each `None` when there is none). A path none of
/// the three knows is not audited.
pub(crate) fn classify(
    generated: Option<&str>,
    locked: Option<&str>,
    disk: Option<&str>,
) -> FileState {
    match (generated, disk) {
        (Some(g), Some(d)) if g == d => {
            if locked == Some(d) {
                FileState::Current
            } else {
                FileState::Unlocked
            }
        }
        (Some(_), None) => FileState::Missing,
        (Some(_), Some(d)) if locked == Some(d) => FileState::Stale,
        (Some(_), Some(_)) => FileState::HandEdited,
        (None, None) => FileState::Gone,
        (None, Some(d)) if locked == Some(d) => FileState::Orphan,
        (None, Some(_)) => FileState::EditedOrphan,
    }
}

/// New contents of a file: their sha256 and a handle to where the bytes
/// are, in memory or in a file the run wrote ([`Blob`]). A plan holds
/// contents by handle, so it never copies an output's bytes, and large ones
/// need not stay in memory.
#[derive(Debug, Clone)]
pub struct Contents(Bytes);

#[derive(Debug, Clone)]
enum Bytes {
    Memory {
        sha256: String,
        text: Arc<str>,
    },
    /// A private temporary file, removed when the last handle goes unless
    /// it was moved into place.
    Stored(Blob),
}

impl PartialEq for Contents {
    fn eq(&self, other: &Self) -> bool {
        self.sha256() == other.sha256()
    }
}

impl Eq for Contents {}

impl Contents {
    /// Contents held in memory.
    pub(crate) fn in_memory(text: Arc<str>) -> Contents {
        Contents(Bytes::Memory {
            sha256: sha256_hex(text.as_bytes()),
            text,
        })
    }

    /// Contents a run wrote to a file.
    pub(crate) fn stored(blob: Blob) -> Contents {
        Contents(Bytes::Stored(blob))
    }

    /// Their sha256, lowercase hex.
    pub fn sha256(&self) -> &str {
        match &self.0 {
            Bytes::Memory { sha256, .. } => sha256,
            Bytes::Stored(blob) => blob.sha256(),
        }
    }

    /// The file holding the bytes, when they are not in memory.
    pub(crate) fn blob(&self) -> Option<&Blob> {
        match &self.0 {
            Bytes::Memory { .. } => None,
            Bytes::Stored(blob) => Some(blob),
        }
    }

    /// The bytes, read back when stored.
    ///
    /// # Errors
    ///
    /// A stored file that cannot be read, or that changed since.
    pub(crate) fn read(&self) -> std::io::Result<std::borrow::Cow<'_, [u8]>> {
        match &self.0 {
            Bytes::Memory { text, .. } => Ok(std::borrow::Cow::Borrowed(text.as_bytes())),
            Bytes::Stored(blob) => blob.read(),
        }
    }
}

/// One file's audit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileAudit {
    /// The path relative to the output directory.
    pub path: String,
    /// Its state.
    pub state: FileState,
    /// What generation gives now, when it gives the file.
    pub generated: Option<Contents>,
}

/// Audits every file `generated` gives and every file `locked` lists
/// (path → sha256), against `disk` (path → sha256 of the files present),
/// sorted by path.
pub(crate) fn audit(
    generated: &BTreeMap<String, Contents>,
    locked: &BTreeMap<String, String>,
    disk: &BTreeMap<String, String>,
) -> Vec<FileAudit> {
    let paths: BTreeSet<&String> = generated.keys().chain(locked.keys()).collect();
    paths
        .into_iter()
        .map(|path| {
            let contents = generated.get(path);
            FileAudit {
                path: path.clone(),
                state: classify(
                    contents.map(Contents::sha256),
                    locked.get(path).map(String::as_str),
                    disk.get(path).map(String::as_str),
                ),
                generated: contents.cloned(),
            }
        })
        .collect()
}

/// A lock path as a path inside the output directory.
///
/// # Errors
///
/// A path outside the output directory, or one the output rules refuse:
/// the lock is not trusted to point anywhere else.
pub fn locked_path(project: &Project, lock_path: &str) -> Result<String, LockError> {
    let prefix = format!("{}/", crate::project::posix(&project.output_dir));
    let rel = lock_path
        .strip_prefix(&prefix)
        .filter(|rel| {
            let base = rel
                .strip_suffix(seams_templates::SIDECAR_SUFFIX)
                .unwrap_or(rel);
            seams_runtime::validate_output_path(base).is_ok()
        })
        .ok_or_else(|| LockError::Invalid {
            path: crate::lock::LOCK_FILE.to_owned(),
            message: format!("output {lock_path:?} is not inside the output directory {prefix:?}"),
        })?;
    Ok(rel.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One of the three hashes: absent, or a letter standing for bytes.
    type Hash = Option<&'static str>;

    /// Every combination of the three hashes: absent, or one of the values
    /// "a", "b", "c" (equal letters are equal bytes).
    #[test]
    fn every_combination_of_generation_lock_and_disk_has_its_state() {
        use FileState::*;
        let table: &[(Hash, Hash, Hash, FileState)] = &[
            // generated, locked, disk
            (Some("a"), Some("a"), Some("a"), Current),
            (Some("a"), None, Some("a"), Unlocked),
            (Some("a"), Some("b"), Some("a"), Unlocked),
            (Some("a"), None, None, Missing),
            (Some("a"), Some("a"), None, Missing),
            (Some("a"), Some("b"), None, Missing),
            (Some("a"), Some("b"), Some("b"), Stale),
            (Some("a"), None, Some("b"), HandEdited),
            (Some("a"), Some("a"), Some("b"), HandEdited),
            (Some("a"), Some("b"), Some("c"), HandEdited),
            (None, Some("a"), Some("a"), Orphan),
            (None, Some("a"), Some("b"), EditedOrphan),
            (None, None, Some("a"), EditedOrphan),
            (None, Some("a"), None, Gone),
            (None, None, None, Gone),
        ];
        for &(generated, locked, disk, state) in table {
            assert_eq!(
                classify(generated, locked, disk),
                state,
                "generated {generated:?}, locked {locked:?}, disk {disk:?}"
            );
        }
        // The table covers every combination up to renaming the values.
        let values = [None, Some("a"), Some("b"), Some("c")];
        let mut seen = BTreeSet::new();
        for g in values {
            for l in values {
                for d in values {
                    let canonical = canonical([g, l, d]);
                    assert!(
                        table
                            .iter()
                            .any(|&(tg, tl, td, _)| canonical == self::canonical([tg, tl, td])),
                        "no row for generated {g:?}, locked {l:?}, disk {d:?}"
                    );
                    seen.insert(canonical);
                }
            }
        }
        assert_eq!(seen.len(), table.len(), "one row per combination");
    }

    /// The values renamed in order of first appearance.
    fn canonical(values: [Option<&str>; 3]) -> [Option<u8>; 3] {
        let mut names: Vec<&str> = Vec::new();
        values.map(|v| {
            v.map(|v| {
                if !names.contains(&v) {
                    names.push(v);
                }
                names.iter().position(|n| *n == v).unwrap() as u8
            })
        })
    }

    #[test]
    fn stored_contents_read_back_and_refuse_a_changed_file() {
        let dir = tempfile::tempdir().unwrap();
        let memory = Contents::in_memory(Arc::from("some bytes"));
        let blob = Blob::write(dir.path(), b"some bytes").unwrap();
        let spilled = Contents::stored(blob);
        assert!(spilled.blob().is_some() && memory.blob().is_none());
        assert_eq!(spilled, memory, "equal by hash");
        assert_eq!(&*spilled.read().unwrap(), b"some bytes");
        let file = std::fs::read_dir(dir.path())
            .unwrap()
            .next()
            .unwrap()
            .unwrap();
        assert!(
            file.file_name()
                .to_string_lossy()
                .starts_with(seams_runtime::TEMP_PREFIX)
        );
        std::fs::write(file.path(), "other bytes").unwrap();
        let err = spilled.read().unwrap_err();
        assert!(
            err.to_string().contains("changed since seams wrote it"),
            "{err}"
        );
        drop(spilled);
        assert!(!file.path().exists(), "removed with its last handle");
    }

    #[test]
    fn the_audit_covers_generated_and_locked_paths_sorted() {
        let contents = |s: &str| Contents::in_memory(Arc::from(s));
        let generated = BTreeMap::from([
            ("b.html".to_owned(), contents("new")),
            ("a.html".to_owned(), contents("same")),
        ]);
        let locked = BTreeMap::from([
            ("a.html".to_owned(), sha256_hex(b"same")),
            ("gone.html".to_owned(), sha256_hex(b"old")),
        ]);
        let disk = BTreeMap::from([
            ("a.html".to_owned(), sha256_hex(b"same")),
            ("unknown.html".to_owned(), sha256_hex(b"x")),
        ]);
        let audits = audit(&generated, &locked, &disk);
        let states: Vec<(&str, FileState)> =
            audits.iter().map(|a| (a.path.as_str(), a.state)).collect();
        assert_eq!(
            states,
            [
                ("a.html", FileState::Current),
                ("b.html", FileState::Missing),
                ("gone.html", FileState::Gone),
            ],
            "a file on disk that neither generation nor the lock knows is not seams's"
        );
        assert_eq!(
            &*audits[1].generated.as_ref().unwrap().read().unwrap(),
            b"new"
        );
    }
}
