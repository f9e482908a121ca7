//! The typed rows a SELECT query gives: terms by variable name.

use std::collections::BTreeMap;

use crate::{Error, Result};

/// What kind of RDF term a [`Term`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TermKind {
    /// An IRI.
    Iri,
    /// A literal.
    Literal,
    /// A blank node.
    Blank,
    /// A quoted triple, in N-Triples form.
    Triple,
}

/// One bound value of a query row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Term {
    /// What the value is.
    pub kind: TermKind,
    /// The IRI, the literal's lexical form, or the blank node's label.
    pub value: String,
    /// A literal's datatype IRI, when it has one other than `xsd:string`.
    pub datatype: Option<String>,
    /// A literal's language tag.
    pub language: Option<String>,
}

/// One row of a SELECT result: variable name to bound term. Unbound
/// variables are absent.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Row(pub(crate) BTreeMap<String, Term>);

impl Row {
    /// The term bound to `var` (without `?`).
    pub fn get(&self, var: &str) -> Option<&Term> {
        self.0.get(var)
    }

    /// The value (IRI or lexical form) bound to `var`.
    pub fn value(&self, var: &str) -> Option<&str> {
        self.0.get(var).map(|t| t.value.as_str())
    }

    /// The value bound to `var`, or an error naming the variable.
    pub fn require(&self, var: &str) -> Result<&str> {
        self.value(var)
            .ok_or_else(|| Error::Query(format!("variable ?{var} is unbound")))
    }

    /// Every bound variable with its term, by name.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Term)> {
        self.0.iter().map(|(k, v)| (k.as_str(), v))
    }

    pub(crate) fn into_terms(self) -> BTreeMap<String, Term> {
        self.0
    }
}
