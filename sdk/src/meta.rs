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
        }
    }
}
