//! `seams view`.

use crate::io::{EXIT_OK, FormatArg, Io, ProjectArg, in_project};

/// Print the view model a generator's extract step builds from the project's model (JSON in either format).
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The generator: builtin:NAME (or just NAME), or the .wasm path as seams.toml gives it.
    generator: String,
    #[command(flatten)]
    project: ProjectArg,
    #[command(flatten)]
    format: FormatArg,
}

pub(crate) fn run(io: &mut Io<'_>, args: Args) -> u8 {
    let format = args.format.format;
    let result = in_project(
        &args.project.project,
        args.project.reach(),
        io.console,
        |project, runtime| Ok(seams_core::view(project, runtime, &args.generator)?),
    );
    match result {
        // The view model is JSON whatever the format.
        Ok(view) => io.finish(
            format,
            || view.clone(),
            || serde_json::from_str(&view).unwrap_or(serde_json::Value::String(view.clone())),
            EXIT_OK,
        ),
        Err(e) => io.fail(format, "view", e),
    }
}
