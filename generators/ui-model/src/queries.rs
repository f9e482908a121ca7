//! The SPARQL that reads the vocabulary, and the checks on what it finds.

use seams_sdk::{Error, Model, Result};
use serde::Deserialize;

use std::collections::{HashMap, HashSet};

use super::*;

const PREFIX: &str = "PREFIX ui: <https://w3id.org/seams/ui#>\n";

fn select<T: serde::de::DeserializeOwned>(model: &Model, body: &str) -> Result<Vec<T>> {
    model.select_as(&format!("{PREFIX}{body}"))
}

/// Rows grouped by a key, each group in the rows' (the query's) order: one
/// pass, so that looking up a page's components or a form's fields does
/// not scan every row for every page or form.
struct Groups<'a, T> {
    by_key: HashMap<&'a str, Vec<&'a T>>,
}

impl<'a, T> Groups<'a, T> {
    fn new(rows: &'a [T], key: impl Fn(&'a T) -> &'a str) -> Self {
        let mut by_key: HashMap<&str, Vec<&T>> = HashMap::new();
        for row in rows {
            by_key.entry(key(row)).or_default().push(row);
        }
        Groups { by_key }
    }

    fn of(&self, key: &str) -> impl Iterator<Item = &'a T> + '_ {
        self.by_key.get(key).into_iter().flatten().copied()
    }
}

#[derive(Deserialize)]
struct AppRow {
    app: String,
    title: String,
    home: Option<String>,
    home_path: Option<String>,
    database: Option<String>,
    engine: Option<String>,
}

#[derive(Deserialize)]
struct PageRow {
    page: String,
    title: String,
    path: String,
}

#[derive(Deserialize)]
struct ComponentRow {
    page: String,
    component: String,
    class: String,
    label: String,
    empty: Option<String>,
    submit: Option<String>,
    shows: Option<String>,
    creates: Option<String>,
    updates: Option<String>,
}

#[derive(Deserialize)]
struct FieldRow {
    form: String,
    field: String,
    label: String,
    name: String,
    input: Option<String>,
    required: Option<bool>,
    binds: Option<String>,
}

#[derive(Deserialize)]
struct FlowRow {
    source: String,
    event: String,
    flow: String,
    label: String,
    target: String,
    path: String,
}

#[derive(Deserialize)]
struct EntityRow {
    entity: String,
    label: String,
    name: String,
}

#[derive(Deserialize)]
struct AttributeRow {
    entity: String,
    attribute: String,
    label: String,
    name: String,
    datatype: String,
    required: Option<bool>,
}

#[derive(Deserialize)]
struct RelationRow {
    entity: String,
    relation: String,
    label: String,
    name: String,
    target: String,
    required: Option<bool>,
}

#[derive(Deserialize)]
struct StateRow {
    attribute: String,
    state: String,
    label: String,
    name: String,
    initial: Option<bool>,
}

#[derive(Deserialize)]
struct NextRow {
    from: String,
    to: String,
}

