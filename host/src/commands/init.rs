//! `seams init`.

use std::path::PathBuf;

use seams_runtime::Runtime;

use crate::io::{EXIT_FAILURE, EXIT_OK, FormatArg, Io, cache_dir};

/// Make a new project in DIR (new or empty): a small commented model, seams.toml with the built-ins, and a first generate.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The directory: created if missing, refused unless empty.
    #[arg(value_name = "DIR", default_value = ".")]
    dir: PathBuf,
    #[command(flatten)]
    format: FormatArg,
}

pub(crate) fn run(io: &mut Io<'_>, args: Args) -> u8 {
    let format = args.format.format;
    let dir = &args.dir;
    let result = Runtime::new(cache_dir())
        .map_err(anyhow::Error::from)
        .and_then(|runtime| Ok(seams_core::init(dir, &runtime)?));
    let report = match result {
        Ok(report) => report,
        Err(e) => return io.fail(format, "init", e),
    };
    let generated = &report.generated;
    let code = if generated.failures.is_empty() {
        EXIT_OK
    } else {
        EXIT_FAILURE
    };
    io.console.failures(io.err, "init", &generated.failures);
    let shown = dir.display().to_string();
    let quiet = io.console.quiet;
    io.finish(
        format,
        || {
            if quiet {
                return String::new();
            }
            format!(
                "created {shown}: {}\ngenerated {} files into {}\nnext: edit {} and run `seams generate --project {shown}`; `seams check --project {shown}` says what is out of date\n",
                report.files.join(", "),
                generated.written.len(),
                dir.join("out").display(),
                dir.join("model.ttl").display(),
            )
        },
        || {
            serde_json::json!({
                "dir": shown,
                "files": report.files,
                "written": generated.written,
                "failures": generated.failures.iter().map(|f| f.to_string()).collect::<Vec<_>>(),
            })
        },
        code,
    )
}
