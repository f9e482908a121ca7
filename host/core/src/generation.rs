//! Running every generator of a project, in parallel, on inputs read
//! once; in memory, writing nothing.

use std::collections::BTreeMap;
use std::sync::Arc;

use seams_runtime::{GeneratorError, GeneratorErrorKind, GeneratorRun, Runtime};
use seams_templates::{TRACE_VERSION, Trace, sidecar_path};

use crate::audit::Contents;
use crate::error::GenerateError;
use crate::inputs::{Inputs, load_bytes, read_inputs};
use crate::progress::{Progress, Silent};
use crate::project::{GeneratorSource, Project};

/// One generator's successful run, with how the project names it.
#[derive(Debug, Clone)]
pub struct SourcedRun {
    /// How `seams.toml` names the generator.
    pub source: GeneratorSource,
    /// What it produced.
    pub run: GeneratorRun,
    /// Every file it gives: each output, then its sidecar when it is
    /// traced.
    pub files: Vec<GeneratedFile>,
}

/// One file a run gives.
#[derive(Debug, Clone)]
pub struct GeneratedFile {
    /// The path in the output directory.
    pub path: String,
    /// Its contents.
    pub contents: Contents,
    /// The index in the run's outputs of the output it is (or is the
    /// sidecar of).
    pub output: usize,
}

/// Every generator's result on the project's model, in memory.
#[derive(Debug)]
pub struct Generation {
    /// The model's hash.
    pub model_hash: String,
    /// Generators that succeeded, in `seams.toml` order.
    pub runs: Vec<SourcedRun>,
    /// Generators that failed, in `seams.toml` order.
    pub failures: Vec<(GeneratorSource, GeneratorError)>,
}

/// Outputs at least this large are spilled to a temporary file, so that
/// the plan does not hold them in memory.
const SPILL_BYTES: usize = 1 << 20;

/// An output's contents: in memory, or spilled when large (in memory
/// still when the temporary directory cannot take it).
fn contents_of(text: &str) -> Contents {
    if text.len() >= SPILL_BYTES
        && let Ok(spilled) = Contents::spilled(text.as_bytes(), &std::env::temp_dir())
    {
        return spilled;
    }
    Contents::in_memory(Arc::from(text))
}

impl Generation {
    /// Frees the text of every output whose contents were spilled: for
    /// callers that go on with the files alone (generate, check).
    pub(crate) fn release_spilled_texts(&mut self) {
        for run in &mut self.runs {
            for file in run.files.iter().filter(|f| f.contents.is_spilled()) {
                run.run.outputs[file.output].text = String::new();
            }
        }
    }
}

/// Every file a run gives: each output, then its sidecar when it is
/// traced.
fn files_of(run: &GeneratorRun) -> Vec<GeneratedFile> {
    let mut files = Vec::with_capacity(run.outputs.len() * 2);
    for (index, output) in run.outputs.iter().enumerate() {
        files.push(GeneratedFile {
            path: output.path.clone(),
            contents: contents_of(&output.text),
            output: index,
        });
        if let Some(lines) = &output.trace {
            let sidecar = Trace {
                generator: run.meta.name.clone(),
                lines: lines.clone(),
                output: output.path.clone(),
                trace_version: TRACE_VERSION,
            };
            files.push(GeneratedFile {
                path: sidecar_path(&output.path),
                contents: Contents::in_memory(Arc::from(sidecar.to_json())),
                output: index,
            });
        }
    }
    files
}

/// Loads the model and runs every generator in parallel, writing nothing.
///
/// # Errors
///
/// The model cannot be loaded. A generator's failure is reported in
/// [`Generation::failures`] and does not stop the others.
pub fn run_generators(project: &Project, runtime: &Runtime) -> Result<Generation, GenerateError> {
    Ok(run_with_inputs(project, runtime, &read_inputs(project)?))
}

/// Runs every generator on already-read inputs, in parallel.
pub fn run_with_inputs(project: &Project, runtime: &Runtime, inputs: &Inputs) -> Generation {
    run_reporting_progress(project, runtime, inputs, &Silent)
}

/// [`run_with_inputs`], telling `progress` as each generator finishes.
pub(crate) fn run_reporting_progress(
    project: &Project,
    runtime: &Runtime,
    inputs: &Inputs,
    progress: &dyn Progress,
) -> Generation {
    let model = &inputs.model;
    progress.start("generating", Some(project.generators.len() as u64));
    let results: Vec<Result<GeneratorRun, GeneratorError>> = std::thread::scope(|scope| {
        let handles: Vec<_> = project
            .generators
            .iter()
            .zip(&inputs.components)
            .map(|(source, component)| {
                scope.spawn(move || {
                    let result = component
                        .as_ref()
                        .map_err(clone_error)
                        .and_then(|component| load_bytes(runtime, source, &component.bytes))
                        .and_then(|loaded| runtime.run(&loaded, model, &project.limits));
                    progress.advance(1, &source.to_string());
                    result
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a generator thread panicked"))
            .collect()
    });
    progress.finish();

    let mut generation = Generation {
        model_hash: model.hash().to_owned(),
        runs: Vec::new(),
        failures: Vec::new(),
    };
    let mut claimed: BTreeMap<String, String> = BTreeMap::new();
    for (source, result) in project.generators.iter().zip(results) {
        let run = match result {
            Ok(run) => run,
            Err(e) => {
                generation.failures.push((source.clone(), e));
                continue;
            }
        };
        // Two generators may not write the same file.
        let clash = run.outputs.iter().find_map(|o| {
            claimed
                .get(&o.path)
                .map(|owner| (o.path.clone(), owner.clone()))
        });
        if let Some((path, owner)) = clash {
            generation.failures.push((
                source.clone(),
                GeneratorError {
                    generator: source.to_string(),
                    kind: GeneratorErrorKind::Protocol(format!(
                        "returned {path:?}, which generator {owner} also writes"
                    )),
                },
            ));
            continue;
        }
        for o in &run.outputs {
            claimed.insert(o.path.clone(), run.meta.name.clone());
        }
        let files = files_of(&run);
        generation.runs.push(SourcedRun {
            source: source.clone(),
            run,
            files,
        });
    }
    generation
}

fn clone_error(e: &GeneratorError) -> GeneratorError {
    GeneratorError {
        generator: e.generator.clone(),
        kind: GeneratorErrorKind::Protocol(e.kind.to_string()),
    }
}
