//! `seams add`.

use seams_registry::Reference;
use seams_runtime::Runtime;

use crate::io::{EXIT_OK, FormatArg, Io, ProjectArg, cache_dir, registry};

/// Add a generator from an OCI registry to seams.toml, once it is known to be a seams generator.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The generator: REGISTRY/NAME:TAG or REGISTRY/NAME@sha256:DIGEST.
    #[arg(value_name = "REF")]
    reference: Reference,
    #[command(flatten)]
    project: ProjectArg,
    #[command(flatten)]
    format: FormatArg,
}

pub(crate) fn run(io: &mut Io<'_>, args: Args) -> u8 {
    let format = args.format.format;
    let dir = &args.project.project;
    let result = Runtime::new(cache_dir())
        .map_err(anyhow::Error::from)
        .and_then(|runtime| {
            Ok(seams_core::add(
                dir,
                &args.reference,
                &registry(dir),
                &runtime,
            )?)
        });
    match result {
        Ok(report) => io.finish(
            format,
            || {
                format!(
                    "added {} {} ({}) to {}; the next seams generate pins {}\n",
                    report.name,
                    report.version,
                    args.reference,
                    dir.join(seams_core::MANIFEST).display(),
                    report.pin.manifest,
                )
            },
            || {
                serde_json::json!({
                    "reference": args.reference.to_string(),
                    "name": report.name,
                    "version": report.version,
                    "manifest_digest": report.pin.manifest,
                    "layer_digest": report.pin.layer,
                })
            },
            EXIT_OK,
        ),
        Err(e) => io.fail(format, "add", e),
    }
}
