//! The SHACL Core subset a vocabulary's shapes may use, checked natively
//! over the model's store: node shapes with `sh:targetClass` and property
//! shapes with an IRI `sh:path` and `sh:class`, `sh:datatype`,
//! `sh:nodeKind`, `sh:minCount`, `sh:maxCount`, `sh:in`, `sh:pattern`
//! (with `sh:flags`). Any other SHACL term in a shape is refused when the
//! shapes are read: a constraint that was ignored would pass a model it
//! was written to refuse.

use std::collections::{HashMap, HashSet};

use oxigraph::io::{RdfFormat, RdfParser};
use oxigraph::model::{
    NamedNode, NamedNodeRef, NamedOrBlankNode as Subject, NamedOrBlankNodeRef, Term, TermRef,
    Triple, vocab::rdf, vocab::rdfs,
};

use crate::Model;
use crate::finding::Finding;

const SH: &str = "http://www.w3.org/ns/shacl#";

/// The SHACL terms a shape may use, as the README lists them.
pub const SUPPORTED: &[&str] = &[
    "targetClass",
    "property",
    "path",
    "class",
    "datatype",
    "nodeKind",
    "minCount",
    "maxCount",
    "in",
    "pattern",
    "flags",
    "message",
    "name",
    "description",
    "order",
    "NodeShape",
    "PropertyShape",
];

/// The node kinds `sh:nodeKind` names.
const NODE_KINDS: &[&str] = &[
    "IRI",
    "BlankNode",
    "Literal",
    "BlankNodeOrIRI",
    "BlankNodeOrLiteral",
    "IRIOrLiteral",
];

/// The longest `sh:pattern`'s compiled form, so that a shape cannot hand
/// the host an unbounded automaton.
const PATTERN_SIZE_LIMIT: usize = 1 << 20;

/// Shapes read and checked, ready to validate a model.
#[derive(Debug)]
pub(crate) struct Shapes {
    nodes: Vec<NodeShape>,
}

#[derive(Debug)]
struct NodeShape {
    name: String,
    targets: Vec<NamedNode>,
    properties: Vec<PropertyShape>,
}

#[derive(Debug)]
struct PropertyShape {
    path: NamedNode,
    message: Option<String>,
    constraints: Vec<Constraint>,
}

#[derive(Debug)]
enum Constraint {
    Class(NamedNode),
    Datatype(NamedNode),
    NodeKind(String),
    MinCount(usize),
    MaxCount(usize),
    In(Vec<Term>),
    Pattern(regex::Regex, String),
}

fn sh(local: &str) -> NamedNode {
    NamedNode::new_unchecked(format!("{SH}{local}"))
}

/// The shape's own name in messages: its IRI, or the property path it
/// constrains.
fn shown(model: &Model, node: NamedOrBlankNodeRef<'_>) -> String {
    match node {
        NamedOrBlankNodeRef::NamedNode(n) => model.compact(n.as_str()),
        NamedOrBlankNodeRef::BlankNode(_) => "a blank node".to_owned(),
    }
}

