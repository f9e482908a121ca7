//! `seams publish`.

use seams_registry::Reference;

use crate::commands::test_generator::PackageArgs;
use crate::io::{EXIT_OK, FormatArg, Io, in_project, registry};

/// Build a generator package, run its four tests on the project's model, and push it to an OCI registry.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    #[command(flatten)]
    package: PackageArgs,
    /// Where to push: REGISTRY/NAME:TAG (credentials from Docker's config or SEAMS_REGISTRY_*).
    #[arg(long, value_name = "REF")]
    to: Reference,
    /// Where its source is, for the org.opencontainers.image.source annotation [default: the package's repository].
    #[arg(long, value_name = "URL")]
    source: Option<String>,
    #[command(flatten)]
    format: FormatArg,
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
            let request = seams_authoring::PublishRequest {
                dir: &package.dir,
                goldens: package.goldens.as_deref(),
                reference: &args.to,
                source: args.source.as_deref(),
            };
            Ok(seams_authoring::publish(
                request,
                project,
                runtime,
                &registry(&project.root),
                progress.as_ref(),
            )?)
        },
    );
    match result {
        Ok(report) => io.finish(
            format,
            || {
                format!(
                    "published {} {} ({} bytes) to {}\ndigest: {}\n",
                    report.name, report.version, report.size, report.reference, report.pin.manifest
                )
            },
            || {
                serde_json::json!({
                    "reference": report.reference,
                    "name": report.name,
                    "version": report.version,
                    "size": report.size,
                    "manifest_digest": report.pin.manifest,
                    "layer_digest": report.pin.layer,
                })
            },
            EXIT_OK,
        ),
        Err(e) => io.fail(format, "publish", e),
    }
}
