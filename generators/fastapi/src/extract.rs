//! Reads the UI model into the view model `app.py` prints: entities with
//! their Python declarations, and one route per list, form and page.

use seams_sdk::{Model, Result, ViewObject};
use seams_ui_model::{
    Attribute, Component, Datatype, Entity, Kind, Member, Relation, Ui, python_name,
};
use serde_json::{Value, json};

pub fn extract(model: &Model) -> Result<Value> {
    let ui = Ui::read(model)?;
    let entities: Vec<Value> = ui.entities.iter().map(|e| entity(&ui, e)).collect();
    let lists: Vec<Value> = ui
        .components()
        .filter(|c| c.kind == Kind::List && c.entity.is_some())
        .map(|c| list(&ui, c))
        .collect();
    let forms: Vec<Value> = ui
        .components()
        .filter(|c| c.kind != Kind::List && c.entity.is_some())
        .map(|c| form(&ui, c))
        .collect();
    let pages: Vec<Value> = ui
        .pages
        .iter()
        .map(|p| {
            ViewObject::new(&p.iri)
                .field("title", p.title.as_str())
                .field("file", p.file())
                .field("function", format!("page_{}", python_name(&p.path)))
                .into()
        })
        .collect();
    let app = ViewObject::new(&ui.app.iri)
        .field("title", ui.app.title.as_str())
        .field("home", ui.home().map_or(Value::Null, Value::from));
    Ok(json!({
        "app": Value::from(app),
        "entities": entities,
        "lists": lists,
        "forms": forms,
        "pages": pages,
    }))
}

/// `expense_report` → `EXPENSE_REPORT_STORE`.
fn store(entity: &Entity) -> String {
    format!("{}_STORE", entity.slug.to_ascii_uppercase())
}

/// An entity as a component or relation refers to it; the label is
/// lowercased to sit inside sentences.
fn entity_ref(ui: &Ui, iri: &str) -> Value {
    ui.entity(iri).map_or(Value::Null, |e| {
        e.view_ref()
            .field("label", e.label.to_lowercase())
            .field("store", store(e))
            .into()
    })
}

fn entity(ui: &Ui, e: &Entity) -> Value {
    let members: Vec<Value> = e
        .attributes
        .iter()
        .map(attribute)
        .chain(e.relations.iter().map(|r| relation(ui, r)))
        .collect();
    let statuses: Vec<Value> = e
        .attributes
        .iter()
        .filter(|a| !a.states.is_empty())
        .map(|a| {
            let states: Vec<Value> = a
                .states
                .iter()
                .map(|s| {
                    let next: Vec<Value> = a
                        .states
                        .iter()
                        .filter(|n| s.next.contains(&n.name))
                        .map(|n| {
                            ViewObject::new(&n.iri)
                                .field("name", n.name.as_str())
                                .into()
                        })
                        .collect();
                    ViewObject::new(&s.iri)
                        .field("name", s.name.as_str())
                        .field("label", s.label.as_str())
                        .field("next", next)
                        .into()
                })
                .collect();
            ViewObject::new(&a.iri)
                .field("name", a.name.as_str())
                .field(
                    "constant",
                    format!("{}_{}", e.slug, a.name).to_ascii_uppercase(),
                )
                .field("states", states)
                .into()
        })
        .collect();
    let first = &e.attributes[0];
    ViewObject::new(&e.iri)
        .field("name", e.name.as_str())
        .field("slug", e.slug.as_str())
        .field("label", e.label.as_str())
        .field("label_lower", e.label.to_lowercase())
        .field("store", store(e))
        .field(
            "title_attribute",
            ViewObject::new(&first.iri).field("name", first.name.as_str()),
        )
        .field("members", members)
        .field("statuses", statuses)
        .into()
}