impl Shapes {
    /// Reads shapes from Turtle, refusing what the subset does not cover.
    pub(crate) fn parse(model: &Model, text: &str) -> Result<Shapes, String> {
        let graph = Triples::parse(text)?;
        let target_class = sh("targetClass");
        let mut shapes: Vec<NamedOrBlankNodeRef<'_>> = graph
            .iter()
            .filter(|t| t.predicate == target_class)
            .map(|t| t.subject.as_ref())
            .collect();
        shapes.sort_by_cached_key(ToString::to_string);
        shapes.dedup();
        let mut nodes = Vec::new();
        for shape in shapes {
            let name = shown(model, shape);
            let targets = graph
                .objects(shape, target_class.as_ref())
                .map(|t| match t {
                    TermRef::NamedNode(n) => Ok(n.into_owned()),
                    _ => Err(format!("shape {name}: sh:targetClass must be an IRI")),
                })
                .collect::<Result<Vec<_>, _>>()?;
            let mut properties = Vec::new();
            for property in graph.objects(shape, sh("property").as_ref()) {
                let property = match property {
                    TermRef::NamedNode(n) => NamedOrBlankNodeRef::from(n),
                    TermRef::BlankNode(b) => NamedOrBlankNodeRef::from(b),
                    _ => return Err(format!("shape {name}: sh:property must be a node")),
                };
                properties.push(property_shape(&graph, &name, property)?);
            }
            // Blank property shapes come in no stable order: by path.
            properties.sort_by_cached_key(|p| (p.path.as_str().to_owned(), format!("{p:?}")));
            for (predicate, local) in [(sh("class"), "class"), (sh("datatype"), "datatype")] {
                if graph.objects(shape, predicate.as_ref()).next().is_some() {
                    return Err(format!(
                        "shape {name}: sh:{local} on a node shape is not supported; put it in an sh:property"
                    ));
                }
            }
            nodes.push(NodeShape {
                name,
                targets,
                properties,
            });
        }
        Ok(Shapes { nodes })
    }

    /// What in `model` breaks the shapes, focus by focus.
    pub(crate) fn validate(&self, model: &Model, limit: usize) -> Vec<Finding> {
        let mut classes = ClassIndex::new(model);
        let mut findings = Vec::new();
        for node in &self.nodes {
            let mut focus: Vec<Subject> = Vec::new();
            for target in &node.targets {
                focus.extend(classes.instances(target.as_ref()).iter().cloned());
            }
            // A key per node, not per comparison.
            focus.sort_by_cached_key(ToString::to_string);
            focus.dedup();
            for f in &focus {
                for property in &node.properties {
                    if findings.len() >= limit {
                        return findings;
                    }
                    let values = values_of(model, f.as_ref(), property.path.as_ref());
                    for problem in property.problems(&values, &mut classes) {
                        let about = match f {
                            Subject::NamedNode(n) => n.as_str().to_owned(),
                            Subject::BlankNode(b) => format!("_:{}", b.as_str()),
                        };
                        // The shape's own message says what to do; the
                        // reason says what was found.
                        let reason = format!("{} {problem}", model.compact(property.path.as_str()));
                        let message = format!(
                            "{} breaks the shape {}: {}",
                            model.compact(&about),
                            node.name,
                            match &property.message {
                                Some(said) => format!("{said} ({reason})"),
                                None => reason,
                            }
                        );
                        findings.push(Finding {
                            term: about,
                            message,
                            at: None,
                        });
                    }
                }
            }
        }
        findings
    }
}

fn iri_of(term: TermRef<'_>) -> Option<&str> {
    match term {
        TermRef::NamedNode(n) => Some(n.as_str()),
        _ => None,
    }
}

/// The shapes' triples, each once, sorted by their N-Triples line: all
/// that reading the shapes looks up. (An `oxrdf::Graph` interns every term
/// and indexes the triples three ways, which cost as much as parsing the
/// Turtle, for a graph read once.)
struct Triples(Vec<(String, Triple)>);

impl Triples {
    /// Reads Turtle, refusing any SHACL term outside the subset: the first
    /// one written.
    fn parse(text: &str) -> Result<Triples, String> {
        let mut triples = Vec::new();
        for quad in RdfParser::from_format(RdfFormat::Turtle).for_slice(text.as_bytes()) {
            let triple = Triple::from(quad.map_err(|e| format!("its shapes are not Turtle: {e}"))?);
            let terms = [
                Some(triple.predicate.as_str()),
                iri_of(triple.object.as_ref()),
            ];
            for iri in terms.into_iter().flatten() {
                if let Some(local) = iri.strip_prefix(SH)
                    && !SUPPORTED.contains(&local)
                    && !NODE_KINDS.contains(&local)
                {
                    return Err(format!(
                        "its shapes use sh:{local}, which seams does not support; the supported SHACL terms are sh:{}",
                        SUPPORTED.join(", sh:")
                    ));
                }
            }
            triples.push((triple.to_string(), triple));
        }
        // The lines of one subject and predicate start alike, so they
        // sort together.
        triples.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        triples.dedup_by(|a, b| a.0 == b.0);
        Ok(Triples(triples))
    }

