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
