//! `seams draft-generator` (ADR-0029, with ADR-0012's bounded retry): asks
//! an LLM, through a provider command the user names, for the extract
//! step, template and golden of a generator drawn from a reference output,
//! and keeps the draft only when the assembled package compiles to a
//! component and passes its four tests, restates no model label and holds
//! no template logic.
//!
//! The provider is any command: split like a shell would (shlex), run with
//! no shell, the prompt on stdin, the answer on stdout. The LLM model, when
//! named, reaches it as `SEAMS_LLM_MODEL`. Nothing is written until a draft
//! is accepted; a rejected draft goes back to the same provider with the
//! reasons, visibly, at most `retries` times.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::golden::{BuildEnv, SuiteError, test_built_in};
use crate::scaffold::{
    Package, Reference, ScaffoldError, Sdk, check_name, read_reference, scaffold,
};
use seams_core::Progress;
use seams_core::Project;
use seams_model::{Model, sha256_hex};
use seams_runtime::Runtime;

/// The prompt, versioned by its file name.
pub const PROMPT: &str = include_str!("../../../prompts/draft-generator-v2.txt");
/// The prompt for another attempt after a rejection.
pub const REPAIR_PROMPT: &str = include_str!("../../../prompts/draft-generator-repair-v1.txt");

/// Retries after a rejected draft when neither `--retries` nor `[propose]`
/// says.
pub const DEFAULT_RETRIES: u32 = 2;
/// Seconds a provider may take when neither `--timeout` nor `[propose]`
/// says.
pub const DEFAULT_TIMEOUT: u64 = 300;

/// Why drafting failed. DIR and the cache are as they were.
#[derive(Debug, thiserror::Error)]
pub enum DraftError {
    /// The name, reference or directory was refused.
    #[error(transparent)]
    Scaffold(#[from] ScaffoldError),
    /// No provider was named.
    #[error("no provider command: pass --provider CMD or set provider in [propose] of seams.toml")]
    NoProvider,
    /// The provider command line cannot be split.
    #[error("the provider command {0:?} cannot be split into words (unbalanced quotes?)")]
    BadCommand(String),
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
    /// A file could not be written.
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
    /// The provider command (else provider in seams.toml's propose table); gets the prompt on stdin.
    #[arg(long, value_name = "CMD")]
    pub provider: Option<String>,
    /// The LLM model, passed to the provider as SEAMS_LLM_MODEL (else model in the propose table).
    #[arg(long = "llm-model", value_name = "M")]
    pub llm_model: Option<String>,
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
}

/// What an accepted draft gave.
#[derive(Debug, Clone)]
pub struct DraftReport {
    /// The sha256 of the first prompt.
    pub prompt_sha256: String,
    /// Whether the answer came from the cache.
    pub cache_hit: bool,
    /// The tests that passed.
    pub tests: Vec<String>,
    /// Every file written.
    pub written: Vec<PathBuf>,
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

/// Fences `data` with more backticks than any run inside it, so that it
/// cannot close its block.
fn fence(data: &str) -> String {
    let longest = data.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let ticks = "`".repeat((longest + 1).max(3));
    let mut body = data.to_owned();
    if !body.ends_with('\n') {
        body.push('\n');
    }
    format!("{ticks}DATA\n{body}{ticks}")
}

/// The prompt for `reference` and `model`: deterministic, the same bytes
/// for the same inputs.
pub fn build_prompt(name: &str, reference: &Reference, model: &Model) -> String {
    let package = scaffold(name, reference, None, Sdk::Vendored);
    let module = package
        .files
        .iter()
        .find(|(p, _)| p == "src/lib.rs")
        .map(|(_, t)| t.as_str())
        .unwrap_or_default();
    PROMPT
        .replace("{{REFERENCE_NAME}}", &reference.name)
        .replace("{{REFERENCE}}", &fence(&reference.text))
        .replace("{{NAMES}}", &fence(&model.label_lines()))
        .replace("{{PACKAGE_MODULE}}", &fence(module))
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
    for (iri, label) in model.labels() {
        let label = label.trim();
        if label.is_empty() || !reference.contains(label) {
            continue;
        }
        for (i, line) in template.split('\n').enumerate() {
            if line.contains(label) {
                reasons.push(format!(
                    "template line {}: restates the label {label:?} of <{iri}>; read it in extract and print it from the view model",
                    i + 1
                ));
            }
        }
    }
    reasons
}

/// Runs the provider once.
fn call_provider(
    argv: &[String],
    command_line: &str,
    prompt: &str,
    llm_model: Option<&str>,
    timeout: Duration,
) -> Result<String, String> {
    let fail = |what: String| format!("provider `{command_line}` {what}");
    let mut command = Command::new(&argv[0]);
    command
        .args(&argv[1..])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(model) = llm_model {
        command.env("SEAMS_LLM_MODEL", model);
    }
    let mut child = command
        .spawn()
        .map_err(|e| fail(format!("could not be started: {e}")))?;
    let mut stdin = child.stdin.take().expect("piped");
    let prompt = prompt.to_owned();
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(prompt.as_bytes());
    });
    let read = |mut pipe: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            let _ = pipe.read_to_end(&mut buf);
            buf
        })
    };
    let stdout = read(Box::new(child.stdout.take().expect("piped")));
    let stderr = read(Box::new(child.stderr.take().expect("piped")));
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().map_err(|e| fail(e.to_string()))? {
            break status;
        }
        if started.elapsed() >= timeout {
            let _ = child.kill();
            let _ = child.wait();
            return Err(fail(format!(
                "did not answer within {} s and was stopped; raise --timeout or [propose] timeout",
                timeout.as_secs()
            )));
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let _ = writer.join();
    let out = stdout.join().unwrap_or_default();
    let err = String::from_utf8_lossy(&stderr.join().unwrap_or_default())
        .trim()
        .to_owned();
    if !status.success() {
        return Err(fail(format!(
            "failed ({status}){}",
            if err.is_empty() {
                String::new()
            } else {
                format!(": {err}")
            }
        )));
    }
    let out =
        String::from_utf8(out).map_err(|_| fail("answered with text that is not UTF-8".into()))?;
    if out.trim().is_empty() {
        return Err(fail("answered with nothing".into()));
    }
    Ok(out)
}

