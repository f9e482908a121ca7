//! `seams draft-generator` (ADR-0029, with ADR-0012's bounded retry): asks
//! an LLM, through a provider ([`crate::provider`]), for the extract step,
//! template and golden of a generator drawn from a reference output, and
//! keeps the draft only when the assembled package compiles to a component,
//! passes its four tests and the model probes ([`crate::probe`]), restates
//! no model label in its template or value in its extract, and holds no
//! template logic.
//!
//! Nothing is written until a draft is accepted. A rejected draft goes back
//! to the same provider with its answer and every reason so far, visibly,
//! at most `retries` times; a provider that cannot answer at all (it cannot
//! be started, it has no key, its key is refused) stops drafting at once.
//! Progress and rejections go to stderr; results to stdout.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use crate::build::{BuildEnv, BuildError};
use crate::golden::{SuiteError, test_built_in};
use crate::language::Language;
use crate::prompt::{REPAIR_PROMPT, TooLarge, build_prompt, fence, prompt_template};
use crate::provider::Provider;
use crate::scaffold::{
    Package, Reference, ScaffoldError, Sdk, check_name, read_reference, scaffold,
};
use seams_core::Progress;
use seams_core::Project;
use seams_model::{Model, sha256_hex};
use seams_runtime::Runtime;

/// Retries after a rejected draft when neither `--retries` nor `[propose]`
/// says.
pub const DEFAULT_RETRIES: u32 = 2;
/// Seconds a provider may take when neither `--timeout` nor `[propose]`
/// says.
pub const DEFAULT_TIMEOUT: u64 = 300;

/// The most bytes of a previous answer a repair prompt carries back.
const ANSWER_IN_REPAIR: usize = 32 * 1024;

/// Why drafting failed. DIR and the cache are as they were.
#[derive(Debug, thiserror::Error)]
pub enum DraftError {
    /// The name, reference or directory was refused.
    #[error(transparent)]
    Scaffold(#[from] ScaffoldError),
    /// No provider was named.
    #[error(
        "no provider: pass --provider CMD (or api:openai, api:anthropic), set provider in [propose] of your configuration (~/.config/seams/config.toml), or use --print-prompt and --answer FILE"
    )]
    NoProvider,
    /// The provider setting is wrong.
    #[error("{0}")]
    BadProvider(String),
    /// The provider cannot answer, and asking again cannot help.
    #[error("{0}")]
    Provider(String),
    /// The prompt passes its cap.
    #[error(transparent)]
    Prompt(#[from] TooLarge),
    /// The model could not be loaded.
    #[error(transparent)]
    Model(#[from] seams_model::ModelError),
    /// Every attempt was rejected; the last attempt's reasons.
    #[error("draft rejected after {attempts} attempt{}:\n{}", if *attempts == 1 { "" } else { "s" }, reasons.join("\n"))]
    Rejected {
        /// How many attempts were made.
        attempts: u32,
        /// The last attempt's reasons, one per line.
        reasons: Vec<String>,
    },
    /// A file could not be read or written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
}

/// What to draft, and how.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct DraftRequest {
    /// The generator's name: a lowercase letter, then lowercase letters, digits and hyphens.
    pub name: String,
    /// The reference output (its suffix says its type).
    #[arg(long, value_name = "FILE")]
    pub reference: PathBuf,
    /// The provider: a command (the prompt on stdin), api:openai or api:anthropic (else provider in the propose table).
    #[arg(long, value_name = "CMD")]
    pub provider: Option<String>,
    /// An API provider's base URL (else base_url in your configuration, else the vendor's); a key goes over plain HTTP only to this machine.
    #[arg(long = "base-url", value_name = "URL")]
    pub base_url: Option<String>,
    /// The environment variable holding an API provider's key (else key_env in your configuration, else OPENAI_API_KEY / ANTHROPIC_API_KEY).
    #[arg(long = "key-env", value_name = "VAR")]
    pub key_env: Option<String>,
    /// The LLM model: SEAMS_LLM_MODEL for a command, the API's model (else model in the propose table).
    #[arg(long = "llm-model", value_name = "M")]
    pub llm_model: Option<String>,
    /// The language the extract step is asked in: rust, python or js (not ts).
    #[arg(long, value_enum, default_value_t = Language::Rust)]
    pub language: Language,
    /// The package directory (default: seams-NAME).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Write into a non-empty directory, replacing the package's files.
    #[arg(long)]
    pub force: bool,
    /// Retries after a rejected draft (else retries in the propose table, else 2).
    #[arg(long, value_name = "N")]
    pub retries: Option<u32>,
    /// Seconds the provider may take (else timeout in the propose table, else 300).
    #[arg(long, value_name = "SECONDS")]
    pub timeout: Option<u64>,
    /// Print the prompt, to paste into a chat, and stop.
    #[arg(long, conflicts_with_all = ["answer", "provider"])]
    pub print_prompt: bool,
    /// After acceptance, ask the provider for a short verdict on whether the generator reads the model as intended (a note, never a gate).
    #[arg(long)]
    pub judge: bool,
    /// Take the answer from FILE (what a chat answered the printed prompt) instead of a provider: one attempt.
    #[arg(long, value_name = "FILE", conflicts_with = "provider")]
    pub answer: Option<PathBuf>,
    /// Neither read nor write the draft cache: `draft-eval` measures the
    /// provider.
    #[arg(skip)]
    pub no_cache: bool,
    /// The evaluation case being drafted, passed to a command provider as
    /// `SEAMS_EVAL_CASE` (a test's fake provider answers by it).
    #[arg(skip)]
    pub eval_case: Option<String>,
}

