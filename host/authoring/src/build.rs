//! Making a component of a generator package, in the language its
//! manifest says: cargo for Rust ([`cargo`]), componentize-py and
//! componentize-js for Python and JavaScript ([`componentize`]). Builds in
//! one build directory take turns, across processes (a lock file beside
//! cargo's own), so that a component read after its build is the one
//! built.

mod cargo;
mod componentize;
mod kept;

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::child::{Bounded, Bounds, Ended};
use crate::language::Language;
use crate::toolchain::ToolchainError;
use seams_core::{Progress, Project};

/// Why a package could not be built.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    /// The package has no readable manifest with a name.
    #[error("{}: {message}", path.display())]
    Package {
        /// The manifest (or the directory, when it has none).
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// The build failed.
    #[error("building {} failed:\n{output}", dir.display())]
    Failed {
        /// The package.
        dir: PathBuf,
        /// What the build printed, with the package's paths.
        output: String,
    },
    /// The build of a package nobody reviewed passed its time limit and
    /// was stopped.
    #[error(
        "building {} was stopped after {seconds} s; raise [propose] build_timeout in seams.toml if a build takes longer on this machine",
        dir.display()
    )]
    TimedOut {
        /// The package.
        dir: PathBuf,
        /// The limit.
        seconds: u64,
    },
    /// The tool that builds the package could not be installed.
    #[error(transparent)]
    Toolchain(#[from] ToolchainError),
    /// The build could not be put in the operating system's sandbox.
    #[error(transparent)]
    Jail(#[from] crate::jail::JailError),
    /// The build directory is not the user's own.
    #[error(
        "the build directory {} is not private (a directory of yours, not a link, that nobody else may write): a tool or component planted there would run as you; fix its owner and mode (chmod 700), or set SEAMS_BUILD_DIR to another",
        path.display()
    )]
    SharedBuildDir {
        /// The directory.
        path: PathBuf,
    },
}

include!("../../core/build/cargo_env.rs");

/// What environment a package is built in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BuildEnv {
    /// The user's (without the outer cargo's settings), with no limits:
    /// for the user's own packages.
    Inherited,
    /// Only what cargo and rustc need to find themselves and the
    /// registry, within `Bounds`: for code nobody has reviewed, such as a
    /// draft, whose macros and constants run at compile time.
    Cleared(Bounds),
}

/// The variables a cleared build keeps.
const CLEARED_BUILD_KEEPS: [&str; 6] = [
    "PATH",
    "HOME",
    "CARGO_HOME",
    "RUSTUP_HOME",
    "RUSTUP_TOOLCHAIN",
    "TMPDIR",
];

impl BuildEnv {
    fn bounds(self) -> Bounds {
        match self {
            BuildEnv::Inherited => Bounds::NONE,
            BuildEnv::Cleared(bounds) => bounds,
        }
    }
}

/// Sets up `command`'s environment for `env`.
fn build_environment(command: &mut Command, env: BuildEnv) {
    match env {
        BuildEnv::Inherited => remove_outer_cargo_env(command),
        BuildEnv::Cleared(_) => {
            command.env_clear();
            for key in CLEARED_BUILD_KEEPS {
                if let Some(value) = std::env::var_os(key) {
                    command.env(key, value);
                }
            }
        }
    }
}

/// A built component: where the build wrote it, and its bytes as built (the
/// file may be rebuilt by another package of the same name later).
#[derive(Debug, Clone)]
pub struct Built {
    /// The path in the target directory.
    pub path: PathBuf,
    /// Its bytes, read while the build directory was held.
    pub bytes: Vec<u8>,
}

/// Builds the package in `dir`, in the language its manifest says, in the
/// project's build directory ([`Project::build_dir`], else
/// `<project>/.seams/target`) and returns the component.
///
/// # Errors
///
/// A directory with no manifest or several, a manifest without a name, a
/// tool that cannot be installed, or a failed build.
pub(crate) fn build(
    dir: &Path,
    project: &Project,
    env: BuildEnv,
    progress: &dyn Progress,
) -> Result<Built, BuildError> {
    let target = project
        .build_dir
        .clone()
        .unwrap_or_else(|| project.root.join(".seams").join("target"));
    build_in(dir, &target, env, progress)
}