    fn iter(&self) -> impl Iterator<Item = &Triple> {
        self.0.iter().map(|(_, triple)| triple)
    }

    /// The objects of `subject`'s `predicate`, in the order of their lines.
    fn objects<'a>(
        &'a self,
        subject: NamedOrBlankNodeRef<'_>,
        predicate: NamedNodeRef<'_>,
    ) -> impl Iterator<Item = TermRef<'a>> + use<'a> {
        let start = format!("{subject} {predicate} ");
        let from = self
            .0
            .partition_point(|(line, _)| line.as_str() < start.as_str());
        self.0[from..]
            .iter()
            .take_while(move |(line, _)| line.starts_with(start.as_str()))
            .map(|(_, triple)| triple.object.as_ref())
    }
}

/// The one value of `predicate`, if any; two are refused.
fn single<'a>(
    graph: &'a Triples,
    shape: &str,
    subject: NamedOrBlankNodeRef<'_>,
    local: &str,
) -> Result<Option<TermRef<'a>>, String> {
    let predicate = sh(local);
    let mut values = graph.objects(subject, predicate.as_ref());
    let first = values.next();
    if values.next().is_some() {
        return Err(format!("shape {shape}: sh:{local} is given twice"));
    }
    Ok(first)
}

fn count(term: TermRef<'_>, shape: &str, local: &str) -> Result<usize, String> {
    match term {
        TermRef::Literal(l) => l.value().parse().ok(),
        _ => None,
    }
    .ok_or_else(|| format!("shape {shape}: sh:{local} must be a non-negative integer"))
}

fn property_shape(
    graph: &Triples,
    shape: &str,
    node: NamedOrBlankNodeRef<'_>,
) -> Result<PropertyShape, String> {
    let iri = |local: &str| -> Result<Option<NamedNode>, String> {
        match single(graph, shape, node, local)? {
            None => Ok(None),
            Some(TermRef::NamedNode(n)) => Ok(Some(n.into_owned())),
            Some(_) => Err(format!("shape {shape}: sh:{local} must be an IRI")),
        }
    };
    let path = iri("path")?.ok_or_else(|| {
        format!("shape {shape}: a property shape needs an sh:path (an IRI: other paths are not supported)")
    })?;
    let mut constraints = Vec::new();
    if let Some(class) = iri("class")? {
        constraints.push(Constraint::Class(class));
    }
    if let Some(datatype) = iri("datatype")? {
        constraints.push(Constraint::Datatype(datatype));
    }
    if let Some(kind) = iri("nodeKind")? {
        let local = kind.as_str().strip_prefix(SH).unwrap_or_default();
        if !NODE_KINDS.contains(&local) {
            return Err(format!(
                "shape {shape}: sh:nodeKind {kind} is not a node kind"
            ));
        }
        constraints.push(Constraint::NodeKind(local.to_owned()));
    }
    if let Some(n) = single(graph, shape, node, "minCount")? {
        constraints.push(Constraint::MinCount(count(n, shape, "minCount")?));
    }
    if let Some(n) = single(graph, shape, node, "maxCount")? {
        constraints.push(Constraint::MaxCount(count(n, shape, "maxCount")?));
    }
    if let Some(list) = single(graph, shape, node, "in")? {
        constraints.push(Constraint::In(rdf_list(graph, shape, list)?));
    }
    if let Some(pattern) = single(graph, shape, node, "pattern")? {
        let TermRef::Literal(pattern) = pattern else {
            return Err(format!("shape {shape}: sh:pattern must be a string"));
        };
        let flags = match single(graph, shape, node, "flags")? {
            Some(TermRef::Literal(f)) => f.value().to_owned(),
            Some(_) => return Err(format!("shape {shape}: sh:flags must be a string")),
            None => String::new(),
        };
        let mut builder = regex::RegexBuilder::new(pattern.value());
        builder.size_limit(PATTERN_SIZE_LIMIT);
        for flag in flags.chars() {
            match flag {
                'i' => builder.case_insensitive(true),
                'm' => builder.multi_line(true),
                's' => builder.dot_matches_new_line(true),
                'x' => builder.ignore_whitespace(true),
                _ => {
                    return Err(format!(
                        "shape {shape}: sh:flags {flags:?} has {flag:?}; seams supports i, m, s and x"
                    ));
                }
            };
        }
        let regex = builder.build().map_err(|e| {
            format!(
                "shape {shape}: sh:pattern {:?} is refused: {e}",
                pattern.value()
            )
        })?;
        constraints.push(Constraint::Pattern(regex, pattern.value().to_owned()));
    }
    let message = match single(graph, shape, node, "message")? {
        Some(TermRef::Literal(m)) => Some(m.value().to_owned()),
        Some(_) => return Err(format!("shape {shape}: sh:message must be a string")),
        None => None,
    };
    Ok(PropertyShape {
        path,
        message,
        constraints,
    })
}

