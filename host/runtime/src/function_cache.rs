//! Compiled functions on disk, shared by every component, so that the
//! interpreter inside a Python or JavaScript generator (CPython,
//! SpiderMonkey: thousands of functions around the author's few) is
//! compiled once per machine rather than once per component.
//!
//! Cranelift keys a function by the sha256 of its body and the compiler's
//! settings (not by the indices of what it calls) and takes back the
//! machine code it stored under that key. That code runs as it is, so
//! entries are held to the compiled-component cache's rules (`cache.rs`):
//! a segment is read only when it is a private regular file in the private
//! cache directory, and used only when its trailer holds the format and the
//! blake3 hash of the bytes before it.
//!
//! What one compile adds is written after it as one segment,
//! `<engine>-<hash>.functions`: entries of a 32-byte key, a 4-byte length
//! and the value, sorted by key. Segments are indexed when a compile first
//! asks (keys and offsets in memory, values read when asked for); the
//! least recently used go once all of them hold more than [`MAX_BYTES`].

use std::borrow::Cow;
use std::collections::HashMap;
use std::fs::File;
use std::io::{BufReader, Read};
use std::os::unix::fs::FileExt;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock, RwLock};

use crate::cache::{MAGIC, TRAILER, evict_beyond, open_private, private_dir, write_entry};

/// The most bytes all segments together keep: CPython's functions take
/// about 60 MB here and SpiderMonkey's about 110 MB.
pub(crate) const MAX_BYTES: u64 = 1 << 30;

/// The most bytes one compile adds (a larger remainder is not kept).
const MAX_SEGMENT_BYTES: usize = 512 << 20;

/// The most bytes of one compiled function.
const MAX_VALUE_BYTES: u32 = 64 << 20;

/// The extension of segment files.
const EXTENSION: &str = "functions";

/// A function's key: Cranelift's sha256.
type Key = [u8; 32];

/// Cranelift's compiled functions, kept across processes in a cache
/// directory (see the module's doc).
pub(crate) struct FunctionCache {
    dir: PathBuf,
    /// The most bytes all segments keep: [`MAX_BYTES`] but in tests.
    max_bytes: u64,
    /// Names the engine whose functions these are (see
    /// [`crate::cache::engine_key`]); set when the engine is made.
    engine: OnceLock<String>,
    /// The segments on disk, indexed when first asked.
    index: RwLock<Option<Index>>,
    /// What compiles added and no segment holds yet.
    fresh: Mutex<Fresh>,
    hits: AtomicU64,
    compiled: AtomicU64,
    /// Set once a compile failed on a stored function: nothing more is
    /// read from the segments.
    distrusted: AtomicBool,
}

impl std::fmt::Debug for FunctionCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FunctionCache")
            .field("dir", &self.dir)
            .finish_non_exhaustive()
    }
}

#[derive(Default)]
struct Fresh {
    entries: HashMap<Key, Vec<u8>>,
    bytes: usize,
}

#[derive(Default)]
struct Index {
    segments: Vec<Segment>,
    entries: HashMap<Key, Location>,
}

struct Segment {
    file: File,
    path: PathBuf,
    /// Whether a compile took a function from it since it was last kept
    /// as recently used.
    used: AtomicBool,
}

#[derive(Clone, Copy)]
struct Location {
    segment: usize,
    offset: u64,
    len: u32,
}

impl FunctionCache {
    /// A cache in `dir` (the compiled-component cache's directory).
    pub(crate) fn new(dir: PathBuf) -> Self {
        FunctionCache {
            dir,
            max_bytes: MAX_BYTES,
            engine: OnceLock::new(),
            index: RwLock::new(None),
            fresh: Mutex::new(Fresh::default()),
            hits: AtomicU64::new(0),
            compiled: AtomicU64::new(0),
            distrusted: AtomicBool::new(false),
        }
    }

    /// Names the engine the cache serves: only its segments are read.
    pub(crate) fn set_engine(&self, key: String) {
        let _ = self.engine.set(key);
    }

    /// How many functions compiles took from the cache, and how many they
    /// compiled, in this process.
    #[cfg(test)]
    pub(crate) fn counts(&self) -> (u64, u64) {
        (
            self.hits.load(Ordering::Relaxed),
            self.compiled.load(Ordering::Relaxed),
        )
    }

    fn prefix(&self) -> Option<String> {
        self.engine.get().map(|key| format!("{key}-"))
    }