/// Builds the package in `dir`, in the language its manifest says, in the
/// build directory `target`, as the user's own package (their environment,
/// no bounds): what `seams test-generator` builds, without a project.
///
/// # Errors
///
/// As `seams test-generator`'s build: no manifest or several, a manifest
/// without a name, a tool that cannot be installed, or a failed build.
pub fn build_package(dir: &Path, target: &Path) -> Result<Built, BuildError> {
    build_in(dir, target, BuildEnv::Inherited, &seams_core::Silent)
}

/// [`build`] in the build directory `target`.
fn build_in(
    dir: &Path,
    target: &Path,
    env: BuildEnv,
    progress: &dyn Progress,
) -> Result<Built, BuildError> {
    let target = std::path::absolute(target).unwrap_or_else(|_| target.to_owned());
    let language = match Language::of_package(dir).as_slice() {
        [language] => *language,
        [] => {
            return Err(BuildError::Package {
                path: dir.to_owned(),
                message: "is not a generator package: it has no Cargo.toml (Rust), pyproject.toml (Python) or package.json (JavaScript; TypeScript with a tsconfig.json)".into(),
            });
        }
        several => {
            let names: Vec<&str> = several.iter().map(|l| l.manifest()).collect();
            return Err(BuildError::Package {
                path: dir.to_owned(),
                message: format!(
                    "holds {}: a generator package has one manifest; keep the one of its language",
                    names.join(" and ")
                ),
            });
        }
    };
    let manifest = Manifest::read(dir, language)?;
    let name = manifest.name(language)?;
    let _turn = take_turn(&target).map_err(|e| BuildError::Failed {
        dir: dir.to_owned(),
        output: format!("cannot use the build directory {}: {e}", target.display()),
    })?;
    // What runs from it (provisioned tools, cargo's build scripts) and
    // what is read back from it (components) are trusted only in a
    // directory nobody else could have written.
    for path in [target.clone(), target.join("toolchains")] {
        let private = match std::fs::symlink_metadata(&path) {
            Ok(meta) => meta.is_dir() && seams_runtime::private(&meta),
            Err(e) => e.kind() == std::io::ErrorKind::NotFound,
        };
        if !private {
            return Err(BuildError::SharedBuildDir { path });
        }
    }
    match language {
        Language::Rust => rust_build(dir, &name, &target, env, progress),
        Language::Python | Language::Js | Language::Ts => {
            componentize::build(dir, language, &manifest, &name, &target, env, progress)
        }
    }
}

/// [`cargo::build`], unless the package's inputs (its files, with the
/// SDK it vendors, and this seams's version) are those of the component
/// kept from its last build in `target`.
fn rust_build(
    dir: &Path,
    name: &str,
    target: &Path,
    env: BuildEnv,
    progress: &dyn Progress,
) -> Result<Built, BuildError> {
    let failed = |e: std::io::Error| BuildError::Failed {
        dir: dir.to_owned(),
        output: format!("cannot read the package's files: {e}"),
    };
    let version = concat!("seams ", env!("CARGO_PKG_VERSION"));
    // cargo may rewrite the package's Cargo.lock as it builds (the first
    // build writes one): the lock is hashed apart from the sources, so
    // that a build whose sources did not change while it ran is kept with
    // the lock it left.
    let sources = || kept::inputs_digest(dir, &[version], &["Cargo.lock"]).map_err(failed);
    let inputs = |sources: &str| {
        let lock = std::fs::read(dir.join("Cargo.lock")).unwrap_or_default();
        seams_model::sha256_hex(&[sources.as_bytes(), &lock].concat())
    };
    let kept = kept::Kept::at(&target.join("packages").join("rust"), name);
    let before = sources()?;
    if let Some(built) = kept.get(&inputs(&before)) {
        return Ok(built);
    }
    kept.forget();
    let built = cargo::build(dir, name, target, env, progress)?;
    // A source edited while cargo ran: this component is not its.
    if sources()? == before {
        kept.keep(&inputs(&before), &built.bytes)
            .map_err(|e| BuildError::Failed {
                dir: dir.to_owned(),
                output: format!("cannot keep the component in {}: {e}", target.display()),
            })?;
    }
    Ok(built)
}

