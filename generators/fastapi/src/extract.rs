//! Reads the UI model into the view model `app.py` prints: entities with
//! their Python declarations, and one route per list, form and page.

use seams_sdk::{Model, Result, Traced};
use seams_ui_model::{
    Attribute, Component, Datatype, Entity, Home, Kind, Link, Member, Relation, Ui, python_name,
    sql,
};

use crate::schema;
use serde::{Deserialize, Serialize};

/// What `app.py`, `schema.sql` and `requirements.txt` print.
#[derive(Serialize, Deserialize)]
pub struct View {
    app: Traced<App>,
    entities: Vec<Traced<EntityView>>,
    /// Positions in `entities`, each table after those it refers to.
    table_order: Vec<usize>,
    /// References that close a cycle of tables, added after them.
    late_references: Vec<Traced<LateReference>>,
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
    /// The Python constant of its table.
    table: String,
    /// The column of its title (its first attribute).
    title: String,
}

#[derive(Serialize, Deserialize)]
struct EntityView {
    name: String,
    slug: String,
    label: String,
    label_lower: String,
    /// The Python constant of its table.
    table: String,
    /// Its table's name in `schema.sql`.
    sql: String,
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
    /// The table of its states.
    table: String,
    /// That table's name in `schema.sql`.
    sql: String,
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
    /// Its SQLAlchemy `Column` arguments after the name.
    column: String,
    /// Its definition in `schema.sql`.
    sql: String,
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

/// A foreign key `schema.sql` adds after both tables exist.
#[derive(Serialize, Deserialize)]
struct LateReference {
    table: String,
    column: String,
    target: String,
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
    let table_order = sql::table_order(&ui);
    // A reference is written with its column when the target's table is
    // made first (or is its own).
    let position = |iri: &str| {
        let index = ui.entities.iter().position(|e| e.iri == iri);
        index.and_then(|i| table_order.iter().position(|&t| t == i))
    };
    let inline = |e: &Entity, r: &Relation| position(&r.target) <= position(&e.iri);
    let entities = ui
        .entities
        .iter()
        .map(|e| entity(&ui, e, |r| inline(e, r)))
        .collect();
    let late_references = ui
        .entities
        .iter()
        .flat_map(|e| e.relations.iter().map(move |r| (e, r)))
        .filter(|(e, r)| !inline(e, r))
        .filter_map(|(e, r)| {
            let target = ui.entity(&r.target)?;
            let late = LateReference {
                table: sql::sql_name(&e.slug),
                column: sql::sql_name(&r.name),
                target: sql::sql_name(&target.slug),
            };
            Some(Traced::new(&r.iri, late).origin(&target.iri))
        })
        .collect();
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
        table_order,
        late_references,
        lists,
        forms,
        pages,
    })
}

/// `expense_report` → `EXPENSE_REPORT_TABLE`.
fn table(entity: &Entity) -> String {
    format!("{}_TABLE", entity.slug.to_ascii_uppercase())
}

fn entity_ref(ui: &Ui, iri: &str) -> Option<Traced<EntityRef>> {
    ui.entity(iri).map(|e| {
        let view = EntityRef {
            name: e.name.clone(),
            slug: e.slug.clone(),
            label: e.label.to_lowercase(),
            table: table(e),
            title: e.attributes[0].name.clone(),
        };
        Traced::new(&e.iri, view)
    })
}

fn entity(ui: &Ui, e: &Entity, inline: impl Fn(&Relation) -> bool) -> Traced<EntityView> {
    let members = e
        .attributes
        .iter()
        .map(|a| attribute(e, a))
        .chain(e.relations.iter().map(|r| relation(ui, r, inline(r))))
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
            let states_table = schema::states_table(e, a);
            let status = Status {
                name: a.name.clone(),
                constant: format!("{}_{}", e.slug, a.name).to_ascii_uppercase(),
                sql: sql::sql_name(&states_table),
                table: states_table,
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
        table: table(e),
        sql: sql::sql_name(&e.slug),
        title_attribute: Name::of(&first.iri, &first.name),
        members,
        statuses,
    };
    Traced::new(&e.iri, view)
}

fn attribute(e: &Entity, a: &Attribute) -> Traced<MemberView> {
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
    let (column, sql) = schema::attribute_column(e, a);
    let view = MemberView {
        name: a.name.clone(),
        label: a.label.clone(),
        annotation,
        column,
        sql,
        required: a.required,
        kind,
    };
    Traced::new(&a.iri, view)
}

fn relation(ui: &Ui, r: &Relation, inline: bool) -> Traced<MemberView> {
    let annotation = if r.required {
        "int"
    } else {
        "Optional[int] = None"
    };
    let (column, sql) = schema::relation_column(ui, r, inline);
    let view = MemberView {
        name: r.name.clone(),
        label: r.label.clone(),
        annotation: annotation.into(),
        column,
        sql,
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
