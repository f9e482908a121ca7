//! What the runtime reports: a generator's failure, always naming the
//! generator (and, for a limit, the `[sandbox]` key that raises it), or an
//! engine that cannot be set up.

use seams_model::input_text::escape_line;
use seams_templates::TemplateError;

use crate::meta::MetaError;
use crate::versions::PROTOCOL_VERSION;

/// Why a generator failed. Always names the generator; a limit names the
/// `[sandbox]` key that raises it.
#[derive(Debug, Clone, thiserror::Error)]
#[error("generator {generator}: {kind}")]
pub struct GeneratorError {
    /// The generator: its built-in name or `.wasm` path.
    pub generator: String,
    /// What happened.
    pub kind: GeneratorErrorKind,
}

/// What went wrong in a generator.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum GeneratorErrorKind {
    /// Not WebAssembly at all.
    #[error(
        "not a WebAssembly component (no \\0asm header); name a .wasm built with --target wasm32-wasip2"
    )]
    NotWasm,
    /// A core module rather than a component.
    #[error("is a core WebAssembly module, not a component; build it with --target wasm32-wasip2")]
    CoreModule,
    /// A component of another protocol version.
    #[error(
        "targets seams:generator@{found}, but this seams supports seams:generator {supported}; rebuild it against seams-sdk for {PROTOCOL_VERSION} or use a seams that supports {found}"
    )]
    UnsupportedVersion {
        /// The version the component targets.
        found: String,
        /// The version this host supports.
        supported: &'static str,
    },
    /// A component that is not a seams generator.
    #[error(
        "is not a seams generator: it exports {exports}, not seams:generator/generator-api@{PROTOCOL_VERSION}"
    )]
    NotAGenerator {
        /// What it exports instead.
        exports: String,
    },
    /// The component needs something the sandbox does not give.
    #[error("cannot be instantiated in the sandbox: {message}")]
    Link {
        /// The engine's account of the missing import.
        message: String,
    },
    /// Compilation failed.
    #[error("failed to compile: {message}")]
    Compile {
        /// The engine's account of why.
        message: String,
    },
    /// Fuel ran out.
    #[error(
        "ran out of fuel (limit {limit}); raise [sandbox] fuel in seams.toml if the generator is not stuck"
    )]
    Fuel {
        /// The fuel limit.
        limit: u64,
    },
    /// The wall-clock deadline passed.
    #[error(
        "ran past its time budget of {seconds}s; raise [sandbox] timeout-seconds in seams.toml if the generator is not stuck"
    )]
    Timeout {
        /// The budget in seconds.
        seconds: f64,
    },
    /// The memory cap was hit.
    #[error(
        "tried to use more than {limit_mib} MiB of memory; raise [sandbox] memory-mib in seams.toml"
    )]
    Memory {
        /// The cap in MiB.
        limit_mib: usize,
    },
    /// Too many output files.
    #[error(
        "returned {count} files, more than the limit of {limit}; raise [sandbox] max-outputs in seams.toml"
    )]
    TooManyOutputs {
        /// Files returned.
        count: usize,
        /// The limit.
        limit: usize,
    },
    /// Outputs too large.
    #[error(
        "produced more than {limit_mib} MiB of output; raise [sandbox] max-output-mib in seams.toml"
    )]
    OutputTooLarge {
        /// The limit in MiB.
        limit_mib: usize,
    },
    /// An output path that could lead outside the output directory.
    #[error("returned the output path {path:?}, which is refused: {reason}")]
    BadPath {
        /// The path, as returned.
        path: String,
        /// Which rule it breaks.
        reason: &'static str,
    },
    /// The wasm stack overflowed.
    #[error(
        "overflowed its stack ({kib} KiB); raise [sandbox] stack-kib in seams.toml if its recursion is bounded"
    )]
    StackOverflow {
        /// The stack in KiB.
        kib: usize,
    },
    /// An access outside linear memory: what a guest whose shadow stack
    /// (in linear memory, sized when it was linked) overflows does.
    #[error(
        "trapped: out of bounds memory access; this is what a generator does when it overflows its shadow stack in linear memory (deep recursion or large local arrays): link it with a larger stack (e.g. `-C link-arg=-zstack-size=8388608`) or recurse less; [sandbox] memory-mib does not change it{printed}"
    )]
    OutOfBounds {
        /// What it printed last, if anything, as ` (it printed: ...)`.
        printed: String,
    },
    /// Too many live handles (resources) at once.
    #[error(
        "held more than {limit} handles at once; raise [sandbox] max-handles in seams.toml if it does not leak them"
    )]
    Handles {
        /// The limit.
        limit: usize,
    },
    /// A trap, such as a panic, with what the generator printed last.
    #[error("trapped: {message}")]
    Trap {
        /// The trap and the end of stderr.
        message: String,
    },
    /// The generator reported an error.
    #[error("{step} failed: {message}")]
    Reported {
        /// The exported function.
        step: &'static str,
        /// Its message.
        message: String,
    },
    /// `meta` returned something unusable.
    #[error("meta is invalid: {0}")]
    Meta(#[from] MetaError),
    /// The model does not follow a vocabulary the generator reads (see its
    /// `meta`), so it was not run.
    #[error(
        "was not run: the model does not follow the vocabulary it reads; fix the model:{}",
        findings_text(.0)
    )]
    Model(Vec<seams_model::Finding>),
    /// A template failed to parse or render.
    #[error("{0}")]
    Template(TemplateError),
    /// Anything the protocol forbids, e.g. a trace naming a file render
    /// did not return.
    #[error("{0}")]
    Protocol(#[from] ProtocolError),
    /// The component could not be had: its file unreadable, its pull
    /// refused, or its bytes not the ones `seams.toml` pins.
    #[error("{0}")]
    Source(#[from] SourceError),
    /// It clashes with another generator of the project (a name or an
    /// output path both claim): it was not run.
    #[error("{reason}")]
    Clash {
        /// What both claim, and who the other is.
        reason: String,
    },
    /// The engine could not be set up for it.
    #[error("{0}")]
    Engine(RuntimeError),
    /// seams itself failed while running the generator (a bug in seams):
    /// this generator fails, the others carry on.
    #[error(
        "seams failed while running it (a bug in seams, please report it): {0}; the other generators carried on"
    )]
    Internal(String),
    /// A rendered file could not be written to where the run keeps its
    /// files.
    #[error(
        "cannot write a rendered file to {dir}: {message}; free space there or check its permissions"
    )]
    Write {
        /// The directory.
        dir: String,
        /// The system's error.
        message: String,
    },
}

