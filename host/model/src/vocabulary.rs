//! The vocabularies a generator reads (protocol 0.2.0), and the check of a
//! model against them: every term of a vocabulary's namespace the model
//! uses must be one the vocabulary defines, so that a typo (`ui:Pag`) is
//! named, with the closest defined term, instead of turning into an
//! output that silently lacks a page.

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use oxigraph::io::{RdfFormat, RdfParser};
use oxigraph::model::{GraphName, NamedOrBlankNode as Subject, Quad, Term};

use crate::Model;
use crate::finding::Finding;

/// A vocabulary as a generator declares it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Vocabulary {
    /// The IRI every one of its terms starts with.
    pub namespace: String,
    /// Turtle defining the terms: every subject in the namespace is one.
    pub terms: String,
    /// SHACL shapes (Turtle) the model must satisfy.
    pub shapes: Option<String>,
}

/// Whether `iri` can be a vocabulary's namespace: an absolute IRI ending
/// in `#` or `/`.
pub fn is_namespace(iri: &str) -> bool {
    (iri.ends_with('#') || iri.ends_with('/'))
        && oxigraph::model::NamedNode::new(iri).is_ok()
        && iri
            .split_once(':')
            .is_some_and(|(scheme, _)| !scheme.is_empty())
}

/// A vocabulary that cannot be used: the generator's fault.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("vocabulary {namespace}: {message}")]
pub struct VocabularyError {
    /// The vocabulary's namespace.
    pub namespace: String,
    /// What is wrong, with the line when it is a syntax error.
    pub message: String,
}

/// The most findings a check reports: past a few, the rest are more of
/// the same, and each costs a search of the model files.
pub const MAX_FINDINGS: usize = 20;

/// Checks `model` against each of `vocabularies`: the unknown terms of
/// each namespace, then what breaks its shapes; at most [`MAX_FINDINGS`],
/// each located in the model files.
///
/// # Errors
///
/// A vocabulary's terms or shapes cannot be read, or its shapes use what
/// seams does not support.
pub fn check(model: &Model, vocabularies: &[Vocabulary]) -> Result<Vec<Finding>, VocabularyError> {
    let mut findings = Vec::new();
    for vocabulary in vocabularies {
        findings.extend(unknown_terms(model, vocabulary)?);
        findings.extend(mixed_types(model, vocabulary)?);
        if let Some(shapes) = &vocabulary.shapes {
            let shapes =
                crate::shapes::Shapes::parse(model, shapes).map_err(|message| VocabularyError {
                    namespace: vocabulary.namespace.clone(),
                    message,
                })?;
            let room = MAX_FINDINGS.saturating_sub(findings.len());
            findings.extend(shapes.validate(model, room));
        }
    }
    findings.truncate(MAX_FINDINGS);
    model.locate(&mut findings);
    // In the order of the model files, as a person fixes them.
    findings.sort_by(|a, b| (a.at.is_none(), &a.at).cmp(&(b.at.is_none(), &b.at)));
    Ok(findings)
}

impl Vocabulary {
    /// Its terms' triples.
    fn quads(&self) -> Result<Vec<Quad>, VocabularyError> {
        RdfParser::from_format(RdfFormat::Turtle)
            .for_slice(self.terms.as_bytes())
            .map(|quad| {
                quad.map_err(|e| VocabularyError {
                    namespace: self.namespace.clone(),
                    message: format!("its terms are not Turtle: {e}"),
                })
            })
            .collect()
    }

    /// The terms it defines, sorted.
    ///
    /// # Errors
    ///
    /// The terms are not Turtle.
    pub fn defined_terms(&self) -> Result<BTreeSet<String>, VocabularyError> {
        let mut defined = BTreeSet::new();
        for quad in self.quads()? {
            if let Subject::NamedNode(s) = quad.subject
                && s.as_str().starts_with(&self.namespace)
            {
                defined.insert(s.into_string());
            }
        }
        if defined.is_empty() {
            return Err(VocabularyError {
                namespace: self.namespace.clone(),
                message: "its terms define nothing in its namespace".to_owned(),
            });
        }
        Ok(defined)
    }
}

