//! Running every generator of a project, in parallel, on inputs read
//! once; in memory, writing nothing.

use std::path::PathBuf;
use std::sync::Arc;

use seams_runtime::{
    Blob, GeneratorError, GeneratorErrorKind, GeneratorRun, LoadedGenerator, Runtime, Sink,
};
use seams_templates::{TRACE_VERSION, Trace, sidecar_path};

use crate::audit::Contents;
use crate::claims::{Claimant, clashes};
use crate::error::GenerateError;
use crate::inputs::{Inputs, Stamp, load_bytes, read_inputs};
use crate::progress::{Progress, Silent};
use crate::project::{GeneratorSource, Project};

/// One generator's successful run, with how the project names it.
#[derive(Debug, Clone)]
pub struct SourcedRun {
    /// How `seams.toml` names the generator.
    pub source: GeneratorSource,
    /// What it produced (for `generate` and `check`, without its outputs'
    /// texts and traces, which moved into `files`).
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

/// Plain-text outputs at least this large are stored in a file too, so
/// that the plan does not hold them in memory.
const STORE_BYTES: usize = 1 << 20;

/// What a generation keeps of each run's outputs besides their files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Keep {
    /// Their texts and traces too, in memory: for callers that read them.
    Outputs,
    /// Only the files, each kept as soon as it is final: held in memory up
    /// to `hold_bytes` per run, the rest written to temporary files in
    /// `dir`, so that the generation is not held in memory (generate,
    /// check).
    Files {
        /// Where the temporary files go.
        dir: PathBuf,
        /// How many bytes of files a run may hold in memory.
        hold_bytes: usize,
    },
}

impl Keep {
    fn dir(&self) -> &std::path::Path {
        match self {
            Keep::Outputs => std::path::Path::new(""),
            Keep::Files { dir, .. } => dir,
        }
    }

    fn sink(&self) -> Sink {
        match self {
            Keep::Outputs => Sink::Memory,
            Keep::Files { dir, hold_bytes } => Sink::Files {
                dir: dir.clone(),
                hold_bytes: *hold_bytes,
            },
        }
    }
}

