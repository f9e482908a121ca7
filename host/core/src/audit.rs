//! The project's files against the lock: for every file that generation
//! gives now or that the lock lists, what state it is in. `seams check`
//! reports these states; `seams generate` acts on them.

use std::collections::{BTreeMap, BTreeSet};

use crate::generate::{GenerateError, Generation, SourcedRun, files_of, source_label};
use crate::lock::{Lock, LockError};
use crate::output_dir::OutputDir;
use crate::project::Project;
use seams_model::sha256_hex;

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

/// One file's audit.
#[derive(Debug, Clone)]
pub struct FileAudit {
    /// The path relative to the output directory.
    pub path: String,
    /// Its state.
    pub state: FileState,
    /// What generation gives now, when it gives the file.
    pub generated: Option<String>,
}

/// A lock path as a path inside the output directory.
///
/// # Errors
///
/// A path outside the output directory, or one the output rules refuse:
/// the lock is not trusted to point anywhere else.
pub fn locked_path(project: &Project, lock_path: &str) -> Result<String, LockError> {
    let prefix = format!("{}/", crate::generate::posix(&project.output_dir));
    let rel = lock_path
        .strip_prefix(&prefix)
        .filter(|rel| {
            let base = rel
                .strip_suffix(seams_templates::SIDECAR_SUFFIX)
                .unwrap_or(rel);
            seams_runtime::validate_output_path(base).is_ok()
        })
        .ok_or_else(|| LockError {
            path: crate::lock::LOCK_FILE.to_owned(),
            message: format!("output {lock_path:?} is not inside the output directory {prefix:?}"),
        })?;
    Ok(rel.to_owned())
}

/// Audits every file generation gives and every file the lock lists (`out`
/// is the output directory, `None` when it does not exist yet), except
/// those of generators that failed (they are left as they are).
///
/// # Errors
///
/// A lock path outside the output directory, or a file that cannot be read.
pub fn audit(
    project: &Project,
    generation: &Generation,
    lock: Option<&Lock>,
    out: Option<&OutputDir>,
) -> Result<Vec<FileAudit>, GenerateError> {
    let mut generated: BTreeMap<String, String> = BTreeMap::new();
    for SourcedRun { run, .. } in &generation.runs {
        for (path, bytes, _) in files_of(run) {
            generated.insert(path, bytes.into_owned());
        }
    }
    let failed: BTreeSet<String> = generation
        .failures
        .iter()
        .map(|(s, _)| source_label(s))
        .collect();
    let mut locked: BTreeMap<String, String> = BTreeMap::new();
    if let Some(lock) = lock {
        let kept: BTreeSet<&str> = lock
            .generators
            .iter()
            .filter(|g| failed.contains(&g.source))
            .map(|g| g.name.as_str())
            .collect();
        for entry in lock
            .outputs
            .iter()
            .filter(|o| !kept.contains(o.generator.as_str()))
        {
            locked.insert(locked_path(project, &entry.path)?, entry.sha256.clone());
        }
    }
    let paths: BTreeSet<&String> = generated.keys().chain(locked.keys()).collect();
    let mut audits = Vec::with_capacity(paths.len());
    for path in paths {
        // No output directory: nothing is on disk.
        let disk = match out {
            Some(out) => out.read(path).map_err(|source| GenerateError::Io {
                path: project.output_path().join(path),
                source,
            })?,
            None => None,
        };
        let gen_bytes = generated.get(path);
        let lock_sha = locked.get(path);
        let disk_sha = disk.as_deref().map(sha256_hex);
        let state = match (gen_bytes, disk.as_deref()) {
            (Some(g), Some(d)) if g.as_bytes() == d => {
                if lock_sha == disk_sha.as_ref() {
                    FileState::Current
                } else {
                    FileState::Unlocked
                }
            }
            (Some(_), None) => FileState::Missing,
            (Some(_), Some(_)) if lock_sha.is_some() && lock_sha == disk_sha.as_ref() => {
                FileState::Stale
            }
            (Some(_), Some(_)) => FileState::HandEdited,
            (None, None) => FileState::Gone,
            (None, Some(_)) if lock_sha == disk_sha.as_ref() => FileState::Orphan,
            (None, Some(_)) => FileState::EditedOrphan,
        };
        audits.push(FileAudit {
            path: path.clone(),
            state,
            generated: gen_bytes.cloned(),
        });
    }
    Ok(audits)
}
