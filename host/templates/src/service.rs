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

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};

use minijinja::value::{Object, Value};
use minijinja::{Environment, Error, ErrorKind, UndefinedBehavior};

use crate::error::TemplateError;
use crate::syntax::{Delimiters, Syntax};
use crate::trace::TraceLine;

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
    state: Arc<Mutex<TraceState>>,
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
        let mut env = environment(syntax);
        let state = Arc::new(Mutex::new(TraceState::default()));
        let mut traced = tracing_environment(syntax, &state);
        let delimiters = Delimiters::for_syntax(syntax);
        let mut sources = BTreeMap::new();
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
            let instrumented = {
                let mut st = state.lock().expect("trace state");
                crate::instrument::instrument(&name, &source, &delimiters, &mut |line| {
                    st.origins.add(&name, line)
                })?
            };
            traced
                .add_template_owned(name.clone(), instrumented)
                .map_err(|e| TemplateError::from_minijinja(&name, &e))?;
            sources.insert(name, source);
        }
        Ok(TemplateService {
            env,
            traced,
            state,
            sources,
        })
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
        let value: Value = serde_json::from_str(context).map_err(|e| TemplateError {
            template: name.to_owned(),
            line: None,
            message: format!("the context is not JSON: {e}"),
        })?;
        if value.kind() != minijinja::value::ValueKind::Map {
            return Err(not_an_object(name));
        }
        self.render_value(name, value)
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
    pub fn trace(&self, rendered: &Rendered) -> Result<Vec<TraceLine>, TemplateError> {
        self.trace_with(rendered, Scopes::Kept)
    }

    /// [`TemplateService::trace`], keeping each line's
    /// [`TraceLine::scope`] only when asked: sidecars do not carry it,
    /// and reading it off the view for every line is most of the cost of
    /// the lines whose terms are their own.
    ///
    /// # Errors
    ///
    /// As [`TemplateService::trace`].
    pub fn trace_with(
        &self,
        rendered: &Rendered,
        scopes: Scopes,
    ) -> Result<Vec<TraceLine>, TemplateError> {
        let name = rendered.template.as_str();
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
        let traced = self.render_traced(rendered)?;
        let root = view_iris(&rendered.value).unwrap_or_default();
        let st = self.state.lock().expect("trace state");
        parse_traced(
            name,
            &traced,
            &rendered.text,
            &st.marks,
            &st.origins,
            &root,
            scopes,
        )
    }

    /// The instrumented render of `rendered`'s template and context: its
    /// text with sentinels, the marks recorded in the trace state.
    pub(crate) fn render_traced(&self, rendered: &Rendered) -> Result<String, TemplateError> {
        let name = rendered.template.as_str();
        let template = self
            .traced
            .get_template(name)
            .map_err(|e| TemplateError::from_minijinja(name, &e))?;
        self.state.lock().expect("trace state").reset();
        template
            .render(rendered.value.clone())
            .map_err(|e| TemplateError::from_minijinja(name, &e))
    }
}

/// Whether a trace keeps each line's scope ([`TraceLine::scope`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scopes {
    /// Kept: for goldens, which may cite a line's enclosing view object.
    Kept,
    /// Left empty where the line's terms do not come from it: for sidecars.
    Dropped,
}

