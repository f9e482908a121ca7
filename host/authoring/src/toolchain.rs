//! The tools that make components of Python and JavaScript generators,
//! provisioned by seams at pinned versions: componentize-py in a virtual
//! environment, componentize-js in an npm install from a lockfile with
//! every package's integrity hash. Each is installed once per build
//! directory, under a lock, and marked ready only when the install
//! finished; from then on a build needs no network.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// A tool seams provisions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Tool {
    /// componentize-py, from PyPI.
    ComponentizePy,
    /// componentize-js, from npm.
    ComponentizeJs,
}

/// The componentize-py version Python generators are built with: the one
/// `sdk/python/pyproject.toml` pins in its `build` extra.
pub(crate) const COMPONENTIZE_PY: &str = "0.25.1";

/// The componentize-js version JavaScript generators are built with: the
/// one `sdk/js/package.json` pins.
pub(crate) const COMPONENTIZE_JS: &str = "0.23.0";

/// The pip requirements of the componentize-py install, with every
/// wheel's hash.
const PY_REQUIREMENTS: &str = include_str!("toolchain/requirements.txt");

/// The npm manifest and lockfile of the componentize-js install.
const JS_MANIFEST: &str = include_str!("toolchain/package.json");
const JS_LOCK: &str = include_str!("toolchain/package-lock.json");

/// How pip installs `requirements.txt`: wheels only, each checked
/// against its hash.
const PIP_PINNED: [&str; 5] = [
    "--only-binary",
    ":all:",
    "--require-hashes",
    "-r",
    "requirements.txt",
];

/// Written last into a tool's directory: the install finished.
const READY: &str = ".seams-ready";

/// Why a tool could not be provisioned.
#[derive(Debug, thiserror::Error)]
#[error("cannot install {what} into {}: {message}", dir.display())]
pub struct ToolchainError {
    /// The tool and its version.
    what: String,
    /// Where it was being installed.
    dir: PathBuf,
    /// Why, with what the installer printed.
    message: String,
}

