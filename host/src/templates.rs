//! The host's template service: renders a generator's own templates with
//! minijinja, in the generator's chosen syntax.
//!
//! Rendering belongs to the host so that the host knows the text of every
//! rendered file. A [`Rendered`] keeps the template name and context it was
//! made from, so that a second, tracing render of the same inputs can be
//! run later without the generator's help.

use std::collections::BTreeMap;

use minijinja::syntax::SyntaxConfig;
use minijinja::{Environment, UndefinedBehavior};

/// A template's delimiters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Syntax {
    /// `{{ }}`, `{% %}`, `{# #}`.
    #[default]
    Jinja,
    /// `[[ ]]`, `[% %]`, `[# #]`.
    Brackets,
}

/// Minijinja fuel for one render: enough for hundreds of thousands of loop
/// iterations, small enough that a runaway template stops in about a second.
const RENDER_FUEL: u64 = 50_000_000;

/// Why a template could not be loaded or rendered.
#[derive(Debug, Clone, thiserror::Error, PartialEq, Eq)]
#[error("template {template}{}: {message}", line.map(|l| format!(":{l}")).unwrap_or_default())]
pub struct TemplateError {
    /// The template's name.
    pub template: String,
    /// The 1-based line, when known.
    pub line: Option<usize>,
    /// What went wrong.
    pub message: String,
}

impl TemplateError {
    fn from_minijinja(template: &str, e: &minijinja::Error) -> Self {
        TemplateError {
            template: e.name().unwrap_or(template).to_owned(),
            line: e.line(),
            message: match e.detail() {
                Some(detail) => format!("{}: {detail}", e.kind()),
                None => e.kind().to_string(),
            },
        }
    }
}

/// The templates of one generator, parsed once, rendered many times.
///
/// Every template is rendered with `trim_blocks` and `lstrip_blocks` (a
/// line holding only a block tag leaves no blank line) and with its
/// trailing newline kept; an undefined variable is an error; `.html` and
/// `.xml` templates auto-escape.
pub struct TemplateService {
    env: Environment<'static>,
    sources: BTreeMap<String, String>,
}

impl std::fmt::Debug for TemplateService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TemplateService")
            .field("templates", &self.sources.keys().collect::<Vec<_>>())
            .finish()
    }
}

impl TemplateService {
    /// Parses `templates` (name, source) in `syntax`.
    ///
    /// # Errors
    ///
    /// A template that does not parse, named with its line.
    pub fn new(
        templates: impl IntoIterator<Item = (String, String)>,
        syntax: Syntax,
    ) -> Result<Self, TemplateError> {
        let mut env = Environment::new();
        env.set_syntax(syntax_config(syntax));
        env.set_undefined_behavior(UndefinedBehavior::Strict);
        env.set_fuel(Some(RENDER_FUEL));
        let mut sources = BTreeMap::new();
        for (name, source) in templates {
            env.add_template_owned(name.clone(), source.clone())
                .map_err(|e| TemplateError::from_minijinja(&name, &e))?;
            sources.insert(name, source);
        }
        Ok(TemplateService { env, sources })
    }

    /// The source of template `name`.
    pub fn source(&self, name: &str) -> Option<&str> {
        self.sources.get(name).map(String::as_str)
    }

    /// Renders template `name` with `context`, a JSON object.
    ///
    /// # Errors
    ///
    /// An unknown template, a context that is not an object, or a render
    /// error (undefined variable, fuel exhausted, ...), with its line.
    pub fn render(
        &self,
        name: &str,
        context: serde_json::Value,
    ) -> Result<Rendered, TemplateError> {
        let error = |message: String| TemplateError {
            template: name.to_owned(),
            line: None,
            message,
        };
        if !context.is_object() {
            return Err(error("the context must be a JSON object".into()));
        }
        let template = self.env.get_template(name).map_err(|_| {
            error(format!(
                "no such template; the generator's templates are: {}",
                self.sources.keys().cloned().collect::<Vec<_>>().join(", ")
            ))
        })?;
        let text = template
            .render(minijinja::Value::from(minijinja::value::Serde(&context)))
            .map_err(|e| TemplateError::from_minijinja(name, &e))?;
        Ok(Rendered {
            template: name.to_owned(),
            context,
            text,
        })
    }
}

