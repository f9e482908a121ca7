//! The engine and its runs: loading (and caching) components, running a
//! generator's steps in a fresh sandboxed store, checking what it returns.

use std::collections::{HashMap, HashSet};
use std::panic::AssertUnwindSafe;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use wasmtime::component::{Component, Linker};
use wasmtime::{Config, Engine, Store, Trap};

use seams_model::{Model, input_text, sha256_hex};
use seams_templates::{Rendered, TraceLine, sidecar_tail, sources_of};

use crate::budget::{self, Budget, GRACE, Stop};
use crate::cache;
use crate::error::{GeneratorError, GeneratorErrorKind, ProtocolError, RuntimeError};
use crate::function_cache::FunctionCache;
use crate::limits::{HOST_STACK_BYTES, Limits};
use crate::linked::Pre;
use crate::meta::Meta;
use crate::protocol::{self, Exports};
use crate::sandbox::{Kept, Sandbox, Violation};
use crate::sink::{Blob, Sink};

/// How long between two epoch ticks; the deadline's resolution.
const EPOCH_TICK: Duration = Duration::from_millis(10);

/// One file a generator returned.
#[derive(Debug, Clone, PartialEq)]
pub struct Output {
    /// The validated relative path.
    pub path: String,
    /// The file's text; empty when it was written out ([`Output::stored`]).
    pub text: String,
    /// The file and its sidecar as the run's [`Sink::Files`] wrote them,
    /// for files the host rendered; their text and trace are then not in
    /// memory.
    pub stored: Option<Stored>,
    /// How the host rendered it, when it did. Once traced, only the
    /// template's name is kept ([`Rendered::shed`]).
    pub rendered: Option<Rendered>,
    /// Its trace: the host's for rendered files, the generator's `trace`
    /// export's for plain text (when it gives one).
    pub trace: Option<Vec<TraceLine>>,
    /// Model IRIs the file was made from, sorted by their text: the union
    /// of its trace's terms, or what the `sources` export says for
    /// untraced files. Indexes into the run's [`GeneratorRun::terms`]
    /// (read them with [`GeneratorRun::source_iris`]).
    pub sources: Vec<u32>,
    /// Whether a trace or the `sources` export names the file.
    pub named: bool,
}

/// A rendered file written out by the run, with its sidecar.
#[derive(Debug, Clone)]
pub struct Stored {
    /// The text.
    pub text: Blob,
    /// The sidecar, when the render was traced.
    pub sidecar: Option<Blob>,
}

impl PartialEq for Stored {
    fn eq(&self, other: &Self) -> bool {
        let sidecar = |s: &Stored| s.sidecar.as_ref().map(|b| b.sha256().to_owned());
        self.text.sha256() == other.text.sha256() && sidecar(self) == sidecar(other)
    }
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
    /// Every model IRI its traces and sources named, each once, at the
    /// index the outputs' sources give it (in no particular order).
    pub terms: Vec<Arc<str>>,
    /// What it logged (and printed), bounded.
    pub log: Vec<String>,
    /// Files the `trace` or `sources` export named that `render` did not
    /// return. [`Runtime::run`] refuses a run that has any;
    /// [`Runtime::run_reporting`] returns them for `seams test-generator`.
    pub naming: Vec<ProtocolError>,
    /// The fuel the run spent, its wasm and the host's work for it
    /// together: what `[sandbox] fuel` must allow for this model.
    pub fuel: u64,
    /// In a traced run, when a render of this generator cannot be made
    /// once, the first template line that prevents it, and why
    /// ([`seams_templates::TemplateService::renders_once`]): each is then
    /// rendered twice.
    pub renders_twice: Option<String>,
}

impl GeneratorRun {
    /// The model IRIs `output` (one of [`GeneratorRun::outputs`]) was made
    /// from, sorted.
    pub fn source_iris<'a>(&'a self, output: &'a Output) -> impl Iterator<Item = &'a str> {
        output
            .sources
            .iter()
            .filter_map(|&i| self.terms.get(i as usize).map(|t| &**t))
    }
}

/// What a generator's steps after `meta` made.
struct Made {
    outputs: Vec<Output>,
    terms: Vec<Arc<str>>,
    naming: Vec<ProtocolError>,
    fuel: u64,
    renders_twice: Option<String>,
}

/// A compiled generator, ready to instantiate quickly.
#[derive(Clone)]
pub struct LoadedGenerator {
    label: String,
    sha256: String,
    pre: Pre,
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

    /// The protocol version it targets, e.g. `0.2.0`.
    pub fn protocol(&self) -> &'static str {
        self.pre.version()
    }
}

/// The sandbox's engine settings, with `stack_bytes` of wasm stack, its
/// compiler keeping what it compiles in `functions` when given.
fn engine_config(
    stack_bytes: usize,
    functions: Option<Arc<dyn wasmtime::CacheStore>>,
) -> Result<Config, RuntimeError> {
    let mut config = Config::new();
    config
        .wasm_component_model(true)
        .consume_fuel(true)
        .epoch_interruption(true)
        // Determinism: one NaN, and relaxed SIMD computed the same on
        // every CPU.
        .cranelift_nan_canonicalization(true)
        .relaxed_simd_deterministic(true)
        .max_wasm_stack(stack_bytes);
    if let Some(functions) = functions {
        config
            .enable_incremental_compilation(functions)
            .map_err(|e| RuntimeError::Engine {
                message: format!("{e:#}"),
            })?;
    }
    Ok(config)
}

