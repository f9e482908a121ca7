//! The `seams` binary: parses arguments and calls the library.

use std::io::IsTerminal;

/// Every heap allocation goes through the runtime's accounting allocator,
/// so that the host's work for a generator is charged to its budget.
#[global_allocator]
static ALLOCATOR: seams_runtime::Accounting = seams_runtime::Accounting;

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
