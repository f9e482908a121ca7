//! The pipeline of a seams project: `seams.toml` ([`Project`]), the model
//! and the generators' runs (through `seams-model` and `seams-runtime`),
//! the audit of the files against `seams.lock`, and applying its plan to
//! the output directory: [`generate`] and [`check`].
//!
//! ```no_run
//! let project = seams_core::Project::load(std::path::Path::new("examples/chat"))?;
//! let runtime = seams_runtime::Runtime::new(None)?;
//! let report = seams_core::generate(&project, &runtime, &seams_core::GenerateOptions::default())?;
//! println!("{} files written", report.written.len());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Core concepts
//!
//! - [`Project`]: a parsed `seams.toml`, with the sandbox's
//!   [`Limits`](seams_runtime::Limits) from `[sandbox]`.
//! - [`Lock`]: the contents of `seams.lock`.
//! - [`generate()`]: `seams generate`; [`check()`]: `seams check`;
//!   [`trace_view()`]: `seams trace`; [`inspect()`]: `seams inspect`.
//! - [`OutputDir`]: the only writer of files, confined to one directory.

#![deny(missing_docs)]

mod add;
mod added;
mod apply;
mod audit;
pub mod builtin;
mod check;
mod claims;
mod confinement;
mod error;
mod generate;
mod generation;
mod init;
mod inputs;
mod inspect;
mod journal;
mod leftovers;
mod lock;
mod output_dir;
mod plan;
mod progress;
mod project;
mod project_file;
mod project_lock;
mod seal;
mod stat_cache;
mod trace_view;
mod trust;
mod write_back;

pub use add::{AddError, AddReport, add, add_package};
pub use audit::Contents;
pub use check::{CHECK_VERSION, CheckReport, Problem, ProblemKind, check, check_with};
pub use confinement::Reach;
pub use error::GenerateError;
pub use generate::{GenerateOptions, GenerateReport, generate};
pub use generation::{GeneratedFile, Generation, SourcedRun, run_generators};
pub use init::{InitError, InitReport, init};
pub use inspect::{InspectError, Inspection, Pulled, inspect, inspect_reference, view};
pub use lock::{
    LOCK_FILE, LOCK_VERSION, Lock, LockError, LockedGenerator, LockedModelFile, LockedOci,
    LockedOutput,
};
pub use output_dir::OutputDir;
pub use progress::{Progress, Silent};
pub use project::{GeneratorSource, MANIFEST, PackageBuilder, Project, ProjectError, Propose};
pub use project_lock::Wait;
pub use seal::SealKeyError;
pub use trace_view::{
    LineView, OriginView, TermView, TraceView, TraceViewError, parse_target, trace_view,
};
pub use trust::{Authority, TrustError, TrustReport, trust, trusted};
pub use write_back::{
    BlockChange, BlockPlan, Consent, Effect, Patch, Planned, Unexplained, WriteBackError,
    WriteBackPlan, plan_line_edit, plan_target,
};

/// The readers of untrusted records, for the fuzz targets (`fuzz/`):
/// built only under cargo-fuzz's `--cfg fuzzing`.
#[cfg(fuzzing)]
#[doc(hidden)]
pub mod fuzzing {
    /// Reads a lock's bytes as `generate` and `check` do.
    pub fn lock(bytes: &[u8]) -> bool {
        crate::inputs::parse_lock("seams.lock", bytes).is_ok()
    }

    /// Reads a journal's bytes as `generate` and `check` do.
    pub fn journal(bytes: &[u8]) -> bool {
        let key = crate::seal::SealKey::in_dir(&std::env::temp_dir().join("seams-fuzz-state"))
            .expect("a key");
        crate::inputs::parse_journal("seams.journal", bytes, &key).is_ok()
    }
}

/// Hooks for seams' own tests; not part of the stable API.
#[cfg(feature = "testing")]
pub mod testing {
    use std::io;

    use seams_runtime::Runtime;

    use crate::apply::{Dirs, ProjectFs};
    use crate::audit::Contents;
    use crate::generate::generate_on;
    use crate::output_dir::Staged;
    use crate::{GenerateError, GenerateOptions, GenerateReport, Project};

    /// [`generate`](crate::generate), with the file operations that write
    /// or delete (the journal, each staged output, each deletion, the
    /// lock) failing with an "injected fault" I/O error from the
    /// `fail_after`-th on (counting from 0).
    ///
    /// # Errors
    ///
    /// As `generate`, and the injected fault.
    pub fn generate_failing_after(
        project: &Project,
        runtime: &Runtime,
        options: &GenerateOptions,
        fail_after: usize,
    ) -> Result<GenerateReport, GenerateError> {
        generate_on(project, runtime, options, None, &mut |project| {
            Ok(Box::new(Faulty {
                inner: Dirs::open(project)?,
                left: fail_after,
            }))
        })
    }

    /// Real directories whose writes and deletions fail after a count.
    struct Faulty {
        inner: Dirs,
        left: usize,
    }

    impl Faulty {
        fn step(&mut self) -> io::Result<()> {
            match self.left.checked_sub(1) {
                Some(left) => {
                    self.left = left;
                    Ok(())
                }
                None => Err(io::Error::other("injected fault")),
            }
        }
    }

    impl ProjectFs for Faulty {
        fn write_record(&mut self, name: &str, bytes: &[u8]) -> io::Result<()> {
            self.step()?;
            self.inner.write_record(name, bytes)
        }

        fn create_record(&mut self, name: &str, bytes: &[u8]) -> io::Result<()> {
            self.step()?;
            self.inner.create_record(name, bytes)
        }

        fn stage_record(&mut self, name: &str, bytes: &[u8]) -> io::Result<Staged> {
            self.step()?;
            self.inner.stage_record(name, bytes)
        }

        fn remove_record(&mut self, name: &str) -> io::Result<()> {
            self.inner.remove_record(name)
        }

        fn one_file_system(&self) -> bool {
            self.inner.one_file_system()
        }

        fn device(&self) -> Option<u64> {
            self.inner.device()
        }

        fn output_device(&self, dir: &str) -> Option<u64> {
            self.inner.output_device(dir)
        }

        fn sync_project_dir(&mut self, dir: &str) -> io::Result<()> {
            self.inner.sync_project_dir(dir)
        }

        fn sync_file_system(&mut self) -> io::Result<()> {
            self.inner.sync_file_system()
        }

        fn stage(&mut self, path: &str, contents: &Contents) -> io::Result<Staged> {
            self.step()?;
            self.inner.stage(path, contents)
        }

        fn remove_output(&mut self, path: &str) -> io::Result<()> {
            self.step()?;
            self.inner.remove_output(path)
        }

        fn sync_output_dir(&mut self, dir: &str) -> io::Result<()> {
            self.inner.sync_output_dir(dir)
        }
    }
}
