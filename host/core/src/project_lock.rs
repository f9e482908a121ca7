//! One run at a time per project: `seams generate` holds an exclusive
//! advisory lock (flock) on the project directory itself while it writes,
//! and `seams check` a shared one while it reads, so that a check never
//! sees a generate half done and two generates never write the same
//! directory together. Locking the directory writes nothing into the
//! project, and the operating system releases the lock when the process
//! ends, however it ends.

use std::fs::{File, TryLockError};
use std::path::PathBuf;

use crate::error::GenerateError;
use crate::project::Project;

/// Whether to wait for another run to finish.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Wait {
    /// Block until the project is free.
    #[default]
    Block,
    /// Fail at once with [`GenerateError::Busy`].
    NoWait,
}

/// Held while a run reads or writes the project; released on drop.
#[derive(Debug)]
pub struct ProjectLock {
    _file: File,
}

impl ProjectLock {
    /// The exclusive lock `seams generate` holds.
    ///
    /// # Errors
    ///
    /// Another run holds the project and `wait` is [`Wait::NoWait`], or the
    /// project directory cannot be opened.
    pub fn exclusive(project: &Project, wait: Wait) -> Result<ProjectLock, GenerateError> {
        take(project, wait, true)
    }

    /// The shared lock `seams check` holds.
    ///
    /// # Errors
    ///
    /// A generate holds the project and `wait` is [`Wait::NoWait`], or the
    /// project directory cannot be opened.
    pub fn shared(project: &Project, wait: Wait) -> Result<ProjectLock, GenerateError> {
        take(project, wait, false)
    }
}

fn take(project: &Project, wait: Wait, exclusive: bool) -> Result<ProjectLock, GenerateError> {
    let path: PathBuf = project.root.clone();
    let io = |source| GenerateError::Io {
        path: path.clone(),
        source,
    };
    let file = File::open(&path).map_err(io)?;
    match (wait, exclusive) {
        (Wait::Block, true) => file.lock().map_err(io)?,
        (Wait::Block, false) => file.lock_shared().map_err(io)?,
        (Wait::NoWait, _) => {
            let tried = if exclusive {
                file.try_lock()
            } else {
                file.try_lock_shared()
            };
            match tried {
                Ok(()) => {}
                Err(TryLockError::WouldBlock) => {
                    return Err(GenerateError::Busy { path: path.clone() });
                }
                Err(TryLockError::Error(source)) => return Err(io(source)),
            }
        }
    }
    Ok(ProjectLock { _file: file })
}