/// What an accepted draft gave.
#[derive(Debug, Clone)]
pub struct DraftReport {
    /// The sha256 of the first prompt.
    pub prompt_sha256: String,
    /// Whether the answer came from the cache.
    pub cache_hit: bool,
    /// Attempts made (0 for a cache hit).
    pub attempts: u32,
    /// The tests that passed.
    pub tests: Vec<String>,
    /// Every file written.
    pub written: Vec<PathBuf>,
    /// What a person should review.
    pub review: Review,
}

/// What a person should review of an accepted draft (ADR-0012's third
/// layer: directional, never a gate).
#[derive(Debug, Clone)]
pub struct Review {
    /// The template's lines, each with what drives it.
    pub template: Vec<(LineKind, String)>,
    /// The probes, with what each changed in the output.
    pub probes: Vec<crate::probe::ProbeOutcome>,
    /// The provider's short verdict, with `--judge`.
    pub verdict: Option<String>,
}

/// What drives a template line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineKind {
    /// Text, the same whatever the model.
    Fixed,
    /// Prints values of the view model.
    Model,
    /// Repeats the lines it encloses per element.
    Loop,
}

impl LineKind {
    /// Its word in the review.
    pub fn word(self) -> &'static str {
        match self {
            LineKind::Fixed => "fixed",
            LineKind::Model => "model",
            LineKind::Loop => "loop",
        }
    }
}

impl Review {
    /// The review as text: the template marked line by line, what each
    /// probe changed, and the verdict when asked for.
    pub fn to_text(&self) -> String {
        let mut out =
            String::from("review (what a person should check):\n  the template, line by line:\n");
        for (kind, line) in &self.template {
            out.push_str(&format!("    {:<5}  {line}\n", kind.word()));
        }
        out.push_str("  what the model probes changed in the output:\n");
        for probe in &self.probes {
            if probe.changes.is_empty() {
                out.push_str(&format!("    {}: nothing\n", probe.name));
            } else {
                out.push_str(&format!("    {}:\n", probe.name));
                for change in &probe.changes {
                    out.push_str(&format!("      {change}\n"));
                }
            }
        }
        if let Some(verdict) = &self.verdict {
            out.push_str(&format!("  judge (a note, not a gate): {verdict}\n"));
        }
        out
    }
}

/// Each line of `template` with what drives it.
fn review_template(template: &str) -> Vec<(LineKind, String)> {
    template
        .lines()
        .map(|line| {
            let kind = if line.contains("[%") {
                LineKind::Loop
            } else if line.contains("[[") {
                LineKind::Model
            } else {
                LineKind::Fixed
            };
            (kind, line.to_owned())
        })
        .collect()
}

/// The judge's prompt.
const JUDGE_PROMPT: &str = include_str!("../../../prompts/draft-judge-v1.txt");

/// The most characters of a verdict shown.
const VERDICT_CHARS: usize = 1000;

/// Asks `provider` whether the accepted draft reads the model as
/// intended: its answer, or why there is none. Never a gate.
fn verdict(
    provider: &Provider,
    reference: &Reference,
    answer: &Answer,
    review: &Review,
    llm_model: Option<&str>,
    timeout: Duration,
) -> String {
    let probes: String = review
        .probes
        .iter()
        .map(|p| format!("{}:\n{}\n", p.name, p.changes.join("\n")))
        .collect();
    let prompt = JUDGE_PROMPT
        .replace("{{REFERENCE}}", &fence(&reference.text))
        .replace("{{EXTRACT}}", &fence(&answer.extract))
        .replace("{{TEMPLATE}}", &fence(&answer.template))
        .replace("{{PROBES}}", &fence(&probes));
    match provider.ask(&prompt, llm_model, timeout, None) {
        Ok(text) => {
            let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
            text.chars().take(VERDICT_CHARS).collect()
        }
        Err(failure) => format!("no verdict: {}", failure.message),
    }
}

/// An answer: the three texts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    /// `src/extract.rs`.
    pub extract: String,
    /// The template.
    pub template: String,
    /// The golden.
    pub golden: String,
}

