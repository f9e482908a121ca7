//! The host's template service: renders a generator's own templates with
//! minijinja, in the generator's chosen syntax.
//!
//! Rendering belongs to the host so that the host knows the text of every
//! rendered file. A [`Rendered`] keeps the template name and context it was
//! made from, so that [`TemplateService::trace`] can run the second,
//! tracing render of ADR-0019 on the same inputs: the same templates,
//! instrumented (see `instrument`), print a sentinel after the text of
//! every template line and after every value; stripping them must give the
//! normal render back, byte for byte.
//!
//! When nothing in a generator's templates can make the two differ (see
//! `instrument`), and the context cannot hold a sentinel, a render to be
//! traced is made once, instrumented: its stripped text is the output.

use std::collections::BTreeMap;
use std::sync::Arc;

use minijinja::value::Value;
use minijinja::{Environment, Error};

use crate::citations::{Citations, SidecarStart};
use crate::context::SharedFields;
use crate::environment::environment;
use crate::error::TemplateError;
use crate::recorder::{MarkInfo, Origins, TRACE, TraceState, fuel_spent, tracing_environment};
use crate::sentinel::{
    RESERVED_PREFIX, SENTINEL_CLOSE, SENTINEL_OPEN, may_hold_sentinel, sentinel_bytes,
};
use crate::syntax::{Delimiters, Syntax};
use crate::trace::{HeadWriter, TraceLine};
use crate::view::{ByValue, IriReader, iri_text, view_iris};
use crate::walk::{Line, Scopes, Walk, same_text, strip};

