use crate::__internal::wit::exports::seams::generator::generator_api as api;

/// The delimiters of a generator's templates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Syntax {
    /// Jinja's `{{ }}`, `{% %}` and `{# #}`.
    #[default]
    Jinja,
    /// `[[ ]]`, `[% %]` and `[# #]`: text full of `{{` renders verbatim.
    Brackets,
}

/// One template the generator ships, by name.
#[derive(Debug, Clone)]
pub struct Template {
    name: String,
    source: String,
}

impl Template {
    /// A template called `name` (what `render` and `include` use) with its
    /// text; usually `include_str!("../templates/<name>")`.
    pub fn new(name: impl Into<String>, source: impl Into<String>) -> Self {
        Template {
            name: name.into(),
            source: source.into(),
        }
    }
}

/// A vocabulary the generator reads: the host checks the model against it
/// before running the generator, and refuses a model that uses a term of
/// its namespace that it does not define (a typo), or breaks its shapes.
#[derive(Debug, Clone)]
#[must_use]
pub struct Vocabulary {
    namespace: String,
    terms: String,
    shapes: Option<String>,
}

impl Vocabulary {
    /// The vocabulary of `namespace` (an IRI ending in `#` or `/`), whose
    /// terms `terms` defines in Turtle: every subject in the namespace is
    /// one. Usually `include_str!` of the vocabulary's document.
    pub fn new(namespace: impl Into<String>, terms: impl Into<String>) -> Self {
        Vocabulary {
            namespace: namespace.into(),
            terms: terms.into(),
            shapes: None,
        }
    }

    /// SHACL shapes (Turtle) the model must satisfy, in the subset the
    /// host supports (see seams's README).
    pub fn shapes(mut self, shapes: impl Into<String>) -> Self {
        self.shapes = Some(shapes.into());
        self
    }
}

/// Who a generator is and what it renders with. Built with [`Meta::new`],
/// then [`syntax`](Meta::syntax) (default Jinja) and one
/// [`template`](Meta::template) per template.
#[derive(Debug, Clone)]
#[must_use]
pub struct Meta {
    name: String,
    version: String,
    description: String,
    syntax: Syntax,
    templates: Vec<Template>,
    vocabularies: Vec<Vocabulary>,
}

impl Meta {
    /// A generator `name` (lowercase letters, digits, hyphens) at
    /// `version`, with a one-line description.
    pub fn new(
        name: impl Into<String>,
        version: impl Into<String>,
        description: impl Into<String>,
    ) -> Self {
        Meta {
            name: name.into(),
            version: version.into(),
            description: description.into(),
            syntax: Syntax::Jinja,
            templates: Vec::new(),
            vocabularies: Vec::new(),
        }
    }

    /// Sets the delimiters of every template.
    pub fn syntax(mut self, syntax: Syntax) -> Self {
        self.syntax = syntax;
        self
    }

    /// Adds a template.
    pub fn template(mut self, template: Template) -> Self {
        self.templates.push(template);
        self
    }

    /// Adds templates, in order: usually [`templates!`](crate::templates),
    /// which reads them from the package's `templates/` directory.
    pub fn templates(mut self, templates: impl IntoIterator<Item = Template>) -> Self {
        self.templates.extend(templates);
        self
    }

    /// Declares a vocabulary the generator reads.
    pub fn vocabulary(mut self, vocabulary: Vocabulary) -> Self {
        self.vocabularies.push(vocabulary);
        self
    }

    /// The templates' syntax.
    #[cfg(not(target_arch = "wasm32"))]
    pub(crate) fn syntax_of(&self) -> Syntax {
        self.syntax
    }

    /// The templates, as `(name, source)`.
    #[cfg(not(target_arch = "wasm32"))]
    pub(crate) fn templates_of(&self) -> Vec<(String, String)> {
        self.templates
            .iter()
            .map(|t| (t.name.clone(), t.source.clone()))
            .collect()
    }

    pub(crate) fn into_wit(self) -> api::Metadata {
        api::Metadata {
            name: self.name,
            version: self.version,
            description: self.description,
            syntax: match self.syntax {
                Syntax::Jinja => api::Syntax::Jinja,
                Syntax::Brackets => api::Syntax::Brackets,
            },
            templates: self
                .templates
                .into_iter()
                .map(|t| api::Template {
                    name: t.name,
                    source: t.source,
                })
                .collect(),
            vocabularies: self
                .vocabularies
                .into_iter()
                .map(|v| api::Vocabulary {
                    namespace: v.namespace,
                    terms: v.terms,
                    shapes: v.shapes,
                })
                .collect(),
        }
    }
}