/// The members of an RDF list, bounded by the graph (a cycle is refused).
fn rdf_list(graph: &Triples, shape: &str, head: TermRef<'_>) -> Result<Vec<Term>, String> {
    let mut members = Vec::new();
    let mut seen = HashSet::new();
    let mut at = head;
    loop {
        let node = match at {
            TermRef::NamedNode(n) if n == rdf::NIL => return Ok(members),
            TermRef::NamedNode(n) => NamedOrBlankNodeRef::from(n),
            TermRef::BlankNode(b) => NamedOrBlankNodeRef::from(b),
            _ => return Err(format!("shape {shape}: sh:in must be an RDF list")),
        };
        if !seen.insert(node.into_owned()) {
            return Err(format!("shape {shape}: sh:in is a list with a cycle"));
        }
        let first = graph.objects(node, rdf::FIRST).next();
        let rest = graph.objects(node, rdf::REST).next();
        let (Some(first), Some(rest)) = (first, rest) else {
            return Err(format!("shape {shape}: sh:in must be an RDF list"));
        };
        members.push(first.into_owned());
        at = rest;
    }
}

/// The distinct values of `path` on `focus`, in every graph.
fn values_of(model: &Model, focus: NamedOrBlankNodeRef<'_>, path: NamedNodeRef<'_>) -> Vec<Term> {
    let mut values: Vec<Term> = model
        .store()
        .quads_for_pattern(Some(focus), Some(path), None, None)
        .flatten()
        .map(|q| q.object)
        .collect();
    values.sort_by_cached_key(ToString::to_string);
    values.dedup();
    values
}

impl PropertyShape {
    /// Why `values` break this shape, one reason per constraint and value.
    fn problems(&self, values: &[Term], classes: &mut ClassIndex<'_>) -> Vec<String> {
        let mut problems = Vec::new();
        for constraint in &self.constraints {
            match constraint {
                Constraint::MinCount(n) if values.len() < *n => problems.push(format!(
                    "needs at least {n} value{}, has {}",
                    if *n == 1 { "" } else { "s" },
                    values.len()
                )),
                Constraint::MaxCount(n) if values.len() > *n => problems.push(format!(
                    "may have at most {n} value{}, has {}",
                    if *n == 1 { "" } else { "s" },
                    values.len()
                )),
                Constraint::MinCount(_) | Constraint::MaxCount(_) => {}
                _ => {
                    for value in values {
                        if let Some(why) = constraint.refuses(value, classes) {
                            problems.push(why);
                        }
                    }
                }
            }
        }
        problems
    }
}