impl GeneratorErrorKind {
    /// A panic caught while seams handled a generator, as an internal
    /// failure of that generator.
    pub fn from_panic(payload: &(dyn std::any::Any + Send)) -> Self {
        let what = payload
            .downcast_ref::<&str>()
            .map(|s| (*s).to_owned())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "a panic".to_owned());
        GeneratorErrorKind::Internal(what)
    }
}

impl From<TemplateError> for GeneratorErrorKind {
    /// The template's name and the message (which may quote its source)
    /// are the generator's text: made one safe line each.
    fn from(e: TemplateError) -> Self {
        let line = |text: &str, limit| escape_line(text, limit).into_owned();
        GeneratorErrorKind::Template(TemplateError {
            template: line(&e.template, 200),
            line: e.line,
            message: line(&e.message, 2000),
        })
    }
}

/// What a generator returned that the protocol forbids. Paths and IRIs
/// are the generator's text, shown quoted or escaped.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ProtocolError {
    /// `extract` returned text that is not JSON.
    #[error("extract returned a view model that is not JSON: {message}")]
    ViewNotJson {
        /// The JSON parser's account.
        message: String,
    },
    /// A file's rendered body is a handle the host did not hand out.
    #[error("render returned {path:?} with a rendered body the host does not know: {message}")]
    UnknownBody {
        /// The file.
        path: String,
        /// Why the handle is unknown.
        message: String,
    },
    /// `trace` or `sources` names a file `render` did not return.
    #[error("{export} names {path:?}, which render did not return")]
    NotRendered {
        /// `trace` or `sources`.
        export: &'static str,
        /// The file named.
        path: String,
    },
    /// `trace` names a file whose body the host rendered (and traces).
    #[error("trace names {path:?}, whose body the host rendered and traces itself")]
    TracedByHost {
        /// The file.
        path: String,
    },
    /// `trace` names the same file twice.
    #[error("trace names {path:?} twice")]
    TracedTwice {
        /// The file.
        path: String,
    },
    /// A trace whose lines do not fit the file's text.
    #[error("trace of {path:?} is refused: {reason}")]
    TraceRefused {
        /// The file.
        path: String,
        /// What does not fit.
        reason: String,
    },
    /// A trace line names an origin that is no line of the generator's
    /// templates.
    #[error(
        "the trace of {path:?} line {line} names the origin {origin}, which is not a line of one of its templates"
    )]
    UnknownOrigin {
        /// The file.
        path: String,
        /// Its line.
        line: usize,
        /// The origin named, made one safe line.
        origin: String,
    },
    /// A trace or the sources cite an IRI the model does not mention.
    #[error(
        "{} names {term}, which the model does not mention; cite IRIs of the model",
        citing_text(path, *line, *in_trace)
    )]
    UnknownTerm {
        /// The file.
        path: String,
        /// The trace line, when a line cites it.
        line: Option<usize>,
        /// Whether a trace cites it (else the `sources` export does).
        in_trace: bool,
        /// The IRI, made one safe line.
        term: String,
    },
    /// `render` returned the same path twice.
    #[error("returned the path {path:?} twice")]
    PathTwice {
        /// The path.
        path: String,
    },
    /// `render` returned a path as a file and another inside it.
    #[error("returned {file:?} as a file and {path:?} inside it")]
    PathInsideFile {
        /// The path returned as a file.
        file: String,
        /// The path inside it.
        path: String,
    },
    /// A run that cites more distinct IRIs than the host can number.
    #[error("the run cites more than {limit} distinct IRIs")]
    TooManyTerms {
        /// The most it may.
        limit: u32,
    },
    /// A rendered handle the host cannot trace.
    #[error("render {handle} cannot be traced")]
    Untraceable {
        /// The handle.
        handle: u32,
    },
}

