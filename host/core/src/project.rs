//! `seams.toml`: where the model is, where outputs go, which generators
//! run, and the sandbox's limits.

use std::ops::Range;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use serde::Deserialize;
use toml::Spanned;

use seams_model::input_text::{cut, echo};
use seams_registry::{Reference, Registry};
use seams_runtime::Limits;

use crate::confinement::{Reach, leads_outside};

/// The manifest's file name.
pub const MANIFEST: &str = "seams.toml";

/// The journal's file name, in the project directory.
pub const JOURNAL_FILE: &str = "seams.journal";

/// Why `seams.toml` could not be used. Names the file, and the line and key
/// where there is one.
#[derive(Debug, thiserror::Error)]
pub enum ProjectError {
    /// The project directory does not exist.
    #[error("the project directory {} does not exist; pass --project DIR naming a directory with a {MANIFEST}", dir.display())]
    NoDirectory {
        /// The directory given.
        dir: PathBuf,
    },
    /// No `seams.toml` in the directory.
    #[error("no {MANIFEST} in {}; run seams in a project directory or pass --project DIR", dir.display())]
    NotFound {
        /// The directory searched.
        dir: PathBuf,
    },
    /// The manifest could not be read.
    #[error("cannot read {}: {source}", path.display())]
    Io {
        /// The manifest.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// The manifest is not valid TOML or has a wrong key or value.
    #[error("{}:{line}: {message}", path.display())]
    Invalid {
        /// The manifest.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// What is wrong, naming the key.
        message: String,
    },
    /// A path of the project resolves outside it through a symlink.
    #[error(
        "{what} {} leads outside the project, to {}, through a symlink; seams reads and writes only inside a project unless you allow it: run with --allow-outside (or SEAMS_ALLOW_OUTSIDE=1) if you made that link yourself",
        path.display(),
        target.display()
    )]
    Outside {
        /// What the path is: `the output directory`, `the model file`...
        what: &'static str,
        /// The path, as the project names it.
        path: PathBuf,
        /// Where it resolves.
        target: PathBuf,
    },
}

/// Refuses `path` (`what` it is) when it resolves outside `root`.
fn confined(root: &Path, what: &'static str, path: PathBuf) -> Result<(), ProjectError> {
    let outside = leads_outside(root, &path).map_err(|source| ProjectError::Io {
        path: path.clone(),
        source,
    })?;
    match outside {
        Some(target) => Err(ProjectError::Outside {
            what,
            path: path
                .strip_prefix(root)
                .map(Path::to_path_buf)
                .unwrap_or(path),
            target,
        }),
        None => Ok(()),
    }
}

/// A generator named in `seams.toml`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GeneratorSource {
    /// A generator built into seams, by name.
    Builtin(String),
    /// A component file, relative to the project root, optionally pinned.
    Wasm {
        /// The `.wasm` path as written, relative to the project.
        path: PathBuf,
        /// The sha256 the component must have, when pinned.
        sha256: Option<String>,
    },
    /// A component in an OCI registry, pulled once into the blob cache and
    /// pinned by digest in the lock.
    Oci(Reference),
    /// A generator package (Rust, Python or JavaScript) in the project,
    /// built into its component when the project runs, pinned by the
    /// component's sha256 in the lock like a `.wasm`.
    Package {
        /// The package directory as written, relative to the project.
        path: PathBuf,
    },
}

impl GeneratorSource {
    /// How the lock and `seams check` name the generator: `builtin:NAME`,
    /// the `.wasm` path with `/` separators, or `oci:REFERENCE`.
    pub fn label(&self) -> String {
        match self {
            GeneratorSource::Builtin(name) => format!("builtin:{name}"),
            GeneratorSource::Wasm { path, .. } => posix(path),
            GeneratorSource::Oci(reference) => format!("oci:{reference}"),
            GeneratorSource::Package { path } => format!("package:{}", posix(path)),
        }
    }
}

/// `path` with `/` separators, as the lock writes paths on every platform.
pub(crate) fn posix(path: &Path) -> String {
    path.components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join("/")
}