/// Checks `model` against `vocabulary`: each term of its namespace the
/// model uses and the vocabulary does not define, sorted by IRI.
///
/// # Errors
///
/// The vocabulary cannot be read.
pub(crate) fn unknown_terms(
    model: &Model,
    vocabulary: &Vocabulary,
) -> Result<Vec<Finding>, VocabularyError> {
    let defined = vocabulary.defined_terms()?;
    let used = model.iris_in(&vocabulary.namespace);
    Ok(used
        .iter()
        .filter(|iri| !defined.contains(iri.as_str()))
        .map(|iri| {
            let shown = model.compact(iri);
            let message = match closest(iri, &defined) {
                Some(near) => format!(
                    "unknown term {shown} of the vocabulary <{}>; did you mean {}?",
                    vocabulary.namespace,
                    model.compact(near)
                ),
                None => format!(
                    "unknown term {shown} of the vocabulary <{}>",
                    vocabulary.namespace
                ),
            };
            Finding {
                term: iri.clone(),
                message,
                at: None,
            }
        })
        .collect())
}

const OWL: &str = "http://www.w3.org/2002/07/owl#";

impl Vocabulary {
    /// The groups of classes it declares disjoint: each
    /// `owl:AllDisjointClasses`' `owl:members` list, and each
    /// `owl:disjointWith` pair.
    ///
    /// # Errors
    ///
    /// The terms are not Turtle, or a members list is not an RDF list.
    pub(crate) fn disjoint_classes(&self) -> Result<Vec<Vec<String>>, VocabularyError> {
        let error = |message: String| VocabularyError {
            namespace: self.namespace.clone(),
            message,
        };
        let triples: Vec<(Subject, String, Term)> = self
            .quads()?
            .into_iter()
            .map(|quad| (quad.subject, quad.predicate.into_string(), quad.object))
            .collect();
        let object = |subject: &Subject, predicate: &str| -> Option<&Term> {
            triples
                .iter()
                .find(|(s, p, _)| s == subject && p == predicate)
                .map(|(_, _, o)| o)
        };
        let (rdf_first, rdf_rest) = (
            oxigraph::model::vocab::rdf::FIRST.as_str(),
            oxigraph::model::vocab::rdf::REST.as_str(),
        );
        let mut groups = Vec::new();
        for (subject, predicate, object_term) in &triples {
            if predicate == &format!("{OWL}disjointWith")
                && let (Subject::NamedNode(a), Term::NamedNode(b)) = (subject, object_term)
            {
                groups.push(vec![a.as_str().to_owned(), b.as_str().to_owned()]);
            }
            if predicate == &format!("{OWL}members") {
                let mut members = Vec::new();
                let mut node = object_term.clone();
                // A list is at most as long as the triples that make it.
                for _ in 0..=triples.len() {
                    let head = match &node {
                        Term::NamedNode(n) if n.as_ref() == oxigraph::model::vocab::rdf::NIL => {
                            break;
                        }
                        Term::BlankNode(b) => Subject::BlankNode(b.clone()),
                        _ => return Err(error("owl:members must be an RDF list".into())),
                    };
                    match (object(&head, rdf_first), object(&head, rdf_rest)) {
                        (Some(Term::NamedNode(class)), Some(rest)) => {
                            members.push(class.as_str().to_owned());
                            node = rest.clone();
                        }
                        _ => {
                            return Err(error("owl:members must be an RDF list of classes".into()));
                        }
                    }
                }
                groups.push(members);
            }
        }
        Ok(groups)
    }
}