/// Reads a provider's answer: one JSON object with exactly the string keys
/// `extract`, `template` and `golden`, optionally inside one fenced block.
///
/// # Errors
///
/// What is wrong, naming the key.
pub fn parse_answer(text: &str) -> Result<Answer, String> {
    let mut body = text.trim();
    if body.starts_with("```") {
        let inner = body.split_once('\n').map_or("", |(_, rest)| rest);
        body = inner.trim_end().strip_suffix("```").unwrap_or(inner).trim();
    }
    let value: Value =
        serde_json::from_str(body).map_err(|e| format!("the answer is not JSON: {e}"))?;
    let object = value
        .as_object()
        .ok_or("the answer is JSON but not an object")?;
    for key in object.keys() {
        if !["extract", "template", "golden"].contains(&key.as_str()) {
            return Err(format!(
                "the answer has an extra key {key:?}; only \"extract\", \"template\" and \"golden\" are allowed"
            ));
        }
    }
    let field = |key: &str| -> Result<String, String> {
        match object.get(key) {
            None => Err(format!("the answer has no key {key:?}")),
            Some(Value::String(s)) => Ok(s.clone()),
            Some(_) => Err(format!("the answer's {key:?} is not a string")),
        }
    };
    Ok(Answer {
        extract: field("extract")?,
        template: field("template")?,
        golden: field("golden")?,
    })
}

/// The no-logic check: only `[[ name ]]`, `[[ name.attr ]]`,
/// `[% for x in xs %]` and `[% endfor %]`.
pub fn check_no_logic(template: &str) -> Vec<String> {
    let ident = |s: &str| {
        let mut c = s.chars();
        matches!(c.next(), Some(f) if f.is_ascii_alphabetic() || f == '_')
            && c.all(|c| c.is_ascii_alphanumeric() || c == '_')
    };
    let path = |s: &str| {
        let parts: Vec<&str> = s.split('.').collect();
        parts.len() <= 2 && parts.iter().all(|p| ident(p))
    };
    let mut reasons = Vec::new();
    for (i, line) in template.split('\n').enumerate() {
        let number = i + 1;
        if line.contains("[#") {
            reasons.push(format!("template line {number}: comments ([# #]) are not allowed; templates hold text, not logic"));
        }
        let mut rest = line;
        while let Some(at) = rest.find("[[") {
            let after = &rest[at + 2..];
            let Some(end) = after.find("]]") else { break };
            let inner = after[..end].trim_matches(['-', '+']).trim();
            if !path(inner) {
                reasons.push(format!(
                    "template line {number}: [[ {inner} ]] is not allowed; only [[ name ]] or [[ name.attr ]] (no filters, calls or operators)"
                ));
            }
            rest = &after[end + 2..];
        }
        let mut rest = line;
        while let Some(at) = rest.find("[%") {
            let after = &rest[at + 2..];
            let Some(end) = after.find("%]") else { break };
            let inner = after[..end].trim_matches(['-', '+']).trim();
            let words: Vec<&str> = inner.split_whitespace().collect();
            let ok = matches!(words.as_slice(), ["endfor"])
                || matches!(words.as_slice(), ["for", x, "in", xs] if ident(x) && path(xs));
            if !ok {
                reasons.push(format!(
                    "template line {number}: [% {inner} %] is not allowed; only [% for x in xs %] and [% endfor %]"
                ));
            }
            rest = &after[end + 2..];
        }
    }
    reasons
}

/// The restated-label check: no label of the model's names that occurs in
/// the reference may occur in the template.
pub fn check_no_restated_labels(template: &str, reference: &str, model: &Model) -> Vec<String> {
    let mut reasons = Vec::new();
    // As words of the template's own text: a label "Save" is not restated
    // by "Saved", nor by a tag's variable.
    let literal: Vec<String> = template
        .split('\n')
        .map(crate::probe::literal_text)
        .collect();
    for (iri, label) in model.labels() {
        let label = label.trim();
        if label.is_empty() || !reference.contains(label) {
            continue;
        }
        for (i, line) in literal.iter().enumerate() {
            if crate::probe::has_word(line, label) {
                reasons.push(format!(
                    "template line {}: restates the label {label:?} of <{iri}>; read it in extract and print it from the view model",
                    i + 1
                ));
            }
        }
    }
    reasons
}

/// The model's literal values the reference prints, (element, value):
/// what a drafted extract must read, not write. Not the values of an
/// enumeration (`ui:kind "submit"`, `ui:inputType "select"`): a
/// program names those to test them, and a format may spell them as
/// fixed words (`submit:` in a site map).
fn printed_values(reference: &str, model: &Model) -> Vec<(String, String)> {
    let enumerated = seams_model::ui_shapes::enumerated_properties();
    model
        .literal_values()
        .into_iter()
        .filter(|(_, p, v)| {
            !enumerated.contains(p) && crate::probe::telling(v) && reference.contains(v.as_str())
        })
        .map(|(element, _, value)| (element, value))
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect()
}

