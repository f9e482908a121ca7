//! One module per command: its arguments (a clap `Args` struct) and a
//! `run` that calls the libraries and prints the result.

pub(crate) mod add;
pub(crate) mod check;
#[cfg(feature = "authoring")]
pub(crate) mod draft_eval;
#[cfg(feature = "authoring")]
pub(crate) mod draft_generator;
pub(crate) mod generate;
pub(crate) mod init;
pub(crate) mod inspect;
#[cfg(feature = "authoring")]
pub(crate) mod new_generator;
#[cfg(feature = "authoring")]
pub(crate) mod publish;
pub(crate) mod serve;
#[cfg(feature = "authoring")]
pub(crate) mod test_generator;
pub(crate) mod trace;
pub(crate) mod trust;
pub(crate) mod view;
pub(crate) mod write_back;
