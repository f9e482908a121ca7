//! Components kept beside the digest of the inputs they were built from:
//! a package whose inputs have not changed since its last build in a
//! build directory is not built again. The tools do not build byte for
//! byte the same twice (componentize's interpreters), and cargo decides
//! freshness by modification times, which seams must set to tell two
//! packages of one name apart ([`super::cargo`]); the digest decides
//! instead, so that an unchanged package gives the same component, and
//! the host need not compile it again.

use std::path::{Path, PathBuf};

use sha2::Digest;

use super::Built;

/// What the digest leaves out: what installs, caches and builds make, and
/// a package's tests (goldens are not part of its component).
pub(super) const SKIPPED: [&str; 4] = ["node_modules", "__pycache__", "target", "tests"];

/// The most bytes of files a package may hold: generator packages are
/// source and templates.
pub(super) const PACKAGE_CAP: u64 = 64 << 20;

/// A component's place in a build directory, and its inputs' record.
pub(super) struct Kept {
    /// The component.
    pub(super) component: PathBuf,
    record: PathBuf,
}

impl Kept {
    /// The component `name` in the directory `dir` (`NAME.wasm`, with its
    /// record `NAME.inputs`).
    pub(super) fn at(dir: &Path, name: &str) -> Kept {
        Kept {
            component: dir.join(format!("{name}.wasm")),
            record: dir.join(format!("{name}.inputs")),
        }
    }

    /// The component, when it was built from `inputs`.
    pub(super) fn get(&self, inputs: &str) -> Option<Built> {
        if std::fs::read_to_string(&self.record).ok().as_deref() != Some(inputs) {
            return None;
        }
        let bytes = std::fs::read(&self.component).ok()?;
        Some(Built {
            path: self.component.clone(),
            bytes,
        })
    }

    /// Forgets the component before a build: a failed build leaves none
    /// that passes for its inputs.
    pub(super) fn forget(&self) {
        let _ = std::fs::remove_file(&self.record);
        let _ = std::fs::remove_file(&self.component);
    }

    /// Records that the component now in place was built from `inputs`.
    pub(super) fn record(&self, inputs: &str) -> std::io::Result<()> {
        std::fs::write(&self.record, inputs)
    }

    /// Puts `bytes` in place as the component built from `inputs`.
    pub(super) fn keep(&self, inputs: &str, bytes: &[u8]) -> std::io::Result<()> {
        if let Some(parent) = self.component.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(&self.component, bytes)?;
        self.record(inputs)
    }
}

/// The sha256 of `also` and of every regular file under `root` (by its
/// path there, in order) but the files `leave_out` names at its top,
/// lowercase hex. Hidden entries and [`SKIPPED`] directories are left out;
/// a link to a file counts as the file, a link to a directory is not
/// followed (it could lead back up).
///
/// # Errors
///
/// A file that cannot be read, or more than [`PACKAGE_CAP`] bytes of them.
pub(super) fn inputs_digest(
    root: &Path,
    also: &[&str],
    leave_out: &[&str],
) -> std::io::Result<String> {
    let mut hasher = sha2::Sha256::new();
    for text in also {
        hasher.update(text.len().to_le_bytes());
        hasher.update(text.as_bytes());
    }
    let mut files = Vec::new();
    let mut todo = vec![root.to_owned()];
    while let Some(current) = todo.pop() {
        for entry in std::fs::read_dir(&current)? {
            let entry = entry?;
            let name = entry.file_name();
            let shown = name.to_string_lossy();
            if shown.starts_with('.') || (current == root && leave_out.contains(&&*shown)) {
                continue;
            }
            let kind = entry.file_type()?;
            if kind.is_dir() {
                if !SKIPPED.contains(&&*shown) {
                    todo.push(entry.path());
                }
            } else if std::fs::metadata(entry.path()).is_ok_and(|m| m.is_file()) {
                files.push(entry.path());
            }
        }
    }
    files.sort();
    let mut total = 0u64;
    for file in files {
        let rel = file
            .strip_prefix(root)
            .unwrap_or(&file)
            .to_string_lossy()
            .into_owned();
        let bytes = std::fs::read(&file)?;
        total += bytes.len() as u64;
        if total > PACKAGE_CAP {
            return Err(std::io::Error::other(format!(
                "{} holds more than {} MiB of files; a generator package is source and templates",
                root.display(),
                PACKAGE_CAP >> 20
            )));
        }
        hasher.update(rel.len().to_le_bytes());
        hasher.update(rel.as_bytes());
        hasher.update(bytes.len().to_le_bytes());
        hasher.update(&bytes);
    }
    Ok(seams_model::hex(&hasher.finalize()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_inputs_digest_follows_every_file_and_its_path_but_no_build_output() {
        let stage = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(stage.path().join("templates")).unwrap();
        std::fs::write(stage.path().join("generator.js"), "a").unwrap();
        std::fs::write(stage.path().join("templates/t.html"), "b").unwrap();
        let digest = || inputs_digest(stage.path(), &["componentize-js 0.23.0"], &[]).unwrap();
        let first = digest();
        assert_eq!(first, digest(), "the same files, the same digest");
        for left_out in ["target/debug/x", "tests/golden/out.txt", ".git/index"] {
            let file = stage.path().join(left_out);
            std::fs::create_dir_all(file.parent().unwrap()).unwrap();
            std::fs::write(&file, "x").unwrap();
            assert_eq!(digest(), first, "{left_out} is not an input");
        }
        // A link to a directory above is not followed (no loop).
        std::os::unix::fs::symlink(stage.path(), stage.path().join("up")).unwrap();
        assert_eq!(digest(), first, "a link to a directory");
        std::fs::write(stage.path().join("templates/t.html"), "c").unwrap();
        let changed = digest();
        assert_ne!(changed, first, "a changed template");
        std::fs::rename(
            stage.path().join("templates/t.html"),
            stage.path().join("templates/u.html"),
        )
        .unwrap();
        let renamed = digest();
        assert_ne!(renamed, changed, "a renamed file");
        assert_ne!(
            inputs_digest(stage.path(), &["componentize-js 0.24.0"], &[]).unwrap(),
            renamed,
            "another tool"
        );
        std::fs::write(stage.path().join("extra.js"), "").unwrap();
        assert_ne!(digest(), renamed, "an empty file is an input too");
        assert_eq!(
            inputs_digest(stage.path(), &["componentize-js 0.23.0"], &["extra.js"]).unwrap(),
            renamed,
            "a file left out"
        );
    }

    #[test]
    fn a_component_is_kept_only_for_the_inputs_it_was_built_from() {
        let dir = tempfile::tempdir().unwrap();
        let kept = Kept::at(&dir.path().join("rust"), "gen");
        assert!(kept.get("a").is_none());
        kept.keep("a", b"component").unwrap();
        assert_eq!(kept.get("a").unwrap().bytes, b"component");
        assert!(kept.get("b").is_none(), "other inputs");
        kept.forget();
        assert!(kept.get("a").is_none(), "forgotten before a build");
    }
}