/// Splits the traced text into lines and their marks, checks that the
/// text is the normal render's, and builds the trace lines.
fn parse_traced(
    name: &str,
    traced: &str,
    normal: &str,
    marks: &[MarkInfo],
    origins: &Origins,
    root: &[String],
    scopes: Scopes,
) -> Result<Vec<TraceLine>, TemplateError> {
    fn chain_of<'a>(m: &'a MarkInfo, origins: &'a Origins) -> impl Iterator<Item = &'a str> {
        m.chain
            .iter()
            .chain([&m.origin])
            .map(|&id| origins.names[id].as_str())
    }
    // The stripped text, and per line its start in it and its marks.
    let mut stripped = String::with_capacity(normal.len());
    let mut lines: Vec<(usize, Vec<usize>)> = vec![(0, Vec::new())];
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
            lines.push((stripped.len(), Vec::new()));
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
        let digits = bytes[body_start..]
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .count();
        let end = if traced[body_start + digits..].starts_with(&close) {
            body_start + digits
        } else {
            memchr::memmem::find(&bytes[body_start..], close.as_bytes())
                .map_or(bytes.len(), |e| body_start + e)
        };
        if let Ok(i) = traced[body_start..end].parse::<usize>()
            && i < marks.len()
        {
            lines.last_mut().expect("one line at least").1.push(i);
        }
        pos = (end + close.len()).min(bytes.len());
    }
    stripped.push_str(&traced[pos..]);

    if stripped != normal {
        let line = stripped
            .split('\n')
            .zip(normal.split('\n'))
            .position(|(a, b)| a != b)
            .unwrap_or_else(|| stripped.split('\n').count().min(normal.split('\n').count()) - 1);
        // The differing line's own marks, else the nearest before it: a
        // filter block, say, may have swallowed the line's sentinels.
        let origin = lines[..=line.min(lines.len() - 1)]
            .iter()
            .rev()
            .find_map(|(_, m)| m.first())
            .map(|&m| chain_of(&marks[m], origins).collect::<Vec<_>>().join(" > "))
            .unwrap_or_else(|| name.to_owned());
        return Err(TemplateError {
            template: name.to_owned(),
            line: None,
            message: format!(
                "the tracing render differs from the normal render at output line {} (near {origin}); nothing was written",
                line + 1
            ),
        });
    }

    let mut out = Vec::new();
    for (number, (start, line_marks)) in lines.iter().enumerate() {
        let end = lines
            .get(number + 1)
            .map_or(stripped.len(), |(next, _)| next - 1);
        if stripped[*start..end].trim().is_empty() {
            continue;
        }
        let mut templates: Vec<&str> = Vec::new();
        let mut terms = BTreeSet::new();
        for &m in line_marks {
            let info = &marks[m];
            for origin in chain_of(info, origins) {
                if !templates.contains(&origin) {
                    templates.push(origin);
                }
            }
            if let Some(owner) = &info.owner {
                add_view_iris(owner, &mut terms);
            }
        }
        let scope = || {
            line_marks
                .iter()
                .find_map(|&m| {
                    let info = &marks[m];
                    info.enclosing.iter().chain(&info.frame).find_map(view_iris)
                })
                .unwrap_or_else(|| root.to_vec())
        };
        let scope = if terms.is_empty() || scopes == Scopes::Kept {
            scope()
        } else {
            Vec::new()
        };
        // No value read off a view object: the enclosing view object's.
        if terms.is_empty() {
            terms.extend(scope.iter().cloned());
        }
        if templates.is_empty() {
            return Err(TemplateError {
                template: name.to_owned(),
                line: None,
                message: format!(
                    "output line {} has no template origin in the tracing render",
                    number + 1
                ),
            });
        }
        out.push(TraceLine {
            line: number + 1,
            templates: templates.into_iter().map(str::to_owned).collect(),
            terms: terms.into_iter().collect(),
            scope,
        });
    }
    Ok(out)
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
/// instrumented templates' functions, and a formatter that prints their
/// sentinels.
fn tracing_environment(syntax: Syntax, state: &Arc<Mutex<TraceState>>) -> Environment<'static> {
    let mut env = environment(syntax);
    // Instrumentation adds calls; the budget grows with them.
    env.set_fuel(Some(RENDER_FUEL * 4));
    let st = state.clone();
    env.add_function(
        crate::instrument::LINE_FN,
        move |args: &[Value]| -> Result<Value, Error> {
            let mut st = st.lock().expect("trace state");
            let id = origin_id(args.first(), &st)?;
            let mark = st.mark(id, None, &args[1..]);
            Ok(Value::from_object(Mark {
                value: None,
                index: mark,
            }))
        },
    );
    let st = state.clone();
    env.add_function(
        crate::instrument::VALUE_FN,
        move |args: &[Value]| -> Result<Value, Error> {
            let mut st = st.lock().expect("trace state");
            let id = origin_id(args.first(), &st)?;
            let value = args.get(1).cloned().unwrap_or_default();
            // The object the value was read off; else the value itself, when it
            // is an object printed whole.
            let owner = match args.get(2) {
                Some(owner) if !owner.is_none() => owner.clone(),
                _ => value.clone(),
            };
            let enclosing = args.get(3..).unwrap_or(&[]);
            let mark = st.mark(id, Some(owner), enclosing);
            Ok(Value::from_object(Mark {
                value: Some(value),
                index: mark,
            }))
        },
    );
    let st = state.clone();
    env.add_function(
        crate::instrument::INCLUDE_FN,
        move |args: &[Value]| -> Result<Value, Error> {
            let mut st = st.lock().expect("trace state");
            let id = origin_id(args.first(), &st)?;
            let name = args.get(1).cloned().unwrap_or_default();
            st.include(id, &name, args.get(2..).unwrap_or(&[]));
            Ok(name)
        },
    );
    env.set_formatter(|out, state, value| {
        let Some(mark) = value.downcast_object_ref::<Mark>() else {
            return minijinja::escape_formatter(out, state, value);
        };
        if let Some(inner) = &mark.value {
            minijinja::escape_formatter(out, state, inner)?;
        }
        use std::fmt::Write as _;
        // Printed for every value and line: digits by hand, not `write!`.
        let mut digits = [0u8; 20];
        let mut at = digits.len();
        let mut n = mark.index;
        loop {
            at -= 1;
            digits[at] = b'0' + (n % 10) as u8;
            n /= 10;
            if n == 0 {
                break;
            }
        }
        let digits = std::str::from_utf8(&digits[at..]).expect("ASCII digits");
        out.write_char(SENTINEL_OPEN)
            .and_then(|()| out.write_str(digits))
            .and_then(|()| out.write_char(SENTINEL_CLOSE))
            .map_err(Error::from)
    });
    env
}

