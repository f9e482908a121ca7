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

use std::borrow::Cow;
use std::cell::{Cell, RefCell};
use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;

use minijinja::value::Value;
use minijinja::{Environment, Error, ErrorKind, UndefinedBehavior};

use crate::citations::Citations;
use crate::error::TemplateError;
use crate::syntax::{Delimiters, Syntax};
use crate::trace::{HeadWriter, TraceLine};

/// Opens a sentinel in the tracing render; a private-use character, so it
/// does not occur in real text (and when it does, tracing says so).
pub(crate) const SENTINEL_OPEN: char = '\u{F8F0}';
/// Closes a sentinel.
pub(crate) const SENTINEL_CLOSE: char = '\u{F8F1}';

/// Minijinja fuel for one render: enough for hundreds of thousands of loop
/// iterations, small enough that a runaway template stops in about a second.
const RENDER_FUEL: u64 = 50_000_000;

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

thread_local! {
    /// The tracing render's side channel, reset for every render. A render
    /// runs on one thread, so threads tracing at once each keep their own.
    static TRACE: RefCell<TraceState> = const {
        RefCell::new(TraceState {
            marks: Vec::new(),
            includes: Vec::new(),
            chain: None,
            taken: 0,
            kept: Vec::new(),
            pending: None,
            replays: 0,
        })
    };
    /// The mark of the value a tracing call just handed back: its sentinel
    /// follows the value when it is printed, which the next call to the
    /// formatter does (the call is all of a `{{ }}` tag's expression).
    static PRINTING: Cell<Option<usize>> = const { Cell::new(None) };
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
            if let Some(at) = source.find(crate::instrument::RESERVED_PREFIX) {
                return Err(TemplateError {
                    line: Some(source[..at].matches('\n').count() + 1),
                    template: name,
                    message: format!(
                        "uses the name prefix {}, which the host reserves for its tracing render; rename it",
                        crate::instrument::RESERVED_PREFIX
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

/// The large fields of recent contexts, read: a generator passes the same
/// navigation, say, to every page, and reading it for every page cost as
/// much as a tenth of a run. A field is looked up by its exact text, so a
/// context reads the same whether or not its fields were kept.
#[derive(Default)]
struct SharedFields {
    kept: std::sync::Mutex<std::collections::VecDeque<(Box<str>, Value)>>,
}

impl SharedFields {
    /// Fields shorter than this are read again: looking them up would
    /// cost about as much.
    const MIN_BYTES: usize = 4096;
    /// How many fields are kept, the most recently used first.
    const KEPT: usize = 4;
    /// Fields longer than this are not kept: the copy kept would cost
    /// more memory than a navigation list ever needs.
    const MAX_BYTES: usize = 8 << 20;

    /// `context` read, when it is a JSON object whose fields all read and
    /// one of them may be long enough to keep.
    fn read(&self, context: &str) -> Option<Value> {
        if context.len() < Self::MIN_BYTES {
            return None;
        }
        // The kept fields found in the context are taken while it is
        // split; the others are read after.
        let fields: Vec<(String, Result<Value, &str>)> = {
            let mut kept = self.kept.lock().ok()?;
            let texts: Vec<&str> = kept.iter().map(|(text, _)| &**text).collect();
            let fields = object_fields(context, &texts)?;
            let mut last = None;
            let fields = fields
                .into_iter()
                .map(|(key, field)| match field {
                    Field::Kept(at) => {
                        last = Some(at);
                        (key, Ok(kept[at].1.clone()))
                    }
                    Field::Raw(text) => (key, Err(text)),
                })
                .collect();
            if let Some(entry) = last.and_then(|at| kept.remove(at)) {
                kept.push_front(entry);
            }
            fields
        };
        // Later duplicates win, as when read whole.
        let mut pairs = BTreeMap::new();
        for (key, field) in fields {
            let value = match field {
                Ok(value) => value,
                Err(text) if (Self::MIN_BYTES..=Self::MAX_BYTES).contains(&text.len()) => {
                    self.field(text)?
                }
                Err(text) => serde_json::from_str::<Value>(text).ok()?,
            };
            pairs.insert(key, value);
        }
        Some(Value::from(pairs))
    }

    fn field(&self, text: &str) -> Option<Value> {
        {
            let mut kept = self.kept.lock().ok()?;
            if let Some(at) = kept.iter().position(|(t, _)| **t == *text) {
                let entry = kept.remove(at)?;
                let value = entry.1.clone();
                kept.push_front(entry);
                return Some(value);
            }
        }
        let value = serde_json::from_str::<Value>(text).ok()?;
        let mut kept = self.kept.lock().ok()?;
        kept.push_front((text.into(), value.clone()));
        kept.truncate(Self::KEPT);
        Some(value)
    }
}

/// A field's value in a context's text.
enum Field<'a> {
    /// The kept field at this index, found there byte for byte.
    Kept(usize),
    /// Any other value's text.
    Raw(&'a str),
}

/// The fields of `context`, a JSON object, in order; `None` when it is
/// not one. A value that starts with one of `kept` (each the text of a
/// whole array, object or string) is that value: such a value ends where
/// its closing bracket or quote does, so it is compared, not parsed again,
/// which for a navigation list shown on every page was most of reading
/// its context.
fn object_fields<'a>(context: &'a str, kept: &[&str]) -> Option<Vec<(String, Field<'a>)>> {
    fn blank(rest: &str) -> &str {
        rest.trim_start_matches([' ', '\t', '\n', '\r'])
    }
    /// One JSON value of type `T` at the start of `rest`, and what follows.
    fn one<'a, T: serde::Deserialize<'a>>(rest: &'a str) -> Option<(T, &'a str)> {
        let mut values = serde_json::Deserializer::from_str(rest).into_iter::<T>();
        let value = values.next()?.ok()?;
        Some((value, &rest[values.byte_offset()..]))
    }
    let mut fields = Vec::new();
    let mut rest = blank(context).strip_prefix('{')?;
    if let Some(after) = blank(rest).strip_prefix('}') {
        return blank(after).is_empty().then_some(fields);
    }
    loop {
        let (key, after): (String, _) = one(blank(rest))?;
        rest = blank(blank(after).strip_prefix(':')?);
        let found = kept.iter().position(|text| {
            text.starts_with(['[', '{', '"']) && rest.as_bytes().starts_with(text.as_bytes())
        });
        let field = match found {
            Some(at) => {
                rest = &rest[kept[at].len()..];
                Field::Kept(at)
            }
            None => {
                let (value, after): (&serde_json::value::RawValue, _) = one(rest)?;
                rest = after;
                Field::Raw(value.get())
            }
        };
        fields.push((key, field));
        rest = blank(rest);
        if let Some(after) = rest.strip_prefix(',') {
            rest = after;
        } else {
            let after = rest.strip_prefix('}')?;
            return blank(after).is_empty().then_some(fields);
        }
    }
}

/// The bytes of the sentinels in a tracing render's text whose context
/// and templates hold none: counted in the text, not as they are printed,
/// since output a child template prints outside its blocks is dropped.
fn sentinel_bytes(traced: &str) -> usize {
    let mut open = [0u8; 4];
    let open = SENTINEL_OPEN.encode_utf8(&mut open).as_bytes();
    let bytes = traced.as_bytes();
    memchr::memmem::find_iter(bytes, open)
        .map(|at| open.len() + digits_at(bytes, at + open.len()) + SENTINEL_CLOSE.len_utf8())
        .sum()
}

/// How many ASCII digits start at `at`: a sentinel's mark number.
fn digits_at(bytes: &[u8], at: usize) -> usize {
    bytes[at..]
        .iter()
        .take_while(|b| b.is_ascii_digit())
        .count()
}

/// Whether a context's JSON text may hold a sentinel character, as
/// itself or as a `\u` escape: a false alarm costs a second render.
fn may_hold_sentinel(context: &str) -> bool {
    let bytes = context.as_bytes();
    let mut open = [0u8; 4];
    let lead = &SENTINEL_OPEN.encode_utf8(&mut open).as_bytes()[..2];
    memchr::memchr2_iter(lead[0], b'\\', bytes).any(|at| {
        let rest = &bytes[at..];
        if rest[0] == b'\\' {
            rest.len() >= 6
                && rest[1] == b'u'
                && rest[2..5].eq_ignore_ascii_case(b"f8f")
                && matches!(rest[5], b'0' | b'1')
        } else {
            rest.starts_with(lead) && matches!(rest.get(2), Some(0xB0 | 0xB1))
        }
    })
}

/// A tracing render's text without its sentinels, and per output line
/// its start in that text and its marks.
struct Stripped {
    text: String,
    /// Per line: where it starts in `text`, and where its marks start in
    /// `marks`. One list for all the marks, not one per line: a page has
    /// thousands of lines.
    lines: Vec<(usize, usize)>,
    marks: Vec<usize>,
}

impl Stripped {
    /// The marks printed on line `line` (from 0).
    fn line_marks(&self, line: usize) -> &[usize] {
        let from = self.lines[line].1;
        let to = self.lines.get(line + 1).map_or(self.marks.len(), |l| l.1);
        &self.marks[from..to]
    }
}

/// Splits the traced text into lines and their marks; marks past
/// `marks_len` are dropped.
fn strip(traced: &str, marks_len: usize) -> Stripped {
    let mut stripped = String::with_capacity(traced.len());
    let mut lines: Vec<(usize, usize)> = vec![(0, 0)];
    let mut marks = Vec::with_capacity(marks_len);
    // Byte search (memchr) for '\n' and the sentinel's first byte: this
    // loop runs over every byte of every traced output.
    let bytes = traced.as_bytes();
    let open = SENTINEL_OPEN.to_string();
    let close = SENTINEL_CLOSE.to_string();
    let mut pos = 0;
    while let Some(found) = memchr::memchr2(b'\n', open.as_bytes()[0], &bytes[pos..]) {
        let at = pos + found;
        if bytes[at] == b'\n' {
            stripped.push_str(&traced[pos..=at]);
            lines.push((stripped.len(), marks.len()));
            pos = at + 1;
            continue;
        }
        if !traced[at..].starts_with(&open) {
            // Another character that starts with the same byte.
            let len = traced[at..].chars().next().map_or(1, char::len_utf8);
            stripped.push_str(&traced[pos..at + len]);
            pos = at + len;
            continue;
        }
        stripped.push_str(&traced[pos..at]);
        let body_start = at + open.len();
        // A sentinel is its mark's number, then the closing character.
        let digits = digits_at(bytes, body_start);
        let end = if traced[body_start + digits..].starts_with(&close) {
            body_start + digits
        } else {
            memchr::memmem::find(&bytes[body_start..], close.as_bytes())
                .map_or(bytes.len(), |e| body_start + e)
        };
        if let Ok(i) = traced[body_start..end].parse::<usize>()
            && i < marks_len
        {
            marks.push(i);
        }
        pos = (end + close.len()).min(bytes.len());
    }
    stripped.push_str(&traced[pos..]);
    Stripped {
        text: stripped,
        lines,
        marks,
    }
}

/// The template lines behind a mark, outermost include first.
fn chain_of<'a>(m: &'a MarkInfo, origins: &'a Origins) -> impl Iterator<Item = &'a str> {
    m.chain
        .iter()
        .chain([&m.origin])
        .map(|&id| origins.names[id].as_str())
}

/// Checks that the stripped tracing render is the normal render's text.
fn same_text(
    name: &str,
    stripped: &Stripped,
    normal: &str,
    marks: &[MarkInfo],
    origins: &Origins,
) -> Result<(), TemplateError> {
    if stripped.text == normal {
        return Ok(());
    }
    let lines = stripped.lines.len();
    let line = stripped
        .text
        .split('\n')
        .zip(normal.split('\n'))
        .position(|(a, b)| a != b)
        .unwrap_or_else(|| {
            stripped
                .text
                .split('\n')
                .count()
                .min(normal.split('\n').count())
                - 1
        });
    // The differing line's own marks, else the nearest before it: a
    // filter block, say, may have swallowed the line's sentinels.
    let origin = (0..=line.min(lines - 1))
        .rev()
        .find_map(|l| stripped.line_marks(l).first())
        .map(|&m| chain_of(&marks[m], origins).collect::<Vec<_>>().join(" > "))
        .unwrap_or_else(|| name.to_owned());
    Err(TemplateError {
        template: name.to_owned(),
        line: None,
        message: format!(
            "the tracing render differs from the normal render at output line {} (near {origin}); nothing was written",
            line + 1
        ),
    })
}

/// The start of a traced output's sidecar, and the model IRIs its lines
/// cite ([`TemplateService::trace_to_sidecar`]).
#[derive(Debug)]
pub struct SidecarStart {
    /// The sidecar's text up to its lines' end (see [`crate::sidecar_tail`]).
    pub head: String,
    /// The terms cited, sorted by text and once each, as numbered in the
    /// [`Citations`] the trace was given.
    pub(crate) cited: Vec<u32>,
}

impl SidecarStart {
    /// The model IRIs the lines cite, sorted, each once: the output's lock
    /// sources. `citations` is the numbering the trace was given.
    pub fn sources<'a>(&'a self, citations: &'a Citations) -> impl Iterator<Item = &'a str> {
        self.cited.iter().map(|&c| citations.text(c))
    }
}

/// Whether a trace walk shows every line's scope ([`TraceLine::scope`],
/// for goldens) or only where it is the line's terms (sidecars).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Scopes {
    Kept,
    Dropped,
}

/// One traced line, borrowed from the walk that found it; its IRIs as
/// the walk's [`IriReader`] reads them.
struct Line<'a, I> {
    number: usize,
    /// `template:line` origins, outermost include first.
    templates: &'a [&'a str],
    /// The IRIs behind it, sorted by text, each once.
    terms: &'a [I],
    /// The IRIs of the view object it was printed in, when asked for or
    /// when they are its terms.
    scope: &'a [I],
}

/// How a trace walk reads the IRIs off the view objects it meets.
pub(crate) trait IriReader {
    /// An IRI as read.
    type Iri: Clone;
    /// Adds `object`'s IRIs (see [`add_view_iris`]) to `iris`; whether it
    /// is a view object.
    fn view_iris(&mut self, object: &Value, iris: &mut Vec<Self::Iri>) -> bool;
    /// Adds the IRI values `values` (string values).
    fn iris(&mut self, values: &[Value], iris: &mut Vec<Self::Iri>);
    /// Sorts `iris` by text and drops repeats.
    fn sort(&self, iris: &mut Vec<Self::Iri>);
}

/// IRIs read as the string values they are, for [`TraceLine`]s.
struct ByValue;

impl IriReader for ByValue {
    type Iri = Value;

    fn view_iris(&mut self, object: &Value, iris: &mut Vec<Value>) -> bool {
        let mut found = Vec::new();
        let view = add_view_iris(object, &mut found);
        iris.extend(found.into_iter().map(Cow::into_owned));
        view
    }

    fn iris(&mut self, values: &[Value], iris: &mut Vec<Value>) {
        iris.extend_from_slice(values);
    }

    fn sort(&self, iris: &mut Vec<Value>) {
        sort_iris(iris);
    }
}

/// The text of an IRI value (only string values are kept as IRIs).
fn iri_text(value: &Value) -> &str {
    value.as_str().unwrap_or_default()
}

/// Sorts IRI values by their text and drops repeats.
fn sort_iris(iris: &mut Vec<Value>) {
    // A page cites the same few objects thousands of times, mostly as
    // clones of one value: those repeats go first, by address, keeping
    // the order the lines cited them in.
    if iris.len() > 32 {
        let mut seen: HashSet<usize, foldhash::fast::RandomState> =
            HashSet::with_capacity_and_hasher(iris.len(), Default::default());
        iris.retain(|v| seen.insert(iri_text(v).as_ptr() as usize));
    }
    // Templates mostly print lists in order (generators sort them, to be
    // deterministic), so a page's IRIs come in a few ascending runs (17
    // for 938 IRIs on a page at expense x300): a stable sort merges the
    // runs, where an unstable one sorted each page over again.
    iris.sort_by(|a, b| iri_text(a).cmp(iri_text(b)));
    iris.dedup_by(|a, b| iri_text(a) == iri_text(b));
}

/// What a trace walk needs beside the render: the template's name (for
/// errors), the origins, the context's own IRIs and which scopes to show.
struct Walk<'w> {
    name: &'w str,
    origins: &'w Origins,
    root: &'w [Value],
    scopes: Scopes,
}