/// Where a cited IRI was found, for [`ProtocolError::UnknownTerm`].
fn citing_text(path: &str, line: Option<usize>, in_trace: bool) -> String {
    match (line, in_trace) {
        (Some(n), _) => format!("the trace of {path:?} line {n}"),
        (None, true) => format!("the trace of {path:?}"),
        (None, false) => format!("the sources of {path:?}"),
    }
}

/// Why a generator's component could not be had.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SourceError {
    /// Its `.wasm` file cannot be read.
    #[error("cannot read the component: {message}")]
    Unreadable {
        /// The file.
        path: String,
        /// The system's error.
        message: String,
    },
    /// The registry refused it or could not be reached.
    #[error("{reason}")]
    Pull {
        /// The registry client's account, naming the reference.
        reason: String,
    },
    /// Its package could not be built into a component.
    #[error("cannot build the package: {message}")]
    Build {
        /// The builder's account: the package's file, or what the build
        /// printed.
        message: String,
    },
    /// Its bytes are not the ones `seams.toml` pins.
    #[error(
        "the component's sha256 is {found}, but seams.toml pins {pinned}; check where the file came from, then update sha256"
    )]
    Pinned {
        /// The sha256 of the bytes read.
        found: String,
        /// The sha256 `seams.toml` pins.
        pinned: String,
    },
}

/// The engine could not be set up.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum RuntimeError {
    /// wasmtime refused the configuration.
    #[error("cannot set up the WebAssembly engine: {message}")]
    Engine {
        /// wasmtime's account.
        message: String,
    },
    /// The thread that ticks the runs' deadlines could not start.
    #[error("cannot start the thread that ticks the deadlines: {message}")]
    Ticker {
        /// The system's error.
        message: String,
    },
}

/// Findings, one per indented line, and a note when there may be more.
fn findings_text(findings: &[seams_model::Finding]) -> String {
    let mut text: String = findings.iter().map(|f| format!("\n  {f}")).collect();
    if findings.len() >= seams_model::vocabulary::MAX_FINDINGS {
        text.push_str(&format!(
            "\n  (seams reports the first {}; fix these and run again to see the rest)",
            seams_model::vocabulary::MAX_FINDINGS
        ));
    }
    text
}