/// The engine, its linker and its component cache. One per process.
/// The engine (with the thread that ticks its deadlines) and the linker
/// are made when a component is first loaded: a run that is up to date
/// loads none, and a generate loads components while it parses the model,
/// so making them there costs nobody time.
pub struct Runtime {
    engine: OnceLock<Result<Engine, RuntimeError>>,
    linker: OnceLock<Result<Linker<Sandbox>, RuntimeError>>,
    cache: Option<cache::ComponentCache>,
    /// The compiler's functions, kept beside the compiled components.
    functions: Option<Arc<FunctionCache>>,
    ticking: Arc<AtomicBool>,
    work: HostWork,
    stack_bytes: usize,
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
    /// A runtime with the sandbox's settings. Compiled components are
    /// cached in `cache_dir` (created when needed), keyed by the
    /// component's sha256 and the engine's compatibility hash; `None`
    /// compiles every time.
    ///
    /// # Errors
    ///
    /// None yet: the engine is set up when a component is first loaded,
    /// and a failure there is that load's error.
    pub fn new(cache_dir: Option<PathBuf>) -> Result<Runtime, RuntimeError> {
        Self::with_stack(cache_dir, Limits::default().stack_bytes)
    }

    /// As [`Runtime::new`], with `stack_bytes` of wasm stack for every run
    /// (`[sandbox] stack-kib`: the engine's setting, not a run's).
    ///
    /// # Errors
    ///
    /// As [`Runtime::new`].
    pub fn with_stack(
        cache_dir: Option<PathBuf>,
        stack_bytes: usize,
    ) -> Result<Runtime, RuntimeError> {
        Ok(Runtime {
            engine: OnceLock::new(),
            linker: OnceLock::new(),
            functions: cache_dir
                .clone()
                .map(|dir| Arc::new(FunctionCache::new(dir))),
            cache: cache_dir.map(cache::ComponentCache::new),
            ticking: Arc::new(AtomicBool::new(true)),
            work: HostWork {
                tracing: true,
                model_check: true,
            },
            stack_bytes,
        })
    }

    /// The engine, made once: with the sandbox's settings, its deadlines
    /// ticked by a thread that ends when the runtime is dropped.
    fn engine(&self) -> Result<&Engine, &RuntimeError> {
        self.engine
            .get_or_init(|| {
                let functions = self.functions.as_ref().map(|functions| {
                    let store: Arc<dyn wasmtime::CacheStore> = functions.clone();
                    store
                });
                let config = engine_config(self.stack_bytes, functions)?;
                let engine = Engine::new(&config).map_err(|e| RuntimeError::Engine {
                    message: format!("{e:#}"),
                })?;
                if let Some(functions) = &self.functions {
                    functions.set_engine(cache::engine_key(&engine));
                }
                let weak = engine.weak();
                let flag = self.ticking.clone();
                std::thread::Builder::new()
                    .name("seams-epoch".to_owned())
                    .spawn(move || {
                        while flag.load(Ordering::Relaxed) {
                            std::thread::sleep(EPOCH_TICK);
                            match weak.upgrade() {
                                Some(engine) => engine.increment_epoch(),
                                None => break,
                            }
                        }
                    })
                    .map_err(|e| RuntimeError::Ticker {
                        message: e.to_string(),
                    })?;
                Ok(engine)
            })
            .as_ref()
    }

    /// The linker every component is instantiated with: WASI and the
    /// protocol's imports, made once.
    fn linker(&self) -> Result<&Linker<Sandbox>, &RuntimeError> {
        let engine = self.engine()?;
        self.linker
            .get_or_init(|| {
                let mut linker = Linker::new(engine);
                wasmtime_wasi::p2::add_to_linker_sync(&mut linker)
                    .and_then(|()| crate::clock::add_to_linker(&mut linker))
                    .and_then(|()| crate::since_v0_1_0::add_to_linker(&mut linker))
                    .and_then(|()| crate::since_v0_2_0::add_to_linker(&mut linker))
                    .map(|()| linker)
                    .map_err(|e| RuntimeError::Engine {
                        message: format!("{e:#}"),
                    })
            })
            .as_ref()
    }

    /// The names of the interfaces a loaded component imports and exports,
    /// each sorted: what a registry artifact's config lists.
    pub fn interfaces(&self, loaded: &LoadedGenerator) -> (Vec<String>, Vec<String>) {
        let component = loaded.pre.component();
        let ty = component.component_type();
        let mut imports: Vec<String> = ty
            .imports(component.engine())
            .map(|(n, _)| n.to_owned())
            .collect();
        let mut exports: Vec<String> = ty
            .exports(component.engine())
            .map(|(n, _)| n.to_owned())
            .collect();
        imports.sort();
        exports.sort();
        (imports, exports)
    }

    /// The namespaces of the vocabularies the component with `sha256`
    /// declared when it last ran with this cache directory: those whose
    /// IRIs reading the model may gather for the model check
    /// ([`seams_model::Model::from_files_watching`]). None when unknown.
    pub fn known_namespaces(&self, sha256: &str) -> Vec<String> {
        self.cache
            .as_ref()
            .map(|cache| cache.namespaces(sha256))
            .unwrap_or_default()
    }

    /// Checks, compiles (or loads from the cache) and links a component.
    /// `label` names it in errors.
    ///
    /// # Errors
    ///
    /// Not wasm, a core module, another protocol version or world, a
    /// compile error, or an import the sandbox does not provide.
    pub fn load(&self, label: &str, bytes: &[u8]) -> Result<LoadedGenerator, GeneratorError> {
        self.load_hashed(label, bytes, &sha256_hex(bytes))
    }