/// The origin id a tracing call names, checked against the origins the
/// instrumentation made: the calls are the host's, but nothing a render
/// receives is trusted to index anything.
fn origin_id(arg: Option<&Value>, state: &TraceState) -> Result<usize, Error> {
    arg.and_then(|v| v.as_usize())
        .filter(|&id| id < state.origins.lines.len())
        .ok_or_else(|| {
            Error::new(
                ErrorKind::InvalidOperation,
                "tracing call without a valid origin",
            )
        })
}

/// Adds a view object's IRIs (its `iri` and `origins`, when it is one)
/// to `terms`, copying only those not there yet: most lines cite the same
/// few objects many times.
fn add_view_iris(value: &Value, terms: &mut BTreeSet<String>) {
    if value.kind() != minijinja::value::ValueKind::Map {
        return;
    }
    let Ok(iri) = value.get_attr("iri") else {
        return;
    };
    let Some(iri) = iri.as_str() else {
        return;
    };
    let mut add = |term: &str| {
        if !terms.contains(term) {
            terms.insert(term.to_owned());
        }
    };
    add(iri);
    if let Ok(origins) = value.get_attr("origins")
        && let Ok(items) = origins.try_iter()
    {
        for origin in items {
            if let Some(origin) = origin.as_str() {
                add(origin);
            }
        }
    }
}

/// A view object's IRIs: its `iri` and `origins`, when it is one.
fn view_iris(value: &Value) -> Option<Vec<String>> {
    if value.kind() != minijinja::value::ValueKind::Map {
        return None;
    }
    let iri = value.get_attr("iri").ok()?;
    let mut iris = vec![iri.as_str()?.to_owned()];
    if let Ok(origins) = value.get_attr("origins")
        && let Ok(items) = origins.try_iter()
    {
        iris.extend(items.filter_map(|o| o.as_str().map(str::to_owned)));
    }
    Some(iris)
}

/// What a sentinel stands for: a printed value or text, with the
/// template's include chain at that point.
#[derive(Debug)]
struct Mark {
    value: Option<Value>,
    index: usize,
}

