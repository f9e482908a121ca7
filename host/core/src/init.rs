//! `seams init [DIR]`: a new project, with a small commented model in the
//! UI vocabulary and the three built-ins, generated once.

use std::io::Write;
use std::path::{Path, PathBuf};

use seams_runtime::Runtime;

use crate::error::GenerateError;
use crate::generate::{GenerateOptions, GenerateReport, generate};
use crate::project::{MANIFEST, Project};

/// The files a new project starts with, by name.
const FILES: [(&str, &str); 3] = [
    ("model.ttl", include_str!("init/model.ttl")),
    (MANIFEST, include_str!("init/seams.toml")),
    // The build and compile caches seams keeps in a project.
    (".gitignore", ".seams/\n"),
];

/// Why a project could not be made.
#[derive(Debug, thiserror::Error)]
pub enum InitError {
    /// The directory holds files already.
    #[error(
        "{} is not empty; seams init writes a new project into an empty or new directory (pick another, or add a seams.toml to this one by hand)", dir.display()
    )]
    NotEmpty {
        /// The directory.
        dir: PathBuf,
    },
    /// A file could not be written.
    #[error("cannot write {}: {source}", path.display())]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// The first generate failed.
    #[error(transparent)]
    Generate(#[from] GenerateError),
}

/// What `seams init` did.
#[derive(Debug)]
pub struct InitReport {
    /// The files it wrote before generating, by name.
    pub files: Vec<&'static str>,
    /// The first generate.
    pub generated: GenerateReport,
}

/// Makes a new project in `dir` (created if missing, refused unless
/// empty) and generates it once.
///
/// # Errors
///
/// `dir` is not empty, a file cannot be written, or the generate fails.
pub fn init(dir: &Path, runtime: &Runtime) -> Result<InitReport, InitError> {
    let io = |path: &Path| {
        let path = path.to_owned();
        move |source| InitError::Io { path, source }
    };
    match std::fs::read_dir(dir) {
        Ok(mut entries) => {
            if entries.next().is_some() {
                return Err(InitError::NotEmpty {
                    dir: dir.to_owned(),
                });
            }
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            std::fs::create_dir_all(dir).map_err(io(dir))?;
        }
        Err(e) => return Err(io(dir)(e)),
    }
    for (name, text) in FILES {
        let path = dir.join(name);
        // create_new: a file that appeared since the check is never
        // overwritten.
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
            .map_err(io(&path))?;
        file.write_all(text.as_bytes()).map_err(io(&path))?;
    }
    let project = Project::load(dir).map_err(GenerateError::from)?;
    let generated = generate(&project, runtime, &GenerateOptions::default())?;
    Ok(InitReport {
        files: FILES.iter().map(|(name, _)| *name).collect(),
        generated,
    })
}
