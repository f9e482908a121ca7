//! The record of intent: before `seams generate` renames a file into place
//! or deletes one, it writes `seams.journal` beside the lock, durably,
//! listing every file it will write (as the lock will record it, and the
//! bytes the old lock recorded there) and every file it will delete (with
//! its locked bytes). (A journal cut short by a crash before it was
//! durable announces nothing: [`Journal::cut_short`].) The journal is
//! removed once the new lock is durable. When a run is interrupted, the
//! next `generate` and `check` read the lock and the journal together
//! ([`recover`]): a file whose bytes are those the journal announced, old
//! or new, was written by seams, whatever changed since, so only bytes
//! recorded in neither are ever called hand-edited. Because the journal
//! names both, the renames, deletions and the lock's rename may reach the
//! disk in any order: one sync after all of them is enough.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::audit::locked_path;
use crate::error::GenerateError;
use crate::lock::{LOCK_VERSION, Lock, LockError, LockedOutput};
use crate::output_dir::OutputDir;
use crate::output_dir::parent_dir;
use crate::project::{JOURNAL_FILE, Project, posix};
use crate::seal::SealKey;
use seams_model::sha256_hex;

/// The journal format's version: 3 adds the model file a write-back
/// rewrites with its outputs, 4 the seal ([`crate::seal`]).
pub const JOURNAL_VERSION: u32 = 4;

/// The oldest version read: version 1 names neither the bytes a write
/// replaces nor those of a deleted file, which its runs did not need (they
/// made every rename and deletion durable before renaming the lock).
const OLDEST_VERSION: u32 = 1;

/// What an unfinished `seams generate` set out to do.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Journal {
    /// [`JOURNAL_VERSION`].
    pub journal_version: u32,
    /// Every file it writes.
    pub writes: Vec<JournalWrite>,
    /// Every file it deletes.
    pub deletes: Vec<JournalDelete>,
    /// The model file a write-back rewrites with the outputs, if any: the
    /// next run finishes writing it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<JournalModel>,
    /// This machine's seal of the rest ([`Journal::sealed_text`]); a
    /// journal without one (older than version 4, or not seams's) is
    /// never replayed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seal: Option<String>,
}

/// A model file a write-back replaces in the same run as the outputs it
/// changes. Its new text is in the journal, so a run interrupted before
/// the file reached the disk is finished by the next one
/// ([`finish_model_write`]): a kill can never leave new outputs standing
/// by an old model.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JournalModel {
    /// Project-relative, as in `[model] files`.
    pub path: String,
    /// The sha256 of the bytes it replaces.
    pub previous: String,
    /// The new text.
    pub text: String,
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
    /// The bytes the lock recorded there before, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub previous: Option<LockedBytes>,
}

/// One file a run deletes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "DeleteEntry", into = "DeleteEntry")]
pub struct JournalDelete {
    /// Project-relative, as in the lock.
    pub path: String,
    /// Its bytes as the lock recorded them; unknown in a version 1
    /// journal.
    pub locked: Option<LockedBytes>,
}

/// Bytes a lock recorded for a file, and the generator that wrote them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LockedBytes {
    /// Their sha256.
    pub sha256: String,
    /// The generator that wrote them.
    pub generator: String,
}

/// A deletion as written: a path (version 1), or a path with its locked
/// bytes.
#[derive(Clone, Serialize, Deserialize)]
#[serde(untagged)]
enum DeleteEntry {
    Path(String),
    Locked(LockedDelete),
}

#[derive(Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct LockedDelete {
    path: String,
    sha256: String,
    generator: String,
}

impl From<DeleteEntry> for JournalDelete {
    fn from(entry: DeleteEntry) -> JournalDelete {
        match entry {
            DeleteEntry::Path(path) => JournalDelete { path, locked: None },
            DeleteEntry::Locked(LockedDelete {
                path,
                sha256,
                generator,
            }) => JournalDelete {
                path,
                locked: Some(LockedBytes { sha256, generator }),
            },
        }
    }
}

