//! The probes tried on models nobody chose: random models in the UI
//! vocabulary, built from bytes (a property test's or a fuzzer's), that
//! plant the coincidences real models have (labels equal to names, values
//! inside values, IRIs that spell labels, elements nothing links to,
//! one-of-a-kind elements, orders unlike the IRIs and unlike the text),
//! and small generators for other formats, each a function of the model
//! as a drafted extract and template are. [`check`] runs every probe
//! against each correct generator, which no probe may refuse, and against
//! known-wrong ones, tallying what the gate (the golden test, then the
//! probes) refuses.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use seams_model::Model;

use super::{OutputLines, Snapshot, judge, plan};

/// The choices a model is built from: the bytes in order, zero once they
/// run out.
struct Choices<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Choices<'_> {
    /// A number below `n` (0 when `n` is 0 or 1).
    fn pick(&mut self, n: usize) -> usize {
        let byte = self.bytes.get(self.at).copied().unwrap_or(0);
        self.at += 1;
        if n <= 1 { 0 } else { usize::from(byte) % n }
    }

    fn chance(&mut self) -> bool {
        self.pick(2) == 1
    }

    /// `0..n` in an order of the bytes' choosing.
    fn order(&mut self, n: usize) -> Vec<usize> {
        let mut left: Vec<usize> = (0..n).collect();
        (0..n).map(|_| left.remove(self.pick(left.len()))).collect()
    }
}

const NOUNS: &[&str] = &[
    "Loan", "Book", "Member", "Shelf", "Order", "Ticket", "Report", "Status", "Title", "Author",
    "Amount", "Message", "Thread", "Expense", "Invoice", "Note",
];
const VERBS: &[&str] = &["Request", "Start", "Open", "Record", "Add", "Lend", "Send"];
const STATES: &[&str] = &[
    "open", "closed", "draft", "sent", "approved", "paid", "out", "lost",
];

fn snake(text: &str) -> String {
    text.to_lowercase().replace(' ', "_")
}