    fn lookup(&self, key: &Key) -> Option<Vec<u8>> {
        {
            let index = self.index.read().ok()?;
            if let Some(index) = index.as_ref() {
                return index.value(key);
            }
        }
        let mut index = self.index.write().ok()?;
        let index = index.get_or_insert_with(|| self.read_index());
        index.value(key)
    }

    fn read_index(&self) -> Index {
        let mut index = Index::default();
        let (Some(dir), Some(prefix)) = (private_dir(&self.dir), self.prefix()) else {
            return index;
        };
        let Ok(listing) = std::fs::read_dir(dir) else {
            return index;
        };
        let mut paths: Vec<PathBuf> = listing
            .filter_map(Result::ok)
            .filter(|e| {
                e.file_name()
                    .to_str()
                    .is_some_and(|n| n.starts_with(&prefix))
            })
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == EXTENSION))
            .collect();
        paths.sort();
        for path in paths {
            index.add(path, self.max_bytes);
        }
        index
    }

    /// Stops taking functions from the segments and removes this engine's
    /// (and forgets what the failed compile added): a compile failed on
    /// one of them.
    pub(crate) fn distrust(&self) {
        self.distrusted.store(true, Ordering::SeqCst);
        if let Ok(mut fresh) = self.fresh.lock() {
            *fresh = Fresh::default();
        }
        if let Ok(mut index) = self.index.write() {
            let segments = index.take().unwrap_or_else(|| self.read_index()).segments;
            for segment in segments {
                let _ = std::fs::remove_file(&segment.path);
            }
        }
    }

    /// Writes what compiles added since the last call as one segment, and
    /// keeps the segments they took functions from as recently used. A
    /// cache that cannot be written only costs a later compile time.
    pub(crate) fn persist(&self) {
        let fresh = match self.fresh.lock() {
            Ok(mut fresh) => std::mem::take(&mut *fresh),
            Err(_) => return,
        };
        let (Some(dir), Some(prefix)) = (private_dir(&self.dir), self.prefix()) else {
            return;
        };
        if let Ok(index) = self.index.read()
            && let Some(index) = index.as_ref()
        {
            index.keep_used();
        }
        if fresh.entries.is_empty() {
            return;
        }
        let mut entries: Vec<(Key, Vec<u8>)> = fresh.entries.into_iter().collect();
        entries.sort_unstable_by_key(|a| a.0);
        let mut payload = Vec::with_capacity(fresh.bytes + entries.len() * 36);
        for (key, value) in &entries {
            payload.extend_from_slice(key);
            payload.extend_from_slice(&(value.len() as u32).to_le_bytes());
            payload.extend_from_slice(value);
        }
        drop(entries);
        let hash = blake3::hash(&payload).to_hex();
        let name = format!("{prefix}{}.{EXTENSION}", &hash[..32]);
        if write_entry(dir, &name, &payload).is_err() {
            return;
        }
        drop(payload);
        let _ = evict_beyond(dir, EXTENSION, self.max_bytes, |meta| meta.len());
        // Later compiles in this process read it from disk too.
        if let Ok(mut index) = self.index.write()
            && let Some(index) = index.as_mut()
        {
            index.add(dir.join(name), self.max_bytes);
        }
    }
}

impl wasmtime::CacheStore for FunctionCache {
    fn get(&self, key: &[u8]) -> Option<Cow<'_, [u8]>> {
        if self.distrusted.load(Ordering::SeqCst) {
            return None;
        }
        let key: &Key = key.try_into().ok()?;
        if let Some(value) = self.lookup(key) {
            self.hits.fetch_add(1, Ordering::Relaxed);
            return Some(Cow::Owned(value));
        }
        // The same function twice in one compile.
        let fresh = self.fresh.lock().ok()?;
        fresh.entries.get(key).map(|v| Cow::Owned(v.clone()))
    }

    fn insert(&self, key: &[u8], value: Vec<u8>) -> bool {
        self.compiled.fetch_add(1, Ordering::Relaxed);
        let (Ok(key), Ok(mut fresh)) = (Key::try_from(key), self.fresh.lock()) else {
            return false;
        };
        if value.len() > MAX_VALUE_BYTES as usize || fresh.bytes + value.len() > MAX_SEGMENT_BYTES {
            return false;
        }
        fresh.bytes += value.len();
        fresh.entries.insert(key, value);
        true
    }
}

