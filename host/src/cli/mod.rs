//! The command line: parses arguments with clap and calls the library.
//! Every command writes to the given streams, so tests run it in-process.
//!
//! Exit status: 0 done and clean; 1 a problem the user can fix (check found
//! problems, a generator failed, bad input); 2 usage; 3 seams itself could
//! not do the job (an I/O error, an internal error).

mod bar;
mod console;

use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};

use clap::{CommandFactory, Parser, Subcommand};

pub use console::Terminal;
use console::{ColorChoice, Console, GOOD, WARN};
use seams_authoring::DraftRequest;
use seams_core::{GenerateError, GenerateOptions, GenerateReport, Project, Wait, generate};
use seams_runtime::Runtime;

/// seams turns an RDF model into files through sandboxed WebAssembly generators.
#[derive(Debug, Parser)]
#[command(
    name = "seams",
    version,
    about,
    long_about = None,
    after_help = "Exit status: 0 done and clean; 1 a problem you can fix (check found problems, a generator failed, bad input); 2 usage; 3 seams itself could not do the job (an I/O error, an internal error)."
)]
struct Cli {
    /// Print only results and errors: no progress, no list of written files.
    #[arg(short, long, global = true, conflicts_with = "verbose")]
    quiet: bool,
    /// Print more: unchanged files, timings.
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    verbose: u8,
    /// Color the output: auto (on a terminal, unless NO_COLOR is set), always or never.
    #[arg(long, global = true, value_enum, value_name = "WHEN", default_value_t = ColorChoice::Auto)]
    color: ColorChoice,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Format {
    Text,
    Json,
}

/// `--format`, shared by every command with machine output.
#[derive(Debug, Clone, Copy, clap::Args)]
struct FormatArg {
    /// Output format: text for people, json for programs (one JSON document on stdout, even on error).
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
}

/// `--project`, shared by every command that works on a project.
#[derive(Debug, Clone, clap::Args)]
struct ProjectArg {
    /// The project directory (holding seams.toml).
    #[arg(long, value_name = "DIR", default_value = ".")]
    project: PathBuf,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run every generator of the project and write its outputs and seams.lock.
    Generate {
        #[command(flatten)]
        project: ProjectArg,
        /// Overwrite or delete files that were edited since seams wrote them.
        #[arg(long)]
        force: bool,
        /// Accept .wasm components whose bytes differ from seams.lock.
        #[arg(long)]
        update: bool,
        /// Fail at once if another seams run holds the project, instead of waiting.
        #[arg(long)]
        no_wait: bool,
        #[command(flatten)]
        format: FormatArg,
    },
    /// Report stale, hand-edited, missing and orphan files and changed components; write nothing.
    Check {
        #[command(flatten)]
        project: ProjectArg,
        /// Report a running generate as a problem instead of waiting for it.
        #[arg(long)]
        no_wait: bool,
        #[command(flatten)]
        format: FormatArg,
    },
    /// Write a generator package whose test passes as written, from a reference output.
    NewGenerator {
        /// The generator's name: a lowercase letter, then lowercase letters, digits and hyphens.
        name: String,
        /// The reference output (its suffix says its type).
        #[arg(long, value_name = "FILE")]
        reference: PathBuf,
        /// The package directory (default: seams-NAME).
        #[arg(long, value_name = "DIR")]
        out: Option<PathBuf>,
        /// Write into a non-empty directory, replacing the package's files.
        #[arg(long)]
        force: bool,
        #[command(flatten)]
        format: FormatArg,
    },
    /// Ask an LLM provider to draft a generator from a reference output; keep it only if its tests pass.
    DraftGenerator {
        #[command(flatten)]
        request: DraftRequest,
        #[command(flatten)]
        project: ProjectArg,
        #[command(flatten)]
        format: FormatArg,
    },
    /// Build a generator package and run its four tests on the project's model.
    TestGenerator {
        /// The package directory.
        dir: PathBuf,
        #[command(flatten)]
        project: ProjectArg,
        /// The goldens for this project [default: DIR/tests/golden].
        #[arg(long, value_name = "DIR")]
        goldens: Option<PathBuf>,
        #[command(flatten)]
        format: FormatArg,
    },
    /// Show what a component is: protocol version, meta, sha256 and size.
    Inspect {
        /// The component file.
        #[arg(value_name = "FILE.wasm")]
        file: PathBuf,
        #[command(flatten)]
        format: FormatArg,
    },
    /// Print the view model a generator's extract step builds from the project's model (JSON in either format).
    View {
        /// The generator: builtin:NAME (or just NAME), or the .wasm path as seams.toml gives it.
        generator: String,
        #[command(flatten)]
        project: ProjectArg,
        #[command(flatten)]
        format: FormatArg,
    },
    /// Show which template lines wrote an output's lines, and the model elements behind them.
    Trace {
        /// The output (relative to the project or its output directory), optionally with :LINE.
        #[arg(value_name = "OUTPUT[:LINE]")]
        target: String,
        #[command(flatten)]
        project: ProjectArg,
        #[command(flatten)]
        format: FormatArg,
        /// The same as --format json (kept for one release).
        #[arg(long, hide = true)]
        json: bool,
    },
    /// Print a completion script for SHELL (e.g. `seams completions bash > /etc/bash_completion.d/seams`).
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
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

/// Runs `seams` with `args` (the first is the program name) and returns
/// the exit status. The streams are taken not to be terminals: no color
/// unless `--color always`, no progress.
pub fn run(
    args: impl IntoIterator<Item = OsString>,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> u8 {
    run_on(args, out, err, Terminal::default())
}

/// [`run`] on streams that may be terminals (color and progress follow).
pub fn run_on(
    args: impl IntoIterator<Item = OsString>,
    out: &mut dyn Write,
    err: &mut dyn Write,
    terminal: Terminal,
) -> u8 {
    let args: Vec<OsString> = args.into_iter().collect();
    let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
    let cli = match Cli::try_parse_from(&args) {
        Ok(cli) => cli,
        Err(e) => {
            let (stream, is_terminal, code): (&mut dyn Write, bool, u8) = if e.use_stderr() {
                (err, terminal.stderr, EXIT_USAGE)
            } else {
                (out, terminal.stdout, EXIT_OK)
            };
            let rendered = e.render();
            let text = if console::use_color(color_flag(&args), is_terminal, no_color) {
                rendered.ansi().to_string()
            } else {
                rendered.to_string()
            };
            let _ = stream.write_all(text.as_bytes());
            return code;
        }
    };
    let console = Console::new(cli.quiet, cli.verbose, cli.color, terminal, no_color);
    let command = cli.command;
    // A bug in seams must not look like a crash: it is reported, with exit 3.
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        dispatch(command, &console, &mut *out, &mut *err)
    }));
    outcome.unwrap_or_else(|payload| {
        let what = payload
            .downcast_ref::<&str>()
            .map(|s| (*s).to_owned())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "a panic".to_owned());
        console.error(
            err,
            "",
            &format!("internal error (a bug in seams, please report it): {what}"),
        );
        EXIT_INTERNAL
    })
}