/// The package an answer gives.
fn assemble(name: &str, reference: &Reference, answer: &Answer, language: Language) -> Package {
    // Vendored: a draft builds offline, whether or not the SDK is published.
    let mut package = scaffold(
        name,
        reference,
        Some(&answer.extract),
        Sdk::Vendored,
        language,
    );
    for (path, text) in &mut package.files {
        if *path == format!("templates/{}", reference.name) {
            *text = answer.template.clone();
        } else if *path == format!("tests/golden/{}", reference.name) {
            *text = answer.golden.clone();
        }
    }
    package
}

/// An accepted draft: its package, its component, the tests it passed and
/// what the probes changed.
struct Accepted {
    package: Package,
    component: Vec<u8>,
    tests: Vec<String>,
    probes: Vec<crate::probe::ProbeOutcome>,
}

/// What a draft was asked for.
#[derive(Clone, Copy)]
struct Asked<'a> {
    name: &'a str,
    reference: &'a Reference,
    model: &'a Model,
    language: Language,
}

/// Judges an answer in a scratch directory. Returns the package and its
/// component's bytes, or the reasons it is rejected.
fn accept(
    project: &Project,
    runtime: &Runtime,
    asked: &Asked<'_>,
    answer: &Answer,
    progress: &dyn Progress,
) -> Result<Accepted, Vec<String>> {
    let Asked {
        name,
        reference,
        model,
        language,
    } = *asked;
    // Checked before anything compiles it: the build runs on this machine.
    let (mut reasons, strings) = match language {
        Language::Rust => (
            crate::extract_rules::check(&answer.extract),
            crate::extract_rules::strings(&answer.extract),
        ),
        _ => (
            crate::script_rules::check(language, &answer.extract),
            crate::script_rules::strings(language, &answer.extract),
        ),
    };
    reasons.extend(check_no_logic(&answer.template));
    reasons.extend(check_no_restated_labels(
        &answer.template,
        &reference.text,
        model,
    ));
    reasons.extend(crate::extract_rules::copied_in(
        crate::script_rules::file_name(language),
        &strings,
        &printed_values(&reference.text, model),
    ));
    if !reasons.is_empty() {
        return Err(reasons);
    }
    let package = assemble(name, reference, answer, language);
    let scratch =
        tempfile::tempdir().map_err(|e| vec![format!("cannot make a scratch directory: {e}")])?;
    crate::scaffold::write_package(&package, scratch.path(), true)
        .map_err(|e| vec![e.to_string()])?;
    // What goes back to the provider names no path of this machine.
    let scratch_path = scratch.path().display().to_string();
    let home = std::env::var("HOME").unwrap_or_default();
    let scrub = |text: &str| {
        let text = text.replace(&scratch_path, "<package>");
        if home.len() > 1 {
            text.replace(&home, "~")
        } else {
            text
        }
    };
    let built = test_built_in(
        scratch.path(),
        None,
        project,
        runtime,
        BuildEnv::Cleared(crate::build::build_bounds(&project.propose)),
        true,
        progress,
    );
    let report = match built {
        Ok(report) => report,
        Err(SuiteError::Build(BuildError::Failed { output, .. })) => {
            return Err(compiler_errors(&scrub(&output)));
        }
        Err(e) => return Err(vec![cut_lines(&scrub(&e.to_string()), REASON_LINES)]),
    };
    if !report.passed() {
        return Err(report
            .outcomes
            .iter()
            .filter(|o| !o.failures.is_empty())
            .flat_map(|o| {
                // One reason per probe that rejected the draft.
                if o.name == crate::golden::PROBES {
                    return o
                        .failures
                        .iter()
                        .map(|f| {
                            // One line, with room for both lines it quotes.
                            let line: String = scrub(f).chars().take(PROBE_REASON_CHARS).collect();
                            format!("{PROBE_REASON}{line}")
                        })
                        .collect::<Vec<_>>();
                }
                let failures: Vec<String> = o
                    .failures
                    .iter()
                    .take(3)
                    .map(|f| cut_lines(&scrub(f), REASON_LINES))
                    .collect();
                vec![format!("{} failed: {}", o.name, failures.join("; "))]
            })
            .collect());
    }
    let tests = report.outcomes.iter().map(|o| o.name.to_owned()).collect();
    Ok(Accepted {
        package,
        component: report.component_bytes,
        tests,
        probes: report.probes,
    })
}

/// The prefix of a reason a model probe gave.
pub(crate) const PROBE_REASON: &str = "model probe ";
/// The most characters of a probe's reason: it quotes two output lines.
const PROBE_REASON_CHARS: usize = 800;

/// The most lines of one reason sent back to the provider.
const REASON_LINES: usize = 12;