/// The elements of `model` of two classes that `vocabulary` declares
/// disjoint (a page that is also the application's database): one
/// finding each, naming both classes.
///
/// # Errors
///
/// The vocabulary cannot be read.
pub(crate) fn mixed_types(
    model: &Model,
    vocabulary: &Vocabulary,
) -> Result<Vec<Finding>, VocabularyError> {
    let groups = vocabulary.disjoint_classes()?;
    if groups.is_empty() {
        return Ok(Vec::new());
    }
    let mut types: std::collections::BTreeMap<String, Vec<String>> = Default::default();
    for quad in model
        .store()
        .quads_for_pattern(None, Some(oxigraph::model::vocab::rdf::TYPE), None, None)
        .flatten()
    {
        if let (Subject::NamedNode(s), Term::NamedNode(class)) = (quad.subject, quad.object) {
            types
                .entry(s.into_string())
                .or_default()
                .push(class.into_string());
        }
    }
    let mut findings = Vec::new();
    for (element, mut classes) in types {
        classes.sort();
        let clash = groups.iter().find_map(|group| {
            let mut within = classes.iter().filter(|c| group.contains(c));
            Some((within.next()?, within.next()?))
        });
        if let Some((a, b)) = clash {
            findings.push(Finding {
                message: format!(
                    "{} is both a {} and a {}, which the vocabulary <{}> declares disjoint: an element is one kind of thing; give the other role to an element of its own",
                    model.compact(&element),
                    model.compact(a),
                    model.compact(b),
                    vocabulary.namespace
                ),
                term: element,
                at: None,
            });
        }
        if findings.len() >= MAX_FINDINGS {
            break;
        }
    }
    Ok(findings)
}

/// The defined term nearest to `iri` by edit distance, when near enough to
/// be a typo of it: the same letters in another case, or at most a third
/// of them changed.
fn closest<'a>(iri: &str, defined: &'a BTreeSet<String>) -> Option<&'a str> {
    let lower = iri.to_lowercase();
    defined
        .iter()
        .map(|d| {
            let distance = strsim::levenshtein(&lower, &d.to_lowercase());
            (distance, d.as_str())
        })
        .filter(|(distance, d)| {
            let local = d.len().min(iri.len());
            *distance <= (local / 3).max(1)
        })
        .min()
        .map(|(_, d)| d)
}

impl Model {
    /// Sets each finding's place: the first line of a model file that
    /// writes its term. Each file is read once, and only when there are
    /// findings.
    fn locate(&self, findings: &mut [Finding]) {
        if findings.is_empty() {
            return;
        }
        for (path, text) in self.source_texts() {
            for finding in findings.iter_mut().filter(|f| f.at.is_none()) {
                if let Some(line) = crate::position::line_of(&text, &finding.term) {
                    finding.at = Some((path.clone(), line));
                }
            }
        }
    }

    /// The IRIs starting with `namespace` that the model uses anywhere,
    /// sorted; computed once per namespace, as every generator reading the
    /// vocabulary asks.
    ///
    /// The cache is only ever tried, never waited for, and not held while
    /// scanning: a run stopped at its budget while holding it (its thread
    /// stops for good where it allocates) must not stall the other
    /// generators' runs, which then scan for themselves.
    pub(crate) fn iris_in(&self, namespace: &str) -> Arc<Vec<String>> {
        if let Ok(cache) = self.namespaces.try_lock()
            && let Some(found) = cache.get(namespace)
        {
            return found.clone();
        }
        let mut watched = Watched::unbounded(namespace);
        for quad in self.store().iter().flatten() {
            watched.add(&quad);
        }
        let found = watched
            .watches
            .pop()
            .map(|watch| watch.found)
            .unwrap_or_default();
        let found = Arc::new(found.into_iter().collect::<Vec<_>>());
        let key = namespace.to_owned();
        if let Ok(mut cache) = self.namespaces.try_lock() {
            cache.insert(key, found.clone());
        }
        found
    }
}

