//! The model seen as elements: their types, instances, containers and
//! children, their literal values, and their triples as Turtle. What the
//! drafting prompt shows of a model and the probes change in it.

use std::collections::BTreeSet;

use oxigraph::io::{RdfFormat, RdfSerializer};
use oxigraph::model::{
    NamedNode, NamedNodeRef, NamedOrBlankNode as Subject, Quad, Term,
    vocab::{rdf, rdfs},
};

use crate::Model;

impl Model {
    /// The `rdf:type`s of `iri`, sorted.
    pub fn types_of(&self, iri: &str) -> Vec<String> {
        let Ok(node) = NamedNode::new(iri) else {
            return Vec::new();
        };
        let types: BTreeSet<String> = self
            .store()
            .quads_for_pattern(Some(node.as_ref().into()), Some(rdf::TYPE), None, None)
            .filter_map(Result::ok)
            .filter_map(|q| match q.object {
                Term::NamedNode(n) => Some(n.into_string()),
                _ => None,
            })
            .collect();
        types.into_iter().collect()
    }

    /// The named instances of `class`, sorted.
    pub fn instances_of(&self, class: &str) -> Vec<String> {
        let Ok(node) = NamedNode::new(class) else {
            return Vec::new();
        };
        let instances: BTreeSet<String> = self
            .store()
            .quads_for_pattern(None, Some(rdf::TYPE), Some(node.as_ref().into()), None)
            .filter_map(Result::ok)
            .filter_map(|q| match q.subject {
                Subject::NamedNode(n) => Some(n.into_string()),
                Subject::BlankNode(_) => None,
            })
            .collect();
        instances.into_iter().collect()
    }

    /// Whether `iri` is an element of the model: the subject of a triple,
    /// and neither a class (an `rdf:type`'s object) nor a property.
    pub fn is_element(&self, iri: &str) -> bool {
        let Ok(node) = NamedNode::new(iri) else {
            return false;
        };
        let node = node.as_ref();
        let any = |s, p, o| {
            self.store()
                .quads_for_pattern(s, p, o, None)
                .next()
                .is_some()
        };
        any(Some(node.into()), None, None)
            && !any(None, Some(rdf::TYPE), Some(node.into()))
            && !any(None, Some(node), None)
    }

    /// Every (named subject, property) that points at `iri`, `rdf:type`
    /// aside, sorted: the links a copy of `iri` would need to be reached
    /// as `iri` is.
    pub fn links_to(&self, iri: &str) -> Vec<(String, String)> {
        let Ok(node) = NamedNode::new(iri) else {
            return Vec::new();
        };
        let found: BTreeSet<(String, String)> = self
            .store()
            .quads_for_pattern(None, None, Some(node.as_ref().into()), None)
            .filter_map(Result::ok)
            .filter_map(|quad| match quad.subject {
                Subject::NamedNode(subject) if quad.predicate.as_ref() != rdf::TYPE => {
                    Some((subject.into_string(), quad.predicate.into_string()))
                }
                _ => None,
            })
            .collect();
        found.into_iter().collect()
    }

    /// The named objects of `property` on `subject`, sorted.
    pub fn objects(&self, subject: &str, property: &str) -> Vec<String> {
        let (Ok(subject), Ok(property)) = (NamedNode::new(subject), NamedNode::new(property))
        else {
            return Vec::new();
        };
        let found: BTreeSet<String> = self
            .store()
            .quads_for_pattern(
                Some(subject.as_ref().into()),
                Some(property.as_ref()),
                None,
                None,
            )
            .filter_map(Result::ok)
            .filter_map(|q| match q.object {
                Term::NamedNode(o) => Some(o.into_string()),
                _ => None,
            })
            .collect();
        found.into_iter().collect()
    }

    /// The subjects that point at `iri` through a property their kind
    /// holds several of: its containers, whose lists a copy of `iri` joins.
    pub fn containers(&self, iri: &str) -> Vec<(String, String)> {
        self.links_to(iri)
            .into_iter()
            .filter(|(subject, property)| {
                NamedNode::new(property.as_str())
                    .is_ok_and(|p| self.holds_several(subject, p.as_ref()))
            })
            .collect()
    }

    /// The elements under `iri`: those it holds several of its kind of
    /// (a page's components), and theirs, sorted.
    pub fn children(&self, iri: &str) -> Vec<String> {
        let mut found = BTreeSet::new();
        let mut todo = vec![iri.to_owned()];
        while let Some(parent) = todo.pop() {
            for child in self.held(&parent) {
                if child != iri && found.insert(child.clone()) {
                    todo.push(child);
                }
            }
        }
        found.into_iter().collect()
    }