impl Walk<'_> {
    /// Walks a stripped tracing render: per non-blank line, its template
    /// origins and terms, shown to `visit` with `reader`, which read the
    /// terms. A line's buffers are reused for the next: a page of
    /// thousands of lines allocates for few of them.
    fn lines<R: IriReader>(
        &self,
        stripped: &Stripped,
        marks: &[MarkInfo],
        reader: &mut R,
        visit: &mut dyn FnMut(Line<'_, R::Iri>, &R),
    ) -> Result<(), TemplateError> {
        let lines = &stripped.lines;
        let text = &stripped.text;
        let mut templates: Vec<&str> = Vec::new();
        let mut terms: Vec<R::Iri> = Vec::new();
        let mut scope: Vec<R::Iri> = Vec::new();
        let mut fallback: Vec<R::Iri> = Vec::new();
        // Per line, the next line with a mark: made when first needed.
        let mut next_marked: Option<Vec<usize>> = None;
        for (number, &(start, _)) in lines.iter().enumerate() {
            let end = lines
                .get(number + 1)
                .map_or(text.len(), |&(next, _)| next - 1);
            if text[start..end].trim().is_empty() {
                continue;
            }
            // A line without a sentinel is the start of a printed value that
            // holds a line break (a model literal of several lines): its
            // sentinel is the next one, printed right after the value.
            let mut line_marks = stripped.line_marks(number);
            if line_marks.is_empty() {
                let next = next_marked.get_or_insert_with(|| next_marked_lines(stripped));
                if next[number] < lines.len() {
                    line_marks = &stripped.line_marks(next[number])[..1];
                }
            }
            templates.clear();
            terms.clear();
            for &m in line_marks {
                let info = &marks[m];
                for origin in chain_of(info, self.origins) {
                    if !templates.contains(&origin) {
                        templates.push(origin);
                    }
                }
                if let Some(owner) = &info.owner {
                    reader.view_iris(owner, &mut terms);
                }
            }
            reader.sort(&mut terms);
            scope.clear();
            if terms.is_empty() || self.scopes == Scopes::Kept {
                let enclosing = line_marks.iter().find_map(|&m| {
                    let info = &marks[m];
                    info.enclosing()
                        .into_iter()
                        .chain(&info.frame)
                        .find(|object| reader.view_iris(object, &mut scope))
                });
                if enclosing.is_none() {
                    reader.iris(self.root, &mut scope);
                }
            }
            if templates.is_empty() {
                return Err(TemplateError {
                    template: self.name.to_owned(),
                    line: None,
                    message: format!(
                        "output line {} has no template origin in the tracing render",
                        number + 1
                    ),
                });
            }
            // No value read off a view object: the enclosing view object's.
            let own = !terms.is_empty();
            if !own {
                fallback.clone_from(&scope);
                reader.sort(&mut fallback);
            }
            visit(
                Line {
                    number: number + 1,
                    templates: &templates,
                    terms: if own { &terms } else { &fallback },
                    scope: &scope,
                },
                reader,
            );
        }
        Ok(())
    }
}

