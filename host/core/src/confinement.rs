//! A project reaches nothing outside its directory unless its user says
//! so. A cloned repository can carry symlinks: `out` pointing at a
//! directory of the cloner's, `model.ttl` at `~/.ssh/id_rsa`, `seams.lock`
//! at a file seams would then replace. Every path seams reads or writes
//! for a project (its model files, output directory, lock, journal,
//! `.seams` and component files) must resolve inside the project's
//! directory, or the project is refused, naming the path, where it leads
//! and the opt-in. The opt-in is the user's (`--allow-outside` or
//! `SEAMS_ALLOW_OUTSIDE=1`), never a file's: a clone can carry a
//! `seams.toml` or a lock, not its user's command line.
//!
//! Inside the output directory, files are written and read through
//! `cap-std` ([`crate::OutputDir`]), which refuses a symlink that leads
//! out; this check is for the paths the project names.

use std::path::{Component, Path, PathBuf};

/// Whether a project may reach outside its directory through symlinks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Reach {
    /// Only inside: a path that resolves outside is refused.
    #[default]
    Inside,
    /// Its user allowed paths that lead outside (`--allow-outside`).
    Outside,
}

/// Where `path` resolves when it leads outside `root` (both as given; the
/// parts of `path` that do not exist yet are taken as written), else
/// `None`.
///
/// # Errors
///
/// The root cannot be resolved, or a part of `path` cannot be read.
pub(crate) fn leads_outside(root: &Path, path: &Path) -> std::io::Result<Option<PathBuf>> {
    let root = root.canonicalize()?;
    let resolved = resolve(path)?;
    Ok((!resolved.starts_with(&root)).then_some(resolved))
}

/// `path` with every symlink of its existing part followed: the deepest
/// existing ancestor canonicalized, then the rest as written (a rest
/// holding `..` is resolved lexically; project paths hold none).
fn resolve(path: &Path) -> std::io::Result<PathBuf> {
    let mut existing = path.to_path_buf();
    let mut rest: Vec<std::ffi::OsString> = Vec::new();
    loop {
        match existing.symlink_metadata() {
            Ok(_) => break,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                let Some(name) = existing.file_name() else {
                    break;
                };
                rest.push(name.to_owned());
                existing.pop();
            }
            Err(e) => return Err(e),
        }
    }
    // A dangling symlink canonicalizes to an error: it leads where it
    // points, read from the link itself.
    let mut resolved = match existing.canonicalize() {
        Ok(resolved) => resolved,
        Err(_) if existing.is_symlink() => {
            let target = std::fs::read_link(&existing)?;
            let base = existing.parent().map(Path::to_path_buf).unwrap_or_default();
            lexical(&base.canonicalize()?.join(target))
        }
        Err(e) => return Err(e),
    };
    for name in rest.iter().rev() {
        resolved.push(name);
    }
    Ok(lexical(&resolved))
}

/// `path` with `.` and `..` resolved by their text.
fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other.as_os_str()),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    #[test]
    fn a_path_leads_outside_only_through_a_symlink_that_leaves() {
        let outside = tempfile::tempdir().unwrap();
        let root = tempfile::tempdir().unwrap();
        let r = root.path();
        std::fs::create_dir(r.join("real")).unwrap();
        symlink(outside.path(), r.join("out")).unwrap();
        symlink(r.join("real"), r.join("inside")).unwrap();
        symlink("/etc/passwd", r.join("model.ttl")).unwrap();
        symlink(outside.path().join("gone"), r.join("dangling")).unwrap();
        let outside_real = outside.path().canonicalize().unwrap();
        let cases: Vec<(&str, Option<PathBuf>)> = vec![
            ("real", None),
            ("real/new/deeper", None),
            ("missing", None),
            ("inside/x", None),
            ("out", Some(outside_real.clone())),
            ("out/new.txt", Some(outside_real.join("new.txt"))),
            ("model.ttl", Some(PathBuf::from("/etc/passwd"))),
            ("dangling", Some(outside_real.join("gone"))),
            ("dangling/x", Some(outside_real.join("gone/x"))),
        ];
        for (path, expected) in cases {
            assert_eq!(leads_outside(r, &r.join(path)).unwrap(), expected, "{path}");
        }
        // The root itself may be reached through a symlink.
        let via = tempfile::tempdir().unwrap();
        symlink(r, via.path().join("p")).unwrap();
        let p = via.path().join("p");
        assert_eq!(leads_outside(&p, &p.join("real")).unwrap(), None);
    }
}