impl Tool {
    fn name(self) -> &'static str {
        match self {
            Tool::ComponentizePy => "componentize-py",
            Tool::ComponentizeJs => "componentize-js",
        }
    }

    /// The tool and its version, as messages name it.
    pub(crate) fn label(self) -> String {
        format!("{} {}", self.name(), self.version())
    }

    fn version(self) -> &'static str {
        match self {
            Tool::ComponentizePy => COMPONENTIZE_PY,
            Tool::ComponentizeJs => COMPONENTIZE_JS,
        }
    }

    /// The program, relative to the tool's directory.
    fn program(self) -> &'static str {
        match self {
            Tool::ComponentizePy => "bin/componentize-py",
            Tool::ComponentizeJs => "node_modules/.bin/componentize-js",
        }
    }

    /// The TypeScript compiler the componentize-js install pins (its
    /// lockfile holds `typescript`), under `root`.
    pub(crate) fn typescript(self, root: &Path) -> PathBuf {
        self.dir(root).join("node_modules/.bin/tsc")
    }

    /// Whether the tool is installed under `root`, ready to use.
    pub(crate) fn is_ready(self, root: &Path) -> bool {
        self.dir(root).join(READY).is_file()
    }

    /// Where the tool is installed under `root`.
    fn dir(self, root: &Path) -> PathBuf {
        root.join("toolchains")
            .join(format!("{}-{}", self.name(), self.version()))
    }

    /// The tool's program under `root` (`<root>/toolchains/NAME-VERSION`),
    /// installing it first if it is not there.
    ///
    /// # Errors
    ///
    /// The installer could not run or failed: the message says what it
    /// printed and which registry it needs.
    pub(crate) fn provision(self, root: &Path) -> Result<PathBuf, ToolchainError> {
        self.provision_with(root, &python3())
    }

    /// [`Tool::provision`], making a virtual environment with `python`.
    fn provision_with(
        self,
        root: &Path,
        python: &std::ffi::OsStr,
    ) -> Result<PathBuf, ToolchainError> {
        let dir = self.dir(root);
        let toolchains = root.join("toolchains");
        let fail = |message: String| ToolchainError {
            what: self.label(),
            dir: dir.clone(),
            message,
        };
        let program = dir.join(self.program());
        if dir.join(READY).is_file() {
            return Ok(program);
        }
        std::os::unix::fs::DirBuilderExt::mode(std::fs::DirBuilder::new().recursive(true), 0o700)
            .create(&toolchains)
            .map_err(|e| fail(e.to_string()))?;
        // One installer at a time, across processes; the one that waited
        // finds the tool ready.
        let lock = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(toolchains.join(".lock"))
            .map_err(|e| fail(e.to_string()))?;
        lock.lock().map_err(|e| fail(e.to_string()))?;
        if dir.join(READY).is_file() {
            return Ok(program);
        }
        // What an interrupted install left is not trusted.
        if dir.exists() {
            std::fs::remove_dir_all(&dir).map_err(|e| fail(e.to_string()))?;
        }
        std::fs::create_dir_all(&dir).map_err(|e| fail(e.to_string()))?;
        for step in self.steps(&dir, python) {
            run(step).map_err(fail)?;
        }
        if !program.is_file() {
            return Err(fail(format!("the install gave no {}", program.display())));
        }
        std::fs::write(dir.join(READY), self.version()).map_err(|e| fail(e.to_string()))?;
        Ok(program)
    }

    /// The commands that install the tool into `dir`.
    fn steps(self, dir: &Path, python: &std::ffi::OsStr) -> Vec<Command> {
        let quiet = |command: &mut Command| {
            command
                .current_dir(dir)
                .stdin(Stdio::null())
                .env("PIP_DISABLE_PIP_VERSION_CHECK", "1")
                .env("npm_config_update_notifier", "false");
        };
        match self {
            Tool::ComponentizePy => {
                let mut venv = Command::new(python);
                venv.args(["-m", "venv", "."]);
                quiet(&mut venv);
                // pip installs only a wheel whose hash the file pins.
                let _ = std::fs::write(dir.join("requirements.txt"), PY_REQUIREMENTS);
                let mut pip = Command::new(dir.join("bin/pip"));
                pip.args(["install", "--quiet"]).args(PIP_PINNED);
                quiet(&mut pip);
                vec![venv, pip]
            }
            Tool::ComponentizeJs => {
                // Written before npm runs: `npm ci` installs exactly the
                // lockfile, checking each package's integrity hash.
                let _ = std::fs::write(dir.join("package.json"), JS_MANIFEST);
                let _ = std::fs::write(dir.join("package-lock.json"), JS_LOCK);
                let mut npm = Command::new("npm");
                npm.args(["ci", "--no-audit", "--no-fund", "--loglevel", "error"]);
                quiet(&mut npm);
                vec![npm]
            }
        }
    }
}

/// The Python a virtual environment is made with: `$SEAMS_PYTHON3`, else
/// `python3` on the path.
fn python3() -> std::ffi::OsString {
    std::env::var_os("SEAMS_PYTHON3")
        .filter(|p| !p.is_empty())
        .unwrap_or_else(|| "python3".into())
}