/// A random application model, as Turtle.
pub fn random_model(bytes: &[u8]) -> String {
    let mut c = Choices { bytes, at: 0 };
    let mut ttl = String::from(
        "@prefix ui: <https://w3id.org/seams/ui#> .\n\
         @prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .\n\
         @prefix xsd: <http://www.w3.org/2001/XMLSchema#> .\n\
         @prefix ex: <https://example.org/random#> .\n",
    );
    // IRIs numbered against the orders, or spelling the labels.
    let iri = |c: &mut Choices, kind: &str, n: usize, text: &str| -> String {
        match c.pick(3) {
            0 => format!("ex:{kind}{}", 9 - n),
            1 if kind == "e" => format!("ex:{}", snake(text)),
            1 => format!("ex:{kind}_{}", snake(text)),
            _ => format!("ex:{}_{kind}", snake(text)),
        }
    };
    let entity_count = 1 + c.pick(3);
    // (IRI, name, [(attribute IRI, attribute name)]).
    type Entity = (String, String, Vec<(String, String)>);
    let mut entities: Vec<Entity> = Vec::new();
    let mut used = Vec::new();
    for (k, order) in c.order(entity_count).into_iter().enumerate() {
        let mut name = NOUNS[c.pick(NOUNS.len())].to_owned();
        while used.contains(&name) {
            name.push('s');
        }
        used.push(name.clone());
        let label = match c.pick(3) {
            0 => name.clone(),
            1 => format!("{} record", name),
            _ => NOUNS[c.pick(NOUNS.len())].to_owned(),
        };
        let e = iri(&mut c, "e", k, &name);
        let mut attributes = Vec::new();
        let count = 1 + c.pick(3);
        let mut attr_names: Vec<String> = Vec::new();
        for (a, a_order) in c.order(count).into_iter().enumerate() {
            let mut a_name = match c.pick(3) {
                0 => snake(&name),
                1 => snake(NOUNS[c.pick(NOUNS.len())]),
                _ => format!("{}_on", snake(VERBS[c.pick(VERBS.len())])),
            };
            while attr_names.contains(&a_name) {
                a_name.push('x');
            }
            attr_names.push(a_name.clone());
            let a_iri = format!("{e}_a{a}");
            let a_label = if c.chance() {
                a_name.replace('_', " ")
            } else {
                NOUNS[c.pick(NOUNS.len())].to_owned()
            };
            ttl += &format!(
                "{a_iri} a ui:Attribute ; rdfs:label \"{a_label}\" ; ui:name \"{a_name}\" ; ui:datatype xsd:string ; ui:order {} .\n",
                a_order + 1
            );
            if c.pick(3) == 0 {
                let states = 2 + c.pick(2);
                let mut names: Vec<&str> = Vec::new();
                let mut refs = Vec::new();
                for (s, s_order) in c.order(states).into_iter().enumerate() {
                    let mut pick = STATES[c.pick(STATES.len())];
                    while names.contains(&pick) {
                        pick = STATES[(STATES.iter().position(|x| *x == pick).unwrap_or(0) + 1)
                            % STATES.len()];
                    }
                    names.push(pick);
                    let s_iri = format!("{a_iri}_s{s}");
                    let s_label = if c.chance() {
                        let mut l = pick.to_owned();
                        l[..1].make_ascii_uppercase();
                        l
                    } else {
                        format!("{pick} now")
                    };
                    ttl += &format!(
                        "{s_iri} a ui:State ; rdfs:label \"{s_label}\" ; ui:name \"{pick}\" ; ui:order {}{} .\n",
                        s_order + 1,
                        // The first state is where a record starts.
                        if s_order == 0 {
                            " ; ui:initial true"
                        } else {
                            ""
                        }
                    );
                    refs.push(s_iri);
                }
                ttl += &format!("{a_iri} ui:state {} .\n", refs.join(", "));
            }
            attributes.push((a_iri, a_name));
        }
        ttl += &format!(
            "{e} a ui:Entity ; rdfs:label \"{label}\" ; ui:name \"{name}\" ; ui:order {} ; ui:attribute {} .\n",
            order + 1,
            attributes
                .iter()
                .map(|(a, _)| a.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        );
        entities.push((e, name, attributes));
    }
    // A relation to another entity, named like it or not.
    if entities.len() >= 2 && c.chance() {
        let (from, to) = (c.pick(entities.len()), c.pick(entities.len()));
        let target = &entities[to];
        let name = if c.chance() {
            snake(&target.1)
        } else {
            "owner".to_owned()
        };
        ttl += &format!(
            "{}_r a ui:Relation ; rdfs:label \"{}\" ; ui:name \"{name}\" ; ui:relatedEntity {} .\n{} ui:relation {}_r .\n",
            entities[from].0, target.1, target.0, entities[from].0, entities[from].0
        );
    }
    let page_count = 1 + c.pick(3);
    let mut pages = Vec::new();
    let mut page_labels: Vec<String> = Vec::new();
    for (p, p_order) in c.order(page_count).into_iter().enumerate() {
        let mut label = format!("{}s", NOUNS[c.pick(NOUNS.len())]);
        while page_labels.contains(&label) {
            label.insert(0, 'M');
        }
        page_labels.push(label.clone());
        let path = if c.chance() {
            label.to_lowercase()
        } else {
            format!("p{}", p + 1)
        };
        let page = iri(&mut c, "page", p, &label);
        let parts = c.pick(3);
        let mut contains = Vec::new();
        for (i, i_order) in c.order(parts).into_iter().enumerate() {
            let (e, e_name, attributes) = &entities[c.pick(entities.len())];
            let part = format!("{page}_c{i}");
            if c.chance() {
                let verb = VERBS[c.pick(VERBS.len())];
                let form_label = format!("{verb} {}", e_name.to_lowercase());
                let submit = if c.chance() {
                    verb.to_owned()
                } else {
                    "Save".to_owned()
                };
                let fields: Vec<String> = attributes
                    .iter()
                    .enumerate()
                    .map(|(f, (a, a_name))| {
                        let field = format!("{part}_f{f}");
                        ttl += &format!(
                            "{field} a ui:Field ; rdfs:label \"{}\" ; ui:name \"{a_name}\" ; ui:order {} ; ui:binds {a} .\n",
                            a_name.replace('_', " "),
                            f + 1
                        );
                        field
                    })
                    .collect();
                ttl += &format!(
                    "{part} a ui:Form ; rdfs:label \"{form_label}\" ; ui:submitLabel \"{submit}\" ; ui:order {} ; ui:creates {e} ; ui:field {} .\n",
                    i_order + 1,
                    fields.join(", ")
                );
            } else {
                ttl += &format!(
                    "{part} a ui:List ; rdfs:label \"All {}\" ; ui:order {} ; ui:shows {e} .\n",
                    e_name.to_lowercase(),
                    i_order + 1
                );
            }
            contains.push(part);
        }
        ttl += &format!(
            "{page} a ui:Page ; rdfs:label \"{label}\" ; ui:path \"{path}\" ; ui:order {}{} .\n",
            p_order + 1,
            if contains.is_empty() {
                String::new()
            } else {
                format!(" ; ui:contains {}", contains.join(", "))
            }
        );
        pages.push(page);
    }
    ttl += &format!(
        "ex:app a ui:Application ; rdfs:label \"{}\" ; ui:page {} .\n",
        if c.chance() { "Desk" } else { "Library" },
        pages.join(", ")
    );
    ttl
}

/// The rows of a SELECT on `model`, none when it fails.
pub fn select(model: &Model, sparql: &str) -> Vec<BTreeMap<String, String>> {
    model
        .rows(sparql, Instant::now() + Duration::from_secs(30), 1 << 24)
        .unwrap_or_default()
}

/// One output of `lines`, as the probes read a run.
pub fn lines(lines: Vec<(String, Vec<String>)>) -> Snapshot {
    vec![OutputLines {
        path: "out.txt".into(),
        lines,
        written: Vec::new(),
    }]
}

fn line(text: String, terms: &[&String]) -> (String, Vec<String>) {
    (text, terms.iter().map(|t| (*t).clone()).collect())
}

/// What a wrong generator gets wrong, or nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fault {
    /// None: the generator is correct.
    None,
    /// Only the first element of a list.
    FirstOnly,
    /// Elements in the order of their IRIs, not of `ui:order`.
    IriOrder,
    /// A label printed where the reference prints a name.
    LabelForName,
    /// The elements of a list are those of the model it was written
    /// for (these IRIs), their values read from the model run on: a
    /// list copied from the reference.
    CopiedList(Arc<Vec<String>>),
}

