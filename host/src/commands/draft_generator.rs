//! `seams draft-generator`.

use std::io::Write;

use seams_authoring::DraftRequest;

use crate::io::{EXIT_OK, Format, FormatArg, Io, ProjectArg, in_project, written_lines};

/// Ask an LLM provider to draft a generator from a reference output; keep it only if its tests pass.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    #[command(flatten)]
    request: DraftRequest,
    #[command(flatten)]
    project: ProjectArg,
    #[command(flatten)]
    format: FormatArg,
}

pub(crate) fn run(io: &mut Io<'_>, args: Args) -> u8 {
    let (request, format) = (&args.request, args.format.format);
    let progress = io.console.progress();
    let mut chatter = Vec::new();
    let result = in_project(&args.project.project, |project, runtime| {
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