/// The first compiler errors of a failed build, each cut short: what the
/// provider needs to repair its draft, and nothing else of the build.
fn compiler_errors(output: &str) -> Vec<String> {
    let mut errors: Vec<String> = Vec::new();
    let mut current: Option<Vec<&str>> = None;
    for line in output.lines() {
        let starts = line.starts_with("error[") || line.starts_with("error:");
        if (starts || line.trim().is_empty())
            && let Some(block) = current.take()
        {
            errors.push(block.join("\n"));
        }
        if starts && !line.starts_with("error: could not compile") {
            current = Some(vec![line]);
        } else if let Some(block) = current.as_mut() {
            block.push(line);
        }
    }
    if let Some(block) = current {
        errors.push(block.join("\n"));
    }
    if errors.is_empty() {
        let tail: Vec<&str> = output.lines().rev().take(REASON_LINES).collect();
        errors.push(tail.into_iter().rev().collect::<Vec<_>>().join("\n"));
    }
    errors
        .iter()
        .take(3)
        .map(|e| {
            format!(
                "the package does not compile:\n{}",
                cut_lines(e, REASON_LINES)
            )
        })
        .collect()
}

/// `text` cut to its first `n` lines (and 200 characters each).
fn cut_lines(text: &str, n: usize) -> String {
    let mut lines: Vec<String> = text
        .lines()
        .take(n)
        .map(|l| l.chars().take(200).collect())
        .collect();
    if text.lines().count() > n {
        lines.push("…".to_owned());
    }
    lines.join("\n")
}

/// What a draft works from: the checked request, its reference and the
/// model, and the first prompt.
struct Inputs {
    reference: Reference,
    dir: PathBuf,
    model: Arc<Model>,
    prompt: String,
}

fn inputs(project: &Project, request: &DraftRequest) -> Result<Inputs, DraftError> {
    if !Language::DRAFTED.contains(&request.language) {
        return Err(DraftError::BadProvider(
            "draft-generator writes Rust, Python or JavaScript, not TypeScript: draft with --language js, then turn the package into TypeScript (seams new-generator --language ts shows the files)".into(),
        ));
    }
    check_name(&request.name)?;
    let reference = read_reference(&request.reference)?;
    let dir = request
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from(format!("seams-{}", request.name)));
    // Lists as the UI vocabulary makes them, so that the probes clone a
    // form's one field into it as write-back does.
    let model = Arc::new(
        Model::load(&project.model_files)?
            .with_lists(seams_model::ui_shapes::list_properties().clone()),
    );
    let prompt = build_prompt(&request.name, &reference, &model, request.language)?;
    Ok(Inputs {
        reference,
        dir,
        model,
        prompt,
    })
}

/// `seams draft-generator --print-prompt`: the first prompt, as a provider
/// would get it.
///
/// # Errors
///
/// A refused name or reference, an unreadable model, or a prompt over its
/// cap.
pub fn draft_prompt(project: &Project, request: &DraftRequest) -> Result<String, DraftError> {
    Ok(inputs(project, request)?.prompt)
}

