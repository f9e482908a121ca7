//! Where a run's files go as each is final. Held in memory, a generation
//! grows with its outputs and their sidecars (gigabytes for thousands of
//! pages that each list every other); written out (or only hashed) as each
//! render is traced, a run holds one render at a time.
//!
//! Writing every render out costs a file each (create, write, remove when
//! it is dropped), which is most of the work of a run of many small
//! renders. So a run holds small renders (up to [`SMALL_BLOB`] each) in
//! memory, up to [`HOLD_BYTES`] in all, and writes out the rest as they
//! come: a large render is written while the run goes on, not after it,
//! and its bytes are not held twice over (measured at expense x100:
//! holding large renders too cost 10-15 % more time and 35 MB more
//! memory than writing them).

use std::borrow::Cow;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};

use sha2::{Digest, Sha256};

use crate::flush::Flusher;
use crate::output_path::TEMP_PREFIX;

/// How many bytes of renders a [`Sink::Files`] run holds in memory, by
/// default, before it writes further ones to files.
pub const HOLD_BYTES: usize = 16 << 20;

/// The largest blob a run holds in memory: one larger goes to a file.
pub const SMALL_BLOB: usize = 4 << 10;

/// What a run keeps of the files it renders.
#[derive(Debug, Clone, Default)]
pub enum Sink {
    /// Texts and traces in memory, for callers that read them.
    #[default]
    Memory,
    /// Each rendered file and its sidecar kept, as soon as they are final,
    /// as a [`Blob`]: in memory when it is small ([`SMALL_BLOB`]) and the
    /// run holds fewer than `hold_bytes`, else in a temporary file in `dir` (named with
    /// [`TEMP_PREFIX`], so that a killed run's are recognised as
    /// leftovers). Only their hashes and handles stay in the outputs.
    Files {
        /// Where the temporary files go.
        dir: PathBuf,
        /// How many bytes of blobs a run may hold in memory at once.
        hold_bytes: usize,
    },
}

/// One run's [`Sink::Files`]: its directory, and the bytes its blobs hold
/// in memory now.
#[derive(Debug, Clone)]
pub(crate) struct Spill {
    dir: PathBuf,
    hold_bytes: usize,
    held: Arc<AtomicUsize>,
    /// Syncs what the run writes to files, in the background.
    flusher: Arc<Flusher>,
}

impl Spill {
    /// A fresh count for one run; `None` for [`Sink::Memory`].
    pub(crate) fn of(sink: &Sink) -> Option<Spill> {
        match sink {
            Sink::Memory => None,
            Sink::Files { dir, hold_bytes } => Some(Spill {
                dir: dir.clone(),
                hold_bytes: *hold_bytes,
                held: Arc::new(AtomicUsize::new(0)),
                flusher: Arc::new(Flusher::new(dir.clone())),
            }),
        }
    }

    /// Where its files go.
    pub(crate) fn dir(&self) -> &Path {
        &self.dir
    }

    /// Counts `bytes` as held, if the run may hold that many more.
    fn reserve(&self, bytes: usize) -> bool {
        self.held
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |held| {
                held.checked_add(bytes)
                    .filter(|&sum| sum <= self.hold_bytes)
            })
            .is_ok()
    }
}

/// A finished file kept outside the run's outputs: its hash and length,
/// and its bytes, held in memory or in a temporary file.
#[derive(Debug, Clone)]
pub struct Blob {
    sha256: String,
    len: usize,
    place: Arc<Place>,
}

#[derive(Debug)]
enum Place {
    Held(Held),
    File(BlobFile),
}

/// Bytes held in memory, counted in their run's [`Spill`] until dropped.
#[derive(Debug)]
struct Held {
    bytes: Vec<u8>,
    held: Arc<AtomicUsize>,
}

impl Drop for Held {
    fn drop(&mut self) {
        self.held.fetch_sub(self.bytes.len(), Ordering::Relaxed);
    }
}

/// A temporary file of a [`Sink::Files`] directory, removed when the last
/// handle goes unless it was moved away first.
#[derive(Debug)]
struct BlobFile {
    dir: PathBuf,
    name: String,
    /// Its metadata right after the last write to it.
    written: Option<std::fs::Metadata>,
    /// Renamed away by its owner ([`Blob::renamed`]): its name is no
    /// longer its own.
    renamed: AtomicBool,
}

impl Drop for BlobFile {
    fn drop(&mut self) {
        if !self.renamed.load(Ordering::Relaxed) {
            let _ = std::fs::remove_file(self.dir.join(&self.name));
        }
    }
}