impl Fault {
    /// The fault's name, for a report.
    pub fn name(&self) -> &'static str {
        match self {
            Fault::None => "None",
            Fault::FirstOnly => "FirstOnly",
            Fault::IriOrder => "IriOrder",
            Fault::LabelForName => "LabelForName",
            Fault::CopiedList(_) => "CopiedList",
        }
    }

    /// How a list's query picks its elements into `?var`, sorted by
    /// `order`: (what restricts `?var`, the ORDER BY, the LIMIT).
    fn listing(&self, var: &str, order: &str) -> (String, String, &'static str) {
        match self {
            Fault::IriOrder => (String::new(), var.to_owned(), ""),
            Fault::FirstOnly => (String::new(), order.to_owned(), "LIMIT 1"),
            Fault::CopiedList(iris) => (
                format!(
                    "VALUES {var} {{ {} }}",
                    iris.iter()
                        .map(|iri| format!("<{iri}>"))
                        .collect::<Vec<_>>()
                        .join(" ")
                ),
                order.to_owned(),
                "",
            ),
            Fault::None | Fault::LabelForName => (String::new(), order.to_owned(), ""),
        }
    }
}

fn entities(model: &Model, fault: &Fault) -> Vec<BTreeMap<String, String>> {
    let (only, order, limit) = fault.listing("?e", "?o");
    select(
        model,
        &format!(
            "SELECT ?e ?name ?label WHERE {{ {only} ?e a ui:Entity ; ui:name ?name ; rdfs:label ?label ; ui:order ?o }} ORDER BY {order} {limit}"
        ),
    )
}

