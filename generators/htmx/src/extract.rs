//! Reads the UI model into the view model the templates print.

use seams_sdk::{Model, Result, Traced};
use seams_ui_model::{Datatype, EntityRef, Kind, Link, Member, Ui};
use serde::{Deserialize, Serialize};

/// What the pages print.
#[derive(Serialize, Deserialize)]
pub struct View {
    pub app: Traced<Title>,
    pub pages: Vec<Traced<Page>>,
    /// Every page, as the navigation links to it.
    pub nav: Vec<Traced<NavItem>>,
}

#[derive(Serialize, Deserialize)]
pub struct Title {
    pub title: String,
}

#[derive(Serialize, Deserialize)]
pub struct NavItem {
    pub title: String,
    pub href: String,
}

#[derive(Serialize, Deserialize)]
pub struct Page {
    pub title: String,
    pub file: String,
    pub components: Vec<Traced<Component>>,
    pub links: Vec<Traced<Link>>,
}

#[derive(Serialize, Deserialize)]
pub struct Component {
    pub label: String,
    pub slug: String,
    pub entity: Option<Traced<EntityRef>>,
    pub links: Vec<Traced<Link>>,
    #[serde(flatten)]
    pub kind: ComponentKind,
}

#[derive(Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum ComponentKind {
    List {
        empty_text: String,
    },
    Form {
        update: bool,
        submit_label: String,
        fields: Vec<Traced<Field>>,
    },
}

#[derive(Serialize, Deserialize)]
pub struct Field {
    pub label: String,
    pub name: String,
    pub input_type: String,
    pub required: bool,
    /// The number input's `step`, from the bound attribute's datatype.
    pub step: String,
    /// The states of a bound status, for a select.
    pub states: Vec<Traced<State>>,
    /// The entity a bound relation refers to, for a select.
    pub related: Option<Traced<EntityRef>>,
}

#[derive(Serialize, Deserialize)]
pub struct State {
    pub name: String,
    pub label: String,
}

pub fn extract(model: &Model) -> Result<View> {
    let ui = Ui::read(model)?;
    let nav = ui
        .pages
        .iter()
        .map(|p| {
            let item = NavItem {
                title: p.title.clone(),
                href: p.file(),
            };
            Traced::new(&p.iri, item)
        })
        .collect();
    let pages = ui
        .pages
        .iter()
        .map(|page| {
            let view = Page {
                title: page.title.clone(),
                file: page.file(),
                components: page.components.iter().map(|c| component(&ui, c)).collect(),
                links: page.flows.iter().map(|f| f.link()).collect(),
            };
            Traced::new(&page.iri, view)
        })
        .collect();
    let app = Traced::new(
        &ui.app.iri,
        Title {
            title: ui.app.title.clone(),
        },
    );
    Ok(View { app, pages, nav })
}

fn entity_ref(ui: &Ui, iri: &str) -> Option<Traced<EntityRef>> {
    ui.entity(iri).map(|e| e.view_ref())
}

fn component(ui: &Ui, c: &seams_ui_model::Component) -> Traced<Component> {
    let kind = match c.kind {
        Kind::List => ComponentKind::List {
            empty_text: c.empty_text.clone(),
        },
        Kind::CreateForm | Kind::UpdateForm => ComponentKind::Form {
            update: c.kind == Kind::UpdateForm,
            submit_label: c.submit_label.clone(),
            fields: c.fields.iter().map(|f| field(ui, f)).collect(),
        },
    };
    let view = Component {
        label: c.label.clone(),
        slug: c.slug.clone(),
        entity: c.entity.as_deref().and_then(|e| entity_ref(ui, e)),
        links: c.flows.iter().map(|f| f.link()).collect(),
        kind,
    };
    Traced::new(&c.iri, view)
}

fn field(ui: &Ui, f: &seams_ui_model::Field) -> Traced<Field> {
    let mut view = Field {
        label: f.label.clone(),
        name: f.name.clone(),
        input_type: f.input_type.clone(),
        required: f.required,
        step: "any".into(),
        states: Vec::new(),
        related: None,
    };
    let member = f.binds.as_deref().and_then(|b| ui.member(b));
    let origin = match member {
        Some((_, Member::Attribute(a))) => {
            if let Some(step) = match a.datatype {
                Datatype::Integer => Some("1"),
                Datatype::Decimal => Some("0.01"),
                _ => None,
            } {
                view.step = step.into();
            }
            view.states = a
                .states
                .iter()
                .map(|s| {
                    let state = State {
                        name: s.name.clone(),
                        label: s.label.clone(),
                    };
                    Traced::new(&s.iri, state)
                })
                .collect();
            Some(&a.iri)
        }
        Some((_, Member::Relation(r))) => {
            view.related = entity_ref(ui, &r.target);
            Some(&r.iri)
        }
        None => None,
    };
    let traced = Traced::new(&f.iri, view);
    match origin {
        Some(iri) => traced.origin(iri),
        None => traced,
    }
}
