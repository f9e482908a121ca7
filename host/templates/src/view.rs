//! View objects: the maps a generator passes that carry model IRIs (`iri`
//! and `origins`), and how a trace reads those IRIs off them.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashSet};

use minijinja::value::Value;

/// How a trace walk reads the IRIs off the view objects it meets.
pub(crate) trait IriReader {
    /// An IRI as read.
    type Iri: Clone;
    /// Adds `object`'s IRIs (see [`add_view_iris`]) to `iris`; whether it
    /// is a view object.
    fn view_iris(&mut self, object: &Value, iris: &mut Vec<Self::Iri>) -> bool;
    /// Adds the IRI values `values` (string values).
    fn iris(&mut self, values: &[Value], iris: &mut Vec<Self::Iri>);
    /// Sorts `iris` by text and drops repeats.
    fn sort(&self, iris: &mut Vec<Self::Iri>);
}

/// IRIs read as the string values they are, for [`TraceLine`]s.
pub(crate) struct ByValue;

impl IriReader for ByValue {
    type Iri = Value;

    fn view_iris(&mut self, object: &Value, iris: &mut Vec<Value>) -> bool {
        let mut found = Vec::new();
        let view = add_view_iris(object, &mut found);
        iris.extend(found.into_iter().map(Cow::into_owned));
        view
    }

    fn iris(&mut self, values: &[Value], iris: &mut Vec<Value>) {
        iris.extend_from_slice(values);
    }

    fn sort(&self, iris: &mut Vec<Value>) {
        sort_iris(iris);
    }
}

/// The text of an IRI value (only string values are kept as IRIs).
pub(crate) fn iri_text(value: &Value) -> &str {
    value.as_str().unwrap_or_default()
}

/// Sorts IRI values by their text and drops repeats.
pub(crate) fn sort_iris(iris: &mut Vec<Value>) {
    // A page cites the same few objects thousands of times, mostly as
    // clones of one value: those repeats go first, by address, keeping
    // the order the lines cited them in.
    if iris.len() > 32 {
        let mut seen: HashSet<usize, foldhash::fast::RandomState> =
            HashSet::with_capacity_and_hasher(iris.len(), Default::default());
        iris.retain(|v| seen.insert(iri_text(v).as_ptr() as usize));
    }
    // Templates mostly print lists in order (generators sort them, to be
    // deterministic), so a page's IRIs come in a few ascending runs (17
    // for 938 IRIs on a page at expense x300): a stable sort merges the
    // runs, where an unstable one sorted each page over again.
    iris.sort_by(|a, b| iri_text(a).cmp(iri_text(b)));
    iris.dedup_by(|a, b| iri_text(a) == iri_text(b));
}

/// Adds a view object's IRIs (its `iri` and `origins`, when it is one;
/// only string values) to `terms`. Whether it was one. Borrowed from a
/// map read from JSON, where they are found without a copy: most lines
/// cite the same few objects, shared with the threads rendering, and a
/// copy of a shared value counts its shared reference up and down.
pub(crate) fn add_view_iris<'v>(value: &'v Value, terms: &mut Vec<Cow<'v, Value>>) -> bool {
    if !is_map(value) {
        return false;
    }
    let Some(map) = value.downcast_object_ref::<BTreeMap<Value, Value>>() else {
        // Another kind of map: its fields, copied.
        let Ok(iri) = value.get_attr("iri") else {
            return false;
        };
        if iri.as_str().is_none() {
            return false;
        }
        terms.push(Cow::Owned(iri));
        if let Ok(origins) = value.get_attr("origins")
            && let Ok(items) = origins.try_iter()
        {
            terms.extend(items.filter(|o| o.as_str().is_some()).map(Cow::Owned));
        }
        return true;
    };
    let Some(iri) = map_field(map, "iri").filter(|iri| iri.as_str().is_some()) else {
        return false;
    };
    terms.push(Cow::Borrowed(iri));
    if let Some(origins) = map_field(map, "origins") {
        match origins.downcast_object_ref::<Vec<Value>>() {
            Some(items) => terms.extend(
                items
                    .iter()
                    .filter(|o| o.as_str().is_some())
                    .map(Cow::Borrowed),
            ),
            None => {
                if let Ok(items) = origins.try_iter() {
                    terms.extend(items.filter(|o| o.as_str().is_some()).map(Cow::Owned));
                }
            }
        }
    }
    true
}

/// The field `key` of a map read from JSON, found as the template engine
/// finds it (`get_attr`): a small map is searched in order.
fn map_field<'v>(map: &'v BTreeMap<Value, Value>, key: &str) -> Option<&'v Value> {
    if map.len() <= 12 {
        map.iter()
            .find(|(k, _)| {
                k.kind() == minijinja::value::ValueKind::String && k.as_str() == Some(key)
            })
            .map(|(_, v)| v)
    } else {
        map.get(&Value::from(key))
    }
}

/// A view object's IRIs (see [`add_view_iris`]).
pub(crate) fn view_iris(value: &Value) -> Option<Vec<Value>> {
    let mut iris = Vec::new();
    add_view_iris(value, &mut iris).then_some(iris.into_iter().map(Cow::into_owned).collect())
}

/// Whether `value` is a map (a view object may be one).
pub(crate) fn is_map(value: &Value) -> bool {
    value.kind() == minijinja::value::ValueKind::Map
}