/// Numbers this process's blob files.
static BLOB_COUNTER: AtomicU64 = AtomicU64::new(0);

impl BlobFile {
    fn new(dir: PathBuf) -> BlobFile {
        let name = format!(
            "{TEMP_PREFIX}{}-s{}",
            std::process::id(),
            BLOB_COUNTER.fetch_add(1, Ordering::Relaxed)
        );
        BlobFile {
            dir,
            name,
            written: None,
            renamed: AtomicBool::new(false),
        }
    }

    /// Appends `pieces` in one opening, creating the file first when
    /// `create`, and notes the file's metadata after the write; starts
    /// the file's writeback when `writeback`. A run's background syncs,
    /// once they run, write its files out many at once: started per file
    /// as well, the writeback cost the finishing threads that submitted
    /// it (at expense x1000 traced, six alternating pairs of runs took
    /// 10.1 to 14.5 s with it, 9.0 to 13.9 s without, a second less
    /// system time each); before them, a small run's last sync finds its
    /// files written (at one copy, 20.5 and 20.8 ms with it, 23.6 and 22.7
    /// ms without).
    fn append(&mut self, create: bool, pieces: &[&[u8]], writeback: bool) -> std::io::Result<()> {
        use std::os::unix::fs::OpenOptionsExt;
        let mut options = std::fs::OpenOptions::new();
        if create {
            // Never a file (or symlink) that was there. The mode is what
            // any output gets (0666 less the umask): this file becomes
            // the output when the plan adopts it, so a private mode would
            // make large outputs unreadable to others where small ones
            // are readable.
            options.write(true).create_new(true).mode(0o666);
        } else {
            options.append(true);
        }
        let mut file = options.open(self.dir.join(&self.name))?;
        for piece in pieces {
            file.write_all(piece)?;
        }
        if writeback {
            start_writeback(&file);
        }
        // Taken from the descriptor written through: a later write by
        // anyone changes the modification time it holds (see
        // `Blob::written`).
        self.written = Some(file.metadata()?);
        Ok(())
    }
}

/// Starts writing `file`'s new bytes to disk, without waiting for them, so
/// that the disk works while the run goes on (the closing sync of a run
/// too small for the background syncs of [`Flusher`] then finds them
/// written, and only flushes the disk's cache).
#[cfg(target_os = "linux")]
fn start_writeback(file: &std::fs::File) {
    use std::os::fd::AsRawFd;
    // SAFETY: the descriptor is open for the call; the call only queues
    // the file's dirty pages for writing and touches no memory of ours.
    // Advisory: an error leaves the bytes to the final sync.
    let _ = unsafe { libc::sync_file_range(file.as_raw_fd(), 0, 0, libc::SYNC_FILE_RANGE_WRITE) };
}

#[cfg(not(target_os = "linux"))]
fn start_writeback(_file: &std::fs::File) {}

impl Blob {
    /// The sha256 of the bytes, lowercase hex.
    pub fn sha256(&self) -> &str {
        &self.sha256
    }

    /// Their length.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there are no bytes.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The directory and file name holding the bytes, when they are in a
    /// file: a caller may rename the file (and then says so,
    /// [`Blob::renamed`]) or read it ([`Blob::read`]).
    pub fn file(&self) -> Option<(&Path, &str)> {
        match &*self.place {
            Place::File(file) => Some((file.dir.as_path(), file.name.as_str())),
            Place::Held(_) => None,
        }
    }

    /// Records that the caller renamed the file away: it is no longer
    /// removed by its old name when the blob goes (where, by then, another
    /// file may be).
    pub fn renamed(&self) {
        if let Place::File(file) = &*self.place {
            file.renamed.store(true, Ordering::Relaxed);
        }
    }

    /// The file's metadata as it was right after seams's last write to it,
    /// when the bytes are in a file: while the file keeps that inode,
    /// size and modification time, no one else wrote to it (short of
    /// setting its times back, which only its owner may do).
    pub fn written(&self) -> Option<&std::fs::Metadata> {
        match &*self.place {
            Place::File(file) => file.written.as_ref(),
            Place::Held(_) => None,
        }
    }