fn attributes(model: &Model, entity: &str) -> Vec<BTreeMap<String, String>> {
    select(
        model,
        &format!(
            "SELECT ?a ?name ?label WHERE {{ <{entity}> ui:attribute ?a . ?a ui:name ?name ; rdfs:label ?label ; ui:order ?o }} ORDER BY ?o"
        ),
    )
}

fn states(model: &Model, attribute: &str) -> Vec<BTreeMap<String, String>> {
    select(
        model,
        &format!(
            "SELECT ?s ?name WHERE {{ <{attribute}> ui:state ?s . ?s ui:name ?name ; ui:order ?o }} ORDER BY ?o"
        ),
    )
}

/// SQL: a summary comment (how many tables, and which), a table per
/// entity, a column per attribute, a CHECK per status, a reference per
/// relation.
pub fn sql(model: &Model, fault: &Fault) -> Snapshot {
    let all = entities(model, fault);
    let name = |e: &BTreeMap<String, String>| {
        if *fault == Fault::LabelForName {
            snake(&e["label"])
        } else {
            snake(&e["name"])
        }
    };
    let mut out = vec![(
        format!(
            "-- {} tables: {}",
            all.len(),
            all.iter().map(name).collect::<Vec<_>>().join(", ")
        ),
        Vec::new(),
    )];
    for e in &all {
        out.push(line(format!("CREATE TABLE {} (", name(e)), &[&e["e"]]));
        for a in attributes(model, &e["e"]) {
            out.push(line(format!("  {} TEXT,", a["name"]), &[&a["a"]]));
            let states = states(model, &a["a"]);
            if !states.is_empty() {
                let names: Vec<String> =
                    states.iter().map(|s| format!("'{}'", s["name"])).collect();
                let mut terms: Vec<&String> = vec![&a["a"]];
                terms.extend(states.iter().map(|s| &s["s"]));
                out.push(line(
                    format!("  CHECK ({} IN ({})),", a["name"], names.join(", ")),
                    &terms,
                ));
            }
        }
        for r in select(
            model,
            &format!(
                "SELECT ?r ?name ?t ?target WHERE {{ <{}> ui:relation ?r . ?r ui:name ?name ; ui:relatedEntity ?t . ?t ui:name ?target }} ORDER BY ?name",
                e["e"]
            ),
        ) {
            out.push(line(
                format!(
                    "  {}_id INTEGER REFERENCES {}(id),",
                    r["name"],
                    snake(&r["target"])
                ),
                &[&r["r"], &r["t"]],
            ));
        }
        out.push((");".to_owned(), Vec::new()));
    }
    lines(out)
}

fn pascal(text: &str) -> String {
    super::shown::words(text)
        .iter()
        .map(|w| {
            let mut c = w.chars();
            c.next()
                .map(|f| {
                    f.to_uppercase()
                        .chain(c.map(|x| x.to_ascii_lowercase()))
                        .collect()
                })
                .unwrap_or_default()
        })
        .collect::<Vec<String>>()
        .concat()
}

/// TypeScript: an interface per entity, a union type per status.
pub fn typescript(model: &Model, fault: &Fault) -> Snapshot {
    let mut out = Vec::new();
    for e in entities(model, fault) {
        let name = if *fault == Fault::LabelForName {
            pascal(&e["label"])
        } else {
            pascal(&e["name"])
        };
        let attributes = attributes(model, &e["e"]);
        for a in &attributes {
            let states = states(model, &a["a"]);
            if !states.is_empty() {
                let names: Vec<String> = states
                    .iter()
                    .map(|s| format!("\"{}\"", s["name"]))
                    .collect();
                let mut terms: Vec<&String> = vec![&a["a"]];
                terms.extend(states.iter().map(|s| &s["s"]));
                out.push(line(
                    format!(
                        "export type {name}{} = {};",
                        pascal(&a["name"]),
                        names.join(" | ")
                    ),
                    &terms,
                ));
            }
        }
        out.push(line(format!("export interface {name} {{"), &[&e["e"]]));
        for a in &attributes {
            out.push(line(format!("  {}: string;", a["name"]), &[&a["a"]]));
        }
        out.push(("}".to_owned(), Vec::new()));
    }
    lines(out)
}