    /// [`Runtime::load`] of a component whose sha256 (hex) the caller
    /// computed when it read the bytes. It names the compiled component in
    /// the cache, so it must be theirs.
    ///
    /// # Errors
    ///
    /// As [`Runtime::load`].
    pub fn load_hashed(
        &self,
        label: &str,
        bytes: &[u8],
        sha256: &str,
    ) -> Result<LoadedGenerator, GeneratorError> {
        debug_assert_eq!(sha256, sha256_hex(bytes), "{label}: a wrong sha256");
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
        let engine = self
            .engine()
            .map_err(|e| fail(GeneratorErrorKind::Engine(e.clone())))?;
        let compile = || match &self.cache {
            Some(cache) => cache.get_or_compile(engine, sha256, bytes),
            None => Component::new(engine, bytes).map_err(|e| format!("{e:#}")),
        };
        let panicked = || {
            Err("the compiler failed on this component (a bug in wasmtime or Cranelift)".to_owned())
        };
        let component = match std::panic::catch_unwind(std::panic::AssertUnwindSafe(compile)) {
            Ok(component) => component,
            // Cranelift takes a stored function back as it is; one it
            // cannot take (a segment forged, or damaged past its hash)
            // must cost a compile, never the process: the segments are
            // dropped and the component compiled afresh.
            Err(_) => match &self.functions {
                Some(functions) => {
                    functions.distrust();
                    std::panic::catch_unwind(std::panic::AssertUnwindSafe(compile))
                        .unwrap_or_else(|_| panicked())
                }
                None => panicked(),
            },
        };
        if let Some(functions) = &self.functions {
            functions.persist();
        }
        let component =
            component.map_err(|message| fail(GeneratorErrorKind::Compile { message }))?;
        let linker = self
            .linker()
            .map_err(|e| fail(GeneratorErrorKind::Engine(e.clone())))?;
        let pre = Pre::new(engine, linker, &component).map_err(fail)?;
        Ok(LoadedGenerator {
            label: label.to_owned(),
            sha256: sha256.to_owned(),
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
        self.run_into(generator, model, limits, &Sink::Memory)
    }

    /// As [`Runtime::run`], each rendered file going to `sink` as soon as
    /// it is final ([`Output::stored`]).
    ///
    /// # Errors
    ///
    /// As [`Runtime::run`], and a file that cannot be written.
    pub fn run_into(
        &self,
        generator: &LoadedGenerator,
        model: &Arc<Model>,
        limits: &Limits,
        sink: &Sink,
    ) -> Result<GeneratorRun, GeneratorError> {
        let run = self.run_stored(generator, model, limits, sink.clone())?;
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
        self.run_stored(generator, model, limits, Sink::Memory)
    }

    fn run_stored(
        &self,
        generator: &LoadedGenerator,
        model: &Arc<Model>,
        limits: &Limits,
        sink: Sink,
    ) -> Result<GeneratorRun, GeneratorError> {
        let work = self.work;
        let ((meta, made), log) = self.call(generator, model, limits, move |store, g| {
            run_steps(store, g, work, sink)
        })?;
        if let Some(cache) = &self.cache {
            let namespaces: Vec<String> = meta
                .vocabularies
                .iter()
                .map(|v| v.namespace.clone())
                .collect();
            cache.remember_namespaces(&generator.sha256, &namespaces);
        }
        Ok(GeneratorRun {
            meta,
            component_sha256: generator.sha256.clone(),
            outputs: made.outputs,
            terms: made.terms,
            log,
            naming: made.naming,
            fuel: made.fuel,
            renders_twice: made.renders_twice,
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
            let instance = instantiate(store, g)?;
            Ok(instance.meta(store)?.map_err(GeneratorErrorKind::Meta)?)
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
            let instance = instantiate(store, g)?;
            instance.meta(store)?.map_err(GeneratorErrorKind::Meta)?;
            instance.extract(store)?.map_err(|e| reported("extract", e))
        })?;
        Ok(view)
    }

    /// Runs `steps` in a fresh sandboxed store on a thread of their own;
    /// returns their result and the log. The run is given up (and its
    /// thread left stopped or running, holding at most its budget) when it
    /// stops at its budget or is still busy `GRACE` past its deadline.
    fn call<R: Send + 'static>(
        &self,
        generator: &LoadedGenerator,
        model: &Arc<Model>,
        limits: &Limits,
        steps: impl FnOnce(&mut Store<Sandbox>, &LoadedGenerator) -> Result<R, Failure> + Send + 'static,
    ) -> Result<(R, Vec<String>), GeneratorError> {
        let fail = |kind| GeneratorError {
            generator: generator.label.clone(),
            kind,
        };
        let deadline = Instant::now() + limits.timeout;
        let budget = Budget::new(limits.memory_bytes, deadline);
        let (sender, receiver) = mpsc::sync_channel(1);
        let run = RunInStore {
            stack_bytes: self.stack_bytes,
            engine: generator.pre.component().engine().clone(),
            generator: generator.clone(),
            model: model.clone(),
            limits: limits.clone(),
            budget: budget.clone(),
        };
        std::thread::Builder::new()
            .name("seams-run".to_owned())
            .stack_size(HOST_STACK_BYTES + self.stack_bytes)
            .spawn(move || {
                let _entered = run.budget.enter();
                let report = |outcome| {
                    let _ = sender.send(outcome);
                };
                if let Err(payload) =
                    std::panic::catch_unwind(AssertUnwindSafe(|| run.run(steps, report)))
                {
                    // A panic before the outcome was reported fails the run;
                    // one in the store's drop, after it, reaches nobody.
                    report(Err(GeneratorErrorKind::from_panic(&*payload)));
                }
            })
            .map_err(|e| {
                fail(GeneratorErrorKind::Internal(format!(
                    "cannot start a thread for the run: {e}"
                )))
            })?;
        let timeout = || GeneratorErrorKind::Timeout {
            seconds: limits.timeout.as_secs_f64(),
        };
        loop {
            match receiver.recv_timeout(EPOCH_TICK) {
                Ok(outcome) => return outcome.map_err(fail),
                Err(RecvTimeoutError::Disconnected) => {
                    return Err(fail(GeneratorErrorKind::Internal(
                        "the run's thread ended without a result".to_owned(),
                    )));
                }
                Err(RecvTimeoutError::Timeout) => match budget.stopped() {
                    Some(Stop::Memory) => {
                        return Err(fail(GeneratorErrorKind::Memory {
                            limit_mib: limits.memory_bytes >> 20,
                        }));
                    }
                    Some(Stop::Deadline) => return Err(fail(timeout())),
                    None if Instant::now() >= deadline + GRACE => return Err(fail(timeout())),
                    None => {}
                },
            }
        }
    }

    /// Turns the tracing render off: no traces, no sidecars; lock sources
    /// come from the `sources` export. For measuring what tracing costs.
    #[cfg(feature = "testing")]
    pub(crate) fn without_tracing(mut self) -> Self {
        self.work.tracing = false;
        self
    }

    /// Turns the model check against the generators' vocabularies off.
    /// For measuring what it costs.
    #[cfg(feature = "testing")]
    pub(crate) fn without_model_check(mut self) -> Self {
        self.work.model_check = false;
        self
    }
}

/// What the host does for a run beyond the protocol's steps: everything,
/// but for measuring what each part costs.
#[derive(Debug, Clone, Copy)]
struct HostWork {
    /// Trace each render as it is made.
    tracing: bool,
    /// Check the model against the generator's vocabularies first.
    model_check: bool,
}

/// What a run's thread needs, owned.
struct RunInStore {
    stack_bytes: usize,
    engine: Engine,
    generator: LoadedGenerator,
    model: Arc<Model>,
    limits: Limits,
    budget: Arc<Budget>,
}

impl RunInStore {
    /// Runs `steps` in a new store and tells `report` the outcome, before
    /// the store is dropped: its memory is unmapped while the caller goes
    /// on.
    fn run<R>(
        self,
        steps: impl FnOnce(&mut Store<Sandbox>, &LoadedGenerator) -> Result<R, Failure>,
        report: impl FnOnce(Result<(R, Vec<String>), GeneratorErrorKind>),
    ) {
        let limits = self.limits.clone();
        let sandbox = Sandbox::new(self.model, self.limits, self.budget);
        let mut store = budget::lenient(|| Store::new(&self.engine, sandbox));
        store.limiter(|s| s);
        store
            .set_fuel(limits.fuel)
            .expect("fuel is enabled in the engine config");
        let ticks = (limits.timeout.as_millis() / EPOCH_TICK.as_millis()).max(1) as u64;
        store.set_epoch_deadline(ticks);
        // What the guest may hand the host in one call: no more than its
        // memory (the copy is charged to the budget too).
        store.set_hostcall_fuel(limits.memory_bytes);
        store.set_max_component_handles(limits.max_handles);

        let result = budget::enforced(|| steps(&mut store, &self.generator));
        let log = store.data_mut().take_log();
        let outcome = match result {
            Ok(r) => Ok((r, log)),
            // A render that failed on the keeper's thread came first.
            Err(Failure::Kind(kind)) => Err(store.data_mut().keeper_failure().unwrap_or(kind)),
            Err(Failure::Wasm(error)) => {
                Err(store.data_mut().take_failure().unwrap_or_else(|| {
                    classify(&error, store.data(), &limits, self.stack_bytes, &log)
                }))
            }
        };
        report(outcome);
        // Dropping a store takes the engine's locks: never stopped there.
        budget::lenient(|| drop(store));
    }
}

/// Instantiates the generator; not enforced, as instantiation takes the
/// engine's locks.
fn instantiate(
    store: &mut Store<Sandbox>,
    generator: &LoadedGenerator,
) -> wasmtime::Result<Box<dyn Exports>> {
    budget::lenient(|| generator.pre.instantiate(store))
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

/// Takes the host's work since the last export call from the store's fuel:
/// wasm and host work share `[sandbox] fuel`.
fn settle_fuel(store: &mut Store<Sandbox>) -> Result<(), Failure> {
    let due = store.data_mut().unsettled_fuel();
    let left = store.get_fuel()?;
    if due > left {
        let limit = store.data().limits().fuel;
        return Err(GeneratorErrorKind::Fuel { limit }.into());
    }
    store.set_fuel(left - due)?;
    Ok(())
}

fn reported(step: &'static str, message: String) -> Failure {
    Failure::Kind(GeneratorErrorKind::Reported { step, message })
}

fn run_steps(
    store: &mut Store<Sandbox>,
    generator: &LoadedGenerator,
    work: HostWork,
    sink: Sink,
) -> Result<(Meta, Made), Failure> {
    let tracing = work.tracing;
    let instance = instantiate(store, generator)?;

    let meta = instance.meta(store)?.map_err(GeneratorErrorKind::Meta)?;
    settle_fuel(store)?;
    // The model must follow the vocabularies the generator reads: a typo
    // is named, not turned into a broken output. Checked on a thread of
    // its own while the generator runs; what it finds comes first, as if
    // the generator had never run.
    let check = match work.model_check && !meta.vocabularies.is_empty() {
        true => {
            let model = store.data().shared_model();
            let vocabularies = meta.vocabularies.clone();
            let check = budget::alongside(store.data().budget(), "seams-check", move || {
                // Wanted at the end of the run: the generator and the
                // template parser come first.
                budget::in_background();
                seams_model::vocabulary::check(&model, &vocabularies)
            })
            .map_err(|e| {
                GeneratorErrorKind::Internal(format!(
                    "cannot start a thread for the model check: {e}"
                ))
            })?;
            Some(check)
        }
        false => None,
    };
    let generated = generate_steps(store, &*instance, &meta, tracing, sink);
    if let Some(check) = check {
        match check.join() {
            Some(Ok(findings)) if findings.is_empty() => {}
            Some(Ok(findings)) => return Err(GeneratorErrorKind::Model(findings).into()),
            Some(Err(e)) => return Err(GeneratorErrorKind::Meta(e.into()).into()),
            None => {
                return Err(GeneratorErrorKind::Internal(
                    "the model check stopped before it finished".to_owned(),
                )
                .into());
            }
        }
    }
    Ok((meta, generated?))
}

/// The generator's steps after `meta`: extract, render, trace, sources.
fn generate_steps(
    store: &mut Store<Sandbox>,
    instance: &dyn Exports,
    meta: &Meta,
    tracing: bool,
    sink: Sink,
) -> Result<Made, Failure> {
    let mut naming = Vec::new();
    // Parsed beside extract, which seldom renders (a render made there
    // waits for them); templates that do not parse fail the run as they
    // did when they were parsed first, whatever extract did.
    store.data_mut().parse_templates(
        meta.templates.clone(),
        meta.syntax,
        tracing,
        sink,
        &meta.name,
    )?;
    let extracted = instance.extract(store);
    let Some(service) = store.data_mut().parsed_templates()? else {
        // A render during extract found them unusable, and says why.
        return Err(extracted.err().map_or_else(
            || GeneratorErrorKind::Internal("the templates are gone".to_owned()).into(),
            Failure::from,
        ));
    };
    let renders_twice = service
        .renders_once()
        .err()
        .filter(|_| tracing)
        .map(str::to_owned);
    let view = extracted?.map_err(|e| reported("extract", e))?;
    settle_fuel(store)?;
    // Checked, not kept: no tree is built.
    if let Err(e) = serde_json::from_str::<serde::de::IgnoredAny>(&view) {
        return Err(GeneratorErrorKind::from(ProtocolError::ViewNotJson {
            message: e.to_string(),
        })
        .into());
    }

    let files = instance.render(store, &view)?;
    // Every render finished first: one that failed to be traced or
    // written came before whatever the generator returned.
    if let Some(why) = store.data_mut().keeper_failure() {
        return Err(why.into());
    }
    let files = files.map_err(|e| reported("render", e))?;
    settle_fuel(store)?;
    let limits = store.data().limits().clone();
    if files.len() > limits.max_outputs {
        return Err(GeneratorErrorKind::TooManyOutputs {
            count: files.len(),
            limit: limits.max_outputs,
        }
        .into());
    }
    let mut outputs = Vec::with_capacity(files.len());
    // Renders kept by the sink, by output: finished once every path is
    // checked (see `store_all_kept`).
    let mut pending = Vec::new();
    let mut total = 0usize;
    for file in files {
        let (text, rendered, kept) = match file.body {
            protocol::Body::Text(text) => (text, None, None),
            protocol::Body::Rendered(resource) => {
                let (mut rendered, slot) =
                    store.data_mut().take_rendered(resource).map_err(|e| {
                        GeneratorErrorKind::from(ProtocolError::UnknownBody {
                            path: file.path.clone(),
                            message: e.to_string(),
                        })
                    })?;
                let kept = slot.map(|slot| store.data_mut().kept(slot)).transpose()?;
                // Traced already: the text moves to the output. Untraced,
                // the render keeps it (and its context) for callers that
                // trace it themselves.
                let text = if rendered.trace.is_some() {
                    std::mem::take(&mut rendered.text)
                } else {
                    rendered.text.clone()
                };
                (text, Some(rendered), kept)
            }
        };
        total = total.saturating_add(kept.as_ref().map_or(text.len(), |k| k.text.len()));
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
        if let Some(kept) = kept {
            pending.push((outputs.len(), kept));
        }
        outputs.push(Output {
            path: file.path,
            named: false,
            stored: None,
            sources: Vec::new(),
            trace: None,
            text,
            rendered,
        });
    }
    let (at, kept): (Vec<usize>, Vec<Kept>) = pending.into_iter().unzip();
    let finished = {
        let paths = at.iter().map(|&i| outputs[i].path.as_str());
        store_all_kept(store.data().budget(), kept.into_iter().zip(paths).collect())
    };
    for (i, finished) in at.into_iter().zip(finished) {
        let (stored, sources) = finished.map_err(|e| store.data().write_failure(&e))?;
        let output = &mut outputs[i];
        output.named = stored.sidecar.is_some();
        output.stored = Some(stored);
        output.sources = sources;
    }
    outputs.sort_by(|a, b| a.path.cmp(&b.path));
    crate::output_path::check_distinct(outputs.iter().map(|o| o.path.as_str()))
        .map_err(GeneratorErrorKind::Protocol)?;

    // The host traced what it rendered as it rendered it (a second,
    // tracing render in `Sandbox::render`).
    for output in outputs.iter_mut().filter(|_| tracing) {
        if let Some(lines) = output.rendered.as_mut().and_then(|r| r.trace.take()) {
            output.sources = store.data_mut().intern_all(sources_of(&lines))?;
            output.trace = Some(lines);
            output.named = true;
        }
    }

    // The terms cited so far are checked against the model on a thread of
    // their own while the generator is asked for its traces and sources
    // (at expense x1000, 100 ms of the run's end, on one core).
    let early = early_term_check(store.data());

    // Plain-text files: the generator's own traces, checked, never trusted
    // (asked for even when every file was rendered, so a lie is caught).
    if tracing {
        let traces = instance
            .trace(store, &view)?
            .map_err(|e| reported("trace", e))?;
        settle_fuel(store)?;
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
                return Err(GeneratorErrorKind::from(ProtocolError::TracedByHost {
                    path: entry.path.clone(),
                })
                .into());
            }
            if output.trace.is_some() {
                return Err(GeneratorErrorKind::from(ProtocolError::TracedTwice {
                    path: entry.path.clone(),
                })
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
                GeneratorErrorKind::from(ProtocolError::TraceRefused {
                    path: output.path.clone(),
                    reason: why.to_string(),
                })
            })?;
            check_origins(&line_counts, &output.path, &lines)?;
            output.sources = store.data_mut().intern_all(sources_of(&lines))?;
            output.trace = Some(lines);
            output.named = true;
        }
    }