    /// The bytes; read back, and checked against the hash, when in a file.
    ///
    /// # Errors
    ///
    /// The file cannot be read, or changed since.
    pub fn read(&self) -> std::io::Result<Cow<'_, [u8]>> {
        let file = match &*self.place {
            Place::Held(held) => return Ok(Cow::Borrowed(&held.bytes)),
            Place::File(file) => file,
        };
        let path = file.dir.join(&file.name);
        let bytes = std::fs::read(&path)?;
        if seams_model::sha256_hex(&bytes) != self.sha256 {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!("{} changed since seams wrote it", path.display()),
            ));
        }
        Ok(Cow::Owned(bytes))
    }

    /// `bytes` in a new temporary file in `dir`.
    ///
    /// # Errors
    ///
    /// The file cannot be created or written.
    pub fn write(dir: &Path, bytes: &[u8]) -> std::io::Result<Blob> {
        let mut file = BlobFile::new(dir.to_owned());
        file.append(true, &[bytes], true)?;
        Ok(Blob {
            sha256: seams_model::sha256_hex(bytes),
            len: bytes.len(),
            place: Arc::new(Place::File(file)),
        })
    }
}

/// A [`Blob`] being written, piece by piece: held in memory while its run
/// may hold it, else in a file that is open only while a piece is written,
/// so that a run with thousands of pending sidecars holds no descriptors.
#[derive(Debug)]
pub(crate) struct BlobWriter {
    hasher: Sha256,
    len: usize,
    spill: Spill,
    place: Place,
}

impl BlobWriter {
    /// A new, empty blob of `spill`'s run.
    pub(crate) fn new(spill: &Spill) -> BlobWriter {
        BlobWriter {
            hasher: Sha256::new(),
            len: 0,
            spill: spill.clone(),
            place: Place::Held(Held {
                bytes: Vec::new(),
                held: spill.held.clone(),
            }),
        }
    }

    /// Appends `bytes`; the first piece that makes the blob large, or that
    /// the run may not hold, moves the blob to a file.
    pub(crate) fn write(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        match &mut self.place {
            Place::Held(held)
                if held.bytes.len() + bytes.len() <= SMALL_BLOB
                    && self.spill.reserve(bytes.len()) =>
            {
                held.bytes.extend_from_slice(bytes);
            }
            Place::Held(held) => {
                let mut file = BlobFile::new(self.spill.dir.clone());
                let writeback = !self.spill.flusher.syncing();
                file.append(true, &[&held.bytes, bytes], writeback)?;
                self.spill.flusher.wrote(held.bytes.len() + bytes.len());
                // Dropping what was held releases it.
                self.place = Place::File(file);
            }
            Place::File(file) => {
                file.append(false, &[bytes], !self.spill.flusher.syncing())?;
                self.spill.flusher.wrote(bytes.len());
            }
        }
        self.hasher.update(bytes);
        self.len += bytes.len();
        Ok(())
    }

