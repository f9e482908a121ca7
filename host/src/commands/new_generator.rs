//! `seams new-generator`.

use std::path::PathBuf;

use crate::io::{EXIT_OK, FormatArg, Io, written_lines};
use seams_authoring::Language;

/// Write a generator package whose test passes as written, from a reference output.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The generator's name: a lowercase letter, then lowercase letters, digits and hyphens.
    name: String,
    /// The reference output (its suffix says its type).
    #[arg(long, value_name = "FILE")]
    reference: PathBuf,
    /// The package directory (default: seams-NAME).
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Write into a non-empty directory, replacing the package's files.
    #[arg(long)]
    force: bool,
    /// The package's language: Rust (cargo), Python (componentize-py) or JavaScript (componentize-js).
    #[arg(long, value_enum, default_value_t = Language::Rust)]
    language: Language,
    /// Where the package gets the SDK: a copy in the package, or seams-sdk by version from crates.io (Rust only).
    #[arg(long, value_enum, default_value_t = SdkArg::Vendored)]
    sdk: SdkArg,
    #[command(flatten)]
    format: FormatArg,
}

/// `--sdk`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum SdkArg {
    /// A copy in the package, `seams-sdk/`: builds offline.
    Vendored,
    /// `seams-sdk` by version, from crates.io.
    Registry,
}

pub(crate) fn run(io: &mut Io<'_>, args: Args) -> u8 {
    let format = args.format.format;
    let result = seams_authoring::new_generator(
        &args.name,
        &args.reference,
        args.out.as_deref(),
        args.force,
        match args.sdk {
            SdkArg::Vendored => seams_authoring::Sdk::Vendored,
            SdkArg::Registry => seams_authoring::Sdk::Registry,
        },
        args.language,
    );
    match result {
        Ok((dir, written)) => {
            let written: Vec<String> = written.iter().map(|p| p.display().to_string()).collect();
            let shown = dir.display().to_string();
            // `seams add` takes a package by its path.
            let path = if dir.is_relative() && !shown.starts_with('.') {
                format!("./{shown}")
            } else {
                shown.clone()
            };
            let next = format!(
                "test it with: seams test-generator {shown} --project DIR\n\
                 use it in the project DIR that holds it with: seams add {path} --project DIR \
                 (seams.toml gets [[generator]] package = \"PATH\", and seams generate builds it when it changes)"
            );
            io.finish(
                format,
                || written_lines(&written) + &next + "\n",
                || serde_json::json!({ "written": written, "dir": dir.display().to_string() }),
                EXIT_OK,
            )
        }
        Err(e) => io.fail(format, "new-generator", e.into()),
    }
}
