//! What every command shares: its streams and console, the output format,
//! the project argument, how errors become messages and exit codes.

use std::io::Write;
use std::path::{Path, PathBuf};

use seams_core::{GenerateError, Project, Reach};
use seams_registry::{Registry, Settings};
use seams_runtime::Runtime;

use crate::console::{Console, MESSAGE_LIMIT, safe_json, safe_line, safe_text};

/// How a command prints its result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Format {
    // For people.
    Text,
    // One JSON document on stdout, even on error.
    Json,
}

/// `--format`, shared by every command with machine output.
#[derive(Debug, Clone, Copy, clap::Args)]
pub(crate) struct FormatArg {
    /// Output format: text for people, json for programs (one JSON document on stdout, even on error).
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub(crate) format: Format,
}

/// `--project`, shared by every command that works on a project.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct ProjectArg {
    /// The project directory (holding seams.toml).
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub(crate) project: PathBuf,
    /// Let the project's paths (output directory, model files, lock) lead outside it through symlinks you made; a cloned project's never should.
    #[arg(long, env = "SEAMS_ALLOW_OUTSIDE", value_parser = clap::builder::FalseyValueParser::new())]
    pub(crate) allow_outside: bool,
}

impl ProjectArg {
    /// Whether the project may reach outside its directory.
    pub(crate) fn reach(&self) -> Reach {
        if self.allow_outside {
            Reach::Outside
        } else {
            Reach::Inside
        }
    }
}

/// Exit status: success.
pub const EXIT_OK: u8 = 0;
/// Exit status: a failure the user can fix.
pub const EXIT_FAILURE: u8 = 1;
/// Exit status: wrong usage.
pub const EXIT_USAGE: u8 = 2;
/// Exit status: seams itself could not do the job (I/O, internal error).
pub const EXIT_INTERNAL: u8 = 3;

/// The compiled-component cache: `$SEAMS_CACHE_DIR`, else the user's cache
/// directory's `seams/components`.
pub fn cache_dir() -> Option<PathBuf> {
    match std::env::var_os("SEAMS_CACHE_DIR") {
        Some(dir) if !dir.is_empty() => Some(PathBuf::from(dir)),
        _ => dirs::cache_dir().map(|d| d.join("seams").join("components")),
    }
}

/// Where a no-op generate keeps the stat of the locked files it read: the
/// compiled-component cache's `stat` directory, private like it.
pub(crate) fn stat_cache_dir() -> Option<PathBuf> {
    cache_dir().map(|dir| dir.join("stat"))
}

/// The streams and settings a command prints with.
pub(crate) struct Io<'a> {
    pub(crate) console: &'a Console,
    pub(crate) out: &'a mut dyn Write,
    pub(crate) err: &'a mut dyn Write,
}

impl Io<'_> {
    /// Prints a result as text or as one JSON document, and gives `code`.
    pub(crate) fn finish(
        &mut self,
        format: Format,
        text: impl FnOnce() -> String,
        json: impl FnOnce() -> serde_json::Value,
        code: u8,
    ) -> u8 {
        let printed = match format {
            Format::Text => safe_text(&text(), usize::MAX).into_owned(),
            Format::Json => json_text(&json()),
        };
        let _ = self.out.write_all(printed.as_bytes());
        code
    }

    /// Reports an error as `seams NAME: ...` on stderr (and, with `--format
    /// json`, as `{"error": ..., "exit_code": ...}` on stdout) and gives its
    /// exit status.
    pub(crate) fn fail(&mut self, format: Format, name: &str, error: anyhow::Error) -> u8 {
        let message = error_text(&error);
        let code = exit_code(&error);
        self.console.error(self.err, name, &message);
        if format == Format::Json {
            let message = safe_line(&message, MESSAGE_LIMIT);
            let _ = self.out.write_all(
                json_text(&serde_json::json!({ "error": message, "exit_code": code })).as_bytes(),
            );
        }
        code
    }
}

/// A JSON document with a final newline, safe to print ([`safe_json`]).
pub(crate) fn json_text(value: &serde_json::Value) -> String {
    let text = serde_json::to_string_pretty(value).expect("JSON serializes");
    let mut text = safe_json(&text).into_owned();
    text.push('\n');
    text
}

