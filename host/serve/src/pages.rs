//! The viewer's pages: what each shows, read from the project as it is on
//! disk at the request, rendered on the server with HTML auto-escaping.

use std::path::Path;
use std::sync::Arc;

use minijinja::{Environment, Value};
use serde::Serialize;

use seams_core::{
    CheckReport, Consent, LOCK_FILE, Lock, OutputDir, Planned, Project, TraceViewError, Wait,
    WriteBackError, WriteBackPlan, check_with, plan_line_edit, plan_target, trace_view, view,
};
use seams_model::Model;
use seams_runtime::Runtime;
use seams_templates::SIDECAR_SUFFIX;

/// A page that could not be shown, with the HTTP status that says why.
#[derive(Debug)]
pub struct Failure {
    /// 404, 422 or 500.
    pub status: u16,
    /// What went wrong and what to do, for the user.
    pub message: String,
}

impl Failure {
    fn new(status: u16, message: impl std::fmt::Display) -> Failure {
        Failure {
            status,
            message: message.to_string(),
        }
    }
}

/// What a page is rendered from, besides the project.
pub struct Context<'a> {
    /// The project as loaded for this request.
    pub project: &'a Project,
    /// The runtime that runs its generators.
    pub runtime: &'a Runtime,
    /// The run's token, which every link carries.
    pub key: &'a str,
    /// The run's token again when writes are offered (the forms carry it).
    pub token: Option<&'a str>,
}

fn environment() -> Environment<'static> {
    let mut env = Environment::new();
    // `.html` templates escape every value they print.
    for (name, source) in [
        ("base.html", include_str!("../templates/base.html")),
        ("index.html", include_str!("../templates/index.html")),
        ("output.html", include_str!("../templates/output.html")),
        ("view.html", include_str!("../templates/view.html")),
        (
            "write_back.html",
            include_str!("../templates/write_back.html"),
        ),
        (
            "write_back_file.html",
            include_str!("../templates/write_back_file.html"),
        ),
        ("failure.html", include_str!("../templates/failure.html")),
    ] {
        env.add_template(name, source)
            .expect("the viewer's templates parse");
    }
    env
}

fn render(name: &str, context: Value) -> Result<String, Failure> {
    thread_local! {
        static ENV: Environment<'static> = environment();
    }
    ENV.with(|env| {
        env.get_template(name)
            .and_then(|t| t.render(context))
            .map_err(|e| Failure::new(500, format!("the viewer's page {name} failed: {e}")))
    })
}

/// A page of the project: its links carry the run's token (`key`), which
/// the viewer keeps out of cookies, since a cookie for 127.0.0.1 reaches
/// every port of it.
fn render_page(cx: &Context<'_>, name: &str, context: Value) -> Result<String, Failure> {
    render(name, minijinja::context! { key => cx.key, ..context })
}

/// The page that shows `failure`.
pub fn failure_page(failure: &Failure) -> String {
    render(
        "failure.html",
        minijinja::context! { title => "Failure", status => failure.status, message => failure.message.clone() },
    )
    .unwrap_or_else(|_| "seams serve: the page failed".to_owned())
}

/// `path` as the project shows it: relative to its root.
fn shown_path(project: &Project, path: &Path) -> String {
    path.strip_prefix(&project.root)
        .unwrap_or(path)
        .display()
        .to_string()
}

/// The project's output directory, posix, project-relative.
fn out_dir(project: &Project) -> String {
    project.output_dir.to_string_lossy().replace('\\', "/")
}

fn read_lock(project: &Project) -> Result<Option<Lock>, Failure> {
    let path = project.root.join(LOCK_FILE);
    // As every project file: regular, bounded (the lock's own cap).
    match seams_model::input_file::read(&path, 512 << 20).and_then(|bytes| {
        String::from_utf8(bytes)
            .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))
    }) {
        Ok(text) => Lock::parse(LOCK_FILE, &text)
            .map(Some)
            .map_err(|e| Failure::new(422, e)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(Failure::new(500, format!("{}: {e}", path.display()))),
    }
}

