use std::collections::BTreeMap;

use serde::de::DeserializeOwned;
use serde_json::Value;

#[cfg(target_arch = "wasm32")]
use crate::__internal::wit::seams::generator::model as host;
use crate::{Error, Result};

/// Read-only access to the project's model, through the host.
///
/// Every query has the model's own prefixes declared (and `rdf:`, `rdfs:`,
/// `xsd:`), so `SELECT ?p WHERE { ?p a ui:Page }` works when the model
/// declares `ui:`.
#[derive(Debug)]
pub struct Model {
    _private: (),
}

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
pub struct Row(BTreeMap<String, Term>);

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

impl Model {
    pub(crate) fn new() -> Self {
        Model { _private: () }
    }

    /// Runs a query and returns the host's raw answer: SPARQL 1.1 JSON
    /// results for SELECT and ASK, N-Triples for CONSTRUCT.
    pub fn query(&self, sparql: &str) -> Result<String> {
        #[cfg(target_arch = "wasm32")]
        return host::query(sparql).map_err(Error::from_wit);
        #[cfg(not(target_arch = "wasm32"))]
        return crate::native::query(sparql);
    }

    /// Runs a SELECT query and returns its rows in order.
    pub fn select(&self, sparql: &str) -> Result<Vec<Row>> {
        let json: Value = serde_json::from_str(&self.query(sparql)?)
            .map_err(|e| Error::Query(format!("host answered with invalid JSON: {e}")))?;
        let bindings = json
            .pointer("/results/bindings")
            .and_then(Value::as_array)
            .ok_or_else(|| Error::Query("not a SELECT query".into()))?;
        bindings.iter().map(parse_row).collect()
    }

    /// Runs a SELECT query and decodes each row into `T`: a struct
    /// (`#[derive(Deserialize)]`) whose fields are the query's variables,
    /// each of the type its values have: `String`, an integer type, `f64`
    /// (decimals), `bool` (`true`, `false`, `1`, `0`), [`Iri`](crate::Iri)
    /// (refuses a literal), [`Date`](crate::Date) (`xsd:date`), or an
    /// `Option` of one for a variable that may be unbound.
    ///
    /// # Errors
    ///
    /// The query fails, or a value does not fit its field: the error names
    /// the row, the variable and the value.
    pub fn select_as<T: DeserializeOwned>(&self, sparql: &str) -> Result<Vec<T>> {
        self.select(sparql)?
            .into_iter()
            .enumerate()
            .map(|(index, row)| crate::decode::decode(row, index))
            .collect()
    }

    /// Runs an ASK query.
    pub fn ask(&self, sparql: &str) -> Result<bool> {
        let json: Value = serde_json::from_str(&self.query(sparql)?)
            .map_err(|e| Error::Query(format!("host answered with invalid JSON: {e}")))?;
        json.get("boolean")
            .and_then(Value::as_bool)
            .ok_or_else(|| Error::Query("not an ASK query".into()))
    }

    /// The model hash (sha256 of the canonical N-Quads, lowercase hex).
    pub fn hash(&self) -> String {
        #[cfg(target_arch = "wasm32")]
        return host::hash();
        #[cfg(not(target_arch = "wasm32"))]
        return crate::native::hash();
    }

    /// Every labelled subject as `(iri, label)`, sorted by IRI.
    pub fn labels(&self) -> Vec<(String, String)> {
        #[cfg(target_arch = "wasm32")]
        return host::labels()
            .into_iter()
            .map(|l| (l.iri, l.label))
            .collect();
        #[cfg(not(target_arch = "wasm32"))]
        return crate::native::labels();
    }
}

pub(crate) fn parse_row(binding: &Value) -> Result<Row> {
    let object = binding
        .as_object()
        .ok_or_else(|| Error::Query("a result row is not an object".into()))?;
    let mut row = BTreeMap::new();
    for (var, term) in object {
        let field = |k: &str| term.get(k).and_then(Value::as_str).map(str::to_owned);
        let kind = match field("type").as_deref() {
            Some("uri") => TermKind::Iri,
            Some("literal") => TermKind::Literal,
            Some("bnode") => TermKind::Blank,
            Some("triple") => TermKind::Triple,
            other => return Err(Error::Query(format!("unknown term type {other:?}"))),
        };
        let value = match kind {
            TermKind::Triple => term.get("value").map(Value::to_string).unwrap_or_default(),
            _ => field("value").unwrap_or_default(),
        };
        row.insert(
            var.clone(),
            Term {
                kind,
                value,
                datatype: field("datatype"),
                language: field("xml:lang"),
            },
        );
    }
    Ok(Row(row))
}