/// The `--color` value among raw arguments, for clap's own usage errors.
fn color_flag(args: &[OsString]) -> ColorChoice {
    let mut choice = ColorChoice::Auto;
    let mut iter = args.iter().map(|a| a.to_string_lossy());
    while let Some(arg) = iter.next() {
        let value = match arg.strip_prefix("--color") {
            Some("") => iter.next().map(|v| v.into_owned()),
            Some(rest) => rest.strip_prefix('=').map(str::to_owned),
            None => None,
        };
        choice = match value.as_deref() {
            Some("always") => ColorChoice::Always,
            Some("never") => ColorChoice::Never,
            Some(_) => ColorChoice::Auto,
            None => choice,
        };
    }
    choice
}

fn dispatch(command: Command, console: &Console, out: &mut dyn Write, err: &mut dyn Write) -> u8 {
    let mut io = Io { console, out, err };
    match command {
        Command::Generate {
            project,
            force,
            update,
            no_wait,
            format,
        } => generate_command(
            &mut io,
            &project.project,
            GenerateFlags {
                force,
                update,
                no_wait,
            },
            format.format,
        ),
        Command::Check {
            project,
            no_wait,
            format,
        } => check_command(&mut io, &project.project, no_wait, format.format),
        Command::NewGenerator {
            name,
            reference,
            out: dir,
            force,
            format,
        } => {
            let result = seams_authoring::new_generator(&name, &reference, dir.as_deref(), force);
            match result {
                Ok((dir, written)) => {
                    let written: Vec<String> =
                        written.iter().map(|p| p.display().to_string()).collect();
                    let next = format!(
                        "test it with: seams test-generator {} --project DIR",
                        dir.display()
                    );
                    io.finish(
                        format.format,
                        || written_lines(&written) + &next + "\n",
                        || serde_json::json!({ "written": written, "dir": dir.display().to_string() }),
                        EXIT_OK,
                    )
                }
                Err(e) => io.fail(format.format, "new-generator", e.into()),
            }
        }
        Command::DraftGenerator {
            request,
            project,
            format,
        } => draft_command(&mut io, &request, &project.project, format.format),
        Command::TestGenerator {
            dir,
            project,
            goldens,
            format,
        } => {
            let progress = io.console.progress();
            let result = in_project(&project.project, |project, runtime| {
                Ok(seams_authoring::test_generator(
                    &dir,
                    goldens.as_deref(),
                    project,
                    runtime,
                    progress.as_ref(),
                )?)
            });
            match result {
                Ok(report) => {
                    let code = if report.passed() {
                        EXIT_OK
                    } else {
                        EXIT_FAILURE
                    };
                    let quiet = io.console.quiet;
                    io.finish(
                        format.format,
                        || {
                            let text = report.to_text();
                            if quiet {
                                // Only what failed.
                                text.lines()
                                    .filter(|l| !l.ends_with(": ok"))
                                    .map(|l| format!("{l}\n"))
                                    .collect()
                            } else {
                                text
                            }
                        },
                        || serde_json::from_str(&report.to_json()).expect("valid JSON"),
                        code,
                    )
                }
                Err(e) => io.fail(format.format, "test-generator", e),
            }
        }
        Command::Inspect { file, format } => {
            let result = Runtime::new(cache_dir())
                .map_err(anyhow::Error::from)
                .and_then(|runtime| Ok(seams_core::inspect(&runtime, &file)?));
            match result {
                Ok(inspection) => {
                    let shown = file.display().to_string();
                    io.finish(
                        format.format,
                        || inspection.to_text(&shown),
                        || serde_json::from_str(&inspection.to_json(&shown)).expect("valid JSON"),
                        EXIT_OK,
                    )
                }
                Err(e) => io.fail(format.format, "inspect", e),
            }
        }
        Command::View {
            generator,
            project,
            format,
        } => {
            let result = in_project(&project.project, |project, runtime| {
                Ok(seams_core::view(project, runtime, &generator)?)
            });
            match result {
                // The view model is JSON whatever the format.
                Ok(view) => io.finish(
                    format.format,
                    || view.clone(),
                    || {
                        serde_json::from_str(&view)
                            .unwrap_or(serde_json::Value::String(view.clone()))
                    },
                    EXIT_OK,
                ),
                Err(e) => io.fail(format.format, "view", e),
            }
        }
        Command::Trace {
            target,
            project,
            format,
            json,
        } => {
            let format = if json { Format::Json } else { format.format };
            let result = in_project(&project.project, |project, runtime| {
                let (output, line) = seams_core::parse_target(&target);
                Ok(seams_core::trace_view(project, runtime, output, line)?)
            });
            match result {
                Ok(view) => io.finish(
                    format,
                    || view.to_text(),
                    || serde_json::from_str(&view.to_json()).expect("valid JSON"),
                    EXIT_OK,
                ),
                Err(e) => io.fail(format, "trace", e),
            }
        }
        Command::Completions { shell } => {
            clap_complete::generate(shell, &mut Cli::command(), "seams", io.out);
            EXIT_OK
        }
    }
}

