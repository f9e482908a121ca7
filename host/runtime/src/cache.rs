//! Compiled components on disk, so that a generator starts in milliseconds
//! after its first run.
//!
//! Deserializing compiled code runs whatever it holds, so the cache trusts
//! nothing it did not check. An entry is used only when the cache
//! directory is private (owned by this user, writable by nobody else), the
//! file is a regular file owned by this user and writable by nobody else,
//! and its content is what seams wrote: the serialized component, then a
//! trailer naming the format and the blake3 hash of the bytes before it
//! (checked on every load, so a fast hash: the lock's hashes stay sha256).
//! The trailer comes last so that wasmtime maps the entry from disk
//! instead of copying it into memory twice (a read, then its own copy:
//! about 5 ms of a 29 ms generate at one copy of the expense example).
//! Anything else is compiled again (and replaced, when the directory is
//! private); a directory that is not private is not used at all. Entries are named by the component's
//! sha256 and the engine's precompile-compatibility hash, written
//! atomically (mode 0600), never changed in place (a mapped entry stays
//! as it was checked), and the oldest go once there are more than
//! [`MAX_ENTRIES`].

use std::hash::{Hash, Hasher};
use std::os::unix::fs::{DirBuilderExt, MetadataExt};
use std::path::{Path, PathBuf};

use wasmtime::Engine;
use wasmtime::component::Component;

/// How many compiled components the cache keeps.
pub(crate) const MAX_ENTRIES: usize = 32;

/// The last bytes of an entry but the hash: the format. (Format 1 held a
/// sha256 header, format 2 a blake3 header: their entries are compiled
/// again.)
const MAGIC: &[u8; 8] = b"seamsc3\n";

/// The trailer's length: the format, then the blake3 hash of what comes
/// before it.
const TRAILER: u64 = (MAGIC.len() + blake3::OUT_LEN) as u64;

pub(crate) struct ComponentCache {
    dir: PathBuf,
    engine_key: String,
}

/// Whether `meta` belongs to this user and nobody else may write it.
pub fn private(meta: &std::fs::Metadata) -> bool {
    meta.uid() == rustix::process::getuid().as_raw() && meta.mode() & 0o022 == 0
}

/// `dir`, created private (mode 0700) when missing, if it is a directory
/// that is private (see [`private`]): what seams keeps in its caches is
/// trusted only there.
pub fn private_dir(dir: &Path) -> Option<&Path> {
    if !dir.exists() {
        let _ = std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir);
    }
    let meta = std::fs::symlink_metadata(dir).ok()?;
    (meta.is_dir() && private(&meta)).then_some(dir)
}

impl ComponentCache {
    pub(crate) fn new(dir: PathBuf, engine: &Engine) -> Self {
        let mut hasher = std::hash::DefaultHasher::new();
        engine.precompile_compatibility_hash().hash(&mut hasher);
        ComponentCache {
            dir,
            engine_key: format!("{:016x}", hasher.finish()),
        }
    }

    pub(crate) fn get_or_compile(
        &self,
        engine: &Engine,
        sha256: &str,
        bytes: &[u8],
    ) -> Result<Component, String> {
        let dir = private_dir(&self.dir);
        let name = format!("{sha256}-{}.cwasm", self.engine_key);
        if let Some(path) = dir.map(|dir| dir.join(&name))
            && verified(&path)
        {
            // SAFETY: the file holds what seams serialized for this
            // component and engine: it is this user's alone, in a
            // directory that is this user's alone, and its trailer's hash
            // matches the bytes before it. Entries are only ever renamed
            // into place, so the mapped file does not change under it.
            if let Ok(component) = unsafe { Component::deserialize_file(engine, &path) } {
                return Ok(component);
            }
        }
        let component = Component::new(engine, bytes).map_err(|e| format!("{e:#}"))?;
        // A cache that cannot be written only costs time on the next run.
        if let (Some(dir), Ok(serialized)) = (dir, component.serialize()) {
            let _ = write_entry(dir, &name, &serialized);
            let _ = evict(dir, "cwasm", MAX_ENTRIES);
        }
        Ok(component)
    }
}

/// Whether the entry at `path` is one seams wrote and nobody else could
/// have: a private regular file (not a link) whose trailer holds the
/// format and the blake3 hash of the bytes before it. Read through a small
/// buffer, not into memory: wasmtime maps the file itself.
fn verified(path: &Path) -> bool {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let Ok(mut file) = std::fs::OpenOptions::new()
        .read(true)
        // Not through a link; and a FIFO put there must not block.
        .custom_flags((rustix::fs::OFlags::NOFOLLOW | rustix::fs::OFlags::NONBLOCK).bits() as i32)
        .open(path)
    else {
        return false;
    };
    let Ok(meta) = file.metadata() else {
        return false;
    };
    let Some(payload) = meta.len().checked_sub(TRAILER) else {
        return false;
    };
    if !meta.is_file() || !private(&meta) {
        return false;
    }
    let mut hasher = blake3::Hasher::new();
    if hasher.update_reader((&mut file).take(payload)).is_err() {
        return false;
    }
    let mut trailer = [0u8; TRAILER as usize];
    if file.read_exact(&mut trailer).is_err() {
        return false;
    }
    trailer.starts_with(MAGIC) && trailer[MAGIC.len()..] == *hasher.finalize().as_bytes()
}

/// Writes an entry atomically: a private temporary file in the cache
/// directory, renamed into place, so a reader never sees part of one.
fn write_entry(dir: &Path, name: &str, serialized: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let mut file = tempfile::NamedTempFile::new_in(dir)?;
    file.write_all(serialized)?;
    file.write_all(MAGIC)?;
    file.write_all(blake3::hash(serialized).as_bytes())?;
    file.persist(dir.join(name)).map_err(|e| e.error)?;
    Ok(())
}

/// Removes the oldest (by modification time) of the files in `dir` named
/// `*.extension` beyond `keep`.
///
/// # Errors
///
/// `dir` cannot be listed.
pub fn evict(dir: &Path, extension: &str, keep: usize) -> std::io::Result<()> {
    let mut entries: Vec<(std::time::SystemTime, PathBuf)> = std::fs::read_dir(dir)?
        .filter_map(Result::ok)
        .filter(|e| e.path().extension().is_some_and(|x| x == extension))
        .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path())))
        .collect();
    if entries.len() <= keep {
        return Ok(());
    }
    entries.sort();
    for (_, path) in &entries[..entries.len() - keep] {
        let _ = std::fs::remove_file(path);
    }
    Ok(())
}
