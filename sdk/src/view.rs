use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Builds a *view object*: a JSON object with a string `iri`, optionally a
/// sorted `origins` array of further IRIs its extraction read, and fields.
///
/// The host traces every scalar value read off a view object to its `iri`
/// and `origins`; a template line that prints none falls back to the IRIs
/// of the view object passed to its template.
///
/// ```
/// use seams_sdk::ViewObject;
/// let page = ViewObject::new("https://example.org/chat#thread")
///     .origin("https://example.org/chat#thread_title")
///     .field("title", "Thread");
/// let json = serde_json::Value::from(page);
/// assert_eq!(json["iri"], "https://example.org/chat#thread");
/// assert_eq!(json["origins"][0], "https://example.org/chat#thread_title");
/// assert_eq!(json["title"], "Thread");
/// ```
#[derive(Debug, Clone, PartialEq)]
#[must_use]
pub struct ViewObject {
    iri: String,
    origins: Vec<String>,
    fields: Map<String, Value>,
}

impl ViewObject {
    /// A view object for the model element `iri`.
    pub fn new(iri: impl Into<String>) -> Self {
        ViewObject {
            iri: iri.into(),
            origins: Vec::new(),
            fields: Map::new(),
        }
    }

    /// Records a further model element the extraction read.
    pub fn origin(mut self, iri: impl Into<String>) -> Self {
        self.origins.push(iri.into());
        self
    }

    /// Sets a field. `iri` and `origins` are reserved and ignored here.
    pub fn field(mut self, key: impl Into<String>, value: impl Into<Value>) -> Self {
        let key = key.into();
        if key != "iri" && key != "origins" {
            self.fields.insert(key, value.into());
        }
        self
    }
}

impl From<ViewObject> for Value {
    fn from(v: ViewObject) -> Value {
        let mut map = v.fields;
        map.insert("iri".into(), Value::String(v.iri));
        if !v.origins.is_empty() {
            let mut origins = v.origins;
            origins.sort();
            origins.dedup();
            map.insert(
                "origins".into(),
                Value::Array(origins.into_iter().map(Value::String).collect()),
            );
        }
        Value::Object(map)
    }
}

/// A typed *view object*: the model element `iri` a view shows, the further
/// elements its extraction read (`origins`, kept sorted and without
/// repeats), and the view's own fields, which serialize beside them.
///
/// ```
/// use seams_sdk::Traced;
/// use serde::{Deserialize, Serialize};
///
/// #[derive(Serialize, Deserialize)]
/// struct Page {
///     title: String,
/// }
///
/// let page = Traced::new("https://example.org/chat#thread", Page { title: "Thread".into() })
///     .origin("https://example.org/chat#thread_title");
/// assert_eq!(page.title, "Thread"); // the fields, through Deref
/// let json = serde_json::to_value(&page).unwrap();
/// assert_eq!(json["iri"], "https://example.org/chat#thread");
/// assert_eq!(json["origins"][0], "https://example.org/chat#thread_title");
/// assert_eq!(json["title"], "Thread");
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Traced<T> {
    /// The model element the view shows.
    pub iri: String,
    /// Further model elements the extraction read, sorted.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub origins: Vec<String>,
    /// The view's fields; `iri` and `origins` are reserved names.
    #[serde(flatten)]
    pub view: T,
}

impl<T> Traced<T> {
    /// A view object for the model element `iri`.
    pub fn new(iri: impl Into<String>, view: T) -> Self {
        Traced {
            iri: iri.into(),
            origins: Vec::new(),
            view,
        }
    }

    /// Records a further model element the extraction read.
    #[must_use]
    pub fn origin(mut self, iri: impl Into<String>) -> Self {
        let iri = iri.into();
        if let Err(at) = self.origins.binary_search(&iri) {
            self.origins.insert(at, iri);
        }
        self
    }
}

impl<T> std::ops::Deref for Traced<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.view
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    #[serde(tag = "kind", rename_all = "lowercase")]
    enum Component {
        List {
            empty_text: String,
        },
        Form {
            update: bool,
            related: Option<Traced<Name>>,
        },
    }

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct Name {
        name: String,
    }

    #[test]
    fn a_traced_view_is_the_view_object_the_builder_makes_and_reads_back() {
        let typed = Traced::new(
            "urn:f",
            Component::Form {
                update: true,
                related: None,
            },
        )
        .origin("urn:b")
        .origin("urn:a")
        .origin("urn:b");
        let built = ViewObject::new("urn:f")
            .origin("urn:b")
            .origin("urn:a")
            .field("kind", "form")
            .field("update", true)
            .field("related", Value::Null);
        assert_eq!(serde_json::to_value(&typed).unwrap(), Value::from(built));
        let text = serde_json::to_string(&typed).unwrap();
        let back: Traced<Component> = serde_json::from_str(&text).unwrap();
        assert_eq!(back, typed);
        // Without origins, there is no `origins` key, as with the builder.
        let plain = Traced::new("urn:n", Name { name: "n".into() });
        assert_eq!(
            serde_json::to_value(&plain).unwrap(),
            Value::from(ViewObject::new("urn:n").field("name", "n"))
        );
    }
}
