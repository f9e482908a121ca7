//! The properties of the UI vocabulary that hold lists: those its shapes
//! let an element hold several values of (a page's parts, a form's fields,
//! an entity's attributes). A model that gives each element one (a form
//! with one field) still makes lists of them, so that a copy of the one
//! field joins its form.

use std::collections::BTreeSet;
use std::sync::OnceLock;

use seams_model::Model;

/// The UI vocabulary's shapes, as the built-ins check models with them.
const UI_SHAPES: &str = include_str!("../../../../vocabulary/ui.shapes.ttl");

/// Every property a shape of the UI vocabulary gives elements as values
/// (`sh:class` or `sh:nodeKind sh:IRI`) without `sh:maxCount 1`.
pub(super) fn list_properties() -> &'static BTreeSet<String> {
    static LISTS: OnceLock<BTreeSet<String>> = OnceLock::new();
    LISTS.get_or_init(|| {
        let Ok(shapes) = Model::parse("ui.shapes.ttl", UI_SHAPES) else {
            return BTreeSet::new();
        };
        let query = "SELECT DISTINCT ?p WHERE {
            ?shape sh:property ?b . ?b sh:path ?p .
            FILTER(isIRI(?p))
            FILTER EXISTS { { ?b sh:class ?c } UNION { ?b sh:nodeKind sh:IRI } }
            FILTER NOT EXISTS { ?b sh:maxCount 1 }
        }";
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        let answer = shapes.query(query, deadline, 1 << 20);
        let Ok(json) = answer.map(|a| serde_json::from_str::<serde_json::Value>(&a)) else {
            return BTreeSet::new();
        };
        json.ok()
            .iter()
            .flat_map(|j| j["results"]["bindings"].as_array().into_iter().flatten())
            .filter_map(|row| row["p"]["value"].as_str().map(str::to_owned))
            .collect()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ui_vocabularys_lists_are_those_its_shapes_do_not_cap() {
        let ui = |local: &str| format!("https://w3id.org/seams/ui#{local}");
        let lists = list_properties();
        for listed in [
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
    }
}
