//! The engine and its runs: loading (and caching) components, running a
//! generator's steps in a fresh sandboxed store, checking what it returns.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use wasmtime::component::{Component, Linker};
use wasmtime::{Config, Engine, Store, Trap};

use seams_model::{Model, input_text, sha256_hex};
use seams_templates::{Rendered, TemplateService, TraceLine, sources_of};

use crate::cache;
use crate::error::{GeneratorError, GeneratorErrorKind, RuntimeError};
use crate::limits::{Limits, STACK_BYTES};
use crate::meta::Meta;
use crate::since_v0_1_0 as bindings;

use crate::sandbox::{Sandbox, Violation};
use bindings::GeneratorPre;

/// How long between two epoch ticks; the deadline's resolution.
const EPOCH_TICK: Duration = Duration::from_millis(10);

/// One file a generator returned.
#[derive(Debug, Clone, PartialEq)]
pub struct Output {
    /// The validated relative path.
    pub path: String,
    /// The file's text.
    pub text: String,
    /// How the host rendered it, when it did.
    pub rendered: Option<Rendered>,
    /// Its trace: the host's for rendered files, the generator's `trace`
    /// export's for plain text (when it gives one).
    pub trace: Option<Vec<TraceLine>>,
    /// Model IRIs the file was made from, sorted: the union of its trace's
    /// terms, or what the `sources` export says for untraced files.
    pub sources: Vec<String>,
    /// Whether a trace or the `sources` export names the file.
    pub named: bool,
}

/// Everything one generator run produced.
#[derive(Debug, Clone)]
pub struct GeneratorRun {
    /// The generator's meta.
    pub meta: Meta,
    /// The component's sha256.
    pub component_sha256: String,
    /// Its files, sorted by path.
    pub outputs: Vec<Output>,
    /// What it logged (and printed), bounded.
    pub log: Vec<String>,
    /// Files the `trace` or `sources` export named that `render` did not
    /// return. [`Runtime::run`] refuses a run that has any;
    /// [`Runtime::run_reporting`] returns them for `seams test-generator`.
    pub naming: Vec<String>,
}

/// A compiled generator, ready to instantiate quickly.
#[derive(Clone)]
pub struct LoadedGenerator {
    label: String,
    sha256: String,
    pre: GeneratorPre<Sandbox>,
}

impl std::fmt::Debug for LoadedGenerator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoadedGenerator")
            .field("label", &self.label)
            .field("sha256", &self.sha256)
            .finish_non_exhaustive()
    }
}

impl LoadedGenerator {
    /// The component's sha256.
    pub fn sha256(&self) -> &str {
        &self.sha256
    }

    /// How errors name it.
    pub fn label(&self) -> &str {
        &self.label
    }
}

/// The engine, its linker and its component cache. One per process.
pub struct Runtime {
    engine: Engine,
    linker: Linker<Sandbox>,
    cache: Option<cache::ComponentCache>,
    ticking: Arc<AtomicBool>,
    tracing: bool,
}

impl std::fmt::Debug for Runtime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Runtime").finish_non_exhaustive()
    }
}

impl Drop for Runtime {
    fn drop(&mut self) {
        self.ticking.store(false, Ordering::Relaxed);
    }
}

impl Runtime {
    /// An engine with the sandbox's settings. Compiled components are
    /// cached in `cache_dir` (created when needed), keyed by the
    /// component's sha256 and the engine's compatibility hash; `None`
    /// compiles every time.
    ///
    /// # Errors
    ///
    /// The engine or linker could not be set up.
    pub fn new(cache_dir: Option<PathBuf>) -> Result<Runtime, RuntimeError> {
        Self::build(cache_dir).map_err(|e| RuntimeError(format!("{e:#}")))
    }