    // Files with no trace take their sources from the generator. It is
    // asked even when every file is traced, so that what it names is
    // checked too.
    {
        let sources = instance
            .sources(store, &view)?
            .map_err(|e| reported("sources", e))?;
        settle_fuel(store)?;
        for entry in sources {
            let Some(output) = named(&mut outputs, &entry.path, "sources", &mut naming) else {
                continue;
            };
            output.named = true;
            if output.trace.is_some() || output.stored.as_ref().is_some_and(|s| s.sidecar.is_some())
            {
                continue;
            }
            let mut iris = entry.iris;
            iris.sort();
            iris.dedup();
            output.sources = store.data_mut().intern_all(iris)?;
        }
    }
    let sandbox = store.data();
    let terms = sandbox.terms();
    check_terms(sandbox.model(), &terms, early, &outputs)?;
    let fuel = limits.fuel.saturating_sub(store.get_fuel()?);
    Ok(Made {
        outputs,
        terms,
        naming,
        fuel,
        renders_twice,
    })
}

/// A kept render, finished: its stored files and its sources.
type StoredKept = std::io::Result<(Stored, Vec<u32>)>;

/// Finishes a render the sink kept, now that its output's path is known:
/// the stored files and the render's sources.
fn store_kept(kept: Kept, path: &str) -> StoredKept {
    let sidecar = match kept.sidecar {
        Some(mut sidecar) => {
            sidecar.write(sidecar_tail(path).as_bytes())?;
            Some(sidecar.finish())
        }
        None => None,
    };
    let stored = Stored {
        text: kept.text,
        sidecar,
    };
    Ok((stored, kept.sources))
}