/// A `wrote PATH` line per path.
#[cfg(feature = "authoring")]
pub(crate) fn written_lines(paths: &[String]) -> String {
    paths.iter().map(|p| format!("wrote {p}\n")).collect()
}

/// An error and its causes, each said once: a cause whose text the message
/// already holds (`GenerateError::Io` prints its source) is not repeated.
pub(crate) fn error_text(error: &anyhow::Error) -> String {
    let mut text = error.to_string();
    for cause in error.chain().skip(1) {
        let cause = cause.to_string();
        if !text.contains(&cause) {
            text.push_str(": ");
            text.push_str(&cause);
        }
    }
    text
}

/// 3 when seams could not do the job (an I/O error other than a missing or
/// unreadable input), 1 otherwise.
pub(crate) fn exit_code(error: &anyhow::Error) -> u8 {
    let io_failure = error.chain().any(|cause| {
        cause.downcast_ref::<std::io::Error>().is_some_and(|io| {
            !matches!(
                io.kind(),
                std::io::ErrorKind::NotFound | std::io::ErrorKind::InvalidData
            )
        })
    });
    if io_failure {
        EXIT_INTERNAL
    } else {
        EXIT_FAILURE
    }
}

/// The blob cache of generators pulled from registries:
/// `$SEAMS_BLOB_CACHE_DIR`, else the user's cache directory's
/// `seams/blobs`, else the project's `.seams/blobs`. Separate from the
/// compiled-component cache: blobs are what registries served, checked by
/// digest on every read.
pub fn blob_cache_dir(project_root: &Path) -> PathBuf {
    match std::env::var_os("SEAMS_BLOB_CACHE_DIR") {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir),
        _ => dirs::cache_dir()
            .map(|d| d.join("seams").join("blobs"))
            .unwrap_or_else(|| project_root.join(".seams").join("blobs")),
    }
}

/// Where generator packages are built: `$SEAMS_BUILD_DIR`, else the
/// user's cache directory's `seams/build`, shared by every project so that
/// the SDK's dependencies compile once. Holds only seams's build artefacts.
pub fn build_dir() -> Option<PathBuf> {
    match std::env::var_os("SEAMS_BUILD_DIR") {
        Some(dir) if !dir.is_empty() => Some(PathBuf::from(dir)),
        _ => dirs::cache_dir().map(|d| d.join("seams").join("build")),
    }
}

/// The registry client: the blob cache, and credentials and insecure
/// registries from the environment (never from `seams.toml`).
pub(crate) fn registry(project_root: &Path) -> Registry {
    Registry::new(Settings::from_env(blob_cache_dir(project_root)))
}

/// What the command line adds to a loaded project: the registry client,
/// the shared build directory and, with the authoring tools, what builds
/// its `package` generators (reporting to `progress`).
pub(crate) fn prepare(project: &mut Project, progress: Box<dyn seams_core::Progress + Send>) {
    project.registry = Some(registry(&project.root));
    project.build_dir = build_dir();
    #[cfg(feature = "authoring")]
    {
        project.packages = Some(std::sync::Arc::new(seams_authoring::ProjectPackages::new(
            progress,
        )));
    }
    #[cfg(not(feature = "authoring"))]
    drop(progress);
}

/// Loads the project and the runtime and runs `command`; a package the
/// project builds shows its progress on `console`.
pub(crate) fn in_project<T>(
    dir: &Path,
    reach: Reach,
    console: &Console,
    command: impl FnOnce(&Project, &Runtime) -> anyhow::Result<T>,
) -> anyhow::Result<T> {
    let mut project = Project::load_reaching(dir, reach).map_err(GenerateError::from)?;
    prepare(&mut project, console.progress());
    let runtime = Runtime::with_stack(cache_dir(), project.limits.stack_bytes)?;
    command(&project, &runtime)
}

/// What waiting for another run looks like: one line on stderr (unless
/// `-q`), then the wait.
pub(crate) const WAITING: &str =
    "waiting for another seams run on this project to finish (--no-wait does not wait)";