    fn build(cache_dir: Option<PathBuf>) -> wasmtime::Result<Runtime> {
        let mut config = Config::new();
        config
            .wasm_component_model(true)
            .consume_fuel(true)
            .epoch_interruption(true)
            .cranelift_nan_canonicalization(true)
            .max_wasm_stack(STACK_BYTES);
        let engine = Engine::new(&config)?;
        let mut linker = Linker::new(&engine);
        wasmtime_wasi::p2::add_to_linker_sync(&mut linker)?;
        bindings::add_to_linker(&mut linker)?;

        // The deadline's clock: the thread ends when the runtime is dropped.
        let ticking = Arc::new(AtomicBool::new(true));
        let weak = engine.weak();
        let flag = ticking.clone();
        std::thread::spawn(move || {
            while flag.load(Ordering::Relaxed) {
                std::thread::sleep(EPOCH_TICK);
                match weak.upgrade() {
                    Some(engine) => engine.increment_epoch(),
                    None => break,
                }
            }
        });
        let cache = cache_dir.map(|dir| cache::ComponentCache::new(dir, &engine));
        Ok(Runtime {
            engine,
            linker,
            cache,
            ticking,
            tracing: true,
        })
    }

    /// Checks, compiles (or loads from the cache) and links a component.
    /// `label` names it in errors.
    ///
    /// # Errors
    ///
    /// Not wasm, a core module, another protocol version or world, a
    /// compile error, or an import the sandbox does not provide.
    pub fn load(&self, label: &str, bytes: &[u8]) -> Result<LoadedGenerator, GeneratorError> {
        let fail = |kind| GeneratorError {
            generator: label.to_owned(),
            kind,
        };
        if bytes.len() < 8 || &bytes[..4] != b"\0asm" {
            return Err(fail(GeneratorErrorKind::NotWasm));
        }
        if bytes[4..8] == [1, 0, 0, 0] {
            return Err(fail(GeneratorErrorKind::CoreModule));
        }
        let sha256 = sha256_hex(bytes);
        let component = match &self.cache {
            Some(cache) => cache.get_or_compile(&self.engine, &sha256, bytes),
            None => Component::new(&self.engine, bytes).map_err(|e| format!("{e:#}")),
        }
        .map_err(|e| fail(GeneratorErrorKind::Compile(e)))?;
        bindings::check_version(&self.engine, &component).map_err(fail)?;
        let pre = self
            .linker
            .instantiate_pre(&component)
            .map_err(|e| fail(GeneratorErrorKind::Link(format!("{e:#}"))))?;
        let pre =
            GeneratorPre::new(pre).map_err(|e| fail(GeneratorErrorKind::Link(format!("{e:#}"))))?;
        Ok(LoadedGenerator {
            label: label.to_owned(),
            sha256,
            pre,
        })
    }

    /// Runs a generator on `model` within `limits`: meta, extract, render,
    /// then lock sources for files the host did not render.
    ///
    /// # Errors
    ///
    /// Any limit, trap, reported error or protocol violation, naming the
    /// generator.
    pub fn run(
        &self,
        generator: &LoadedGenerator,
        model: &Arc<Model>,
        limits: &Limits,
    ) -> Result<GeneratorRun, GeneratorError> {
        let run = self.run_reporting(generator, model, limits)?;
        if let Some(problem) = run.naming.first() {
            return Err(GeneratorError {
                generator: generator.label.clone(),
                kind: GeneratorErrorKind::Protocol(problem.clone()),
            });
        }
        Ok(run)
    }

    /// As [`Runtime::run`], but a `trace` or `sources` export that names
    /// files `render` did not return is reported in
    /// [`GeneratorRun::naming`] instead of failing the run.
    ///
    /// # Errors
    ///
    /// As [`Runtime::run`], but for naming.
    pub fn run_reporting(
        &self,
        generator: &LoadedGenerator,
        model: &Arc<Model>,
        limits: &Limits,
    ) -> Result<GeneratorRun, GeneratorError> {
        let tracing = self.tracing;
        let ((meta, outputs, naming), log) = self.call(generator, model, limits, |store, g| {
            run_steps(store, g, tracing)
        })?;
        Ok(GeneratorRun {
            meta,
            component_sha256: generator.sha256.clone(),
            outputs,
            log,
            naming,
        })
    }

    /// Asks a generator for its meta only (name, version, templates).
    ///
    /// # Errors
    ///
    /// As [`Runtime::run`].
    pub fn meta(
        &self,
        generator: &LoadedGenerator,
        model: &Arc<Model>,
        limits: &Limits,
    ) -> Result<Meta, GeneratorError> {
        let (meta, _) = self.call(generator, model, limits, |store, g| {
            let instance = g.pre.instantiate(&mut *store)?;
            let api = instance.seams_generator_generator_api();
            Ok(bindings::meta_from_wit(api.call_meta(&mut *store)?)
                .map_err(GeneratorErrorKind::Meta)?)
        })?;
        Ok(meta)
    }

