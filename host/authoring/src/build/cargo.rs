//! Rust packages: a crate built by cargo for wasm32-wasip2.

use std::path::Path;
use std::process::{Command, Stdio};

use super::{BuildEnv, BuildError, Built, build_environment, finished, run_bounded};
use seams_core::Progress;

/// Builds the crate `name` in `dir` for wasm32-wasip2 with cargo, in
/// `target` (absolute: cargo runs in the package directory), and returns
/// the component. `progress` counts the crates cargo compiles.
///
/// # Errors
///
/// A failed build, with cargo's output, whose paths are the package's.
pub(super) fn build(
    dir: &Path,
    name: &str,
    target: &Path,
    env: BuildEnv,
    progress: &dyn Progress,
) -> Result<Built, BuildError> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let build_error = |output: String| BuildError::Failed {
        dir: dir.to_owned(),
        output,
    };
    // cargo decides freshness by modification times, and names a path
    // package's build by its path relative to its workspace: another
    // package of the same name built since these files were written would
    // pass for this one. Marking them modified now rebuilds them. A
    // vendored SDK is marked only when it differs from the last one built
    // here: the same seams vendors the same SDK, which need not rebuild.
    touch_sources(dir, target)
        .map_err(|e| build_error(format!("cannot mark the package's files as changed: {e}")))?;
    let total = if progress.is_shown() {
        crate_count(&cargo, dir, env)
    } else {
        None
    };
    // Code nobody reviewed (a draft) builds in the operating system's
    // sandbox, offline: its dependencies are fetched first, by cargo alone
    // (fetching runs no code of any package).
    let jail = match env {
        BuildEnv::Inherited => None,
        BuildEnv::Cleared(_) => {
            let mut fetch = Command::new(&cargo);
            fetch
                .args(["fetch", "--target", "wasm32-wasip2"])
                .current_dir(dir)
                .stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped());
            build_environment(&mut fetch, env);
            let (ended, stderr) = run_bounded(fetch, env.bounds(), |_| {})
                .map_err(|e| build_error(format!("cannot run cargo fetch: {e}")))?;
            finished(dir, env, ended, stderr)?;
            Some(draft_jail(dir, target).map_err(|e| build_error(e.to_string()))?)
        }
    };
    progress.start(&format!("building {name}"), total);
    let mut command = Command::new(&cargo);
    command
        .args([
            "build",
            "--release",
            "--target",
            "wasm32-wasip2",
            // Diagnostics stay text on stderr; stdout says which crate is
            // done, one JSON line each, for the progress.
            "--message-format",
            "json-render-diagnostics",
            "--target-dir",
        ])
        .arg(target)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    build_environment(&mut command, env);
    let _tmp = match jail {
        Some((jail, tmp)) => {
            command.arg("--offline").env("TMPDIR", tmp.path());
            jail.confine(&mut command);
            Some(tmp)
        }
        None => None,
    };
    let result = run_bounded(command, env.bounds(), |line| {
        // cargo's own messages (a build script's output goes to cargo).
        let Ok(message) = serde_json::from_str::<serde_json::Value>(line) else {
            return;
        };
        if message["reason"] == "compiler-artifact" {
            let crate_name = message["target"]["name"].as_str().unwrap_or("");
            progress.advance(1, crate_name);
        }
    });
    progress.finish();
    let (ended, stderr) = result.map_err(|e| build_error(format!("cannot run cargo: {e}")))?;
    finished(dir, env, ended, stderr)?;
    let path = target
        .join("wasm32-wasip2")
        .join("release")
        .join(format!("{}.wasm", name.replace('-', "_")));
    let bytes = std::fs::read(&path).map_err(|e| {
        build_error(format!(
            "the build gave no component at {}: {e}",
            path.display()
        ))
    })?;
    Ok(Built { path, bytes })
}

