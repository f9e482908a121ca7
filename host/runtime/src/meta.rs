//! Who a generator says it is: its `meta`, and the rule its name follows.

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