impl std::fmt::Display for GeneratorSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            GeneratorSource::Builtin(name) => write!(f, "{name}"),
            GeneratorSource::Wasm { path, .. } => write!(f, "{}", path.display()),
            GeneratorSource::Oci(reference) => write!(f, "{reference}"),
            GeneratorSource::Package { path } => write!(f, "{}", path.display()),
        }
    }
}

/// `[propose]`: the LLM provider for drafting.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Propose {
    /// The provider: a command line, or `api:openai` / `api:anthropic`.
    pub provider: Option<String>,
    /// An API provider's base URL (default: the vendor's).
    pub base_url: Option<String>,
    /// The environment variable holding an API provider's key (default:
    /// `OPENAI_API_KEY` / `ANTHROPIC_API_KEY`). The key itself is never
    /// written in `seams.toml`.
    pub key_env: Option<String>,
    /// The LLM model name, passed on to the provider.
    pub model: Option<String>,
    /// Seconds before the provider is killed.
    pub timeout: Option<u64>,
    /// Retries after a rejected draft.
    pub retries: Option<u32>,
    /// Seconds before a draft's build is stopped.
    pub build_timeout: Option<u64>,
    /// MiB of address space each process of a draft's build may map.
    pub build_memory_mib: Option<u64>,
}

/// A loaded `seams.toml`.
#[derive(Debug, Clone)]
pub struct Project {
    /// The project directory (where `seams.toml` is).
    pub root: PathBuf,
    /// Model files, resolved against the root, in the order given.
    pub model_files: Vec<PathBuf>,
    /// The output directory, relative to the root.
    pub output_dir: PathBuf,
    /// The generators, in the order given.
    pub generators: Vec<GeneratorSource>,
    /// The sandbox limits.
    pub limits: Limits,
    /// Drafting settings.
    pub propose: Propose,
    /// Where `oci` generators are pulled from and cached: set by the
    /// caller (the CLI, from the environment), since credentials and the
    /// cache never come from `seams.toml`. Without one, an `oci` generator
    /// fails.
    pub registry: Option<Registry>,
    /// Where generator packages are built (cargo's target directory),
    /// shared by every package and project that names it: set by the
    /// caller (the CLI, from the environment). Without one, each project
    /// builds in its own `.seams/target`.
    pub build_dir: Option<PathBuf>,
    /// What builds the `package` generators: set by the caller (the CLI,
    /// when it has the authoring tools). Without one, a `package`
    /// generator fails, saying so.
    pub packages: Option<Arc<dyn PackageBuilder>>,
}