/// Markdown: a site map, with a count of pages and a placeholder for a
/// page with nothing on it.
pub fn markdown(model: &Model, fault: &Fault) -> Snapshot {
    let (only, order, limit) = fault.listing("?p", "?o");
    let app = select(
        model,
        "SELECT ?a ?label WHERE { ?a a ui:Application ; rdfs:label ?label }",
    );
    let mut out = Vec::new();
    for a in &app {
        out.push(line(format!("# {}", a["label"]), &[&a["a"]]));
    }
    let pages = select(
        model,
        &format!(
            "SELECT ?p ?label ?path WHERE {{ {only} ?app ui:page ?p . ?p rdfs:label ?label ; ui:path ?path ; ui:order ?o }} ORDER BY {order} {limit}"
        ),
    );
    out.push((
        format!(
            "{} page{}",
            pages.len(),
            if pages.len() == 1 { "" } else { "s" }
        ),
        Vec::new(),
    ));
    for p in &pages {
        out.push(line(
            format!("## {} (/{})", p["label"], p["path"]),
            &[&p["p"]],
        ));
        let parts = select(
            model,
            &format!(
                "SELECT ?c ?label ?submit ?e ?name WHERE {{ <{}> ui:contains ?c . ?c rdfs:label ?label ; ui:order ?o . {{ ?c ui:creates ?e }} UNION {{ ?c ui:shows ?e }} ?e ui:name ?name . OPTIONAL {{ ?c ui:submitLabel ?submit }} }} ORDER BY ?o",
                p["p"]
            ),
        );
        if parts.is_empty() {
            out.push(("(nothing here yet)".to_owned(), Vec::new()));
        }
        for c in &parts {
            let text = match c.get("submit") {
                Some(submit) => format!("- form {} [{submit}] makes a {}", c["label"], c["name"]),
                None => format!("- list {} of {}", c["label"], c["name"]),
            };
            out.push(line(text, &[&c["c"], &c["e"]]));
        }
    }
    lines(out)
}

/// JSON: the pages' paths, a comma after all but the last.
pub fn json(model: &Model, fault: &Fault) -> Snapshot {
    let (only, order, limit) = fault.listing("?p", "?o");
    let pages = select(
        model,
        &format!(
            "SELECT ?p ?path WHERE {{ {only} ?a a ui:Application ; ui:page ?p . ?p ui:path ?path ; ui:order ?o }} ORDER BY {order} {limit}"
        ),
    );
    let mut out = vec![("{\"paths\": [".to_owned(), Vec::new())];
    for (i, p) in pages.iter().enumerate() {
        let comma = if i + 1 < pages.len() { "," } else { "" };
        out.push(line(format!("  \"{}\"{comma}", p["path"]), &[&p["p"]]));
    }
    out.push(("]}".to_owned(), Vec::new()));
    lines(out)
}

/// YAML: each form by its IRI's local name, its submit label, what it
/// creates and its fields.
pub fn yaml(model: &Model, fault: &Fault) -> Snapshot {
    let (only, order, limit) = fault.listing("?f", "?po ?o");
    let mut out = vec![("forms:".to_owned(), Vec::new())];
    for f in select(
        model,
        &format!(
            "SELECT ?f ?submit ?e ?name ?label WHERE {{ {only} ?p ui:contains ?f ; ui:order ?po . ?f a ui:Form ; ui:submitLabel ?submit ; ui:order ?o ; ui:creates ?e . ?e ui:name ?name ; rdfs:label ?label }} ORDER BY {order} {limit}"
        ),
    ) {
        out.push(line(
            format!("  - form: {}", super::split_iri(&f["f"]).1),
            &[&f["f"]],
        ));
        out.push(line(format!("    submit: {}", f["submit"]), &[&f["f"]]));
        let made = if *fault == Fault::LabelForName {
            &f["label"]
        } else {
            &f["name"]
        };
        out.push(line(format!("    creates: {made}"), &[&f["f"], &f["e"]]));
        for field in select(
            model,
            &format!(
                "SELECT ?x ?name WHERE {{ <{}> ui:field ?x . ?x ui:name ?name ; ui:order ?o }} ORDER BY ?o",
                f["f"]
            ),
        ) {
            out.push(line(format!("      - {}", field["name"]), &[&field["x"]]));
        }
    }
    lines(out)
}

