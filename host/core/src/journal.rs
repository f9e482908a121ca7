//! The record of intent: before `seams generate` renames a file into place
//! or deletes one, it writes `seams.journal` beside the lock, durably,
//! listing every file it will write (as the lock will record it) and every
//! file it will delete. The journal is removed once the new lock is
//! written. When a run is interrupted, the next `generate` and `check`
//! read the lock and the journal together ([`recover`]): a file whose
//! bytes are those the journal announced was written by seams, whatever
//! changed since, so only bytes recorded in neither are ever called
//! hand-edited.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::audit::locked_path;
use crate::error::GenerateError;
use crate::lock::{LOCK_VERSION, Lock, LockError, LockedOutput};
use crate::output_dir::OutputDir;
use crate::project::Project;
use seams_model::sha256_hex;

/// The journal's file name, in the project directory.
pub const JOURNAL_FILE: &str = "seams.journal";

/// The journal format's version.
pub const JOURNAL_VERSION: u32 = 1;

/// What an unfinished `seams generate` set out to do.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Journal {
    /// [`JOURNAL_VERSION`].
    pub journal_version: u32,
    /// Every file it writes.
    pub writes: Vec<JournalWrite>,
    /// Every file it deletes, project-relative as in the lock.
    pub deletes: Vec<String>,
}

/// One file a run writes: enough to recognise its bytes and its owner.
/// The rest of its lock entry (sources, versions) comes with the next
/// complete run, which the recovered lock asks for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JournalWrite {
    /// Project-relative, as in the lock.
    pub path: String,
    /// The sha256 of the bytes written.
    pub sha256: String,
    /// The generator that wrote it.
    pub generator: String,
}

impl Journal {
    /// Parses a journal's text; `path` names it in errors.
    ///
    /// # Errors
    ///
    /// Invalid JSON, a wrong shape or an unknown version.
    pub fn parse(path: &str, text: &str) -> Result<Journal, LockError> {
        let error = |message: String| LockError::Invalid {
            path: path.to_owned(),
            message,
        };
        let journal: Journal = serde_json::from_str(text)
            .map_err(|e| error(seams_model::input_text::cut(&e.to_string())))?;
        if journal.journal_version != JOURNAL_VERSION {
            return Err(error(format!(
                "journal_version {} is not {JOURNAL_VERSION}, the version this seams writes",
                journal.journal_version
            )));
        }
        Ok(journal)
    }

    /// The journal's text.
    pub fn to_text(&self) -> String {
        let mut text = serde_json::to_string_pretty(self).expect("a journal serializes");
        text.push('\n');
        text
    }
}

/// The lock as the disk stands after an interrupted run: `lock` (or an
/// empty one) with every journaled write whose bytes are on disk, and
/// without every journaled deletion that happened. The result is marked
/// incomplete, so that the next generate runs every generator.
///
/// # Errors
///
/// A journal path outside the output directory, or a file that cannot be
/// read.
pub fn recover(
    project: &Project,
    lock: Option<Lock>,
    journal: &Journal,
    out: Option<&OutputDir>,
) -> Result<Lock, GenerateError> {
    let mut lock = lock.unwrap_or_else(|| Lock {
        lock_version: LOCK_VERSION,
        seams_version: String::new(),
        model_hash: String::new(),
        manifest_sha256: String::new(),
        model_files: Vec::new(),
        incomplete: true,
        generators: Vec::new(),
        outputs: Vec::new(),
        sources: Vec::new(),
    });
    lock.incomplete = true;
    let on_disk = |lock_path: &str| -> Result<Option<String>, GenerateError> {
        let rel = locked_path(project, lock_path)?;
        let Some(out) = out else { return Ok(None) };
        let bytes = out.read(&rel).map_err(|source| GenerateError::Io {
            path: project.output_path().join(&rel),
            source,
        })?;
        Ok(bytes.as_deref().map(sha256_hex))
    };
    for write in &journal.writes {
        if on_disk(&write.path)?.as_deref() == Some(write.sha256.as_str()) {
            lock.outputs.retain(|o| o.path != write.path);
            lock.outputs.push(LockedOutput {
                path: write.path.clone(),
                sha256: write.sha256.clone(),
                generator: write.generator.clone(),
                generator_version: String::new(),
                component_sha256: String::new(),
                sources: Arc::default(),
            });
        }
    }
    for deleted in &journal.deletes {
        if on_disk(deleted)?.is_none() {
            lock.outputs.retain(|o| &o.path != deleted);
        }
    }
    Ok(lock)
}
