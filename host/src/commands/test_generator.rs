//! `seams test-generator`.

use std::path::PathBuf;

use crate::io::{EXIT_FAILURE, EXIT_OK, FormatArg, Io, ProjectArg, in_project};

/// Build a generator package and run its four tests on the project's model.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    #[command(flatten)]
    package: PackageArgs,
    /// Also run the model probes: the output must follow relabelled, renamed, added and removed model elements.
    #[arg(long)]
    probe: bool,
    #[command(flatten)]
    format: FormatArg,
}

/// A package tested on a project: shared with `seams publish`, which tests
/// before it pushes.
#[derive(Debug, clap::Args)]
pub(crate) struct PackageArgs {
    /// The package directory.
    pub(crate) dir: PathBuf,
    #[command(flatten)]
    pub(crate) project: ProjectArg,
    /// The goldens for this project [default: DIR/tests/golden].
    #[arg(long, value_name = "DIR")]
    pub(crate) goldens: Option<PathBuf>,
}

pub(crate) fn run(io: &mut Io<'_>, args: Args) -> u8 {
    let format = args.format.format;
    let progress = io.console.progress();
    let package = &args.package;
    let result = in_project(
        &package.project.project,
        package.project.reach(),
        io.console,
        |project, runtime| {
            Ok(seams_authoring::test_generator(
                &package.dir,
                package.goldens.as_deref(),
                project,
                runtime,
                args.probe,
                progress.as_ref(),
            )?)
        },
    );
    match result {
        Ok(report) => {
            let code = if report.passed() {
                EXIT_OK
            } else {
                EXIT_FAILURE
            };
            let quiet = io.console.quiet;
            io.finish(
                format,
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
        Err(e) => io.fail(format, "test-generator", e),
    }
}
