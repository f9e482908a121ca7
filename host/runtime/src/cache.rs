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
pub(crate) const MAGIC: &[u8; 8] = b"seamsc3\n";

/// The trailer's length: the format, then the blake3 hash of what comes
/// before it.
pub(crate) const TRAILER: u64 = (MAGIC.len() + blake3::OUT_LEN) as u64;

pub(crate) struct ComponentCache {
    dir: PathBuf,
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

/// What names an engine's compiled code: its compatibility hash, so that
/// another engine never loads it.
pub(crate) fn engine_key(engine: &Engine) -> String {
    let mut hasher = std::hash::DefaultHasher::new();
    engine.precompile_compatibility_hash().hash(&mut hasher);
    format!("{:016x}", hasher.finish())
}

impl ComponentCache {
    pub(crate) fn new(dir: PathBuf) -> Self {
        ComponentCache { dir }
    }

    pub(crate) fn get_or_compile(
        &self,
        engine: &Engine,
        sha256: &str,
        bytes: &[u8],
    ) -> Result<Component, String> {
        let dir = private_dir(&self.dir);
        let name = format!("{sha256}-{}.cwasm", engine_key(engine));
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

    /// The namespaces of the vocabularies the component with `sha256`
    /// declared when it last ran here (see [`NAMESPACES`]); none when
    /// unknown.
    pub(crate) fn namespaces(&self, sha256: &str) -> Vec<String> {
        use std::io::Read;
        let Some(path) = namespaces_path(&self.dir, sha256) else {
            return Vec::new();
        };
        let mut text = String::new();
        let read = open_private(&path).and_then(|(file, _)| {
            file.take(MAX_NAMESPACES_BYTES)
                .read_to_string(&mut text)
                .ok()
        });
        if read.is_none() {
            return Vec::new();
        }
        text.lines()
            .filter(|line| seams_model::is_namespace(line))
            .take(crate::meta::MAX_VOCABULARIES)
            .map(str::to_owned)
            .collect()
    }

    /// Notes the namespaces the component with `sha256` declared (see
    /// [`NAMESPACES`]), unless noted already. A cache that cannot be
    /// written only costs the next run a scan.
    pub(crate) fn remember_namespaces(&self, sha256: &str, namespaces: &[String]) {
        if self.namespaces(sha256) == namespaces {
            return;
        }
        let Some(path) = namespaces_path(&self.dir, sha256) else {
            return;
        };
        let (Some(dir), Some(name)) = (path.parent(), path.file_name()) else {
            return;
        };
        let text: String = namespaces.iter().map(|n| format!("{n}\n")).collect();
        if write_atomically(dir, &name.to_string_lossy(), &[text.as_bytes()]).is_ok() {
            let _ = evict(dir, NAMESPACES, MAX_ENTRIES);
        }
    }
}

/// The extension of the files that note, by component, the namespaces of
/// its vocabularies when it last ran: read before the model is, so that
/// reading the model gathers their IRIs
/// ([`seams_model::Model::from_files_watching`]) instead of the check
/// scanning the store for them (0.7 us a triple). Only a hint: a wrong or
/// missing one costs that scan, never a wrong check.
const NAMESPACES: &str = "namespaces";

/// The most bytes of a namespaces file read.
const MAX_NAMESPACES_BYTES: u64 = 64 << 10;

/// Where the namespaces of the component with `sha256` are noted, in the
/// cache directory `dir` if it is private.
fn namespaces_path(dir: &Path, sha256: &str) -> Option<PathBuf> {
    let hex = !sha256.is_empty() && sha256.bytes().all(|b| b.is_ascii_hexdigit());
    Some(private_dir(dir)?.join(format!("{sha256}.{NAMESPACES}"))).filter(|_| hex)
}

/// The file at `path` and its metadata, if it is a private regular file
/// (see [`private`]), opened without following a link or blocking on a
/// FIFO put there.
pub(crate) fn open_private(path: &Path) -> Option<(std::fs::File, std::fs::Metadata)> {
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags((rustix::fs::OFlags::NOFOLLOW | rustix::fs::OFlags::NONBLOCK).bits() as i32)
        .open(path)
        .ok()?;
    let meta = file.metadata().ok()?;
    (meta.is_file() && private(&meta)).then_some((file, meta))
}

/// Whether the entry at `path` is one seams wrote and nobody else could
/// have: a private regular file (not a link) whose trailer holds the
/// format and the blake3 hash of the bytes before it. Read through a small
/// buffer, not into memory: wasmtime maps the file itself.
fn verified(path: &Path) -> bool {
    use std::io::Read;
    let Some((mut file, meta)) = open_private(path) else {
        return false;
    };
    let Some(payload) = meta.len().checked_sub(TRAILER) else {
        return false;
    };
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
pub(crate) fn write_entry(dir: &Path, name: &str, serialized: &[u8]) -> std::io::Result<()> {
    let hash = blake3::hash(serialized);
    write_atomically(dir, name, &[serialized, MAGIC, hash.as_bytes()])
}

/// Writes `pieces` to the file `name` of `dir` atomically: a private
/// temporary file, renamed into place.
fn write_atomically(dir: &Path, name: &str, pieces: &[&[u8]]) -> std::io::Result<()> {
    use std::io::Write;
    let mut file = tempfile::NamedTempFile::new_in(dir)?;
    for piece in pieces {
        file.write_all(piece)?;
    }
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
    evict_beyond(dir, extension, keep as u64, |_| 1)
}

/// Removes the oldest (by modification time) of the files in `dir` named
/// `*.extension` until the newest left weigh at most `budget` together,
/// each weighing `weight` of its metadata.
pub(crate) fn evict_beyond(
    dir: &Path,
    extension: &str,
    budget: u64,
    weight: impl Fn(&std::fs::Metadata) -> u64,
) -> std::io::Result<()> {
    let mut entries: Vec<(std::time::SystemTime, u64, PathBuf)> = std::fs::read_dir(dir)?
        .filter_map(Result::ok)
        .filter(|e| e.path().extension().is_some_and(|x| x == extension))
        .filter_map(|e| {
            let meta = e.metadata().ok()?;
            Some((meta.modified().ok()?, weight(&meta), e.path()))
        })
        .collect();
    // Newest first: they are kept while they fit.
    entries.sort_by(|a, b| b.cmp(a));
    let mut kept = 0u64;
    for (_, weight, path) in &entries {
        kept = kept.saturating_add(*weight);
        if kept > budget {
            let _ = std::fs::remove_file(path);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    const SHA: &str = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

    fn cache(dir: &Path) -> ComponentCache {
        ComponentCache::new(dir.join("cache"))
    }

    fn owned(namespaces: &[&str]) -> Vec<String> {
        namespaces.iter().map(|n| (*n).to_owned()).collect()
    }

    #[test]
    fn a_components_namespaces_are_noted_and_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let cache = cache(dir.path());
        assert!(cache.namespaces(SHA).is_empty());
        let ui = owned(&["urn:ui#", "https://example.org/x/"]);
        cache.remember_namespaces(SHA, &ui);
        assert_eq!(cache.namespaces(SHA), ui);
        let file = dir.path().join(format!("cache/{SHA}.namespaces"));
        let written = std::fs::metadata(&file).unwrap().modified().unwrap();
        // The same again is not written again; others replace them.
        cache.remember_namespaces(SHA, &ui);
        assert_eq!(
            std::fs::metadata(&file).unwrap().modified().unwrap(),
            written
        );
        cache.remember_namespaces(SHA, &ui[..1]);
        assert_eq!(cache.namespaces(SHA), ui[..1]);
        cache.remember_namespaces(SHA, &[]);
        assert!(cache.namespaces(SHA).is_empty());
        // Not a sha256: nothing read or written, nowhere else.
        for name in ["", "../escape", "abc/def"] {
            cache.remember_namespaces(name, &ui);
            assert!(cache.namespaces(name).is_empty(), "{name:?}");
        }
        assert!(!dir.path().join("escape.namespaces").exists());
    }

    #[test]
    fn a_namespaces_file_is_only_a_bounded_hint() {
        let dir = tempfile::tempdir().unwrap();
        let cache = cache(dir.path());
        cache.remember_namespaces(SHA, &owned(&["urn:ui#"]));
        let file = dir.path().join(format!("cache/{SHA}.namespaces"));
        // Lines that are no namespace are left out; at most as many as a
        // generator may declare vocabularies.
        let many: String = (0..100).map(|i| format!("urn:n{i}#\n")).collect();
        std::fs::write(&file, format!("not one\nurn:no-end\n\n{many}")).unwrap();
        let read = cache.namespaces(SHA);
        assert_eq!(read.len(), crate::meta::MAX_VOCABULARIES);
        assert_eq!(read[0], "urn:n0#");
        // Read up to a bound, whatever its size.
        let huge = "urn:a#\n".repeat(1 << 20);
        std::fs::write(&file, huge).unwrap();
        assert_eq!(cache.namespaces(SHA).len(), crate::meta::MAX_VOCABULARIES);
        // Writable by others, a link, a FIFO: not read (nor blocked on).
        std::fs::write(&file, "urn:ui#\n").unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o666)).unwrap();
        assert!(cache.namespaces(SHA).is_empty());
        std::fs::remove_file(&file).unwrap();
        let elsewhere = dir.path().join("elsewhere");
        std::fs::write(&elsewhere, "urn:ui#\n").unwrap();
        std::os::unix::fs::symlink(&elsewhere, &file).unwrap();
        assert!(cache.namespaces(SHA).is_empty());
        std::fs::remove_file(&file).unwrap();
        rustix::fs::mknodat(
            rustix::fs::CWD,
            &file,
            rustix::fs::FileType::Fifo,
            rustix::fs::Mode::from_raw_mode(0o600),
            0,
        )
        .unwrap();
        assert!(cache.namespaces(SHA).is_empty());
        // A cache directory others may write is not used.
        std::fs::remove_file(&file).unwrap();
        let shared = dir.path().join("cache");
        std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o777)).unwrap();
        cache.remember_namespaces(SHA, &owned(&["urn:ui#"]));
        assert!(!file.exists());
        assert!(cache.namespaces(SHA).is_empty());
    }
}