/// Builds a generator package into its component. The core holds no
/// build tools; the caller lends them (`seams-authoring` builds in the
/// operating system's sandbox, since a cloned project's package is code
/// nobody reviewed).
pub trait PackageBuilder: Send + Sync + std::fmt::Debug {
    /// The component of the package in `dir`, built for `project` (or
    /// taken from the build cache when its inputs have not changed).
    ///
    /// # Errors
    ///
    /// Why it could not be built, in words that name the package's file
    /// or the build's output.
    fn build(&self, project: &Project, dir: &Path) -> Result<Vec<u8>, String>;
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawManifest {
    model: Spanned<RawModel>,
    output: Option<Spanned<RawOutput>>,
    #[serde(default)]
    generator: Vec<Spanned<RawGenerator>>,
    #[serde(default)]
    sandbox: RawSandbox,
    #[serde(default)]
    propose: Propose,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawModel {
    files: Vec<Spanned<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawOutput {
    dir: Spanned<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawGenerator {
    builtin: Option<Spanned<String>>,
    wasm: Option<Spanned<String>>,
    oci: Option<Spanned<String>>,
    package: Option<Spanned<String>>,
    sha256: Option<Spanned<String>>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct RawSandbox {
    fuel: Option<Spanned<u64>>,
    timeout_seconds: Option<Spanned<f64>>,
    memory_mib: Option<Spanned<u64>>,
    max_outputs: Option<Spanned<u64>>,
    max_output_mib: Option<Spanned<u64>>,
    max_log_kib: Option<Spanned<u64>>,
    stack_kib: Option<Spanned<u64>>,
    max_handles: Option<Spanned<u64>>,
}

impl Project {
    /// Loads `DIR/seams.toml`.
    ///
    /// # Errors
    ///
    /// A missing or unreadable manifest, invalid TOML, an unknown key, a
    /// generator that names both or neither of `builtin` and `wasm`, a
    /// path that leaves the project, or a limit out of range; each error
    /// names the file, line and key.
    pub fn load(dir: &Path) -> Result<Project, ProjectError> {
        Self::load_reaching(dir, Reach::Inside)
    }

    /// Loads `DIR/seams.toml`; with [`Reach::Outside`], the project's
    /// paths may lead outside it through symlinks.
    ///
    /// # Errors
    ///
    /// As [`Project::load`], and [`ProjectError::Outside`] for a path of
    /// the project (the output directory, a model file, a component, the
    /// lock, the journal, `.seams`) that resolves outside it, unless
    /// `reach` allows it.
    pub fn load_reaching(dir: &Path, reach: Reach) -> Result<Project, ProjectError> {
        if reach == Reach::Outside {
            return Self::load_manifest(dir);
        }
        // The manifest before it is read: its errors quote it.
        if dir.is_dir() {
            confined(dir, "the manifest", dir.join(MANIFEST))?;
        }
        let project = Self::load_manifest(dir)?;
        project.confined()?;
        Ok(project)
    }

    /// Refuses a path of the project that resolves outside it.
    fn confined(&self) -> Result<(), ProjectError> {
        let mut paths: Vec<(&'static str, PathBuf)> = vec![
            ("the output directory", self.output_path()),
            ("the lock", self.root.join(crate::lock::LOCK_FILE)),
            ("the journal", self.root.join(JOURNAL_FILE)),
            ("the directory", self.root.join(".seams")),
        ];
        paths.extend(
            self.model_files
                .iter()
                .map(|f| ("the model file", f.clone())),
        );
        paths.extend(self.generators.iter().filter_map(|g| match g {
            GeneratorSource::Wasm { path, .. } => Some(("the component", self.root.join(path))),
            GeneratorSource::Package { path } => Some(("the package", self.root.join(path))),
            _ => None,
        }));
        for (what, path) in paths {
            confined(&self.root, what, path)?;
        }
        Ok(())
    }

    fn load_manifest(dir: &Path) -> Result<Project, ProjectError> {
        let path = dir.join(MANIFEST);
        let bytes = match crate::project_file::read(&path, crate::project_file::MANIFEST_LIMIT) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && !dir.is_dir() => {
                return Err(ProjectError::NoDirectory {
                    dir: dir.to_owned(),
                });
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(ProjectError::NotFound {
                    dir: dir.to_owned(),
                });
            }
            Err(source) => return Err(ProjectError::Io { path, source }),
        };
        let text = seams_model::input_text::decode(&bytes).map_err(|e| ProjectError::Invalid {
            path: path.clone(),
            line: e.line,
            message: e.at_column(),
        })?;
        Self::parse(dir, &path, text)
    }

    /// Parses manifest text; `path` is only used in errors.
    ///
    /// # Errors
    ///
    /// As [`Project::load`].
    pub fn parse(root: &Path, path: &Path, text: &str) -> Result<Project, ProjectError> {
        let invalid = |span: Option<Range<usize>>, message: String| ProjectError::Invalid {
            path: path.to_owned(),
            line: span.map_or(1, |s| line_of(text, s.start)),
            message,
        };
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        let raw: RawManifest = toml::from_str(text).map_err(|e| {
            let mut message = e.message().to_owned();
            // toml names no key for a duplicate; its span covers the key.
            if message.starts_with("duplicate key")
                && let Some(key) = e.span().and_then(|s| text.get(s))
            {
                message = format!(
                    "duplicate key {}: a key may be set only once",
                    echo(key.trim())
                );
            }
            invalid(e.span(), cut(&message))
        })?;

        let model = raw.model.into_inner();
        if model.files.is_empty() {
            return Err(invalid(
                None,
                "[model] files is empty; name at least one .ttl, .trig, .nt or .nq file".into(),
            ));
        }
        let mut model_files = Vec::new();
        for file in &model.files {
            let rel = relative_path(file.get_ref())
                .and_then(outside_version_control)
                .and_then(model_suffix)
                .map_err(|why| {
                    invalid(
                        Some(file.span()),
                        format!("[model] files: {} {why}", echo(file.get_ref())),
                    )
                })?;
            model_files.push(root.join(rel));
        }

        let output_dir = match raw.output {
            Some(output) => {
                let dir = output.into_inner().dir;
                let shown = echo(dir.get_ref());
                let rel = relative_path(dir.get_ref())
                    .and_then(outside_version_control)
                    .and_then(output_subdirectory)
                    .map_err(|why| {
                        invalid(Some(dir.span()), format!("[output] dir: {shown} {why}"))
                    })?;
                // seams deletes orphans in the output directory: it may hold
                // nothing else of the project.
                for (file, model_file) in model.files.iter().zip(&model_files) {
                    if model_file.starts_with(root.join(&rel)) {
                        return Err(invalid(
                            Some(dir.span()),
                            format!(
                                "[output] dir: {shown} holds the model file {}; seams may delete what it holds, so give outputs a directory of their own",
                                echo(file.get_ref())
                            ),
                        ));
                    }
                }
                rel
            }
            None => PathBuf::from("out"),
        };

        if raw.generator.is_empty() {
            return Err(invalid(
                None,
                "no [[generator]]; add one, e.g. [[generator]] builtin = \"htmx\"".into(),
            ));
        }
        let mut generators = Vec::new();
        for entry in &raw.generator {
            let g = entry.get_ref();
            let source = match (&g.builtin, &g.wasm, &g.oci, &g.package) {
                (Some(name), None, None, None) => {
                    if !crate::builtin::NAMES.contains(&name.get_ref().as_str()) {
                        return Err(invalid(
                            Some(name.span()),
                            format!(
                                "[[generator]] builtin: unknown generator {}; the built-ins are: {}",
                                echo(name.get_ref()),
                                crate::builtin::NAMES.join(", ")
                            ),
                        ));
                    }
                    if let Some(sha) = &g.sha256 {
                        return Err(invalid(
                            Some(sha.span()),
                            "[[generator]] sha256: built-ins are pinned by the seams version; remove the key".into(),
                        ));
                    }
                    GeneratorSource::Builtin(name.get_ref().clone())
                }
                (None, Some(wasm), None, None) => {
                    let rel = relative_path(wasm.get_ref()).map_err(|why| {
                        invalid(
                            Some(wasm.span()),
                            format!("[[generator]] wasm: {} {why}", echo(wasm.get_ref())),
                        )
                    })?;
                    let sha256 = match &g.sha256 {
                        Some(sha) => {
                            let s = sha.get_ref();
                            if s.len() != 64
                                || !s
                                    .bytes()
                                    .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
                            {
                                return Err(invalid(
                                    Some(sha.span()),
                                    "[[generator]] sha256: expected 64 lowercase hex digits".into(),
                                ));
                            }
                            Some(s.clone())
                        }
                        None => None,
                    };
                    GeneratorSource::Wasm { path: rel, sha256 }
                }
                (None, None, None, Some(package)) => {
                    if let Some(sha) = &g.sha256 {
                        return Err(invalid(
                            Some(sha.span()),
                            "[[generator]] sha256: a package is pinned by its built component's sha256 in seams.lock; remove the key".into(),
                        ));
                    }
                    let path = relative_path(package.get_ref())
                        .and_then(outside_version_control)
                        .and_then(package_directory)
                        .map_err(|why| {
                            invalid(
                                Some(package.span()),
                                format!("[[generator]] package: {} {why}", echo(package.get_ref())),
                            )
                        })?;
                    GeneratorSource::Package { path }
                }
                (None, None, Some(oci), None) => {
                    if let Some(sha) = &g.sha256 {
                        return Err(invalid(
                            Some(sha.span()),
                            "[[generator]] sha256: an oci generator is pinned by digest in seams.lock, or in the reference (REGISTRY/NAME@sha256:DIGEST); remove the key".into(),
                        ));
                    }
                    let reference = oci.get_ref().parse::<Reference>().map_err(|e| {
                        invalid(Some(oci.span()), format!("[[generator]] oci: {e}"))
                    })?;
                    GeneratorSource::Oci(reference)
                }
                _ => {
                    return Err(invalid(
                        Some(entry.span()),
                        "[[generator]] needs exactly one of builtin = \"NAME\", wasm = \"PATH.wasm\", oci = \"REGISTRY/NAME:TAG\" or package = \"DIR\"".into(),
                    ));
                }
            };
            if generators.contains(&source) {
                return Err(invalid(
                    Some(entry.span()),
                    format!("[[generator]] {source} is listed twice"),
                ));
            }
            generators.push(source);
        }

        let mut limits = Limits::default();
        let s = &raw.sandbox;
        let positive = |v: &Spanned<u64>, key: &str| {
            if *v.get_ref() == 0 {
                Err(invalid(
                    Some(v.span()),
                    format!("[sandbox] {key} must be greater than 0"),
                ))
            } else {
                Ok(*v.get_ref())
            }
        };
        if let Some(v) = &s.fuel {
            limits.fuel = positive(v, "fuel")?;
        }
        if let Some(v) = &s.timeout_seconds {
            let secs = *v.get_ref();
            if !(secs > 0.0 && secs <= 3600.0) {
                return Err(invalid(
                    Some(v.span()),
                    "[sandbox] timeout-seconds must be in (0, 3600]".into(),
                ));
            }
            limits.timeout = std::time::Duration::from_secs_f64(secs);
        }
        let mib = |v: &Spanned<u64>, key: &str, max: u64| {
            let n = positive(v, key)?;
            if n > max {
                return Err(invalid(
                    Some(v.span()),
                    format!("[sandbox] {key} must be at most {max}"),
                ));
            }
            Ok(n as usize)
        };
        if let Some(v) = &s.memory_mib {
            limits.memory_bytes = mib(v, "memory-mib", 4096)? << 20;
        }
        if let Some(v) = &s.max_outputs {
            limits.max_outputs = mib(v, "max-outputs", 1_000_000)?;
        }
        if let Some(v) = &s.max_output_mib {
            limits.max_output_bytes = mib(v, "max-output-mib", 4096)? << 20;
        }
        if let Some(v) = &s.max_log_kib {
            limits.max_log_bytes = mib(v, "max-log-kib", 1 << 20)? << 10;
        }
        if let Some(v) = &s.stack_kib {
            limits.stack_bytes = mib(v, "stack-kib", 64 << 10)? << 10;
        }
        if let Some(v) = &s.max_handles {
            limits.max_handles = mib(v, "max-handles", 1_000_000)?;
        }

        Ok(Project {
            root: root.to_owned(),
            model_files,
            output_dir,
            generators,
            limits,
            propose: raw.propose,
            registry: None,
            build_dir: None,
            packages: None,
        })
    }

    /// The output directory, resolved against the root.
    pub fn output_path(&self) -> PathBuf {
        self.root.join(&self.output_dir)
    }

    /// An output as a user names it (relative to the project, or to the
    /// output directory) as the posix path inside the output directory.
    pub(crate) fn output_relative(&self, output: &str) -> String {
        Path::new(output)
            .strip_prefix(&self.output_dir)
            .map(posix)
            .unwrap_or_else(|_| output.to_owned())
    }
}

/// A path written in the manifest must stay inside the project.
fn relative_path(text: &str) -> Result<PathBuf, &'static str> {
    let path = Path::new(text);
    if text.is_empty() {
        return Err("is empty");
    }
    if text.contains('\\') {
        return Err("must use '/' as separator");
    }
    for c in path.components() {
        match c {
            Component::Normal(_) | Component::CurDir => {}
            Component::ParentDir => {
                return Err("must not contain '..'; keep files inside the project");
            }
            Component::RootDir | Component::Prefix(_) => {
                return Err("must be relative to the project directory");
            }
        }
    }
    Ok(path.to_owned())
}

/// The directories version control keeps its own state in: its
/// configuration runs commands (git's `core.fsmonitor`, hooks), so seams
/// never reads a model from, or writes anything into, one of them.
const VERSION_CONTROL: [&str; 8] = [
    ".git", ".hg", ".svn", ".bzr", "_darcs", ".jj", ".pijul", "CVS",
];

/// A path of the project that is not inside a version-control directory.
fn outside_version_control(path: PathBuf) -> Result<PathBuf, &'static str> {
    let inside = path.components().any(|c| {
        VERSION_CONTROL
            .iter()
            .any(|vcs| c.as_os_str().eq_ignore_ascii_case(vcs))
    });
    if inside {
        return Err(
            "is inside a version-control directory (.git, .hg, .svn...), whose files seams never reads or writes",
        );
    }
    Ok(path)
}

/// A model file must have one of the suffixes seams reads RDF from.
fn model_suffix(path: PathBuf) -> Result<PathBuf, &'static str> {
    let known = path
        .extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| seams_model::MODEL_SUFFIXES.contains(&e));
    if !known {
        return Err("is not a model file: name a .ttl, .trig, .nt or .nq file");
    }
    Ok(path)
}