/// Builds the `package` generators a project names, for
/// [`seams_core::Project::packages`]: in the project's build directory
/// ([`build`]), in the operating system's sandbox and within `[propose]`'s
/// build bounds (a cloned project's package is code nobody reviewed, and
/// `seams generate` runs no code outside a sandbox), and only when the
/// package's inputs changed since its last build there.
pub struct ProjectPackages {
    progress: Box<dyn Progress + Send>,
}

impl ProjectPackages {
    /// A builder that reports each build to `progress`.
    pub fn new(progress: Box<dyn Progress + Send>) -> ProjectPackages {
        ProjectPackages { progress }
    }
}

impl std::fmt::Debug for ProjectPackages {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProjectPackages").finish_non_exhaustive()
    }
}

impl seams_core::PackageBuilder for ProjectPackages {
    fn build(&self, project: &Project, dir: &Path) -> Result<Vec<u8>, String> {
        let env = BuildEnv::Cleared(build_bounds(&project.propose));
        build(dir, project, env, self.progress.as_ref())
            .map(|built| built.bytes)
            .map_err(|e| e.to_string())
    }
}

/// Seconds a build of code nobody reviewed (a draft, a project's
/// package) may take when `[propose] build_timeout` does not say: a first
/// build compiles the SDK's dependencies too.
pub const DEFAULT_BUILD_TIMEOUT: u64 = 600;
/// MiB of address space each process of such a build may map when
/// `[propose] build_memory_mib` does not say.
pub const DEFAULT_BUILD_MEMORY_MIB: u64 = 8192;

/// What a build of code nobody reviewed may spend (a draft, a cloned
/// project's package): its macros and constants run at compile time (a
/// constant of a terabyte, a type that takes rustc hours).
pub(crate) fn build_bounds(propose: &seams_core::Propose) -> Bounds {
    Bounds {
        time: Some(std::time::Duration::from_secs(
            propose.build_timeout.unwrap_or(DEFAULT_BUILD_TIMEOUT),
        )),
        memory: Some(
            propose
                .build_memory_mib
                .unwrap_or(DEFAULT_BUILD_MEMORY_MIB)
                .saturating_mul(1 << 20),
        ),
        counted: crate::child::Counted::AddressSpace,
    }
}

/// The most bytes a package's manifest may hold: manifests are short.
const MANIFEST_CAP: u64 = 1 << 20;

/// A package's manifest, read and parsed once (TOML as the JSON value it
/// maps to), for the name and the language's settings.
pub(crate) struct Manifest {
    path: PathBuf,
    value: serde_json::Value,
}

impl Manifest {
    /// Reads `dir`'s manifest of `language`.
    pub(crate) fn read(dir: &Path, language: Language) -> Result<Manifest, BuildError> {
        use std::io::Read;
        let path = dir.join(language.manifest());
        let refuse = |message: String| BuildError::Package {
            path: path.clone(),
            message,
        };
        let mut text = String::new();
        std::fs::File::open(&path)
            .and_then(|file| file.take(MANIFEST_CAP + 1).read_to_string(&mut text))
            .map_err(|e| refuse(e.to_string()))?;
        if text.len() as u64 > MANIFEST_CAP {
            return Err(refuse(format!(
                "is over {} MiB; a manifest names the package and its settings",
                MANIFEST_CAP >> 20
            )));
        }
        let value = match language {
            Language::Rust | Language::Python => {
                toml::from_str(&text).map_err(|e| refuse(e.message().to_owned()))?
            }
            Language::Js | Language::Ts => {
                serde_json::from_str(&text).map_err(|e| refuse(e.to_string()))?
            }
        };
        Ok(Manifest { path, value })
    }