/// The streams and settings a command prints with.
struct Io<'a> {
    console: &'a Console,
    out: &'a mut dyn Write,
    err: &'a mut dyn Write,
}

impl Io<'_> {
    /// Prints a result as text or as one JSON document, and gives `code`.
    fn finish(
        &mut self,
        format: Format,
        text: impl FnOnce() -> String,
        json: impl FnOnce() -> serde_json::Value,
        code: u8,
    ) -> u8 {
        let printed = match format {
            Format::Text => text(),
            Format::Json => json_text(&json()),
        };
        let _ = self.out.write_all(printed.as_bytes());
        code
    }

    /// Reports an error as `seams NAME: ...` on stderr (and, with `--format
    /// json`, as `{"error": ..., "exit_code": ...}` on stdout) and gives its
    /// exit status.
    fn fail(&mut self, format: Format, name: &str, error: anyhow::Error) -> u8 {
        let message = error_text(&error);
        let code = exit_code(&error);
        self.console.error(self.err, name, &message);
        if format == Format::Json {
            let _ = self.out.write_all(
                json_text(&serde_json::json!({ "error": message, "exit_code": code })).as_bytes(),
            );
        }
        code
    }
}

fn json_text(value: &serde_json::Value) -> String {
    let mut text = serde_json::to_string_pretty(value).expect("JSON serializes");
    text.push('\n');
    text
}

