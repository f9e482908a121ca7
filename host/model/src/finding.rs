//! What a model check reports: something the model does that a vocabulary
//! does not allow, and where it is written.

use std::path::PathBuf;

/// Something the model does that a vocabulary does not allow.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// The IRI the finding is about, to find it in the model files.
    pub term: String,
    /// What is wrong, with terms written as the model's prefixes write
    /// them.
    pub message: String,
    /// The model file and 1-based line where the term is first written,
    /// when it can be found.
    pub at: Option<(PathBuf, usize)>,
}

impl std::fmt::Display for Finding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.at {
            Some((file, line)) => write!(f, "{}:{line}: {}", file.display(), self.message),
            None => f.write_str(&self.message),
        }
    }
}
