//! Changed copies of a model, derived mechanically: what the drafting
//! probes run a generator on to see whether its output follows the model
//! (a relabelled element, renamed IRIs, an element added beside a sibling
//! or removed), and what structural write-back proposes. The original
//! model is never changed.

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
    /// New elements copied from old ones (an element and what it owns, or
    /// a field and the attribute it binds): every triple of each old
    /// element as subject, with each old IRI of `iris` written as its new
    /// one; a literal of `values`' (old element, property) takes that
    /// value. Every triple from an element not copied to an old element,
    /// through a property its subject's kind holds several of, points at
    /// its copy as well, so that each copy joins the lists its original
    /// is in.
    Clone {
        /// (old IRI, new IRI).
        iris: Vec<(String, String)>,
        /// (old element, property, new value) for the copies' literals.
        values: Vec<(String, String, String)>,
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
        Ok(Model::from_quads(quads, self.prefixes().clone(), &[])?.with_lists(self.lists.clone()))
    }
}

fn named(iri: &str) -> Result<NamedNode, ModelError> {
    NamedNode::new(iri).map_err(|e| ModelError::Store(format!("<{iri}> is not an IRI: {e}")))
}

/// `value` with `old`'s datatype or language.
fn revalued(old: &Literal, value: &str) -> Literal {
    match old.language() {
        Some(lang) => Literal::new_language_tagged_literal_unchecked(value, lang),
        None => Literal::new_typed_literal(value, old.datatype()),
    }
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
                q.object = Term::Literal(revalued(old, value));
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
        Edit::Clone { iris, values } => copy(model, quads, iris, values)?,
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

/// `quads` with the copies of [`Edit::Clone`] added.
fn copy(
    model: &Model,
    mut quads: Vec<Quad>,
    iris: &[(String, String)],
    values: &[(String, String, String)],
) -> Result<Vec<Quad>, ModelError> {
    let renamed: BTreeMap<NamedNode, NamedNode> = iris
        .iter()
        .map(|(old, new)| Ok((named(old)?, named(new)?)))
        .collect::<Result<_, ModelError>>()?;
    // Each copy joins its original's containers that are not copied
    // themselves (a copied container's copy holds it already):
    // (container, property, original).
    let containers: BTreeSet<(String, String, NamedNode)> = renamed
        .keys()
        .flat_map(|old| {
            model
                .containers(old.as_str())
                .into_iter()
                .map(move |(s, p)| (s, p, old.clone()))
        })
        .collect();
    let mut added = Vec::new();
    for q in &quads {
        if let Subject::NamedNode(s) = &q.subject
            && let Some(copy) = renamed.get(s)
        {
            let object = match &q.object {
                Term::NamedNode(o) => Term::NamedNode(renamed.get(o).unwrap_or(o).clone()),
                Term::Literal(old) => match values
                    .iter()
                    .find(|(e, p, _)| e == s.as_str() && p == q.predicate.as_str())
                {
                    Some((_, _, value)) => Term::Literal(revalued(old, value)),
                    None => q.object.clone(),
                },
                other => other.clone(),
            };
            added.push(Quad {
                subject: Subject::NamedNode(copy.clone()),
                predicate: q.predicate.clone(),
                object,
                graph_name: q.graph_name.clone(),
            });
        }
        if let (Subject::NamedNode(s), Term::NamedNode(o)) = (&q.subject, &q.object)
            && !renamed.contains_key(s)
            && let Some(copy) = renamed.get(o)
            && containers.contains(&(
                s.as_str().to_owned(),
                q.predicate.as_str().to_owned(),
                o.clone(),
            ))
        {
            added.push(Quad {
                object: Term::NamedNode(copy.clone()),
                ..q.clone()
            });
        }
    }
    quads.extend(added);
    Ok(quads)
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
            .edited(&[Edit::Clone {
                iris: vec![(x("b"), x("c"))],
                values: vec![(x("b"), rdfs::LABEL.as_str().to_owned(), "C".into())],
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
    fn a_clone_takes_what_its_element_owns_under_new_names() {
        let m = Model::parse(
            "m.ttl",
            r#"@prefix ui: <https://w3id.org/seams/ui#> .
               @prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
               @prefix ex: <https://example.org/x#> .
               ex:e a ui:Entity ; ui:attribute ex:status, ex:title .
               ex:title a ui:Attribute ; rdfs:label "Title" .
               ex:status a ui:Attribute ; rdfs:label "Status" ; ui:name "status" ;
                   ui:state ex:draft, ex:done .
               ex:draft a ui:State ; ui:name "draft" ; ui:next ex:done .
               ex:done a ui:State ; ui:name "done" ; ui:next ex:draft .
            "#,
        )
        .unwrap();
        // A state's next states are its peers, not its parts.
        assert_eq!(m.children(&x("status")), [x("done"), x("draft")]);
        assert_eq!(m.children(&x("draft")), Vec::<String>::new());
        let name = "https://w3id.org/seams/ui#name".to_owned();
        let cloned = m
            .edited(&[Edit::Clone {
                iris: vec![
                    (x("status"), x("s2")),
                    (x("draft"), x("d2")),
                    (x("done"), x("n2")),
                ],
                values: vec![
                    (x("status"), rdfs::LABEL.as_str().to_owned(), "Fresh".into()),
                    (x("draft"), name.clone(), "fresh".into()),
                ],
            }])
            .unwrap();
        assert_eq!(cloned.label(&x("s2")), Some("Fresh"));
        assert_eq!(
            cloned.children(&x("s2")),
            [x("d2"), x("n2")],
            "its states, copied"
        );
        assert_eq!(cloned.containers(&x("s2")).len(), 1, "joined the entity");
        let values = cloned.literal_values();
        assert!(values.contains(&(x("d2"), name.clone(), "fresh".into())));
        assert!(values.contains(&(x("n2"), name.clone(), "done".into())));
        assert!(values.contains(&(x("draft"), name, "draft".into())));
        // The copies' links point at the copies.
        assert_eq!(cloned.pointed_at(&x("d2")), [x("n2")]);
        assert_eq!(cloned.neighbours(&x("n2")), [x("d2"), x("s2")]);
        assert_eq!(cloned.len(), m.len() + 12);
    }
}