/// A generator: a function of the model, given its fault.
pub type Generator = fn(&Model, &Fault) -> Snapshot;

/// The reference generators, by format.
pub const GENERATORS: &[(&str, Generator)] = &[
    ("sql", sql),
    ("typescript", typescript),
    ("markdown", markdown),
    ("json", json),
    ("yaml", yaml),
];

/// The first probe `generator` fails on `model`, with why; `None` when
/// it passes every one.
pub fn refusal(model: &Arc<Model>, generator: &dyn Fn(&Arc<Model>) -> Snapshot) -> Option<String> {
    probed(model, generator).1
}

/// How many probes `generator` has on `model`, and the first it fails.
fn probed(
    model: &Arc<Model>,
    generator: &dyn Fn(&Arc<Model>) -> Snapshot,
) -> (usize, Option<String>) {
    let base = generator(model);
    let printed: String = texts(&base).iter().map(|t| format!("{t}\n")).collect();
    let probes = plan(model, &base, &printed);
    let refused = probes.iter().find_map(|probe| {
        let changed = match model.edited(&probe.edits) {
            Ok(changed) => Arc::new(changed),
            Err(e) => return Some(format!("{}: the edit failed: {e}", probe.name)),
        };
        judge(probe, &base, Ok(&generator(&changed))).map(|why| format!("{}: {why}", probe.name))
    });
    (probes.len(), refused)
}

/// What the gate did with one wrong generator on one model.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Caught {
    /// Its output differed from the reference: the golden test refuses.
    pub by_golden: bool,
    /// It printed the reference, and on some probe's changed model its
    /// output differed from the correct generator's: its fault shows.
    pub shows: bool,
    /// It printed the reference, and a probe refused it.
    pub by_probe: bool,
}