/// Per line, the index of the first line at or after it that has a
/// mark (`lines.len()` when none does): one pass from the end, so that
/// a value of many lines costs no more than its lines.
fn next_marked_lines(stripped: &Stripped) -> Vec<usize> {
    let lines = stripped.lines.len();
    let mut next = vec![lines; lines];
    let mut found = lines;
    for i in (0..lines).rev() {
        if !stripped.line_marks(i).is_empty() {
            found = i;
        }
        next[i] = found;
    }
    next
}

fn not_an_object(name: &str) -> TemplateError {
    TemplateError {
        template: name.to_owned(),
        line: None,
        message: "the context must be a JSON object".into(),
    }
}

fn environment(syntax: Syntax) -> Environment<'static> {
    let mut env = Environment::new();
    env.set_syntax(Delimiters::for_syntax(syntax).config());
    env.set_undefined_behavior(UndefinedBehavior::Strict);
    env.set_fuel(Some(RENDER_FUEL));
    // HTML-escape in HTML and XML templates only. minijinja would also
    // JSON-quote every value in .json, .js and .yaml templates; generators
    // print those with `|tojson` where they want a literal.
    env.set_auto_escape_callback(|name| {
        let name = name.trim_end_matches(".j2").trim_end_matches(".jinja");
        match name.rsplit_once('.').map(|(_, suffix)| suffix) {
            Some("html" | "htm" | "xml") => minijinja::AutoEscape::Html,
            _ => minijinja::AutoEscape::None,
        }
    });
    env
}

/// The environment of the tracing render: the same settings, the
/// instrumented templates' filters, and a formatter that prints their
/// sentinels.
fn tracing_environment(syntax: Syntax, origins: &Arc<Origins>) -> Environment<'static> {
    let mut env = environment(syntax);
    // Instrumentation adds calls; the budget grows with them.
    env.set_fuel(Some(RENDER_FUEL * 4));
    let o = origins.clone();
    env.add_filter(
        crate::instrument::LINE_FN,
        move |args: &[Value]| -> Result<Value, Error> {
            let id = origin_id(args.first(), &o)?;
            let enclosing = Enclosing::first_of(&args[1..]);
            let mark = TRACE.with_borrow_mut(|st| st.mark(&o, id, None, enclosing));
            // The sentinel itself, as a string short enough to be held
            // inline: one is printed for every line, and an object per
            // line cost an allocation each.
            Ok(Value::from(Sentinel::new(mark).as_str()))
        },
    );
    for (name, owned) in [
        (crate::instrument::VALUE_FN, false),
        (crate::instrument::OWNED_FN, true),
    ] {
        let o = origins.clone();
        env.add_filter(name, move |args: &[Value]| -> Result<Value, Error> {
            let id = origin_id(args.first(), &o)?;
            let value = args.get(1).cloned().unwrap_or_default();
            // The object the value was read off; else the value itself,
            // when it is an object printed whole.
            let named = args.get(2).filter(|owner| !owner.is_none());
            // Owned: the owner is the first candidate for the enclosing
            // object too.
            let enclosing = match named {
                Some(owner) if owned && is_map(owner) => Enclosing::Owner,
                _ => Enclosing::first_of(args.get(3..).unwrap_or(&[])),
            };
            let owner = named.unwrap_or(&value).clone();
            let mark = TRACE.with_borrow_mut(|st| st.mark(&o, id, Some(owner), enclosing));
            PRINTING.set(Some(mark));
            Ok(value)
        });
    }
    let o = origins.clone();
    env.add_filter(
        crate::instrument::INCLUDE_FN,
        move |args: &[Value]| -> Result<Value, Error> {
            let id = origin_id(args.first(), &o)?;
            let name = args.get(1).cloned().unwrap_or_default();
            TRACE.with_borrow_mut(|st| st.include(&o, id, &name, args.get(2..).unwrap_or(&[])));
            Ok(name)
        },
    );
    let o = origins.clone();
    env.add_filter(
        crate::instrument::FRAGMENT_FN,
        move |state: &minijinja::State, args: &[Value]| -> Result<bool, Error> {
            let site = fragment_site(args, &o)?;
            let list = args.get(2).cloned().unwrap_or_default();
            let spent = fuel_spent(state);
            match TRACE.with_borrow_mut(|st| st.fragment(&o, site, &list, spent)) {
                // What its first run spent, and a unit for the rounding.
                Some(fuel) => state.consume_fuel(fuel.saturating_add(1)).map(|()| true),
                None => Ok(false),
            }
        },
    );
    env.add_filter(
        crate::instrument::REPLAY_FN,
        |_: &[Value]| -> Result<Value, Error> {
            TRACE
                .with_borrow_mut(TraceState::replay)
                .ok_or_else(|| Error::new(ErrorKind::InvalidOperation, "tracing call out of place"))
        },
    );
    let o = origins.clone();
    env.add_filter(
        crate::instrument::KEEP_FN,
        move |state: &minijinja::State, args: &[Value]| -> Result<Value, Error> {
            let site = fragment_site(args, &o)?;
            let output = args.get(3).cloned().unwrap_or_default();
            let spent = fuel_spent(state);
            let list = args.get(2).cloned().unwrap_or_default();
            TRACE.with_borrow_mut(|st| st.keep(&o, site, &list, &output, spent));
            Ok(output)
        },
    );
    env.set_formatter(|out, state, value| {
        // Printing an undefined value fails as in the normal render,
        // whose formatter is the default one (a custom formatter is not
        // held to it).
        if value.is_undefined() {
            minijinja::value::StringInput::new(state, value)?;
        }
        minijinja::escape_formatter(out, state, value)?;
        match PRINTING.take() {
            Some(mark) => out
                .write_str(Sentinel::new(mark).as_str())
                .map_err(Error::from),
            None => Ok(()),
        }
    });
    env
}

/// The fuel a render has spent so far (0 when fuel is not counted).
fn fuel_spent(state: &minijinja::State) -> u64 {
    state.fuel_levels().map_or(0, |(spent, _)| spent)
}

/// The site a call on a shared loop names: its origin id and number.
fn fragment_site(args: &[Value], origins: &Origins) -> Result<(usize, usize), Error> {
    let id = origin_id(args.first(), origins)?;
    let number = args.get(1).and_then(Value::as_usize).ok_or_else(|| {
        Error::new(
            ErrorKind::InvalidOperation,
            "tracing call without a valid site",
        )
    })?;
    Ok((id, number))
}

/// The origin id a tracing call names, checked against the origins the
/// instrumentation made: the calls are the host's, but nothing a render
/// receives is trusted to index anything.
fn origin_id(arg: Option<&Value>, origins: &Origins) -> Result<usize, Error> {
    arg.and_then(|v| v.as_usize())
        .filter(|&id| id < origins.lines.len())
        .ok_or_else(|| {
            Error::new(
                ErrorKind::InvalidOperation,
                "tracing call without a valid origin",
            )
        })
}

/// Adds a view object's IRIs (its `iri` and `origins`, when it is one;
/// only string values) to `terms`. Whether it was one. Borrowed from a
/// map read from JSON, where they are found without a copy: most lines
/// cite the same few objects, shared with the threads rendering, and a
/// copy of a shared value counts its shared reference up and down.
pub(crate) fn add_view_iris<'v>(value: &'v Value, terms: &mut Vec<Cow<'v, Value>>) -> bool {
    if !is_map(value) {
        return false;
    }
    let Some(map) = value.downcast_object_ref::<BTreeMap<Value, Value>>() else {
        // Another kind of map: its fields, copied.
        let Ok(iri) = value.get_attr("iri") else {
            return false;
        };
        if iri.as_str().is_none() {
            return false;
        }
        terms.push(Cow::Owned(iri));
        if let Ok(origins) = value.get_attr("origins")
            && let Ok(items) = origins.try_iter()
        {
            terms.extend(items.filter(|o| o.as_str().is_some()).map(Cow::Owned));
        }
        return true;
    };
    let Some(iri) = map_field(map, "iri").filter(|iri| iri.as_str().is_some()) else {
        return false;
    };
    terms.push(Cow::Borrowed(iri));
    if let Some(origins) = map_field(map, "origins") {
        match origins.downcast_object_ref::<Vec<Value>>() {
            Some(items) => terms.extend(
                items
                    .iter()
                    .filter(|o| o.as_str().is_some())
                    .map(Cow::Borrowed),
            ),
            None => {
                if let Ok(items) = origins.try_iter() {
                    terms.extend(items.filter(|o| o.as_str().is_some()).map(Cow::Owned));
                }
            }
        }
    }
    true
}

