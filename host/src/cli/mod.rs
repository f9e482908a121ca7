//! The command line: parses arguments with clap and calls the library.
//! Every command writes to the given streams, so tests run it in-process.
//!
//! Exit status: 0 done and clean; 1 a problem the user can fix (check found
//! problems, a generator failed, bad input); 2 usage; 3 seams itself could
//! not do the job (an I/O error, an internal error).

use std::ffi::OsString;
use std::io::Write;

use clap::{CommandFactory, Parser, Subcommand};

use crate::commands;
pub use crate::console::Terminal;
use crate::console::{self, ColorChoice, Console};
use crate::io::Io;
pub use crate::io::{EXIT_FAILURE, EXIT_INTERNAL, EXIT_OK, EXIT_USAGE, build_dir, cache_dir};

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

#[derive(Debug, Subcommand)]
enum Command {
    /// Make a new project in DIR (new or empty): a small commented model, seams.toml with the built-ins, and a first generate.
    Init(commands::init::Args),
    /// Run every generator of the project and write its outputs and seams.lock.
    Generate(commands::generate::Args),
    /// Report stale, hand-edited, missing and orphan files and changed components; write nothing.
    Check(commands::check::Args),
    /// Write a generator package whose test passes as written, from a reference output.
    #[cfg(feature = "authoring")]
    NewGenerator(commands::new_generator::Args),
    /// Ask an LLM provider to draft a generator from a reference output; keep it only if its tests pass.
    #[cfg(feature = "authoring")]
    DraftGenerator(commands::draft_generator::Args),
    /// Run a set of drafting cases through the provider and print acceptance, attempts, probes and time.
    #[cfg(feature = "authoring")]
    DraftEval(commands::draft_eval::Args),
    /// Build a generator package and run its four tests on the project's model.
    #[cfg(feature = "authoring")]
    TestGenerator(commands::test_generator::Args),
    /// Show what a component is (a file or a registry reference): protocol version, meta, sha256 and size.
    Inspect(commands::inspect::Args),
    /// Add a generator to seams.toml, from an OCI registry or a package in the project, once it is known to be a seams generator.
    Add(commands::add::Args),
    /// Build a generator package, run its four tests on the project's model, and push it to an OCI registry.
    #[cfg(feature = "authoring")]
    Publish(commands::publish::Args),
    /// Print the view model a generator's extract step builds from the project's model (JSON in either format).
    View(commands::view::Args),
    /// Show which template lines wrote an output's lines, and the model elements behind them.
    Trace(commands::trace::Args),
    /// Trust this project's [propose] provider, base_url and key_env, which run a command or send a key (recorded outside the project).
    Trust(commands::trust::Args),
    /// Write hand edits of an output back into the model: the model change that gives the edited file back (a literal, or elements copied, removed, changed or reordered).
    WriteBack(commands::write_back::Args),
    /// Open the generation viewer: the project's outputs, traces, check state and write-back, in the browser.
    Serve(commands::serve::Args),
    /// Print a completion script for SHELL (e.g. `seams completions bash > /etc/bash_completion.d/seams`).
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
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

/// Ends the process with `code` once stdout and stderr are flushed,
/// without running the exit handlers: they hand the allocator's memory
/// back page by page (mimalloc's collect at exit, 1.2 ms of a 31 ms
/// generate at ten copies of the expense example, with a TLB shootdown
/// per purge while other threads live), which the kernel does at once as
/// the process ends. Call it last: nothing after it runs, no destructor
/// either.
pub fn exit(code: u8) -> ! {
    let _ = std::io::stdout().flush();
    let _ = std::io::stderr().flush();
    // SAFETY: `_exit` ends the process and never returns; the only state
    // it skips is what the exit handlers would free or flush, and the
    // standard streams were flushed above. Files seams writes are whole
    // (written, synced and renamed) before a command returns.
    unsafe { libc::_exit(i32::from(code)) }
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
        Command::Init(args) => commands::init::run(&mut io, args),
        Command::Generate(args) => commands::generate::run(&mut io, args),
        Command::Check(args) => commands::check::run(&mut io, args),
        #[cfg(feature = "authoring")]
        Command::NewGenerator(args) => commands::new_generator::run(&mut io, args),
        #[cfg(feature = "authoring")]
        Command::DraftGenerator(args) => commands::draft_generator::run(&mut io, args),
        #[cfg(feature = "authoring")]
        Command::DraftEval(args) => commands::draft_eval::run(&mut io, args),
        #[cfg(feature = "authoring")]
        Command::TestGenerator(args) => commands::test_generator::run(&mut io, args),
        Command::Inspect(args) => commands::inspect::run(&mut io, args),
        Command::Add(args) => commands::add::run(&mut io, args),
        #[cfg(feature = "authoring")]
        Command::Publish(args) => commands::publish::run(&mut io, args),
        Command::View(args) => commands::view::run(&mut io, args),
        Command::Trace(args) => commands::trace::run(&mut io, args),
        Command::Trust(args) => commands::trust::run(&mut io, args),
        Command::WriteBack(args) => commands::write_back::run(&mut io, args),
        Command::Serve(args) => commands::serve::run(&mut io, args),
        Command::Completions { shell } => {
            // Written whole, so that a closed pipe (`| head`) is a write
            // error to ignore like any other output's, not a panic in
            // clap_complete's writer.
            let mut script = Vec::new();
            clap_complete::generate(shell, &mut Cli::command(), "seams", &mut script);
            let _ = io.out.write_all(&script);
            EXIT_OK
        }
    }
}

/// The command-line reference in Markdown, from the same definitions that
/// parse the arguments: each command's long help, as `seams help COMMAND`
/// prints it (plain text, 100 columns), so that the book's reference
/// cannot drift from the binary (`tests/e2e/docs.rs` compares them).
pub fn reference() -> String {
    let mut root = Cli::command().term_width(100);
    root.build();
    let mut out = String::from(
        "# Command-line reference\n\nGenerated from the command definitions by `tests/e2e/docs.rs` (`SEAMS_UPDATE_DOCS=1 cargo test -p seams --test e2e docs` rewrites it).\n",
    );
    let mut section = |name: &str, command: &mut clap::Command| {
        let help = command.render_long_help().to_string();
        out.push_str(&format!(
            "\n## `{name}`\n\n```text\n{}\n```\n",
            help.trim_end()
        ));
    };
    section("seams", &mut root);
    let names: Vec<String> = root
        .get_subcommands()
        .map(|c| c.get_name().to_owned())
        .filter(|n| n != "help")
        .collect();
    for name in names {
        if let Some(command) = root.find_subcommand_mut(&name) {
            section(&format!("seams {name}"), command);
        }
    }
    out
}
