//! Reads the UI model into the view model the templates print.

use seams_sdk::{Error, Model, Result, ViewObject};
use serde::Deserialize;
use serde_json::{Value, json};

#[derive(Deserialize)]
struct AppRow {
    app: String,
    title: String,
    home: Option<String>,
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
}

#[derive(Deserialize)]
struct FieldRow {
    form: String,
    field: String,
    label: String,
    name: String,
    input: Option<String>,
    required: Option<String>,
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

const UI: &str = "https://w3id.org/seams/ui#";

pub fn extract(model: &Model) -> Result<Value> {
    let apps: Vec<AppRow> = model.select_as(
        "PREFIX ui: <https://w3id.org/seams/ui#>
         SELECT ?app ?title ?home WHERE {
           ?app a ui:Application ; rdfs:label ?title .
           OPTIONAL { ?app ui:homePage/ui:path ?home }
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
                "the model has {} ui:Application resources; the htmx generator needs exactly one",
                apps.len()
            )));
        }
    };
    let pages: Vec<PageRow> = model.select_as(
        "PREFIX ui: <https://w3id.org/seams/ui#>
         SELECT ?page ?title ?path WHERE {
           ?page a ui:Page ; rdfs:label ?title ; ui:path ?path .
           OPTIONAL { ?page ui:order ?order }
         } ORDER BY ?order ?page",
    )?;
    let components: Vec<ComponentRow> = model.select_as(
        "PREFIX ui: <https://w3id.org/seams/ui#>
         SELECT ?page ?component ?class ?label ?empty ?submit WHERE {
           ?page ui:contains ?component .
           ?component a ?class ; rdfs:label ?label .
           FILTER (?class IN (ui:List, ui:Form))
           OPTIONAL { ?component ui:emptyText ?empty }
           OPTIONAL { ?component ui:submitLabel ?submit }
           OPTIONAL { ?component ui:order ?order }
         } ORDER BY ?page ?order ?component",
    )?;
    let fields: Vec<FieldRow> = model.select_as(
        "PREFIX ui: <https://w3id.org/seams/ui#>
         SELECT ?form ?field ?label ?name ?input ?required WHERE {
           ?form ui:field ?field .
           ?field rdfs:label ?label ; ui:name ?name .
           OPTIONAL { ?field ui:inputType ?input }
           OPTIONAL { ?field ui:required ?required }
           OPTIONAL { ?field ui:order ?order }
         } ORDER BY ?form ?order ?field",
    )?;
    let flows: Vec<FlowRow> = model.select_as(
        "PREFIX ui: <https://w3id.org/seams/ui#>
         SELECT ?source ?event ?flow ?label ?target ?path WHERE {
           ?source ui:event ?event .
           ?flow a ui:NavigationFlow ; ui:trigger ?event ; ui:target ?target ;
                 rdfs:label ?label .
           ?target ui:path ?path .
         } ORDER BY ?source ?flow",
    )?;

    let links = |source: &str| -> Vec<Value> {
        flows
            .iter()
            .filter(|f| f.source == source)
            .map(|f| {
                ViewObject::new(&f.flow)
                    .origin(&f.event)
                    .origin(&f.target)
                    .field("label", f.label.as_str())
                    .field("href", page_file(&f.path))
                    .into()
            })
            .collect()
    };

    let mut page_views = Vec::new();
    for page in &pages {
        check_path(&page.page, &page.path)?;
        let mut component_views = Vec::new();
        for c in components.iter().filter(|c| c.page == page.page) {
            let kind = if c.class == format!("{UI}List") {
                "list"
            } else {
                "form"
            };
            let mut view = ViewObject::new(&c.component)
                .field("kind", kind)
                .field("label", c.label.as_str())
                .field("slug", slug(&c.component))
                .field("links", links(&c.component));
            if kind == "list" {
                let empty = c
                    .empty
                    .clone()
                    .unwrap_or_else(|| "Nothing here yet.".into());
                view = view.field("empty_text", empty);
            } else {
                let form_fields: Vec<Value> = fields
                    .iter()
                    .filter(|f| f.form == c.component)
                    .map(|f| {
                        ViewObject::new(&f.field)
                            .field("label", f.label.as_str())
                            .field("name", f.name.as_str())
                            .field("input_type", f.input.as_deref().unwrap_or("text"))
                            .field("required", f.required.as_deref() == Some("true"))
                            .into()
                    })
                    .collect();
                let submit = c.submit.clone().unwrap_or_else(|| "Submit".into());
                view = view
                    .field("fields", form_fields)
                    .field("submit_label", submit);
            }
            component_views.push(Value::from(view));
        }
        page_views.push(Value::from(
            ViewObject::new(&page.page)
                .field("title", page.title.as_str())
                .field("path", page.path.as_str())
                .field("file", page_file(&page.path))
                .field("components", component_views)
                .field("links", links(&page.page)),
        ));
    }

    let nav: Vec<Value> = pages
        .iter()
        .map(|p| {
            ViewObject::new(&p.page)
                .field("title", p.title.as_str())
                .field("href", page_file(&p.path))
                .into()
        })
        .collect();

    let mut app_view = ViewObject::new(&app.app).field("title", app.title.as_str());
    if let Some(home) = &app.home {
        app_view = app_view.field("home", page_file(home));
    }
    Ok(json!({ "app": Value::from(app_view), "pages": page_views, "nav": nav }))
}

fn page_file(path: &str) -> String {
    format!("{path}.html")
}

/// A page path becomes a file name, so it must be a plain segment.
fn check_path(page: &str, path: &str) -> Result<()> {
    let ok = !path.is_empty()
        && path
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_');
    if ok {
        Ok(())
    } else {
        Err(Error::msg(format!(
            "page <{page}> has ui:path {path:?}; use lowercase letters, digits, '-' and '_'"
        )))
    }
}

/// The local name of an IRI (after the last `#` or `/`), for HTML ids and
/// API routes.
fn slug(iri: &str) -> String {
    let local = iri.rsplit(['#', '/']).next().unwrap_or(iri);
    local
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '-'
            }
        })
        .collect()
}
