//! Reads the UI model into the view model `app.py` prints: entities with
//! their Python declarations, and one route per list, form and page.

use seams_sdk::{Model, Result, Traced};
use seams_ui_model::{
    Attribute, Component, Datatype, Entity, Home, Kind, Link, Member, Relation, Ui, python_name,
};
use serde::{Deserialize, Serialize};

/// What `app.py` and `requirements.txt` print.
#[derive(Serialize, Deserialize)]
pub struct View {
    app: Traced<App>,
    entities: Vec<Traced<EntityView>>,
    lists: Vec<Traced<List>>,
    forms: Vec<Traced<Form>>,
    pages: Vec<Traced<Page>>,
}

#[derive(Serialize, Deserialize)]
struct App {
    title: String,
    home: Option<Traced<Home>>,
}

#[derive(Serialize, Deserialize)]
struct Page {
    title: String,
    file: String,
    /// The Python function serving it.
    function: String,
}

/// An entity where a component or relation refers to it; the label is
/// lowercased to sit inside sentences.
#[derive(Serialize, Deserialize)]
struct EntityRef {
    name: String,
    slug: String,
    label: String,
    store: String,
}

#[derive(Serialize, Deserialize)]
struct EntityView {
    name: String,
    slug: String,
    label: String,
    label_lower: String,
    store: String,
    title_attribute: Traced<Name>,
    members: Vec<Traced<MemberView>>,
    statuses: Vec<Traced<Status>>,
}

/// A model element known by its `ui:name`.
#[derive(Serialize, Deserialize)]
struct Name {
    name: String,
}

impl Name {
    fn of(iri: &str, name: &str) -> Traced<Name> {
        Traced::new(iri, Name { name: name.into() })
    }
}

#[derive(Serialize, Deserialize)]
struct Status {
    name: String,
    /// The Python constant of its labels.
    constant: String,
    states: Vec<Traced<StateView>>,
}

#[derive(Serialize, Deserialize)]
struct StateView {
    name: String,
    label: String,
    next: Vec<Traced<Name>>,
}

/// An attribute or relation as a pydantic field.
#[derive(Serialize, Deserialize)]
struct MemberView {
    name: String,
    label: String,
    /// Its Python annotation, with its default.
    annotation: String,
    required: bool,
    #[serde(flatten)]
    kind: MemberKind,
}

#[derive(Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
enum MemberKind {
    Attribute,
    Status {
        initial: Traced<Name>,
        states: Vec<Traced<Name>>,
    },
    Relation {
        target: Option<Traced<EntityRef>>,
    },
}

#[derive(Serialize, Deserialize)]
struct List {
    slug: String,
    function: String,
    label: String,
    empty_text: String,
    entity: Option<Traced<EntityRef>>,
    links: Vec<Traced<Link>>,
    filters: Vec<Traced<Filter>>,
}

/// A query parameter narrowing a list to the records that refer to a
/// selected record.
#[derive(Serialize, Deserialize)]
struct Filter {
    param: String,
    member: String,
}

#[derive(Serialize, Deserialize)]
struct Form {
    slug: String,
    function: String,
    label: String,
    update: bool,
    entity: Option<Traced<EntityRef>>,
    fields: Vec<Traced<FormField>>,
}

#[derive(Serialize, Deserialize)]
struct FormField {
    name: String,
    /// The member it sets.
    member: String,
}

pub fn extract(model: &Model) -> Result<View> {
    let ui = Ui::read(model)?;
    let entities = ui.entities.iter().map(|e| entity(&ui, e)).collect();
    let lists = ui
        .components()
        .filter(|c| c.kind == Kind::List && c.entity.is_some())
        .map(|c| list(&ui, c))
        .collect();
    let forms = ui
        .components()
        .filter(|c| c.kind != Kind::List && c.entity.is_some())
        .map(|c| form(&ui, c))
        .collect();
    let pages = ui
        .pages
        .iter()
        .map(|p| {
            let page = Page {
                title: p.title.clone(),
                file: p.file(),
                function: format!("page_{}", python_name(&p.path)),
            };
            Traced::new(&p.iri, page)
        })
        .collect();
    let app = App {
        title: ui.app.title.clone(),
        home: ui.home(),
    };
    Ok(View {
        app: Traced::new(&ui.app.iri, app),
        entities,
        lists,
        forms,
        pages,
    })
}

/// `expense_report` → `EXPENSE_REPORT_STORE`.
fn store(entity: &Entity) -> String {
    format!("{}_STORE", entity.slug.to_ascii_uppercase())
}