    /// The string at `pointer` (`/package/name`), if there is one.
    pub(crate) fn text(&self, pointer: &str) -> Option<&str> {
        self.value.pointer(pointer)?.as_str()
    }

    /// The manifest refused, saying why.
    pub(crate) fn refuse(&self, message: String) -> BuildError {
        BuildError::Package {
            path: self.path.clone(),
            message,
        }
    }

    /// The package's name; for Python and JavaScript one that may name a
    /// file in the build directory.
    fn name(&self, language: Language) -> Result<String, BuildError> {
        let (pointer, shown) = match language {
            Language::Rust => ("/package/name", "[package] name"),
            Language::Python => ("/project/name", "[project] name"),
            Language::Js | Language::Ts => ("/name", "\"name\""),
        };
        let name = self
            .text(pointer)
            .ok_or_else(|| self.refuse(format!("has no {shown}")))?;
        if language != Language::Rust && !seams_runtime::is_generator_name(name) {
            return Err(self.refuse(format!(
                "name {name:?} is not a generator name: use {}",
                seams_runtime::GENERATOR_NAME_RULE
            )));
        }
        Ok(name.to_owned())
    }
}

/// How a bounded build ended, as a result: `output` is what it printed.
fn finished(dir: &Path, env: BuildEnv, ended: Ended, output: String) -> Result<(), BuildError> {
    match ended {
        Ended::Exited(status) if status.success() => Ok(()),
        Ended::Exited(_) => Err(BuildError::Failed {
            dir: dir.to_owned(),
            output,
        }),
        Ended::TimedOut => Err(BuildError::TimedOut {
            dir: dir.to_owned(),
            seconds: env.bounds().time.unwrap_or_default().as_secs(),
        }),
    }
}

/// Waits for this process's turn at the build directory `target`
/// (created private if new): held until the returned file is dropped.
fn take_turn(target: &Path) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(target)?;
    let lock = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(target.join(".seams-build.lock"))?;
    lock.lock()?;
    Ok(lock)
}

/// Runs a build within `bounds`, handing each line of its stdout to
/// `on_line`; gives how it ended and what it wrote to stderr (up to
/// [`BUILD_OUTPUT_CAP`]).
fn run_bounded(
    mut command: Command,
    bounds: Bounds,
    mut on_line: impl FnMut(&str),
) -> std::io::Result<(Ended, String)> {
    use std::io::Read;
    let mut running = Bounded::spawn(&mut command, bounds)?;
    let child = running.child();
    let mut stderr = child.stderr.take().expect("stderr is piped");
    // stderr is drained beside stdout, or a chatty build would block on it;
    // kept up to a bound, the rest read and dropped.
    let reader = std::thread::spawn(move || {
        let mut text = Vec::new();
        let _ = (&mut stderr).take(BUILD_OUTPUT_CAP).read_to_end(&mut text);
        let _ = std::io::copy(&mut stderr, &mut std::io::sink());
        String::from_utf8_lossy(&text).into_owned()
    });
    let stdout = child.stdout.take().expect("stdout is piped");
    for line in std::io::BufRead::lines(std::io::BufReader::new(stdout)) {
        let Ok(line) = line else { break };
        on_line(&line);
    }
    let ended = running.wait()?;
    let stderr = reader.join().unwrap_or_default();
    Ok((ended, stderr))
}

/// The most bytes of a build's diagnostics kept: what goes back to a
/// provider is three errors of twelve lines.
const BUILD_OUTPUT_CAP: u64 = 1 << 20;

#[cfg(test)]
mod tests {
    use super::*;

