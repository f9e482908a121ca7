//! End-to-end tests of seams: the CLI on real projects, and the sandbox
//! against hostile components built from source in `tests/fixtures`.

mod app;
mod attacks;
mod author;
mod authoring;
mod browser;
mod builtins;
mod cache;
mod cli;
mod cloned;
mod docs;
mod draft;
mod example;
mod init;
mod input;
mod inspect;
mod interrupted;
mod lens_laws;
mod lifecycle;
mod limits;
mod protocol;
mod registry;
mod sandbox;
mod serve;
mod trace;
mod vocabulary;
mod write_back;
