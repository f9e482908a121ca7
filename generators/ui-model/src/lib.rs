//! The seams UI vocabulary (`vocabulary/ui.ttl`) read into Rust
//! values: one application, its pages with their lists, forms and
//! navigation flows, and the entities they show and change.
//!
//! Every built-in generator reads the model through [`Ui::read`], so the
//! htmx pages, the FastAPI routes and the compose services agree on names,
//! routes and order. Whatever the model gets wrong is an error naming the
//! resource and property.

use seams_sdk::{Error, Model, Result, Traced};
use serde::{Deserialize, Serialize};

mod queries;
pub mod sql;

/// The vocabulary's namespace.
pub const UI: &str = "https://w3id.org/seams/ui#";

/// The vocabulary the built-ins read, with its shapes: what each declares
/// in its meta, so that seams checks a model against it before running
/// them.
pub fn vocabulary() -> seams_sdk::Vocabulary {
    seams_sdk::Vocabulary::new(UI, include_str!("../../../vocabulary/ui.ttl"))
        .shapes(include_str!("../../../vocabulary/ui.shapes.ttl"))
}

const XSD: &str = "http://www.w3.org/2001/XMLSchema#";

/// The whole model as the generators see it.
#[derive(Debug, Clone)]
pub struct Ui {
    /// The one `ui:Application`.
    pub app: App,
    /// Its pages, by `ui:order` then IRI.
    pub pages: Vec<Page>,
    /// The entities, by `ui:order` then IRI.
    pub entities: Vec<Entity>,
    /// Entities and their members by IRI, built on first lookup.
    index: std::sync::OnceLock<Index>,
}

/// Where an entity or member is in [`Ui::entities`].
#[derive(Debug, Clone, Default)]
struct Index {
    entities: std::collections::HashMap<String, usize>,
    /// Entity, whether a relation, position among its attributes or
    /// relations.
    members: std::collections::HashMap<String, (usize, bool, usize)>,
}

/// A `ui:Application`.
#[derive(Debug, Clone)]
pub struct App {
    /// Its IRI.
    pub iri: String,
    /// Its `rdfs:label`.
    pub title: String,
    /// Its `ui:homePage`, if any: (page IRI, page path).
    pub home: Option<(String, String)>,
    /// Its `ui:database`, if any.
    pub database: Option<Database>,
}

/// A `ui:Database`.
#[derive(Debug, Clone)]
pub struct Database {
    /// Its IRI.
    pub iri: String,
    /// Its `ui:engine`.
    pub engine: String,
    /// The local name of its IRI: the database and user name.
    pub slug: String,
}

/// A `ui:Page`.
#[derive(Debug, Clone)]
pub struct Page {
    /// Its IRI.
    pub iri: String,
    /// Its `rdfs:label`.
    pub title: String,
    /// Its `ui:path`: a plain file-name segment.
    pub path: String,
    /// The lists and forms it contains, in order.
    pub components: Vec<Component>,
    /// The flows its own events start.
    pub flows: Vec<Flow>,
}

impl Page {
    /// The file the htmx generator writes it to.
    pub fn file(&self) -> String {
        page_file(&self.path)
    }
}

/// What a component is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A `ui:List`: shows records.
    List,
    /// A `ui:Form` with `ui:creates`, or with neither `ui:creates` nor
    /// `ui:updates`.
    CreateForm,
    /// A `ui:Form` with `ui:updates`.
    UpdateForm,
}

/// A `ui:List` or `ui:Form` on a page.
#[derive(Debug, Clone)]
pub struct Component {
    /// Its IRI.
    pub iri: String,
    /// List or form.
    pub kind: Kind,
    /// Its `rdfs:label`.
    pub label: String,
    /// The local name of its IRI: its HTML id and API route segment.
    pub slug: String,
    /// A list's `ui:emptyText` (default "Nothing here yet.").
    pub empty_text: String,
    /// A form's `ui:submitLabel` (default "Submit").
    pub submit_label: String,
    /// The entity a list shows or a form creates or updates.
    pub entity: Option<String>,
    /// A form's fields, in order.
    pub fields: Vec<Field>,
    /// The flows its events start.
    pub flows: Vec<Flow>,
}

/// A `ui:Field` of a form.
#[derive(Debug, Clone)]
pub struct Field {
    /// Its IRI.
    pub iri: String,
    /// Its `rdfs:label`.
    pub label: String,
    /// Its `ui:name`: the name it is submitted under.
    pub name: String,
    /// Its `ui:inputType` (default "text").
    pub input_type: String,
    /// Its `ui:required`.
    pub required: bool,
    /// The attribute or relation it sets (`ui:binds`).
    pub binds: Option<String>,
}

/// A `ui:NavigationFlow`.
#[derive(Debug, Clone)]
pub struct Flow {
    /// Its IRI.
    pub iri: String,
    /// The event that starts it.
    pub event: String,
    /// Its `rdfs:label`: the link text.
    pub label: String,
    /// The target page's IRI.
    pub target: String,
    /// The target page's file.
    pub href: String,
}

