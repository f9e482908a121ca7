//! `seams check`: generates in memory and compares with the disk and the
//! lock, writing nothing. Every problem names the file and what to do.
//! When the seams version, model, `seams.toml`, components and every locked
//! file match the lock, it is clean without running a generator.
//!
//! The JSON form (`--format json`) is stable:
//!
//! ```json
//! {
//!   "check_version": 1,
//!   "clean": false,
//!   "problems": [
//!     { "kind": ProblemKind::Stale, "path": "out/thread.html", "message": "..." }
//!   ]
//! }
//! ```
//!
//! `kind` is one of `stale`, `hand-edited`, `missing`, `orphan`,
//! `edited-orphan`, `unlocked`, `component-changed`, `generator-failed`,
//! `no-lock`, `old-lock-format` (the lock is in an older format, which
//! `seams generate` rewrites), `lock-unreadable` (the lock or journal cannot be read; the
//! only problem then), `generate-in-progress` (with `--no-wait`, when a
//! generate holds the project; the only problem then), `interrupted` (a
//! generate was interrupted; its journal is left) and `leftover` (a
//! temporary file a killed run left); `path` is project-relative (for
//! `component-changed`, the `.wasm`) and absent for `generator-failed`,
//! `no-lock` and `generate-in-progress`; `message` is the text the text form
//! prints. Problems are sorted by path, then kind.

use serde::Serialize;

use seams_runtime::Runtime;

use crate::audit::{FileState, audit};
use crate::error::GenerateError;
use crate::generation::{Keep, load_for_run, run_reporting_progress};
use crate::inputs::{beside_model_stamp, changed_components, read_journal, read_lock, up_to_date};
use crate::journal::recover;
use crate::leftovers::Leftovers;
use crate::lock::{LOCK_FILE, LOCK_VERSION, LockError};
use crate::output_dir::OutputDir;
use crate::plan::{generated_files, locked_files};
use crate::progress::Silent;
use crate::project::JOURNAL_FILE;
use crate::project::{Project, posix};
use crate::project_lock::{ProjectLock, Wait};

/// The version of the JSON form.
pub const CHECK_VERSION: u32 = 1;

/// What kind of problem `seams check` found (its JSON name in brackets).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum ProblemKind {
    /// A file differs from what generation gives now (`stale`).
    Stale,
    /// A file was edited since seams wrote it (`hand-edited`).
    HandEdited,
    /// A generated file is not on disk (`missing`).
    Missing,
    /// A locked file is no longer generated (`orphan`).
    Orphan,
    /// A locked file is no longer generated and was edited (`edited-orphan`).
    EditedOrphan,
    /// A file matches generation but not the lock (`unlocked`).
    Unlocked,
    /// A `.wasm` differs from the lock's pin (`component-changed`).
    ComponentChanged,
    /// A generator failed (`generator-failed`).
    GeneratorFailed,
    /// There is no lock (`no-lock`).
    NoLock,
    /// The lock or journal cannot be read (`lock-unreadable`).
    LockUnreadable,
    /// The lock is in an older format (`old-lock-format`).
    OldLockFormat,
    /// A generate is running, with `--no-wait` (`generate-in-progress`).
    GenerateInProgress,
    /// A generate was interrupted (`interrupted`).
    Interrupted,
    /// A temporary file of a killed run (`leftover`).
    Leftover,
}

impl ProblemKind {
    /// The name the text and JSON forms use.
    pub fn name(self) -> &'static str {
        match self {
            ProblemKind::Stale => "stale",
            ProblemKind::HandEdited => "hand-edited",
            ProblemKind::Missing => "missing",
            ProblemKind::Orphan => "orphan",
            ProblemKind::EditedOrphan => "edited-orphan",
            ProblemKind::Unlocked => "unlocked",
            ProblemKind::ComponentChanged => "component-changed",
            ProblemKind::GeneratorFailed => "generator-failed",
            ProblemKind::NoLock => "no-lock",
            ProblemKind::LockUnreadable => "lock-unreadable",
            ProblemKind::OldLockFormat => "old-lock-format",
            ProblemKind::GenerateInProgress => "generate-in-progress",
            ProblemKind::Interrupted => "interrupted",
            ProblemKind::Leftover => "leftover",
        }
    }
}

impl std::fmt::Display for ProblemKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// One problem `seams check` found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Problem {
    /// What kind of problem (see the module docs).
    pub kind: ProblemKind,
    /// The file, project-relative, when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// What is wrong and what to do.
    pub message: String,
}

