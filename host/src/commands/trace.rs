//! `seams trace`.

use crate::io::{EXIT_OK, Format, FormatArg, Io, ProjectArg, in_project};

/// Show which template lines wrote an output's lines, and the model elements behind them.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
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
}

pub(crate) fn run(io: &mut Io<'_>, args: Args) -> u8 {
    let format = if args.json {
        Format::Json
    } else {
        args.format.format
    };
    let result = in_project(
        &args.project.project,
        args.project.reach(),
        io.console,
        |project, runtime| {
            let (output, line) = seams_core::parse_target(&args.target);
            Ok(seams_core::trace_view(project, runtime, output, line)?)
        },
    );
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
