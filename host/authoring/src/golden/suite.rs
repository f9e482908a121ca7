//! `seams test-generator DIR`: builds a generator package into a component
//! and runs its four tests on the project's model: golden match,
//! determinism, output parses, and sources name the files.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::{Golden, compare};
use crate::build::{BuildEnv, BuildError, Built, build};
use seams_core::Progress;
use seams_core::Project;
use seams_model::Model;
use seams_runtime::{GeneratorRun, Runtime};

/// Why the tests could not run at all.
#[derive(Debug, thiserror::Error)]
pub enum SuiteError {
    /// The package could not be built.
    #[error(transparent)]
    Build(#[from] BuildError),
    /// The model could not be loaded.
    #[error(transparent)]
    Model(#[from] seams_model::ModelError),
    /// The component is not a working generator.
    #[error(transparent)]
    Generator(#[from] seams_runtime::GeneratorError),
}

/// The names of the four tests, in the order they are reported.
pub const TESTS: [&str; 4] = [
    "golden match",
    "determinism",
    "output parses",
    "sources name the files",
];

/// The name of the fifth test, which `--probe` adds and drafting always
/// runs: the output follows changed copies of the model ([`crate::probe`]).
pub const PROBES: &str = "model probes";

/// One test's outcome: its failures, each naming a file and line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TestOutcome {
    /// One of [`TESTS`], or [`PROBES`].
    pub name: &'static str,
    /// Empty when it passed.
    pub failures: Vec<String>,
    /// What the test could not check, and why (a file no parser knows).
    pub notes: Vec<String>,
}

/// All four outcomes, and the component that was tested.
#[derive(Debug, Clone)]
pub struct SuiteReport {
    /// The four outcomes.
    pub outcomes: Vec<TestOutcome>,
    /// The built component.
    pub component: PathBuf,
    /// Its bytes as tested.
    pub component_bytes: Vec<u8>,
    /// The model probes' results, when they ran.
    pub probes: Vec<crate::probe::ProbeOutcome>,
}

impl SuiteReport {
    /// Whether every test passed.
    pub fn passed(&self) -> bool {
        self.outcomes.iter().all(|o| o.failures.is_empty())
    }

    /// The JSON form of `seams test-generator --format json`, with a final
    /// newline: `passed`, the component's path, and per test its name,
    /// whether it passed and its failures.
    pub fn to_json(&self) -> String {
        let tests: Vec<serde_json::Value> = self
            .outcomes
            .iter()
            .map(|o| {
                serde_json::json!({
                    "name": o.name,
                    "passed": o.failures.is_empty(),
                    "failures": o.failures,
                    "notes": o.notes,
                })
            })
            .collect();
        let value = serde_json::json!({
            "passed": self.passed(),
            "component": self.component.display().to_string(),
            "tests": tests,
        });
        let mut text = serde_json::to_string_pretty(&value).expect("JSON serializes");
        text.push('\n');
        text
    }

    /// One line per test, then its failures indented.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        for o in &self.outcomes {
            if o.failures.is_empty() {
                out.push_str(&format!("{}: ok\n", o.name));
                for note in &o.notes {
                    out.push_str(&format!("  note: {note}\n"));
                }
            } else {
                out.push_str(&format!("{}: FAILED\n", o.name));
                for f in &o.failures {
                    for line in f.lines() {
                        out.push_str(&format!("  {line}\n"));
                    }
                }
            }
        }
        out
    }
}

/// Builds the package in `dir` and runs the four tests on `project`'s model,
/// with the goldens in `goldens` (default `<dir>/tests/golden`; a package
/// tested on several projects keeps one directory of goldens per project).
///
/// # Errors
///
/// The package cannot be built or loaded, or the model cannot be read. A
/// generator that fails while running fails the tests instead.
pub fn test_generator(
    dir: &Path,
    goldens: Option<&Path>,
    project: &Project,
    runtime: &Runtime,
    probes: bool,
    progress: &dyn Progress,
) -> Result<SuiteReport, SuiteError> {
    test_built_in(
        dir,
        goldens,
        project,
        runtime,
        BuildEnv::Inherited,
        probes,
        progress,
    )
}