impl From<JournalDelete> for DeleteEntry {
    fn from(delete: JournalDelete) -> DeleteEntry {
        match delete.locked {
            None => DeleteEntry::Path(delete.path),
            Some(LockedBytes { sha256, generator }) => DeleteEntry::Locked(LockedDelete {
                path: delete.path,
                sha256,
                generator,
            }),
        }
    }
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
        let shape = |e: serde_json::Error| error(seams_model::input_text::cut(&e.to_string()));
        // The version first: a newer seams's journal has fields this one
        // does not know, and the user needs to hear which seams to use.
        #[derive(Deserialize)]
        struct Versioned {
            journal_version: u32,
        }
        let version = serde_json::from_str::<Versioned>(text)
            .map_err(shape)?
            .journal_version;
        if !(OLDEST_VERSION..=JOURNAL_VERSION).contains(&version) {
            return Err(error(format!(
                "journal_version {version} is not {JOURNAL_VERSION}, the version this seams writes; finish the interrupted run with the seams that started it"
            )));
        }
        let journal: Journal = serde_json::from_str(text).map_err(shape)?;
        if journal.model.is_some() && version < 3 {
            return Err(error(format!(
                "journal_version {version} has no model entry (version 3 added it); seams never writes such a journal"
            )));
        }
        Ok(journal)
    }

    /// Parses a journal's text and checks its seal against `key`: only a
    /// journal this machine's seams wrote is replayed.
    ///
    /// # Errors
    ///
    /// As [`Journal::parse`], and a journal with no seal or another's.
    pub(crate) fn parse_sealed(
        path: &str,
        text: &str,
        key: &SealKey,
    ) -> Result<Journal, LockError> {
        let journal = Journal::parse(path, text)?;
        let unsealed = Journal {
            seal: None,
            ..journal.clone()
        };
        let sealed = journal
            .seal
            .as_deref()
            .is_some_and(|seal| key.verifies(&unsealed.to_text(), seal));
        if sealed {
            return Ok(unsealed);
        }
        let whose = if journal.journal_version < JOURNAL_VERSION {
            format!(
                "it is unsealed (journal_version {}, from a seams before journals were sealed, or not from seams)",
                journal.journal_version
            )
        } else {
            format!(
                "its seal is not this machine's (the key in {})",
                key.path().display()
            )
        };
        Err(LockError::Invalid {
            path: path.to_owned(),
            message: format!(
                "{whose}: seams replays only the journals it wrote here, never one committed to a repository or copied into a project, since a journal may rewrite project files"
            ),
        })
    }

    /// The journal's text, sealed with `key`.
    pub(crate) fn sealed_text(&self, key: &SealKey) -> String {
        let unsealed = Journal {
            seal: None,
            ..self.clone()
        };
        let seal = key.seal(&unsealed.to_text());
        Journal {
            seal: Some(seal),
            ..unsealed
        }
        .to_text()
    }

    /// A journal that announces nothing: what one cut short says.
    pub(crate) fn empty() -> Journal {
        Journal {
            journal_version: JOURNAL_VERSION,
            writes: Vec::new(),
            deletes: Vec::new(),
            model: None,
            seal: None,
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
/// empty one) with every journaled file whose bytes are on disk, new or
/// old, recorded with them, and without every journaled deletion that
/// happened. The result is marked incomplete, so that the next generate
/// runs every generator.
///
/// # Errors
///
/// A journal path outside the output directory, or a file that cannot be
/// read.
pub fn recover<'a>(
    project: &Project,
    lock: Option<Lock>,
    journal: &'a Journal,
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
    // By path, so that a journal of many entries costs no more than one
    // pass over it and the lock; each file is hashed once, however often
    // a (crafted) journal names it.
    let mut outputs: BTreeMap<String, LockedOutput> = std::mem::take(&mut lock.outputs)
        .into_iter()
        .map(|o| (o.path.clone(), o))
        .collect();
    let mut hashed: HashMap<&str, Option<String>> = HashMap::new();
    let mut on_disk = |lock_path: &'a str| -> Result<Option<String>, GenerateError> {
        if let Some(sha256) = hashed.get(lock_path) {
            return Ok(sha256.clone());
        }
        let rel = locked_path(project, lock_path)?;
        let sha256 = match out {
            Some(out) => out
                .read(&rel)
                .map_err(|source| GenerateError::Io {
                    path: project.output_path().join(&rel),
                    source,
                })?
                .as_deref()
                .map(sha256_hex),
            None => None,
        };
        hashed.insert(lock_path, sha256.clone());
        Ok(sha256)
    };
    for write in &journal.writes {
        let disk = on_disk(&write.path)?;
        let new = LockedBytes {
            sha256: write.sha256.clone(),
            generator: write.generator.clone(),
        };
        // The old bytes stay when the lock was renamed before the file.
        if let Some(bytes) = [Some(&new), write.previous.as_ref()]
            .into_iter()
            .flatten()
            .find(|b| disk.as_deref() == Some(b.sha256.as_str()))
        {
            record(&mut outputs, &write.path, bytes);
        }
    }
    for deleted in &journal.deletes {
        match on_disk(&deleted.path)? {
            None => {
                outputs.remove(&deleted.path);
            }
            // Still there when the lock was renamed before the deletion.
            Some(disk) => {
                if let Some(bytes) = deleted.locked.as_ref().filter(|b| b.sha256 == disk) {
                    record(&mut outputs, &deleted.path, bytes);
                }
            }
        }
    }
    lock.outputs = outputs.into_values().collect();
    Ok(lock)
}