    /// The elements `iri` points at through a property its kind holds
    /// several of, and of no type of its own: a state's next states are
    /// its peers, not its parts.
    fn held(&self, iri: &str) -> Vec<String> {
        let Ok(node) = NamedNode::new(iri) else {
            return Vec::new();
        };
        let own_types = self.types_of(iri);
        self.store()
            .quads_for_pattern(Some(node.as_ref().into()), None, None, None)
            .filter_map(Result::ok)
            .filter_map(|q| match q.object {
                Term::NamedNode(o)
                    if self.is_element(o.as_str())
                        && self.holds_several(iri, q.predicate.as_ref())
                        && !self
                            .types_of(o.as_str())
                            .iter()
                            .any(|t| own_types.contains(t)) =>
                {
                    Some(o.into_string())
                }
                _ => None,
            })
            .collect()
    }

    /// Whether `subject`, or an element of one of its types, has two or
    /// more values of `property`, or a vocabulary lets it have them
    /// ([`Model::with_lists`]).
    fn holds_several(&self, subject: &str, property: NamedNodeRef<'_>) -> bool {
        if self.lists.contains(property.as_str()) {
            return true;
        }
        let several = |s: &str| {
            NamedNode::new(s).is_ok_and(|s| {
                self.store()
                    .quads_for_pattern(Some(s.as_ref().into()), Some(property), None, None)
                    .nth(1)
                    .is_some()
            })
        };
        several(subject)
            || self
                .types_of(subject)
                .iter()
                .flat_map(|t| self.instances_of(t))
                .any(|s| several(&s))
    }

    /// Every literal value of a named element, as (element, property,
    /// value), sorted.
    pub fn literal_values(&self) -> Vec<(String, String, String)> {
        let values: BTreeSet<(String, String, String)> = self
            .store()
            .iter()
            .filter_map(Result::ok)
            .filter_map(|q| match (q.subject, q.object) {
                (Subject::NamedNode(s), Term::Literal(l)) => Some((
                    s.into_string(),
                    q.predicate.into_string(),
                    l.value().to_owned(),
                )),
                _ => None,
            })
            .collect();
        values.into_iter().collect()
    }

    /// Every text the model holds: each IRI it names (subject, property
    /// or value) and each literal's lexical form, sorted.
    pub fn texts(&self) -> BTreeSet<String> {
        let text = |t: Term| match t {
            Term::NamedNode(n) => Some(n.into_string()),
            Term::Literal(l) => Some(l.value().to_owned()),
            _ => None,
        };
        self.store()
            .iter()
            .filter_map(Result::ok)
            .flat_map(|q| {
                let subject = match q.subject {
                    Subject::NamedNode(n) => Some(n.into_string()),
                    _ => None,
                };
                [subject, Some(q.predicate.into_string()), text(q.object)]
            })
            .flatten()
            .collect()
    }

    /// The elements `iri` points at (its properties' values that are
    /// elements), sorted.
    pub fn pointed_at(&self, iri: &str) -> Vec<String> {
        let Ok(node) = NamedNode::new(iri) else {
            return Vec::new();
        };
        let found: BTreeSet<String> = self
            .store()
            .quads_for_pattern(Some(node.as_ref().into()), None, None, None)
            .filter_map(Result::ok)
            .filter_map(|q| match q.object {
                Term::NamedNode(o) if self.is_element(o.as_str()) => Some(o.into_string()),
                _ => None,
            })
            .collect();
        found.into_iter().collect()
    }

    /// The elements that share a triple with `iri`: those it points at
    /// and those that point at it, sorted.
    pub fn neighbours(&self, iri: &str) -> Vec<String> {
        let Ok(node) = NamedNode::new(iri) else {
            return Vec::new();
        };
        let mut found: BTreeSet<String> = self.pointed_at(iri).into_iter().collect();
        found.extend(
            self.store()
                .quads_for_pattern(None, None, Some(node.as_ref().into()), None)
                .filter_map(Result::ok)
                .filter_map(|q| match q.subject {
                    Subject::NamedNode(s) if self.is_element(s.as_str()) => Some(s.into_string()),
                    _ => None,
                }),
        );
        found.remove(iri);
        found.into_iter().collect()
    }

    /// Every triple of `iri` as subject, then every triple whose named
    /// subject points at it, as N-Triples lines (each valid Turtle), in a
    /// stable order; `None` when one holds a blank node, which has no name
    /// to write it by.
    pub fn ntriples_about(&self, iri: &str) -> Option<String> {
        let node = NamedNode::new(iri).ok()?;
        let mut own: Vec<String> = Vec::new();
        for quad in self
            .store()
            .quads_for_pattern(Some(node.as_ref().into()), None, None, None)
            .filter_map(Result::ok)
        {
            if matches!(quad.object, Term::BlankNode(_)) {
                return None;
            }
            own.push(format!(
                "{} {} {} .",
                quad.subject, quad.predicate, quad.object
            ));
        }
        let mut pointing: Vec<String> = Vec::new();
        for quad in self
            .store()
            .quads_for_pattern(None, None, Some(node.as_ref().into()), None)
            .filter_map(Result::ok)
        {
            if !matches!(quad.subject, Subject::NamedNode(_)) {
                return None;
            }
            pointing.push(format!(
                "{} {} {} .",
                quad.subject, quad.predicate, quad.object
            ));
        }
        own.sort();
        pointing.sort();
        own.extend(pointing);
        Some(own.join("\n") + "\n")
    }