/// The output directory must be a subdirectory of the project, normalized
/// (no `.` segments), and not the project's own `.seams` directory.
fn output_subdirectory(path: PathBuf) -> Result<PathBuf, &'static str> {
    let normal: PathBuf = path
        .components()
        .filter(|c| !matches!(c, Component::CurDir))
        .collect();
    if normal.as_os_str().is_empty() {
        return Err(
            "is the project directory itself; outputs need a subdirectory of their own, e.g. \"out\"",
        );
    }
    if normal.starts_with(".seams") {
        return Err("is inside .seams, seams's own directory; use e.g. \"out\"");
    }
    Ok(normal)
}

/// A package directory, normalized (no `.` segments, so that the lock
/// names it one way): a subdirectory of the project outside `.seams`.
fn package_directory(path: PathBuf) -> Result<PathBuf, &'static str> {
    let normal: PathBuf = path
        .components()
        .filter(|c| !matches!(c, Component::CurDir))
        .collect();
    if normal.as_os_str().is_empty() {
        return Err("is the project directory itself; keep the package in a directory of its own");
    }
    if normal.starts_with(".seams") {
        return Err("is inside .seams, seams's own directory");
    }
    Ok(normal)
}

/// The line of byte `offset`, which the TOML parser gives: it reads a
/// leading byte order mark as one byte, so the offset may fall inside a
/// character (a second mark after the one `load` strips).
fn line_of(text: &str, offset: usize) -> usize {
    text[..text.floor_char_boundary(offset)]
        .matches('\n')
        .count()
        + 1
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Project, ProjectError> {
        Project::parse(Path::new("/p"), Path::new("/p/seams.toml"), text)
    }

    #[test]
    fn an_error_after_a_byte_order_mark_names_its_line_without_panicking() {
        // Found by the manifest fuzz target: a second mark (`load` strips
        // the first) with an error at offset 1.
        for text in [
            "\u{feff}r]]n",
            "\u{feff}\u{feff}r]]n\n",
            "\u{feff}\n\nx = = 1\n",
        ] {
            let e = parse(text).unwrap_err().to_string();
            assert!(e.starts_with("/p/seams.toml:"), "{e}");
        }
        let fuzzed = include_bytes!(
            "../../../fuzz/crashes/manifest/crash-053c9444e80ccca9ed6dd85cf7d8d00a44a66ecb"
        );
        assert!(parse(std::str::from_utf8(fuzzed).unwrap()).is_err());
    }

    #[test]
    fn a_minimal_manifest_gets_defaults() {
        let p =
            parse("[model]\nfiles = [\"model.ttl\"]\n[[generator]]\nbuiltin = \"htmx\"\n").unwrap();
        assert_eq!(p.model_files, [PathBuf::from("/p/model.ttl")]);
        assert_eq!(p.output_dir, PathBuf::from("out"));
        assert_eq!(p.generators, [GeneratorSource::Builtin("htmx".into())]);
        assert_eq!(p.limits, Limits::default());
    }

    #[test]
    fn an_oci_generator_is_read_and_labelled() {
        let p =
            parse("[model]\nfiles = [\"m.ttl\"]\n[[generator]]\noci = \"ghcr.io/me/htmx:1.0\"\n")
                .unwrap();
        let reference: Reference = "ghcr.io/me/htmx:1.0".parse().unwrap();
        assert_eq!(p.generators, [GeneratorSource::Oci(reference)]);
        assert_eq!(p.generators[0].label(), "oci:ghcr.io/me/htmx:1.0");
        assert_eq!(p.generators[0].to_string(), "ghcr.io/me/htmx:1.0");
    }

    #[test]
    fn a_package_is_read_normalized_and_labelled() {
        let p = parse(
            "[model]\nfiles = [\"m.ttl\"]\n[[generator]]\npackage = \"./gens/./site-map/\"\n",
        )
        .unwrap();
        assert_eq!(
            p.generators,
            [GeneratorSource::Package {
                path: PathBuf::from("gens/site-map")
            }]
        );
        assert_eq!(p.generators[0].label(), "package:gens/site-map");
        for (dir, says) in [
            (".", "the project directory itself"),
            (".seams/x", "inside .seams"),
        ] {
            let e = parse(&format!(
                "[model]\nfiles = [\"m.ttl\"]\n[[generator]]\npackage = \"{dir}\"\n"
            ))
            .unwrap_err()
            .to_string();
            assert!(e.contains(says), "{dir}: {e}");
        }
    }

    #[test]
    fn sandbox_limits_are_read() {
        let p = parse(
            "[model]\nfiles = [\"m.ttl\"]\n[[generator]]\nwasm = \"g.wasm\"\n[sandbox]\nfuel = 5\ntimeout-seconds = 2.5\nmemory-mib = 64\nmax-outputs = 3\nmax-output-mib = 1\nmax-log-kib = 2\nstack-kib = 512\nmax-handles = 7\n",
        )
        .unwrap();
        assert_eq!(p.limits.fuel, 5);
        assert_eq!(p.limits.timeout, std::time::Duration::from_millis(2500));
        assert_eq!(p.limits.memory_bytes, 64 << 20);
        assert_eq!(p.limits.max_outputs, 3);
        assert_eq!(p.limits.max_output_bytes, 1 << 20);
        assert_eq!(p.limits.max_log_bytes, 2 << 10);
        assert_eq!(p.limits.stack_bytes, 512 << 10);
        assert_eq!(p.limits.max_handles, 7);
    }

    #[test]
    fn errors_name_the_file_line_and_key() {
        let cases = [
            (
                "[model]\nfiles = [\"m.ttl\"]\n[[generator]]\nbuiltin = \"nope\"\n",
                "seams.toml:4:",
                "unknown generator \"nope\"",
            ),
            (
                "[model]\nfiles = [\"m.ttl\"]\n[[generator]]\nwasm = \"../g.wasm\"\n",
                "seams.toml:4:",
                "[[generator]] wasm",
            ),
            (
                "[model]\nfiles = [\"/etc/m.ttl\"]\n[[generator]]\nbuiltin = \"htmx\"\n",
                "seams.toml:2:",
                "[model] files",
            ),
            (
                "[model]\nfiles = [\".git/config\"]\n[[generator]]\nbuiltin = \"htmx\"\n",
                "seams.toml:2:",
                "[model] files: \".git/config\" is inside a version-control directory",
            ),
            (
                "[model]\nfiles = [\"m.ttl\", \"./.Git/m.ttl\"]\n[[generator]]\nbuiltin = \"htmx\"\n",
                "seams.toml:2:",
                "is inside a version-control directory",
            ),
            (
                "[model]\nfiles = [\"m.ttl\", \"notes.txt\"]\n[[generator]]\nbuiltin = \"htmx\"\n",
                "seams.toml:2:",
                "\"notes.txt\" is not a model file: name a .ttl, .trig, .nt or .nq file",
            ),
            (
                "[model]\nfiles = [\"m.ttl\"]\n[output]\ndir = \".hg/out\"\n[[generator]]\nbuiltin = \"htmx\"\n",
                "seams.toml:4:",
                "[output] dir: \".hg/out\" is inside a version-control directory",
            ),
            (
                "[model]\nfiles = [\"m.ttl\"]\n[[generator]]\nbuiltin = \"htmx\"\n[sandbox]\nfuel = 0\n",
                "seams.toml:6:",
                "[sandbox] fuel",
            ),
            (
                "[model]\nfiles = [\"m.ttl\"]\n[[generator]]\nbuiltin = \"htmx\"\n[sandbox]\nstack-kib = 99999999\n",
                "seams.toml:6:",
                "[sandbox] stack-kib must be at most 65536",
            ),
            (
                "[model]\nfiles = [\"m.ttl\"]\n[[generator]]\nbuiltin = \"htmx\"\n[sandbox]\nmax-handles = 0\n",
                "seams.toml:6:",
                "[sandbox] max-handles must be greater than 0",
            ),
            (
                "[model]\nfiles = [\"m.ttl\"]\n[[generator]]\nbuiltin = \"htmx\"\n[sandbox]\nmemory = 3\n",
                "seams.toml:6:",
                "memory",
            ),
            (
                "[model]\nfiles = [\"m.ttl\"]\n[[generator]]\nbuiltin = \"htmx\"\nwasm = \"g.wasm\"\n",
                "seams.toml:3:",
                "exactly one of",
            ),
            (
                "[model]\nfiles = [\"m.ttl\"]\n[[generator]]\noci = \"htmx:1\"\n",
                "seams.toml:4:",
                "[[generator]] oci: \"htmx:1\" is not a registry reference: name the registry",
            ),
            (
                "[model]\nfiles = [\"m.ttl\"]\n[[generator]]\noci = \"ghcr.io/me/htmx\"\n",
                "seams.toml:4:",
                "names no tag or digest",
            ),
            (
                "[model]\nfiles = [\"m.ttl\"]\n[[generator]]\noci = \"ghcr.io/me/htmx:1\"\nsha256 = \"ab\"\n",
                "seams.toml:5:",
                "an oci generator is pinned by digest in seams.lock",
            ),
            (
                "[model]\nfiles = [\"m.ttl\"]\n[[generator]]\noci = \"ghcr.io/me/htmx:1\"\nbuiltin = \"htmx\"\n",
                "seams.toml:3:",
                "exactly one of",
            ),
            (
                "[model]\nfiles = [\"m.ttl\"]\n[[generator]]\npackage = \"../gen\"\n",
                "seams.toml:4:",
                "[[generator]] package: \"../gen\" must not contain '..'",
            ),
            (
                "[model]\nfiles = [\"m.ttl\"]\n[[generator]]\npackage = \".git/gen\"\n",
                "seams.toml:4:",
                "is inside a version-control directory",
            ),
            (
                "[model]\nfiles = [\"m.ttl\"]\n[[generator]]\npackage = \"gen\"\nsha256 = \"ab\"\n",
                "seams.toml:5:",
                "a package is pinned by its built component's sha256 in seams.lock",
            ),
            (
                "[model]\nfiles = [\"m.ttl\"]\n[[generator]]\npackage = \"gen\"\n[[generator]]\npackage = \"./gen/\"\n",
                "seams.toml:",
                "is listed twice",
            ),
            ("[model]\nfiles = [\"m.ttl\"\n", "seams.toml:2:", ""),
        ];
        for (text, location, key) in cases {
            let err = parse(text).unwrap_err().to_string();
            assert!(err.contains(location), "{err:?} should name {location}");
            assert!(err.contains(key), "{err:?} should name {key}");
        }
    }

    #[test]
    fn a_missing_manifest_says_what_to_do() {
        let dir = tempfile::tempdir().unwrap();
        let err = Project::load(dir.path()).unwrap_err().to_string();
        assert!(err.contains("--project"), "{err}");
    }
}