/// `seams draft-generator`. Progress (the prompt's sha256, cache hit or
/// miss, each rejection with one reason per line) goes to `err`.
///
/// # Errors
///
/// A refused name, reference or directory, no provider, a provider that
/// cannot answer, or every attempt rejected; nothing is written then.
pub fn draft_generator(
    project: &Project,
    runtime: &Runtime,
    request: &DraftRequest,
    err: &mut dyn Write,
    progress: &dyn Progress,
) -> Result<DraftReport, DraftError> {
    let Inputs {
        reference,
        dir,
        model,
        prompt,
    } = inputs(project, request)?;
    crate::scaffold::check_dir(&dir, request.force)?;
    let prompt_sha256 = sha256_hex(prompt.as_bytes());
    let _ = writeln!(err, "prompt sha256: {prompt_sha256}");
    let judge = |answer: &Answer| {
        accept(
            project,
            runtime,
            &Asked {
                name: &request.name,
                reference: &reference,
                model: &model,
                language: request.language,
            },
            answer,
            progress,
        )
    };
    let keep = |accepted: Accepted, answer: &Answer, by: &str, attempts: u32| {
        let Accepted {
            package,
            component,
            tests,
            probes,
        } = accepted;
        let written = write_draft(
            package,
            &component,
            &request.name,
            &dir,
            request.force,
            &Drafted {
                by,
                language: request.language,
                prompt_sha256: &prompt_sha256,
            },
        )?;
        Ok(DraftReport {
            prompt_sha256: prompt_sha256.clone(),
            cache_hit: attempts == 0,
            attempts,
            tests,
            written,
            review: Review {
                template: review_template(&answer.template),
                probes,
                verdict: None,
            },
        })
    };

    // An answer from a chat: one attempt, as it is.
    if let Some(file) = &request.answer {
        let text = std::fs::read_to_string(file).map_err(|source| DraftError::Io {
            path: file.clone(),
            source,
        })?;
        let reasons = match parse_answer(&text) {
            Ok(answer) => match judge(&answer) {
                Ok(accepted) => {
                    return keep(
                        accepted,
                        &answer,
                        "an answer pasted from a chat (--answer)",
                        1,
                    );
                }
                Err(reasons) => reasons,
            },
            Err(why) => vec![why],
        };
        return Err(DraftError::Rejected {
            attempts: 1,
            reasons,
        });
    }

    let (provider, user_model) = crate::authority::provider_for(
        project,
        &seams_core::Authority {
            provider: request.provider.clone(),
            base_url: request.base_url.clone(),
            key_env: request.key_env.clone(),
        },
    )
    .map_err(DraftError::BadProvider)?;
    let provider = provider.ok_or(DraftError::NoProvider)?;
    let llm_model = request
        .llm_model
        .clone()
        .or(user_model)
        .or_else(|| project.propose.model.clone());
    let retries = request
        .retries
        .or(project.propose.retries)
        .unwrap_or(DEFAULT_RETRIES);
    let timeout = Duration::from_secs(
        request
            .timeout
            .or(project.propose.timeout)
            .unwrap_or(DEFAULT_TIMEOUT),
    );
    let by = provider.describe();

    let key = cache_key(
        &prompt_template(request.language),
        &reference,
        model.hash(),
        &by,
        llm_model.as_deref(),
    );
    let cache_file = project
        .root
        .join(".seams")
        .join("generator-drafts")
        .join(format!("{key}.json"));
    // With --judge, the provider's note on an accepted draft.
    let with_verdict = |mut report: DraftReport, answer: &Answer| {
        if request.judge {
            report.review.verdict = Some(verdict(
                &provider,
                &reference,
                answer,
                &report.review,
                llm_model.as_deref(),
                timeout,
            ));
        }
        report
    };
    let cached = (!request.no_cache)
        .then(|| std::fs::read_to_string(&cache_file).ok())
        .flatten()
        .and_then(|t| parse_answer(&t).ok());
    if let Some(answer) = cached {
        let _ = writeln!(err, "cache hit");
        if let Ok(accepted) = judge(&answer) {
            let report = keep(accepted, &answer, &by, 0)?;
            return Ok(with_verdict(report, &answer));
        }
    }
    let _ = writeln!(err, "cache miss");

    let attempts = retries + 1;
    let mut current_prompt = prompt.clone();
    // Every attempt's reasons, and the last answer, for the repair prompt.
    let mut history: Vec<Vec<String>> = Vec::new();
    let mut last_answer: Option<String> = None;
    for attempt in 1..=attempts {
        if let Some(reasons) = history.last() {
            for reason in reasons {
                let _ = writeln!(err, "draft rejected: {}", reason.replace('\n', "\n  "));
            }
            let _ = writeln!(err, "retrying ({}/{retries})", attempt - 1);
            current_prompt = repair_prompt(&prompt, last_answer.as_deref(), &history);
        }
        progress.start(
            &format!("waiting for the provider (attempt {attempt} of {attempts})"),
            None,
        );
        let answered = provider.ask(
            &current_prompt,
            llm_model.as_deref(),
            timeout,
            request.eval_case.as_deref(),
        );
        progress.finish();
        let answer_text = match answered {
            Ok(text) => text,
            Err(failure) if failure.fatal => return Err(DraftError::Provider(failure.message)),
            Err(failure) => {
                history.push(vec![failure.message]);
                continue;
            }
        };
        last_answer = Some(answer_text.clone());
        let answer = match parse_answer(&answer_text) {
            Ok(answer) => answer,
            Err(why) => {
                history.push(vec![why]);
                continue;
            }
        };
        match judge(&answer) {
            Ok(accepted) => {
                let report = keep(accepted, &answer, &by, attempt)?;
                if !request.no_cache {
                    store_cache(&cache_file, &answer)?;
                }
                return Ok(with_verdict(report, &answer));
            }
            Err(why) => history.push(why),
        }
    }
    Err(DraftError::Rejected {
        attempts,
        reasons: history.pop().unwrap_or_default(),
    })
}