impl Index {
    fn value(&self, key: &Key) -> Option<Vec<u8>> {
        let location = self.entries.get(key)?;
        let segment = self.segments.get(location.segment)?;
        let mut value = vec![0; location.len as usize];
        segment
            .file
            .read_exact_at(&mut value, location.offset)
            .ok()?;
        segment.used.store(true, Ordering::Relaxed);
        Some(value)
    }

    /// Indexes the segment at `path` if it is one seams wrote (see the
    /// module's doc) and at most `max_bytes` long; otherwise leaves it out
    /// whole.
    fn add(&mut self, path: PathBuf, max_bytes: u64) {
        let Some((file, meta)) = open_private(&path) else {
            return;
        };
        if meta.len() > max_bytes {
            return;
        }
        let Some(found) = read_segment(&file, meta.len()) else {
            return;
        };
        let segment = self.segments.len();
        self.segments.push(Segment {
            file,
            path,
            used: AtomicBool::new(false),
        });
        for (key, offset, len) in found {
            self.entries.entry(key).or_insert(Location {
                segment,
                offset,
                len,
            });
        }
    }

    /// Marks the segments compiles took functions from as recently used,
    /// so that eviction takes others first.
    fn keep_used(&self) {
        let now = std::time::SystemTime::now();
        for segment in &self.segments {
            if segment.used.swap(false, Ordering::Relaxed) {
                let _ = File::options()
                    .write(true)
                    .open(&segment.path)
                    .and_then(|f| f.set_modified(now));
            }
        }
    }
}