/// What [`check`] found on one model.
#[derive(Debug, Default)]
pub struct Tally {
    /// Probes run on correct generators.
    pub probes: usize,
    /// Per (format, fault's name): what the gate did.
    pub wrong: Vec<(&'static str, &'static str, Caught)>,
    /// Per format: what the gate did with a hard-coded copy of its output.
    pub hard_coded: Vec<(&'static str, Caught)>,
}

/// The model `bytes` choose, with the UI vocabulary's lists.
fn model_of(bytes: &[u8]) -> Result<(String, Arc<Model>), String> {
    let turtle = random_model(bytes);
    let model = Model::parse("random.ttl", &turtle)
        .map_err(|e| format!("the random model does not parse: {e}\n{turtle}"))?
        .with_lists(seams_model::ui_shapes::list_properties().clone());
    Ok((turtle, Arc::new(model)))
}

/// Runs every probe on the model `bytes` choose against every correct
/// reference generator: how many probes ran, or the refusal, with the
/// model and the generator. What the fuzz target asks.
pub fn sound(bytes: &[u8]) -> Result<usize, String> {
    let (turtle, model) = model_of(bytes)?;
    sound_on(&turtle, &model)
}

fn sound_on(turtle: &str, model: &Arc<Model>) -> Result<usize, String> {
    let mut probes = 0;
    for &(format, generator) in GENERATORS {
        let (planned, refused) = probed(model, &|m: &Arc<Model>| generator(m, &Fault::None));
        probes += planned;
        if let Some(why) = refused {
            return Err(format!(
                "the correct {format} generator was refused: {why}\non this model:\n{turtle}"
            ));
        }
    }
    Ok(probes)
}

/// [`sound`], then what the gate does with each wrong generator.
pub fn check(bytes: &[u8]) -> Result<Tally, String> {
    let (turtle, model) = model_of(bytes)?;
    let probes = sound_on(&turtle, &model)?;
    let mut tally = Tally {
        probes,
        ..Tally::default()
    };
    // Every element of the model: a list of them copied into a program.
    let copied: Arc<Vec<String>> = Arc::new(
        select(&model, "SELECT DISTINCT ?e WHERE { ?e a ?type }")
            .into_iter()
            .filter_map(|row| row.get("e").cloned())
            .collect(),
    );
    for &(format, generator) in GENERATORS {
        let correct = |m: &Arc<Model>| generator(m, &Fault::None);
        let reference = correct(&model);
        let printed: String = texts(&reference).iter().map(|t| format!("{t}\n")).collect();
        let changed: Vec<Arc<Model>> = plan(&model, &reference, &printed)
            .iter()
            .filter_map(|probe| model.edited(&probe.edits).ok().map(Arc::new))
            .collect();
        let caught = |wrong: &dyn Fn(&Arc<Model>) -> Snapshot| {
            let by_golden = texts(&wrong(&model)) != texts(&reference);
            let shows = !by_golden
                && changed
                    .iter()
                    .any(|m| texts(&wrong(m)) != texts(&correct(m)));
            Caught {
                by_golden,
                shows,
                by_probe: !by_golden && refusal(&model, wrong).is_some(),
            }
        };
        for fault in [
            Fault::FirstOnly,
            Fault::IriOrder,
            Fault::LabelForName,
            Fault::CopiedList(copied.clone()),
        ] {
            let c = caught(&|m: &Arc<Model>| generator(m, &fault));
            tally.wrong.push((format, fault.name(), c));
        }
        let copy = reference.clone();
        tally
            .hard_coded
            .push((format, caught(&move |_: &Arc<Model>| copy.clone())));
    }
    Ok(tally)
}

/// `count` bytes from a splitmix64 stream at `state`.
pub fn random_bytes(state: &mut u64, count: usize) -> Vec<u8> {
    (0..count)
        .map(|_| {
            *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = *state;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            (z ^ (z >> 31)) as u8
        })
        .collect()
}

/// What [`component_on_random_models`] found.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct ComponentTally {
    /// Models the component read (the others it refused).
    pub runs: usize,
    /// Probes run.
    pub probes: usize,
    /// Probes whose changed model the component refused: they test
    /// nothing.
    pub refused_models: usize,
}

/// Runs every probe on `count` random models (from the stream at `seed`)
/// against a component known to be correct: what it found, or the first
/// refusal, with the model.
pub fn component_on_random_models(
    runtime: &seams_runtime::Runtime,
    generator: &seams_runtime::LoadedGenerator,
    count: usize,
    seed: u64,
) -> Result<ComponentTally, String> {
    let limits = seams_runtime::Limits::default();
    let mut state = seed;
    let mut tally = ComponentTally::default();
    for i in 0..count {
        let bytes = random_bytes(&mut state, 96);
        let (turtle, model) = model_of(&bytes)?;
        let Ok(base) = runtime.run_reporting(generator, &model, &limits) else {
            continue;
        };
        tally.runs += 1;
        for outcome in super::run(runtime, generator, &model, &limits, &base) {
            tally.probes += 1;
            if let Some(why) = &outcome.failure {
                return Err(format!(
                    "model {i}: {}: {why}\non this model:\n{turtle}",
                    outcome.name
                ));
            }
            tally.refused_models += usize::from(
                outcome
                    .changes
                    .first()
                    .is_some_and(|c| c.starts_with("the generator refused")),
            );
        }
    }
    Ok(tally)
}

