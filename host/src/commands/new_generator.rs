//! `seams new-generator`.

use std::path::PathBuf;

use crate::io::{EXIT_OK, FormatArg, Io, written_lines};

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
    #[command(flatten)]
    format: FormatArg,
}

pub(crate) fn run(io: &mut Io<'_>, args: Args) -> u8 {
    let format = args.format.format;
    let result = seams_authoring::new_generator(
        &args.name,
        &args.reference,
        args.out.as_deref(),
        args.force,
    );
    match result {
        Ok((dir, written)) => {
            let written: Vec<String> = written.iter().map(|p| p.display().to_string()).collect();
            let next = format!(
                "test it with: seams test-generator {} --project DIR",
                dir.display()
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
