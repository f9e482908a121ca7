//! `seams test-generator DIR`: builds a generator package into a component
//! and runs its four tests on the project's model: golden match,
//! determinism, output parses, and sources name the files.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;

use super::{Golden, compare};
use crate::child::{Bounded, Bounds, Ended};
use seams_core::Progress;
use seams_core::Project;
use seams_model::Model;
use seams_runtime::{GeneratorRun, Runtime};

/// Why the tests could not run at all.
#[derive(Debug, thiserror::Error)]
pub enum SuiteError {
    /// The package has no readable `Cargo.toml` with a package name.
    #[error("{}: {message}", path.display())]
    Package {
        /// The manifest.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// cargo failed to build the component.
    #[error("building {} failed:\n{output}", dir.display())]
    Build {
        /// The package.
        dir: PathBuf,
        /// What cargo printed, with the package's paths.
        output: String,
    },
    /// The build of a package nobody reviewed passed its time limit and
    /// was stopped.
    #[error(
        "building {} was stopped after {seconds} s; raise [propose] build_timeout in seams.toml if a build takes longer on this machine",
        dir.display()
    )]
    BuildTimedOut {
        /// The package.
        dir: PathBuf,
        /// The limit.
        seconds: u64,
    },
    /// The model could not be loaded.
    #[error(transparent)]
    Model(#[from] seams_model::ModelError),
    /// The component is not a working generator.
    #[error(transparent)]
    Generator(#[from] seams_runtime::GeneratorError),
}

include!("../../../core/build/cargo_env.rs");

/// What environment a package is built in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BuildEnv {
    /// The user's (without the outer cargo's settings), with no limits:
    /// for the user's own packages.
    Inherited,
    /// Only what cargo and rustc need to find themselves and the
    /// registry, within `Bounds`: for code nobody has reviewed, such as a
    /// draft, whose macros and constants run at compile time.
    Cleared(Bounds),
}

/// The variables a cleared build keeps.
const CLEARED_BUILD_KEEPS: [&str; 6] = [
    "PATH",
    "HOME",
    "CARGO_HOME",
    "RUSTUP_HOME",
    "RUSTUP_TOOLCHAIN",
    "TMPDIR",
];