/// The IRIs of some namespaces, gathered quad by quad: as a model is read
/// ([`Model::from_files_watching`]: a quad read is a quad seen, and a
/// prefix compared costs next to nothing beside it), or from its store
/// ([`Model::iris_in`], which decodes every quad again: 0.7 us a triple).
#[derive(Debug)]
pub(crate) struct Watched {
    watches: Vec<Watch>,
    /// The most bytes of IRIs gathered for one namespace.
    limit: usize,
}

#[derive(Debug)]
struct Watch {
    namespace: String,
    found: BTreeSet<String>,
    bytes: usize,
    /// Past the limit: no longer watched.
    dropped: bool,
}

/// The most namespaces watched as a model is read, and the most bytes of
/// IRIs gathered for one of them. A namespace past that is dropped: the
/// model check scans the store for it, in the generator's budget. The
/// namespaces come from generators, and a vocabulary whose namespace
/// covers much of the model must not make the host hold the model's IRIs
/// again, outside any budget, on a generator's behalf.
const MAX_WATCHED: usize = 16;
const MAX_WATCHED_BYTES: usize = 1 << 20;

impl Watched {
    /// Watches each of `namespaces` (once, however often named), the
    /// first [`MAX_WATCHED`] only, each up to [`MAX_WATCHED_BYTES`].
    pub(crate) fn new(namespaces: &[String]) -> Watched {
        let mut watched = Watched {
            watches: Vec::new(),
            limit: MAX_WATCHED_BYTES,
        };
        for namespace in namespaces {
            if watched.watches.len() < MAX_WATCHED
                && !watched.watches.iter().any(|w| &w.namespace == namespace)
            {
                watched.watches.push(Watch {
                    namespace: namespace.clone(),
                    found: BTreeSet::new(),
                    bytes: 0,
                    dropped: false,
                });
            }
        }
        watched
    }

    /// Watches `namespace` whatever it gathers: for a scan in a
    /// generator's budget.
    fn unbounded(namespace: &str) -> Watched {
        let mut watched = Watched::new(&[namespace.to_owned()]);
        watched.limit = usize::MAX;
        watched
    }

    /// Notes the IRIs of `quad` in the watched namespaces.
    pub(crate) fn add(&mut self, quad: &Quad) {
        if self.watches.is_empty() {
            return;
        }
        let limit = self.limit;
        let mut note = |iri: &str| {
            for watch in &mut self.watches {
                if !watch.dropped
                    && iri.starts_with(watch.namespace.as_str())
                    && !watch.found.contains(iri)
                {
                    watch.bytes = watch.bytes.saturating_add(iri.len());
                    if watch.bytes > limit {
                        watch.dropped = true;
                        watch.found = BTreeSet::new();
                    } else {
                        watch.found.insert(iri.to_owned());
                    }
                }
            }
        };
        if let Subject::NamedNode(s) = &quad.subject {
            note(s.as_str());
        }
        note(quad.predicate.as_str());
        if let Term::NamedNode(o) = &quad.object {
            note(o.as_str());
        }
        if let GraphName::NamedNode(g) = &quad.graph_name {
            note(g.as_str());
        }
    }

