//! Temporary files a killed run left behind: recognised by their prefix
//! ([`seams_runtime::TEMP_PREFIX`]), reported by `seams check`, removed by
//! the next `seams generate`.

use std::path::PathBuf;

use crate::error::GenerateError;
use crate::output_dir::OutputDir;
use crate::project::{Project, posix};

/// Temporary files a killed run left: in the output directory (any depth)
/// and beside the lock.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Leftovers {
    /// Relative to the project directory.
    pub(crate) root: Vec<String>,
    /// Relative to the output directory.
    pub(crate) out: Vec<String>,
}

impl Leftovers {
    pub(crate) fn find(
        root: &OutputDir,
        out: Option<&OutputDir>,
        project: &Project,
    ) -> Result<Leftovers, GenerateError> {
        let io = |path: PathBuf| move |source| GenerateError::Io { path, source };
        Ok(Leftovers {
            root: root.leftovers(false).map_err(io(project.root.clone()))?,
            out: match out {
                Some(out) => out.leftovers(true).map_err(io(project.output_path()))?,
                None => Vec::new(),
            },
        })
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.root.is_empty() && self.out.is_empty()
    }

    /// Every leftover, project-relative.
    pub(crate) fn paths(&self, project: &Project) -> Vec<String> {
        let out_prefix = posix(&project.output_dir);
        let mut paths: Vec<String> = self.root.clone();
        paths.extend(self.out.iter().map(|p| format!("{out_prefix}/{p}")));
        paths.sort();
        paths
    }
}