/// The field `key` of a map read from JSON, found as the template engine
/// finds it (`get_attr`): a small map is searched in order.
fn map_field<'v>(map: &'v BTreeMap<Value, Value>, key: &str) -> Option<&'v Value> {
    if map.len() <= 12 {
        map.iter()
            .find(|(k, _)| {
                k.kind() == minijinja::value::ValueKind::String && k.as_str() == Some(key)
            })
            .map(|(_, v)| v)
    } else {
        map.get(&Value::from(key))
    }
}

/// A view object's IRIs (see [`add_view_iris`]).
fn view_iris(value: &Value) -> Option<Vec<Value>> {
    let mut iris = Vec::new();
    add_view_iris(value, &mut iris).then_some(iris.into_iter().map(Cow::into_owned).collect())
}

/// The sentinel of mark `index`, the two sentinel characters around its
/// digits, made on the stack: one is printed for every line and value.
struct Sentinel {
    bytes: [u8; Sentinel::CAP],
    len: usize,
}

impl Sentinel {
    const CAP: usize = 2 * 3 + 20;

    fn new(index: usize) -> Sentinel {
        let mut bytes = [0u8; Sentinel::CAP];
        let mut len = SENTINEL_OPEN.encode_utf8(&mut bytes).len();
        let mut digits = [0u8; 20];
        let mut at = digits.len();
        let mut n = index;
        loop {
            at -= 1;
            digits[at] = b'0' + (n % 10) as u8;
            n /= 10;
            if n == 0 {
                break;
            }
        }
        bytes[len..len + digits.len() - at].copy_from_slice(&digits[at..]);
        len += digits.len() - at;
        len += SENTINEL_CLOSE.encode_utf8(&mut bytes[len..]).len();
        Sentinel { bytes, len }
    }

    fn as_str(&self) -> &str {
        std::str::from_utf8(&self.bytes[..self.len]).expect("sentinel characters and digits")
    }
}

/// A sentinel's meaning. Cheap to record: IRIs are read off the objects
/// only when the trace lines are built, and only where needed.
#[derive(Debug, Clone, PartialEq)]
struct MarkInfo {
    /// The origin id of the line that printed it.
    origin: usize,
    /// Origin ids of the includes around it, outermost first.
    chain: Arc<[usize]>,
    /// For a printed value: the object it was read off (or the value).
    owner: Option<Value>,
    /// The innermost enclosing loop or macro object.
    enclosing: Enclosing,
    /// The object the innermost include was given.
    frame: Option<Value>,
}

impl MarkInfo {
    /// The innermost enclosing loop or macro object.
    fn enclosing(&self) -> Option<&Value> {
        match &self.enclosing {
            Enclosing::None => None,
            Enclosing::Owner => self.owner.as_ref(),
            Enclosing::Other(object) => Some(object),
        }
    }
}

/// A mark's innermost enclosing loop or macro object: most often the
/// object the value was read off, which is then not held twice.
#[derive(Debug, Clone, PartialEq)]
enum Enclosing {
    None,
    Owner,
    Other(Value),
}

impl Enclosing {
    /// The first of a tracing call's candidates that is an object.
    fn first_of(candidates: &[Value]) -> Enclosing {
        candidates
            .iter()
            .find(|v| is_map(v))
            .map_or(Enclosing::None, |v| Enclosing::Other(v.clone()))
    }
}

#[derive(Debug)]
struct IncludeFrame {
    origin: usize,
    included: Option<usize>,
    object: Option<Value>,
}

/// Templates and lines by origin id.
#[derive(Debug, Default)]
struct Origins {
    templates: Vec<String>,
    /// The index of each template in `templates`: a generator may ship
    /// thousands, so they are not searched one by one.
    index: std::collections::HashMap<String, usize>,
    /// (template index, line) per origin id.
    lines: Vec<(usize, usize)>,
    /// `template:line` per origin id.
    names: Vec<String>,
}

impl Origins {
    fn add(&mut self, template: &str, line: usize) -> usize {
        let t = match self.index.get(template) {
            Some(&t) => t,
            None => {
                self.templates.push(template.to_owned());
                self.index
                    .insert(template.to_owned(), self.templates.len() - 1);
                self.templates.len() - 1
            }
        };
        self.lines.push((t, line));
        self.names.push(format!("{template}:{line}"));
        self.lines.len() - 1
    }
}

/// The most marks a tracing render is given room for before it starts.
const MARKS_RESERVED: usize = 16 << 10;

/// The tracing render's side channel ([`TRACE`]), reset for every render.
#[derive(Debug)]
struct TraceState {
    marks: Vec<MarkInfo>,
    /// Shared loops' output, kept across renders ([`crate::fragment`]).
    kept: Vec<Kept>,
    /// What the last call on a shared loop found.
    pending: Option<Pending>,
    /// How many loops were printed from kept output, ever.
    replays: usize,
    includes: Vec<IncludeFrame>,
    /// The include chain, rebuilt only when `includes` changes.
    chain: Option<Arc<[usize]>>,
    /// How many marks the render before took away: the next, likely
    /// alike, gets room for as many at once instead of growing to it (up
    /// to [`MARKS_RESERVED`], so that a huge render does not make every
    /// later one hold room it does not use).
    taken: usize,
}

impl TraceState {
    fn reset(&mut self) {
        self.pending = None;
        self.marks.clear();
        self.marks.reserve(self.taken.min(MARKS_RESERVED));
        self.includes.clear();
        self.chain = None;
        PRINTING.set(None);
    }

    /// The marks, taken away with the render they describe.
    fn take_marks(&mut self) -> Vec<MarkInfo> {
        self.taken = self.marks.len();
        std::mem::take(&mut self.marks)
    }

    /// Drops include frames that have ended: text of template `t` is
    /// printed inside the innermost include of `t`.
    fn unwind_to(&mut self, origins: &Origins, id: usize) {
        let template = origins.lines[id].0;
        while let Some(top) = self.includes.last() {
            if top.included == Some(template) {
                break;
            }
            self.includes.pop();
            self.chain = None;
        }
    }

    fn mark(
        &mut self,
        origins: &Origins,
        id: usize,
        owner: Option<Value>,
        enclosing: Enclosing,
    ) -> usize {
        self.unwind_to(origins, id);
        let includes = &self.includes;
        let chain = self
            .chain
            .get_or_insert_with(|| includes.iter().map(|f| f.origin).collect())
            .clone();
        let frame = self.includes.iter().rev().find_map(|f| f.object.clone());
        self.marks.push(MarkInfo {
            origin: id,
            chain,
            owner,
            enclosing,
            frame,
        });
        self.marks.len() - 1
    }

    /// Whether the shared loop `site` may print its output kept for
    /// `list`: then the fuel its first run spent; else it runs, and
    /// [`TraceState::keep`] may keep its output. Only at the top level of
    /// the template rendered (no include open), where the list is the
    /// context's own field.
    fn fragment(
        &mut self,
        origins: &Arc<Origins>,
        site: (usize, usize),
        list: &Value,
        spent: u64,
    ) -> Option<u64> {
        self.pending = None;
        if !self.includes.is_empty() || crate::fragment::list_of(list).is_none() {
            return None;
        }
        let found = self.kept.iter().position(|k| {
            Arc::ptr_eq(&k.owner, origins)
                && k.site == site
                && crate::fragment::same_list(&k.list, list)
        });
        match found {
            Some(at) => {
                self.pending = Some(Pending::Replay(at));
                Some(self.kept[at].fuel)
            }
            None => {
                self.pending = Some(Pending::Keep {
                    site,
                    fuel: spent,
                    marks: self.marks.len(),
                });
                None
            }
        }
    }

    /// The output kept for the loop [`TraceState::fragment`] found, its
    /// marks added to this render's.
    fn replay(&mut self) -> Option<Value> {
        let Some(Pending::Replay(at)) = self.pending.take() else {
            return None;
        };
        let kept = self.kept.get(at)?;
        self.replays += 1;
        let base = self.marks.len();
        self.marks.extend(kept.marks.iter().cloned());
        Some(if base == kept.base {
            kept.text.clone()
        } else {
            let text = kept.text.as_str().unwrap_or_default();
            Value::from_safe_string(crate::fragment::renumber(text, kept.base, base))
        })
    }

