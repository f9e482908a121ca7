//! The `seams` binary: parses arguments and calls the library.

use std::io::IsTerminal;

fn main() {
    let terminal = seams::cli::Terminal {
        stdout: std::io::stdout().is_terminal(),
        stderr: std::io::stderr().is_terminal(),
    };
    let code = seams::cli::run_on(
        std::env::args_os(),
        &mut std::io::stdout(),
        &mut std::io::stderr(),
        terminal,
    );
    seams::cli::exit(code)
}
