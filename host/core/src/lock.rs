//! `seams.lock`: every output pinned with its hash, the generator that
//! wrote it and the model elements it came from.
//!
//! The lock is JSON with a fixed key order, two-space indent and a final
//! newline, sorted by path, with no timestamps: the same generation gives
//! the same bytes, and it changes only when an output does.

use serde::{Deserialize, Serialize};

/// The lock's file name, in the project directory.
pub const LOCK_FILE: &str = "seams.lock";

/// The lock format's version.
pub const LOCK_VERSION: u32 = 1;

/// A whole `seams.lock`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Lock {
    /// The format version, [`LOCK_VERSION`].
    pub lock_version: u32,
    /// The seams version that generated the outputs: another seams may
    /// render or trace differently, so it generates again. Locks written
    /// before this field existed read as "".
    #[serde(default)]
    pub seams_version: String,
    /// The model hash the outputs were generated from.
    pub model_hash: String,
    /// The sha256 of `seams.toml` when they were generated; empty when a
    /// generator failed then, so that the next generate runs again.
    pub manifest_sha256: String,
    /// Every generator that ran, sorted by name.
    pub generators: Vec<LockedGenerator>,
    /// Every output, sorted by path.
    pub outputs: Vec<LockedOutput>,
}

/// A generator as it was when it ran.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LockedGenerator {
    /// Its name (from its meta).
    pub name: String,
    /// Its version (from its meta).
    pub version: String,
    /// How `seams.toml` names it: `builtin:NAME` or the `.wasm` path.
    pub source: String,
    /// The sha256 of its component.
    pub component_sha256: String,
}

/// One pinned output file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LockedOutput {
    /// The posix path relative to the project directory.
    pub path: String,
    /// The sha256 of its bytes.
    pub sha256: String,
    /// The generator's name.
    pub generator: String,
    /// The generator's version.
    pub generator_version: String,
    /// The sha256 of the generator's component.
    pub component_sha256: String,
    /// Model IRIs it was made from, sorted.
    pub sources: Vec<String>,
}

/// Why the lock could not be read.
#[derive(Debug, thiserror::Error)]
#[error("{path}: {message}; delete it and run `seams generate` to write a new one")]
pub struct LockError {
    /// The lock file.
    pub path: String,
    /// What is wrong.
    pub message: String,
}

impl Lock {
    /// Parses a lock's text; `path` names it in errors.
    ///
    /// # Errors
    ///
    /// Invalid JSON, a wrong shape or an unknown version.
    pub fn parse(path: &str, text: &str) -> Result<Lock, LockError> {
        let lock: Lock = serde_json::from_str(text).map_err(|e| LockError {
            path: path.to_owned(),
            message: seams_model::input_text::cut(&e.to_string()),
        })?;
        if lock.lock_version != LOCK_VERSION {
            return Err(LockError {
                path: path.to_owned(),
                message: format!(
                    "lock_version {} is not {LOCK_VERSION}, the version this seams writes",
                    lock.lock_version
                ),
            });
        }
        Ok(lock)
    }

    /// The lock's canonical text.
    pub fn to_text(&self) -> String {
        let mut lock = self.clone();
        lock.generators
            .sort_by(|a, b| a.name.cmp(&b.name).then(a.source.cmp(&b.source)));
        lock.outputs.sort_by(|a, b| a.path.cmp(&b.path));
        let mut text = serde_json::to_string_pretty(&lock).expect("a lock always serializes");
        text.push('\n');
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lock() -> Lock {
        Lock {
            lock_version: 1,
            seams_version: "0.1.0".into(),
            model_hash: "ab".into(),
            manifest_sha256: "ef".into(),
            generators: vec![LockedGenerator {
                name: "htmx".into(),
                version: "0.1.0".into(),
                source: "builtin:htmx".into(),
                component_sha256: "cd".into(),
            }],
            outputs: vec![
                LockedOutput {
                    path: "out/b.html".into(),
                    sha256: "1".into(),
                    generator: "htmx".into(),
                    generator_version: "0.1.0".into(),
                    component_sha256: "cd".into(),
                    sources: vec!["urn:a".into()],
                },
                LockedOutput {
                    path: "out/a.html".into(),
                    sha256: "2".into(),
                    generator: "htmx".into(),
                    generator_version: "0.1.0".into(),
                    component_sha256: "cd".into(),
                    sources: vec![],
                },
            ],
        }
    }

    #[test]
    fn the_text_is_sorted_and_round_trips() {
        let text = lock().to_text();
        assert!(text.ends_with("}\n"));
        assert!(text.find("out/a.html").unwrap() < text.find("out/b.html").unwrap());
        let back = Lock::parse("seams.lock", &text).unwrap();
        assert_eq!(back.to_text(), text);
    }

    #[test]
    fn a_bad_lock_is_named_with_what_to_do() {
        let err = Lock::parse("p/seams.lock", "{\"lock_version\": 2}")
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("p/seams.lock: "), "{err}");
        assert!(err.contains("seams generate"), "{err}");
        let text = lock()
            .to_text()
            .replace("\"lock_version\": 1", "\"lock_version\": 9");
        let err = Lock::parse("seams.lock", &text).unwrap_err().to_string();
        assert!(err.contains("lock_version 9"), "{err}");
    }
}