    /// Keeps the output the loop `site` printed over `list`, when its
    /// sentinels are exactly the marks it added.
    fn keep(
        &mut self,
        origins: &Arc<Origins>,
        site: (usize, usize),
        list: &Value,
        output: &Value,
        spent: u64,
    ) {
        let Some(Pending::Keep {
            site: s,
            fuel,
            marks,
        }) = self.pending.take()
        else {
            return;
        };
        let Some(text) = output.as_str() else { return };
        if s != site
            || marks > self.marks.len()
            || !self.includes.is_empty()
            || text.len() > crate::fragment::KEPT_BYTES_MAX
            || !crate::fragment::numbered_from(text, marks, self.marks.len() - marks)
        {
            return;
        }
        self.kept
            .retain(|k| !(Arc::ptr_eq(&k.owner, origins) && k.site == site));
        self.kept.push(crate::fragment::Kept {
            owner: origins.clone(),
            site,
            list: list.clone(),
            text: output.clone(),
            base: marks,
            marks: self.marks[marks..].to_vec(),
            fuel: spent.saturating_sub(fuel),
        });
        let bytes = |kept: &[Kept]| -> usize {
            kept.iter()
                .map(|k| k.text.as_str().map_or(0, str::len))
                .sum()
        };
        while self.kept.len() > crate::fragment::KEPT_MAX
            || bytes(&self.kept) > crate::fragment::KEPT_BYTES_MAX
        {
            self.kept.remove(0);
        }
    }

    fn include(&mut self, origins: &Origins, id: usize, name: &Value, enclosing: &[Value]) {
        self.unwind_to(origins, id);
        let included = name.as_str().and_then(|n| origins.index.get(n).copied());
        self.includes.push(IncludeFrame {
            origin: id,
            included,
            object: enclosing.iter().find(|v| is_map(v)).cloned(),
        });
        self.chain = None;
    }
}

/// A shared loop's output kept, with its marks.
type Kept = crate::fragment::Kept<Origins, MarkInfo>;

/// Between the calls around a shared loop: the kept output to print, or
/// where the loop's run started (its fuel spent, its first mark).
#[derive(Debug)]
enum Pending {
    Replay(usize),
    Keep {
        site: (usize, usize),
        fuel: u64,
        marks: usize,
    },
}

