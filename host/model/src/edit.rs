//! Changed copies of a model, derived mechanically: what the drafting
//! probes run a generator on to see whether its output follows the model
//! (a relabelled element, renamed IRIs, an element added beside a sibling
//! or removed). The original model is never changed.

use std::collections::{BTreeMap, BTreeSet};

use oxigraph::model::{Literal, NamedNode, NamedOrBlankNode as Subject, Quad, Term, vocab::rdfs};

use crate::{Model, ModelError};

/// One change to a model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Edit {
    /// Every `rdfs:label` of `iri` becomes `label`.
    Relabel {
        /// The element.
        iri: String,
        /// Its new label.
        label: String,
    },
    /// Every literal value of `property` on `iri` becomes `value`, its
    /// datatype or language kept.
    SetValue {
        /// The element.
        iri: String,
        /// The property.
        property: String,
        /// The new lexical value.
        value: String,
    },
    /// The IRI `from` becomes `to` wherever it occurs.
    Rename {
        /// The old IRI.
        from: String,
        /// The new one.
        to: String,
    },
    /// A new element `to`: every triple of `from` as subject, with the
    /// label `label` and without its children ([`Model::children`]); and
    /// every triple pointing at `from` through a property its subject's
    /// kind holds several of (an application's pages, a form's fields)
    /// points at `to` as well ([`Model::containers`]).
    Copy {
        /// The sibling copied.
        from: String,
        /// The new element's IRI.
        to: String,
        /// Its label.
        label: String,
    },
    /// `iri` and every triple it occurs in.
    Remove {
        /// The element.
        iri: String,
    },
}

impl Model {
    /// A copy of this model with `edits` applied in order; same prefixes.
    ///
    /// # Errors
    ///
    /// An IRI in `edits` that is not a valid IRI, or the store failing.
    pub fn edited(&self, edits: &[Edit]) -> Result<Model, ModelError> {
        let mut quads: Vec<Quad> = self.store().iter().filter_map(Result::ok).collect();
        for edit in edits {
            quads = apply(self, quads, edit)?;
        }
        Model::from_quads(quads, self.prefixes().clone(), &[])
    }
}

fn named(iri: &str) -> Result<NamedNode, ModelError> {
    NamedNode::new(iri).map_err(|e| ModelError::Store(format!("<{iri}> is not an IRI: {e}")))
}

/// `quads` with every literal of `property` on `iri` set to `value`.
fn set_literal(
    quads: Vec<Quad>,
    iri: &str,
    property: &str,
    value: &str,
) -> Result<Vec<Quad>, ModelError> {
    let (node, property) = (named(iri)?, named(property)?);
    Ok(quads
        .into_iter()
        .map(|mut q| {
            if q.subject == Subject::NamedNode(node.clone())
                && q.predicate == property
                && let Term::Literal(old) = &q.object
            {
                q.object = Term::Literal(match old.language() {
                    Some(lang) => Literal::new_language_tagged_literal_unchecked(value, lang),
                    None => Literal::new_typed_literal(value, old.datatype()),
                });
            }
            q
        })
        .collect())
}