fn syntax_config(syntax: Syntax) -> SyntaxConfig {
    let mut builder = SyntaxConfig::builder();
    if syntax == Syntax::Brackets {
        builder
            .block_delimiters("[%", "%]")
            .variable_delimiters("[[", "]]")
            .comment_delimiters("[#", "#]");
    }
    builder
        .trim_blocks(true)
        .lstrip_blocks(true)
        .keep_trailing_newline(true)
        .build()
        .expect("fixed delimiters are valid")
}

/// Text the service rendered, with the inputs it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct Rendered {
    /// The template rendered.
    pub template: String,
    /// The context it was rendered with.
    pub context: serde_json::Value,
    /// The output.
    pub text: String,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn service(syntax: Syntax, templates: &[(&str, &str)]) -> TemplateService {
        TemplateService::new(
            templates
                .iter()
                .map(|(n, s)| (n.to_string(), s.to_string())),
            syntax,
        )
        .unwrap()
    }

    #[test]
    fn jinja_syntax_renders_with_block_lines_trimmed() {
        let s = service(
            Syntax::Jinja,
            &[("a.txt", "{% for x in xs %}\n- {{ x }}\n{% endfor %}\nend\n")],
        );
        let r = s.render("a.txt", json!({"xs": [1, 2]})).unwrap();
        assert_eq!(r.text, "- 1\n- 2\nend\n");
    }

    #[test]
    fn bracket_syntax_leaves_braces_verbatim() {
        let s = service(
            Syntax::Brackets,
            &[(
                "a.vue",
                "<p>{{ vue }}</p>\n[% for x in xs %]\n[[ x ]]\n[# a comment line leaves nothing #]\n[% endfor %]\n",
            )],
        );
        let r = s.render("a.vue", json!({"xs": ["a"]})).unwrap();
        assert_eq!(r.text, "<p>{{ vue }}</p>\na\n");
    }

    #[test]
    fn includes_resolve_among_the_generators_templates() {
        let s = service(
            Syntax::Jinja,
            &[
                (
                    "page.html",
                    "<main>\n{% include \"part.html\" %}\n</main>\n",
                ),
                ("part.html", "<p>{{ t }}</p>\n"),
            ],
        );
        let r = s.render("page.html", json!({"t": "<b>"})).unwrap();
        assert_eq!(r.text, "<main>\n<p>&lt;b&gt;</p>\n</main>\n");
    }

    #[test]
    fn errors_name_the_template_and_line() {
        let err = TemplateService::new(
            [("bad.txt".to_string(), "ok\n{% for %}\n".to_string())],
            Syntax::Jinja,
        )
        .unwrap_err();
        assert_eq!(err.template, "bad.txt");
        assert_eq!(err.line, Some(2));

        let s = service(Syntax::Jinja, &[("a.txt", "line\n{{ missing }}\n")]);
        let err = s.render("a.txt", json!({})).unwrap_err();
        assert_eq!((err.template.as_str(), err.line), ("a.txt", Some(2)));
        let err = s.render("nope.txt", json!({})).unwrap_err();
        assert!(err.message.contains("a.txt"), "{err}");
        let err = s.render("a.txt", json!([1])).unwrap_err();
        assert!(err.message.contains("JSON object"), "{err}");
    }

    #[test]
    fn a_runaway_template_runs_out_of_fuel() {
        let s = service(
            Syntax::Jinja,
            &[(
                "a.txt",
                "{% for a in range(100000) %}{% for b in range(100000) %}x{% endfor %}{% endfor %}",
            )],
        );
        let err = s.render("a.txt", json!({})).unwrap_err();
        assert!(err.message.contains("fuel"), "{err}");
    }
}
