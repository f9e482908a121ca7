//! The command line: parses arguments with clap and calls the library.
//! Every command writes to the given streams, so tests run it in-process.

use std::ffi::OsString;
use std::io::Write;
use std::path::PathBuf;

use clap::{Parser, Subcommand};

use crate::generate::{GenerateError, GenerateOptions, generate};
use crate::project::Project;
use crate::runtime::Runtime;

/// seams turns an RDF model into files through sandboxed WebAssembly generators.
#[derive(Debug, Parser)]
#[command(name = "seams", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum Format {
    Text,
    Json,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run every generator of the project and write its outputs and seams.lock.
    Generate {
        /// The project directory (holding seams.toml).
        #[arg(long, value_name = "DIR", default_value = ".")]
        project: PathBuf,
        /// Overwrite or delete files that were edited since seams wrote them.
        #[arg(long)]
        force: bool,
        /// Accept .wasm components whose bytes differ from seams.lock.
        #[arg(long)]
        update: bool,
    },
    /// Report stale, hand-edited, missing and orphan files and changed components; write nothing.
    Check {
        /// The project directory (holding seams.toml).
        #[arg(long, value_name = "DIR", default_value = ".")]
        project: PathBuf,
        /// Output format.
        #[arg(long, value_enum, default_value_t = Format::Text)]
        format: Format,
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
    },
    /// Ask an LLM provider to draft a generator from a reference output; keep it only if its tests pass.
    DraftGenerator {
        /// The generator's name: a lowercase letter, then lowercase letters, digits and hyphens.
        name: String,
        /// The reference output (its suffix says its type).
        #[arg(long, value_name = "FILE")]
        reference: PathBuf,
        /// The provider command (else [propose] provider); gets the prompt on stdin.
        #[arg(long, value_name = "CMD")]
        provider: Option<String>,
        /// The LLM model, passed to the provider as SEAMS_LLM_MODEL (else [propose] model).
        #[arg(long = "llm-model", value_name = "M")]
        llm_model: Option<String>,
        /// The package directory (default: seams-NAME).
        #[arg(long, value_name = "DIR")]
        out: Option<PathBuf>,
        /// Write into a non-empty directory, replacing the package's files.
        #[arg(long)]
        force: bool,
        /// Retries after a rejected draft (default 2).
        #[arg(long, value_name = "N")]
        retries: Option<u32>,
        /// Seconds the provider may take (default 300).
        #[arg(long, value_name = "SECONDS")]
        timeout: Option<u64>,
        /// The project directory (holding seams.toml).
        #[arg(long, value_name = "DIR", default_value = ".")]
        project: PathBuf,
    },
    /// Build a generator package and run its four tests on the project's model.
    TestGenerator {
        /// The package directory.
        dir: PathBuf,
        /// The project directory (holding seams.toml).
        #[arg(long, value_name = "DIR", default_value = ".")]
        project: PathBuf,
        /// The goldens for this project [default: DIR/tests/golden].
        #[arg(long, value_name = "DIR")]
        goldens: Option<PathBuf>,
    },
    /// Show what a component is: protocol version, meta, sha256 and size.
    Inspect {
        /// The component file.
        #[arg(value_name = "FILE.wasm")]
        file: PathBuf,
    },
    /// Print the view model a generator's extract step builds from the project's model.
    View {
        /// The generator: a built-in name, or the .wasm path as seams.toml gives it.
        generator: String,
        /// The project directory (holding seams.toml).
        #[arg(long, value_name = "DIR", default_value = ".")]
        project: PathBuf,
    },
    /// Show which template lines wrote an output's lines, and the model elements behind them.
    Trace {
        /// The output (relative to the project or its output directory), optionally with :LINE.
        #[arg(value_name = "OUTPUT[:LINE]")]
        target: String,
        /// The project directory (holding seams.toml).
        #[arg(long, value_name = "DIR", default_value = ".")]
        project: PathBuf,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
}

/// Exit status: success.
pub const EXIT_OK: u8 = 0;
/// Exit status: a failure the user can fix.
pub const EXIT_FAILURE: u8 = 1;
/// Exit status: wrong usage.
pub const EXIT_USAGE: u8 = 2;

/// The compiled-component cache: `$SEAMS_CACHE_DIR`, else the user's cache
/// directory's `seams/components`.
pub fn cache_dir() -> Option<PathBuf> {
    match std::env::var_os("SEAMS_CACHE_DIR") {
        Some(dir) if !dir.is_empty() => Some(PathBuf::from(dir)),
        _ => dirs::cache_dir().map(|d| d.join("seams").join("components")),
    }
}

