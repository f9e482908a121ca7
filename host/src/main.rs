//! The `seams` binary: parses arguments and calls the library.

use std::process::ExitCode;

fn main() -> ExitCode {
    let code = seams::cli::run(
        std::env::args_os(),
        &mut std::io::stdout(),
        &mut std::io::stderr(),
    );
    ExitCode::from(code)
}