fn attribute(a: &Attribute) -> Value {
    let python = match a.datatype {
        Datatype::String => "str",
        Datatype::Integer => "int",
        Datatype::Decimal => "decimal.Decimal",
        Datatype::Boolean => "bool",
        Datatype::Date => "datetime.date",
    };
    // A status always has a value: its initial state. An unticked checkbox
    // is not sent, so a boolean defaults to False.
    let annotation = if !a.states.is_empty() {
        String::new()
    } else if a.datatype == Datatype::Boolean {
        "bool = False".to_owned()
    } else if !a.required {
        format!("Optional[{python}] = None")
    } else if a.datatype == Datatype::String {
        "str = Field(min_length=1)".to_owned()
    } else {
        python.to_owned()
    };
    let kind = if a.states.is_empty() {
        "attribute"
    } else {
        "status"
    };
    let initial = a.states.iter().find(|s| s.initial);
    let mut view = ViewObject::new(&a.iri)
        .field("kind", kind)
        .field("name", a.name.as_str())
        .field("label", a.label.as_str())
        .field("annotation", annotation)
        .field("required", a.required);
    if let Some(s) = initial {
        let states: Vec<Value> = a
            .states
            .iter()
            .map(|s| {
                ViewObject::new(&s.iri)
                    .field("name", s.name.as_str())
                    .into()
            })
            .collect();
        view = view
            .field(
                "initial",
                ViewObject::new(&s.iri).field("name", s.name.as_str()),
            )
            .field("states", states);
    }
    view.into()
}

fn relation(ui: &Ui, r: &Relation) -> Value {
    let annotation = if r.required {
        "int"
    } else {
        "Optional[int] = None"
    };
    ViewObject::new(&r.iri)
        .origin(&r.target)
        .field("kind", "relation")
        .field("name", r.name.as_str())
        .field("label", r.label.as_str())
        .field("annotation", annotation)
        .field("required", r.required)
        .field("target", entity_ref(ui, &r.target))
        .into()
}

fn list(ui: &Ui, c: &Component) -> Value {
    let links: Vec<Value> = c.flows.iter().map(|f| f.link().into()).collect();
    // A record selected on another page (`?<entity>=<key>`) narrows the
    // list to the records that refer to it, one query parameter per
    // related entity (the first relation to it wins).
    let mut filters: Vec<Value> = Vec::new();
    let mut seen: Vec<&str> = Vec::new();
    if let Some(entity) = c.entity.as_deref().and_then(|e| ui.entity(e)) {
        for r in &entity.relations {
            let Some(target) = ui.entity(&r.target) else {
                continue;
            };
            if seen.contains(&target.slug.as_str()) {
                continue;
            }
            seen.push(&target.slug);
            filters.push(
                ViewObject::new(&r.iri)
                    .origin(&target.iri)
                    .field("param", target.slug.as_str())
                    .field("member", r.name.as_str())
                    .into(),
            );
        }
    }
    ViewObject::new(&c.iri)
        .field("slug", c.slug.as_str())
        .field("function", python_name(&c.slug))
        .field("label", c.label.as_str())
        .field("empty_text", c.empty_text.as_str())
        .field("entity", entity_ref(ui, c.entity.as_deref().unwrap_or("")))
        .field("links", links)
        .field("filters", filters)
        .into()
}

fn form(ui: &Ui, c: &Component) -> Value {
    let fields: Vec<Value> = c
        .fields
        .iter()
        .filter_map(|f| {
            let (_, member) = ui.member(f.binds.as_deref()?)?;
            let (iri, name) = match member {
                Member::Attribute(a) => (&a.iri, &a.name),
                Member::Relation(r) => (&r.iri, &r.name),
            };
            Some(
                ViewObject::new(&f.iri)
                    .origin(iri)
                    .field("name", f.name.as_str())
                    .field("member", name.as_str())
                    .into(),
            )
        })
        .collect();
    ViewObject::new(&c.iri)
        .field("slug", c.slug.as_str())
        .field("function", python_name(&c.slug))
        .field("label", c.label.as_str())
        .field("update", c.kind == Kind::UpdateForm)
        .field("entity", entity_ref(ui, c.entity.as_deref().unwrap_or("")))
        .field("fields", fields)
        .into()
}