/// A model file's new text, written by the same run as the outputs it
/// changes (a write-back's), and the output the user edited, which that
/// run may overwrite.
pub(crate) struct ModelEdit {
    /// Project-relative, posix: one of `[model] files`.
    pub(crate) path: String,
    /// The new text.
    pub(crate) text: String,
    /// The edited output, output-relative.
    pub(crate) output: String,
}

/// Finishes the model write an interrupted write-back announced: when the
/// model file still holds the bytes it replaces, the journal's text is
/// written in their place, durably. A file holding other bytes (edited
/// since) is left as it is. Gives whether it wrote.
///
/// # Errors
///
/// A journal naming a file that is not one of `[model] files`, or whose
/// text is not UTF-8 Turtle seams wrote (its bytes are checked against
/// nothing else: they are the user's own edit, planned by write-back), or
/// a file that cannot be read or written.
pub(crate) fn finish_model_write(
    project: &Project,
    model: &JournalModel,
    root: &OutputDir,
) -> Result<bool, GenerateError> {
    let crafted = |why: &str| {
        GenerateError::Lock(LockError::Invalid {
            path: project.root.join(JOURNAL_FILE).display().to_string(),
            message: format!(
                "its model write {} {why}; seams never writes such a journal: remove it and run seams generate",
                seams_model::input_text::echo(&model.path)
            ),
        })
    };
    let named = project.model_files.iter().any(|file| {
        file.strip_prefix(&project.root)
            .is_ok_and(|rel| posix(rel) == model.path)
    });
    if !named {
        return Err(crafted("is not one of the [model] files in seams.toml"));
    }
    let path = project.root.join(&model.path);
    let io = |source| GenerateError::Io {
        path: path.clone(),
        source,
    };
    let on_disk = root.read(&model.path).map_err(io)?;
    if on_disk.as_deref().map(sha256_hex).as_deref() != Some(model.previous.as_str()) {
        return Ok(false);
    }
    root.write(&model.path, model.text.as_bytes()).map_err(io)?;
    root.sync_dir(parent_dir(&model.path)).map_err(io)?;
    Ok(true)
}

