//! The output directory: the rules an output path must follow to stay
//! inside it on every platform, and the only writer of files in it.
//!
//! Every write goes through a `cap-std` directory handle, so neither a
//! path nor a symlink can lead outside, and replaces the file atomically
//! (a temporary file in the same directory, then a rename).

use std::io::Write;
use std::path::Path;

use cap_std::ambient_authority;
use cap_std::fs::Dir;

/// An open output directory.
#[derive(Debug)]
pub struct OutputDir {
    dir: Dir,
}

impl OutputDir {
    /// Opens `path`, creating it when missing.
    ///
    /// # Errors
    ///
    /// The directory cannot be created or opened.
    pub fn open(path: &Path) -> std::io::Result<OutputDir> {
        std::fs::create_dir_all(path)?;
        Ok(OutputDir {
            dir: Dir::open_ambient_dir(path, ambient_authority())?,
        })
    }

    /// Opens `path` if it is a directory; `None` when it does not exist yet
    /// (reading needs no directory, and nothing is created).
    ///
    /// # Errors
    ///
    /// The directory cannot be opened.
    pub fn open_existing(path: &Path) -> std::io::Result<Option<OutputDir>> {
        if !path.is_dir() {
            return Ok(None);
        }
        Ok(Some(OutputDir {
            dir: Dir::open_ambient_dir(path, ambient_authority())?,
        }))
    }

    /// The bytes of `rel`, or `None` when it does not exist.
    ///
    /// # Errors
    ///
    /// Any other I/O error, or a path that leads outside.
    pub fn read(&self, rel: &str) -> std::io::Result<Option<Vec<u8>>> {
        match self.dir.read(rel) {
            Ok(bytes) => Ok(Some(bytes)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Deletes the file `rel`; a file already gone is not an error.
    ///
    /// # Errors
    ///
    /// An I/O error, or a path that leads outside.
    pub fn remove(&self, rel: &str) -> std::io::Result<()> {
        match self.dir.remove_file(rel) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            other => other,
        }
    }

    /// Replaces `rel` with `bytes` atomically, creating its directories.
    ///
    /// # Errors
    ///
    /// An I/O error, or a path (or symlink) that leads outside.
    pub fn write(&self, rel: &str, bytes: &[u8]) -> std::io::Result<()> {
        let (parent, name) = match rel.rsplit_once('/') {
            Some((parent, name)) => {
                self.dir.create_dir_all(parent)?;
                (Some(self.dir.open_dir(parent)?), name)
            }
            None => (None, rel),
        };
        let dir = parent.as_ref().unwrap_or(&self.dir);
        let mut tmp = cap_tempfile::TempFile::new(dir)?;
        tmp.as_file_mut().write_all(bytes)?;
        tmp.replace(name)
    }
}

/// Checks one path a generator returned: relative, normalized, posix
/// separators, no `..`, no absolute or drive prefix, no control
/// characters, and not a name the host reserves.
///
/// # Errors
///
/// The rule the path breaks.
pub fn validate(path: &str) -> Result<(), &'static str> {
    if path.is_empty() {
        return Err("it is empty");
    }
    if path.len() > 1024 {
        return Err("it is longer than 1024 bytes");
    }
    if path.chars().any(char::is_control) {
        return Err("it contains a control character");
    }
    if path.contains('\\') {
        return Err("it contains '\\'; use '/' between directories");
    }
    if path.contains(':') {
        return Err("it contains ':', which is a drive or stream prefix on Windows");
    }
    if path.starts_with('/') {
        return Err("it is absolute; return a path relative to the output directory");
    }
    for segment in path.split('/') {
        match segment {
            "" => return Err("it has an empty segment ('//' or a trailing '/')"),
            "." => return Err("it has a '.' segment; normalize it"),
            ".." => {
                return Err("it has a '..' segment, which could lead outside the output directory");
            }
            _ => {}
        }
    }
    if path.ends_with(".trace.json") {
        return Err("names ending in .trace.json are reserved for the host's trace sidecars");
    }
    Ok(())
}

/// Checks that sorted paths are distinct and none is a directory of
/// another.
///
/// # Errors
///
/// The first clash, naming both paths.
pub fn check_distinct<'a>(sorted: impl IntoIterator<Item = &'a str>) -> Result<(), String> {
    let paths: Vec<&str> = sorted.into_iter().collect();
    for pair in paths.windows(2) {
        if pair[0] == pair[1] {
            return Err(format!("returned the path {:?} twice", pair[0]));
        }
    }
    let set: std::collections::BTreeSet<&str> = paths.iter().copied().collect();
    for path in &paths {
        let mut prefix = *path;
        while let Some((parent, _)) = prefix.rsplit_once('/') {
            if set.contains(parent) {
                return Err(format!(
                    "returned {parent:?} as a file and {path:?} inside it"
                ));
            }
            prefix = parent;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_that_could_leave_the_output_directory_are_refused() {
        for bad in [
            "../x",
            "/etc/x",
            "a/../../x",
            "C:\\x",
            "C:x",
            "a\u{0}b",
            "a\nb",
            "a\u{7f}",
            "",
            "a//b",
            "a/",
            "./a",
            "x.html.trace.json",
        ] {
            assert!(validate(bad).is_err(), "{bad:?} should be refused");
        }
        for good in [
            "index.html",
            "pages/thread.html",
            "a.b/c-d_e.txt",
            "ünïcode.md",
        ] {
            assert_eq!(validate(good), Ok(()), "{good:?}");
        }
    }

    #[test]
    fn clashing_paths_are_named() {
        assert!(check_distinct(["a", "a"]).unwrap_err().contains("twice"));
        assert!(
            check_distinct(["a", "a/b"])
                .unwrap_err()
                .contains("\"a\" as a file")
        );
        assert!(check_distinct(["a/b", "a/c", "b"]).is_ok());
    }
}