pub(crate) fn read(model: &Model) -> Result<Ui> {
    let apps: Vec<AppRow> = select(
        model,
        "SELECT ?app ?title ?home ?home_path ?database ?engine WHERE {
           ?app a ui:Application ; rdfs:label ?title .
           OPTIONAL { ?app ui:homePage ?home . ?home ui:path ?home_path }
           OPTIONAL { ?app ui:database ?database . OPTIONAL { ?database ui:engine ?engine } }
         } ORDER BY ?app",
    )?;
    let app = match apps.as_slice() {
        [app] => app,
        [] => {
            return Err(Error::msg(
                "the model has no ui:Application with an rdfs:label",
            ));
        }
        _ => {
            return Err(Error::msg(format!(
                "the model has {} ui:Application resources (or one with several labels, home pages or databases); the built-in generators need exactly one",
                apps.len()
            )));
        }
    };
    let database = match (&app.database, &app.engine) {
        (None, _) => None,
        (Some(db), Some(engine)) => Some(Database {
            iri: db.clone(),
            engine: engine.clone(),
            slug: slug(db),
        }),
        (Some(db), None) => {
            return Err(Error::msg(format!(
                "database <{db}> has no ui:engine; add ui:engine \"postgres\""
            )));
        }
    };

    let entities = read_entities(model)?;

    let flows: Vec<FlowRow> = select(
        model,
        "SELECT ?source ?event ?flow ?label ?target ?path WHERE {
           ?source ui:event ?event .
           ?flow a ui:NavigationFlow ; ui:trigger ?event ; ui:target ?target ;
                 rdfs:label ?label .
           ?target ui:path ?path .
         } ORDER BY ?source ?flow",
    )?;
    let flows_by_source = Groups::new(&flows, |f| f.source.as_str());
    let flows_of = |source: &str| -> Vec<Flow> {
        flows_by_source
            .of(source)
            .map(|f| Flow {
                iri: f.flow.clone(),
                event: f.event.clone(),
                label: f.label.clone(),
                target: f.target.clone(),
                href: page_file(&f.path),
            })
            .collect()
    };

    let fields: Vec<FieldRow> = select(
        model,
        "SELECT ?form ?field ?label ?name ?input ?required ?binds WHERE {
           ?form ui:field ?field .
           ?field rdfs:label ?label ; ui:name ?name .
           OPTIONAL { ?field ui:inputType ?input }
           OPTIONAL { ?field ui:required ?required }
           OPTIONAL { ?field ui:binds ?binds }
           OPTIONAL { ?field ui:order ?order }
         } ORDER BY ?form ?order ?field",
    )?;
    let components: Vec<ComponentRow> = select(
        model,
        "SELECT ?page ?component ?class ?label ?empty ?submit ?shows ?creates ?updates WHERE {
           ?page ui:contains ?component .
           ?component a ?class ; rdfs:label ?label .
           FILTER (?class IN (ui:List, ui:Form))
           OPTIONAL { ?component ui:emptyText ?empty }
           OPTIONAL { ?component ui:submitLabel ?submit }
           OPTIONAL { ?component ui:shows ?shows }
           OPTIONAL { ?component ui:creates ?creates }
           OPTIONAL { ?component ui:updates ?updates }
           OPTIONAL { ?component ui:order ?order }
         } ORDER BY ?page ?order ?component",
    )?;
    let pages: Vec<PageRow> = select(
        model,
        "SELECT ?page ?title ?path WHERE {
           ?page a ui:Page ; rdfs:label ?title ; ui:path ?path .
           OPTIONAL { ?page ui:order ?order }
         } ORDER BY ?order ?page",
    )?;

    let entity_iris: HashSet<&str> = entities.iter().map(|e| e.iri.as_str()).collect();
    let components_of = Groups::new(&components, |c| c.page.as_str());
    let fields_of = Groups::new(&fields, |f| f.form.as_str());
    let known_entity = |component: &str, property: &str, iri: &str| -> Result<String> {
        if entity_iris.contains(iri) {
            Ok(iri.to_owned())
        } else {
            Err(Error::msg(format!(
                "<{component}> has {property} <{iri}>, which is not a ui:Entity with rdfs:label and ui:name"
            )))
        }
    };

    let mut page_values = Vec::new();
    for page in &pages {
        check_path(&page.page, &page.path)?;
        let mut page_components = Vec::new();
        for c in components_of.of(&page.page) {
            let kind = if c.class == format!("{UI}List") {
                Kind::List
            } else if c.updates.is_some() {
                Kind::UpdateForm
            } else {
                Kind::CreateForm
            };
            let entity = match (kind, &c.shows, &c.creates, &c.updates) {
                (Kind::List, Some(e), _, _) => Some(known_entity(&c.component, "ui:shows", e)?),
                (Kind::UpdateForm, _, Some(_), Some(_)) => {
                    return Err(Error::msg(format!(
                        "form <{}> has both ui:creates and ui:updates; a form does one",
                        c.component
                    )));
                }
                (Kind::UpdateForm, _, _, Some(e)) => {
                    Some(known_entity(&c.component, "ui:updates", e)?)
                }
                (Kind::CreateForm, _, Some(e), _) => {
                    Some(known_entity(&c.component, "ui:creates", e)?)
                }
                _ => None,
            };
            let form_fields: Vec<Field> = fields_of
                .of(&c.component)
                .map(|f| Field {
                    iri: f.field.clone(),
                    label: f.label.clone(),
                    name: f.name.clone(),
                    input_type: f.input.clone().unwrap_or_else(|| "text".into()),
                    required: f.required.unwrap_or(false),
                    binds: f.binds.clone(),
                })
                .collect();
            page_components.push(Component {
                iri: c.component.clone(),
                kind,
                label: c.label.clone(),
                slug: slug(&c.component),
                empty_text: c
                    .empty
                    .clone()
                    .unwrap_or_else(|| "Nothing here yet.".into()),
                submit_label: c.submit.clone().unwrap_or_else(|| "Submit".into()),
                entity,
                fields: form_fields,
                flows: flows_of(&c.component),
            });
        }
        page_values.push(Page {
            iri: page.page.clone(),
            title: page.title.clone(),
            path: page.path.clone(),
            components: page_components,
            flows: flows_of(&page.page),
        });
    }

    let ui = Ui::new(
        App {
            iri: app.app.clone(),
            title: app.title.clone(),
            home: app.home.clone().zip(app.home_path.clone()),
            database,
        },
        page_values,
        entities,
    );
    check_fields(&ui)?;
    check_create_forms(&ui)?;
    check_unique_names(&ui)?;
    Ok(ui)
}