impl Object for Mark {}

/// A sentinel's meaning. Cheap to record: IRIs are read off the objects
/// only when the trace lines are built, and only where needed.
#[derive(Debug, Clone)]
struct MarkInfo {
    /// The origin id of the line that printed it.
    origin: usize,
    /// Origin ids of the includes around it, outermost first.
    chain: Arc<[usize]>,
    /// For a printed value: the object it was read off (or the value).
    owner: Option<Value>,
    /// The innermost enclosing loop or macro object.
    enclosing: Option<Value>,
    /// The object the innermost include was given.
    frame: Option<Value>,
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

/// The tracing render's side channel, reset for every render.
#[derive(Debug, Default)]
struct TraceState {
    origins: Origins,
    marks: Vec<MarkInfo>,
    includes: Vec<IncludeFrame>,
    /// The include chain, rebuilt only when `includes` changes.
    chain: Option<Arc<[usize]>>,
}

impl TraceState {
    fn reset(&mut self) {
        self.marks.clear();
        self.includes.clear();
        self.chain = None;
    }

    /// Drops include frames that have ended: text of template `t` is
    /// printed inside the innermost include of `t`.
    fn unwind_to(&mut self, id: usize) {
        let template = self.origins.lines[id].0;
        while let Some(top) = self.includes.last() {
            if top.included == Some(template) {
                break;
            }
            self.includes.pop();
            self.chain = None;
        }
    }

    fn mark(&mut self, id: usize, owner: Option<Value>, enclosing: &[Value]) -> usize {
        self.unwind_to(id);
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
            enclosing: enclosing.iter().find(|v| is_map(v)).cloned(),
            frame,
        });
        self.marks.len() - 1
    }

    fn include(&mut self, id: usize, name: &Value, enclosing: &[Value]) {
        self.unwind_to(id);
        let included = name
            .as_str()
            .and_then(|n| self.origins.index.get(n).copied());
        self.includes.push(IncludeFrame {
            origin: id,
            included,
            object: enclosing.iter().find(|v| is_map(v)).cloned(),
        });
        self.chain = None;
    }
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
}

impl Rendered {
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
        }
    }
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
    fn the_tracing_functions_cannot_be_reached_from_a_template() {
        // Calling them with a huge origin id panicked the host once.
        for source in [
            "{% if __seams_line is defined %}{{ __seams_line(4000000000) }}{% endif %}\n",
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
        let state = Arc::new(Mutex::new(TraceState::default()));
        let env = tracing_environment(Syntax::Jinja, &state);
        for call in [
            "{{ __seams_line(4000000000) }}",
            "{{ __seams_line() }}",
            "{{ __seams_value(99, 1) }}",
            "{{ __seams_include(7, 'x') }}",
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
            service.trace(&rendered).unwrap()[0].templates,
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

    /// Renders and traces.
    fn traced(
        syntax: Syntax,
        templates: &[(&str, &str)],
        context: serde_json::Value,
    ) -> (String, Vec<Line>) {
        let s = service(syntax, templates);
        let r = s.render(templates[0].0, context).unwrap();
        let lines = s.trace(&r).unwrap();
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
        let r = s.render("c.txt", json!({"x": "sneaky \u{F8F0}"})).unwrap();
        let err = s.trace(&r).unwrap_err();
        assert_eq!(err.template, "c.txt");
        assert!(err.message.contains("output line 2"), "{err}");
    }

    #[test]
    fn a_render_that_tracing_changes_is_refused_naming_the_template_and_line() {
        let s = service(
            Syntax::Jinja,
            &[("m.txt", "one\n{% filter length %}abc{% endfilter %}\n")],
        );
        let r = s.render("m.txt", json!({})).unwrap();
        assert_eq!(r.text, "one\n3");
        let err = s.trace(&r).unwrap_err();
        assert_eq!(err.template, "m.txt");
        assert!(err.message.contains("output line 2"), "{err}");
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
    }
}
