//! Query rows decoded into a generator's own structs: each field named for
//! a variable, of the type its values have (`String`, integers, `f64` for
//! decimals, `bool`, [`Iri`], [`Date`], or an `Option` of one for a
//! variable that may be unbound). A value that does not fit is an error
//! naming the row, the variable and the value.

use std::fmt;

use serde::de::{self, DeserializeOwned, IntoDeserializer, MapAccess, Visitor};
use serde::{Deserialize, Deserializer};

use crate::row::{Row, Term, TermKind};
use crate::{Error, Result};

/// An IRI a query bound: a field of this type refuses a literal or blank
/// node, so that a query that binds the wrong thing fails where it does.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(transparent)]
pub struct Iri(pub String);

/// An `xsd:date` lexical form, `YYYY-MM-DD` (optionally with a time zone),
/// checked when the row is decoded.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(transparent)]
pub struct Date(pub String);

impl fmt::Display for Iri {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<Iri> for String {
    fn from(iri: Iri) -> String {
        iri.0
    }
}

impl fmt::Display for Date {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// The names the row deserializer knows these types by.
const IRI: &str = "seams_sdk::Iri";
const DATE: &str = "seams_sdk::Date";

impl<'de> Deserialize<'de> for Iri {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer
            .deserialize_newtype_struct(IRI, StringVisitor)
            .map(Iri)
    }
}

impl<'de> Deserialize<'de> for Date {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer
            .deserialize_newtype_struct(DATE, StringVisitor)
            .map(Date)
    }
}

struct StringVisitor;

impl<'de> Visitor<'de> for StringVisitor {
    type Value = String;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<String, E> {
        Ok(v.to_owned())
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<String, E> {
        Ok(v)
    }

    fn visit_newtype_struct<D: Deserializer<'de>>(self, d: D) -> Result<String, D::Error> {
        d.deserialize_string(self)
    }
}

/// Why a row did not decode.
#[derive(Debug)]
struct DecodeError(String);

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for DecodeError {}

impl de::Error for DecodeError {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        DecodeError(msg.to_string())
    }
}

/// Decodes row number `index` (0-based) into `T`.
pub(crate) fn decode<T: DeserializeOwned>(row: Row, index: usize) -> Result<T> {
    T::deserialize(RowDeserializer {
        terms: row.into_terms().into_iter(),
        pending: None,
    })
    .map_err(|e| Error::Query(format!("row {}: {e}", index + 1)))
}

struct RowDeserializer {
    terms: std::collections::btree_map::IntoIter<String, Term>,
    pending: Option<(String, Term)>,
}

impl<'de> Deserializer<'de> for RowDeserializer {
    type Error = DecodeError;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DecodeError> {
        visitor.visit_map(self)
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf option unit unit_struct newtype_struct seq tuple
        tuple_struct map struct enum identifier ignored_any
    }
}

impl<'de> MapAccess<'de> for RowDeserializer {
    type Error = DecodeError;

    fn next_key_seed<K: de::DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, DecodeError> {
        let Some((var, term)) = self.terms.next() else {
            return Ok(None);
        };
        let key = seed.deserialize(var.as_str().into_deserializer())?;
        self.pending = Some((var, term));
        Ok(Some(key))
    }

    fn next_value_seed<V: de::DeserializeSeed<'de>>(
        &mut self,
        seed: V,
    ) -> Result<V::Value, DecodeError> {
        let (var, term) = self.pending.take().expect("a key came first");
        seed.deserialize(TermDeserializer { var, term })
    }
}

/// One bound value, decoded as the field's type asks.
struct TermDeserializer {
    var: String,
    term: Term,
}

impl TermDeserializer {
    fn refuse(&self, what: &str) -> DecodeError {
        DecodeError(format!(
            "variable ?{} is {:?}, which is not {what}",
            self.var, self.term.value
        ))
    }

    fn parse<T: std::str::FromStr>(&self, what: &str) -> Result<T, DecodeError> {
        if self.term.kind != TermKind::Literal {
            return Err(self.refuse(what));
        }
        self.term
            .value
            .trim()
            .parse()
            .map_err(|_| self.refuse(what))
    }
}

macro_rules! parsed {
    ($($method:ident $visit:ident $ty:ty, $what:literal;)*) => {
        $(
            fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DecodeError> {
                visitor.$visit(self.parse::<$ty>($what)?)
            }
        )*
    };
}

impl<'de> Deserializer<'de> for TermDeserializer {
    type Error = DecodeError;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DecodeError> {
        visitor.visit_string(self.term.value)
    }

    fn deserialize_bool<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DecodeError> {
        // xsd:boolean's lexical forms.
        match (self.term.kind, self.term.value.trim()) {
            (TermKind::Literal, "true" | "1") => visitor.visit_bool(true),
            (TermKind::Literal, "false" | "0") => visitor.visit_bool(false),
            _ => Err(self.refuse("a boolean (true, false, 1 or 0)")),
        }
    }