    /// Runs a generator's meta and extract steps only: the view model its
    /// templates see, as JSON text.
    ///
    /// # Errors
    ///
    /// As [`Runtime::run`].
    pub fn extract(
        &self,
        generator: &LoadedGenerator,
        model: &Arc<Model>,
        limits: &Limits,
    ) -> Result<String, GeneratorError> {
        let (view, _) = self.call(generator, model, limits, |store, g| {
            let instance = g.pre.instantiate(&mut *store)?;
            let api = instance.seams_generator_generator_api();
            api.call_meta(&mut *store)?;
            api.call_extract(&mut *store)?
                .map_err(|e| reported("extract", e))
        })?;
        Ok(view)
    }

    /// Runs `steps` in a fresh sandboxed store; returns their result and
    /// the log.
    fn call<R>(
        &self,
        generator: &LoadedGenerator,
        model: &Arc<Model>,
        limits: &Limits,
        steps: impl FnOnce(&mut Store<Sandbox>, &LoadedGenerator) -> Result<R, Failure>,
    ) -> Result<(R, Vec<String>), GeneratorError> {
        let deadline = Instant::now() + limits.timeout;
        let sandbox = Sandbox::new(model.clone(), limits.clone(), deadline);
        let mut store = Store::new(&self.engine, sandbox);
        store.limiter(|s| s);
        store
            .set_fuel(limits.fuel)
            .expect("fuel is enabled in the engine config");
        let ticks = (limits.timeout.as_millis() / EPOCH_TICK.as_millis()).max(1) as u64;
        store.set_epoch_deadline(ticks);

        let result = steps(&mut store, generator);
        let log = store.data_mut().take_log();
        let kind = match result {
            Ok(r) => return Ok((r, log)),
            Err(Failure::Kind(kind)) => kind,
            Err(Failure::Wasm(error)) => classify(&error, store.data(), limits, &log),
        };
        Err(GeneratorError {
            generator: generator.label.clone(),
            kind,
        })
    }

    /// Turns the tracing render off: no traces, no sidecars; lock sources
    /// come from the `sources` export. For measuring what tracing costs.
    pub(crate) fn without_tracing(mut self) -> Self {
        self.tracing = false;
        self
    }
}

enum Failure {
    Kind(GeneratorErrorKind),
    Wasm(wasmtime::Error),
}

impl From<wasmtime::Error> for Failure {
    fn from(e: wasmtime::Error) -> Self {
        Failure::Wasm(e)
    }
}

impl From<GeneratorErrorKind> for Failure {
    fn from(k: GeneratorErrorKind) -> Self {
        Failure::Kind(k)
    }
}

fn reported(step: &'static str, e: bindings::WitError) -> Failure {
    Failure::Kind(GeneratorErrorKind::Reported {
        step,
        message: bindings::error_message(&e),
    })
}

