//! `seams check`.

use seams_core::{ProblemKind, Wait};

use crate::io::{EXIT_FAILURE, EXIT_OK, FormatArg, Io, ProjectArg, WAITING, in_project};

/// Report stale, hand-edited, missing and orphan files and changed components; write nothing.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    #[command(flatten)]
    project: ProjectArg,
    /// Report a running generate as a problem instead of waiting for it.
    #[arg(long)]
    no_wait: bool,
    #[command(flatten)]
    format: FormatArg,
}

pub(crate) fn run(io: &mut Io<'_>, args: Args) -> u8 {
    let (no_wait, format) = (args.no_wait, args.format.format);
    let result = in_project(&args.project.project, |project, runtime| {
        let report = seams_core::check_with(project, runtime, Wait::NoWait)?;
        let busy = report
            .problems
            .iter()
            .any(|p| p.kind == ProblemKind::GenerateInProgress);
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