/// The templates of one generator, parsed once, rendered many times.
///
/// Every template is rendered with `trim_blocks` and `lstrip_blocks` (a
/// line holding only a block tag leaves no blank line) and with its
/// trailing newline kept; an undefined variable is an error; `.html` and
/// `.xml` templates auto-escape.
pub struct TemplateService {
    env: Environment<'static>,
    traced: Environment<'static>,
    origins: Arc<Origins>,
    sources: BTreeMap<String, String>,
    /// The first template line, if any, that could make a stripped tracing
    /// render differ from the normal render: then every traced render is
    /// rendered twice.
    unsure: Option<String>,
    shared: SharedFields,
    /// Whether the tracing render keeps the output of shared loops
    /// ([`crate::fragment`]).
    fragments: bool,
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
        Self::made(templates, syntax, true)
    }

    /// [`TemplateService::new`] for renders that are never traced: the
    /// tracing render's templates are not made (instrumenting and parsing
    /// them again were half of parsing the templates). A tracing render
    /// of its templates finds none.
    ///
    /// # Errors
    ///
    /// A template that does not parse, named with its line.
    pub fn untraced(
        templates: impl IntoIterator<Item = (String, String)>,
        syntax: Syntax,
    ) -> Result<Self, TemplateError> {
        Self::made(templates, syntax, false)
    }

    fn made(
        templates: impl IntoIterator<Item = (String, String)>,
        syntax: Syntax,
        tracing: bool,
    ) -> Result<Self, TemplateError> {
        let mut env = environment(syntax);
        let delimiters = Delimiters::for_syntax(syntax);
        let mut sources = BTreeMap::new();
        let mut origins = Origins::default();
        let mut instrumented = Vec::new();
        let mut unsure = None;
        // A template's top-level names may be given elsewhere (by a
        // template extending it, say): fragments only where none can.
        let templates: Vec<(String, String)> = templates.into_iter().collect();
        let fragments = templates
            .iter()
            .all(|(_, source)| crate::fragment::template_allows(source, &delimiters));
        let mut shared_loops = 0;
        for (name, source) in templates {
            if let Some(at) = source.find(RESERVED_PREFIX) {
                return Err(TemplateError {
                    line: Some(source[..at].matches('\n').count() + 1),
                    template: name,
                    message: format!(
                        "uses the name prefix {}, which the host reserves for its tracing render; rename it",
                        RESERVED_PREFIX
                    ),
                });
            }
            env.add_template_owned(name.clone(), source.clone())
                .map_err(|e| TemplateError::from_minijinja(&name, &e))?;
            if !tracing {
                sources.insert(name, source);
                continue;
            }
            let made = crate::instrument::instrument(
                &name,
                &source,
                &delimiters,
                fragments,
                &mut |line| origins.add(&name, line),
            )?;
            shared_loops += made.shared_loops;
            if let (None, Some((line, why))) = (&unsure, made.unsure) {
                unsure = Some(format!("{name}:{line} ({why})"));
            }
            instrumented.push((name.clone(), made.source));
            sources.insert(name, source);
        }
        let origins = Arc::new(origins);
        let mut traced = tracing_environment(syntax, &origins);
        for (name, source) in instrumented {
            traced
                .add_template_owned(name.clone(), source)
                .map_err(|e| TemplateError::from_minijinja(&name, &e))?;
        }
        Ok(TemplateService {
            env,
            traced,
            origins,
            sources,
            unsure,
            shared: SharedFields::default(),
            fragments: shared_loops > 0,
        })
    }

    /// A fuel budget other than [`RENDER_FUEL`] per normal render, the
    /// tracing render getting four times as much.
    #[cfg(test)]
    fn set_fuel(&mut self, fuel: u64) {
        self.env.set_fuel(Some(fuel));
        self.traced.set_fuel(Some(fuel * 4));
    }

    /// Whether a render to be traced is made once, instrumented
    /// ([`TemplateService::render_json_to_trace`]); else, the first
    /// template line that makes it twice, and why.
    pub fn renders_once(&self) -> Result<(), &str> {
        self.unsure.as_deref().map_or(Ok(()), Err)
    }

    /// Whether the tracing render of some template reuses the output of a
    /// loop over a list the last render looped over (a shared loop):
    /// a render made once then costs less than a normal render.
    pub fn keeps_fragments(&self) -> bool {
        self.fragments
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
        if !context.is_object() {
            return Err(not_an_object(name));
        }
        self.render_value(name, Value::from(minijinja::value::Serde(&context)))
    }

    /// Renders template `name` with `context`, the text of a JSON object,
    /// read straight into the template engine's values: no JSON tree is
    /// built on the way (that was a third of a page's cost).
    ///
    /// # Errors
    ///
    /// As [`TemplateService::render`], and a context that is not JSON.
    pub fn render_json(&self, name: &str, context: &str) -> Result<Rendered, TemplateError> {
        self.render_value(name, self.context_value(name, context)?)
    }

    /// As [`TemplateService::render_json`], for a render that will be
    /// traced. When no template can make the stripped tracing render
    /// differ from the normal render ([`TemplateService::renders_once`])
    /// and the context holds no sentinel character, the tracing render is
    /// the only render made: the text is its stripped text, filled in when
    /// it is traced, and [`Rendered::text_len`] gives its length at once.
    ///
    /// # Errors
    ///
    /// As [`TemplateService::render_json`]: a render that fails is the
    /// normal render's failure, exactly.
    pub fn render_json_to_trace(
        &self,
        name: &str,
        context: &str,
    ) -> Result<Rendered, TemplateError> {
        let value = self.context_value(name, context)?;
        if self.unsure.is_some() || may_hold_sentinel(context) {
            return self.render_value(name, value);
        }
        match self.render_traced_value(name, value.clone()) {
            // It spent more than a normal render may: whether the normal
            // render runs out is for the normal render to say, as it does
            // when a render is made twice. Without this, a render would
            // pass or fail by how it was made.
            Ok((_, spent)) if spent > self.env.fuel().unwrap_or(u64::MAX) => {
                self.render_value(name, value)
            }
            Ok((traced, _)) => {
                let marks = TRACE.with_borrow_mut(TraceState::take_marks);
                Ok(Rendered {
                    template: name.to_owned(),
                    value,
                    text: String::new(),
                    trace: None,
                    traced: Some(Box::new(TracedRender {
                        text_len: traced.len() - sentinel_bytes(&traced),
                        text: traced,
                        marks,
                    })),
                })
            }
            // What the normal render says: its error (running out of
            // fuel included), or its text, whose trace then reports what
            // failed.
            Err(_) => self.render_value(name, value),
        }
    }

    /// The normal render of `rendered`'s template and context once more:
    /// for measuring the render against the tracing render.
    ///
    /// # Errors
    ///
    /// As [`TemplateService::render`].
    pub fn render_again(&self, rendered: &Rendered) -> Result<Rendered, TemplateError> {
        self.render_value(&rendered.template, rendered.value.clone())
    }

    fn render_value(&self, name: &str, value: Value) -> Result<Rendered, TemplateError> {
        let template = self.env.get_template(name).map_err(|_| TemplateError {
            template: name.to_owned(),
            line: None,
            message: format!(
                "no such template; the generator's templates are: {}",
                self.sources.keys().cloned().collect::<Vec<_>>().join(", ")
            ),
        })?;
        let text = template
            .render(value.clone())
            .map_err(|e| TemplateError::from_minijinja(name, &e))?;
        Ok(Rendered {
            trace: None,
            template: name.to_owned(),
            value,
            text,
            traced: None,
        })
    }

    /// The tracing render of `rendered`: for every non-blank line of its
    /// text, the template lines that wrote it (outermost include first)
    /// and the model IRIs behind it.
    ///
    /// # Errors
    ///
    /// The text already holds a sentinel character, or stripping the
    /// sentinels does not give the text back; either names the template
    /// and line.
    pub fn trace(&self, rendered: &mut Rendered) -> Result<Vec<TraceLine>, TemplateError> {
        let mut lines = Vec::new();
        self.walk_trace(rendered, Scopes::Kept, &mut ByValue, &mut |line, _| {
            lines.push(TraceLine {
                line: line.number,
                templates: line.templates.iter().map(|&t| t.to_owned()).collect(),
                terms: line.terms.iter().map(|t| iri_text(t).to_owned()).collect(),
                scope: line.scope.iter().map(|t| iri_text(t).to_owned()).collect(),
            });
        })?;
        Ok(lines)
    }

    /// [`TemplateService::trace`], written straight into the start of the
    /// output's sidecar ([`crate::sidecar_head`]'s text), with the terms
    /// the trace cites, numbered in `citations`: for the sidecar, a line's
    /// IRIs are the thread's numbers, its texts the thread's strings, not
    /// copies into [`TraceLine`]s (thousands of pages that each cite the
    /// same thousands of objects).
    ///
    /// # Errors
    ///
    /// As [`TemplateService::trace`].
    pub fn trace_to_sidecar(
        &self,
        rendered: &mut Rendered,
        generator: &str,
        citations: &mut Citations,
    ) -> Result<SidecarStart, TemplateError> {
        // A guess at the line count, capped: a render of one huge line
        // must not reserve a sidecar of its size; past the cap, it grows.
        // A line of 48 bytes on average or more: a navigation page's
        // lines average 52 (guessing 64, every page's sidecar outgrew its
        // room and was copied, 400 KB a page at expense x1000).
        let mut head = HeadWriter::new(generator, (rendered.text_len() / 48).min(1 << 16));
        let mut cited: Vec<u32> = Vec::new();
        citations.next_trace();
        self.walk_trace(
            rendered,
            Scopes::Dropped,
            citations,
            &mut |line, citations| {
                head.line(
                    line.number,
                    line.templates.iter().copied(),
                    line.terms.iter().map(|&t| citations.text(t)),
                );
                cited.extend_from_slice(line.terms);
            },
        )?;
        // Numbered as met, so mostly in order already: sorted as numbers
        // (each text has one), then by text.
        cited.sort_unstable();
        cited.dedup();
        citations.sort_by_text(&mut cited);
        Ok(SidecarStart {
            head: head.finish(),
            cited,
        })
    }

    /// Traces `rendered` (see [`TemplateService::trace`]) and shows each
    /// traced line to `visit`, in order; each line's scope only when
    /// [`Scopes::Kept`], else only where the line's terms come from it.
    fn walk_trace<R: IriReader>(
        &self,
        rendered: &mut Rendered,
        scopes: Scopes,
        reader: &mut R,
        visit: &mut dyn FnMut(Line<'_, R::Iri>, &R),
    ) -> Result<(), TemplateError> {
        let name = rendered.template.as_str();
        let root = view_iris(&rendered.value).unwrap_or_default();
        let walk = Walk {
            name,
            origins: &self.origins,
            root: &root,
            scopes,
        };
        if let Some(made) = rendered.traced.take() {
            let TracedRender {
                text: traced,
                marks,
                text_len,
            } = *made;
            let stripped = strip(&traced, marks.len());
            if stripped.text.len() != text_len {
                return Err(TemplateError {
                    template: name.to_owned(),
                    line: None,
                    message: "the tracing render's sentinels do not add up; this is a bug in seams"
                        .to_owned(),
                });
            }
            drop(traced);
            let walked = walk.lines(&stripped, &marks, reader, visit);
            rendered.text = stripped.text;
            return walked;
        }
        let collision = [SENTINEL_OPEN, SENTINEL_CLOSE]
            .iter()
            .filter_map(|c| {
                memchr::memmem::find(rendered.text.as_bytes(), c.to_string().as_bytes())
            })
            .min();
        if let Some(at) = collision {
            let line = rendered.text[..at].matches('\n').count() + 1;
            return Err(TemplateError {
                template: name.to_owned(),
                line: None,
                message: format!(
                    "output line {line} already holds the tracing sentinel character U+F8F0 or U+F8F1, so it cannot be traced; remove it from the model or template"
                ),
            });
        }
        let (traced, _) = self
            .render_traced_value(name, rendered.value.clone())
            .map_err(|e| TemplateError::from_minijinja(name, &e))?;
        TRACE.with_borrow(|st| {
            let stripped = strip(&traced, st.marks.len());
            same_text(name, &stripped, &rendered.text, &st.marks, &self.origins)?;
            walk.lines(&stripped, &st.marks, reader, visit)
        })
    }

    /// The instrumented render of `rendered`'s template and context: its
    /// text with sentinels, the marks recorded in this thread's trace
    /// state.
    #[cfg(test)]
    pub(crate) fn render_traced(&self, rendered: &Rendered) -> Result<String, Error> {
        self.render_traced_value(&rendered.template, rendered.value.clone())
            .map(|(text, _)| text)
    }

    /// The instrumented render: its text with sentinels (the marks in
    /// this thread's trace state), and the fuel it spent.
    fn render_traced_value(&self, name: &str, value: Value) -> Result<(String, u64), Error> {
        let template = self.traced.get_template(name)?;
        TRACE.with_borrow_mut(TraceState::reset);
        let captured = template.render_captured(value)?;
        let spent = fuel_spent(captured.state());
        Ok((captured.into_output(), spent))
    }
}