/// [`test_generator`], building in `env`.
pub(crate) fn test_built_in(
    dir: &Path,
    goldens: Option<&Path>,
    project: &Project,
    runtime: &Runtime,
    env: BuildEnv,
    probes: bool,
    progress: &dyn Progress,
) -> Result<SuiteReport, SuiteError> {
    let Built {
        path: component,
        bytes,
    } = build(dir, project, env, progress)?;
    let loaded = runtime.load(&dir.display().to_string(), &bytes)?;
    // Lists as the UI vocabulary makes them, so that the probes clone a
    // form's one field into it as write-back does.
    let model = Arc::new(
        Model::load(&project.model_files)?
            .with_lists(seams_model::ui_shapes::list_properties().clone()),
    );
    let first = runtime.run_reporting(&loaded, &model, &project.limits)?;
    let (golden_dir, shown_as) = match goldens {
        Some(goldens) => (goldens.to_owned(), goldens.display().to_string()),
        None => (dir.join("tests").join("golden"), "tests/golden".to_owned()),
    };
    let second = runtime.run_reporting(&loaded, &model, &project.limits)?;
    let mut outcomes = vec![
        TestOutcome {
            name: TESTS[0],
            failures: golden_match(
                &golden_dir,
                &shown_as,
                &project.output_path(),
                &first,
                &model,
            ),
            notes: Vec::new(),
        },
        TestOutcome {
            name: TESTS[1],
            failures: determinism(&first, &second),
            notes: Vec::new(),
        },
        TestOutcome {
            name: TESTS[2],
            failures: output_parses(&first),
            notes: first
                .outputs
                .iter()
                .filter_map(|o| crate::output_syntax::not_applicable(&o.path))
                .collect(),
        },
        TestOutcome {
            name: TESTS[3],
            failures: sources_name_files(&first),
            notes: Vec::new(),
        },
    ];
    let mut results = Vec::new();
    if probes {
        progress.start("probing with changed models", None);
        results = crate::probe::run(runtime, &loaded, &model, &project.limits, &first);
        progress.finish();
        outcomes.push(probe_outcome(&results));
    }
    Ok(SuiteReport {
        outcomes,
        component,
        component_bytes: bytes,
        probes: results,
    })
}

/// The probes' results as the fifth test: a failure per probe the output
/// did not follow; a note of those it did, or that none applied.
fn probe_outcome(results: &[crate::probe::ProbeOutcome]) -> TestOutcome {
    let failures = results
        .iter()
        .filter_map(|r| r.failure.as_ref().map(|f| format!("{}: {f}", r.name)))
        .collect();
    let followed: Vec<&str> = results
        .iter()
        .filter(|r| r.failure.is_none())
        .map(|r| r.name.as_str())
        .collect();
    let note = if results.is_empty() {
        "no probe applies: the output prints no model label and no traced element".to_owned()
    } else if followed.is_empty() {
        String::new()
    } else {
        format!("the output followed: {}", followed.join(", "))
    };
    TestOutcome {
        name: PROBES,
        failures,
        notes: if note.is_empty() {
            Vec::new()
        } else {
            vec![note]
        },
    }
}

/// The "golden match" test: every output of `run` against its golden in
/// `golden_dir`, and every golden against an output. Failures name the
/// goldens as `<shown_as>/<path>`. A golden kept as claims
/// (`<path>.claims`) is about the committed output `<committed>/<path>`.
pub fn golden_match(
    golden_dir: &Path,
    shown_as: &str,
    committed: &Path,
    run: &GeneratorRun,
    model: &Model,
) -> Vec<String> {
    let mut failures = Vec::new();
    for output in &run.outputs {
        let file = format!("{shown_as}/{}", output.path);
        let claims_file = format!("{file}{CLAIMS_SUFFIX}");
        // A claims golden's failures name the claims file: its claims are
        // numbered by output line, as the failures are.
        let (golden, file) = match std::fs::read_to_string(golden_dir.join(&output.path)) {
            Ok(text) => (Golden::parse(&file, &text), file),
            Err(_) => match std::fs::read_to_string(
                golden_dir.join(format!("{}{CLAIMS_SUFFIX}", output.path)),
            ) {
                Ok(claims) => match std::fs::read_to_string(committed.join(&output.path)) {
                    Ok(text) => (
                        Golden::from_claims(&claims_file, &claims, &text),
                        claims_file,
                    ),
                    Err(e) => {
                        failures.push(format!(
                            "{claims_file}: its output {} cannot be read ({e}); the claims are about the project's committed output, so generate it there first",
                            committed.join(&output.path).display()
                        ));
                        continue;
                    }
                },
                Err(_) => {
                    failures.push(format!(
                        "{file}: missing; the generator writes {}, so write its golden (or {}{CLAIMS_SUFFIX}, claims on the committed output)",
                        output.path, output.path
                    ));
                    continue;
                }
            },
        };
        match golden {
            Ok(golden) => failures.extend(compare(
                &file,
                &golden,
                &output.text,
                output.trace.as_deref(),
                model,
            )),
            Err(e) => failures.push(e.to_string()),
        }
    }
    let mut goldens = Vec::new();
    collect_files(golden_dir, golden_dir, &mut goldens);
    for golden in goldens {
        let path = golden.strip_suffix(CLAIMS_SUFFIX).unwrap_or(&golden);
        if !run.outputs.iter().any(|o| o.path == path) {
            failures.push(format!(
                "{shown_as}/{golden}: the generator does not write {path}"
            ));
        }
    }
    failures
}