/// The entries of a segment `len` bytes long, as (key, offset, length),
/// when its layout holds and its trailer matches; `None` otherwise.
fn read_segment(file: &File, len: u64) -> Option<Vec<(Key, u64, u32)>> {
    let payload = len.checked_sub(TRAILER)?;
    let mut reader = BufReader::new(file.take(payload));
    let mut hasher = blake3::Hasher::new();
    let mut found = Vec::new();
    let mut offset = 0u64;
    while offset < payload {
        let mut head = [0u8; 36];
        reader.read_exact(&mut head).ok()?;
        hasher.update(&head);
        let key: Key = head[..32].try_into().ok()?;
        let value_len = u32::from_le_bytes(head[32..].try_into().ok()?);
        let end = offset + 36 + u64::from(value_len);
        if value_len > MAX_VALUE_BYTES || end > payload {
            return None;
        }
        let copied = std::io::copy(&mut (&mut reader).take(value_len.into()), &mut hasher).ok()?;
        if copied != u64::from(value_len) {
            return None;
        }
        found.push((key, offset + 36, value_len));
        offset = end;
    }
    let mut trailer = [0u8; TRAILER as usize];
    file.read_exact_at(&mut trailer, payload).ok()?;
    (trailer.starts_with(MAGIC) && trailer[MAGIC.len()..] == *hasher.finalize().as_bytes())
        .then_some(found)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;
    use std::path::Path;
    use wasmtime::CacheStore;

    fn key(n: u8) -> Key {
        [n; 32]
    }

    fn cache(dir: &Path) -> FunctionCache {
        let cache = FunctionCache::new(dir.join("cache"));
        cache.set_engine("e1".to_owned());
        cache
    }

    fn segments(dir: &Path) -> Vec<PathBuf> {
        let Ok(listing) = std::fs::read_dir(dir.join("cache")) else {
            return Vec::new();
        };
        let mut paths: Vec<PathBuf> = listing
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == EXTENSION))
            .collect();
        paths.sort();
        paths
    }

    #[test]
    fn functions_a_compile_added_are_read_back_by_another_process() {
        let dir = tempfile::tempdir().unwrap();
        let first = cache(dir.path());
        assert!(first.get(&key(1)).is_none());
        assert!(first.insert(&key(1), b"one".to_vec()));
        assert!(first.insert(&key(2), vec![7; 100_000]));
        // Not a Cranelift key: neither kept nor found.
        assert!(!first.insert(b"short", b"x".to_vec()));
        assert!(first.get(b"short").is_none());
        // Found in this compile before it is written.
        assert_eq!(first.get(&key(1)).unwrap().as_ref(), b"one");
        first.persist();
        let written = segments(dir.path());
        assert_eq!(written.len(), 1);
        let name = written[0].file_name().unwrap().to_str().unwrap();
        assert!(name.starts_with("e1-"), "{name}");
        let mode = std::fs::metadata(&written[0]).unwrap().permissions().mode();
        assert_eq!(mode & 0o077, 0, "{mode:o}");
        // Nothing new: no segment written.
        first.persist();
        assert_eq!(segments(dir.path()).len(), 1);

        let second = cache(dir.path());
        assert_eq!(second.get(&key(1)).unwrap().as_ref(), b"one");
        assert_eq!(second.get(&key(2)).unwrap().as_ref(), &[7; 100_000][..]);
        assert!(second.get(&key(3)).is_none());
        assert_eq!(second.counts(), (2, 0));
        // What a second compile adds is found by the next one, in this
        // process and in others.
        assert!(second.insert(&key(3), b"three".to_vec()));
        second.persist();
        assert_eq!(segments(dir.path()).len(), 2);
        assert_eq!(second.get(&key(3)).unwrap().as_ref(), b"three");
        assert_eq!(cache(dir.path()).get(&key(3)).unwrap().as_ref(), b"three");
        // Another engine's functions are not read.
        let other = FunctionCache::new(dir.path().join("cache"));
        other.set_engine("e2".to_owned());
        assert!(other.get(&key(1)).is_none());
    }

    #[test]
    fn a_segment_is_used_only_as_seams_wrote_it_in_a_private_place() {
        let dir = tempfile::tempdir().unwrap();
        let first = cache(dir.path());
        first.insert(&key(1), b"machine code".to_vec());
        first.persist();
        let path = segments(dir.path()).remove(0);
        let good = std::fs::read(&path).unwrap();
        let found = |label: &str| {
            let found = cache(dir.path()).get(&key(1)).is_some();
            eprintln!("{label}: {found}");
            found
        };
        assert!(found("as written"));
        // A byte changed anywhere, cut short, grown, emptied: not used.
        let mut flipped = good.clone();
        flipped[40] ^= 1;
        let mut long_value = good.clone();
        long_value[32..36].copy_from_slice(&u32::MAX.to_le_bytes());
        for (label, bytes) in [
            ("flipped", flipped),
            ("cut", good[..good.len() - 1].to_vec()),
            ("grown", [&good[..], b"x"].concat()),
            ("empty", Vec::new()),
            ("length past the end", long_value),
        ] {
            std::fs::write(&path, &bytes).unwrap();
            assert!(!found(label), "{label}");
        }
        // Writable by others, a link to a good one, in a directory others
        // may write: not used.
        std::fs::write(&path, &good).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o666)).unwrap();
        assert!(!found("writable by others"));
        std::fs::remove_file(&path).unwrap();
        let elsewhere = dir.path().join("elsewhere");
        std::fs::write(&elsewhere, &good).unwrap();
        std::os::unix::fs::symlink(&elsewhere, &path).unwrap();
        assert!(!found("a link"));
        std::fs::remove_file(&path).unwrap();
        std::fs::write(&path, &good).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        assert!(found("put back"));
        let shared = dir.path().join("cache");
        std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o777)).unwrap();
        assert!(!found("shared directory"));
    }

    #[test]
    fn the_least_recently_used_segments_go_beyond_the_bound() {
        let dir = tempfile::tempdir().unwrap();
        let bounded = || FunctionCache {
            max_bytes: 2_500,
            ..cache(dir.path())
        };
        let long_ago =
            |seconds| std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(seconds);
        // Two segments of about 1,000 bytes, written long ago; a compile
        // then takes a function from the older one and adds a third, which
        // passes the bound.
        for (n, written) in [(1u8, long_ago(1_000)), (2, long_ago(2_000))] {
            let before = segments(dir.path());
            let compile = bounded();
            compile.insert(&key(n), vec![n; 1_000]);
            compile.persist();
            let new = segments(dir.path())
                .into_iter()
                .find(|p| !before.contains(p))
                .unwrap();
            let file = File::options().write(true).open(&new).unwrap();
            file.set_modified(written).unwrap();
        }
        let compile = bounded();
        assert!(compile.get(&key(1)).is_some());
        compile.insert(&key(3), vec![3; 1_000]);
        compile.persist();
        let left = bounded();
        assert!(left.get(&key(1)).is_some(), "used: kept");
        assert!(left.get(&key(2)).is_none(), "least recently used: gone");
        assert!(left.get(&key(3)).is_some(), "newest: kept");
        assert_eq!(segments(dir.path()).len(), 2);
    }
}
