//! End-to-end tests of seams: the CLI on real projects, and the sandbox
//! against hostile components built from source in `tests/fixtures`.

/// The tests that run generators in this process (write-back's planning,
/// `run_generators`) charge the host's work as the `seams` binary does.
#[global_allocator]
static ALLOCATOR: seams_runtime::Accounting = seams_runtime::Accounting;

mod app;
mod attacks;
mod author;
mod authoring;
mod browser;
mod builtins;
mod cache;
mod cli;
mod cloned;
mod database;
mod docs;
mod draft;
mod example;
mod house;
mod init;
mod input;
mod inspect;
mod interrupted;
mod languages;
mod lens_laws;
mod lifecycle;
mod limits;
mod protocol;
mod registry;
mod sandbox;
mod serve;
mod surface;
mod trace;
mod vocabulary;
mod write_back;