fn run_steps(
    store: &mut Store<Sandbox>,
    generator: &LoadedGenerator,
    tracing: bool,
) -> Result<(Meta, Vec<Output>, Vec<String>), Failure> {
    let mut naming = Vec::new();
    let instance = generator.pre.instantiate(&mut *store)?;
    let api = instance.seams_generator_generator_api();

    let meta =
        bindings::meta_from_wit(api.call_meta(&mut *store)?).map_err(GeneratorErrorKind::Meta)?;
    let service = Arc::new(
        TemplateService::new(meta.templates.clone(), meta.syntax)
            .map_err(GeneratorErrorKind::from)?,
    );
    store.data_mut().set_templates(service.clone());

    let view = api
        .call_extract(&mut *store)?
        .map_err(|e| reported("extract", e))?;
    if let Err(e) = serde_json::from_str::<serde_json::Value>(&view) {
        return Err(GeneratorErrorKind::Protocol(format!(
            "extract returned a view model that is not JSON: {e}"
        ))
        .into());
    }

    let files = api
        .call_render(&mut *store, &view)?
        .map_err(|e| reported("render", e))?;
    let limits = store.data().limits().clone();
    if files.len() > limits.max_outputs {
        return Err(GeneratorErrorKind::TooManyOutputs {
            count: files.len(),
            limit: limits.max_outputs,
        }
        .into());
    }
    let mut outputs = Vec::with_capacity(files.len());
    let mut total = 0usize;
    for file in files {
        let (text, rendered) = match file.body {
            bindings::Body::Text(text) => (text, None),
            bindings::Body::Rendered(resource) => {
                let rendered = store.data_mut().take_rendered(resource).map_err(|e| {
                    GeneratorErrorKind::Protocol(format!(
                        "render returned {:?} with a rendered body the host does not know: {e}",
                        file.path
                    ))
                })?;
                (rendered.text.clone(), Some(rendered))
            }
        };
        total = total.saturating_add(text.len());
        if total > limits.max_output_bytes {
            return Err(GeneratorErrorKind::OutputTooLarge {
                limit_mib: limits.max_output_bytes >> 20,
            }
            .into());
        }
        crate::output_path::validate(&file.path).map_err(|reason| GeneratorErrorKind::BadPath {
            path: file.path.clone(),
            reason,
        })?;
        outputs.push(Output {
            path: file.path,
            sources: Vec::new(),
            trace: None,
            named: false,
            text,
            rendered,
        });
    }
    outputs.sort_by(|a, b| a.path.cmp(&b.path));
    crate::output_path::check_distinct(outputs.iter().map(|o| o.path.as_str()))
        .map_err(GeneratorErrorKind::Protocol)?;

    // The host traces what it rendered: a second, tracing render.
    for output in outputs.iter_mut().filter(|_| tracing) {
        if let Some(rendered) = &output.rendered {
            let lines = service.trace(rendered).map_err(GeneratorErrorKind::from)?;
            output.sources = sources_of(&lines);
            output.trace = Some(lines);
            output.named = true;
        }
        if Instant::now() >= store.data().deadline() {
            return Err(GeneratorErrorKind::Timeout {
                seconds: limits.timeout.as_secs_f64(),
            }
            .into());
        }
    }

    // Plain-text files: the generator's own traces, checked, never trusted
    // (asked for even when every file was rendered, so a lie is caught).
    if tracing {
        let traces = api
            .call_trace(&mut *store, &view)?
            .map_err(|e| reported("trace", e))?;
        // What a generator's own trace may cite: its templates' lines.
        let line_counts: HashMap<&str, usize> = meta
            .templates
            .iter()
            .map(|(name, source)| (name.as_str(), source.lines().count()))
            .collect();
        for entry in traces {
            let Some(output) = named(&mut outputs, &entry.path, "trace", &mut naming) else {
                continue;
            };
            if output.rendered.is_some() {
                return Err(GeneratorErrorKind::Protocol(format!(
                    "trace names {:?}, whose body the host rendered and traces itself",
                    entry.path
                ))
                .into());
            }
            if output.trace.is_some() {
                return Err(GeneratorErrorKind::Protocol(format!(
                    "trace names {:?} twice",
                    entry.path
                ))
                .into());
            }
            let mut lines: Vec<TraceLine> = entry
                .lines
                .into_iter()
                .map(|l| TraceLine {
                    line: l.line as usize,
                    templates: l.templates,
                    terms: l.terms,
                    scope: Vec::new(),
                })
                .collect();
            seams_templates::check_lines(&output.text, &mut lines).map_err(|why| {
                GeneratorErrorKind::Protocol(format!(
                    "trace of {:?} is refused: {why}",
                    output.path
                ))
            })?;
            check_origins(&line_counts, &output.path, &lines)?;
            output.sources = sources_of(&lines);
            output.trace = Some(lines);
            output.named = true;
        }
    }

    // Files with no trace take their sources from the generator. It is
    // asked even when every file is traced, so that what it names is
    // checked too.
    {
        let sources = api
            .call_sources(&mut *store, &view)?
            .map_err(|e| reported("sources", e))?;
        for entry in sources {
            let Some(output) = named(&mut outputs, &entry.path, "sources", &mut naming) else {
                continue;
            };
            output.named = true;
            if output.trace.is_some() {
                continue;
            }
            let mut iris = entry.iris;
            iris.sort();
            iris.dedup();
            output.sources = iris;
        }
    }
    check_terms(store.data().model(), &outputs)?;
    Ok((meta, outputs, naming))
}

