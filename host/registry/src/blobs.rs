//! The blob cache: manifests and components pulled from registries, each
//! stored under its digest and checked against it on every read, so that
//! a file changed in the cache is refused rather than run.

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::RegistryError;
use crate::artifact::digest_of;
use crate::reference::is_sha256_digest;

/// Blobs by digest under one directory: `DIR/sha256/HEX`.
#[derive(Debug, Clone)]
pub(crate) struct Blobs {
    dir: PathBuf,
}

impl Blobs {
    pub(crate) fn new(dir: &Path) -> Blobs {
        Blobs {
            dir: dir.to_owned(),
        }
    }

    /// Where the blob of `digest` lives; only a well-formed digest names
    /// a file, so that no digest reaches outside the cache.
    fn path(&self, digest: &str) -> Result<PathBuf, RegistryError> {
        match digest.strip_prefix("sha256:") {
            Some(hex) if is_sha256_digest(digest) => Ok(self.dir.join("sha256").join(hex)),
            _ => Err(RegistryError::Cache {
                path: self.dir.clone(),
                source: std::io::Error::new(
                    std::io::ErrorKind::InvalidInput,
                    format!(
                        "{} is not a sha256 digest",
                        seams_model::input_text::echo(digest)
                    ),
                ),
            }),
        }
    }

    /// The blob of `digest`, if the cache has it.
    ///
    /// # Errors
    ///
    /// It cannot be read, or its bytes do not have that digest.
    pub(crate) fn get(&self, digest: &str) -> Result<Option<Vec<u8>>, RegistryError> {
        let path = self.path(digest)?;
        let bytes = match std::fs::read(&path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(source) => return Err(RegistryError::Cache { path, source }),
        };
        let actual = digest_of(&bytes);
        if actual != digest {
            return Err(RegistryError::Tampered {
                path,
                expected: digest.to_owned(),
                actual,
            });
        }
        Ok(Some(bytes))
    }

    /// Stores `bytes`, whose digest the caller checked, atomically: a
    /// reader sees the whole blob or none.
    ///
    /// # Errors
    ///
    /// The cache directory cannot be written.
    pub(crate) fn put(&self, digest: &str, bytes: &[u8]) -> Result<(), RegistryError> {
        let path = self.path(digest)?;
        let dir = path.parent().expect("a blob path has a directory");
        let io = |source| RegistryError::Cache {
            path: path.clone(),
            source,
        };
        std::fs::create_dir_all(dir).map_err(io)?;
        let mut file = tempfile::NamedTempFile::new_in(dir).map_err(io)?;
        file.write_all(bytes).map_err(io)?;
        file.as_file().sync_all().map_err(io)?;
        file.persist(&path).map_err(|e| io(e.error))?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_blob_is_read_back_only_while_it_has_its_digest() {
        let dir = tempfile::tempdir().unwrap();
        let blobs = Blobs::new(dir.path());
        let digest = digest_of(b"component");
        assert!(blobs.get(&digest).unwrap().is_none());
        blobs.put(&digest, b"component").unwrap();
        assert_eq!(blobs.get(&digest).unwrap().unwrap(), b"component");
        std::fs::write(blobs.path(&digest).unwrap(), b"c0mponent").unwrap();
        let error = blobs.get(&digest).unwrap_err().to_string();
        assert!(error.contains("does not match its digest"), "{error}");
        let error = blobs
            .get("sha256:../../etc/passwd")
            .unwrap_err()
            .to_string();
        assert!(error.contains("is not a sha256 digest"), "{error}");
    }
}