fn written_lines(paths: &[String]) -> String {
    paths.iter().map(|p| format!("wrote {p}\n")).collect()
}

/// An error and its causes, each said once: a cause whose text the message
/// already holds (`GenerateError::Io` prints its source) is not repeated.
fn error_text(error: &anyhow::Error) -> String {
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
fn exit_code(error: &anyhow::Error) -> u8 {
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

/// Loads the project and the runtime and runs `command`.
fn in_project<T>(
    dir: &Path,
    command: impl FnOnce(&Project, &Runtime) -> anyhow::Result<T>,
) -> anyhow::Result<T> {
    let project = Project::load(dir).map_err(GenerateError::from)?;
    let runtime = Runtime::new(cache_dir())?;
    command(&project, &runtime)
}

fn draft_command(io: &mut Io<'_>, request: &DraftRequest, dir: &Path, format: Format) -> u8 {
    let progress = io.console.progress();
    let mut chatter = Vec::new();
    let result = in_project(dir, |project, runtime| {
        // Progress lines ("prompt sha256", cache hit or miss) are text
        // only; retries go to stderr as they happen.
        let out: &mut dyn Write = match format {
            Format::Text if !io.console.quiet => &mut *io.out,
            _ => &mut chatter,
        };
        Ok(seams_authoring::draft_generator(
            project,
            runtime,
            request,
            out,
            &mut *io.err,
            progress.as_ref(),
        )?)
    });
    match result {
        Ok(report) => {
            let written: Vec<String> = report
                .written
                .iter()
                .map(|p| p.display().to_string())
                .collect();
            let quiet = io.console.quiet;
            io.finish(
                format,
                || {
                    if quiet {
                        return String::new();
                    }
                    let tests: String = report.tests.iter().map(|t| format!("{t}: ok\n")).collect();
                    tests + &written_lines(&written)
                },
                || {
                    serde_json::json!({
                        "prompt_sha256": report.prompt_sha256,
                        "cache_hit": report.cache_hit,
                        "tests": report.tests,
                        "written": written,
                    })
                },
                EXIT_OK,
            )
        }
        Err(e) => io.fail(format, "draft-generator", e),
    }
}

/// What waiting for another run looks like: one line on stderr (unless
/// `-q`), then the wait.
const WAITING: &str =
    "waiting for another seams run on this project to finish (--no-wait does not wait)";

fn check_command(io: &mut Io<'_>, dir: &Path, no_wait: bool, format: Format) -> u8 {
    let result = in_project(dir, |project, runtime| {
        let report = seams_core::check_with(project, runtime, Wait::NoWait)?;
        let busy = report
            .problems
            .iter()
            .any(|p| p.kind == "generate-in-progress");
        if busy && !no_wait {
            if !io.console.quiet {
                let _ = writeln!(io.err, "seams check: {WAITING}");
            }
            return Ok(seams_core::check_with(project, runtime, Wait::Block)?);
        }
        Ok(report)
    });
    match result {
        Ok(report) => {
            let code = if report.clean { EXIT_OK } else { EXIT_FAILURE };
            let quiet = io.console.quiet;
            io.finish(
                format,
                || {
                    if quiet && report.clean {
                        String::new()
                    } else {
                        report.to_text()
                    }
                },
                || serde_json::from_str(&report.to_json()).expect("valid JSON"),
                code,
            )
        }
        Err(e) => io.fail(format, "check", e),
    }
}

/// `seams generate`'s switches.
struct GenerateFlags {
    force: bool,
    update: bool,
    no_wait: bool,
}

fn generate_command(io: &mut Io<'_>, dir: &Path, flags: GenerateFlags, format: Format) -> u8 {
    let started = std::time::Instant::now();
    let progress = io.console.progress();
    let options = GenerateOptions {
        force: flags.force,
        update: flags.update,
        progress: progress.as_ref(),
        wait: Wait::NoWait,
        ..GenerateOptions::default()
    };
    let result = in_project(dir, |project, runtime| {
        match generate(project, runtime, &options) {
            Err(GenerateError::Busy { .. }) if !flags.no_wait => {
                if !io.console.quiet {
                    let _ = writeln!(io.err, "seams generate: {WAITING}");
                }
                let options = GenerateOptions {
                    wait: Wait::Block,
                    ..options.clone()
                };
                Ok(generate(project, runtime, &options)?)
            }
            other => Ok(other?),
        }
    });
    let report = match result {
        Ok(report) => report,
        Err(e) => return io.fail(format, "generate", e),
    };
    let code = if report.failures.is_empty() {
        EXIT_OK
    } else {
        EXIT_FAILURE
    };
    if format == Format::Json {
        return io.finish(format, String::new, || generate_json(&report), code);
    }
    // Failures first: what follows is what the others did.
    for failure in &report.failures {
        io.console.error(io.err, "generate", &failure.to_string());
    }
    if !io.console.quiet {
        for line in &report.log {
            let _ = writeln!(io.err, "{line}");
        }
        let text = generate_text(io.console, &report);
        let _ = io.out.write_all(text.as_bytes());
    }
    if io.console.verbose > 0 {
        let _ = writeln!(io.err, "took {:.2} s", started.elapsed().as_secs_f64());
    }
    code
}

fn generate_text(console: &Console, report: &GenerateReport) -> String {
    if report.up_to_date {
        return console.out_paint(
            GOOD,
            "up to date: the seams version, the model, seams.toml, the components and every output match seams.lock; nothing was run",
        ) + "\n";
    }
    let mut text = String::new();
    for path in &report.written {
        text.push_str(&format!("wrote {path}\n"));
    }
    if console.verbose > 0 {
        for path in &report.unchanged {
            text.push_str(&format!("unchanged {path}\n"));
        }
    }
    for path in &report.deleted {
        text.push_str(&format!("deleted {path} (no longer generated)\n"));
    }
    for path in &report.leftovers {
        text.push_str(&format!(
            "removed {path} (a temporary file an interrupted run left)\n"
        ));
    }
    let failed = report.failures.len();
    if report.lock_written {
        if failed == 0 {
            text.push_str(&format!("wrote {}\n", seams_core::LOCK_FILE));
        } else {
            text.push_str(&format!(
                "wrote {}, keeping the failed generator{}'s entries (its files were left as they were; the next generate runs {} again)\n",
                seams_core::LOCK_FILE,
                if failed == 1 { "" } else { "s" },
                if failed == 1 { "it" } else { "them" },
            ));
        }
    }
    let summary = format!(
        "{} written, {} unchanged, {} deleted, {} generator{} failed",
        report.written.len(),
        report.unchanged.len(),
        report.deleted.len(),
        failed,
        if failed == 1 { "" } else { "s" }
    );
    let style = if failed == 0 { GOOD } else { WARN };
    text + &console.out_paint(style, &summary) + "\n"
}

/// The JSON form of `seams generate --format json`.
fn generate_json(report: &GenerateReport) -> serde_json::Value {
    let failures: Vec<serde_json::Value> = report
        .failures
        .iter()
        .map(|f| serde_json::json!({ "generator": f.generator, "message": f.kind.to_string() }))
        .collect();
    serde_json::json!({
        "up_to_date": report.up_to_date,
        "written": report.written,
        "unchanged": report.unchanged,
        "deleted": report.deleted,
        "leftovers": report.leftovers,
        "lock_written": report.lock_written,
        "failures": failures,
        "log": report.log,
    })
}