/// The package an answer gives.
fn assemble(name: &str, reference: &Reference, answer: &Answer) -> Package {
    // Vendored: a draft builds offline, whether or not the SDK is published.
    let mut package = scaffold(name, reference, Some(&answer.extract), Sdk::Vendored);
    for (path, text) in &mut package.files {
        if *path == format!("templates/{}", reference.name) {
            *text = answer.template.clone();
        } else if *path == format!("tests/golden/{}", reference.name) {
            *text = answer.golden.clone();
        }
    }
    package
}

/// Judges an answer in a scratch directory. Returns the package and its
/// component's bytes, or the reasons it is rejected.
fn accept(
    project: &Project,
    runtime: &Runtime,
    name: &str,
    reference: &Reference,
    model: &Model,
    answer: &Answer,
    progress: &dyn Progress,
) -> Result<(Package, Vec<u8>, Vec<String>), Vec<String>> {
    // Checked before anything compiles it: the build runs on this machine.
    let mut reasons = crate::extract_rules::check(&answer.extract);
    reasons.extend(check_no_logic(&answer.template));
    reasons.extend(check_no_restated_labels(
        &answer.template,
        &reference.text,
        model,
    ));
    if !reasons.is_empty() {
        return Err(reasons);
    }
    let package = assemble(name, reference, answer);
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
        BuildEnv::Cleared,
        progress,
    );
    let report = match built {
        Ok(report) => report,
        Err(SuiteError::Build { output, .. }) => {
            return Err(compiler_errors(&scrub(&output)));
        }
        Err(e) => return Err(vec![cut_lines(&scrub(&e.to_string()), REASON_LINES)]),
    };
    if !report.passed() {
        return Err(report
            .outcomes
            .iter()
            .filter(|o| !o.failures.is_empty())
            .map(|o| {
                let failures: Vec<String> = o
                    .failures
                    .iter()
                    .take(3)
                    .map(|f| cut_lines(&scrub(f), REASON_LINES))
                    .collect();
                format!("{} failed: {}", o.name, failures.join("; "))
            })
            .collect());
    }
    let component = std::fs::read(&report.component).map_err(|e| vec![e.to_string()])?;
    let passed = report.outcomes.iter().map(|o| o.name.to_owned()).collect();
    Ok((package, component, passed))
}

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