impl Flow {
    /// The flow as a link, traced to the flow, its event and its target
    /// page.
    pub fn link(&self) -> Traced<Link> {
        Traced::new(
            &self.iri,
            Link {
                label: self.label.clone(),
                href: self.href.clone(),
            },
        )
        .origin(&self.event)
        .origin(&self.target)
    }
}

/// A navigation flow's view: a link.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Link {
    /// The link text.
    pub label: String,
    /// The target page's file.
    pub href: String,
}

/// An entity's view where a component, field or relation refers to it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct EntityRef {
    /// Its `ui:name`.
    pub name: String,
    /// Its snake-case name.
    pub slug: String,
    /// Its `rdfs:label`.
    pub label: String,
}

/// The view of the page the application opens on.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Home {
    /// The page's file.
    pub file: String,
}

/// A `ui:Entity`.
#[derive(Debug, Clone)]
pub struct Entity {
    /// Its IRI.
    pub iri: String,
    /// Its `rdfs:label`.
    pub label: String,
    /// Its `ui:name`: a class name.
    pub name: String,
    /// The snake-case of its name: route segments and event names.
    pub slug: String,
    /// Its attributes, in order.
    pub attributes: Vec<Attribute>,
    /// Its relations, in order.
    pub relations: Vec<Relation>,
}

impl Entity {
    /// The entity as a component, field or relation refers to it.
    pub fn view_ref(&self) -> Traced<EntityRef> {
        Traced::new(
            &self.iri,
            EntityRef {
                name: self.name.clone(),
                slug: self.slug.clone(),
                label: self.label.clone(),
            },
        )
    }
}

/// An attribute's value type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Datatype {
    /// `xsd:string`.
    String,
    /// `xsd:integer`.
    Integer,
    /// `xsd:decimal`.
    Decimal,
    /// `xsd:boolean`.
    Boolean,
    /// `xsd:date`.
    Date,
}

impl Datatype {
    /// The local name of its XSD IRI.
    pub fn name(self) -> &'static str {
        match self {
            Datatype::String => "string",
            Datatype::Integer => "integer",
            Datatype::Decimal => "decimal",
            Datatype::Boolean => "boolean",
            Datatype::Date => "date",
        }
    }
}

/// A `ui:Attribute`.
#[derive(Debug, Clone)]
pub struct Attribute {
    /// Its IRI.
    pub iri: String,
    /// Its `rdfs:label`.
    pub label: String,
    /// Its `ui:name`: a Python identifier.
    pub name: String,
    /// Its `ui:datatype`.
    pub datatype: Datatype,
    /// Its `ui:required`.
    pub required: bool,
    /// Its states, in order, when it is a status.
    pub states: Vec<State>,
}

/// A `ui:Relation`.
#[derive(Debug, Clone)]
pub struct Relation {
    /// Its IRI.
    pub iri: String,
    /// Its `rdfs:label`.
    pub label: String,
    /// Its `ui:name`: a Python identifier.
    pub name: String,
    /// The related entity's IRI.
    pub target: String,
    /// Its `ui:required`.
    pub required: bool,
}

/// A `ui:State` of a status attribute.
#[derive(Debug, Clone)]
pub struct State {
    /// Its IRI.
    pub iri: String,
    /// Its `rdfs:label`.
    pub label: String,
    /// Its `ui:name`: the value stored.
    pub name: String,
    /// Its `ui:initial`.
    pub initial: bool,
    /// The names of the states it may move to (`ui:next`), in state order.
    pub next: Vec<String>,
}

impl Ui {
    /// Reads the UI model.
    ///
    /// # Errors
    ///
    /// A query fails, or the model breaks a rule of the vocabulary (the
    /// message names the resource and property).
    pub fn read(model: &Model) -> Result<Ui> {
        queries::read(model)
    }

    /// The page the application opens on (its `ui:homePage`, else its
    /// first page), traced to the page and the application.
    pub fn home(&self) -> Option<Traced<Home>> {
        let (iri, file) = match &self.app.home {
            Some((iri, path)) => (iri.as_str(), page_file(path)),
            None => self.pages.first().map(|p| (p.iri.as_str(), p.file()))?,
        };
        Some(Traced::new(iri, Home { file }).origin(&self.app.iri))
    }

    /// A UI of these parts.
    pub(crate) fn new(app: App, pages: Vec<Page>, entities: Vec<Entity>) -> Ui {
        Ui {
            app,
            pages,
            entities,
            index: std::sync::OnceLock::new(),
        }
    }

