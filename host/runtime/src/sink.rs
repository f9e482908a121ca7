//! Where a run's files go as each is final. Held in memory, a generation
//! grows with its outputs and their sidecars (gigabytes for thousands of
//! pages that each list every other); written out (or only hashed) as each
//! render is traced, a run holds one render at a time.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use sha2::{Digest, Sha256};

use crate::output_path::TEMP_PREFIX;

/// What a run keeps of the files it renders.
#[derive(Debug, Clone, Default)]
pub enum Sink {
    /// Texts and traces in memory, for callers that read them.
    #[default]
    Memory,
    /// Each rendered file and its sidecar written, as soon as they are
    /// final, to temporary files in this directory (named with
    /// [`TEMP_PREFIX`], so that a killed run's are recognised as
    /// leftovers); only their hashes stay in memory.
    Files(PathBuf),
}

/// A finished file kept outside memory: its hash and length, and the
/// temporary file holding its bytes.
#[derive(Debug, Clone)]
pub struct Blob {
    sha256: String,
    len: usize,
    file: Arc<BlobFile>,
}

/// A temporary file of a [`Sink::Files`] directory, removed when the last
/// handle goes unless it was moved away first.
#[derive(Debug)]
struct BlobFile {
    dir: PathBuf,
    name: String,
}

impl Drop for BlobFile {
    fn drop(&mut self) {
        // Gone already when it was moved into place.
        let _ = std::fs::remove_file(self.dir.join(&self.name));
    }
}

/// Numbers this process's blob files.
static BLOB_COUNTER: AtomicU64 = AtomicU64::new(0);

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

    /// The directory and file name holding the bytes: a caller may rename
    /// the file (it is then no longer removed) or read it ([`Blob::read`]).
    pub fn file(&self) -> (&Path, &str) {
        (self.file.dir.as_path(), self.file.name.as_str())
    }

    /// The bytes, read back and checked against the hash.
    ///
    /// # Errors
    ///
    /// The file cannot be read, or changed since.
    pub fn read(&self) -> std::io::Result<Vec<u8>> {
        let path = self.file.dir.join(&self.file.name);
        let bytes = std::fs::read(&path)?;
        if seams_model::sha256_hex(&bytes) != self.sha256 {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!("{} changed since seams wrote it", path.display()),
            ));
        }
        Ok(bytes)
    }

    /// `bytes` in a new temporary file in `dir`.
    ///
    /// # Errors
    ///
    /// The file cannot be created or written.
    pub fn write(dir: &Path, bytes: &[u8]) -> std::io::Result<Blob> {
        let mut writer = BlobWriter::in_dir(dir.to_owned());
        writer.write(bytes)?;
        writer.finish()
    }
}

/// A [`Blob`] being written, piece by piece; its file is open only while
/// a piece is written, so that a run with thousands of pending sidecars
/// holds no descriptors.
#[derive(Debug)]
pub(crate) struct BlobWriter {
    hasher: Sha256,
    len: usize,
    file: BlobFile,
    created: bool,
}

impl BlobWriter {
    /// A new blob for `sink`; `None` for [`Sink::Memory`].
    pub(crate) fn new(sink: &Sink) -> Option<BlobWriter> {
        match sink {
            Sink::Files(dir) => Some(BlobWriter::in_dir(dir.clone())),
            Sink::Memory => None,
        }
    }

    fn in_dir(dir: PathBuf) -> BlobWriter {
        let name = format!(
            "{TEMP_PREFIX}{}-s{}",
            std::process::id(),
            BLOB_COUNTER.fetch_add(1, Ordering::Relaxed)
        );
        BlobWriter {
            hasher: Sha256::new(),
            len: 0,
            file: BlobFile { dir, name },
            created: false,
        }
    }

    /// Appends `bytes`.
    pub(crate) fn write(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        use std::os::unix::fs::OpenOptionsExt;
        let mut options = std::fs::OpenOptions::new();
        if self.created {
            options.append(true);
        } else {
            // Private, and never a file (or symlink) that was there.
            options.write(true).create_new(true).mode(0o600);
        }
        let mut file = options.open(self.file.dir.join(&self.file.name))?;
        self.created = true;
        file.write_all(bytes)?;
        self.hasher.update(bytes);
        self.len += bytes.len();
        Ok(())
    }

    /// The finished blob.
    pub(crate) fn finish(mut self) -> std::io::Result<Blob> {
        if !self.created {
            self.write(b"")?;
        }
        let BlobWriter {
            hasher, len, file, ..
        } = self;
        Ok(Blob {
            sha256: format!("{:x}", hasher.finalize()),
            len,
            file: Arc::new(file),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_blob_keeps_its_bytes_until_its_last_handle_goes() {
        let dir = tempfile::tempdir().unwrap();
        let bytes = b"<p>hello</p>\n";
        let expected = seams_model::sha256_hex(bytes);

        assert!(BlobWriter::new(&Sink::Memory).is_none());

        let kept = Blob::write(dir.path(), bytes).unwrap();
        assert_eq!((kept.sha256(), kept.len()), (expected.as_str(), 13));
        let (in_dir, name) = kept.file();
        assert_eq!(in_dir, dir.path());
        assert!(name.starts_with(TEMP_PREFIX), "{name}");
        assert_eq!(kept.read().unwrap(), bytes);
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
    fn a_blob_written_in_pieces_hashes_the_whole() {
        let dir = tempfile::tempdir().unwrap();
        let mut writer = BlobWriter::new(&Sink::Files(dir.path().to_owned())).unwrap();
        writer.write(b"head").unwrap();
        writer.write(b", tail\n").unwrap();
        let blob = writer.finish().unwrap();
        assert_eq!(blob.sha256(), seams_model::sha256_hex(b"head, tail\n"));
        assert_eq!(blob.read().unwrap(), b"head, tail\n");
    }
}
