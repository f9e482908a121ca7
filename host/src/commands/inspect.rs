//! `seams inspect`.

use std::path::{Path, PathBuf};

use seams_registry::Reference;
use seams_runtime::Runtime;

use crate::io::{EXIT_OK, FormatArg, Io, cache_dir, registry};

/// Show what a component is (a file or a registry reference): protocol version, meta, sha256 and size.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The component: a .wasm file, or REGISTRY/NAME:TAG or REGISTRY/NAME@sha256:DIGEST (pulled into the blob cache).
    #[arg(value_name = "FILE.wasm|REF")]
    component: PathBuf,
    #[command(flatten)]
    format: FormatArg,
}

pub(crate) fn run(io: &mut Io<'_>, args: Args) -> u8 {
    let format = args.format.format;
    let shown = args.component.display().to_string();
    let result = Runtime::new(cache_dir())
        .map_err(anyhow::Error::from)
        .and_then(|runtime| match as_reference(&args.component) {
            Some(reference) => Ok(seams_core::inspect_reference(
                &runtime,
                &registry(Path::new(".")),
                &reference,
            )?),
            None => Ok(seams_core::inspect(&runtime, &args.component)?),
        });
    match result {
        Ok(inspection) => io.finish(
            format,
            || inspection.to_text(&shown),
            || serde_json::from_str(&inspection.to_json(&shown)).expect("valid JSON"),
            EXIT_OK,
        ),
        Err(e) => io.fail(format, "inspect", e),
    }
}

/// A registry reference, when the argument names no file and reads as one
/// (it names a registry host and a tag or digest); a file otherwise, whose
/// error then says it is missing.
fn as_reference(arg: &Path) -> Option<Reference> {
    if arg.exists() {
        return None;
    }
    arg.to_str()?.parse().ok()
}