/// The prompt for another attempt: the first prompt, the previous answer
/// (cut to [`ANSWER_IN_REPAIR`] bytes) and every attempt's reasons, all as
/// data, so that a stateless model can repair what it cannot remember.
fn repair_prompt(prompt: &str, last_answer: Option<&str>, history: &[Vec<String>]) -> String {
    let answer = match last_answer {
        Some(text) if text.len() > ANSWER_IN_REPAIR => {
            let mut cut = ANSWER_IN_REPAIR;
            while !text.is_char_boundary(cut) {
                cut -= 1;
            }
            format!(
                "{}\n[cut: the answer had {} bytes]",
                &text[..cut],
                text.len()
            )
        }
        Some(text) => text.to_owned(),
        None => "(none: the provider gave no answer)".to_owned(),
    };
    let reasons: String = history
        .iter()
        .enumerate()
        .map(|(i, reasons)| {
            let lines: String = reasons
                .iter()
                .map(|r| format!("- {}\n", r.replace('\n', "\n  ")))
                .collect();
            format!("attempt {}:\n{lines}", i + 1)
        })
        .collect();
    REPAIR_PROMPT
        .replace("{{PROMPT}}", prompt)
        .replace("{{ANSWER}}", &fence(&answer))
        .replace("{{REASONS}}", &fence(&reasons))
}

/// Who drafted a package, for its README.
struct Drafted<'a> {
    by: &'a str,
    language: Language,
    prompt_sha256: &'a str,
}

/// The draft cache's key: everything the answer answers. The prompt's
/// text is part of it, so a changed prompt asks again.
fn cache_key(
    prompt: &str,
    reference: &Reference,
    model_hash: &str,
    provider: &str,
    llm_model: Option<&str>,
) -> String {
    let mut parts = vec![
        sha256_hex(reference.text.as_bytes()),
        model_hash.to_owned(),
        reference.name.clone(),
        provider.to_owned(),
    ];
    parts.extend(llm_model.map(str::to_owned));
    parts.push(sha256_hex(prompt.as_bytes()));
    sha256_hex(parts.join("\n").as_bytes())
}

fn write_draft(
    mut package: Package,
    component: &[u8],
    name: &str,
    dir: &Path,
    force: bool,
    drafted: &Drafted<'_>,
) -> Result<Vec<PathBuf>, DraftError> {
    let file = format!("{name}.wasm");
    for (path, text) in &mut package.files {
        if path == "README.md" {
            *text = drafted_readme(text, &file, drafted);
        }
    }
    let mut written = crate::scaffold::write_package(&package, dir, force)?;
    write_atomically(dir, &file, component)?;
    written.push(dir.join(file));
    Ok(written)
}

/// The scaffold's README, saying that the package was drafted, by whom,
/// with which prompt, and where its component is.
fn drafted_readme(scaffolded: &str, component: &str, drafted: &Drafted<'_>) -> String {
    let mut lines = scaffolded.lines();
    let title = lines.next().unwrap_or_default();
    let rest: Vec<&str> = lines.skip_while(|l| !l.starts_with("- ")).collect();
    format!(
        "{title}\n\nA seams generator drafted by `seams draft-generator` from a reference\noutput: answered by {}, prompt {}\n(sha256 of the first prompt {}), accepted once it compiled and passed\nits four tests and the model probes. Review it before you trust it:\nthe template's lines, and what the probes changed.\n\nThe component that was tested is `{component}`, beside this README: name\nit in a project's `seams.toml` as `wasm = \"<path to>/{component}\"`.\n\n{}\n",
        drafted.by,
        crate::prompt::prompt_files(drafted.language),
        drafted.prompt_sha256,
        rest.join("\n")
    )
}

fn store_cache(file: &Path, answer: &Answer) -> Result<(), DraftError> {
    let text = serde_json::to_string_pretty(&serde_json::json!({
        "extract": answer.extract,
        "golden": answer.golden,
        "template": answer.template,
    }))
    .expect("strings serialize");
    let dir = file.parent().expect("the cache file has a directory");
    let name = file
        .file_name()
        .expect("the cache file has a name")
        .to_string_lossy();
    write_atomically(dir, &name, text.as_bytes())
}

