//! Reads the UI model into the view model the templates print.

use seams_sdk::{Model, Result, ViewObject};
use seams_ui_model::{Component, Datatype, Field, Flow, Kind, Member, Ui};
use serde_json::{Value, json};

pub fn extract(model: &Model) -> Result<Value> {
    let ui = Ui::read(model)?;
    let nav: Vec<Value> = ui
        .pages
        .iter()
        .map(|p| {
            ViewObject::new(&p.iri)
                .field("title", p.title.as_str())
                .field("href", p.file())
                .into()
        })
        .collect();
    let pages: Vec<Value> = ui
        .pages
        .iter()
        .map(|page| {
            let components: Vec<Value> =
                page.components.iter().map(|c| component(&ui, c)).collect();
            ViewObject::new(&page.iri)
                .field("title", page.title.as_str())
                .field("file", page.file())
                .field("components", components)
                .field("links", links(&page.flows))
                .into()
        })
        .collect();
    let app = ViewObject::new(&ui.app.iri).field("title", ui.app.title.as_str());
    Ok(json!({ "app": Value::from(app), "pages": pages, "nav": nav }))
}

fn links(flows: &[Flow]) -> Vec<Value> {
    flows.iter().map(|f| f.link().into()).collect()
}

/// An entity as a component or field refers to it.
fn entity_ref(ui: &Ui, iri: &str) -> Value {
    ui.entity(iri).map_or(Value::Null, |e| e.view_ref().into())
}

fn component(ui: &Ui, c: &Component) -> Value {
    let entity = c
        .entity
        .as_deref()
        .map_or(Value::Null, |e| entity_ref(ui, e));
    let view = ViewObject::new(&c.iri)
        .field("label", c.label.as_str())
        .field("slug", c.slug.as_str())
        .field("entity", entity)
        .field("links", links(&c.flows));
    match c.kind {
        Kind::List => view
            .field("kind", "list")
            .field("empty_text", c.empty_text.as_str())
            .into(),
        Kind::CreateForm | Kind::UpdateForm => view
            .field("kind", "form")
            .field("update", c.kind == Kind::UpdateForm)
            .field("submit_label", c.submit_label.as_str())
            .field(
                "fields",
                c.fields.iter().map(|f| field(ui, f)).collect::<Vec<_>>(),
            )
            .into(),
    }
}

fn field(ui: &Ui, f: &Field) -> Value {
    let mut view = ViewObject::new(&f.iri)
        .field("label", f.label.as_str())
        .field("name", f.name.as_str())
        .field("input_type", f.input_type.as_str())
        .field("required", f.required);
    let mut step = "any";
    let mut states: Vec<Value> = Vec::new();
    let mut related = Value::Null;
    match f.binds.as_deref().and_then(|b| ui.member(b)) {
        Some((_, Member::Attribute(a))) => {
            view = view.origin(&a.iri);
            step = match a.datatype {
                Datatype::Integer => "1",
                Datatype::Decimal => "0.01",
                _ => "any",
            };
            states = a
                .states
                .iter()
                .map(|s| {
                    ViewObject::new(&s.iri)
                        .field("name", s.name.as_str())
                        .field("label", s.label.as_str())
                        .into()
                })
                .collect();
        }
        Some((_, Member::Relation(r))) => {
            view = view.origin(&r.iri);
            related = entity_ref(ui, &r.target);
        }
        None => {}
    }
    view.field("step", step)
        .field("states", states)
        .field("related", related)
        .into()
}