/// `seams draft-generator`. Progress (the prompt's sha256, cache hit or
/// miss) goes to `out`, retries are announced on `err`.
///
/// # Errors
///
/// A refused name, reference or directory, no provider, or every attempt
/// rejected; nothing is written then.
pub fn draft_generator(
    project: &Project,
    runtime: &Runtime,
    request: &DraftRequest,
    out: &mut dyn Write,
    err: &mut dyn Write,
    progress: &dyn Progress,
) -> Result<DraftReport, DraftError> {
    check_name(&request.name)?;
    let reference = read_reference(&request.reference)?;
    let dir = request
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from(format!("seams-{}", request.name)));
    crate::scaffold::check_dir(&dir, request.force)?;
    let command_line = request
        .provider
        .clone()
        .or_else(|| project.propose.provider.clone())
        .ok_or(DraftError::NoProvider)?;
    let argv = shlex::split(&command_line)
        .filter(|a| !a.is_empty())
        .ok_or_else(|| DraftError::BadCommand(command_line.clone()))?;
    let llm_model = request
        .llm_model
        .clone()
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

    let model = Arc::new(Model::load(&project.model_files)?);
    let prompt = build_prompt(&request.name, &reference, &model);
    let prompt_sha256 = sha256_hex(prompt.as_bytes());
    let _ = writeln!(out, "prompt sha256: {prompt_sha256}");

    let key = cache_key(
        PROMPT,
        &reference,
        model.hash(),
        &command_line,
        llm_model.as_deref(),
    );
    let cache_file = project
        .root
        .join(".seams")
        .join("generator-drafts")
        .join(format!("{key}.json"));

    let judge = |answer: &Answer| {
        accept(
            project,
            runtime,
            &request.name,
            &reference,
            &model,
            answer,
            progress,
        )
    };
    if let Some(answer) = std::fs::read_to_string(&cache_file)
        .ok()
        .and_then(|t| parse_answer(&t).ok())
    {
        let _ = writeln!(out, "cache hit");
        if let Ok((package, component, tests)) = judge(&answer) {
            let written = write_draft(&package, &component, &request.name, &dir, request.force)?;
            return Ok(DraftReport {
                prompt_sha256,
                cache_hit: true,
                tests,
                written,
            });
        }
    }
    let _ = writeln!(out, "cache miss");

    let attempts = retries + 1;
    let mut current_prompt = prompt.clone();
    let mut reasons: Vec<String> = Vec::new();
    for attempt in 1..=attempts {
        if attempt > 1 {
            let _ = writeln!(
                err,
                "draft rejected: {}; retrying ({}/{retries})",
                reasons.join("; ").replace('\n', " "),
                attempt - 1
            );
            current_prompt = REPAIR_PROMPT
                .replace("{{PROMPT}}", &prompt)
                .replace("{{REASONS}}", &fence(&reasons.join("\n")));
        }
        progress.start(
            &format!("waiting for the provider (attempt {attempt} of {attempts})"),
            None,
        );
        let answered = call_provider(
            &argv,
            &command_line,
            &current_prompt,
            llm_model.as_deref(),
            timeout,
        );
        progress.finish();
        let answer_text = match answered {
            Ok(text) => text,
            Err(failure) => {
                reasons = vec![failure];
                continue;
            }
        };
        let answer = match parse_answer(&answer_text) {
            Ok(answer) => answer,
            Err(why) => {
                reasons = vec![why];
                continue;
            }
        };
        match judge(&answer) {
            Ok((package, component, tests)) => {
                let written =
                    write_draft(&package, &component, &request.name, &dir, request.force)?;
                store_cache(&cache_file, &answer)?;
                return Ok(DraftReport {
                    prompt_sha256,
                    cache_hit: false,
                    tests,
                    written,
                });
            }
            Err(why) => reasons = why,
        }
    }
    Err(DraftError::Rejected { attempts, reasons })
}

/// The draft cache's key: everything the answer answers. The prompt's
/// text is part of it, so a changed prompt asks again.
fn cache_key(
    prompt: &str,
    reference: &Reference,
    model_hash: &str,
    command_line: &str,
    llm_model: Option<&str>,
) -> String {
    let mut parts = vec![
        sha256_hex(reference.text.as_bytes()),
        model_hash.to_owned(),
        reference.name.clone(),
        command_line.to_owned(),
    ];
    parts.extend(llm_model.map(str::to_owned));
    parts.push(sha256_hex(prompt.as_bytes()));
    sha256_hex(parts.join("\n").as_bytes())
}

fn write_draft(
    package: &Package,
    component: &[u8],
    name: &str,
    dir: &Path,
    force: bool,
) -> Result<Vec<PathBuf>, DraftError> {
    let mut written = crate::scaffold::write_package(package, dir, force)?;
    let file = format!("{name}.wasm");
    write_atomically(dir, &file, component)?;
    written.push(dir.join(file));
    Ok(written)
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
        let base = key(PROMPT, &reference, "m1", None);
        assert_eq!(base, key(PROMPT, &reference, "m1", None), "deterministic");
        let edited_prompt = format!("{PROMPT} ");
        let other_reference = Reference {
            text: "<h1>Talk</h1>\n".into(),
            ..reference.clone()
        };
        for changed in [
            key(&edited_prompt, &reference, "m1", None),
            key(PROMPT, &other_reference, "m1", None),
            key(PROMPT, &reference, "m2", None),
            key(PROMPT, &reference, "m1", Some("big-model")),
        ] {
            assert_ne!(changed, base);
        }
    }

    #[test]
    fn data_cannot_break_out_of_its_fence() {
        assert_eq!(fence("a"), "```DATA\na\n```");
        let tricky = "x ```` y\n```\n";
        let fenced = fence(tricky);
        assert!(fenced.starts_with("`````DATA\n"), "{fenced}");
        assert!(fenced.ends_with("\n`````"));
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
        assert!(
            check_no_restated_labels("<h1>[[ app.title ]]</h1>\n", "<h1>Chat</h1>", &model)
                .is_empty()
        );
    }
}