#[derive(Serialize)]
struct GeneratorRow {
    label: String,
    version: Option<String>,
}

#[derive(Serialize)]
struct OutputRow {
    /// Output-relative: the viewer's URLs use it.
    path: String,
    generator: String,
    /// `seams check`'s words for it; empty when it is as generated.
    states: Vec<&'static str>,
}

/// The project: its generators, its outputs with `seams check`'s state of
/// each, and every problem check found.
pub fn index(cx: &Context<'_>) -> Result<String, Failure> {
    let project = cx.project;
    let lock = read_lock(project)?;
    let report: CheckReport =
        check_with(project, cx.runtime, Wait::NoWait).map_err(|e| Failure::new(422, e))?;
    let prefix = format!("{}/", out_dir(project));
    let locked: std::collections::BTreeSet<&str> = lock
        .iter()
        .flat_map(|l| &l.outputs)
        .map(|o| o.path.as_str())
        .collect();
    // A sidecar is shown with its output's trace, not as a row of its own.
    let sidecar = |path: &str| {
        path.strip_suffix(SIDECAR_SUFFIX)
            .is_some_and(|output| locked.contains(output))
    };
    let mut outputs: Vec<OutputRow> = lock
        .iter()
        .flat_map(|l| &l.outputs)
        .filter(|o| !sidecar(&o.path))
        .filter_map(|o| {
            Some(OutputRow {
                path: o.path.strip_prefix(&prefix)?.to_owned(),
                generator: o.generator.clone(),
                states: Vec::new(),
            })
        })
        .collect();
    for problem in &report.problems {
        let Some(rel) = problem
            .path
            .as_deref()
            .and_then(|p| p.strip_prefix(&prefix))
        else {
            continue;
        };
        match outputs.iter_mut().find(|o| o.path == rel) {
            Some(row) => row.states.push(problem.kind.name()),
            None => outputs.push(OutputRow {
                path: rel.to_owned(),
                generator: String::new(),
                states: vec![problem.kind.name()],
            }),
        }
    }
    outputs.sort_by(|a, b| a.path.cmp(&b.path));
    let generators: Vec<GeneratorRow> = project
        .generators
        .iter()
        .map(|source| {
            let label = source.label();
            let version = lock.as_ref().and_then(|l| {
                l.generators
                    .iter()
                    .find(|g| g.source == label)
                    .map(|g| format!("{} {}", g.name, g.version))
            });
            GeneratorRow { label, version }
        })
        .collect();
    render_page(
        cx,
        "index.html",
        minijinja::context! {
            title => "Project",
            root => project.root.display().to_string(),
            out_dir => out_dir(project),
            generators => Value::from(minijinja::value::Serde(&generators)),
            outputs => Value::from(minijinja::value::Serde(&outputs)),
            problems => Value::from(minijinja::value::Serde(&report.problems)),
            clean => report.clean,
        },
    )
}

/// Whether `output` (output-relative) is a file the viewer may show: one
/// the lock lists, or one on disk under the output directory that check
/// reports. Anything else, `..` included, is not served.
fn known_output(project: &Project, output: &str) -> Result<(), Failure> {
    let plain = !output.is_empty()
        && output
            .split('/')
            .all(|part| !part.is_empty() && part != "." && part != "..");
    let locked = read_lock(project)?.is_some_and(|lock| {
        let path = format!("{}/{output}", out_dir(project));
        lock.outputs.iter().any(|o| o.path == path)
    });
    if plain && (locked || project.output_path().join(output).is_file()) {
        Ok(())
    } else {
        Err(Failure::new(
            404,
            format!("no such output: {output}; the project page lists the outputs"),
        ))
    }
}

#[derive(Serialize)]
struct Line {
    number: usize,
    text: String,
    traced: bool,
}

#[derive(Serialize)]
struct Term {
    iri: String,
    label: Option<String>,
    compact: String,
    /// `file:line` where a model file defines it.
    written_at: Option<String>,
    turtle: String,
}