    /// The finished blob.
    pub(crate) fn finish(self) -> Blob {
        Blob {
            sha256: format!("{:x}", self.hasher.finalize()),
            len: self.len,
            place: Arc::new(self.place),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spill(dir: &Path, hold_bytes: usize) -> Spill {
        Spill::of(&Sink::Files {
            dir: dir.to_owned(),
            hold_bytes,
        })
        .unwrap()
    }

    #[test]
    fn a_blob_keeps_its_bytes_until_its_last_handle_goes() {
        let dir = tempfile::tempdir().unwrap();
        let bytes = b"<p>hello</p>\n";
        let expected = seams_model::sha256_hex(bytes);

        assert!(Spill::of(&Sink::Memory).is_none());

        let kept = Blob::write(dir.path(), bytes).unwrap();
        assert_eq!((kept.sha256(), kept.len()), (expected.as_str(), 13));
        let (in_dir, name) = kept.file().unwrap();
        assert_eq!(in_dir, dir.path());
        assert!(name.starts_with(TEMP_PREFIX), "{name}");
        assert_eq!(&*kept.read().unwrap(), bytes);
        let path = dir.path().join(name);
        // Changed behind seams's back: refused.
        std::fs::write(&path, b"other").unwrap();
        assert!(kept.read().is_err());
        // The last handle removes the file.
        let copy = kept.clone();
        drop(kept);
        assert!(path.exists());
        drop(copy);
        assert!(!path.exists());
    }

    #[test]
    fn a_run_holds_blobs_up_to_its_allowance_and_writes_the_rest() {
        let dir = tempfile::tempdir().unwrap();
        let spill = spill(dir.path(), 10);
        let files = || std::fs::read_dir(dir.path()).unwrap().count();

        // Held: six bytes, in two pieces.
        let mut first = BlobWriter::new(&spill);
        first.write(b"abc").unwrap();
        first.write(b"def").unwrap();
        let first = first.finish();
        assert!(first.file().is_none());
        assert_eq!(&*first.read().unwrap(), b"abcdef");
        assert_eq!(first.sha256(), seams_model::sha256_hex(b"abcdef"));

        // Four more fit; the piece after them does not, and moves the
        // blob (all of it) to a file.
        let mut second = BlobWriter::new(&spill);
        second.write(b"ghij").unwrap();
        assert_eq!(files(), 0);
        second.write(b"k").unwrap();
        let second = second.finish();
        assert!(second.file().is_some());
        assert_eq!(&*second.read().unwrap(), b"ghijk");
        assert_eq!(second.sha256(), seams_model::sha256_hex(b"ghijk"));
        assert_eq!(second.len(), 5);
        assert_eq!(files(), 1);

        // What the second released is free again; the first still holds.
        let mut third = BlobWriter::new(&spill);
        third.write(b"1234").unwrap();
        assert!(third.finish().file().is_none());
        let mut fourth = BlobWriter::new(&spill);
        fourth.write(b"12345").unwrap();
        assert!(fourth.finish().file().is_some());

        // Dropping the first frees its six bytes.
        drop(first);
        let mut fifth = BlobWriter::new(&spill);
        fifth.write(b"123456").unwrap();
        assert!(fifth.finish().file().is_none());

        drop(second);
        assert_eq!(files(), 0, "every file went with its blob");
    }

    #[test]
    #[cfg(target_os = "linux")]
    fn what_goes_to_files_is_counted_for_the_background_syncs() {
        let dir = tempfile::tempdir().unwrap();
        let spill = spill(dir.path(), HOLD_BYTES);
        // Held in memory: not counted.
        let mut small = BlobWriter::new(&spill);
        small.write(b"small").unwrap();
        let _small = small.finish();
        // Written to files, in pieces, up to the threshold: a sync asked.
        let piece = vec![b'x'; 1 << 20];
        let mut large = BlobWriter::new(&spill);
        for _ in 0..(crate::flush::EVERY >> 20) - 1 {
            large.write(&piece).unwrap();
        }
        assert!(!spill.flusher.asked());
        assert!(
            !spill.flusher.syncing(),
            "files' writeback started as written"
        );
        large.write(&piece).unwrap();
        assert!(spill.flusher.asked());
        assert!(spill.flusher.syncing(), "the syncs write the files out");
        assert_eq!(large.finish().len(), crate::flush::EVERY as usize);
    }

    #[test]
    fn a_large_blob_goes_to_a_file_whatever_the_allowance() {
        let dir = tempfile::tempdir().unwrap();
        let spill = spill(dir.path(), HOLD_BYTES);
        let mut small = BlobWriter::new(&spill);
        small.write(&[b'x'; SMALL_BLOB]).unwrap();
        let small = small.finish();
        assert!(small.file().is_none());
        let mut grown = BlobWriter::new(&spill);
        grown.write(&[b'x'; SMALL_BLOB]).unwrap();
        grown.write(b"y").unwrap();
        let grown = grown.finish();
        assert!(grown.file().is_some());
        assert_eq!(grown.len(), SMALL_BLOB + 1);
        assert_eq!(grown.read().unwrap().last(), Some(&b'y'));
        // Its metadata is the file's after the last piece; a held blob
        // has none.
        let (dir_path, name) = grown.file().unwrap();
        let on_disk = std::fs::metadata(dir_path.join(name)).unwrap();
        let written = grown.written().unwrap();
        use std::os::unix::fs::MetadataExt;
        assert_eq!(
            (written.ino(), written.size(), written.mtime_nsec()),
            (on_disk.ino(), on_disk.size(), on_disk.mtime_nsec())
        );
        assert_eq!(written.size(), SMALL_BLOB as u64 + 1);
        assert!(small.written().is_none());
        // What it held before it grew is free again; the small one holds.
        assert_eq!(spill.held.load(Ordering::Relaxed), SMALL_BLOB);
        drop(small);
        assert_eq!(spill.held.load(Ordering::Relaxed), 0);
    }

    #[test]
    fn an_empty_blob_is_held_and_a_zero_allowance_writes_every_byte() {
        let dir = tempfile::tempdir().unwrap();
        let none = spill(dir.path(), 0);
        let empty = BlobWriter::new(&none).finish();
        assert!(empty.is_empty() && empty.file().is_none());
        let mut one = BlobWriter::new(&none);
        one.write(b"x").unwrap();
        let one = one.finish();
        assert_eq!(&*one.read().unwrap(), b"x");
        assert!(one.file().is_some());
    }
}