/// The sandbox of a draft's build: cargo and rustup read their homes and
/// the package, and write the package (its lock file), the target
/// directory and a temporary directory of their own.
fn draft_jail(
    dir: &Path,
    target: &Path,
) -> Result<(crate::jail::Jail, tempfile::TempDir), super::BuildError> {
    let home = |var: &str, default: &str| {
        std::env::var_os(var)
            .filter(|v| !v.is_empty())
            .map(std::path::PathBuf::from)
            .or_else(|| dirs::home_dir().map(|h| h.join(default)))
    };
    let tmp = tempfile::Builder::new()
        .prefix("tmp-")
        .tempdir_in(target)
        .map_err(|e| super::BuildError::Failed {
            dir: dir.to_owned(),
            output: format!("cannot make the build's temporary directory: {e}"),
        })?;
    let cargo_home = home("CARGO_HOME", ".cargo");
    let mut read: Vec<std::path::PathBuf> = [cargo_home.clone(), home("RUSTUP_HOME", ".rustup")]
        .into_iter()
        .flatten()
        .collect();
    read.push(dir.to_owned());
    // cargo takes its package cache's lock, even offline.
    let mut write = vec![dir.to_owned(), target.to_owned()];
    if let Some(cargo_home) = cargo_home {
        for lock in [".package-cache", ".package-cache-mutate", ".global-cache"] {
            if cargo_home.join(lock).is_file() {
                write.push(cargo_home.join(lock));
            }
        }
    }
    let jail = crate::jail::Jail::new(&crate::jail::Reach {
        read,
        write,
        cover: Vec::new(),
    })?;
    Ok((jail, tmp))
}

/// The vendored SDK's directory in a package, as the scaffold writes it.
const VENDORED_SDK: &str = "seams-sdk";

/// Sets the modification time of the package's files in `dir` (but
/// `target/` and hidden directories) to now; those of its vendored SDK
/// only when their content differs from the vendored SDK last built in
/// `target`, which is then recorded.
fn touch_sources(dir: &Path, target: &Path) -> std::io::Result<()> {
    let now = std::time::SystemTime::now();
    let sdk = dir.join(VENDORED_SDK);
    let mut sdk_files = Vec::new();
    let mut todo = vec![dir.to_owned()];
    while let Some(current) = todo.pop() {
        for entry in std::fs::read_dir(&current)? {
            let entry = entry?;
            let kind = entry.file_type()?;
            let name = entry.file_name();
            if kind.is_dir() {
                if name != "target" && !name.to_string_lossy().starts_with('.') {
                    todo.push(entry.path());
                }
            } else if kind.is_file() {
                if entry.path().starts_with(&sdk) {
                    sdk_files.push(entry.path());
                } else {
                    // Read-only is enough for the owner to set the time.
                    std::fs::File::open(entry.path())?.set_modified(now)?;
                }
            }
        }
    }
    if sdk_files.is_empty() {
        return Ok(());
    }
    use sha2::Digest;
    sdk_files.sort();
    let mut hasher = sha2::Sha256::new();
    for file in &sdk_files {
        hasher.update(
            file.strip_prefix(&sdk)
                .unwrap_or(file)
                .to_string_lossy()
                .as_bytes(),
        );
        hasher.update([0]);
        hasher.update(std::fs::read(file)?);
        hasher.update([0]);
    }
    let digest = seams_model::hex(&hasher.finalize());
    let record = target.join(".seams-vendored-sdk");
    if std::fs::read_to_string(&record).ok().as_deref() != Some(digest.as_str()) {
        for file in &sdk_files {
            std::fs::File::open(file)?.set_modified(now)?;
        }
        std::fs::write(&record, &digest)?;
    }
    Ok(())
}

/// How many compiler artifacts a build of the package in `dir` makes: one
/// per crate for the wasm target, plus one per build script; `None` when
/// cargo cannot tell without the network.
fn crate_count(cargo: &std::ffi::OsStr, dir: &Path, env: BuildEnv) -> Option<u64> {
    let mut command = Command::new(cargo);
    command
        .args([
            "metadata",
            "--format-version",
            "1",
            "--filter-platform",
            "wasm32-wasip2",
            "--offline",
        ])
        .current_dir(dir)
        .stdin(Stdio::null())
        .stderr(Stdio::null());
    build_environment(&mut command, env);
    let output = command.output().ok()?;
    if !output.status.success() {
        return None;
    }
    let metadata: serde_json::Value = serde_json::from_slice(&output.stdout).ok()?;
    let built: std::collections::BTreeSet<&str> = metadata["resolve"]["nodes"]
        .as_array()?
        .iter()
        .filter_map(|node| node["id"].as_str())
        .collect();
    let count = metadata["packages"]
        .as_array()?
        .iter()
        .filter(|package| package["id"].as_str().is_some_and(|id| built.contains(id)))
        .map(|package| {
            let scripts = package["targets"].as_array().map_or(0, |targets| {
                targets
                    .iter()
                    .filter(|t| {
                        t["kind"]
                            .as_array()
                            .is_some_and(|k| k.iter().any(|k| k == "custom-build"))
                    })
                    .count()
            });
            1 + scripts as u64
        })
        .sum();
    Some(count)
}