    /// The index of entities and members, the first of each IRI winning.
    fn index(&self) -> &Index {
        self.index.get_or_init(|| {
            let mut index = Index::default();
            for (e, entity) in self.entities.iter().enumerate() {
                index.entities.entry(entity.iri.clone()).or_insert(e);
                for (a, attribute) in entity.attributes.iter().enumerate() {
                    index
                        .members
                        .entry(attribute.iri.clone())
                        .or_insert((e, false, a));
                }
                for (r, relation) in entity.relations.iter().enumerate() {
                    index
                        .members
                        .entry(relation.iri.clone())
                        .or_insert((e, true, r));
                }
            }
            index
        })
    }

    /// The entity with IRI `iri`.
    pub fn entity(&self, iri: &str) -> Option<&Entity> {
        self.index().entities.get(iri).map(|&e| &self.entities[e])
    }

    /// The attribute or relation with IRI `iri`, and its entity.
    pub fn member(&self, iri: &str) -> Option<(&Entity, Member<'_>)> {
        let &(e, relation, i) = self.index().members.get(iri)?;
        let entity = &self.entities[e];
        Some(if relation {
            (entity, Member::Relation(&entity.relations[i]))
        } else {
            (entity, Member::Attribute(&entity.attributes[i]))
        })
    }

    /// Every component of every page, in page order.
    pub fn components(&self) -> impl Iterator<Item = &Component> {
        self.pages.iter().flat_map(|p| &p.components)
    }
}

/// What a field binds.
#[derive(Debug, Clone, Copy)]
pub enum Member<'a> {
    /// An attribute.
    Attribute(&'a Attribute),
    /// A relation.
    Relation(&'a Relation),
}

/// The file a page with `path` is written to.
pub fn page_file(path: &str) -> String {
    format!("{path}.html")
}

/// The local name of an IRI (after the last `#` or `/`), with characters
/// other than ASCII letters, digits, `-` and `_` replaced by `-`.
pub fn slug(iri: &str) -> String {
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

/// A slug or page path as part of a Python name (`new-item` → `new_item`);
/// [`Ui::read`] makes sure no two collide.
pub fn python_name(slug: &str) -> String {
    slug.replace('-', "_")
}

/// `ExpenseReport` → `expense_report`.
pub fn snake_case(name: &str) -> String {
    let mut out = String::new();
    for (i, c) in name.chars().enumerate() {
        if c.is_ascii_uppercase() {
            if i > 0 {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// Python keywords and the names the generated code uses itself.
const RESERVED: &[&str] = &[
    "and",
    "as",
    "assert",
    "async",
    "await",
    "break",
    "class",
    "continue",
    "def",
    "del",
    "elif",
    "else",
    "except",
    "false",
    "finally",
    "for",
    "from",
    "global",
    "id",
    "if",
    "import",
    "in",
    "is",
    "lambda",
    "none",
    "nonlocal",
    "not",
    "or",
    "pass",
    "raise",
    "return",
    "true",
    "try",
    "while",
    "with",
    "yield",
    "model_config",
    "model_fields",
];

fn check_identifier(iri: &str, name: &str) -> Result<()> {
    let mut chars = name.chars();
    let ok = chars.next().is_some_and(|c| c.is_ascii_lowercase())
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    if !ok {
        return Err(Error::msg(format!(
            "<{iri}> has ui:name {name:?}; use a lowercase letter, then lowercase letters, digits and '_'"
        )));
    }
    if RESERVED.contains(&name) {
        return Err(Error::msg(format!(
            "<{iri}> has ui:name {name:?}, which the generated Python reserves; choose another name"
        )));
    }
    Ok(())
}

fn check_class_name(iri: &str, name: &str) -> Result<()> {
    let mut chars = name.chars();
    let ok = chars.next().is_some_and(|c| c.is_ascii_uppercase())
        && chars.all(|c| c.is_ascii_alphanumeric());
    if ok {
        Ok(())
    } else {
        Err(Error::msg(format!(
            "entity <{iri}> has ui:name {name:?}; use an uppercase letter, then letters and digits"
        )))
    }
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

fn datatype(attribute: &str, iri: &str) -> Result<Datatype> {
    let local = iri.strip_prefix(XSD).unwrap_or("");
    Ok(match local {
        "string" => Datatype::String,
        "integer" => Datatype::Integer,
        "decimal" => Datatype::Decimal,
        "boolean" => Datatype::Boolean,
        "date" => Datatype::Date,
        _ => {
            return Err(Error::msg(format!(
                "attribute <{attribute}> has ui:datatype <{iri}>; use xsd:string, xsd:integer, xsd:decimal, xsd:boolean or xsd:date"
            )));
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_become_routes_and_identifiers_are_checked() {
        assert_eq!(snake_case("ExpenseReport"), "expense_report");
        assert_eq!(
            slug("https://example.org/x#new_message_form"),
            "new_message_form"
        );
        assert!(check_identifier("i", "amount_2").is_ok());
        assert!(check_identifier("i", "Amount").is_err());
        assert!(check_identifier("i", "class").is_err());
        assert!(check_class_name("i", "LineItem").is_ok());
        assert!(check_class_name("i", "line_item").is_err());
        assert!(check_path("p", "a/b").is_err());
    }
}