/// Where the model files define `iri` (first write it as a subject),
/// `file:line`.
fn written_at(project: &Project, texts: &[(String, String)], iri: &str) -> Option<String> {
    texts.iter().find_map(|(file, text)| {
        let line = seams_model::written::subject_line(text, iri)?;
        Some(format!("{}:{line}", shown_path(project, Path::new(file))))
    })
}

/// The triples of `iri` as Turtle, without the prefix declarations.
fn triples(model: &Model, iri: &str) -> String {
    model
        .turtle_of(&[iri.to_owned()])
        .lines()
        .filter(|l| !l.starts_with("@prefix"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// One output with its line numbers; with `line`, beside it the template
/// lines that wrote that line (include chain and source) and the model
/// elements behind it (label, IRI, triples, where the model writes it).
pub fn output(
    cx: &Context<'_>,
    output: &str,
    line: Option<usize>,
    notice: Option<&str>,
) -> Result<String, Failure> {
    let project = cx.project;
    known_output(project, output)?;
    // Only a regular file inside the output directory, never through a
    // link: a cloned project's `out/x -> ~/.ssh/id_rsa` shows nothing.
    let unreadable = |why: String| {
        Failure::new(
            404,
            format!("{}/{output} cannot be shown: {why}", out_dir(project)),
        )
    };
    let dir = OutputDir::open_existing(&project.output_path())
        .map_err(|e| unreadable(e.to_string()))?
        .ok_or_else(|| unreadable("the output directory does not exist".into()))?;
    let bytes = dir
        .read_regular(output, project.limits.max_output_bytes as u64)
        .map_err(|e| unreadable(e.to_string()))?;
    // Hand edited: its bytes are not those the lock records, so the page
    // offers to write them back.
    let locked_path = format!("{}/{output}", out_dir(project));
    let edited = read_lock(project)?.is_some_and(|lock| {
        lock.outputs
            .iter()
            .any(|o| o.path == locked_path && o.sha256 != seams_model::sha256_hex(&bytes))
    });
    let text = String::from_utf8(bytes).map_err(|_| unreadable("it is not UTF-8 text".into()))?;
    let (trace, untraced_why) = match trace_view(project, cx.runtime, output, None) {
        Ok(trace) => (Some(trace), None),
        Err(e @ (TraceViewError::NoTrace { .. } | TraceViewError::BadTrace { .. })) => {
            (None, Some(e.to_string()))
        }
        Err(e) => return Err(Failure::new(422, e)),
    };
    let traced: Vec<usize> = trace
        .iter()
        .flat_map(|t| t.lines.iter().map(|l| l.line))
        .collect();
    let mut lines: Vec<Line> = text
        .split('\n')
        .enumerate()
        .map(|(i, text)| Line {
            number: i + 1,
            text: text.to_owned(),
            traced: traced.contains(&(i + 1)),
        })
        .collect();
    // A final newline ends the last line; it does not start one.
    if text.ends_with('\n') {
        lines.pop();
    }
    let selected = line.and_then(|n| trace.as_ref()?.lines.iter().find(|l| l.line == n));
    let terms: Vec<Term> = match selected {
        Some(selected) => {
            let model = Model::load(&project.model_files).map_err(|e| Failure::new(422, e))?;
            let texts: Vec<(String, String)> = project
                .model_files
                .iter()
                .filter_map(|f| {
                    let bytes =
                        seams_model::input_file::read(f, seams_model::input_file::MODEL_FILE_LIMIT)
                            .ok()?;
                    Some((f.display().to_string(), String::from_utf8(bytes).ok()?))
                })
                .collect();
            selected
                .terms
                .iter()
                .map(|t| Term {
                    iri: t.iri.clone(),
                    label: t.label.clone(),
                    compact: model.compact(&t.iri),
                    written_at: written_at(project, &texts, &t.iri),
                    turtle: triples(&model, &t.iri),
                })
                .collect()
        }
        None => Vec::new(),
    };
    render_page(
        cx,
        "output.html",
        minijinja::context! {
            title => output,
            output,
            shown => format!("{}/{output}", out_dir(project)),
            generator => trace.as_ref().map(|t| t.generator.clone()),
            untraced_why,
            lines => Value::from(minijinja::value::Serde(&lines)),
            line,
            selected => Value::from(minijinja::value::Serde(selected)),
            terms => Value::from(minijinja::value::Serde(&terms)),
            token => cx.token,
            notice,
            edited,
        },
    )
}

/// The view model a generator extracts from the model, pretty-printed.
pub fn generator_view(cx: &Context<'_>, generator: &str) -> Result<String, Failure> {
    let json = view(cx.project, cx.runtime, generator).map_err(|e| Failure::new(422, e))?;
    render_page(
        cx,
        "view.html",
        minijinja::context! { title => format!("{generator}: view model"), generator, json },
    )
}

/// A write-back asked for in the viewer's form.
#[derive(Debug, serde::Deserialize)]
pub struct WriteBackForm {
    /// The run's token.
    pub token: String,
    /// Output-relative.
    pub output: String,
    /// 1-based; with `text`, one line's edit. Without both, the hand edits
    /// of the file as it is on disk (lines changed, added or removed).
    #[serde(default)]
    pub line: Option<usize>,
    /// The line's new text.
    #[serde(default)]
    pub text: Option<String>,
    /// Present: apply, not only plan.
    #[serde(default)]
    pub apply: Option<String>,
    /// Present: apply even with effects.
    #[serde(default)]
    pub accept_effects: Option<String>,
    /// Present: apply even though it creates or removes a whole page,
    /// entity or form.
    #[serde(default)]
    pub accept_structure: Option<String>,
    /// The number of the model change to propose, among those that give
    /// the edit back (`--choose`).
    #[serde(default)]
    pub choose: Option<usize>,
}

#[derive(Serialize)]
struct Diff {
    line: usize,
    old: String,
    new: String,
}

fn plan_context(project: &Project, plan: &WriteBackPlan) -> minijinja::Value {
    let model_file = shown_path(project, &plan.model_file);
    let diff: Vec<Diff> = plan
        .diff
        .iter()
        .map(|(line, old, new)| Diff {
            line: *line,
            old: old.clone(),
            new: new.clone(),
        })
        .collect();
    minijinja::context! {
        element => plan.patch.element.clone(),
        property => plan.patch.property.clone(),
        old => plan.patch.old.clone(),
        new => plan.patch.new.clone(),
        model_file,
        diff => Value::from(minijinja::value::Serde(&diff)),
        effects => Value::from(minijinja::value::Serde(&plan.effects)),
    }
}

/// Plans the form's write-back and shows it, with the action that applies
/// it; or, with `apply`, applies it and regenerates. Returns the page, or
/// where to go after applying.
pub fn write_back(cx: &Context<'_>, form: &WriteBackForm) -> Result<WriteBack, Failure> {
    let project = cx.project;
    known_output(project, &form.output)?;
    let (line, text) = match (form.line, &form.text) {
        (Some(line), Some(text)) => (line, text),
        (None, None) => return write_back_file(cx, form),
        _ => {
            return Err(Failure::new(
                400,
                "refused: a line's write-back needs both its line and its text; write back from the output's page",
            ));
        }
    };
    let planned = plan_line_edit(project, cx.runtime, &form.output, line, text);
    let plan = match planned {
        Ok(plan) => plan,
        Err(refusal) => {
            let page = render_page(
                cx,
                "write_back.html",
                minijinja::context! {
                    title => "Write-back refused",
                    output => form.output.clone(),
                    line,
                    text,
                    refusal => refusal.to_string(),
                },
            )?;
            return Ok(WriteBack::Refused(page));
        }
    };
    if form.apply.is_none() {
        return render_page(
            cx,
            "write_back.html",
            minijinja::context! {
                title => "Write-back",
                output => form.output.clone(),
                line,
                text,
                plan => plan_context(project, &plan),
                token => cx.token,
            },
        )
        .map(WriteBack::Planned);
    }
    apply(cx, &Planned::Line(plan), form)
}

/// Applies a planned write-back: the model and the outputs in one run, or
/// nothing (with the refusal's reason).
fn apply(cx: &Context<'_>, planned: &Planned, form: &WriteBackForm) -> Result<WriteBack, Failure> {
    let model_file = shown_path(cx.project, planned.model_file());
    let report = planned
        .apply_and_generate(
            cx.project,
            cx.runtime,
            Consent {
                effects: form.accept_effects.is_some(),
                structure: form.accept_structure.is_some(),
            },
        )
        .map_err(|e| match e {
            // The viewer's consent is a box, not a flag.
            WriteBackError::Sweeping(what) => Failure::new(
                422,
                format!("{what}; nothing written: to apply it, tick \"yes, apply this change of the application's structure\""),
            ),
            WriteBackError::Effects(count) => Failure::new(
                422,
                format!("the patch also changes {count} other line(s), listed with it; nothing written: to apply it, tick \"apply with its effect(s)\""),
            ),
            e => Failure::new(422, e),
        })?;
    Ok(WriteBack::Applied {
        notice: format!(
            "wrote {model_file}, then generated: {} file(s) written",
            report.written.len()
        ),
    })
}

/// The write-back of the hand edits of a file as it is on disk: a line's
/// patch, or a block's (lines added, removed or changed together), shown
/// as the CLI shows it, with its apply action; or, with `apply`, applied
/// with the same all-or-nothing run as a line's.
fn write_back_file(cx: &Context<'_>, form: &WriteBackForm) -> Result<WriteBack, Failure> {
    let project = cx.project;
    let planned = match plan_target(project, cx.runtime, &form.output, form.choose) {
        Ok(planned) => planned,
        Err(refusal) => {
            let page = render_page(
                cx,
                "write_back_file.html",
                minijinja::context! {
                    title => "Write-back refused",
                    output => form.output.clone(),
                    refusal => refusal.to_string(),
                },
            )?;
            return Ok(WriteBack::Refused(page));
        }
    };
    if form.apply.is_none() {
        // The other changes that give the edit back, by number: the
        // viewer's picker, as `--choose N` on the command line.
        let (chosen, others): (usize, Vec<usize>) = match &planned {
            Planned::Block(plan) => (
                plan.chosen,
                (1..=plan.alternatives.len() + 1)
                    .filter(|n| *n != plan.chosen)
                    .collect(),
            ),
            Planned::Line(_) => (1, Vec::new()),
        };
        return render_page(
            cx,
            "write_back_file.html",
            minijinja::context! {
                title => "Write-back",
                output => form.output.clone(),
                proposal => planned.to_text(&project.root),
                effects => planned.effects().len(),
                sweeping => planned.sweeping(),
                chosen => chosen,
                others => others,
                model_file => shown_path(project, planned.model_file()),
                token => cx.token,
            },
        )
        .map(WriteBack::Planned);
    }
    apply(cx, &planned, form)
}

/// What a write-back request led to.
pub enum WriteBack {
    /// The plan, shown with its apply action.
    Planned(String),
    /// A refusal, shown.
    Refused(String),
    /// Applied; the output is shown again with this notice.
    Applied {
        /// What was written.
        notice: String,
    },
}

/// Loads the project and runs `page` on it.
pub fn with_project<T>(
    root: &Path,
    reach: seams_core::Reach,
    prepare: &(dyn Fn(&mut Project) + Send + Sync),
    runtime: &Arc<Runtime>,
    key: &str,
    writes: bool,
    page: impl FnOnce(&Context<'_>) -> Result<T, Failure>,
) -> Result<T, Failure> {
    let mut project = Project::load_reaching(root, reach).map_err(|e| Failure::new(422, e))?;
    prepare(&mut project);
    page(&Context {
        project: &project,
        runtime,
        key,
        token: writes.then_some(key),
    })
}