/// Records `bytes` as `path`'s among `outputs`, unless they are already.
fn record(outputs: &mut BTreeMap<String, LockedOutput>, path: &str, bytes: &LockedBytes) {
    if outputs.get(path).is_some_and(|o| o.sha256 == bytes.sha256) {
        return;
    }
    let output = LockedOutput {
        path: path.to_owned(),
        sha256: bytes.sha256.clone(),
        generator: bytes.generator.clone(),
        generator_version: String::new(),
        component_sha256: String::new(),
        sources: Arc::default(),
    };
    outputs.insert(path.to_owned(), output);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_journal_cut_short_reads_as_one() {
        let whole = Journal {
            journal_version: JOURNAL_VERSION,
            model: None,
            seal: None,
            writes: vec![JournalWrite {
                path: "out/café.html".to_owned(),
                sha256: "ab".repeat(32),
                generator: "htmx".to_owned(),
                previous: Some(bytes("cd", "htmx")),
            }],
            deletes: vec![JournalDelete {
                path: "out/old.html".to_owned(),
                locked: Some(bytes("ef", "htmx")),
            }],
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

    fn bytes(sha: &str, generator: &str) -> LockedBytes {
        LockedBytes {
            sha256: sha.repeat(32),
            generator: generator.to_owned(),
        }
    }

    #[test]
    fn a_version_1_journal_is_read_and_version_2_reads_back_as_written() {
        let v1 = r#"{"journal_version": 1,
            "writes": [{"path": "out/a.html", "sha256": "aa", "generator": "htmx"}],
            "deletes": ["out/b.html"]}"#;
        let read = Journal::parse("seams.journal", v1).unwrap();
        assert_eq!(read.writes[0].previous, None);
        assert_eq!(
            read.deletes,
            [JournalDelete {
                path: "out/b.html".to_owned(),
                locked: None
            }]
        );
        let v2 = Journal {
            journal_version: JOURNAL_VERSION,
            model: None,
            seal: None,
            writes: vec![
                JournalWrite {
                    path: "out/a.html".to_owned(),
                    sha256: "aa".repeat(32),
                    generator: "htmx".to_owned(),
                    previous: Some(bytes("bb", "fastapi")),
                },
                JournalWrite {
                    path: "out/new.html".to_owned(),
                    sha256: "cc".repeat(32),
                    generator: "htmx".to_owned(),
                    previous: None,
                },
            ],
            deletes: vec![JournalDelete {
                path: "out/b.html".to_owned(),
                locked: Some(bytes("dd", "htmx")),
            }],
        };
        let text = v2.to_text();
        assert!(!text.contains("null"), "{text}");
        assert_eq!(Journal::parse("seams.journal", &text).unwrap(), v2);
        // What seams never writes is refused, naming the file.
        for refused in [
            r#"{"journal_version": 5, "writes": [], "deletes": []}"#,
            r#"{"journal_version": 0, "writes": [], "deletes": []}"#,
            r#"{"journal_version": 2, "writes": [], "deletes": [], "model": {"path": "m.ttl", "previous": "aa", "text": ""}}"#,
            r#"{"journal_version": 2, "writes": [], "deletes": [{"path": "out/b", "sha256": "dd"}]}"#,
            r#"{"journal_version": 2, "writes": [], "deletes": [{"path": "out/b", "sha256": "dd", "generator": "g", "x": 1}]}"#,
            r#"{"journal_version": 2, "writes": [{"path": "out/a", "sha256": "aa", "generator": "g", "previous": {"sha256": "bb"}}], "deletes": []}"#,
        ] {
            let error = Journal::parse("seams.journal", refused).unwrap_err();
            assert!(error.to_string().contains("seams.journal"), "{error}");
        }
        // A newer seams's journal is named by its version, even with
        // fields this seams does not know.
        let newer = Journal::parse(
            "seams.journal",
            r#"{"journal_version": 5, "writes": [], "deletes": [], "renames": []}"#,
        )
        .unwrap_err()
        .to_string();
        assert!(newer.contains("journal_version 5 is not 4"), "{newer}");
    }

    #[test]
    fn only_a_journal_this_machine_sealed_is_read() {
        let dir = tempfile::tempdir().unwrap();
        let key = SealKey::in_dir(&dir.path().join("mine")).unwrap();
        let theirs = SealKey::in_dir(&dir.path().join("theirs")).unwrap();
        let journal = Journal {
            model: Some(JournalModel {
                path: "model.ttl".to_owned(),
                previous: "aa".repeat(32),
                text: "pwned".to_owned(),
            }),
            ..Journal::empty()
        };
        let sealed = journal.sealed_text(&key);
        assert_eq!(
            Journal::parse_sealed("seams.journal", &sealed, &key).unwrap(),
            journal
        );
        let refused = |text: &str, key: &SealKey| {
            Journal::parse_sealed("seams.journal", text, key)
                .unwrap_err()
                .to_string()
        };
        // Another machine's seal, no seal, a seal moved onto other content,
        // a version 3 journal (before seals): each refused, saying why.
        assert!(refused(&sealed, &theirs).contains("not this machine's"));
        assert!(refused(&journal.to_text(), &key).contains("not this machine's"));
        let moved = sealed.replace("pwned", "[core]\\n\\tfsmonitor = \\\"sh\\\"");
        assert_ne!(moved, sealed);
        assert!(refused(&moved, &key).contains("not this machine's"));
        let v3 = r#"{"journal_version": 3, "writes": [], "deletes": [], "model": {"path": "m.ttl", "previous": "aa", "text": ""}}"#;
        assert!(
            refused(v3, &key).contains("unsealed"),
            "{}",
            refused(v3, &key)
        );
        // Whitespace or key order do not matter; the content does.
        let value: serde_json::Value = serde_json::from_str(&sealed).unwrap();
        let compact = value.to_string();
        assert_eq!(
            Journal::parse_sealed("seams.journal", &compact, &key).unwrap(),
            journal
        );
    }

    /// A lock of `outputs`: (path, letter standing for its bytes).
    fn lock_of(outputs: &[(&str, &str)]) -> Lock {
        let hashed: Vec<(&str, String)> = outputs
            .iter()
            .map(|(path, b)| (*path, sha256_hex(b.as_bytes())))
            .collect();
        let hashed: Vec<(&str, &str)> = hashed.iter().map(|(p, h)| (*p, h.as_str())).collect();
        crate::plan::tests::lock(&hashed)
    }

    #[test]
    fn recovery_owns_the_old_and_the_new_bytes_whichever_reached_the_disk() {
        // A run from lock {w: "old", d: "gone"} to {w: "new"} that writes
        // w and deletes d. A crash leaves either lock, and each file old,
        // new, or (by hand) other bytes; the recovered lock records what
        // is on disk when the journal vouches for it, and otherwise what
        // the lock on disk says.
        let old_lock = || lock_of(&[("w", "old"), ("d", "gone")]);
        let new_lock = || lock_of(&[("w", "new")]);
        let sha = |b: &str| sha256_hex(b.as_bytes());
        let journal = Journal {
            journal_version: JOURNAL_VERSION,
            model: None,
            seal: None,
            writes: vec![JournalWrite {
                path: "out/w".to_owned(),
                sha256: sha("new"),
                generator: "htmx".to_owned(),
                previous: Some(LockedBytes {
                    sha256: sha("old"),
                    generator: "htmx".to_owned(),
                }),
            }],
            deletes: vec![JournalDelete {
                path: "out/d".to_owned(),
                locked: Some(LockedBytes {
                    sha256: sha("gone"),
                    generator: "htmx".to_owned(),
                }),
            }],
        };
        // The lock on disk, w and d on disk; w and d recovered ("" for
        // absent).
        let table: &[[&str; 5]] = &[
            ["old", "old", "gone", "old", "gone"],
            ["old", "new", "gone", "new", "gone"],
            ["old", "new", "", "new", ""],
            ["new", "new", "", "new", ""],
            // The lock renamed before the file's rename or deletion.
            ["new", "old", "", "old", ""],
            ["new", "new", "gone", "new", "gone"],
            ["new", "old", "gone", "old", "gone"],
            // Bytes the journal does not vouch for stay as locked.
            ["new", "edit", "edit", "new", ""],
            ["old", "edit", "edit", "old", "gone"],
            ["old", "", "", "old", ""],
            ["new", "", "", "new", ""],
        ];
        let some = |b: &'static str| (!b.is_empty()).then_some(b);
        for &[which, w, d, want_w, want_d] in table {
            let (w, d, want_w, want_d) = (some(w), some(d), some(want_w), some(want_d));
            let dir = tempfile::tempdir().unwrap();
            std::fs::write(
                dir.path().join("seams.toml"),
                "[model]\nfiles = [\"model.ttl\"]\n\n[[generator]]\nbuiltin = \"htmx\"\n",
            )
            .unwrap();
            std::fs::create_dir(dir.path().join("out")).unwrap();
            for (name, bytes) in [("w", w), ("d", d)] {
                if let Some(bytes) = bytes {
                    std::fs::write(dir.path().join("out").join(name), bytes).unwrap();
                }
            }
            let project = Project::load(dir.path()).unwrap();
            let out = OutputDir::open(&dir.path().join("out")).unwrap();
            let lock = if which == "old" {
                old_lock()
            } else {
                new_lock()
            };
            let recovered = recover(&project, Some(lock.clone()), &journal, Some(&out)).unwrap();
            assert!(recovered.incomplete);
            // Named twice (no journal seams writes does), the same.
            let mut twice = journal.clone();
            twice.writes.extend(journal.writes.clone());
            twice.deletes.extend(journal.deletes.clone());
            assert_eq!(
                recover(&project, Some(lock.clone()), &twice, Some(&out)).unwrap(),
                recovered
            );
            assert!(recovered.outputs.is_sorted_by(|a, b| a.path < b.path));
            let entry = |path: &str| {
                recovered
                    .outputs
                    .iter()
                    .find(|o| o.path == path)
                    .map(|o| o.sha256.clone())
            };
            let what = format!("{which} lock, w {w:?}, d {d:?}");
            assert_eq!(entry("out/w"), want_w.map(sha), "{what}");
            assert_eq!(entry("out/d"), want_d.map(sha), "{what}");
            // An entry the lock had for the same bytes keeps its details.
            if let Some(kept) = lock
                .outputs
                .iter()
                .find(|o| entry(&o.path) == Some(o.sha256.clone()))
            {
                assert!(recovered.outputs.contains(kept), "{what}");
            }
        }
    }

    #[test]
    fn a_model_write_names_one_of_the_model_files_or_nothing_is_written() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("seams.toml"),
            "[model]\nfiles = [\"model.ttl\"]\n\n[[generator]]\nbuiltin = \"htmx\"\n",
        )
        .unwrap();
        std::fs::write(dir.path().join("model.ttl"), "old").unwrap();
        let project = Project::load(dir.path()).unwrap();
        let root = OutputDir::open(dir.path()).unwrap();
        let manifest = std::fs::read(dir.path().join("seams.toml")).unwrap();
        for path in [
            "seams.toml",
            "../outside.ttl",
            "out/../seams.toml",
            ".git/config",
        ] {
            let model = JournalModel {
                path: path.to_owned(),
                previous: sha256_hex(&manifest),
                text: "pwned".to_owned(),
            };
            let error = finish_model_write(&project, &model, &root).unwrap_err();
            assert!(
                error
                    .to_string()
                    .contains("is not one of the [model] files"),
                "{path}: {error}"
            );
        }
        assert_eq!(
            std::fs::read(dir.path().join("seams.toml")).unwrap(),
            manifest
        );
        // Its own model file, holding the bytes it replaces: written.
        let model = JournalModel {
            path: "model.ttl".to_owned(),
            previous: sha256_hex(b"old"),
            text: "new".to_owned(),
        };
        assert!(finish_model_write(&project, &model, &root).unwrap());
        assert_eq!(std::fs::read(dir.path().join("model.ttl")).unwrap(), b"new");
        // Edited since: left as it is.
        assert!(!finish_model_write(&project, &model, &root).unwrap());
    }
}