/// Runs an install step; its output as the error when it fails.
fn run(mut command: Command) -> Result<(), String> {
    let program = command.get_program().to_string_lossy().into_owned();
    let output = command.output().map_err(|e| {
        format!("cannot run {program}: {e}; install it (Debian: python3-venv for Python generators, nodejs and npm for JavaScript ones)")
    })?;
    if output.status.success() {
        return Ok(());
    }
    let printed = String::from_utf8_lossy(&output.stderr);
    let tail: Vec<&str> = printed.lines().rev().take(12).collect();
    let tail: Vec<&str> = tail.into_iter().rev().collect();
    Err(format!(
        "{program} failed ({}); seams needs the package registry (PyPI or npm) once, to install it:\n{}",
        output.status,
        tail.join("\n")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pinned_versions_are_the_sdks() {
        let pyproject = include_str!("../../../sdk/python/pyproject.toml");
        assert!(pyproject.contains(&format!("\"componentize-py=={COMPONENTIZE_PY}\"")));
        assert!(PY_REQUIREMENTS.contains(&format!("\ncomponentize-py=={COMPONENTIZE_PY} \\\n")));
        assert_eq!(PY_REQUIREMENTS.matches("--hash=sha256:").count(), 5);
        let package: serde_json::Value =
            serde_json::from_str(include_str!("../../../sdk/js/package.json")).unwrap();
        assert_eq!(
            package["devDependencies"]["@bytecodealliance/componentize-js"],
            COMPONENTIZE_JS
        );
        let lock: serde_json::Value = serde_json::from_str(JS_LOCK).unwrap();
        assert_eq!(
            lock["packages"]["node_modules/@bytecodealliance/componentize-js"]["version"],
            COMPONENTIZE_JS
        );
        // Every package of the install is checked against its hash.
        let packages = lock["packages"].as_object().unwrap();
        assert!(packages.len() > 100);
        for (path, package) in packages {
            if !path.is_empty() && package.get("link").is_none() {
                assert!(package["integrity"].is_string(), "{path} has no integrity");
            }
        }
    }

    /// pip, as seams runs it, refuses a componentize-py wheel that is not
    /// one of the pinned files (offline: a local index holds the forgery).
    #[test]
    fn pip_refuses_a_wheel_whose_hash_is_not_pinned() {
        let dir = tempfile::tempdir().unwrap();
        let index = dir.path().join("index");
        std::fs::create_dir(&index).unwrap();
        std::fs::write(
            index.join(format!(
                "componentize_py-{COMPONENTIZE_PY}-py3-none-any.whl"
            )),
            b"not the wheel PyPI holds",
        )
        .unwrap();
        std::fs::write(dir.path().join("requirements.txt"), PY_REQUIREMENTS).unwrap();
        let output = Command::new(python3())
            .args([
                "-m",
                "pip",
                "download",
                "--quiet",
                "--no-deps",
                "--no-index",
            ])
            .arg("--find-links")
            .arg(&index)
            .arg("--dest")
            .arg(dir.path().join("got"))
            .args(PIP_PINNED)
            .current_dir(dir.path())
            .env("PIP_CONFIG_FILE", "/dev/null")
            .env_remove("PIP_FIND_LINKS")
            .output()
            .expect("python3 with pip");
        let printed = String::from_utf8_lossy(&output.stderr);
        assert!(!output.status.success(), "{printed}");
        assert!(printed.contains("DO NOT MATCH THE HASHES"), "{printed}");
        let got = std::fs::read_dir(dir.path().join("got")).map_or(0, |d| d.count());
        assert_eq!(got, 0, "pip kept the forged wheel");
    }

    #[test]
    fn a_ready_tool_is_not_installed_again_and_a_half_install_is() {
        let root = tempfile::tempdir().unwrap();
        let dir = root
            .path()
            .join(format!("toolchains/componentize-js-{COMPONENTIZE_JS}"));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(READY), COMPONENTIZE_JS).unwrap();
        // Ready: no installer runs (there is none in this directory).
        assert!(Tool::ComponentizeJs.is_ready(root.path()));
        assert!(!Tool::ComponentizePy.is_ready(root.path()));
        assert_eq!(
            Tool::ComponentizeJs.provision(root.path()).unwrap(),
            dir.join("node_modules/.bin/componentize-js")
        );
        // Not ready, and an installer that cannot run: a clear error, and
        // nothing marked ready.
        std::fs::remove_file(dir.join(READY)).unwrap();
        let error = Tool::ComponentizePy
            .provision_with(root.path(), "/nonexistent/python3".as_ref())
            .unwrap_err();
        let text = error.to_string();
        assert!(
            text.contains("cannot install componentize-py 0.25.1"),
            "{text}"
        );
        assert!(text.contains("python3-venv"), "{text}");
        assert!(
            !root
                .path()
                .join(format!(
                    "toolchains/componentize-py-{COMPONENTIZE_PY}/{READY}"
                ))
                .exists()
        );
    }
}