/// Sets up `command`'s environment for `env`.
fn build_environment(command: &mut Command, env: BuildEnv) {
    match env {
        BuildEnv::Inherited => remove_outer_cargo_env(command),
        BuildEnv::Cleared(_) => {
            command.env_clear();
            for key in CLEARED_BUILD_KEEPS {
                if let Some(value) = std::env::var_os(key) {
                    command.env(key, value);
                }
            }
        }
    }
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

/// A built component: where cargo wrote it, and its bytes as built (the
/// file may be rebuilt by another package of the same name later).
#[derive(Debug, Clone)]
pub struct Built {
    /// The path in the target directory.
    pub path: PathBuf,
    /// Its bytes, read while the build directory was held.
    pub bytes: Vec<u8>,
}

/// Builds the package in `dir` for wasm32-wasip2 in the project's build
/// directory ([`Project::build_dir`], else `<project>/.seams/target`) and
/// returns the component. Builds in one directory take turns, across
/// processes (a lock file beside cargo's own), so that a component read
/// after its build is the one built. `progress` counts the crates cargo
/// compiles.
///
/// # Errors
///
/// A manifest without a package name, or a failed build (with cargo's
/// output, whose paths are the package's).
pub fn build(
    dir: &Path,
    project: &Project,
    env: BuildEnv,
    progress: &dyn Progress,
) -> Result<Built, SuiteError> {
    let manifest = dir.join("Cargo.toml");
    let package_error = |message: String| SuiteError::Package {
        path: manifest.clone(),
        message,
    };
    let text = std::fs::read_to_string(&manifest).map_err(|e| package_error(e.to_string()))?;
    let value: toml::Table =
        toml::from_str(&text).map_err(|e| package_error(e.message().to_owned()))?;
    let name = value
        .get("package")
        .and_then(|p| p.get("name"))
        .and_then(|n| n.as_str())
        .ok_or_else(|| package_error("has no [package] name".into()))?;
    // Absolute: cargo runs in the package directory.
    let target = project
        .build_dir
        .clone()
        .unwrap_or_else(|| project.root.join(".seams").join("target"));
    let target = std::path::absolute(&target).unwrap_or(target);
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let build_error = |output: String| SuiteError::Build {
        dir: dir.to_owned(),
        output,
    };
    let _turn = take_turn(&target).map_err(|e| {
        build_error(format!(
            "cannot use the build directory {}: {e}",
            target.display()
        ))
    })?;
    // cargo decides freshness by modification times, and names a path
    // package's build by its path relative to its workspace: another
    // package of the same name built since these files were written would
    // pass for this one. Marking them modified now rebuilds them. A
    // vendored SDK is marked only when it differs from the last one built
    // here: the same seams vendors the same SDK, which need not rebuild.
    touch_sources(dir, &target)
        .map_err(|e| build_error(format!("cannot mark the package's files as changed: {e}")))?;
    let total = if progress.is_shown() {
        crate_count(&cargo, dir, env)
    } else {
        None
    };
    progress.start(&format!("building {name}"), total);
    let mut command = Command::new(&cargo);
    command
        .args([
            "build",
            "--release",
            "--target",
            "wasm32-wasip2",
            // Diagnostics stay text on stderr; stdout says which crate is
            // done, one JSON line each, for the progress.
            "--message-format",
            "json-render-diagnostics",
            "--target-dir",
        ])
        .arg(&target)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    build_environment(&mut command, env);
    let bounds = match env {
        BuildEnv::Inherited => Bounds::NONE,
        BuildEnv::Cleared(bounds) => bounds,
    };
    let result = run_counting_artifacts(command, bounds, progress);
    progress.finish();
    let (ended, stderr) = result.map_err(|e| build_error(format!("cannot run cargo: {e}")))?;
    match ended {
        Ended::Exited(status) if status.success() => {}
        Ended::Exited(_) => return Err(build_error(stderr)),
        Ended::TimedOut => {
            return Err(SuiteError::BuildTimedOut {
                dir: dir.to_owned(),
                seconds: bounds.time.unwrap_or_default().as_secs(),
            });
        }
    }
    let path = target
        .join("wasm32-wasip2")
        .join("release")
        .join(format!("{}.wasm", name.replace('-', "_")));
    let bytes = std::fs::read(&path).map_err(|e| {
        build_error(format!(
            "the build gave no component at {}: {e}",
            path.display()
        ))
    })?;
    Ok(Built { path, bytes })
}

/// The vendored SDK's directory in a package, as the scaffold writes it.
const VENDORED_SDK: &str = "seams-sdk";

/// Sets the modification time of the package's files in `dir` (but
/// `target/` and hidden directories) to now; those of its vendored SDK
/// only when their content differs from the vendored SDK last built in
/// `target`, which is then recorded.
fn touch_sources(dir: &Path, target: &Path) -> std::io::Result<()> {
    let now = std::time::SystemTime::now();
    let sdk = dir.join(VENDORED_SDK);
    let mut sdk_files = Vec::new();
    let mut todo = vec![dir.to_owned()];
    while let Some(current) = todo.pop() {
        for entry in std::fs::read_dir(&current)? {
            let entry = entry?;
            let kind = entry.file_type()?;
            let name = entry.file_name();
            if kind.is_dir() {
                if name != "target" && !name.to_string_lossy().starts_with('.') {
                    todo.push(entry.path());
                }
            } else if kind.is_file() {
                if entry.path().starts_with(&sdk) {
                    sdk_files.push(entry.path());
                } else {
                    // Read-only is enough for the owner to set the time.
                    std::fs::File::open(entry.path())?.set_modified(now)?;
                }
            }
        }
    }
    if sdk_files.is_empty() {
        return Ok(());
    }
    use sha2::Digest;
    sdk_files.sort();
    let mut hasher = sha2::Sha256::new();
    for file in &sdk_files {
        hasher.update(
            file.strip_prefix(&sdk)
                .unwrap_or(file)
                .to_string_lossy()
                .as_bytes(),
        );
        hasher.update([0]);
        hasher.update(std::fs::read(file)?);
        hasher.update([0]);
    }
    let digest = seams_model::hex(&hasher.finalize());
    let record = target.join(".seams-vendored-sdk");
    if std::fs::read_to_string(&record).ok().as_deref() != Some(digest.as_str()) {
        for file in &sdk_files {
            std::fs::File::open(file)?.set_modified(now)?;
        }
        std::fs::write(&record, &digest)?;
    }
    Ok(())
}

/// Waits for this process's turn at the build directory `target`
/// (created private if new): held until the returned file is dropped.
fn take_turn(target: &Path) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(target)?;
    let lock = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(target.join(".seams-build.lock"))?;
    lock.lock()?;
    Ok(lock)
}

