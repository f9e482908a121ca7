//! What the UI vocabulary's shapes (`vocabulary/ui.shapes.ttl`) say about
//! its properties, read in one place for the drafting probes, write-back
//! and the model check: which hold lists, and which hold a value out of a
//! fixed set.

use std::collections::BTreeSet;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use crate::Model;

/// The UI vocabulary's shapes, as the built-ins check models with them.
const UI_SHAPES: &str = include_str!("../../../vocabulary/ui.shapes.ttl");

/// The `?p` of each row `sparql` selects from the shapes.
fn properties(sparql: &str) -> BTreeSet<String> {
    let Ok(shapes) = Model::parse("ui.shapes.ttl", UI_SHAPES) else {
        return BTreeSet::new();
    };
    shapes
        .rows(sparql, Instant::now() + Duration::from_secs(5), 1 << 20)
        .unwrap_or_default()
        .into_iter()
        .filter_map(|mut row| row.remove("p"))
        .collect()
}

/// Every property a shape gives elements as values (`sh:class` or
/// `sh:nodeKind sh:IRI`) without `sh:maxCount 1`: a page's parts, a
/// form's fields, an entity's attributes. A model that gives each element
/// one (a form with one field) still makes lists of them
/// ([`Model::with_lists`]), so that a copy of the one field joins its form.
pub fn list_properties() -> &'static BTreeSet<String> {
    static LISTS: OnceLock<BTreeSet<String>> = OnceLock::new();
    LISTS.get_or_init(|| {
        properties(
            "SELECT DISTINCT ?p WHERE {
                ?shape sh:property ?b . ?b sh:path ?p .
                FILTER(isIRI(?p))
                FILTER EXISTS { { ?b sh:class ?c } UNION { ?b sh:nodeKind sh:IRI } }
                FILTER NOT EXISTS { ?b sh:maxCount 1 }
            }",
        )
    })
}

/// Every property whose values a shape enumerates (`sh:in`): a filter
/// may test them (`ui:kind "select"`), so no probe changes them.
pub fn enumerated_properties() -> &'static BTreeSet<String> {
    static ENUMERATED: OnceLock<BTreeSet<String>> = OnceLock::new();
    ENUMERATED
        .get_or_init(|| properties("SELECT DISTINCT ?p WHERE { ?s sh:path ?p ; sh:in ?values }"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ui_vocabularys_lists_are_those_its_shapes_do_not_cap() {
        let ui = |local: &str| format!("https://w3id.org/seams/ui#{local}");
        let lists = list_properties();
        for listed in [
            "page",
            "contains",
            "field",
            "attribute",
            "relation",
            "state",
            "next",
        ] {
            assert!(lists.contains(&ui(listed)), "{listed}: {lists:?}");
        }
        for single in [
            "homePage",
            "shows",
            "creates",
            "target",
            "relatedEntity",
            "database",
        ] {
            assert!(!lists.contains(&ui(single)), "{single}: {lists:?}");
        }
        let enumerated = enumerated_properties();
        assert!(enumerated.contains(&ui("kind")), "{enumerated:?}");
        assert!(!enumerated.contains(&ui("name")), "{enumerated:?}");
    }
}