fn apply(model: &Model, quads: Vec<Quad>, edit: &Edit) -> Result<Vec<Quad>, ModelError> {
    Ok(match edit {
        Edit::Relabel { iri, label } => set_literal(quads, iri, rdfs::LABEL.as_str(), label)?,
        Edit::SetValue {
            iri,
            property,
            value,
        } => set_literal(quads, iri, property, value)?,
        Edit::Rename { from, to } => {
            let (from, to) = (named(from)?, named(to)?);
            let swap = |n: &NamedNode| if *n == from { to.clone() } else { n.clone() };
            quads
                .into_iter()
                .map(|q| Quad {
                    subject: match q.subject {
                        Subject::NamedNode(n) => Subject::NamedNode(swap(&n)),
                        other => other,
                    },
                    predicate: swap(&q.predicate),
                    object: match q.object {
                        Term::NamedNode(n) => Term::NamedNode(swap(&n)),
                        other => other,
                    },
                    graph_name: q.graph_name,
                })
                .collect()
        }
        Edit::Copy { from, to, label } => {
            let (source, copy) = (named(from)?, named(to)?);
            let containers: BTreeMap<String, BTreeSet<String>> = model
                .containers(from)
                .into_iter()
                .fold(BTreeMap::new(), |mut map, (s, p)| {
                    map.entry(s).or_default().insert(p);
                    map
                });
            let children: BTreeSet<String> = model.held(from).into_iter().collect();
            let mut added = Vec::new();
            for q in &quads {
                let child =
                    matches!(&q.object, Term::NamedNode(o) if children.contains(o.as_str()));
                if q.subject == Subject::NamedNode(source.clone()) && !child {
                    let object = if q.predicate.as_ref() == rdfs::LABEL {
                        Term::Literal(Literal::new_simple_literal(label.as_str()))
                    } else {
                        q.object.clone()
                    };
                    added.push(Quad {
                        subject: Subject::NamedNode(copy.clone()),
                        predicate: q.predicate.clone(),
                        object,
                        graph_name: q.graph_name.clone(),
                    });
                }
                if q.object == Term::NamedNode(source.clone())
                    && let Subject::NamedNode(s) = &q.subject
                    && containers
                        .get(s.as_str())
                        .is_some_and(|ps| ps.contains(q.predicate.as_str()))
                {
                    added.push(Quad {
                        object: Term::NamedNode(copy.clone()),
                        ..q.clone()
                    });
                }
            }
            let mut quads = quads;
            quads.extend(added);
            quads
        }
        Edit::Remove { iri } => {
            let node = named(iri)?;
            quads
                .into_iter()
                .filter(|q| {
                    q.subject != Subject::NamedNode(node.clone())
                        && q.predicate != node
                        && q.object != Term::NamedNode(node.clone())
                })
                .collect()
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const MODEL: &str = r#"
        @prefix ui: <https://w3id.org/seams/ui#> .
        @prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
        @prefix ex: <https://example.org/x#> .
        ex:app a ui:Application ; rdfs:label "App" ; ui:page ex:a, ex:b ; ui:homePage ex:a .
        ex:a a ui:Page ; rdfs:label "A"@en ; ui:path "a" ; ui:order 1 .
        ex:b a ui:Page ; rdfs:label "B" ; ui:path "b" ; ui:order 2 .
        ex:flow a ui:NavigationFlow ; ui:target ex:b .
    "#;

    fn model() -> Model {
        Model::parse("m.ttl", MODEL).unwrap()
    }

    fn x(local: &str) -> String {
        format!("https://example.org/x#{local}")
    }

    #[test]
    fn elements_types_instances_and_containers() {
        let m = model();
        assert_eq!(m.types_of(&x("a")), ["https://w3id.org/seams/ui#Page"]);
        assert_eq!(
            m.instances_of("https://w3id.org/seams/ui#Page"),
            [x("a"), x("b")]
        );
        assert!(m.is_element(&x("a")));
        assert!(!m.is_element("https://w3id.org/seams/ui#Page"), "a class");
        assert!(!m.is_element(&x("nothing")));
        // ui:page holds several; ui:homePage and ui:target hold one.
        assert_eq!(
            m.containers(&x("b")),
            [(x("app"), "https://w3id.org/seams/ui#page".to_owned())]
        );
    }

    #[test]
    fn each_edit_changes_what_it_says_and_nothing_else() {
        let m = model();
        let relabelled = m
            .edited(&[Edit::Relabel {
                iri: x("a"),
                label: "Fresh".into(),
            }])
            .unwrap();
        assert_eq!(relabelled.label(&x("a")), Some("Fresh"));
        assert_eq!(relabelled.label(&x("b")), Some("B"));
        assert_eq!(relabelled.len(), m.len());
        let revalued = m
            .edited(&[Edit::SetValue {
                iri: x("a"),
                property: "https://w3id.org/seams/ui#path".into(),
                value: "fresh".into(),
            }])
            .unwrap();
        let values = revalued.literal_values();
        assert!(values.contains(&(
            x("a"),
            "https://w3id.org/seams/ui#path".into(),
            "fresh".into()
        )));
        assert!(values.contains(&(x("b"), "https://w3id.org/seams/ui#path".into(), "b".into())));
        assert_eq!(values.len(), m.literal_values().len());

        let renamed = m
            .edited(&[Edit::Rename {
                from: x("b"),
                to: x("z_b"),
            }])
            .unwrap();
        assert!(!renamed.mentions(&x("b")));
        assert_eq!(renamed.label(&x("z_b")), Some("B"));
        assert_eq!(renamed.containers(&x("z_b")).len(), 1);
        assert!(renamed.types_of(&x("flow")).len() == 1);

        let copied = m
            .edited(&[Edit::Copy {
                from: x("b"),
                to: x("c"),
                label: "C".into(),
            }])
            .unwrap();
        assert_eq!(copied.label(&x("c")), Some("C"));
        assert_eq!(
            copied.instances_of("https://w3id.org/seams/ui#Page"),
            [x("a"), x("b"), x("c")]
        );
        // Joined the app's pages; the flow still has one target.
        assert_eq!(copied.containers(&x("c")).len(), 1);
        assert_eq!(copied.len(), m.len() + 4 + 1);

        let removed = m.edited(&[Edit::Remove { iri: x("b") }]).unwrap();
        assert!(!removed.mentions(&x("b")));
        assert_eq!(removed.len(), m.len() - 4 - 2);
        assert_eq!(m.label(&x("b")), Some("B"), "the original is unchanged");
    }

    #[test]
    fn turtle_of_writes_the_subjects_in_order_with_the_prefixes() {
        let m = model();
        let text = m.turtle_of(&[x("b"), x("a")]);
        let b = text
            .find("ex:b a ui:Page")
            .unwrap_or_else(|| panic!("{text}"));
        let a = text
            .find("ex:a a ui:Page")
            .unwrap_or_else(|| panic!("{text}"));
        assert!(b < a, "{text}");
        assert!(
            text.contains("@prefix ex: <https://example.org/x#>"),
            "{text}"
        );
        assert!(
            !text.contains("ex:app"),
            "only the subjects asked for: {text}"
        );
        let again = Model::parse("again.ttl", &text).unwrap();
        assert_eq!(again.label(&x("a")), Some("A"));
    }

    #[test]
    fn a_copy_leaves_the_children_behind() {
        let m = Model::parse(
            "m.ttl",
            r#"@prefix ui: <https://w3id.org/seams/ui#> .
               @prefix ex: <https://example.org/x#> .
               ex:app ui:page ex:a, ex:b .
               ex:a a ui:Page ; ui:contains ex:l1, ex:l2 ; ui:event ex:e .
               ex:b a ui:Page .
               ex:l1 a ui:List ; ui:field ex:f1, ex:f2 .
               ex:l2 a ui:List .
               ex:f1 a ui:Field . ex:f2 a ui:Field .
               ex:e a ui:Event .
            "#,
        )
        .unwrap();
        assert_eq!(m.children(&x("a")), [x("f1"), x("f2"), x("l1"), x("l2")]);
        assert_eq!(m.children(&x("b")), Vec::<String>::new());
        let copied = m
            .edited(&[Edit::Copy {
                from: x("a"),
                to: x("c"),
                label: "C".into(),
            }])
            .unwrap();
        assert_eq!(copied.children(&x("c")), Vec::<String>::new());
        // Its type, its event (one of its kind) and its place in the app.
        assert_eq!(copied.len(), m.len() + 3);
    }
}
