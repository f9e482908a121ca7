//! `seams add`.

use std::path::{Path, PathBuf};

use seams_registry::Reference;
use seams_runtime::Runtime;

use crate::io::{EXIT_OK, FormatArg, Io, ProjectArg, cache_dir, in_project, registry};

/// Add a generator to seams.toml, from an OCI registry or a package in the project, once it is known to be a seams generator.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The generator: REGISTRY/NAME:TAG or REGISTRY/NAME@sha256:DIGEST, or a package directory inside the project (a path with a '/', such as ./gens/sitemap).
    #[arg(value_name = "REF|DIR", value_parser = adding)]
    generator: Adding,
    #[command(flatten)]
    project: ProjectArg,
    #[command(flatten)]
    format: FormatArg,
}

/// What `seams add` was given: a package names a directory the way a path
/// does (`./x`, `../x`, `/x`, `x/`); a registry reference never starts so.
#[derive(Debug, Clone)]
enum Adding {
    Package(PathBuf),
    Oci(Reference),
}

fn adding(generator: &str) -> Result<Adding, String> {
    let path = Path::new(generator);
    if generator.starts_with(['.', '/']) || generator.ends_with('/') || path.is_dir() {
        return Ok(Adding::Package(path.to_owned()));
    }
    generator
        .parse()
        .map(Adding::Oci)
        .map_err(|e| format!("{e}; to add a package, name its directory as a path (./{generator})"))
}

pub(crate) fn run(io: &mut Io<'_>, args: Args) -> u8 {
    let format = args.format.format;
    let dir = &args.project.project;
    let adding = args.generator;
    let result = match &adding {
        Adding::Oci(reference) => Runtime::new(cache_dir())
            .map_err(anyhow::Error::from)
            .and_then(|runtime| Ok(seams_core::add(dir, reference, &registry(dir), &runtime)?)),
        Adding::Package(package) => {
            in_project(dir, args.project.reach(), io.console, |project, runtime| {
                Ok(seams_core::add_package(project, package, runtime)?)
            })
        }
    };
    match result {
        Ok(report) => io.finish(
            format,
            || {
                let next = match &report.pin {
                    Some(pin) => format!("the next seams generate pins {}", pin.manifest),
                    None => {
                        "the next seams generate builds it when it changed and pins its component"
                            .into()
                    }
                };
                format!(
                    "added {} {} ({}) to {}; {next}\n",
                    report.name,
                    report.version,
                    report.source,
                    dir.join(seams_core::MANIFEST).display(),
                )
            },
            || {
                let mut json = serde_json::json!({
                    "source": report.source,
                    "name": report.name,
                    "version": report.version,
                });
                if let (Adding::Oci(reference), Some(pin)) = (&adding, &report.pin) {
                    json["reference"] = reference.to_string().into();
                    json["manifest_digest"] = pin.manifest.clone().into();
                    json["layer_digest"] = pin.layer.clone().into();
                }
                json
            },
            EXIT_OK,
        ),
        Err(e) => io.fail(format, "add", e),
    }
}