/// [`store_kept`] for each of `jobs`, on every core, counted in the run's
/// budget; the results in order. Each reopens a sidecar for its last
/// bytes: one output after another, on the generator's thread, that was
/// 3 % of the thread's time at expense x100 (606 outputs).
fn store_all_kept(budget: &Arc<Budget>, jobs: Vec<(Kept, &str)>) -> Vec<StoredKept> {
    use std::sync::atomic::AtomicUsize;
    use std::sync::{Mutex, PoisonError};
    let workers = seams_model::cores().min(jobs.len());
    let jobs: Vec<Mutex<Option<(Kept, &str)>>> =
        jobs.into_iter().map(|job| Mutex::new(Some(job))).collect();
    let results: Vec<OnceLock<StoredKept>> = jobs.iter().map(|_| OnceLock::new()).collect();
    let next = AtomicUsize::new(0);
    let work = || {
        loop {
            let at = next.fetch_add(1, Ordering::Relaxed);
            let Some(job) = jobs.get(at) else {
                break;
            };
            let taken = job.lock().unwrap_or_else(PoisonError::into_inner).take();
            if let Some((kept, path)) = taken {
                let _ = results[at].set(store_kept(kept, path));
            }
        }
    };
    std::thread::scope(|scope| {
        for _ in 1..workers {
            // A thread that cannot start leaves its share to the others.
            let _ = std::thread::Builder::new()
                .name("seams-sidecars".to_owned())
                .spawn_scoped(scope, || {
                    let _entered = budget.enter();
                    // Counted, not enforced: a few hundred bytes a file,
                    // and a stop here would end the scope with a panic.
                    budget::lenient(work);
                });
        }
        work();
    });
    results
        .into_iter()
        .map(|result| {
            result.into_inner().unwrap_or_else(|| {
                Err(std::io::Error::other(
                    "a thread finishing the sidecars stopped",
                ))
            })
        })
        .collect()
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
                return Err(ProtocolError::UnknownOrigin {
                    path: path.to_owned(),
                    line: line.line,
                    origin: input_text::echo(origin).to_string(),
                }
                .into());
            }
        }
    }
    Ok(())
}