/// The suffix of a golden kept as claims on a committed output.
const CLAIMS_SUFFIX: &str = ".claims";

fn collect_files(root: &Path, dir: &Path, out: &mut Vec<String>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut paths: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    paths.sort();
    for path in paths {
        if path.is_dir() {
            collect_files(root, &path, out);
        } else if let Ok(rel) = path.strip_prefix(root) {
            out.push(rel.to_string_lossy().replace('\\', "/"));
        }
    }
}

fn determinism(first: &GeneratorRun, second: &GeneratorRun) -> Vec<String> {
    let mut failures = Vec::new();
    let paths = |r: &GeneratorRun| r.outputs.iter().map(|o| o.path.clone()).collect::<Vec<_>>();
    if paths(first) != paths(second) {
        failures.push(format!(
            "the two runs wrote different files: {:?}, then {:?}",
            paths(first),
            paths(second)
        ));
        return failures;
    }
    for (a, b) in first.outputs.iter().zip(&second.outputs) {
        if a.text != b.text {
            failures.push(format!(
                "{}: the two runs differ\n{}",
                a.path,
                super::diff(&a.text, &b.text)
            ));
        } else if a.trace != b.trace {
            failures.push(format!("{}: the two runs' traces differ", a.path));
        }
    }
    failures
}

/// The "output parses" test: every output of a known type parses.
pub fn output_parses(run: &GeneratorRun) -> Vec<String> {
    run.outputs
        .iter()
        .filter_map(|o| crate::output_syntax::check(&o.path, &o.text).err())
        .map(|p| p.to_string())
        .collect()
}

fn sources_name_files(run: &GeneratorRun) -> Vec<String> {
    let unnamed = run.outputs.iter().filter(|o| !o.named).map(|o| {
        format!(
            "{}: neither a trace nor the sources export names this file",
            o.path
        )
    });
    run.naming
        .iter()
        .map(ToString::to_string)
        .chain(unnamed)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use seams_runtime::{Meta, Output};
    use seams_templates::Syntax;

    fn run(text: &str) -> GeneratorRun {
        GeneratorRun {
            meta: Meta {
                name: "g".into(),
                version: "0.1.0".into(),
                description: String::new(),
                syntax: Syntax::Jinja,
                templates: Vec::new(),
                vocabularies: Vec::new(),
            },
            component_sha256: String::new(),
            outputs: vec![Output {
                path: "a.txt".into(),
                text: text.into(),
                stored: None,
                rendered: None,
                trace: None,
                sources: Vec::new(),
                named: true,
            }],
            terms: Vec::new(),
            log: Vec::new(),
            naming: Vec::new(),
            fuel: 0,
            renders_twice: None,
        }
    }

    // The sandbox leaves a component no source of nondeterminism (fixed
    // clocks, timers included; seeded randomness), so the determinism
    // test is fed two differing runs directly.
    #[test]
    fn determinism_fails_on_runs_that_differ_and_names_the_file_and_line() {
        assert!(determinism(&run("a\nb\n"), &run("a\nb\n")).is_empty());
        let failures = determinism(&run("a\nb\n"), &run("a\nc\n"));
        assert_eq!(failures.len(), 1);
        assert!(
            failures[0].starts_with("a.txt: the two runs differ"),
            "{failures:?}"
        );
        assert!(failures[0].contains("line 2:"), "{failures:?}");
    }
}