/// Runs a cargo build whose stdout is JSON messages within `bounds`,
/// telling `progress` of each compiled crate; gives how it ended and what
/// cargo wrote to stderr (up to [`BUILD_OUTPUT_CAP`]).
fn run_counting_artifacts(
    mut command: Command,
    bounds: Bounds,
    progress: &dyn Progress,
) -> std::io::Result<(Ended, String)> {
    use std::io::Read;
    let mut running = Bounded::spawn(&mut command, bounds)?;
    let child = running.child();
    let mut stderr = child.stderr.take().expect("stderr is piped");
    // stderr is drained beside stdout, or a chatty build would block on it;
    // kept up to a bound, the rest read and dropped.
    let reader = std::thread::spawn(move || {
        let mut text = Vec::new();
        let _ = (&mut stderr).take(BUILD_OUTPUT_CAP).read_to_end(&mut text);
        let _ = std::io::copy(&mut stderr, &mut std::io::sink());
        String::from_utf8_lossy(&text).into_owned()
    });
    let stdout = child.stdout.take().expect("stdout is piped");
    // cargo's own messages (a build script's output goes to cargo).
    for line in std::io::BufRead::lines(std::io::BufReader::new(stdout)) {
        let Ok(line) = line else { break };
        let Ok(message) = serde_json::from_str::<serde_json::Value>(&line) else {
            continue;
        };
        if message["reason"] == "compiler-artifact" {
            let crate_name = message["target"]["name"].as_str().unwrap_or("");
            progress.advance(1, crate_name);
        }
    }
    let ended = running.wait()?;
    let stderr = reader.join().unwrap_or_default();
    Ok((ended, stderr))
}

/// The most bytes of a build's diagnostics kept: what goes back to a
/// provider is three errors of twelve lines.
const BUILD_OUTPUT_CAP: u64 = 1 << 20;

/// How many compiler artifacts a build of the package in `dir` makes: one
/// per crate for the wasm target, plus one per build script; `None` when
/// cargo cannot tell without the network.
fn crate_count(cargo: &std::ffi::OsStr, dir: &Path, env: BuildEnv) -> Option<u64> {
    let mut command = Command::new(cargo);
    command
        .args([
            "metadata",
            "--format-version",
            "1",
            "--filter-platform",
            "wasm32-wasip2",
            "--offline",
        ])
        .current_dir(dir)
        .stdin(Stdio::null())
        .stderr(Stdio::null());
    build_environment(&mut command, env);
    let output = command.output().ok()?;
    if !output.status.success() {
        return None;
    }
    let metadata: serde_json::Value = serde_json::from_slice(&output.stdout).ok()?;
    let built: std::collections::BTreeSet<&str> = metadata["resolve"]["nodes"]
        .as_array()?
        .iter()
        .filter_map(|node| node["id"].as_str())
        .collect();
    let count = metadata["packages"]
        .as_array()?
        .iter()
        .filter(|package| package["id"].as_str().is_some_and(|id| built.contains(id)))
        .map(|package| {
            let scripts = package["targets"].as_array().map_or(0, |targets| {
                targets
                    .iter()
                    .filter(|t| {
                        t["kind"]
                            .as_array()
                            .is_some_and(|k| k.iter().any(|k| k == "custom-build"))
                    })
                    .count()
            });
            1 + scripts as u64
        })
        .sum();
    Some(count)
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
    let model = Arc::new(Model::load(&project.model_files)?);
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