    /// The `rdfs:comment`s the model gives for the properties and classes
    /// `subjects` use, as (term, comment), sorted.
    pub fn term_comments(&self, subjects: &[String]) -> Vec<(String, String)> {
        let mut terms = BTreeSet::new();
        for subject in subjects {
            let Ok(node) = NamedNode::new(subject) else {
                continue;
            };
            for q in self
                .store()
                .quads_for_pattern(Some(node.as_ref().into()), None, None, None)
                .filter_map(Result::ok)
            {
                if q.predicate.as_ref() == rdf::TYPE
                    && let Term::NamedNode(class) = &q.object
                {
                    terms.insert(class.as_str().to_owned());
                }
                terms.insert(q.predicate.into_string());
            }
        }
        let mut comments = Vec::new();
        for term in terms {
            let node = NamedNode::new_unchecked(term.as_str());
            for q in self
                .store()
                .quads_for_pattern(Some(node.as_ref().into()), Some(rdfs::COMMENT), None, None)
                .filter_map(Result::ok)
            {
                if let Term::Literal(l) = q.object {
                    comments.push((term.clone(), l.value().to_owned()));
                }
            }
        }
        comments.sort();
        comments
    }

    /// The triples of `subjects` (in that order) as Turtle, with the
    /// model's prefixes: what a prompt shows of the model.
    pub fn turtle_of(&self, subjects: &[String]) -> String {
        let mut quads = Vec::new();
        for subject in subjects {
            let Ok(node) = NamedNode::new(subject) else {
                continue;
            };
            let mut triples: Vec<Quad> = self
                .store()
                .quads_for_pattern(Some(node.as_ref().into()), None, None, None)
                .filter_map(Result::ok)
                .collect();
            // rdf:type first, then by property and value: stable text.
            triples.sort_by_key(|q| {
                (
                    q.predicate.as_ref() != rdf::TYPE,
                    q.predicate.to_string(),
                    q.object.to_string(),
                )
            });
            quads.extend(triples);
        }
        turtle(self.prefixes(), &quads)
    }

    /// The triples of the new elements `iris` (in that order), then those
    /// of other elements that point at them, as Turtle statements with
    /// `prefixes` (a model file's own, declared there already): what
    /// write-back appends to that file for a copy. `None` when one of them
    /// has a blank node among its values, or a blank node points at it.
    pub fn turtle_about(
        &self,
        iris: &[String],
        prefixes: &std::collections::BTreeMap<String, String>,
    ) -> Option<String> {
        let mut own = Vec::new();
        let mut pointing = Vec::new();
        for iri in iris {
            let node = NamedNode::new(iri.as_str()).ok()?;
            let mut triples: Vec<Quad> = self
                .store()
                .quads_for_pattern(Some(node.as_ref().into()), None, None, None)
                .filter_map(Result::ok)
                .collect();
            if triples
                .iter()
                .any(|q| matches!(q.object, Term::BlankNode(_)))
            {
                return None;
            }
            triples.sort_by_key(|q| {
                (
                    q.predicate.as_ref() != rdf::TYPE,
                    q.predicate.to_string(),
                    q.object.to_string(),
                )
            });
            own.extend(triples);
            for quad in self
                .store()
                .quads_for_pattern(None, None, Some(node.as_ref().into()), None)
                .filter_map(Result::ok)
            {
                match &quad.subject {
                    Subject::NamedNode(s) if iris.iter().any(|i| i == s.as_str()) => {}
                    Subject::NamedNode(_) => pointing.push(quad),
                    _ => return None,
                }
            }
        }
        pointing.sort_by_key(|q| (q.subject.to_string(), q.predicate.to_string()));
        own.extend(pointing);
        let text = turtle(prefixes, &own);
        // The file declares its prefixes already.
        Some(
            text.lines()
                .filter(|l| !l.starts_with("@prefix "))
                .map(|l| format!("{l}\n"))
                .collect(),
        )
    }
}

/// `quads` (their triples) as Turtle with `prefixes`, indented with
/// spaces, not the serializer's tabs: a prompt is printed, and seams
/// escapes every control character it prints.
fn turtle(prefixes: &std::collections::BTreeMap<String, String>, quads: &[Quad]) -> String {
    let mut serializer = RdfSerializer::from_format(RdfFormat::Turtle);
    for (name, iri) in prefixes {
        if let Ok(with) = serializer.clone().with_prefix(name, iri) {
            serializer = with;
        }
    }
    let mut writer = serializer.for_writer(Vec::new());
    for quad in quads {
        // Writing to memory fails only on a bad term, never here.
        let _ = writer.serialize_triple(quad.as_ref());
    }
    writer
        .finish()
        .map(|bytes| String::from_utf8_lossy(&bytes).replace('\t', "    "))
        .unwrap_or_default()
}