/// Replaces `dir/name` atomically, creating `dir`.
fn write_atomically(dir: &Path, name: &str, bytes: &[u8]) -> Result<(), DraftError> {
    let io = |source| DraftError::Io {
        path: dir.join(name),
        source,
    };
    seams_core::OutputDir::open(dir)
        .map_err(io)?
        .write(name, bytes)
        .map_err(io)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compiler_output_becomes_its_first_errors_cut_short() {
        let output = format!(
            "   Compiling x v0.1.0 (<package>)\nerror[E0425]: cannot find value `y`\n --> src/extract.rs:3:5\n  |\n3 |     y\n{}\nwarning: unused\n\nerror: second\n --> src/extract.rs:9:1\n\nerror: third\n\nerror: fourth\n\nerror: could not compile `x`\n",
            "  | filler\n".repeat(30)
        );
        let reasons = compiler_errors(&output);
        assert_eq!(reasons.len(), 3, "{reasons:#?}");
        assert!(reasons[0].contains("error[E0425]: cannot find value `y`"));
        assert!(reasons[0].ends_with('…'), "{}", reasons[0]);
        assert!(reasons[0].lines().count() <= REASON_LINES + 2);
        assert!(reasons[1].contains("error: second"));
        assert!(
            !reasons
                .iter()
                .any(|r| r.contains("Compiling") || r.contains("could not compile"))
        );
    }

    #[test]
    fn the_cache_key_changes_with_the_prompt_text_and_each_input() {
        let reference = Reference {
            name: "title.html".into(),
            text: "<h1>Chat</h1>\n".into(),
        };
        let key = |prompt: &str, reference: &Reference, model: &str, llm: Option<&str>| {
            cache_key(prompt, reference, model, "provider --json", llm)
        };
        let rust = prompt_template(Language::Rust);
        let base = key(&rust, &reference, "m1", None);
        assert_eq!(base, key(&rust, &reference, "m1", None), "deterministic");
        let edited_prompt = format!("{rust} ");
        let other_reference = Reference {
            text: "<h1>Talk</h1>\n".into(),
            ..reference.clone()
        };
        for changed in [
            key(&edited_prompt, &reference, "m1", None),
            key(&rust, &other_reference, "m1", None),
            key(&rust, &reference, "m2", None),
            key(&rust, &reference, "m1", Some("big-model")),
            key(&prompt_template(Language::Python), &reference, "m1", None),
        ] {
            assert_ne!(changed, base);
        }
    }

    #[test]
    fn answers_are_read_strictly_naming_the_key() {
        let good = r#"{"extract": "e", "template": "t", "golden": "g"}"#;
        assert_eq!(parse_answer(good).unwrap().template, "t");
        assert_eq!(
            parse_answer(&format!("```json\n{good}\n```\n"))
                .unwrap()
                .golden,
            "g"
        );
        assert!(parse_answer("nope").unwrap_err().contains("not JSON"));
        assert!(parse_answer("[1]").unwrap_err().contains("not an object"));
        assert!(
            parse_answer(r#"{"extract": "e", "template": "t"}"#)
                .unwrap_err()
                .contains("\"golden\"")
        );
        assert!(
            parse_answer(r#"{"extract": "e", "template": "t", "golden": "g", "x": "y"}"#)
                .unwrap_err()
                .contains("extra key \"x\"")
        );
        assert!(
            parse_answer(r#"{"extract": 1, "template": "t", "golden": "g"}"#)
                .unwrap_err()
                .contains("\"extract\" is not a string")
        );
    }

    #[test]
    fn template_logic_is_refused_naming_the_line() {
        assert!(
            check_no_logic(
                "<h1>[[ app.title ]]</h1>\n[% for p in app.pages %]\n[[ p ]]\n[% endfor %]\n"
            )
            .is_empty()
        );
        for (template, what) in [
            ("x\n[% if a %]y[% endif %]\n", "line 2: [% if a %]"),
            ("[% set a = 1 %]\n", "line 1: [% set a = 1 %]"),
            ("[[ a|upper ]]\n", "line 1: [[ a|upper ]]"),
            ("[[ f() ]]\n", "line 1: [[ f() ]]"),
            ("[[ a + 1 ]]\n", "line 1: [[ a + 1 ]]"),
            ("[[ a.b.c ]]\n", "line 1: [[ a.b.c ]]"),
            ("[# note #]\n", "line 1: comments"),
        ] {
            let reasons = check_no_logic(template);
            assert!(
                reasons.iter().any(|r| r.contains(what)),
                "{template:?}: {reasons:?}"
            );
        }
    }

    #[test]
    fn a_restated_label_is_refused_naming_the_line_and_label() {
        let model = Model::parse(
            "m.ttl",
            "<urn:app> <http://www.w3.org/2000/01/rdf-schema#label> \"Chat\" .\n",
        )
        .unwrap();
        let reasons = check_no_restated_labels("<html>\n<h1>Chat</h1>\n", "<h1>Chat</h1>", &model);
        assert_eq!(reasons.len(), 1);
        assert!(
            reasons[0].starts_with("template line 2: restates the label \"Chat\" of <urn:app>"),
            "{reasons:?}"
        );
        for template in [
            "<h1>[[ app.title ]]</h1>\n",
            "<h1>[[ app.title ]]</h1> Chatter, chatroom\n",
            "[% if Chat %]x[% endif %]\n",
        ] {
            assert!(
                check_no_restated_labels(template, "<h1>Chat</h1>", &model).is_empty(),
                "{template}"
            );
        }
    }

    #[test]
    fn a_value_of_an_enumeration_is_no_copied_value() {
        let model = Model::parse(
            "m.ttl",
            "@prefix ui: <https://w3id.org/seams/ui#> .\n\
             @prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .\n\
             <urn:send> a ui:Event ; ui:kind \"submit\" ; rdfs:label \"Send it\" .\n",
        )
        .unwrap();
        // "submit:" is a word of the site map's format; "Send it" is the
        // model's.
        assert_eq!(
            printed_values("submit: Send it\n", &model),
            [("urn:send".to_owned(), "Send it".to_owned())]
        );
    }
}