    parsed! {
        deserialize_i8 visit_i8 i8, "an integer that fits i8";
        deserialize_i16 visit_i16 i16, "an integer that fits i16";
        deserialize_i32 visit_i32 i32, "an integer that fits i32";
        deserialize_i64 visit_i64 i64, "an integer";
        deserialize_u8 visit_u8 u8, "a non-negative integer that fits u8";
        deserialize_u16 visit_u16 u16, "a non-negative integer that fits u16";
        deserialize_u32 visit_u32 u32, "a non-negative integer that fits u32";
        deserialize_u64 visit_u64 u64, "a non-negative integer";
        deserialize_f32 visit_f32 f32, "a number";
        deserialize_f64 visit_f64 f64, "a number";
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DecodeError> {
        // Unbound variables are absent from the row: a present one is some.
        visitor.visit_some(self)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        visitor: V,
    ) -> Result<V::Value, DecodeError> {
        match name {
            IRI if self.term.kind != TermKind::Iri => Err(self.refuse("an IRI")),
            DATE if !is_date(&self.term) => Err(self.refuse("an xsd:date (YYYY-MM-DD)")),
            _ => visitor.visit_newtype_struct(self),
        }
    }

    serde::forward_to_deserialize_any! {
        i128 u128 char str string bytes byte_buf unit unit_struct seq tuple
        tuple_struct map struct enum identifier ignored_any
    }
}

/// `YYYY-MM-DD`, then an optional `Z` or `+hh:mm` / `-hh:mm`.
fn is_date(term: &Term) -> bool {
    let v = term.value.as_bytes();
    let digits =
        |r: std::ops::Range<usize>| v.get(r).is_some_and(|d| d.iter().all(u8::is_ascii_digit));
    let zone = &v[v.len().min(10)..];
    term.kind == TermKind::Literal
        && digits(0..4)
        && v.get(4) == Some(&b'-')
        && digits(5..7)
        && v.get(7) == Some(&b'-')
        && digits(8..10)
        && (zone.is_empty()
            || zone == b"Z"
            || (zone.len() == 6
                && matches!(zone[0], b'+' | b'-')
                && zone[1..3].iter().all(u8::is_ascii_digit)
                && zone[3] == b':'
                && zone[4..].iter().all(u8::is_ascii_digit)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::parse_row;

    #[derive(Debug, Deserialize, PartialEq)]
    struct Item {
        item: Iri,
        label: String,
        order: i64,
        price: f64,
        required: bool,
        due: Option<Date>,
        note: Option<String>,
    }

    fn row(json: &str) -> Row {
        parse_row(json).unwrap()
    }

    const GOOD: &str = r#"{
        "item": {"type": "uri", "value": "urn:item"},
        "label": {"type": "literal", "value": "Lunch"},
        "order": {"type": "literal", "value": "2", "datatype": "http://www.w3.org/2001/XMLSchema#integer"},
        "price": {"type": "literal", "value": "12.50", "datatype": "http://www.w3.org/2001/XMLSchema#decimal"},
        "required": {"type": "literal", "value": "true", "datatype": "http://www.w3.org/2001/XMLSchema#boolean"},
        "due": {"type": "literal", "value": "2026-12-01", "datatype": "http://www.w3.org/2001/XMLSchema#date"}
    }"#;

    #[test]
    fn a_row_decodes_into_typed_fields_and_an_unbound_variable_is_none() {
        let item: Item = decode(row(GOOD), 0).unwrap();
        assert_eq!(
            item,
            Item {
                item: Iri("urn:item".into()),
                label: "Lunch".into(),
                order: 2,
                price: 12.5,
                required: true,
                due: Some(Date("2026-12-01".into())),
                note: None,
            }
        );
    }

    #[test]
    fn a_value_that_does_not_fit_names_the_row_the_variable_and_the_value() {
        let cases = [
            (
                "order",
                r#"{"type": "literal", "value": "two"}"#,
                "row 3: variable ?order is \"two\", which is not an integer",
            ),
            (
                "price",
                r#"{"type": "literal", "value": "12,50"}"#,
                "row 3: variable ?price is \"12,50\", which is not a number",
            ),
            (
                "required",
                r#"{"type": "literal", "value": "yes"}"#,
                "row 3: variable ?required is \"yes\", which is not a boolean (true, false, 1 or 0)",
            ),
            (
                "item",
                r#"{"type": "literal", "value": "urn:item"}"#,
                "row 3: variable ?item is \"urn:item\", which is not an IRI",
            ),
            (
                "due",
                r#"{"type": "literal", "value": "1/12/2026"}"#,
                "row 3: variable ?due is \"1/12/2026\", which is not an xsd:date (YYYY-MM-DD)",
            ),
            (
                "order",
                r#"{"type": "uri", "value": "urn:2"}"#,
                "row 3: variable ?order is \"urn:2\", which is not an integer",
            ),
        ];
        for (var, term, expected) in cases {
            let mut json: serde_json::Value = serde_json::from_str(GOOD).unwrap();
            json[var] = serde_json::from_str(term).unwrap();
            let err = decode::<Item>(parse_row(&json.to_string()).unwrap(), 2).unwrap_err();
            assert_eq!(err, Error::Query(expected.to_owned()), "{var}");
        }
        let mut json: serde_json::Value = serde_json::from_str(GOOD).unwrap();
        json.as_object_mut().unwrap().remove("label");
        let err = decode::<Item>(parse_row(&json.to_string()).unwrap(), 0).unwrap_err();
        assert_eq!(err, Error::Query("row 1: missing field `label`".to_owned()));
    }

    #[test]
    fn dates_take_an_optional_time_zone() {
        let date = |value: &str| Term {
            kind: TermKind::Literal,
            value: value.to_owned(),
            datatype: None,
            language: None,
        };
        for (value, ok) in [
            ("2026-12-01", true),
            ("2026-12-01Z", true),
            ("2026-12-01+01:00", true),
            ("2026-12-1", false),
            ("2026-12-01T10:00", false),
            ("", false),
        ] {
            assert_eq!(is_date(&date(value)), ok, "{value}");
        }
    }
}