    /// What [`Model::iris_in`] answers for each namespace watched to the
    /// end.
    pub(crate) fn into_found(self) -> HashMap<String, Arc<Vec<String>>> {
        self.watches
            .into_iter()
            .filter(|w| !w.dropped)
            .map(|w| (w.namespace, Arc::new(w.found.into_iter().collect())))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TERMS: &str = "@prefix ui: <urn:ui#> .\n\
                         ui: a <urn:Ontology> .\n\
                         ui:Page a <urn:Class> .\n\
                         ui:shows a <urn:Property> .\n\
                         ui:order a <urn:Property> .\n";

    fn vocabulary(terms: &str) -> Vocabulary {
        Vocabulary {
            namespace: "urn:ui#".to_owned(),
            terms: terms.to_owned(),
            shapes: None,
        }
    }

    #[test]
    fn each_unknown_term_is_found_once_with_the_closest_defined_one() {
        let model = Model::parse(
            "m.ttl",
            "@prefix ui: <urn:ui#> .\n\
             <urn:a> a ui:Pag ; ui:show <urn:b> ; ui:order 1 .\n\
             <urn:b> a ui:Page ; ui:Zebra ui:PAGE .\n\
             <urn:c> ui:show <urn:a> .\n\
             <urn:ui#> <urn:p> <urn:q> .\n",
        )
        .unwrap();
        let findings = unknown_terms(&model, &vocabulary(TERMS)).unwrap();
        let messages: Vec<(&str, &str)> = findings
            .iter()
            .map(|f| (f.term.as_str(), f.message.as_str()))
            .collect();
        assert_eq!(
            messages,
            [
                (
                    "urn:ui#PAGE",
                    "unknown term ui:PAGE of the vocabulary <urn:ui#>; did you mean ui:Page?"
                ),
                (
                    "urn:ui#Pag",
                    "unknown term ui:Pag of the vocabulary <urn:ui#>; did you mean ui:Page?"
                ),
                (
                    "urn:ui#Zebra",
                    "unknown term ui:Zebra of the vocabulary <urn:ui#>"
                ),
                (
                    "urn:ui#show",
                    "unknown term ui:show of the vocabulary <urn:ui#>; did you mean ui:shows?"
                ),
            ]
        );
    }

    #[test]
    fn a_check_locates_unknown_terms_and_shape_violations_in_the_model_file() {
        let model = Model::parse(
            "model.ttl",
            "@prefix ui: <urn:ui#> .\n\
             # ui:Pag is a typo below\n\
             <urn:a> a ui:Page .\n\
             <urn:b> a ui:Pag .\n",
        )
        .unwrap();
        let mut with_shapes = vocabulary(TERMS);
        with_shapes.shapes = Some(
            "@prefix sh: <http://www.w3.org/ns/shacl#> .\n\
             <urn:ui#PageShape> sh:targetClass <urn:ui#Page> ;\n\
               sh:property [ sh:path <urn:ui#order> ; sh:minCount 1 ] ."
                .to_owned(),
        );
        let shown: Vec<String> = check(&model, &[with_shapes])
            .unwrap()
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(
            shown,
            [
                "model.ttl:3: <urn:a> breaks the shape ui:PageShape: ui:order needs at least 1 value, has 0",
                "model.ttl:4: unknown term ui:Pag of the vocabulary <urn:ui#>; did you mean ui:Page?",
            ]
        );
    }

    #[test]
    fn a_namespace_watched_past_its_bound_is_left_to_the_scan() {
        // 40,000 IRIs of 50 bytes in one namespace: past its bound.
        let lines: String = (0..40_000)
            .map(|i| {
                format!(
                    "<urn:wide#{i:08}-{}> <urn:p> <urn:narrow#x> .\n",
                    "w".repeat(31)
                )
            })
            .collect();
        let mut namespaces = vec!["urn:wide#".to_owned(), "urn:narrow#".to_owned()];
        namespaces.extend((0..MAX_WATCHED).map(|i| format!("urn:n{i}#")));
        let model = Model::from_files_watching(&[("m.nt", lines.as_bytes())], &namespaces).unwrap();
        let found = model.namespaces.lock().unwrap().clone();
        assert!(!found.contains_key("urn:wide#"));
        assert_eq!(*found["urn:narrow#"], ["urn:narrow#x"]);
        // The first namespaces only, each once.
        assert_eq!(found.len(), MAX_WATCHED - 1);
        assert!(!found.contains_key(&format!("urn:n{}#", MAX_WATCHED - 2)));
        // The scan answers the dropped one whole.
        assert_eq!(model.iris_in("urn:wide#").len(), 40_000);
    }

    #[test]
    fn a_namespace_scan_is_cached_and_never_waits_for_a_held_cache() {
        let model = Model::parse("m.ttl", "<urn:ui#a> <urn:ui#b> <urn:x> .").unwrap();
        let both = vec!["urn:ui#a".to_owned(), "urn:ui#b".to_owned()];
        assert_eq!(*model.iris_in("urn:ui#"), both);
        assert!(model.namespaces.lock().unwrap().contains_key("urn:ui#"));
        // Held by another (as by a run stopped at its budget): scanned
        // again, not waited for.
        let held = model.namespaces.lock().unwrap();
        assert_eq!(*model.iris_in("urn:ui#"), both);
        assert!(model.iris_in("urn:other#").is_empty());
        drop(held);
        assert!(!model.namespaces.lock().unwrap().contains_key("urn:other#"));
    }

    #[test]
    fn a_vocabulary_that_is_not_turtle_or_defines_nothing_is_refused() {
        let model = Model::parse("m.ttl", "<urn:a> <urn:b> <urn:c> .").unwrap();
        let err = unknown_terms(&model, &vocabulary("ui:Page a")).unwrap_err();
        assert!(err.message.starts_with("its terms are not Turtle"), "{err}");
        let err = unknown_terms(&model, &vocabulary("<urn:other#a> a <urn:b> .")).unwrap_err();
        assert_eq!(
            err.to_string(),
            "vocabulary urn:ui#: its terms define nothing in its namespace"
        );
    }

    #[test]
    fn a_namespace_is_an_absolute_iri_ending_in_a_hash_or_slash() {
        for (iri, ok) in [
            ("https://w3id.org/seams/ui#", true),
            ("urn:ui/", true),
            ("https://w3id.org/seams/ui", false),
            ("ui#", false),
            ("", false),
            ("urn:a b#", false),
        ] {
            assert_eq!(is_namespace(iri), ok, "{iri}");
        }
    }

    #[test]
    fn an_element_of_two_disjoint_classes_is_named_with_both() {
        let terms = "@prefix ui: <urn:ui#> .\n\
                     @prefix owl: <http://www.w3.org/2002/07/owl#> .\n\
                     ui:Page a <urn:Class> . ui:Database a <urn:Class> . ui:List a <urn:Class> .\n\
                     ui:Form a <urn:Class> . ui:Field a <urn:Class> .\n\
                     [] a owl:AllDisjointClasses ; owl:members ( ui:Page ui:Database ui:List ) .\n\
                     ui:Form owl:disjointWith ui:Field .\n";
        let vocabulary = Vocabulary {
            namespace: "urn:ui#".into(),
            terms: terms.into(),
            shapes: None,
        };
        assert_eq!(
            vocabulary.disjoint_classes().unwrap(),
            [
                vec![
                    "urn:ui#Page".to_owned(),
                    "urn:ui#Database".into(),
                    "urn:ui#List".into()
                ],
                vec!["urn:ui#Form".to_owned(), "urn:ui#Field".into()]
            ]
        );
        let model = Model::parse(
            "m.ttl",
            "@prefix ui: <urn:ui#> .\n@prefix ex: <urn:ex#> .\n\
             ex:home a ui:Page, ui:Database .\n\
             ex:f a ui:Form, ui:Field .\n\
             ex:ok a ui:Page, <urn:other#Thing> .\n",
        )
        .unwrap();
        let found: Vec<String> = mixed_types(&model, &vocabulary)
            .unwrap()
            .iter()
            .map(|f| f.message.clone())
            .collect();
        assert_eq!(found.len(), 2, "{found:?}");
        assert!(found[1].starts_with("ex:home is both a ui:Database and a ui:Page, which the vocabulary <urn:ui#> declares disjoint"), "{found:?}");
        assert!(
            found[0].starts_with("ex:f is both a ui:Field and a ui:Form"),
            "{found:?}"
        );
        let broken = Vocabulary {
            terms: "@prefix owl: <http://www.w3.org/2002/07/owl#> .\n[] owl:members 3 .\n".into(),
            ..vocabulary
        };
        assert!(
            broken
                .disjoint_classes()
                .unwrap_err()
                .to_string()
                .contains("owl:members must be an RDF list")
        );
    }
}