/// Runs `seams` with `args` (the first is the program name) and returns
/// the exit status.
pub fn run(
    args: impl IntoIterator<Item = OsString>,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> u8 {
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => {
            let code = if e.use_stderr() { EXIT_USAGE } else { EXIT_OK };
            let text = e.render().to_string();
            let _ = if e.use_stderr() {
                err.write_all(text.as_bytes())
            } else {
                out.write_all(text.as_bytes())
            };
            return code;
        }
    };
    match cli.command {
        Command::Generate {
            project,
            force,
            update,
        } => {
            let options = GenerateOptions {
                force,
                update,
                fail_after: None,
            };
            generate_command(&project, &options, out, err)
        }
        Command::Check { project, format } => check_command(&project, format, out, err),
        Command::NewGenerator {
            name,
            reference,
            out: dir,
            force,
        } => match crate::scaffold::new_generator(&name, &reference, dir.as_deref(), force) {
            Ok((dir, written)) => {
                for path in written {
                    let _ = writeln!(out, "wrote {}", path.display());
                }
                let _ = writeln!(
                    out,
                    "test it with: seams test-generator {} --project DIR",
                    dir.display()
                );
                EXIT_OK
            }
            Err(e) => {
                let _ = writeln!(err, "seams new-generator: {e}");
                EXIT_FAILURE
            }
        },
        Command::DraftGenerator {
            name,
            reference,
            provider,
            llm_model,
            out: dir,
            force,
            retries,
            timeout,
            project,
        } => {
            let request = crate::draft::DraftRequest {
                name,
                reference,
                provider,
                llm_model,
                out: dir,
                force,
                retries,
                timeout,
            };
            let result = Project::load(&project)
                .map_err(|e| anyhow::Error::from(GenerateError::from(e)))
                .and_then(|project| {
                    let runtime = Runtime::new(cache_dir())?;
                    Ok(crate::draft::draft_generator(
                        &project, &runtime, &request, out, err,
                    )?)
                });
            let result = result
                .map_err(|e| {
                    let _ = writeln!(err, "seams draft-generator: {e:#}");
                })
                .ok();
            let Some(report) = result else {
                return EXIT_FAILURE;
            };
            for test in &report.tests {
                let _ = writeln!(out, "{test}: ok");
            }
            for path in &report.written {
                let _ = writeln!(out, "wrote {}", path.display());
            }
            EXIT_OK
        }
        Command::TestGenerator {
            dir,
            project,
            goldens,
        } => {
            let Some(report) = in_project("test-generator", &project, err, |project, runtime| {
                Ok(crate::golden::test_generator(
                    &dir,
                    goldens.as_deref(),
                    project,
                    runtime,
                )?)
            }) else {
                return EXIT_FAILURE;
            };
            let _ = out.write_all(report.to_text().as_bytes());
            if report.passed() {
                EXIT_OK
            } else {
                EXIT_FAILURE
            }
        }
        Command::Inspect { file } => {
            let result = Runtime::new(cache_dir())
                .map_err(anyhow::Error::from)
                .and_then(|runtime| Ok(crate::inspect::inspect(&runtime, &file)?));
            match result {
                Ok(inspection) => {
                    let _ =
                        out.write_all(inspection.to_text(&file.display().to_string()).as_bytes());
                    EXIT_OK
                }
                Err(e) => {
                    let _ = writeln!(err, "seams inspect: {e:#}");
                    EXIT_FAILURE
                }
            }
        }
        Command::View { generator, project } => {
            let Some(view) = in_project("view", &project, err, |project, runtime| {
                Ok(crate::inspect::view(project, runtime, &generator)?)
            }) else {
                return EXIT_FAILURE;
            };
            let _ = out.write_all(view.as_bytes());
            EXIT_OK
        }
        Command::Trace {
            target,
            project,
            json,
        } => trace_command(&project, &target, json, out, err),
    }
}

/// Loads the project and the runtime and runs `command`; an error is
/// printed as `seams NAME: ...` and gives `None`.
fn in_project<T>(
    name: &str,
    dir: &std::path::Path,
    err: &mut dyn Write,
    command: impl FnOnce(&Project, &Runtime) -> anyhow::Result<T>,
) -> Option<T> {
    let result = Project::load(dir)
        .map_err(|e| anyhow::Error::from(GenerateError::from(e)))
        .and_then(|project| {
            let runtime = Runtime::new(cache_dir())?;
            command(&project, &runtime)
        });
    match result {
        Ok(value) => Some(value),
        Err(e) => {
            let _ = writeln!(err, "seams {name}: {e:#}");
            None
        }
    }
}

fn trace_command(
    dir: &std::path::Path,
    target: &str,
    json: bool,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> u8 {
    let Some(view) = in_project("trace", dir, err, |project, runtime| {
        let (output, line) = crate::trace::parse_target(target);
        Ok(crate::trace::trace_view(project, runtime, output, line)?)
    }) else {
        return EXIT_FAILURE;
    };
    let text = if json { view.to_json() } else { view.to_text() };
    let _ = out.write_all(text.as_bytes());
    EXIT_OK
}

fn check_command(
    dir: &std::path::Path,
    format: Format,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> u8 {
    let Some(report) = in_project("check", dir, err, |project, runtime| {
        Ok(crate::check::check(project, runtime)?)
    }) else {
        return EXIT_FAILURE;
    };
    let text = match format {
        Format::Text => report.to_text(),
        Format::Json => report.to_json(),
    };
    let _ = out.write_all(text.as_bytes());
    if report.clean { EXIT_OK } else { EXIT_FAILURE }
}

fn generate_command(
    dir: &std::path::Path,
    options: &GenerateOptions,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> u8 {
    let Some(report) = in_project("generate", dir, err, |project, runtime| {
        Ok(generate(project, runtime, options)?)
    }) else {
        return EXIT_FAILURE;
    };
    if report.up_to_date {
        let _ = writeln!(
            out,
            "up to date: the seams version, the model, seams.toml, the components and every output match seams.lock; nothing was run"
        );
        return EXIT_OK;
    }
    for line in &report.log {
        let _ = writeln!(err, "{line}");
    }
    for path in &report.written {
        let _ = writeln!(out, "wrote {path}");
    }
    for path in &report.deleted {
        let _ = writeln!(out, "deleted {path} (no longer generated)");
    }
    if report.lock_written {
        let _ = writeln!(out, "wrote {}", crate::lock::LOCK_FILE);
    }
    for failure in &report.failures {
        let _ = writeln!(err, "seams generate: {failure}");
    }
    let _ = writeln!(
        out,
        "{} written, {} unchanged, {} deleted, {} generator{} failed",
        report.written.len(),
        report.unchanged.len(),
        report.deleted.len(),
        report.failures.len(),
        if report.failures.len() == 1 { "" } else { "s" }
    );
    if report.failures.is_empty() {
        EXIT_OK
    } else {
        EXIT_FAILURE
    }
}
