//! `seams draft-generator`.

use std::io::Write;

use seams_authoring::DraftRequest;

use crate::io::{EXIT_OK, FormatArg, Io, ProjectArg, in_project, written_lines};

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
    if request.print_prompt {
        let result = in_project(
            &args.project.project,
            args.project.reach(),
            io.console,
            |project, _| Ok(seams_authoring::draft_prompt(project, request)?),
        );
        return match result {
            Ok(prompt) => io.finish(
                format,
                || prompt.clone(),
                || serde_json::json!({ "prompt": prompt }),
                EXIT_OK,
            ),
            Err(e) => io.fail(format, "draft-generator", e),
        };
    }
    let progress = io.console.progress();
    let mut chatter = Vec::new();
    let result = in_project(
        &args.project.project,
        args.project.reach(),
        io.console,
        |project, runtime| {
            // Progress lines ("prompt sha256", cache hit or miss, rejections)
            // go to stderr as they happen, unless quiet.
            let err: &mut dyn Write = if io.console.quiet {
                &mut chatter
            } else {
                &mut *io.err
            };
            Ok(seams_authoring::draft_generator(
                project,
                runtime,
                request,
                err,
                progress.as_ref(),
            )?)
        },
    );
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
                    tests + &written_lines(&written) + &report.review.to_text()
                },
                || {
                    let review = &report.review;
                    serde_json::json!({
                        "prompt_sha256": report.prompt_sha256,
                        "cache_hit": report.cache_hit,
                        "attempts": report.attempts,
                        "tests": report.tests,
                        "written": written,
                        "review": {
                            "template": review.template.iter().map(|(kind, line)| {
                                serde_json::json!({ "kind": kind.word(), "line": line })
                            }).collect::<Vec<_>>(),
                            "probes": review.probes.iter().map(|p| {
                                serde_json::json!({ "name": p.name, "changes": p.changes })
                            }).collect::<Vec<_>>(),
                            "verdict": review.verdict,
                        },
                    })
                },
                EXIT_OK,
            )
        }
        Err(e) => io.fail(format, "draft-generator", e),
    }
}
