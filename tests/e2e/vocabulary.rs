//! The UI vocabulary: every term is documented by a comment, and the
//! examples use only terms it defines.

use std::collections::BTreeSet;

use seams_tests::{EXAMPLES, repo_root};

/// The `ui:` terms `text` declares (`ui:x a rdfs:Class` or `a rdf:Property`),
/// each with whether a comment line comes right before it.
fn declared(text: &str) -> Vec<(String, bool)> {
    let lines: Vec<&str> = text.lines().collect();
    lines
        .iter()
        .enumerate()
        .filter_map(|(i, line)| {
            let rest = line.strip_prefix("ui:")?;
            let (name, after) = rest.split_once(' ')?;
            let kind = after.trim_start();
            if !(kind.starts_with("a rdfs:Class") || kind.starts_with("a rdf:Property")) {
                return None;
            }
            let commented = i > 0 && lines[i - 1].starts_with('#');
            Some((name.to_owned(), commented))
        })
        .collect()
}

/// The `ui:` terms `text` uses.
fn used(text: &str) -> BTreeSet<String> {
    text.match_indices("ui:")
        .map(|(at, _)| {
            text[at + 3..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric())
                .collect::<String>()
        })
        .filter(|name| !name.is_empty())
        .collect()
}

#[test]
fn every_term_is_commented_and_the_examples_use_only_defined_terms() {
    let vocabulary = std::fs::read_to_string(repo_root().join("vocabulary/ui.ttl")).unwrap();
    let terms = declared(&vocabulary);
    for term in [
        "Application",
        "Page",
        "Entity",
        "Attribute",
        "State",
        "binds",
        "next",
    ] {
        assert!(
            terms.iter().any(|(t, _)| t == term),
            "{term} is not declared"
        );
    }
    let uncommented: Vec<&String> = terms.iter().filter(|(_, c)| !c).map(|(t, _)| t).collect();
    assert!(
        uncommented.is_empty(),
        "terms without a comment: {uncommented:?}"
    );
    let defined: BTreeSet<String> = terms.into_iter().map(|(t, _)| t).collect();
    for example in EXAMPLES {
        let model =
            std::fs::read_to_string(repo_root().join("examples").join(example).join("model.ttl"))
                .unwrap();
        let unknown: Vec<String> = used(&model).difference(&defined).cloned().collect();
        assert!(
            unknown.is_empty(),
            "{example} uses undefined terms: {unknown:?}"
        );
    }
}

#[test]
fn the_term_scan_sees_declarations_and_uses() {
    let text = "# a class\nui:A a rdfs:Class .\nui:b a rdf:Property .\n";
    assert_eq!(
        declared(text),
        [("A".to_owned(), true), ("b".to_owned(), false)]
    );
    assert_eq!(
        used("x ui:shows y ; ui:Entity ."),
        BTreeSet::from(["Entity".to_owned(), "shows".to_owned()])
    );
}
