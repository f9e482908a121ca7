//! Compiled components on disk, so that a generator starts in milliseconds
//! after its first run.
//!
//! A cache file is named by the component's sha256 and the engine's
//! precompile-compatibility hash, is written atomically, and is only ever
//! read from the host's own cache directory: deserializing compiled code
//! is unsafe for bytes the host did not write.

use std::hash::{Hash, Hasher};
use std::path::PathBuf;

use wasmtime::Engine;
use wasmtime::component::Component;

pub(crate) struct ComponentCache {
    dir: PathBuf,
    engine_key: String,
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
        let name = format!("{sha256}-{}.cwasm", self.engine_key);
        let path = self.dir.join(&name);
        if path.is_file() {
            // SAFETY: the file is in the host's own cache directory, named
            // by the component's hash and this engine's compatibility hash,
            // and only this code writes there (atomically).
            if let Ok(component) = unsafe { Component::deserialize_file(engine, &path) } {
                return Ok(component);
            }
        }
        let component = Component::new(engine, bytes).map_err(|e| format!("{e:#}"))?;
        // A cache that cannot be written only costs time on the next run.
        if let Ok(serialized) = component.serialize() {
            let _ = self.write(&path, &serialized);
        }
        Ok(component)
    }

    /// Writes a cache file atomically: a temporary file in the cache
    /// directory, renamed into place, so a reader never sees part of one.
    fn write(&self, path: &std::path::Path, bytes: &[u8]) -> std::io::Result<()> {
        use std::io::Write;
        std::fs::create_dir_all(&self.dir)?;
        let mut file = tempfile::NamedTempFile::new_in(&self.dir)?;
        file.write_all(bytes)?;
        file.persist(path).map_err(|e| e.error)?;
        Ok(())
    }
}