fn entity_ref(ui: &Ui, iri: &str) -> Option<Traced<EntityRef>> {
    ui.entity(iri).map(|e| {
        let view = EntityRef {
            name: e.name.clone(),
            slug: e.slug.clone(),
            label: e.label.to_lowercase(),
            store: store(e),
        };
        Traced::new(&e.iri, view)
    })
}

fn entity(ui: &Ui, e: &Entity) -> Traced<EntityView> {
    let members = e
        .attributes
        .iter()
        .map(attribute)
        .chain(e.relations.iter().map(|r| relation(ui, r)))
        .collect();
    let statuses = e
        .attributes
        .iter()
        .filter(|a| !a.states.is_empty())
        .map(|a| {
            let states = a
                .states
                .iter()
                .map(|s| {
                    let next = a
                        .states
                        .iter()
                        .filter(|n| s.next.contains(&n.name))
                        .map(|n| Name::of(&n.iri, &n.name))
                        .collect();
                    let state = StateView {
                        name: s.name.clone(),
                        label: s.label.clone(),
                        next,
                    };
                    Traced::new(&s.iri, state)
                })
                .collect();
            let status = Status {
                name: a.name.clone(),
                constant: format!("{}_{}", e.slug, a.name).to_ascii_uppercase(),
                states,
            };
            Traced::new(&a.iri, status)
        })
        .collect();
    let first = &e.attributes[0];
    let view = EntityView {
        name: e.name.clone(),
        slug: e.slug.clone(),
        label: e.label.clone(),
        label_lower: e.label.to_lowercase(),
        store: store(e),
        title_attribute: Name::of(&first.iri, &first.name),
        members,
        statuses,
    };
    Traced::new(&e.iri, view)
}

fn attribute(a: &Attribute) -> Traced<MemberView> {
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
    // ui-model reads exactly one initial state for a status.
    let kind = match a.states.iter().find(|s| s.initial) {
        Some(initial) => MemberKind::Status {
            initial: Name::of(&initial.iri, &initial.name),
            states: a.states.iter().map(|s| Name::of(&s.iri, &s.name)).collect(),
        },
        None => MemberKind::Attribute,
    };
    let view = MemberView {
        name: a.name.clone(),
        label: a.label.clone(),
        annotation,
        required: a.required,
        kind,
    };
    Traced::new(&a.iri, view)
}

fn relation(ui: &Ui, r: &Relation) -> Traced<MemberView> {
    let annotation = if r.required {
        "int"
    } else {
        "Optional[int] = None"
    };
    let view = MemberView {
        name: r.name.clone(),
        label: r.label.clone(),
        annotation: annotation.into(),
        required: r.required,
        kind: MemberKind::Relation {
            target: entity_ref(ui, &r.target),
        },
    };
    Traced::new(&r.iri, view).origin(&r.target)
}

fn list(ui: &Ui, c: &Component) -> Traced<List> {
    // A record selected on another page (`?<entity>=<key>`) narrows the
    // list to the records that refer to it, one query parameter per
    // related entity (the first relation to it wins).
    let mut filters = Vec::new();
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
            let filter = Filter {
                param: target.slug.clone(),
                member: r.name.clone(),
            };
            filters.push(Traced::new(&r.iri, filter).origin(&target.iri));
        }
    }
    let view = List {
        slug: c.slug.clone(),
        function: python_name(&c.slug),
        label: c.label.clone(),
        empty_text: c.empty_text.clone(),
        entity: entity_ref(ui, c.entity.as_deref().unwrap_or("")),
        links: c.flows.iter().map(|f| f.link()).collect(),
        filters,
    };
    Traced::new(&c.iri, view)
}

fn form(ui: &Ui, c: &Component) -> Traced<Form> {
    let fields = c
        .fields
        .iter()
        .filter_map(|f| {
            let (_, member) = ui.member(f.binds.as_deref()?)?;
            let (iri, name) = match member {
                Member::Attribute(a) => (&a.iri, &a.name),
                Member::Relation(r) => (&r.iri, &r.name),
            };
            let field = FormField {
                name: f.name.clone(),
                member: name.clone(),
            };
            Some(Traced::new(&f.iri, field).origin(iri))
        })
        .collect();
    let view = Form {
        slug: c.slug.clone(),
        function: python_name(&c.slug),
        label: c.label.clone(),
        update: c.kind == Kind::UpdateForm,
        entity: entity_ref(ui, c.entity.as_deref().unwrap_or("")),
        fields,
    };
    Traced::new(&c.iri, view)
}