impl Constraint {
    /// Why `value` breaks the constraint, if it does.
    fn refuses(&self, value: &Term, classes: &mut ClassIndex<'_>) -> Option<String> {
        let ok = match self {
            Constraint::Class(class) => match value {
                Term::NamedNode(n) => classes.is_instance(class.as_ref(), n.as_ref().into()),
                Term::BlankNode(b) => classes.is_instance(class.as_ref(), b.as_ref().into()),
                Term::Literal(_) => false,
            },
            Constraint::Datatype(datatype) => {
                matches!(value, Term::Literal(l) if l.datatype() == datatype.as_ref())
            }
            Constraint::NodeKind(kind) => {
                let is = match value {
                    Term::NamedNode(_) => "IRI",
                    Term::BlankNode(_) => "BlankNode",
                    Term::Literal(_) => "Literal",
                };
                kind.contains(is)
            }
            Constraint::In(members) => members.contains(value),
            Constraint::Pattern(regex, _) => match value {
                Term::NamedNode(n) => regex.is_match(n.as_str()),
                Term::Literal(l) => regex.is_match(l.value()),
                Term::BlankNode(_) => false,
            },
            Constraint::MinCount(_) | Constraint::MaxCount(_) => true,
        };
        if ok {
            return None;
        }
        let model = classes.model;
        let value = show_term(model, value);
        Some(match self {
            Constraint::Class(class) => {
                format!("value {value} is not a {}", model.compact(class.as_str()))
            }
            Constraint::Datatype(datatype) => format!(
                "value {value} is not a literal of {}",
                model.compact(datatype.as_str())
            ),
            Constraint::NodeKind(kind) => format!("value {value} is not of kind sh:{kind}"),
            Constraint::In(members) => format!(
                "value {value} is not one of {}",
                members
                    .iter()
                    .map(|m| show_term(model, m))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            Constraint::Pattern(_, pattern) => {
                format!("value {value} does not match {pattern:?}")
            }
            Constraint::MinCount(_) | Constraint::MaxCount(_) => unreachable!("counted above"),
        })
    }
}

/// A value as a message shows it: an IRI as the model writes it, a
/// literal quoted and escaped, with its datatype unless it is a string.
fn show_term(model: &Model, term: &Term) -> String {
    match term {
        Term::NamedNode(n) => model.compact(n.as_str()),
        Term::BlankNode(_) => "a blank node".to_owned(),
        Term::Literal(l) => {
            let text = crate::input_text::echo(l.value());
            match l.language() {
                Some(language) => format!("{text}@{language}"),
                None if l.datatype() == oxigraph::model::vocab::xsd::STRING => text,
                None => format!("{text}^^{}", model.compact(l.datatype().as_str())),
            }
        }
    }
}

/// The instances of each class asked for, through `rdfs:subClassOf`.
struct ClassIndex<'a> {
    model: &'a Model,
    instances: HashMap<NamedNode, HashSet<Subject>>,
}

impl<'a> ClassIndex<'a> {
    fn new(model: &'a Model) -> Self {
        ClassIndex {
            model,
            instances: HashMap::new(),
        }
    }

    fn instances(&mut self, class: NamedNodeRef<'_>) -> &HashSet<Subject> {
        let store = self.model.store();
        self.instances.entry(class.into_owned()).or_insert_with(|| {
            // The class and its subclasses, however deep (a cycle ends).
            let mut classes: Vec<Subject> = vec![class.into_owned().into()];
            let mut seen: HashSet<Subject> = classes.iter().cloned().collect();
            let mut i = 0;
            while i < classes.len() {
                let Subject::NamedNode(c) = &classes[i] else {
                    i += 1;
                    continue;
                };
                let subs: Vec<Subject> = store
                    .quads_for_pattern(
                        None,
                        Some(rdfs::SUB_CLASS_OF),
                        Some(c.as_ref().into()),
                        None,
                    )
                    .flatten()
                    .map(|q| q.subject)
                    .collect();
                for sub in subs {
                    if seen.insert(sub.clone()) {
                        classes.push(sub);
                    }
                }
                i += 1;
            }
            let mut found = HashSet::new();
            for c in &classes {
                let object: Term = c.clone().into();
                for q in store
                    .quads_for_pattern(None, Some(rdf::TYPE), Some(object.as_ref()), None)
                    .flatten()
                {
                    found.insert(q.subject);
                }
            }
            found
        })
    }

