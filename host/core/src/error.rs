//! Why `seams generate` or `seams check` could not do its job.

use std::path::PathBuf;

use seams_model::ModelError;

use crate::lock::LockError;
use crate::output_dir::OutputDir;
use crate::project::{Project, ProjectError, posix};

/// Why generation could not run at all (a generator's own failure is a
/// [`GeneratorError`](seams_runtime::GeneratorError) in the report
/// instead).
#[derive(Debug, thiserror::Error)]
pub enum GenerateError {
    /// `seams.toml` is missing or wrong.
    #[error(transparent)]
    Project(#[from] ProjectError),
    /// The model could not be loaded.
    #[error(transparent)]
    Model(#[from] ModelError),
    /// The lock could not be read.
    #[error(transparent)]
    Lock(#[from] LockError),
    /// The key journals are sealed with could not be had.
    #[error(transparent)]
    SealKey(#[from] crate::seal::SealKeyError),
    /// Generation would overwrite or delete files someone edited.
    #[error("{}", hand_edited_message(overwrite, delete))]
    HandEdited {
        /// Edited files generation would overwrite, project-relative.
        overwrite: Vec<String>,
        /// Edited files no longer generated, which it would delete.
        delete: Vec<String>,
    },
    /// A generator failed on a write-back's edited model: nothing was
    /// written, so the model and the outputs still agree.
    #[error(
        "nothing written: with {model} edited, {}; fix that generator (or the edit) and write back again",
        failures.join("; ")
    )]
    FailedOnEdit {
        /// The model file the write-back edits, project-relative.
        model: String,
        /// Each failure, as the generator's error says it.
        failures: Vec<String>,
    },
    /// A component's bytes differ from what the lock pins.
    #[error(
        "generator {generator}: the component's sha256 is {actual}, but seams.lock pins {locked}; if the new component is the one you want, run `seams generate --update`"
    )]
    ComponentChanged {
        /// The generator, as seams.toml names it.
        generator: String,
        /// The sha256 in the lock.
        locked: String,
        /// The sha256 of the file now.
        actual: String,
    },
    /// Another seams run holds the project.
    #[error(
        "another seams run is writing the project {}; wait for it, or run again without --no-wait to wait",
        path.display()
    )]
    Busy {
        /// The project directory (the lock is on it).
        path: PathBuf,
    },
    /// A generator's output could not be written.
    #[error("generator {generator}: cannot write {}: {source}", path.display())]
    Output {
        /// The generator that gave the file, as its meta names it.
        generator: String,
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// A symlink sits where an output goes (or on its way there): seams
    /// never reads or writes through one in the output directory.
    #[error(
        "{link} is a symbolic link (to {target}), where {writer}; seams never reads or writes through a link in the output directory, so that a cloned project cannot point it elsewhere: remove the link and run again"
    )]
    PlantedLink {
        /// The link, project-relative.
        link: String,
        /// Where it points, as it says.
        target: String,
        /// Who writes there: `generator htmx writes out/a.html`, or that
        /// the lock records it.
        writer: String,
    },
    /// A file could not be read or written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
}

/// "out/a.html was edited since seams wrote it; generating would overwrite
/// it", one clause per file for several, then what to do.
fn hand_edited_message(overwrite: &[String], delete: &[String]) -> String {
    let clause = |path: &String, would_delete: bool| {
        let what = if would_delete {
            "is no longer generated; generating would delete it"
        } else {
            "generating would overwrite it"
        };
        format!("{path} ({what})")
    };
    let mut files: Vec<String> = overwrite.iter().map(|p| clause(p, false)).collect();
    files.extend(delete.iter().map(|p| clause(p, true)));
    let head = match files.len() {
        1 => "this file was edited since seams wrote it".to_owned(),
        n => format!("{n} files were edited since seams wrote them"),
    };
    // The edit can become the model's first: write-back, then --force.
    let back = overwrite
        .iter()
        .find(|path| !path.ends_with(seams_templates::SIDECAR_SUFFIX))
        .map(|path| format!("`seams write-back {path}` turns an edit into the model change that gives it back; else "))
        .unwrap_or_default();
    format!(
        "{head}: {}; {back}keep your changes elsewhere, or run `seams generate --force` to discard them",
        files.join(", ")
    )
}

impl GenerateError {
    /// Why an output could not be read to be compared: a symlink planted on
    /// its way is named with the generator that writes there (a cloned
    /// project's `out/app.py -> ~/.ssh/id_rsa`); any other error as it is.
    /// `generator` names who writes `path` (output-relative), when known.
    pub(crate) fn unreadable(
        project: &Project,
        out: &OutputDir,
        path: &str,
        generator: Option<&str>,
        source: std::io::Error,
    ) -> GenerateError {
        let prefix = posix(&project.output_dir);
        match out.link_on_the_way(path) {
            Some((link, target)) => GenerateError::PlantedLink {
                link: format!("{prefix}/{link}"),
                target,
                writer: match generator {
                    Some(name) => format!("generator {name} writes {prefix}/{path}"),
                    None => format!("seams.lock records {prefix}/{path}"),
                },
            },
            None => GenerateError::Io {
                path: project.output_path().join(path),
                source,
            },
        }
    }
}