/// A form that creates records has a field for every member a record
/// cannot be made without: each required relation, and each required
/// attribute but a status (it starts in its initial state) and a boolean
/// (unticked is false). Else the generated app answers every submit with
/// 422 (`conversation: Field required`).
fn check_create_forms(ui: &Ui) -> Result<()> {
    for c in ui.components().filter(|c| c.kind == Kind::CreateForm) {
        let Some(entity) = c.entity.as_deref().and_then(|e| ui.entity(e)) else {
            continue;
        };
        let bound = |iri: &str| c.fields.iter().any(|f| f.binds.as_deref() == Some(iri));
        let attributes = entity
            .attributes
            .iter()
            .filter(|a| a.required && a.states.is_empty() && a.datatype != Datatype::Boolean)
            .map(|a| ("attribute", &a.iri, &a.name));
        let relations = entity
            .relations
            .iter()
            .filter(|r| r.required)
            .map(|r| ("relation", &r.iri, &r.name));
        if let Some((kind, iri, name)) = attributes.chain(relations).find(|(_, iri, _)| !bound(iri))
        {
            return Err(Error::msg(format!(
                "form <{}> creates <{}> but no field of it binds the required {kind} <{iri}> ({name:?}), so the app would refuse every record it sends; add a ui:Field with ui:binds <{iri}> to the form, or make <{iri}> ui:required false",
                c.iri, entity.iri
            )));
        }
    }
    Ok(())
}

/// Routes, HTML ids, Python classes and functions are named after
/// components and entities, so two must not share a name.
fn check_unique_names(ui: &Ui) -> Result<()> {
    let clash = |kind: &str, shared: &str, fix: &str, names: Vec<(String, &str)>| {
        let mut names = names;
        names.sort();
        match names.windows(2).find(|w| w[0].0 == w[1].0) {
            Some(w) => Err(Error::msg(format!(
                "{kind} <{}> and <{}> would share the {shared} {:?}; {fix}",
                w[0].1, w[1].1, w[0].0
            ))),
            None => Ok(()),
        }
    };
    clash(
        "components",
        "route and function name",
        "rename one IRI's local name",
        ui.components()
            .map(|c| (python_name(&c.slug), c.iri.as_str()))
            .collect(),
    )?;
    clash(
        "pages",
        "file and function name",
        "give them different ui:path values",
        ui.pages
            .iter()
            .map(|p| (python_name(&p.path), p.iri.as_str()))
            .collect(),
    )?;
    clash(
        "entities",
        "route and store name",
        "give them different ui:name values",
        ui.entities
            .iter()
            .map(|e| (e.slug.clone(), e.iri.as_str()))
            .collect(),
    )
}

