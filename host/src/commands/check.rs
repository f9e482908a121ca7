//! `seams check`.

use seams_core::{ProblemKind, Wait};

use crate::console::{Console, ERROR, GOOD, safe_text};
use crate::io::{EXIT_FAILURE, EXIT_OK, Format, FormatArg, Io, ProjectArg, WAITING, in_project};

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
    let result = in_project(
        &args.project.project,
        args.project.reach(),
        io.console,
        |project, runtime| {
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
        },
    );
    match result {
        Ok(report) => {
            let code = if report.clean { EXIT_OK } else { EXIT_FAILURE };
            if format == Format::Text {
                if !(io.console.quiet && report.clean) {
                    let text = painted(io.console, &safe_text(&report.to_text(), usize::MAX));
                    let _ = io.out.write_all(text.as_bytes());
                }
                return code;
            }
            io.finish(
                format,
                String::new,
                || serde_json::from_str(&report.to_json()).expect("valid JSON"),
                code,
            )
        }
        Err(e) => io.fail(format, "check", e),
    }
}

/// The report's text (already made safe) with each problem's kind and the
/// closing line colored when stdout is: red for problems, green for clean.
fn painted(console: &Console, text: &str) -> String {
    text.lines()
        .map(|line| {
            let painted = match line.split_once(": ") {
                Some(("clean", rest)) => format!("{}: {rest}", console.out_paint(GOOD, "clean")),
                Some((kind, rest)) => format!("{}: {rest}", console.out_paint(ERROR, kind)),
                None => console.out_paint(ERROR, line),
            };
            painted + "\n"
        })
        .collect()
}
