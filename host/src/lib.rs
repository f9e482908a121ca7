//! The `seams` command line: parses arguments with clap and calls the
//! libraries of the pipeline, `seams-core` (generate, check, trace,
//! inspect) and, with the default feature `authoring`, `seams-authoring`
//! (new-generator, test-generator, draft-generator, draft-eval, publish).
//! [`cli::run`] runs it on any streams, so tests run it in-process.

#![deny(missing_docs)]

pub mod cli;
mod commands;
mod console;
mod io;