impl TemplateService {
    /// A context's text, read straight into the template engine's values;
    /// its large fields read once while they recur ([`SharedFields`]).
    fn context_value(&self, name: &str, context: &str) -> Result<Value, TemplateError> {
        if let Some(value) = self.shared.read(context) {
            return Ok(value);
        }
        // Not an object of JSON fields: read whole, for the error.
        let value: Value = serde_json::from_str(context).map_err(|e| TemplateError {
            template: name.to_owned(),
            line: None,
            message: format!("the context is not JSON: {e}"),
        })?;
        if value.kind() != minijinja::value::ValueKind::Map {
            return Err(not_an_object(name));
        }
        Ok(value)
    }
}

fn not_an_object(name: &str) -> TemplateError {
    TemplateError {
        template: name.to_owned(),
        line: None,
        message: "the context must be a JSON object".into(),
    }
}

/// Text the service rendered, with the inputs it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct Rendered {
    /// The template rendered.
    pub template: String,
    /// The context it was rendered with, as the template engine saw it,
    /// kept for the tracing render.
    value: Value,
    /// The output.
    pub text: String,
    /// Its trace, once the host traced it (the runtime traces each render
    /// as it is made, then sheds the context).
    pub trace: Option<Vec<TraceLine>>,
    /// The tracing render, when it was the only render made: `text` is its
    /// stripped text, filled in when it is traced.
    traced: Option<Box<TracedRender>>,
}

/// A tracing render made in place of the normal render.
#[derive(Debug, Clone, PartialEq)]
struct TracedRender {
    /// Its text, with sentinels.
    text: String,
    marks: Vec<MarkInfo>,
    /// The length of its text without them.
    text_len: usize,
}

impl Rendered {
    /// The length of the text, also before a render made once is traced.
    pub fn text_len(&self) -> usize {
        self.traced.as_ref().map_or(self.text.len(), |t| t.text_len)
    }

    /// Frees what only the tracing render needs, the context: call it
    /// once the text is traced. The template's name and the text stay.
    pub fn shed(&mut self) {
        self.value = Value::UNDEFINED;
    }

    /// Moves the text, context and trace out into a render of their own,
    /// leaving this one only the template's name: for finishing the render
    /// on another thread while its handle stays with the generator.
    pub fn detach(&mut self) -> Rendered {
        Rendered {
            template: self.template.clone(),
            value: std::mem::replace(&mut self.value, Value::UNDEFINED),
            text: std::mem::take(&mut self.text),
            trace: self.trace.take(),
            traced: self.traced.take(),
        }
    }
}

#[cfg(test)]
mod tests;