/// A generator's own trace may only name lines of its own templates.
fn check_origins(
    line_counts: &HashMap<&str, usize>,
    path: &str,
    lines: &[TraceLine],
) -> Result<(), GeneratorErrorKind> {
    for line in lines {
        for origin in &line.templates {
            let exists = origin.rsplit_once(':').is_some_and(|(name, number)| {
                match (line_counts.get(name), number.parse::<usize>()) {
                    (Some(&count), Ok(n)) => (1..=count).contains(&n),
                    _ => false,
                }
            });
            if !exists {
                return Err(GeneratorErrorKind::Protocol(format!(
                    "the trace of {path:?} line {} names the origin {}, which is not a line of one of its templates",
                    line.line,
                    input_text::echo(origin)
                )));
            }
        }
    }
    Ok(())
}

/// Every trace term and every source must be something the model
/// mentions: the sidecars and the lock cite the model, not what a
/// generator claims.
fn check_terms(model: &Model, outputs: &[Output]) -> Result<(), GeneratorErrorKind> {
    let mut known: HashSet<&str> = HashSet::new();
    for output in outputs {
        let traced = output
            .trace
            .iter()
            .flatten()
            .flat_map(|l| l.terms.iter().map(move |t| (t, Some(l.line))));
        let sourced = output.sources.iter().map(|t| (t, None));
        for (term, line) in traced.chain(sourced) {
            if known.contains(term.as_str()) {
                continue;
            }
            if !model.mentions(term) {
                let what = match line {
                    Some(n) => format!("the trace of {:?} line {n}", output.path),
                    None => format!("the sources of {:?}", output.path),
                };
                return Err(GeneratorErrorKind::Protocol(format!(
                    "{what} names {}, which the model does not mention; cite IRIs of the model",
                    input_text::echo(term)
                )));
            }
            known.insert(term);
        }
    }
    Ok(())
}

/// The output a `trace` or `sources` entry names; a name render did not
/// return is recorded in `naming` instead. `outputs` is sorted by path.
fn named<'a>(
    outputs: &'a mut [Output],
    path: &str,
    export: &str,
    naming: &mut Vec<String>,
) -> Option<&'a mut Output> {
    match outputs.binary_search_by(|o| o.path.as_str().cmp(path)) {
        Ok(i) => Some(&mut outputs[i]),
        Err(_) => {
            naming.push(format!(
                "{export} names {path:?}, which render did not return"
            ));
            None
        }
    }
}

fn classify(
    error: &wasmtime::Error,
    sandbox: &Sandbox,
    limits: &Limits,
    log: &[String],
) -> GeneratorErrorKind {
    if let Some(v) = sandbox.violation() {
        return match v {
            Violation::Memory => GeneratorErrorKind::Memory {
                limit_mib: limits.memory_bytes >> 20,
            },
            Violation::Deadline => GeneratorErrorKind::Timeout {
                seconds: limits.timeout.as_secs_f64(),
            },
            Violation::OutputSize => GeneratorErrorKind::OutputTooLarge {
                limit_mib: limits.max_output_bytes >> 20,
            },
        };
    }
    match error.downcast_ref::<Trap>() {
        Some(Trap::OutOfFuel) => GeneratorErrorKind::Fuel { limit: limits.fuel },
        Some(Trap::Interrupt) => GeneratorErrorKind::Timeout {
            seconds: limits.timeout.as_secs_f64(),
        },
        Some(Trap::StackOverflow) => GeneratorErrorKind::StackOverflow,
        _ => {
            // A panic prints its message to stderr before the trap.
            let tail: Vec<&str> = log.iter().rev().take(3).rev().map(String::as_str).collect();
            // The first line only: wasmtime appends a multi-line backtrace.
            let mut message = match error.downcast_ref::<Trap>() {
                Some(trap) => trap.to_string(),
                None => error.root_cause().to_string(),
            };
            if !tail.is_empty() {
                message.push_str(&format!(" (it printed: {})", tail.join(" | ")));
            }
            GeneratorErrorKind::Trap { message }
        }
    }
}