fn read_entities(model: &Model) -> Result<Vec<Entity>> {
    let entities: Vec<EntityRow> = select(
        model,
        "SELECT ?entity ?label ?name WHERE {
           ?entity a ui:Entity ; rdfs:label ?label ; ui:name ?name .
           OPTIONAL { ?entity ui:order ?order }
         } ORDER BY ?order ?entity",
    )?;
    let attributes: Vec<AttributeRow> = select(
        model,
        "SELECT ?entity ?attribute ?label ?name ?datatype ?required WHERE {
           ?entity ui:attribute ?attribute .
           ?attribute rdfs:label ?label ; ui:name ?name ; ui:datatype ?datatype .
           OPTIONAL { ?attribute ui:required ?required }
           OPTIONAL { ?attribute ui:order ?order }
         } ORDER BY ?entity ?order ?attribute",
    )?;
    let relations: Vec<RelationRow> = select(
        model,
        "SELECT ?entity ?relation ?label ?name ?target ?required WHERE {
           ?entity ui:relation ?relation .
           ?relation rdfs:label ?label ; ui:name ?name ; ui:relatedEntity ?target .
           OPTIONAL { ?relation ui:required ?required }
           OPTIONAL { ?relation ui:order ?order }
         } ORDER BY ?entity ?order ?relation",
    )?;
    let states: Vec<StateRow> = select(
        model,
        "SELECT ?attribute ?state ?label ?name ?initial WHERE {
           ?attribute ui:state ?state .
           ?state rdfs:label ?label ; ui:name ?name .
           OPTIONAL { ?state ui:initial ?initial }
           OPTIONAL { ?state ui:order ?order }
         } ORDER BY ?attribute ?order ?state",
    )?;
    let next: Vec<NextRow> = select(
        model,
        "SELECT ?from ?to WHERE { ?from ui:next ?to } ORDER BY ?from ?to",
    )?;

    let attributes_of = Groups::new(&attributes, |a| a.entity.as_str());
    let states_of = Groups::new(&states, |s| s.attribute.as_str());
    let relations_of = Groups::new(&relations, |r| r.entity.as_str());
    let next_pairs: HashSet<(&str, &str)> = next
        .iter()
        .map(|n| (n.from.as_str(), n.to.as_str()))
        .collect();
    let entity_iris: HashSet<&str> = entities.iter().map(|e| e.entity.as_str()).collect();
    let mut out = Vec::new();
    for e in &entities {
        check_class_name(&e.entity, &e.name)?;
        let mut entity_attributes = Vec::new();
        for a in attributes_of.of(&e.entity) {
            check_identifier(&a.attribute, &a.name)?;
            let datatype = datatype(&a.attribute, &a.datatype)?;
            let attribute_states: Vec<&StateRow> = states_of.of(&a.attribute).collect();
            let mut state_values = Vec::new();
            for s in &attribute_states {
                check_identifier(&s.state, &s.name)?;
                let next_names = attribute_states
                    .iter()
                    .filter(|to| next_pairs.contains(&(s.state.as_str(), to.state.as_str())))
                    .map(|to| to.name.clone())
                    .collect();
                state_values.push(State {
                    iri: s.state.clone(),
                    label: s.label.clone(),
                    name: s.name.clone(),
                    initial: s.initial.unwrap_or(false),
                    next: next_names,
                });
            }
            if !state_values.is_empty() {
                if datatype != Datatype::String {
                    return Err(Error::msg(format!(
                        "attribute <{}> has ui:state values but ui:datatype xsd:{}; a status is an xsd:string",
                        a.attribute,
                        datatype.name()
                    )));
                }
                let initial = state_values.iter().filter(|s| s.initial).count();
                if initial != 1 {
                    return Err(Error::msg(format!(
                        "attribute <{}> has {initial} initial states; mark exactly one state ui:initial true",
                        a.attribute
                    )));
                }
            }
            entity_attributes.push(Attribute {
                iri: a.attribute.clone(),
                label: a.label.clone(),
                name: a.name.clone(),
                datatype,
                required: a.required.unwrap_or(false),
                states: state_values,
            });
        }
        let mut entity_relations = Vec::new();
        for r in relations_of.of(&e.entity) {
            check_identifier(&r.relation, &r.name)?;
            if !entity_iris.contains(r.target.as_str()) {
                return Err(Error::msg(format!(
                    "relation <{}> has ui:relatedEntity <{}>, which is not a ui:Entity with rdfs:label and ui:name",
                    r.relation, r.target
                )));
            }
            entity_relations.push(Relation {
                iri: r.relation.clone(),
                label: r.label.clone(),
                name: r.name.clone(),
                target: r.target.clone(),
                required: r.required.unwrap_or(false),
            });
        }
        if entity_attributes.is_empty() {
            return Err(Error::msg(format!(
                "entity <{}> has no ui:attribute with rdfs:label, ui:name and ui:datatype; give it one",
                e.entity
            )));
        }
        let mut names: Vec<&str> = entity_attributes
            .iter()
            .map(|a| a.name.as_str())
            .chain(entity_relations.iter().map(|r| r.name.as_str()))
            .collect();
        names.sort_unstable();
        if let Some(w) = names.windows(2).find(|w| w[0] == w[1]) {
            return Err(Error::msg(format!(
                "entity <{}> has two attributes or relations named {:?}",
                e.entity, w[0]
            )));
        }
        out.push(Entity {
            iri: e.entity.clone(),
            label: e.label.clone(),
            name: e.name.clone(),
            slug: snake_case(&e.name),
            attributes: entity_attributes,
            relations: entity_relations,
        });
    }
    Ok(out)
}

