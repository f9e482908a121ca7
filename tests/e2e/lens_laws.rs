//! The lens laws of write-back (ADR-0019's T4), over every line of every
//! output of both examples.
//!
//! - GetPut: an unedited output proposes nothing, and generating again
//!   writes nothing.
//! - PutGet: each traced line that prints the label of one of its model
//!   elements is edited to print a fresh string instead; when write-back
//!   accepts the edit, applying it (the model and the outputs in one run)
//!   gives back exactly the edited line, `seams check` is clean, and the
//!   model changed only by the patch the plan showed.
//!
//! The expected result of every such line (accepted, accepted with
//! effects, or the refusal and why) is the snapshot `lens_laws@<example>`.

use std::collections::BTreeMap;
use std::path::Path;

use seams_core::{
    GenerateOptions, Planned, Project, Wait, WriteBackError, check, generate, plan_line_edit,
    plan_target,
};
use seams_model::Model;
use seams_runtime::Runtime;
use seams_templates::Trace;
use seams_tests::{example_project, seams_in};

/// Every file under `dir`, by relative path.
fn files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(at) = stack.pop() {
        for entry in std::fs::read_dir(&at).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                let rel = path
                    .strip_prefix(dir)
                    .unwrap()
                    .to_string_lossy()
                    .into_owned();
                out.insert(rel, std::fs::read(&path).unwrap());
            }
        }
    }
    out
}

fn options() -> GenerateOptions<'static> {
    GenerateOptions {
        wait: Wait::Block,
        ..GenerateOptions::default()
    }
}

/// One line of the snapshot per edited line.
fn lens_laws(example: &str) -> Vec<String> {
    let p = example_project(example);
    assert_eq!(seams_in(p.path(), &["generate"]).code, 0);
    let project = Project::load(p.path()).unwrap();
    // A component cache, so that each of the many generations below does
    // not compile the built-ins again.
    let cache = tempfile::tempdir().unwrap();
    let runtime = Runtime::new(Some(cache.path().to_owned())).unwrap();
    let model = Model::load(&project.model_files).unwrap();
    let model_file = p.path().join("model.ttl");
    let pristine = std::fs::read_to_string(&model_file).unwrap();
    let out_dir = project.output_path();

    let mut outputs: Vec<String> = files(&out_dir)
        .into_keys()
        .filter(|f| !f.ends_with(".trace.json"))
        .collect();
    outputs.sort();

    // GetPut.
    for output in &outputs {
        match plan_target(&project, &runtime, output, None) {
            Err(WriteBackError::NotEdited(_)) => {}
            other => panic!("{example}/{output}: an unedited output proposed {other:?}"),
        }
    }
    assert!(
        generate(&project, &runtime, &options())
            .unwrap()
            .written
            .is_empty()
    );

    // PutGet.
    let mut rows = Vec::new();
    let mut fresh = 0;
    for output in &outputs {
        let Ok(sidecar) = std::fs::read_to_string(out_dir.join(format!("{output}.trace.json")))
        else {
            continue;
        };
        let trace: Trace = serde_json::from_str(&sidecar).unwrap();
        let text = std::fs::read_to_string(out_dir.join(output)).unwrap();
        let lines: Vec<&str> = text.split('\n').collect();
        for traced in &trace.lines {
            let line = lines[traced.line - 1];
            // The longest label of the line's elements that it prints.
            let Some(label) = traced
                .terms
                .iter()
                .filter_map(|iri| model.label(iri))
                .filter(|label| !label.is_empty() && line.contains(*label))
                .max_by_key(|label| label.len())
            else {
                continue;
            };
            fresh += 1;
            let edited = line.replacen(label, &format!("Fresh{fresh}"), 1);
            let at = format!("{output}:{}", traced.line);
            let plan = match plan_line_edit(&project, &runtime, output, traced.line, &edited) {
                Ok(plan) => plan,
                Err(refusal) => {
                    let why = refusal.to_string();
                    let why = why.split_once(": ").map_or(why.as_str(), |(_, w)| w);
                    rows.push(format!("{at} {label:?}: refused: {why}"));
                    continue;
                }
            };
            let planned = Planned::Line(plan);
            planned
                .apply_and_generate(
                    &project,
                    &runtime,
                    seams_core::Consent {
                        effects: true,
                        structure: false,
                    },
                )
                .unwrap_or_else(|e| panic!("{at}: {e}"));
            let Planned::Line(plan) = planned else {
                unreachable!()
            };
            assert_eq!(
                std::fs::read_to_string(&model_file).unwrap(),
                plan.patched_text,
                "{at}"
            );
            let now = std::fs::read_to_string(out_dir.join(output)).unwrap();
            assert_eq!(
                now.split('\n').nth(traced.line - 1),
                Some(edited.as_str()),
                "{at}"
            );
            let report = check(&project, &runtime).unwrap();
            assert!(report.clean, "{at}: {}", report.to_text());
            rows.push(match plan.effects.len() {
                0 => format!("{at} {label:?}: accepted"),
                n => format!("{at} {label:?}: accepted with {n} effect(s)"),
            });
            // Back to the example for the next line.
            std::fs::write(&model_file, &pristine).unwrap();
            generate(&project, &runtime, &options()).unwrap();
        }
    }
    let accepted = rows.iter().filter(|r| r.contains(": accepted")).count();
    rows.push(format!(
        "{accepted} of {} label edits accepted (PutGet holds for each)",
        rows.len()
    ));
    rows
}

#[test]
fn write_back_keeps_the_lens_laws_on_every_labelled_line_of_the_examples() {
    for example in seams_tests::EXAMPLES {
        let rows = lens_laws(example);
        insta::assert_snapshot!(format!("lens_laws@{example}"), rows.join("\n"));
    }
}
