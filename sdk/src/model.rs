use std::borrow::Cow;
use std::collections::BTreeMap;

use serde::Deserialize;
use serde::de::{DeserializeOwned, MapAccess, Visitor};
use serde_json::Value;
use serde_json::value::RawValue;

#[cfg(target_arch = "wasm32")]
use crate::__internal::wit::seams::generator::model as host;
use crate::row::{Row, Term, TermKind};
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
        rows(&self.query(sparql)?)
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

/// A SELECT answer in the SPARQL 1.1 JSON results format, read straight
/// into rows: only `results.bindings` is read, and each term's strings
/// once. Read into a `serde_json::Value` first, every term became a map
/// of its own, copied into the row and then freed: at expense x300 that
/// was about half of the htmx built-in's time in its sandbox.
#[derive(Deserialize)]
struct Answer {
    results: Option<Bindings>,
}

#[derive(Deserialize)]
struct Bindings {
    bindings: Vec<JsonRow>,
}

/// One row of an answer, read into a [`Row`].
struct JsonRow(Row);

impl<'de> Deserialize<'de> for JsonRow {
    fn deserialize<D: serde::Deserializer<'de>>(
        deserializer: D,
    ) -> std::result::Result<Self, D::Error> {
        struct Terms;
        impl<'de> Visitor<'de> for Terms {
            type Value = JsonRow;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a result row: an object of terms")
            }
            fn visit_map<A: MapAccess<'de>>(
                self,
                mut map: A,
            ) -> std::result::Result<JsonRow, A::Error> {
                let mut row = BTreeMap::new();
                while let Some((var, term)) = map.next_entry::<String, JsonTerm<'de>>()? {
                    row.insert(var, term.into_term().map_err(serde::de::Error::custom)?);
                }
                Ok(JsonRow(Row(row)))
            }
        }
        deserializer.deserialize_map(Terms)
    }
}

/// One term of an answer's row, as the results format writes it.
#[derive(Deserialize)]
struct JsonTerm<'a> {
    #[serde(rename = "type", borrow)]
    kind: Cow<'a, str>,
    /// A string, but an object for a quoted triple.
    #[serde(borrow)]
    value: Option<&'a RawValue>,
    datatype: Option<String>,
    #[serde(rename = "xml:lang")]
    language: Option<String>,
}

impl JsonTerm<'_> {
    fn into_term(self) -> std::result::Result<Term, String> {
        let kind = match &*self.kind {
            "uri" => TermKind::Iri,
            "literal" => TermKind::Literal,
            "bnode" => TermKind::Blank,
            "triple" => TermKind::Triple,
            other => return Err(format!("unknown term type {other:?}")),
        };
        let value = match (kind, self.value) {
            (_, None) => String::new(),
            // A quoted triple keeps its JSON, written compactly.
            (TermKind::Triple, Some(raw)) => serde_json::from_str::<Value>(raw.get())
                .map_err(|e| e.to_string())?
                .to_string(),
            (_, Some(raw)) => serde_json::from_str::<String>(raw.get()).unwrap_or_default(),
        };
        Ok(Term {
            kind,
            value,
            datatype: self.datatype,
            language: self.language,
        })
    }
}

/// The rows of a SELECT answer's JSON text, in order.
fn rows(text: &str) -> Result<Vec<Row>> {
    let answer: Answer = serde_json::from_str(text)
        .map_err(|e| Error::Query(format!("host answered with invalid JSON: {e}")))?;
    let results = answer
        .results
        .ok_or_else(|| Error::Query("not a SELECT query".into()))?;
    Ok(results.bindings.into_iter().map(|row| row.0).collect())
}

/// One row of a SELECT answer, from its JSON text.
#[cfg(test)]
pub(crate) fn parse_row(json: &str) -> Result<Row> {
    serde_json::from_str::<JsonRow>(json)
        .map(|row| row.0)
        .map_err(|e| Error::Query(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn term(kind: TermKind, value: &str) -> Term {
        Term {
            kind,
            value: value.to_owned(),
            datatype: None,
            language: None,
        }
    }

    #[test]
    fn an_answer_reads_into_rows_with_every_kind_of_term() {
        let text = r#"{"head": {"vars": ["s", "o", "n"]}, "results": {"bindings": [
            {"s": {"type": "uri", "value": "urn:a"},
             "o": {"type": "literal", "value": "say \"hi\"\n\u00e9", "xml:lang": "en"},
             "n": {"type": "literal", "value": "2", "datatype": "http://www.w3.org/2001/XMLSchema#integer"}},
            {"s": {"type": "bnode", "value": "b0"},
             "o": {"type": "triple", "value": {"subject": {"type": "uri", "value": "urn:s"}, "predicate": {"type": "uri", "value": "urn:p"}, "object": {"type": "literal", "value": "x"}}}}
        ]}}"#;
        let rows = rows(text).unwrap();
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0].get("s"), Some(&term(TermKind::Iri, "urn:a")));
        let quoted = Term {
            language: Some("en".to_owned()),
            ..term(TermKind::Literal, "say \"hi\"\n\u{e9}")
        };
        assert_eq!(rows[0].get("o"), Some(&quoted));
        let number = rows[0].get("n").unwrap();
        assert_eq!(
            (number.value.as_str(), number.datatype.as_deref()),
            ("2", Some("http://www.w3.org/2001/XMLSchema#integer"))
        );
        assert_eq!(rows[1].get("s"), Some(&term(TermKind::Blank, "b0")));
        // A quoted triple keeps its JSON, compact and with sorted keys.
        assert_eq!(
            rows[1].value("o"),
            Some(
                r#"{"object":{"type":"literal","value":"x"},"predicate":{"type":"uri","value":"urn:p"},"subject":{"type":"uri","value":"urn:s"}}"#
            )
        );
        // An unbound variable is absent.
        assert_eq!(rows[1].get("n"), None);
    }

    #[test]
    fn an_answer_that_is_not_rows_is_an_error_that_says_so() {
        let error = |text: &str| match rows(text) {
            Err(Error::Query(message)) => message,
            other => panic!("{other:?}"),
        };
        assert_eq!(
            error(r#"{"head": {}, "boolean": true}"#),
            "not a SELECT query"
        );
        assert!(
            error(r#"{"results": {"bindings": [{"s": {"type": "mystery", "value": "x"}}]}}"#)
                .contains("unknown term type \"mystery\""),
        );
        assert!(error("not json").starts_with("host answered with invalid JSON"));
        assert!(
            error(r#"{"results": {"bindings": [["s"]]}}"#)
                .contains("a result row: an object of terms")
        );
    }
}