/// What `seams check` found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CheckReport {
    /// [`CHECK_VERSION`].
    pub check_version: u32,
    /// No problem at all.
    pub clean: bool,
    /// The problems, sorted by path, then kind.
    pub problems: Vec<Problem>,
}

impl CheckReport {
    /// The text form: a line per problem, then a summary.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        for p in &self.problems {
            match &p.path {
                Some(path) => out.push_str(&format!("{}: {path}: {}\n", p.kind, p.message)),
                None => out.push_str(&format!("{}: {}\n", p.kind, p.message)),
            }
        }
        if self.clean {
            out.push_str("clean: every output matches the model, the generators and seams.lock\n");
        } else {
            let n = self.problems.len();
            out.push_str(&format!("{n} problem{}\n", if n == 1 { "" } else { "s" }));
        }
        out
    }

    /// The JSON form, with a final newline.
    pub fn to_json(&self) -> String {
        let mut text = serde_json::to_string_pretty(self).expect("a report serializes");
        text.push('\n');
        text
    }
}

/// Checks the project without writing anything, waiting for a running
/// generate to finish first.
///
/// # Errors
///
/// The project or model cannot be read.
pub fn check(project: &Project, runtime: &Runtime) -> Result<CheckReport, GenerateError> {
    check_with(project, runtime, Wait::Block)
}

fn report(problems: Vec<Problem>) -> CheckReport {
    CheckReport {
        check_version: CHECK_VERSION,
        clean: problems.is_empty(),
        problems,
    }
}

fn problem(kind: ProblemKind, path: Option<String>, message: String) -> Problem {
    Problem {
        kind,
        path,
        message,
    }
}