    fn is_instance(&mut self, class: NamedNodeRef<'_>, node: NamedOrBlankNodeRef<'_>) -> bool {
        self.instances(class).contains(&node.into_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SHAPES: &str = "@prefix sh: <http://www.w3.org/ns/shacl#> .\n\
        @prefix ui: <urn:ui#> .\n\
        @prefix xsd: <http://www.w3.org/2001/XMLSchema#> .\n\
        ui:PageShape a sh:NodeShape ; sh:targetClass ui:Page ;\n\
          sh:property [ sh:path ui:path ; sh:minCount 1 ; sh:maxCount 1 ;\n\
                        sh:datatype xsd:string ; sh:pattern \"^/[a-z]*$\" ] ;\n\
          sh:property [ sh:path ui:contains ; sh:class ui:Component ; sh:nodeKind sh:IRI ] ;\n\
          sh:property [ sh:path ui:kind ; sh:in ( ui:Main ui:Detail ) ;\n\
                        sh:message \"a page is ui:Main or ui:Detail\" ] .\n";

    fn model(text: &str) -> Model {
        Model::parse(
            "m.ttl",
            &format!("@prefix ui: <urn:ui#> .\n@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .\n{text}"),
        )
        .unwrap()
    }

    fn findings(model_text: &str) -> Vec<String> {
        let model = model(model_text);
        let shapes = Shapes::parse(&model, SHAPES).unwrap();
        shapes
            .validate(&model, 100)
            .into_iter()
            .map(|f| format!("{} | {}", f.term, f.message))
            .collect()
    }

    #[test]
    fn a_model_that_keeps_to_the_shapes_has_no_findings_through_subclasses() {
        let ok = "ui:List rdfs:subClassOf ui:Component .\n\
                  ui:Home a ui:Page ; ui:path \"/home\" ; ui:contains ui:l ; ui:kind ui:Main .\n\
                  ui:l a ui:List .\n";
        assert_eq!(findings(ok), Vec::<String>::new());
    }

    #[test]
    fn each_constraint_names_the_focus_the_shape_and_the_value() {
        let bad = "ui:Home a ui:Page ; ui:path \"/Home\", \"/x\" ; ui:contains ui:l, \"text\" ; ui:kind ui:Side .\n\
                   ui:l a ui:Thing .\n\
                   ui:Other a ui:Page ; ui:path 3 .\n";
        assert_eq!(
            findings(bad),
            [
                "urn:ui#Home | ui:Home breaks the shape ui:PageShape: ui:contains value \"text\" is not a ui:Component",
                "urn:ui#Home | ui:Home breaks the shape ui:PageShape: ui:contains value ui:l is not a ui:Component",
                "urn:ui#Home | ui:Home breaks the shape ui:PageShape: ui:contains value \"text\" is not of kind sh:IRI",
                "urn:ui#Home | ui:Home breaks the shape ui:PageShape: a page is ui:Main or ui:Detail (ui:kind value ui:Side is not one of ui:Main, ui:Detail)",
                "urn:ui#Home | ui:Home breaks the shape ui:PageShape: ui:path may have at most 1 value, has 2",
                "urn:ui#Home | ui:Home breaks the shape ui:PageShape: ui:path value \"/Home\" does not match \"^/[a-z]*$\"",
                "urn:ui#Other | ui:Other breaks the shape ui:PageShape: ui:path value \"3\"^^<http://www.w3.org/2001/XMLSchema#integer> is not a literal of <http://www.w3.org/2001/XMLSchema#string>",
                "urn:ui#Other | ui:Other breaks the shape ui:PageShape: ui:path value \"3\"^^<http://www.w3.org/2001/XMLSchema#integer> does not match \"^/[a-z]*$\"",
            ]
        );
    }

    #[test]
    fn a_shape_outside_the_subset_is_refused_when_read() {
        let model = model("");
        let prefix = "@prefix sh: <http://www.w3.org/ns/shacl#> .\n@prefix ui: <urn:ui#> .\n";
        let cases = [
            (
                "ui:S sh:targetClass ui:Page ; sh:property [ sh:path ui:p ; sh:uniqueLang true ] .",
                "its shapes use sh:uniqueLang, which seams does not support",
            ),
            (
                "ui:S sh:targetClass ui:Page ; sh:property [ sh:path [ sh:inversePath ui:p ] ] .",
                "its shapes use sh:inversePath",
            ),
            (
                "ui:S sh:targetClass ui:Page ; sh:property [ sh:minCount 1 ] .",
                "shape ui:S: a property shape needs an sh:path",
            ),
            (
                "ui:S sh:targetClass ui:Page ; sh:property [ sh:path ui:p ; sh:pattern \"(\" ] .",
                "shape ui:S: sh:pattern \"(\" is refused",
            ),
            (
                "ui:S sh:targetClass ui:Page ; sh:property [ sh:path ui:p ; sh:pattern \"a\" ; sh:flags \"q\" ] .",
                "sh:flags \"q\" has 'q'",
            ),
            (
                "ui:S sh:targetClass ui:Page ; sh:property [ sh:path ui:p ; sh:maxCount \"many\" ] .",
                "sh:maxCount must be a non-negative integer",
            ),
            (
                "ui:S sh:targetClass ui:Page ; sh:property [ sh:path ui:p ; sh:in ( ui:a ui:b ) ; sh:in ( ui:c ) ] .",
                "sh:in is given twice",
            ),
            (
                "ui:S sh:targetClass ui:Page ; sh:class ui:Page .",
                "on a node shape is not supported",
            ),
            ("ui:S sh:targetClass", "its shapes are not Turtle"),
        ];
        for (shapes, expected) in cases {
            let err = Shapes::parse(&model, &format!("{prefix}{shapes}")).unwrap_err();
            assert!(err.contains(expected), "{shapes}\n{err}");
        }
        // Of two terms outside the subset, the first written is named.
        let two = format!(
            "{prefix}ui:S sh:targetClass ui:Page ; sh:property [ sh:path ui:p ; sh:uniqueLang true ; sh:lessThan ui:q ] ."
        );
        let err = Shapes::parse(&model, &two).unwrap_err();
        assert!(err.contains("sh:uniqueLang"), "{err}");
    }

    #[test]
    fn a_triple_written_twice_counts_once_and_names_are_not_confused() {
        // ui:S's shape is not ui:S2's, nor ui:path's values ui:pathname's,
        // however their lines sort.
        let shapes = "@prefix sh: <http://www.w3.org/ns/shacl#> .\n\
            @prefix ui: <urn:ui#> .\n\
            ui:S sh:targetClass ui:Page ; sh:targetClass ui:Page ;\n\
              sh:property ui:P, ui:P .\n\
            ui:P sh:path ui:path ; sh:path ui:path ; sh:maxCount 1 .\n\
            ui:S2 sh:targetClass ui:Other ; sh:property ui:P2 .\n\
            ui:P2 sh:path ui:pathname ; sh:minCount 1 .\n";
        let model = model(
            "ui:a a ui:Page ; ui:path \"/a\" ; ui:pathname \"x\", \"y\" .\n\
             ui:b a ui:Other .\n",
        );
        let shapes = Shapes::parse(&model, shapes).unwrap();
        let found: Vec<String> = shapes
            .validate(&model, 100)
            .into_iter()
            .map(|f| f.message)
            .collect();
        assert_eq!(
            found,
            ["ui:b breaks the shape ui:S2: ui:pathname needs at least 1 value, has 0"]
        );
    }
}
