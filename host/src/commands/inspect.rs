//! `seams inspect`.

use std::path::PathBuf;

use seams_runtime::Runtime;

use crate::io::{EXIT_OK, FormatArg, Io, cache_dir};

/// Show what a component is: protocol version, meta, sha256 and size.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The component file.
    #[arg(value_name = "FILE.wasm")]
    file: PathBuf,
    #[command(flatten)]
    format: FormatArg,
}

pub(crate) fn run(io: &mut Io<'_>, args: Args) -> u8 {
    let format = args.format.format;
    let result = Runtime::new(cache_dir())
        .map_err(anyhow::Error::from)
        .and_then(|runtime| Ok(seams_core::inspect(&runtime, &args.file)?));
    match result {
        Ok(inspection) => {
            let shown = args.file.display().to_string();
            io.finish(
                format,
                || inspection.to_text(&shown),
                || serde_json::from_str(&inspection.to_json(&shown)).expect("valid JSON"),
                EXIT_OK,
            )
        }
        Err(e) => io.fail(format, "inspect", e),
    }
}
