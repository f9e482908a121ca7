//! `seams generate`.

use seams_core::{GenerateError, GenerateOptions, GenerateReport, Wait, generate};

use crate::console::{Console, GOOD, LOG_LINE_LIMIT, MESSAGE_LIMIT, WARN, safe_line};
use crate::io::{
    EXIT_FAILURE, EXIT_OK, Format, FormatArg, Io, ProjectArg, WAITING, in_project, stat_cache_dir,
};

/// Run every generator of the project and write its outputs and seams.lock.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    #[command(flatten)]
    project: ProjectArg,
    /// Overwrite or delete files that were edited since seams wrote them.
    #[arg(long)]
    force: bool,
    /// Accept .wasm components whose bytes differ from seams.lock, and resolve oci tags again instead of using the pinned digests.
    #[arg(long)]
    update: bool,
    /// Fail at once if another seams run holds the project, instead of waiting.
    #[arg(long)]
    no_wait: bool,
    #[command(flatten)]
    format: FormatArg,
}

pub(crate) fn run(io: &mut Io<'_>, args: Args) -> u8 {
    let (flags, format) = (&args, args.format.format);
    let started = std::time::Instant::now();
    let progress = io.console.progress();
    let options = GenerateOptions {
        force: flags.force,
        update: flags.update,
        progress: progress.as_ref(),
        wait: Wait::NoWait,
        stat_cache: stat_cache_dir(),
        ..GenerateOptions::default()
    };
    let mut project_fuel = 0;
    let result = in_project(
        &args.project.project,
        args.project.reach(),
        io.console,
        |project, runtime| {
            project_fuel = project.limits.fuel;
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
        },
    );
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
    io.console.failures(io.err, "generate", &report.failures);
    if !io.console.quiet {
        for line in &report.log {
            let _ = writeln!(io.err, "{}", safe_line(line, LOG_LINE_LIMIT));
        }
        let text = generate_text(io.console, &report);
        let _ = io.out.write_all(text.as_bytes());
    }
    if io.console.verbose > 0 {
        for (generator, fuel) in &report.fuel {
            let _ = writeln!(
                io.err,
                "{}: spent {fuel} fuel of {project_fuel} ([sandbox] fuel)",
                shown(generator)
            );
        }
        for (generator, why) in &report.renders_twice {
            let _ = writeln!(
                io.err,
                "{}",
                safe_line(
                    &format!(
                        "{generator}: each traced render is made twice, plain and instrumented, because of {why}"
                    ),
                    MESSAGE_LIMIT
                )
            );
        }
        let _ = writeln!(io.err, "took {:.2} s", started.elapsed().as_secs_f64());
    }
    code
}

/// A path as printed: checked when its generator returned it, escaped all
/// the same (the text is painted afterwards, so it cannot be escaped whole).
fn shown(path: &str) -> std::borrow::Cow<'_, str> {
    safe_line(path, MESSAGE_LIMIT)
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
        text.push_str(&format!("wrote {}\n", shown(path)));
    }
    if console.verbose > 0 {
        for path in &report.unchanged {
            text.push_str(&format!("unchanged {}\n", shown(path)));
        }
    }
    for path in &report.deleted {
        text.push_str(&format!("deleted {} (no longer generated)\n", shown(path)));
    }
    for path in &report.leftovers {
        text.push_str(&format!(
            "removed {} (a temporary file an interrupted run left)\n",
            shown(path)
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