    /// A build directory (or its toolchains) that another user owns or
    /// anyone may write could hold a planted tool: refused, naming it,
    /// before anything runs from it.
    #[test]
    fn a_build_directory_others_could_write_is_refused_naming_it() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let package = dir.path().join("pkg");
        std::fs::create_dir(&package).unwrap();
        std::fs::write(package.join("package.json"), "{\"name\": \"g\"}").unwrap();
        let target = dir.path().join("build");
        let toolchains = target.join("toolchains");
        std::fs::create_dir_all(&toolchains).unwrap();
        let mode = |path: &Path, mode: u32| {
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
        };
        let refused = |named: &Path| {
            let error = build_package(&package, &target).unwrap_err();
            assert!(
                matches!(&error, BuildError::SharedBuildDir { path } if path == named),
                "{error}"
            );
            assert!(error.to_string().contains("is not private"), "{error}");
        };
        mode(&target, 0o777);
        refused(&target);
        mode(&target, 0o700);
        mode(&toolchains, 0o777);
        refused(&toolchains);
        mode(&toolchains, 0o700);
        // Owned by another user (root may hand it over).
        if rustix::process::getuid().is_root() {
            std::os::unix::fs::chown(&toolchains, Some(65534), Some(65534)).unwrap();
            refused(&toolchains);
            std::os::unix::fs::chown(&toolchains, Some(0), Some(0)).unwrap();
        }
        // A link in its place, even to a private directory.
        let elsewhere = dir.path().join("elsewhere");
        std::fs::create_dir(&elsewhere).unwrap();
        mode(&elsewhere, 0o700);
        std::fs::remove_dir(&toolchains).unwrap();
        std::os::unix::fs::symlink(&elsewhere, &toolchains).unwrap();
        refused(&toolchains);
    }

    /// What a package's manifests say, and what the build says back,
    /// before any tool runs.
    #[test]
    fn broken_or_hostile_manifests_are_refused_naming_the_file() {
        let huge = format!("{{\"name\": \"a\", \"x\": \"{}\"}}", "x".repeat(1 << 20));
        let cases: Vec<(Vec<(&str, String)>, &str)> = vec![
            (vec![], "is not a generator package"),
            (
                vec![("Cargo.toml", String::new()), ("package.json", "{}".into())],
                "holds Cargo.toml and package.json",
            ),
            (
                vec![("package.json", "{\"name\": ".into())],
                "package.json: EOF",
            ),
            (vec![("package.json", "[1]".into())], "has no \"name\""),
            (
                vec![("package.json", "{\"name\": 7}".into())],
                "has no \"name\"",
            ),
            (
                vec![("package.json", "{\"name\": \"../../etc\"}".into())],
                "name \"../../etc\" is not a generator name",
            ),
            (
                vec![("package.json", "{\"name\": \"\\u001b[2Jx\"}".into())],
                "is not a generator name",
            ),
            (vec![("package.json", huge)], "is over 1 MiB"),
            (
                vec![("pyproject.toml", "[project\n".into())],
                "pyproject.toml: ",
            ),
            (
                vec![("pyproject.toml", "[tool.seams]\nmodule = \"g\"\n".into())],
                "has no [project] name",
            ),
            (
                vec![("pyproject.toml", "[project]\nname = \"A/B\"\n".into())],
                "is not a generator name",
            ),
        ];
        for (files, says) in cases {
            let dir = tempfile::tempdir().unwrap();
            let target = tempfile::tempdir().unwrap();
            for (name, text) in &files {
                std::fs::write(dir.path().join(name), text).unwrap();
            }
            let error = build_package(dir.path(), target.path()).unwrap_err();
            assert!(matches!(error, BuildError::Package { .. }), "{error}");
            let text = error.to_string();
            assert!(text.contains(says), "{files:?}: {text}");
            // Nothing was installed or built for a refused package.
            assert!(
                std::fs::read_dir(target.path()).unwrap().next().is_none(),
                "{text}"
            );
        }
    }
}
