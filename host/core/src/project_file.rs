//! Reading a file of a project: the manifest, the model files, the lock
//! and the journal, a component named by path. Each is whatever a cloned
//! repository holds, so each is read the one way: a regular file (a FIFO,
//! device or directory put in its place is refused, never waited on or
//! read without end), opened without blocking, at most a limit of bytes
//! (checked before reading and while reading, for a file that grows).
//! Links that lead out of the project are refused when it loads
//! ([`crate::Project::load`]); the output directory has its own reader
//! ([`crate::OutputDir::read_regular`]).

pub(crate) use seams_model::input_file::read;

/// The most bytes `seams.toml` may have.
pub(crate) const MANIFEST_LIMIT: u64 = 16 << 20;

/// The most bytes one model file may have.
pub(crate) const MODEL_LIMIT: u64 = seams_model::input_file::MODEL_FILE_LIMIT;

/// The most bytes a component named by path may have (a Python or
/// JavaScript generator with its interpreter is under 20 MB).
pub(crate) const COMPONENT_LIMIT: u64 = 1 << 30;