/// The `ui:inputType` values the generators know.
const INPUT_TYPES: &[&str] = &[
    "text", "textarea", "email", "number", "date", "checkbox", "select",
];

/// A form's bound fields must bind a member of the form's entity; a select
/// must offer something.
fn check_fields(ui: &Ui) -> Result<()> {
    for c in ui.components() {
        for f in &c.fields {
            let mut chars = f.name.chars();
            let plain = chars.next().is_some_and(|c| c.is_ascii_alphabetic())
                && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
            if !plain {
                return Err(Error::msg(format!(
                    "field <{}> has ui:name {:?}; use a letter, then letters, digits and '_'",
                    f.iri, f.name
                )));
            }
            if !INPUT_TYPES.contains(&f.input_type.as_str()) {
                return Err(Error::msg(format!(
                    "field <{}> has ui:inputType {:?}; use one of {}",
                    f.iri,
                    f.input_type,
                    INPUT_TYPES.join(", ")
                )));
            }
            let offers = match f.binds.as_deref().and_then(|b| ui.member(b)) {
                Some((_, Member::Relation(_))) => true,
                Some((_, Member::Attribute(a))) => !a.states.is_empty(),
                None => false,
            };
            if f.input_type == "select" && !offers {
                return Err(Error::msg(format!(
                    "field <{}> is a \"select\" but binds neither a relation nor a status attribute (one with ui:state values)",
                    f.iri
                )));
            }
            if c.kind == Kind::UpdateForm && f.name == "id" {
                return Err(Error::msg(format!(
                    "field <{}> of update form <{}> is named \"id\", which the form uses for the record it changes; choose another name",
                    f.iri, c.iri
                )));
            }
            let Some(binds) = &f.binds else { continue };
            let Some((entity, _)) = ui.member(binds) else {
                return Err(Error::msg(format!(
                    "field <{}> has ui:binds <{binds}>, which is no entity's ui:attribute or ui:relation",
                    f.iri
                )));
            };
            if c.entity.as_deref() != Some(entity.iri.as_str()) {
                return Err(Error::msg(format!(
                    "field <{}> binds <{binds}> of entity <{}>, but its form <{}> does not create or update that entity",
                    f.iri, entity.iri, c.iri
                )));
            }
        }
    }
    Ok(())
}