/// Every file a run gives: each output, then its sidecar when it is
/// traced. With [`Keep::Files`], each output's `text` is left empty and
/// its `trace` gone.
fn files_of(run: &mut GeneratorRun, keep: &Keep) -> std::io::Result<Vec<GeneratedFile>> {
    let mut files = Vec::with_capacity(run.outputs.len() * 2);
    for (index, output) in run.outputs.iter_mut().enumerate() {
        if let Some(stored) = &output.stored {
            files.push(GeneratedFile {
                path: output.path.clone(),
                contents: Contents::stored(stored.text.clone()),
                output: index,
            });
            if let Some(sidecar) = &stored.sidecar {
                files.push(GeneratedFile {
                    path: sidecar_path(&output.path),
                    contents: Contents::stored(sidecar.clone()),
                    output: index,
                });
            }
            continue;
        }
        let (text, trace) = match keep {
            Keep::Outputs => (output.text.clone(), output.trace.clone()),
            Keep::Files { .. } => (std::mem::take(&mut output.text), output.trace.take()),
        };
        let contents = match keep {
            Keep::Files { dir, .. } if text.len() >= STORE_BYTES => {
                Contents::stored(Blob::write(dir, text.as_bytes())?)
            }
            _ => Contents::in_memory(Arc::from(text)),
        };
        files.push(GeneratedFile {
            path: output.path.clone(),
            contents,
            output: index,
        });
        if let Some(lines) = trace {
            let sidecar = Trace {
                generator: run.meta.name.clone(),
                lines,
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
    Ok(files)
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
    let components = load_components(project, runtime, &inputs.stamp);
    run_reporting_progress(
        project,
        runtime,
        inputs,
        components,
        &Silent,
        &Keep::Outputs,
    )
}

/// A generator's component, compiled or loaded from the cache, or why not.
pub(crate) type Loaded = Result<LoadedGenerator, GeneratorError>;

/// Each generator's component from the stamp's bytes, in `seams.toml`
/// order; one thread per generator, so that compiling several on an empty
/// cache takes as long as the slowest.
pub(crate) fn load_components(project: &Project, runtime: &Runtime, stamp: &Stamp) -> Vec<Loaded> {
    std::thread::scope(|scope| {
        let handles: Vec<_> = project
            .generators
            .iter()
            .zip(&stamp.components)
            .map(|(source, component)| {
                scope.spawn(move || {
                    isolated(source, || {
                        component
                            .as_ref()
                            .map_err(GeneratorError::clone)
                            .and_then(|component| load_bytes(runtime, source, component))
                    })
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a generator's work is isolated"))
            .collect()
    })
}

/// Loads the model, and meanwhile each generator's component: a run that
/// has work to do needs both. Reading the model gathers the IRIs of the
/// namespaces the components' vocabularies had when they last ran (the
/// component cache notes them), for the model check.
///
/// # Errors
///
/// The model cannot be loaded.
pub(crate) fn load_for_run(
    project: &Project,
    runtime: &Runtime,
    stamp: Stamp,
) -> Result<(Inputs, Vec<Loaded>), GenerateError> {
    let watch: Vec<String> = stamp
        .components
        .iter()
        .flatten()
        .flat_map(|component| runtime.known_namespaces(&component.sha256))
        .collect();
    stamp.load_model_beside(project, &watch, |stamp| {
        load_components(project, runtime, stamp)
    })
}

/// [`run_with_inputs`] with the components already loaded, telling
/// `progress` as each generator finishes.
pub(crate) fn run_reporting_progress(
    project: &Project,
    runtime: &Runtime,
    inputs: &Inputs,
    components: Vec<Loaded>,
    progress: &dyn Progress,
    keep: &Keep,
) -> Generation {
    let model = &inputs.model;
    progress.start("generating", Some(project.generators.len() as u64));
    // Each worker also builds its run's files (hashing, sidecars, spills),
    // so that work runs in parallel too.
    type Worked = Result<(GeneratorRun, Vec<GeneratedFile>), GeneratorError>;
    let results: Vec<Worked> = std::thread::scope(|scope| {
        let handles: Vec<_> = project
            .generators
            .iter()
            .zip(components)
            .map(|(source, component)| {
                scope.spawn(move || {
                    let result = isolated(source, || {
                        component
                            .and_then(|loaded| {
                                let run =
                                    runtime.run_into(&loaded, model, &project.limits, &keep.sink());
                                inputs.keep(loaded);
                                run
                            })
                            .and_then(|mut run| {
                                let files =
                                    files_of(&mut run, keep).map_err(|e| GeneratorError {
                                        generator: source.to_string(),
                                        kind: GeneratorErrorKind::Write {
                                            dir: keep.dir().display().to_string(),
                                            message: e.to_string(),
                                        },
                                    })?;
                                Ok((run, files))
                            })
                    });
                    progress.advance(1, &source.to_string());
                    result
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a generator's work is isolated"))
            .collect()
    });
    progress.finish();

    let mut generation = Generation {
        model_hash: model.hash().to_owned(),
        runs: Vec::new(),
        failures: Vec::new(),
    };
    let mut runs = Vec::new();
    for (source, result) in project.generators.iter().zip(results) {
        match result {
            Ok((run, files)) => runs.push((source, run, files)),
            Err(e) => generation.failures.push((source.clone(), e)),
        }
    }
    // Every output is claimed before anything is written.
    let builtins: Vec<&str> = project
        .generators
        .iter()
        .filter_map(|source| match source {
            GeneratorSource::Builtin(name) => Some(name.as_str()),
            _ => None,
        })
        .collect();
    let clashes = clashes(
        &runs
            .iter()
            .map(|(source, run, _)| Claimant {
                source,
                name: &run.meta.name,
                paths: run.outputs.iter().map(|o| o.path.as_str()).collect(),
            })
            .collect::<Vec<_>>(),
        &builtins,
    );
    for (i, (source, run, files)) in runs.into_iter().enumerate() {
        if let Some(why) = clashes.get(&i) {
            generation.failures.push((
                source.clone(),
                GeneratorError {
                    generator: source.to_string(),
                    kind: GeneratorErrorKind::Clash {
                        reason: why.clone(),
                    },
                },
            ));
            continue;
        }
        generation.runs.push(SourcedRun {
            source: source.clone(),
            run,
            files,
        });
    }
    // In seams.toml order, whatever step failed them.
    generation
        .failures
        .sort_by_key(|(source, _)| project.generators.iter().position(|g| g == source));
    generation
}

/// Runs one generator's work so that a panic in the host's handling of it
/// fails that generator only, with a message, instead of the process.
fn isolated<T>(
    source: &GeneratorSource,
    work: impl FnOnce() -> Result<T, GeneratorError>,
) -> Result<T, GeneratorError> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(work)).unwrap_or_else(|payload| {
        Err(GeneratorError {
            generator: source.to_string(),
            kind: GeneratorErrorKind::from_panic(&*payload),
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_components_that_ran_are_kept_to_be_freed_with_the_inputs() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join(crate::project::MANIFEST),
            "[model]\nfiles = [\"model.ttl\"]\n\n[[generator]]\nbuiltin = \"htmx\"\n\n\
             [[generator]]\nbuiltin = \"compose\"\n\n[[generator]]\nwasm = \"missing.wasm\"\n",
        )
        .unwrap();
        std::fs::write(dir.path().join("model.ttl"), "<urn:a> <urn:b> \"c\" .\n").unwrap();
        let project = Project::load(dir.path()).unwrap();
        let runtime = Runtime::new(Some(dir.path().join("cache"))).unwrap();
        let stamp = crate::inputs::read_stamp(&project, None, false).unwrap();
        let (inputs, components) = load_for_run(&project, &runtime, stamp).unwrap();
        let generation = run_reporting_progress(
            &project,
            &runtime,
            &inputs,
            components,
            &Silent,
            &Keep::Outputs,
        );
        // The two built-ins ran (whether they failed on this model or
        // not); the missing component never loaded.
        assert_eq!(generation.runs.len() + generation.failures.len(), 3);
        let mut kept: Vec<String> = inputs
            .ran
            .lock()
            .unwrap()
            .iter()
            .map(|component| component.label().to_owned())
            .collect();
        kept.sort();
        assert_eq!(kept, ["compose", "htmx"]);
        inputs.free_aside();
    }

    #[test]
    fn a_panic_in_one_generators_work_fails_that_generator_only() {
        let source = GeneratorSource::Builtin("htmx".into());
        let failed: Result<(), _> =
            isolated(&source, || panic!("index out of bounds: the len is 3"));
        let error = failed.unwrap_err();
        assert_eq!(error.generator, "htmx");
        assert!(matches!(error.kind, GeneratorErrorKind::Internal(_)));
        let message = error.to_string();
        assert!(message.contains("a bug in seams"), "{message}");
        assert!(
            message.contains("index out of bounds: the len is 3"),
            "{message}"
        );
        assert!(
            message.contains("the other generators carried on"),
            "{message}"
        );
        let owned: Result<(), _> =
            isolated(&source, || panic!("{}", String::from("owned message")));
        assert!(owned.unwrap_err().to_string().contains("owned message"));
    }
}
