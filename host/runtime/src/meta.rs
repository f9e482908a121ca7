//! Who a generator says it is: its `meta`, and the rule its name follows.

use seams_model::Vocabulary;
use seams_templates::Syntax;

/// Who a generator says it is (its `meta`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Meta {
    /// Its name.
    pub name: String,
    /// Its version.
    pub version: String,
    /// One line about it.
    pub description: String,
    /// Its template syntax.
    pub syntax: Syntax,
    /// Its templates (name, source), in the order given.
    pub templates: Vec<(String, String)>,
    /// The vocabularies it reads (protocol 0.2.0 on), which the host checks
    /// the model against before running it.
    pub vocabularies: Vec<Vocabulary>,
}

/// The most vocabularies a generator may declare.
pub(crate) const MAX_VOCABULARIES: usize = 16;

/// The most bytes of one vocabulary's terms or shapes: the host parses
/// them, so a generator may not hand it unbounded work.
const MAX_VOCABULARY_BYTES: usize = 1 << 20;

impl Meta {
    /// A generator's meta as its `meta` export gave it, or what is wrong
    /// with it.
    pub(crate) fn checked(
        name: String,
        version: String,
        description: String,
        syntax: Syntax,
        templates: Vec<(String, String)>,
        vocabularies: Vec<Vocabulary>,
    ) -> Result<Meta, MetaError> {
        if !is_generator_name(&name) {
            return Err(MetaError::Name { name });
        }
        if version.is_empty() || version.len() > 64 || version.chars().any(char::is_control) {
            return Err(MetaError::Version { version });
        }
        let mut names = std::collections::BTreeSet::new();
        for (name, _) in &templates {
            if !names.insert(name.as_str()) {
                return Err(MetaError::TemplateTwice {
                    template: name.clone(),
                });
            }
        }
        if vocabularies.len() > MAX_VOCABULARIES {
            return Err(MetaError::TooManyVocabularies {
                count: vocabularies.len(),
                limit: MAX_VOCABULARIES,
            });
        }
        for v in &vocabularies {
            let shown = seams_model::input_text::echo(&v.namespace);
            if !seams_model::is_namespace(&v.namespace) {
                return Err(MetaError::Namespace {
                    namespace: shown.clone(),
                });
            }
            let longest = v.terms.len().max(v.shapes.as_ref().map_or(0, String::len));
            if longest > MAX_VOCABULARY_BYTES {
                return Err(MetaError::VocabularyTooLarge {
                    namespace: shown.clone(),
                    bytes: longest,
                    limit: MAX_VOCABULARY_BYTES,
                });
            }
        }
        Ok(Meta {
            name,
            version,
            description,
            syntax,
            templates,
            vocabularies,
        })
    }
}

/// What a generator's name must be: it names the generator in the lock,
/// in messages and as a package, so it is kept plain.
pub const GENERATOR_NAME_RULE: &str =
    "a lowercase letter, then lowercase letters, digits and hyphens, at most 40 characters";

/// Whether `name` follows [`GENERATOR_NAME_RULE`].
pub fn is_generator_name(name: &str) -> bool {
    (1..=40).contains(&name.len())
        && name.starts_with(|c: char| c.is_ascii_lowercase())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
}

/// What a generator's `meta` gave that seams cannot use.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum MetaError {
    /// The name breaks the generator-name rule.
    #[error("name {name:?} must be {GENERATOR_NAME_RULE}")]
    Name {
        /// The name given.
        name: String,
    },
    /// The version is empty, long or holds control characters.
    #[error("version {version:?} must be a short version string such as 0.1.0")]
    Version {
        /// The version given.
        version: String,
    },
    /// Two templates of the same name.
    #[error("template {template:?} is listed twice")]
    TemplateTwice {
        /// The name listed twice.
        template: String,
    },
    /// More vocabularies than a generator may declare.
    #[error("it declares {count} vocabularies, more than {limit}")]
    TooManyVocabularies {
        /// How many it declares.
        count: usize,
        /// The most it may.
        limit: usize,
    },
    /// A vocabulary namespace that is not an absolute IRI ending in `#`
    /// or `/`.
    #[error("vocabulary namespace {namespace} is not an absolute IRI ending in '#' or '/'")]
    Namespace {
        /// The namespace, made one safe line.
        namespace: String,
    },
    /// A vocabulary whose terms or shapes are too large.
    #[error("vocabulary {namespace} has {bytes} bytes of terms or shapes, more than {limit}")]
    VocabularyTooLarge {
        /// The namespace, made one safe line.
        namespace: String,
        /// Its terms' or shapes' size.
        bytes: usize,
        /// The most allowed.
        limit: usize,
    },
    /// A vocabulary's terms or shapes do not parse.
    #[error("{0}")]
    Vocabulary(#[from] seams_model::VocabularyError),
}