/// [`check`]; with [`Wait::NoWait`], a running generate is reported as a
/// `generate-in-progress` problem instead of waited for.
///
/// # Errors
///
/// The project or model cannot be read.
pub fn check_with(
    project: &Project,
    runtime: &Runtime,
    wait: Wait,
) -> Result<CheckReport, GenerateError> {
    let _reading = match ProjectLock::shared(project, wait) {
        Ok(lock) => lock,
        Err(GenerateError::Busy { .. }) => {
            return Ok(report(vec![problem(
                ProblemKind::GenerateInProgress,
                None,
                "a seams generate is writing this project; check again when it is done".into(),
            )]));
        }
        Err(e) => return Err(e),
    };
    let unreadable = |file: &str, e: LockError| {
        Ok(report(vec![problem(
            ProblemKind::LockUnreadable,
            Some(file.to_owned()),
            e.to_string(),
        )]))
    };
    // As in generate: the model is hashed while the lock is parsed.
    let ((lock, journal), model) =
        beside_model_stamp(project, || (read_lock(project), read_journal(project)));
    let lock = match lock {
        Err(GenerateError::Lock(e)) => return unreadable(LOCK_FILE, e),
        other => other?,
    };
    let journal = match journal {
        Err(GenerateError::Lock(e)) => return unreadable(JOURNAL_FILE, e),
        other => other?,
    };
    let stamp = model?.with_components(project, lock.as_ref(), false);
    let mut problems = Vec::new();

    if lock.is_none() {
        problems.push(problem(
            ProblemKind::NoLock,
            None,
            "seams.lock is missing; run `seams generate` to write it".into(),
        ));
    }
    if let Some(lock) = &lock {
        for changed in changed_components(project, &stamp, lock) {
            problems.push(problem(
                ProblemKind::ComponentChanged,
                Some(changed.path),
                format!(
                    "its sha256 is {}, but seams.lock pins {}; if the new component is the one you want, run `seams generate --update`",
                    changed.actual, changed.locked
                ),
            ));
        }
        if lock.lock_version < LOCK_VERSION {
            problems.push(problem(
                ProblemKind::OldLockFormat,
                Some(LOCK_FILE.to_owned()),
                format!(
                    "is in format {}, written by an older seams; `seams generate` rewrites it in format {LOCK_VERSION}",
                    lock.lock_version
                ),
            ));
        }
    }
    let out_path = project.output_path();
    let io = |path: &std::path::Path| {
        let path = path.to_owned();
        move |source| GenerateError::Io { path, source }
    };
    let out = OutputDir::open_existing(&out_path).map_err(io(&out_path))?;
    let root = OutputDir::open_existing(&project.root)
        .map_err(io(&project.root))?
        .ok_or_else(|| GenerateError::Io {
            path: project.root.clone(),
            source: std::io::ErrorKind::NotFound.into(),
        })?;
    for path in Leftovers::find(&root, out.as_ref(), project)?.paths(project) {
        problems.push(problem(
            ProblemKind::Leftover,
            Some(path),
            "is a temporary file a killed seams run left; `seams generate` removes it".into(),
        ));
    }
    let lock = match &journal {
        Some(journal) => {
            problems.push(problem(
                ProblemKind::Interrupted,
                Some(JOURNAL_FILE.to_owned()),
                "a seams generate was interrupted; the files it wrote are known from its journal, and `seams generate` finishes the job".into(),
            ));
            Some(recover(project, lock, journal, out.as_ref())?)
        }
        None => lock,
    };
    // What `seams generate` would call up to date is clean: nothing to run.
    if let Some(lock) = &lock
        && problems.is_empty()
        // Every locked byte is read: a check vouches for no file by its
        // stat.
        && up_to_date(project, &stamp, lock, out.as_ref(), None)?
    {
        return Ok(report(problems));
    }
    let (inputs, components) = load_for_run(project, runtime, stamp)?;

    // Checking writes nothing in the project: the files generation gives
    // go to a private temporary directory, to be hashed.
    let scratch = tempfile::Builder::new()
        .prefix("seams-check-")
        .tempdir()
        .map_err(|source| GenerateError::Io {
            path: std::env::temp_dir(),
            source,
        })?;
    let keep = Keep::Files {
        dir: scratch.path().to_owned(),
        hold_bytes: seams_runtime::HOLD_BYTES,
    };
    let generation = run_reporting_progress(project, runtime, &inputs, components, &Silent, &keep);
    inputs.free_aside();
    for (_, error) in &generation.failures {
        problems.push(problem(
            ProblemKind::GeneratorFailed,
            None,
            error.to_string(),
        ));
    }
    let prefix = posix(&project.output_dir);
    let generated = generated_files(&generation);
    let locked = locked_files(project, &generation, lock.as_ref())?;
    let disk = match &out {
        Some(out) => {
            out.hashes(generated.keys().chain(locked.keys()))
                .map_err(|(path, source)| {
                    let writer = crate::generate::writer_of(&generation, &path);
                    GenerateError::unreadable(project, out, &path, writer, source)
                })?
        }
        None => Default::default(),
    };
    let audits = audit(&generated, &locked, &disk);
    for a in audits {
        let (kind, message) = match a.state {
            FileState::Current => continue,
            FileState::Unlocked => (
                ProblemKind::Unlocked,
                "matches what generation gives, but seams.lock records other bytes; run `seams generate` to update the lock",
            ),
            FileState::Missing => (ProblemKind::Missing, "is not on disk; run `seams generate`"),
            FileState::Stale => (
                ProblemKind::Stale,
                "differs from what generation gives now (the model, seams.toml or a generator changed); run `seams generate`",
            ),
            // An output's edit can become the model's first; a sidecar's
            // cannot.
            FileState::HandEdited if !a.path.ends_with(seams_templates::SIDECAR_SUFFIX) => (
                ProblemKind::HandEdited,
                "was edited since seams wrote it; `seams write-back` on it turns the edit into the model change that gives it back; else keep the change elsewhere (seams generate will not overwrite it), or run `seams generate --force` to discard it",
            ),
            FileState::HandEdited => (
                ProblemKind::HandEdited,
                "was edited since seams wrote it; keep the change elsewhere (seams generate will not overwrite it), or run `seams generate --force` to discard it",
            ),
            FileState::Orphan => (
                ProblemKind::Orphan,
                "is no longer generated; `seams generate` will delete it",
            ),
            FileState::EditedOrphan => (
                ProblemKind::EditedOrphan,
                "is no longer generated and was edited since; move it out of the output directory, or run `seams generate --force` to delete it",
            ),
            FileState::Gone => (
                ProblemKind::Orphan,
                "is listed in seams.lock but no longer generated, and already deleted; run `seams generate` to update the lock",
            ),
        };
        problems.push(problem(
            kind,
            Some(format!("{prefix}/{}", a.path)),
            message.into(),
        ));
    }
    problems.sort_by(|a, b| a.path.cmp(&b.path).then(a.kind.name().cmp(b.kind.name())));
    Ok(report(problems))
}