/// The terms a run cites so far, being checked on a thread of their own
/// ([`check_terms`]): how many, and whether the model mentions them all.
struct EarlyCheck {
    checked: usize,
    mentioned: budget::Alongside<bool>,
}

/// Starts checking the terms `sandbox`'s run cites so far; `None` when
/// there are few (or a thread cannot start): [`check_terms`] checks them.
fn early_term_check(sandbox: &Sandbox) -> Option<EarlyCheck> {
    let terms = sandbox.terms();
    if terms.len() < EARLY_TERMS {
        return None;
    }
    EarlyCheck::start(sandbox.budget(), sandbox.shared_model(), terms)
}

impl EarlyCheck {
    fn start(budget: &Arc<Budget>, model: Arc<Model>, terms: Vec<Arc<str>>) -> Option<EarlyCheck> {
        let checked = terms.len();
        let mentioned = budget::alongside(budget, "seams-terms", move || {
            terms.iter().all(|term| model.mentions(term))
        })
        .ok()?;
        Some(EarlyCheck { checked, mentioned })
    }
}

/// Fewer terms than this are checked at the end of the run: a thread
/// would cost more than they do.
const EARLY_TERMS: usize = 1024;

/// Every trace term and every source must be something the model
/// mentions: the sidecars and the lock cite the model, not what a
/// generator claims.
fn check_terms(
    model: &Model,
    terms: &[Arc<str>],
    early: Option<EarlyCheck>,
    outputs: &[Output],
) -> Result<(), GeneratorErrorKind> {
    // Every term a run cites is interned: each is checked once, and only
    // when one is wrong are the outputs searched to say where. Terms are
    // only ever added to the table, so those checked early are its start.
    let mentioned = |terms: &[Arc<str>]| terms.iter().all(|term| model.mentions(term));
    let all_mentioned = match early {
        Some(early) if early.checked <= terms.len() => {
            let (before, after) = terms.split_at(early.checked);
            mentioned(after) && early.mentioned.join().unwrap_or_else(|| mentioned(before))
        }
        _ => mentioned(terms),
    };
    if all_mentioned {
        return Ok(());
    }
    let mut known: HashSet<&str> = HashSet::new();
    for output in outputs {
        let traced = output
            .trace
            .iter()
            .flatten()
            .flat_map(|l| l.terms.iter().map(move |t| (t.as_str(), Some(l.line))));
        let sourced = output
            .sources
            .iter()
            .filter_map(|&i| terms.get(i as usize))
            .map(|t| (&**t, None));
        // A stored sidecar's terms are its sources.
        let stored_trace = output.stored.as_ref().is_some_and(|s| s.sidecar.is_some());
        for (term, line) in traced.chain(sourced) {
            if known.contains(term) {
                continue;
            }
            if !model.mentions(term) {
                return Err(ProtocolError::UnknownTerm {
                    path: output.path.clone(),
                    line,
                    in_trace: line.is_some() || stored_trace,
                    term: input_text::echo(term).to_string(),
                }
                .into());
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
    export: &'static str,
    naming: &mut Vec<ProtocolError>,
) -> Option<&'a mut Output> {
    match outputs.binary_search_by(|o| o.path.as_str().cmp(path)) {
        Ok(i) => Some(&mut outputs[i]),
        Err(_) => {
            naming.push(ProtocolError::NotRendered {
                export,
                path: path.to_owned(),
            });
            None
        }
    }
}

fn classify(
    error: &wasmtime::Error,
    sandbox: &Sandbox,
    limits: &Limits,
    stack_bytes: usize,
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
            Violation::Handles => GeneratorErrorKind::Handles {
                limit: limits.max_handles,
            },
            Violation::Fuel => GeneratorErrorKind::Fuel { limit: limits.fuel },
        };
    }
    match error.downcast_ref::<Trap>() {
        Some(Trap::OutOfFuel) => GeneratorErrorKind::Fuel { limit: limits.fuel },
        Some(Trap::Interrupt) => GeneratorErrorKind::Timeout {
            seconds: limits.timeout.as_secs_f64(),
        },
        Some(Trap::StackOverflow) => GeneratorErrorKind::StackOverflow {
            kib: stack_bytes >> 10,
        },
        trap => {
            // A panic prints its message to stderr before the trap.
            let tail: Vec<&str> = log
                .iter()
                .rev()
                .take(12)
                .rev()
                .map(String::as_str)
                .collect();
            let printed = if tail.is_empty() {
                String::new()
            } else {
                format!(" (it printed: {})", tail.join(" | "))
            };
            if trap == Some(&Trap::MemoryOutOfBounds) {
                return GeneratorErrorKind::OutOfBounds { printed };
            }
            // The first line only: wasmtime appends a multi-line backtrace.
            let message = match trap {
                Some(trap) => trap.to_string(),
                None => error.root_cause().to_string(),
            };
            if message.contains("store handle limit exceeded") {
                return GeneratorErrorKind::Handles {
                    limit: limits.max_handles,
                };
            }
            if message.contains("fuel allocated for hostcalls") {
                return GeneratorErrorKind::Memory {
                    limit_mib: limits.memory_bytes >> 20,
                };
            }
            // An interpreter inside the component (componentize-py's)
            // reaching for a file or socket handle its build had and a
            // run does not: say what it met, the sandbox.
            let sandbox = if message.contains("unknown handle index") {
                "; it reached for a file, directory or socket, and a generator gets none: it reads the model through the SDK's queries and nothing else (the sandbox)"
            } else {
                ""
            };
            GeneratorErrorKind::Trap {
                message: format!("{message}{sandbox}{printed}"),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sink::{BlobWriter, Spill};
    use std::collections::BTreeSet;

    #[test]
    fn a_trap_on_a_handle_the_run_does_not_have_names_the_sandbox() {
        let model = Arc::new(Model::parse("m.ttl", "").unwrap());
        let budget = Budget::new(1 << 30, Instant::now() + Duration::from_secs(60));
        let sandbox = Sandbox::new(model, Limits::default(), budget);
        let said = |message: &str| {
            let error = wasmtime::Error::msg(message.to_owned());
            classify(&error, &sandbox, &Limits::default(), 1 << 20, &[]).to_string()
        };
        let handle = said("unknown handle index 6");
        assert!(handle.contains("unknown handle index 6"), "{handle}");
        assert!(handle.contains("a generator gets none"), "{handle}");
        assert!(!said("some other trap").contains("a generator gets none"));
    }

    #[test]
    fn the_engine_is_made_when_a_component_is_first_loaded() {
        // A run that is up to date loads nothing: it makes no engine and
        // starts no thread for its deadlines.
        let runtime = Runtime::new(None).unwrap();
        assert!(runtime.engine.get().is_none());
        assert!(runtime.load("g", b"not wasm").is_err());
        assert!(runtime.engine.get().is_none(), "refused before compiling");
        // An empty component compiles, then is refused for the exports it
        // lacks: the engine was made for it.
        let empty = runtime.load("g", b"\0asm\x0d\x00\x01\x00").unwrap_err();
        assert!(
            !matches!(empty.kind, GeneratorErrorKind::Compile { .. }),
            "{empty}"
        );
        assert!(matches!(runtime.engine.get(), Some(Ok(_))));
    }

    #[test]
    fn terms_checked_early_or_at_the_end_pass_and_fail_alike() {
        let model = Arc::new(
            Model::parse(
                "model.ttl",
                "<urn:a> <urn:p> <urn:b> .\n<urn:c> <urn:p> \"x\" .\n",
            )
            .unwrap(),
        );
        let budget = Budget::new(1 << 30, Instant::now() + Duration::from_secs(600));
        let _entered = budget.enter();
        let table = |names: &[&str]| -> Vec<Arc<str>> {
            names
                .iter()
                .map(|n| Arc::from(format!("urn:{n}")))
                .collect()
        };
        let output = |sources: Vec<u32>| Output {
            path: "page.html".into(),
            text: String::new(),
            stored: None,
            rendered: None,
            trace: None,
            sources,
            named: true,
        };
        // (the table, how much of it was checked early, whether it passes)
        for (names, early, passes) in [
            (&["a", "p", "b", "c"][..], None, true),
            (&["a", "p", "b", "c"][..], Some(2), true),
            (&["a", "p", "b", "c"][..], Some(4), true),
            (&["a", "x", "b"][..], None, false),
            // Unmentioned among the early ones, or among those after.
            (&["a", "x", "b"][..], Some(2), false),
            (&["a", "b", "x"][..], Some(2), false),
            (&["x", "a"][..], Some(2), false),
        ] {
            let terms = table(names);
            let started =
                early.and_then(|n| EarlyCheck::start(&budget, model.clone(), terms[..n].to_vec()));
            assert_eq!(started.is_some(), early.is_some(), "{names:?}");
            let outputs = [output((0..terms.len() as u32).collect())];
            let checked = check_terms(&model, &terms, started, &outputs);
            match checked {
                Ok(()) => assert!(passes, "{names:?} passed"),
                Err(e) => {
                    assert!(!passes, "{names:?}: {e}");
                    let e = e.to_string();
                    assert!(
                        e.contains("the sources of \"page.html\" names \"urn:x\""),
                        "{e}"
                    );
                }
            }
        }
    }

    #[test]
    fn kept_renders_are_finished_in_order_on_every_core_and_a_failure_stays_with_its_output() {
        let dir = tempfile::tempdir().unwrap();
        let spill = Spill::of(&Sink::Files {
            dir: dir.path().to_owned(),
            hold_bytes: 1 << 20,
        })
        .unwrap();
        let budget = Budget::new(1 << 30, Instant::now() + Duration::from_secs(600));
        let _entered = budget.enter();
        let files = || -> BTreeSet<PathBuf> {
            std::fs::read_dir(dir.path())
                .unwrap()
                .map(|e| e.unwrap().path())
                .collect()
        };
        let (mut jobs, mut paths, mut heads, mut lost) = (Vec::new(), Vec::new(), Vec::new(), None);
        for i in 0..40 {
            // Every third sidecar is large enough to be in a file already.
            let head = format!("head {i}\n").repeat(if i % 3 == 0 { 1000 } else { 1 });
            let before = files();
            let mut sidecar = BlobWriter::new(&spill);
            sidecar.write(head.as_bytes()).unwrap();
            if i == 21 {
                lost = files().difference(&before).next().cloned();
            }
            jobs.push(Kept {
                text: Blob::write(dir.path(), format!("text {i}").as_bytes()).unwrap(),
                sidecar: Some(sidecar),
                sources: vec![i],
            });
            paths.push(format!("page-{i}.html"));
            heads.push(head);
        }
        // The file of one sidecar is gone before its last bytes come.
        std::fs::remove_file(lost.expect("sidecar 21 is in a file")).unwrap();

        let jobs = jobs.into_iter().zip(paths.iter().map(String::as_str));
        let finished = store_all_kept(&budget, jobs.collect());
        assert_eq!(finished.len(), 40);
        for (i, result) in finished.into_iter().enumerate() {
            if i == 21 {
                match result {
                    Err(e) => assert_eq!(e.kind(), std::io::ErrorKind::NotFound),
                    Ok(_) => panic!("sidecar 21 was finished without its file"),
                }
                continue;
            }
            let (stored, sources) = result.unwrap();
            assert_eq!(
                &*stored.text.read().unwrap(),
                format!("text {i}").as_bytes()
            );
            let sidecar = stored.sidecar.expect("a traced render's sidecar");
            let expected = format!("{}{}", heads[i], sidecar_tail(&paths[i]));
            assert_eq!(&*sidecar.read().unwrap(), expected.as_bytes(), "{i}");
            assert_eq!(sidecar.sha256(), sha256_hex(expected.as_bytes()));
            assert_eq!(sources, [i as u32]);
        }
        assert!(store_all_kept(&budget, Vec::new()).is_empty());
    }
}