fn texts(snapshot: &Snapshot) -> Vec<&str> {
    snapshot
        .iter()
        .flat_map(|o| o.lines.iter().map(|(t, _)| t.as_str()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_probe_refuses_a_correct_generator_on_random_models_and_each_fault_is_caught() {
        // SEAMS_PROBE_MODELS raises the count; the fuzz target (fuzz/
        // fuzz_targets/probes.rs) searches further.
        let count: usize = std::env::var("SEAMS_PROBE_MODELS")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(1000);
        let mut state = 0x5ea5_u64;
        let mut probes = 0;
        // (format, fault) -> runs, refused by the golden test, fault shown
        // on a changed model, refused by a probe.
        let mut seen: BTreeMap<(&str, String), [usize; 4]> = BTreeMap::new();
        for i in 0..count {
            let bytes = random_bytes(&mut state, 96);
            let tally = check(&bytes).unwrap_or_else(|e| panic!("model {i}, bytes {bytes:?}: {e}"));
            probes += tally.probes;
            let hard_coded = tally
                .hard_coded
                .into_iter()
                .map(|(format, c)| (format, "HardCoded".to_owned(), c));
            let wrong = tally
                .wrong
                .into_iter()
                .map(|(format, fault, c)| (format, fault.to_owned(), c));
            for (format, fault, c) in hard_coded.chain(wrong) {
                let entry = seen.entry((format, fault)).or_default();
                for (n, counted) in entry
                    .iter_mut()
                    .zip([true, c.by_golden, c.shows, c.by_probe])
                {
                    *n += usize::from(counted);
                }
            }
        }
        eprintln!("{count} models, {probes} probes run on correct generators: none refused");
        for ((format, fault), [n, golden, shows, probe]) in &seen {
            eprintln!(
                "{format} {fault}: {n} runs; the golden test refused {golden}; of the rest, the fault showed on a changed model in {shows}, a probe refused {probe}"
            );
        }
        // A copy of the reference is caught nearly wherever the model it
        // copied matters: what escapes is a coincidence that leaves no
        // proof (a path "messages" that a kept entity name "Message"
        // spells in the plural). The other faults are counted: an order
        // among ties or a label equal to a name leaves no proof either,
        // and their rates are the figures to watch.
        // A list copied from the reference (its elements fixed, their
        // values read) is caught where it shows: an element added or
        // removed.
        for copy in ["HardCoded", "CopiedList"] {
            let (shown, refused) = seen
                .iter()
                .filter(|((_, fault), _)| fault == copy)
                .fold((0, 0), |(s, r), (_, [_, _, shows, probe])| {
                    (s + shows, r + probe)
                });
            assert!(
                refused * 100 >= shown * 95,
                "{copy}: refused on {refused} of the {shown} models where the copy shows"
            );
        }
    }

    #[test]
    fn no_probe_refuses_a_built_in_generator_on_random_models() {
        // The built-ins are correct generators whose templates print
        // words of their own (a license's "AUTHOR", a parameter
        // `request: Request`), a file per page named by its path, the
        // first page alone as the home page, and quote a table named
        // like an SQL keyword: what the probes must never take for a
        // wrong reading. One in 25 of SEAMS_PROBE_MODELS models.
        let count: usize = std::env::var("SEAMS_PROBE_MODELS")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(1000)
            / 25;
        let runtime = seams_runtime::Runtime::new(None).unwrap();
        for name in seams_core::builtin::NAMES {
            let generator = runtime
                .load(name, seams_core::builtin::component(name).unwrap())
                .unwrap();
            let tally = component_on_random_models(&runtime, &generator, count, 0xb17)
                .unwrap_or_else(|e| panic!("{name} was refused on {e}"));
            let ComponentTally {
                runs,
                probes,
                refused_models,
            } = tally;
            eprintln!(
                "{name}: {runs} of {count} models run, {probes} probes, none refused; the changed model refused by the generator in {refused_models}"
            );
            // The random models are ones the built-ins read.
            assert!(
                runs * 10 >= count * 9,
                "{name}: {runs} of {count} models run"
            );
            assert!(probes >= runs, "{name}: {probes} probes on {runs} models");
            // A clone takes no mark only one sibling has (the initial
            // state) and fresh values siblings may not share (a path
            // "p1"), and a removal leaves no list empty where another
            // sibling can go: few probes test a model the generator
            // refuses.
            assert!(
                refused_models * 10 <= probes,
                "{name}: {refused_models} of {probes} probes changed the model into one it refuses"
            );
        }
    }
}
