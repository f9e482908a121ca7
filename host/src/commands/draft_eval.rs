//! `seams draft-eval`.

use std::path::PathBuf;

use seams_authoring::{DraftRequest, EvalReport};

use crate::io::{EXIT_FAILURE, EXIT_OK, FormatArg, Io, in_project};

/// Run every drafting case in CASES_DIR through the provider, uncached, and print acceptance, attempts, probes and time.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// A directory of cases: subdirectories each holding a case.toml.
    cases: PathBuf,
    /// The provider: a command, api:openai or api:anthropic (else provider in each case project's propose table).
    #[arg(long, value_name = "CMD")]
    provider: Option<String>,
    /// The LLM model (else model in the propose table).
    #[arg(long = "llm-model", value_name = "M")]
    llm_model: Option<String>,
    /// Retries after a rejected draft (else retries in the propose table, else 2).
    #[arg(long, value_name = "N")]
    retries: Option<u32>,
    /// Seconds the provider may take per attempt (else timeout in the propose table, else 300).
    #[arg(long, value_name = "SECONDS")]
    timeout: Option<u64>,
    /// Keep each accepted draft's package, with its component, in DIR/<case> (else none is kept).
    #[arg(long, value_name = "DIR")]
    keep: Option<PathBuf>,
    #[command(flatten)]
    format: FormatArg,
}

pub(crate) fn run(io: &mut Io<'_>, args: Args) -> u8 {
    let format = args.format.format;
    let cases = match seams_authoring::read_cases(&args.cases) {
        Ok(cases) => cases,
        Err(e) => return io.fail(format, "draft-eval", e.into()),
    };
    let request = DraftRequest {
        provider: args.provider.clone(),
        llm_model: args.llm_model.clone(),
        retries: args.retries,
        timeout: args.timeout,
        ..DraftRequest::default()
    };
    let progress = io.console.progress();
    let mut results = Vec::new();
    for case in &cases {
        progress.start(&format!("case {}", case.name), None);
        let result = in_project(
            &case.project,
            seams_core::Reach::Inside,
            io.console,
            |project, runtime| {
                Ok(seams_authoring::run_case(
                    project,
                    runtime,
                    case,
                    &request,
                    args.keep.as_deref(),
                    progress.as_ref(),
                ))
            },
        );
        progress.finish();
        match result {
            Ok(result) => results.push(result),
            Err(e) => {
                let e = e.context(format!(
                    "case {}: project {}",
                    case.name,
                    case.project.display()
                ));
                return io.fail(format, "draft-eval", e);
            }
        }
    }
    let report = EvalReport { results };
    let code = if report.as_expected() {
        EXIT_OK
    } else {
        EXIT_FAILURE
    };
    io.finish(format, || report.to_text(), || report.to_json(), code)
}
