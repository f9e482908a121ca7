use crate::__internal::WitError;

/// Why a generator step failed; the host shows the message to the user,
/// naming the generator.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Error {
    /// Input the generator cannot use, such as a malformed view model.
    InvalidInput(String),
    /// A query failed: bad SPARQL, an update, or a failure while running.
    Query(String),
    /// A template was unknown or failed to render.
    Template(String),
    /// Anything else.
    Failed(String),
}

/// The result of a generator step.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// An error with a message of the generator's own.
    pub fn msg(message: impl Into<String>) -> Self {
        Error::Failed(message.into())
    }

    pub(crate) fn into_wit(self) -> WitError {
        match self {
            Error::InvalidInput(m) => WitError::InvalidInput(m),
            Error::Query(m) => WitError::Query(m),
            Error::Template(m) => WitError::Template(m),
            Error::Failed(m) => WitError::Failed(m),
        }
    }

    #[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
    pub(crate) fn from_wit(error: WitError) -> Self {
        match error {
            WitError::InvalidInput(m) => Error::InvalidInput(m),
            WitError::Query(m) => Error::Query(m),
            WitError::Template(m) => Error::Template(m),
            WitError::Failed(m) => Error::Failed(m),
        }
    }
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::InvalidInput(m) => write!(f, "invalid input: {m}"),
            Error::Query(m) => write!(f, "query failed: {m}"),
            Error::Template(m) => write!(f, "template failed: {m}"),
            Error::Failed(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for Error {}

impl From<serde_json::Error> for Error {
    fn from(e: serde_json::Error) -> Self {
        Error::InvalidInput(e.to_string())
    }
}
