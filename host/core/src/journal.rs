//! The record of intent: before `seams generate` renames a file into place
//! or deletes one, it writes `seams.journal` beside the lock, durably,
//! listing every file it will write (as the lock will record it) and every
//! file it will delete. (A journal cut short by a crash before it was
//! durable announces nothing: [`Journal::cut_short`].) The journal is
//! removed once the new lock is written. When a run is interrupted, the
//! next `generate` and `check` read the lock and the journal together
//! ([`recover`]): a file whose bytes are those the journal announced was
//! written by seams, whatever changed since, so only bytes recorded in
//! neither are ever called hand-edited.

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

    /// A journal that announces nothing: what one cut short says.
    pub(crate) fn empty() -> Journal {
        Journal {
            journal_version: JOURNAL_VERSION,
            writes: Vec::new(),
            deletes: Vec::new(),
        }
    }

    /// Whether `bytes` are a journal cut short: what a crash can leave of
    /// one written in place before the sync that made it durable with its
    /// batch (`apply`), so before its run renamed or deleted anything.
    /// That is no bytes, JSON that ends before it is complete, or bytes
    /// ending in zeros (a file system that grew the file before its data
    /// reached the disk). JSON never holds a zero byte, and a journal that
    /// is whole but not what seams writes is still refused by
    /// [`Journal::parse`].
    pub(crate) fn cut_short(bytes: &[u8]) -> bool {
        if bytes.last().is_none_or(|&b| b == 0) {
            return true;
        }
        serde_json::from_slice::<serde::de::IgnoredAny>(bytes).is_err_and(|e| e.is_eof())
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_journal_cut_short_reads_as_one() {
        let whole = Journal {
            journal_version: JOURNAL_VERSION,
            writes: vec![JournalWrite {
                path: "out/café.html".to_owned(),
                sha256: "ab".repeat(32),
                generator: "htmx".to_owned(),
            }],
            deletes: vec!["out/old.html".to_owned()],
        }
        .to_text();
        assert!(!Journal::cut_short(whole.as_bytes()));
        // Cut at any byte before its closing brace, even inside a
        // character: cut short.
        let end = whole.trim_end().len();
        for cut in 0..end {
            assert!(Journal::cut_short(&whole.as_bytes()[..cut]), "{cut}");
        }
        assert!(!Journal::cut_short(&whole.as_bytes()[..end]));
        let mut zeros = whole.clone().into_bytes();
        zeros.extend([0; 4096]);
        // Nested far deeper than any journal, without overflowing the
        // stack: unclosed, it ends early; closed, it is whole (and
        // `Journal::parse` refuses it).
        let open = "[".repeat(100_000);
        let closed = format!("{open}{}", "]".repeat(100_000));
        let cases: [(&[u8], bool); 9] = [
            (open.as_bytes(), true),
            (closed.as_bytes(), false),
            (b"", true),
            (&[0; 512], true),
            (&zeros, true),
            (b"   \n", true),
            (b"{ half a journal", false),
            (b"null", false),
            (b"{\"journal_version\": 1} trailing", false),
        ];
        for (bytes, cut) in cases {
            assert_eq!(
                Journal::cut_short(bytes),
                cut,
                "{:?}",
                String::from_utf8_lossy(bytes)
            );
        }
        assert_eq!(
            Journal::empty().writes.len() + Journal::empty().deletes.len(),
            0
        );
        assert!(Journal::parse("seams.journal", &closed).is_err());
    }
}