fn is_map(value: &Value) -> bool {
    value.kind() == minijinja::value::ValueKind::Map
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
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_untraced_service_renders_the_same_and_traces_nothing() {
        let templates = [(
            "page.html".to_owned(),
            "<h1>{{ title }}</h1>\n{% for x in xs %}<p>{{ x }}</p>\n{% endfor %}".to_owned(),
        )];
        let traced = TemplateService::new(templates.clone(), Syntax::Jinja).unwrap();
        let untraced = TemplateService::untraced(templates, Syntax::Jinja).unwrap();
        let context = r#"{"title": "T", "xs": [1, 2]}"#;
        let text =
            |service: &TemplateService| service.render_json("page.html", context).unwrap().text;
        assert_eq!(text(&untraced), text(&traced));
        assert_eq!(text(&untraced), "<h1>T</h1>\n<p>1</p>\n<p>2</p>\n");
        // Asked to trace anyway, it renders plainly and its trace fails:
        // it never passes a plain render off as traced.
        let mut plain = untraced.render_json_to_trace("page.html", context).unwrap();
        assert!(plain.traced.is_none());
        assert!(untraced.trace(&mut plain).is_err());
        let mut plain = traced.render_json("page.html", context).unwrap();
        assert!(traced.trace(&mut plain).is_ok());
        // A template that does not parse is refused as by `new`.
        let broken = [("t.txt".to_owned(), "{% if %}".to_owned())];
        assert!(TemplateService::untraced(broken, Syntax::Jinja).is_err());
    }

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
    fn a_sentinel_is_its_characters_around_the_digits_and_short_ones_are_held_inline() {
        for (index, digits) in [(0, "0"), (7, "7"), (10, "10"), (123_456, "123456")] {
            let text = format!("{SENTINEL_OPEN}{digits}{SENTINEL_CLOSE}");
            assert_eq!(Sentinel::new(index).as_str(), text);
        }
        let max = Sentinel::new(usize::MAX);
        assert_eq!(
            max.as_str(),
            format!("{SENTINEL_OPEN}{}{SENTINEL_CLOSE}", usize::MAX)
        );
        // Up to 16 digits the text fits a value's inline string (22
        // bytes): a line's sentinel costs no allocation.
        assert_eq!(Sentinel::new(9_999_999_999_999_999).as_str().len(), 22);
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
    fn the_tracing_functions_cannot_be_reached_from_a_template() {
        // Calling them with a huge origin id panicked the host once.
        for source in [
            "{% if __seams_line is defined %}{{ __seams_line(4000000000) }}{% endif %}\n",
            "a\n{{ 4000000000|__seams_line }}\n",
            "a\n{{ __seams_include(4000000000, \"x\") }}\n",
            "{% set __seams_value = 1 %}\n",
            "text that mentions __seams_ is refused too\n",
        ] {
            let err =
                TemplateService::new([("t.txt".to_owned(), source.to_owned())], Syntax::Jinja)
                    .unwrap_err();
            assert!(err.message.contains("reserves"), "{source:?}: {err}");
            assert_eq!(err.template, "t.txt");
            assert_eq!(
                err.line,
                Some(
                    source[..source.find("__seams_").unwrap()]
                        .matches('\n')
                        .count()
                        + 1
                )
            );
        }
    }

    #[test]
    fn a_tracing_call_with_an_unknown_origin_is_an_error_not_a_panic() {
        let env = tracing_environment(Syntax::Jinja, &Arc::new(Origins::default()));
        for call in [
            "{{ 4000000000|__seams_line }}",
            "{{ none|__seams_line }}",
            "{{ -1|__seams_line }}",
            "{{ 99|__seams_value(1) }}",
            "{{ 99|__seams_owned(1) }}",
            "{{ 7|__seams_include('x') }}",
        ] {
            let err = env.render_str(call, ()).unwrap_err();
            assert!(
                err.to_string().contains("without a valid origin"),
                "{call}: {err}"
            );
        }
    }

    #[test]
    fn thousands_of_templates_load_and_trace() {
        // 20,000 templates once took 55 s (a linear search per template).
        let templates: Vec<(String, String)> = (0..20_000)
            .map(|i| (format!("t{i}.txt"), format!("line {{{{ x }}}} {i}\n")))
            .collect();
        let service = TemplateService::new(templates, Syntax::Jinja).unwrap();
        let rendered = service.render("t19999.txt", json!({"x": 1})).unwrap();
        assert_eq!(rendered.text, "line 1 19999\n");
        assert_eq!(
            service.trace(&mut rendered.clone()).unwrap()[0].templates,
            ["t19999.txt:1"]
        );
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

    /// A trace line as `(line, templates, terms)`.
    type Line = (usize, Vec<String>, Vec<String>);

    /// Renders and traces, in two renders and, where the templates allow
    /// it, in one: both give the same text and trace.
    fn traced(
        syntax: Syntax,
        templates: &[(&str, &str)],
        context: serde_json::Value,
    ) -> (String, Vec<Line>) {
        let s = service(syntax, templates);
        let mut r = s.render(templates[0].0, context.clone()).unwrap();
        let lines = s.trace(&mut r).unwrap();
        let mut once = s
            .render_json_to_trace(templates[0].0, &context.to_string())
            .unwrap();
        assert_eq!(once.traced.is_some(), s.renders_once().is_ok());
        assert_eq!(once.text_len(), r.text.len());
        assert_eq!(s.trace(&mut once).unwrap(), lines);
        assert_eq!(once.text, r.text);
        let non_blank = r.text.split('\n').filter(|l| !l.trim().is_empty()).count();
        assert_eq!(
            lines.len(),
            non_blank,
            "every non-blank line is traced:\n{}",
            r.text
        );
        (
            r.text,
            lines
                .into_iter()
                .map(|l| (l.line, l.templates, l.terms))
                .collect(),
        )
    }

    #[test]
    fn view_iris_read_alike_from_every_kind_of_map() {
        // What `get_attr` finds, by reading each field of the object.
        fn by_attributes(value: &Value) -> Option<Vec<String>> {
            let iri = value.get_attr("iri").ok()?;
            let iri = iri.as_str()?.to_owned();
            let origins = value.get_attr("origins").ok();
            let origins = origins.iter().filter_map(|o| o.try_iter().ok()).flatten();
            Some(
                std::iter::once(iri)
                    .chain(origins.filter_map(|o| o.as_str().map(str::to_owned)))
                    .collect(),
            )
        }
        let many: serde_json::Map<String, serde_json::Value> =
            (0..20).map(|i| (format!("f{i}"), json!(i))).collect();
        let mut wide = serde_json::Value::Object(many);
        wide["iri"] = json!("urn:wide");
        wide["origins"] = json!(["urn:o1", 3, "urn:o2"]);
        let json_cases = [
            json!({"iri": "urn:a"}),
            json!({"iri": "urn:a", "origins": ["urn:b", null, "urn:c"]}),
            json!({"iri": "urn:a", "origins": "urn:not-a-list"}),
            json!({"iri": 7, "origins": ["urn:b"]}),
            json!({"origins": ["urn:b"]}),
            json!({"iri": "https://example.org/a-long-iri-held-on-the-heap"}),
            wide,
            json!(["urn:a"]),
            json!("urn:a"),
        ];
        // Read from JSON (maps of values), from serialized values, and
        // maps of other kinds: of strings, and a context's top level.
        let mut values: Vec<Value> = json_cases
            .iter()
            .flat_map(|j| {
                [
                    serde_json::from_str::<Value>(&j.to_string()).unwrap(),
                    Value::from(minijinja::value::Serde(j)),
                ]
            })
            .collect();
        let mut strings = BTreeMap::new();
        strings.insert("iri".to_owned(), Value::from("urn:s"));
        strings.insert(
            "origins".to_owned(),
            Value::from(vec![Value::from("urn:t"), Value::from(1)]),
        );
        values.push(Value::from(strings));
        let shared = SharedFields::default();
        let context = json!({"iri": "urn:top", "origins": ["urn:o"], "pad": "x".repeat(5000)});
        values.push(shared.read(&context.to_string()).unwrap());
        let mut read = 0;
        for (i, value) in values.iter().enumerate() {
            let mut terms = Vec::new();
            let found = add_view_iris(value, &mut terms);
            if found && i < 2 * json_cases.len() {
                // Read from JSON: borrowed, not copied.
                assert!(matches!(terms[0], Cow::Borrowed(_)), "{value:?}");
            }
            let texts: Vec<String> = terms.iter().map(|t| iri_text(t).to_owned()).collect();
            let expected = by_attributes(value).filter(|_| is_map(value));
            assert_eq!(found.then_some(texts), expected, "{value:?}");
            read += usize::from(found);
        }
        assert_eq!(read, 12, "the view objects among the cases");
    }

    #[test]
    fn cited_iris_come_out_sorted_once_each_whether_shared_or_equal() {
        for n in [3, 40, 500] {
            let shared: Vec<Value> = (0..n)
                .map(|i| Value::from(format!("iri:{}", i % 7)))
                .collect();
            let mut iris: Vec<Value> = Vec::new();
            for i in 0..n * 3 {
                // Clones of shared values, and equal values made apart.
                iris.push(shared[(i * 5) % n].clone());
                iris.push(shared[(i * 7) % n].clone());
                iris.push(Value::from(format!("iri:{}", (i * 3) % 11)));
            }
            let expected: Vec<String> = iris
                .iter()
                .map(|v| iri_text(v).to_owned())
                .collect::<std::collections::BTreeSet<_>>()
                .into_iter()
                .collect();
            // As values, and as a thread's numbers.
            let mut citations = Citations::new();
            let mut numbers = Vec::new();
            citations.iris(&iris, &mut numbers);
            citations.sort(&mut numbers);
            let numbered: Vec<&str> = numbers.iter().map(|&n| citations.text(n)).collect();
            assert_eq!(numbered, expected, "{n}");
            sort_iris(&mut iris);
            let texts: Vec<&str> = iris.iter().map(iri_text).collect();
            assert_eq!(texts, expected, "{n}");
        }
    }

    fn strings(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn each_line_of_a_loop_over_view_objects_gets_its_own_terms() {
        let (text, lines) = traced(
            Syntax::Jinja,
            &[(
                "list.html",
                "<ul>\n{% for item in items %}\n  <li>{{ item.label }}</li>\n{% endfor %}\n</ul>\n",
            )],
            json!({"items": [
                {"iri": "urn:a", "label": "A"},
                {"iri": "urn:b", "origins": ["urn:b2"], "label": "B"}
            ]}),
        );
        assert_eq!(text, "<ul>\n  <li>A</li>\n  <li>B</li>\n</ul>\n");
        assert_eq!(
            lines,
            [
                (1, strings(&["list.html:1"]), strings(&[])),
                (2, strings(&["list.html:3"]), strings(&["urn:a"])),
                (3, strings(&["list.html:3"]), strings(&["urn:b", "urn:b2"])),
                (4, strings(&["list.html:5"]), strings(&[])),
            ]
        );
    }

    #[test]
    fn a_value_of_several_lines_traces_each_of_its_lines_to_its_template_line() {
        // A model literal may hold line breaks: the lines it starts have
        // no sentinel of their own (it follows the value).
        let (text, lines) = traced(
            Syntax::Jinja,
            &[(
                "t.txt",
                "{{ note }}\n{% for i in items %}<a>{{ i.h }}</a>{{ i.t }}\n{% endfor %}end\n",
            )],
            json!({"note": "a\n\nb", "items": [{"iri": "urn:i", "h": "h\nh2", "t": "t\n\n\nt2"}]}),
        );
        assert_eq!(text, "a\n\nb\n<a>h\nh2</a>t\n\n\nt2\nend\n");
        assert_eq!(
            lines,
            [
                (1, strings(&["t.txt:1"]), strings(&[])),
                (3, strings(&["t.txt:1"]), strings(&[])),
                (4, strings(&["t.txt:2"]), strings(&["urn:i"])),
                (5, strings(&["t.txt:2"]), strings(&["urn:i"])),
                (8, strings(&["t.txt:2"]), strings(&["urn:i"])),
                (9, strings(&["t.txt:3"]), strings(&[])),
            ]
        );
    }

    #[test]
    fn values_read_off_one_object_on_a_line_trace_as_if_each_were_marked() {
        // Only the last `i.` value of line 2 is marked (see `instrument`):
        // the line its first value starts, and the line whitespace
        // control joins to the next, cite the same origins and terms.
        let (text, lines) = traced(
            Syntax::Jinja,
            &[(
                "t.txt",
                "{% for i in items %}\n{{ i.a }}-{{ i.b -}}\n {{ p.x }}\n{% endfor %}\n",
            )],
            json!({"p": {"iri": "urn:p", "x": "X"}, "items": [{"iri": "urn:i", "a": "A\nA2", "b": "B"}]}),
        );
        assert_eq!(text, "A\nA2-BX\n");
        assert_eq!(
            lines,
            [
                (1, strings(&["t.txt:2"]), strings(&["urn:i"])),
                (
                    2,
                    strings(&["t.txt:2", "t.txt:3"]),
                    strings(&["urn:i", "urn:p"])
                ),
            ]
        );
    }

    #[test]
    fn a_line_without_a_traced_value_falls_back_to_the_enclosing_view_object() {
        let (_, lines) = traced(
            Syntax::Jinja,
            &[(
                "f.html",
                "{% for field in fields %}\n<input name=\"{{ field.name|upper }}\">\n<br>\n{% endfor %}\ntitle: {{ title }}\n",
            )],
            json!({"iri": "urn:page", "title": "T", "fields": [{"iri": "urn:f1", "name": "x"}]}),
        );
        assert_eq!(
            lines,
            [
                // A filter loses the origin; the loop's view object remains.
                (1, strings(&["f.html:2"]), strings(&["urn:f1"])),
                (2, strings(&["f.html:3"]), strings(&["urn:f1"])),
                // Outside any loop, the context itself is the view object.
                (3, strings(&["f.html:5"]), strings(&["urn:page"])),
            ]
        );
    }

    #[test]
    fn an_include_chain_two_deep_lists_origins_outermost_first() {
        let (text, lines) = traced(
            Syntax::Jinja,
            &[
                (
                    "page.html",
                    "<main>\n{% for c in cs %}\n{% include \"card.html\" %}\n{% endfor %}\n</main>\n",
                ),
                ("card.html", "<div>\n{% include \"title.html\" %}\n</div>\n"),
                ("title.html", "<h3>{{ c.title }}</h3>\n"),
            ],
            json!({"cs": [{"iri": "urn:c1", "title": "One"}, {"iri": "urn:c2", "title": "Two"}]}),
        );
        assert_eq!(
            text,
            "<main>\n<div>\n<h3>One</h3>\n</div>\n<div>\n<h3>Two</h3>\n</div>\n</main>\n"
        );
        assert_eq!(
            lines[1],
            (
                2,
                strings(&["page.html:3", "card.html:1"]),
                strings(&["urn:c1"])
            )
        );
        assert_eq!(
            lines[2],
            (
                3,
                strings(&["page.html:3", "card.html:2", "title.html:1"]),
                strings(&["urn:c1"])
            )
        );
        assert_eq!(
            lines[3],
            (
                4,
                strings(&["page.html:3", "card.html:3"]),
                strings(&["urn:c1"])
            )
        );
        assert_eq!(
            lines[5],
            (
                6,
                strings(&["page.html:3", "card.html:2", "title.html:1"]),
                strings(&["urn:c2"])
            )
        );
        assert_eq!(lines[7], (8, strings(&["page.html:5"]), strings(&[])));
    }

    #[test]
    fn macros_called_from_a_loop_trace_each_call() {
        let (text, lines) = traced(
            Syntax::Brackets,
            &[(
                "m.txt",
                "[% macro row(x) %]\n- [[ x.name ]]\n[% endmacro %]\n[% for x in xs %]\n[[ row(x) ]]\n[% endfor %]\n",
            )],
            json!({"xs": [{"iri": "urn:1", "name": "one"}, {"iri": "urn:2", "name": "two"}]}),
        );
        assert_eq!(text, "- one\n\n- two\n\n");
        assert_eq!(lines[0].1, strings(&["m.txt:2"]));
        assert_eq!(lines[0].2, strings(&["urn:1"]));
        assert_eq!(lines[1].2, strings(&["urn:2"]));
    }

    #[test]
    fn tags_spanning_lines_whitespace_control_and_raw_blocks_trace_exactly() {
        let template = "A {{\n  a.v\n}} B\n  [%- if a %]\nC  [% endif -%]\n   D [[- a.v -]]  \nE\n[% raw %]\n[[ kept ]] {{ too }}\n[% endraw %]\n[% raw -%]\n  F\n[%- endraw %]\nG\n";
        let template = template
            .replace("{{", "[[")
            .replace("}}", "]]")
            .replace("[[ too ]]", "{{ too }}");
        let (text, lines) = traced(
            Syntax::Brackets,
            &[("w.txt", &template)],
            json!({"a": {"iri": "urn:a", "v": 1}}),
        );
        let normal = service(Syntax::Brackets, &[("w.txt", &template)])
            .render("w.txt", json!({"a": {"iri": "urn:a", "v": 1}}))
            .unwrap()
            .text;
        assert_eq!(text, normal);
        assert!(text.contains("[[ kept ]]"), "{text}");
        let origins: Vec<&str> = lines.iter().map(|l| l.1[0].as_str()).collect();
        assert!(
            origins.iter().all(|o| o.starts_with("w.txt:")),
            "{origins:?}"
        );
        assert!(
            lines.iter().any(|l| l.1.contains(&"w.txt:9".to_string())),
            "the raw block's line: {lines:?}"
        );
    }

    #[test]
    fn a_sentinel_in_the_output_is_a_collision_naming_the_template_and_line() {
        let s = service(Syntax::Jinja, &[("c.txt", "ok\n{{ x }}\n")]);
        let mut r = s.render("c.txt", json!({"x": "sneaky \u{F8F0}"})).unwrap();
        let err = s.trace(&mut r).unwrap_err();
        assert_eq!(err.template, "c.txt");
        assert!(err.message.contains("output line 2"), "{err}");
    }

    #[test]
    fn a_context_that_may_hold_a_sentinel_is_rendered_twice_and_its_trace_refused() {
        let s = service(Syntax::Jinja, &[("c.txt", "ok\n{{ x }}\n")]);
        for context in [
            "{\"x\": \"sneaky \u{F8F0}\"}",
            "{\"x\": \"sneaky \\uf8F1\"}",
        ] {
            let mut r = s.render_json_to_trace("c.txt", context).unwrap();
            assert!(r.traced.is_none(), "{context}");
            let err = s.trace(&mut r).unwrap_err();
            assert!(err.message.contains("sentinel"), "{context}: {err}");
        }
        // Not printed, it is no collision; still two renders.
        let mut r = s
            .render_json_to_trace("c.txt", "{\"\u{F8F1}\": 1, \"x\": 2}")
            .unwrap();
        assert!(r.traced.is_none());
        assert_eq!(s.trace(&mut r).unwrap().len(), 2);
        for (context, holds) in [
            ("{\"x\": \"\\\\uf8f0\"}", true),
            ("{\"x\": \"\\uf8f2 \u{F8F2} \u{F8EF}\"}", false),
            ("{\"x\": \"\\u00e9\"}", false),
        ] {
            assert_eq!(may_hold_sentinel(context), holds, "{context}");
        }
    }

    #[test]
    fn a_large_field_is_read_once_and_reads_as_the_whole_context_would() {
        let s = service(
            Syntax::Jinja,
            &[("t.txt", "{{ page }}: {{ nav|length }}\n")],
        );
        let nav = serde_json::to_string(
            &(0..200)
                .map(|i| json!({"iri": format!("urn:p{i}"), "label": format!("Page \"{i}\"")}))
                .collect::<Vec<_>>(),
        )
        .unwrap();
        assert!(nav.len() >= SharedFields::MIN_BYTES);
        let whole = |context: &str| serde_json::from_str::<Value>(context).unwrap();
        for page in 0..6 {
            let context = format!("{{\"page\": {page}, \"nav\": {nav}, \"p\\u0061ge\": {page}}}");
            assert_eq!(s.context_value("t.txt", &context).unwrap(), whole(&context));
            let r = s.render_json("t.txt", &context).unwrap();
            assert_eq!(r.text, format!("{page}: 200\n"));
        }
        // One field kept, read once, shared by every later context.
        let kept = s.shared.kept.lock().unwrap();
        assert_eq!(kept.len(), 1);
        assert_eq!(&*kept[0].0, nav.as_str());
        drop(kept);
        // Found by its text, not read again.
        let context = format!("{{\"page\": 1, \"nav\": {nav}}}");
        let fields = object_fields(&context, &["[1]", &nav]).unwrap();
        assert!(
            matches!(&fields[..], [(p, Field::Raw("1")), (n, Field::Kept(1))] if p == "page" && n == "nav")
        );
        // Duplicate keys, the last wins, as when read whole.
        let context = format!("{{\"nav\": 1, \"nav\": {nav}}}");
        assert_eq!(s.context_value("t.txt", &context).unwrap(), whole(&context));
        // A kept field is found byte for byte wherever the context puts
        // it; the same list spaced differently is read, and reads the same.
        let spaced = nav.replace(',', ", ");
        for context in [
            format!(" {{ \"nav\" :\n{nav} ,\t\"page\": {{}} }}\r\n"),
            format!("{{\"a\": [{nav}], \"nav\": {nav}, \"b\": {{\"nav\": {nav}}}}}"),
            format!("{{\"nav\": {spaced}}}"),
            format!("{{\"nav\": \"{}\"}}", "x".repeat(5000)),
        ] {
            assert_eq!(s.context_value("t.txt", &context).unwrap(), whole(&context));
        }
        // Bad contexts fail as when read whole.
        for bad in [
            format!("[{nav}]"),
            format!("{{\"nav\": {nav},}}"),
            format!("{{\"nav\": {nav}"),
            format!("{{\"nav\": {nav}]}}"),
            format!("{{\"nav\": {nav} 1}}"),
            format!("{{\"nav\": {nav}}} x"),
            format!("{{\"nav\" {nav}}}"),
            format!("{{nav: {nav}}}"),
            format!("{{\"nav\": {}}}", &nav[..nav.len() - 1]),
        ] {
            let err = s.render_json("t.txt", &bad).unwrap_err();
            let expected = match serde_json::from_str::<Value>(&bad) {
                Ok(_) => not_an_object("t.txt"),
                Err(e) => TemplateError {
                    template: "t.txt".to_owned(),
                    line: None,
                    message: format!("the context is not JSON: {e}"),
                },
            };
            assert_eq!(err, expected, "{}", &bad[..20]);
        }
        // A field too large to keep is read every time.
        let huge = format!(
            "{{\"nav\": \"{}\", \"page\": 1}}",
            "y".repeat(SharedFields::MAX_BYTES)
        );
        assert_eq!(
            s.render_json("t.txt", &huge).unwrap().text,
            format!("1: {}\n", SharedFields::MAX_BYTES)
        );
        assert!(
            s.shared
                .kept
                .lock()
                .unwrap()
                .iter()
                .all(|(t, _)| t.len() < SharedFields::MAX_BYTES)
        );
        // At most a few fields are kept.
        for i in 0..10 {
            let context = format!("{{\"nav\": {nav}, \"page\": \"{i}{}\"}}", "x".repeat(5000));
            s.render_json("t.txt", &context).unwrap();
        }
        assert_eq!(s.shared.kept.lock().unwrap().len(), SharedFields::KEPT);
    }

    #[test]
    fn a_render_made_once_fails_as_the_normal_render_does() {
        const XS: &str = "{\"xs\": [{\"t\": 1}]}";
        for (source, context) in [
            ("line\n{{ missing }}\n", "{}"),
            ("{{ a.b.c }}\n", "{\"a\": {}}"),
            ("{{ a.b }}\n", "{}"),
            ("x {{ 1 + \"y\" }}\n", "{}"),
            ("{% for x in n %}\n{{ x }}\n{% endfor %}\n", "{\"n\": 3}"),
            ("{% include \"nope.txt\" %}\n", "{}"),
            ("{{ x|upper }}\n", "{}"),
            // Read off a loop's object: marked once, by its owner alone.
            ("{% for i in xs %}\n{{ i.nope }}\n{% endfor %}\n", XS),
            // Printed bare, its line marked by the value after it.
            (
                "{% for i in xs %}\n<a href=\"{{ i.nope }}\">{{ i.t }}</a>\n{% endfor %}\n",
                XS,
            ),
        ] {
            let s = service(Syntax::Jinja, &[("t.txt", source)]);
            assert!(s.renders_once().is_ok(), "{source}");
            let normal = s.render_json("t.txt", context).unwrap_err();
            let once = s.render_json_to_trace("t.txt", context).unwrap_err();
            assert_eq!(once, normal, "{source}");
        }
        // A silent undefined prints nothing in both.
        let (text, _) = traced(
            Syntax::Jinja,
            &[("t.txt", "a{{ x if false }}b\n")],
            json!({}),
        );
        assert_eq!(text, "ab\n");
    }

    #[test]
    fn a_shared_loop_prints_again_what_running_it_prints() {
        for syntax in [Syntax::Jinja, Syntax::Brackets] {
            shared_loop_prints_what_running_it_prints(syntax);
        }
    }

    fn shared_loop_prints_what_running_it_prints(syntax: Syntax) {
        let delimiters = |text: &str| match syntax {
            Syntax::Jinja => text.to_owned(),
            Syntax::Brackets => text
                .replace("{%", "[%")
                .replace("%}", "%]")
                .replace("{{", "[[")
                .replace("}}", "]]")
                .replace("{#", "[#")
                .replace("#}", "#]"),
        };
        // The navigation loop keeps its output; with a comment in its body
        // (which prints nothing) it does not.
        let page = "<title>{{ page.title }}</title>\n{% if page.extra %}\n<p>{{ page.extra }}</p>\n{% endif %}\n<nav>\n{% for item in nav %}@\n  <a href=\"{{ item.href }}\">{{ item.title }}</a>\n{% endfor %}\n</nav>\n{% include \"body.html\" %}\n";
        let body = delimiters("<main>{{ page.title }}</main>\n");
        let body = ("body.html", body.as_str());
        let page = delimiters(page);
        let kept = service(syntax, &[("page.html", &page.replace('@', "")), body]);
        let run = service(
            syntax,
            &[
                ("page.html", &page.replace('@', &delimiters("{# #}"))),
                body,
            ],
        );
        assert!(kept.keeps_fragments() && !run.keeps_fragments());
        let nav = |n: usize, title: &str| -> serde_json::Value {
            (0..n)
                .map(|i| json!({"iri": format!("urn:nav:{i}"), "href": format!("p{i}.html"), "title": format!("{title} {i} & <more>")}))
                .collect()
        };
        let replays = || TRACE.with_borrow(|st| st.replays);
        let before = replays();
        let check = |nav: &serde_json::Value, p: usize| {
            let context = json!({
                "page": {"iri": format!("urn:page:{p}"), "title": format!("Page {p}"), "extra": (p % 2 == 1).then_some("odd")},
                "nav": nav,
            })
            .to_string();
            let mut a = kept.render_json_to_trace("page.html", &context).unwrap();
            let mut b = run.render_json_to_trace("page.html", &context).unwrap();
            assert_eq!(
                kept.trace(&mut a).unwrap(),
                run.trace(&mut b).unwrap(),
                "page {p}"
            );
            assert_eq!(a.text, b.text, "page {p}");
            assert_eq!(
                a.text,
                kept.render_json("page.html", &context).unwrap().text
            );
            // It never spends less fuel than running the loop does.
            let (_, with_kept) = kept
                .render_traced_value(
                    "page.html",
                    kept.context_value("page.html", &context).unwrap(),
                )
                .unwrap();
            let (_, with_run) = run
                .render_traced_value(
                    "page.html",
                    run.context_value("page.html", &context).unwrap(),
                )
                .unwrap();
            assert!(with_kept >= with_run, "page {p}: {with_kept} < {with_run}");
        };
        // Over 4 KiB: one value, shared by the contexts.
        let first = nav(120, "Page");
        for p in 0..5 {
            check(&first, p);
        }
        // Printed from the kept output, renumbered after odd pages' extra
        // mark, in every render but the first (each render above is made
        // twice with the loop kept).
        assert_eq!(replays() - before, 5 * 2 - 1);
        // Another list runs the loop again.
        let second = nav(130, "Other");
        check(&second, 5);
        check(&second, 6);
        assert_eq!(replays() - before, 5 * 2 - 1 + 3);
        // A list that is not shared (under 4 KiB) is run every time.
        let small = nav(3, "Small");
        check(&small, 7);
        check(&small, 8);
        assert_eq!(replays() - before, 5 * 2 - 1 + 3);
        // Text that looks like a sentinel is not kept.
        let hostile = nav(120, &format!("x{SENTINEL_OPEN}1{SENTINEL_CLOSE}"));
        for _ in 0..2 {
            let context =
                json!({"page": {"title": "t", "extra": null}, "nav": &hostile}).to_string();
            let mut a = kept.render_json_to_trace("page.html", &context).unwrap();
            let mut b = run.render_json_to_trace("page.html", &context).unwrap();
            assert_eq!(kept.trace(&mut a).is_ok(), run.trace(&mut b).is_ok());
        }
        assert_eq!(replays() - before, 5 * 2 - 1 + 3);
    }

    #[test]
    fn threads_tracing_at_once_keep_their_own_marks() {
        let s = Arc::new(service(
            Syntax::Jinja,
            &[("t.txt", "{% for x in xs %}\n{{ x.n }}\n{% endfor %}\n")],
        ));
        let threads: Vec<_> = (0..4)
            .map(|t| {
                let s = s.clone();
                std::thread::spawn(move || {
                    for round in 0..200 {
                        let xs: Vec<_> = (0..round % 7 + 1)
                            .map(|i| json!({"iri": format!("urn:{t}:{i}"), "n": i}))
                            .collect();
                        let context = json!({ "xs": xs }).to_string();
                        let mut r = s.render_json_to_trace("t.txt", &context).unwrap();
                        let lines = s.trace(&mut r).unwrap();
                        assert_eq!(lines.len(), xs.len());
                        for (i, line) in lines.iter().enumerate() {
                            assert_eq!(line.terms, [format!("urn:{t}:{i}")]);
                        }
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
    }

    #[test]
    fn a_render_that_tracing_changes_is_refused_naming_the_template_and_line() {
        let s = service(
            Syntax::Jinja,
            &[("m.txt", "one\n{% filter length %}abc{% endfilter %}\n")],
        );
        let mut r = s.render("m.txt", json!({})).unwrap();
        assert_eq!(r.text, "one\n3");
        let err = s.trace(&mut r).unwrap_err();
        assert_eq!(err.template, "m.txt");
        assert!(err.message.contains("output line 2"), "{err}");
    }

    #[test]
    fn a_sidecar_reserves_for_lines_not_for_the_length_of_one_huge_line() {
        let s = service(Syntax::Jinja, &[("t.txt", "{{ s }}\n")]);
        // One line of 16 MiB: guessed at one line per 64 bytes, its
        // sidecar would reserve 40 MiB, charged to the run's memory.
        let mut r = s
            .render("t.txt", json!({ "s": "x".repeat(16 << 20) }))
            .unwrap();
        let start = s
            .trace_to_sidecar(&mut r, "g", &mut Citations::new())
            .unwrap();
        assert!(start.head.contains("\"t.txt:1\""), "{}", start.head);
        assert!(
            start.head.capacity() < 11 << 20,
            "reserved {} bytes",
            start.head.capacity()
        );
    }

    #[test]
    fn a_runaway_template_runs_out_of_fuel() {
        let s = service(
            Syntax::Jinja,
            &[(
                "a.txt",
                "{% for a in range(10000) %}{% for b in range(10000) %}x{% endfor %}{% endfor %}",
            )],
        );
        let err = s.render("a.txt", json!({})).unwrap_err();
        assert!(err.message.contains("fuel"), "{err}");
        // Made once, it runs out of the tracing render's fuel; the normal
        // render's error is the one given.
        let mut s = s;
        s.set_fuel(1_000_000);
        let err = s.render_json_to_trace("a.txt", "{}").unwrap_err();
        assert_eq!(err, s.render_json("a.txt", "{}").unwrap_err());
        assert!(err.message.contains("fuel"), "{err}");
        assert_eq!(err.template, "a.txt");
    }

    /// A render passes or fails the same, made once or twice: the tracing
    /// render has more fuel than the normal render (it makes more calls),
    /// and a render made once that spends more than the normal render may
    /// is decided by the normal render.
    #[test]
    fn a_render_made_once_passes_or_fails_as_the_normal_render_does() {
        let mut s = service(
            Syntax::Jinja,
            &[("a.txt", "{% for i in range(n) %}{{ i }}\n{% endfor %}")],
        );
        s.set_fuel(20_000);
        // The normal render's cost, in loop iterations, is found by trying.
        let passes = |n: usize| s.render_json("a.txt", &format!("{{\"n\": {n}}}")).is_ok();
        let limit = (1..20_000)
            .find(|&n| !passes(n))
            .expect("a loop that runs out");
        for n in [
            1,
            limit / 2,
            limit - 1,
            limit,
            limit + 1,
            limit * 2,
            limit * 5,
        ] {
            let context = format!("{{\"n\": {n}}}");
            let normal = s.render_json("a.txt", &context);
            let once = s.render_json_to_trace("a.txt", &context);
            match (normal, once) {
                (Ok(normal), Ok(mut once)) => {
                    assert_eq!(once.text_len(), normal.text.len(), "n = {n}");
                    s.trace_to_sidecar(&mut once, "g", &mut Citations::new())
                        .unwrap();
                    assert_eq!(once.text, normal.text, "n = {n}");
                }
                (Err(normal), Err(once)) => assert_eq!(once, normal, "n = {n}"),
                (normal, once) => panic!(
                    "n = {n}: the normal render passes: {}, made once: {}",
                    normal.is_ok(),
                    once.is_ok()
                ),
            }
        }
        // Just under the normal render's limit, the tracing render spends
        // more than it: the normal render is made too, and traced twice.
        let once = s
            .render_json_to_trace("a.txt", &format!("{{\"n\": {}}}", limit - 1))
            .unwrap();
        assert!(once.traced.is_none());
    }
}
