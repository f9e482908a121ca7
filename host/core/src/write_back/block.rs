//! Structural write-back (ADR-0019's T5): a block of lines added to or
//! removed from a generated output becomes a model change, an element
//! copied from a sibling or an element removed, accepted only when
//! generating with it gives the edited output back exactly.

use std::path::PathBuf;
use std::sync::Arc;

use seams_model::written::{Unwritable, remove_element, subject_line};
use seams_model::{Edit, Model};
use seams_runtime::Runtime;

use super::{Effect, Now, WriteBackError, effects, generated, now, read_output, write_model};
use crate::error::GenerateError;
use crate::generation::{Generation, run_with_inputs};
use crate::inputs::{Inputs, read_stamp};
use crate::project::Project;

/// How many candidate elements a block's edit tries: each costs a
/// generation.
const CANDIDATES: usize = 8;

/// The model change that gives an added or removed block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BlockChange {
    /// A new element, a copy of `sibling` with the label `label`.
    Added {
        /// The element copied.
        sibling: String,
        /// The new element's IRI.
        element: String,
        /// Its label.
        label: String,
    },
    /// The element and every triple it occurs in, removed.
    Removed {
        /// The element.
        element: String,
    },
}

/// A block's write-back, planned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockPlan {
    /// The output, output-relative.
    pub output: String,
    /// The first line of the block (in the edited file when added, in the
    /// generated one when removed) and how many lines it has.
    pub lines: (usize, usize),
    /// The change.
    pub change: BlockChange,
    /// The model file it rewrites.
    pub model_file: PathBuf,
    /// That file's text with the change.
    pub patched_text: String,
    /// The file's lines that go and come, as `line_diff` shows them.
    pub diff: Vec<String>,
    /// Every line of another output the change alters.
    pub effects: Vec<Effect>,
}

impl BlockPlan {
    /// The plan as text: the change, the model file's new and removed
    /// lines, then the effects.
    pub fn to_text(&self, root: &std::path::Path) -> String {
        let shown = self
            .model_file
            .strip_prefix(root)
            .unwrap_or(&self.model_file)
            .display()
            .to_string();
        let (first, count) = self.lines;
        let mut out = match &self.change {
            BlockChange::Added {
                sibling,
                element,
                label,
            } => format!(
                "{}:{first}: {count} added line(s): a new element <{element}>, a copy of <{sibling}> labelled {label:?}\n",
                self.output
            ),
            BlockChange::Removed { element } => format!(
                "{}:{first}: {count} removed line(s): <{element}> removed\n",
                self.output
            ),
        };
        out.push_str(&format!("--- {shown}\n+++ {shown}\n"));
        for line in &self.diff {
            out.push_str(line);
            out.push('\n');
        }
        super::effects_text(&self.effects, &mut out);
        out
    }
}

/// The lines only one of `old` and `new` has, `-` or `+` first, in order
/// (the two texts share a prefix and a suffix).
pub fn line_diff(old: &str, new: &str) -> Vec<String> {
    let (a, b): (Vec<&str>, Vec<&str>) = (old.split('\n').collect(), new.split('\n').collect());
    let (prefix, suffix) = common_ends(&a, &b);
    let mut out = vec![format!("@@ line {} @@", prefix + 1)];
    out.extend(a[prefix..a.len() - suffix].iter().map(|l| format!("-{l}")));
    out.extend(b[prefix..b.len() - suffix].iter().map(|l| format!("+{l}")));
    out
}

/// How many lines `a` and `b` share at their start, and then at their end.
pub(super) fn common_ends(a: &[&str], b: &[&str]) -> (usize, usize) {
    let prefix = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let most = a.len().min(b.len()) - prefix;
    let suffix = a
        .iter()
        .rev()
        .zip(b.iter().rev())
        .take(most)
        .take_while(|(x, y)| x == y)
        .count();
    (prefix, suffix)
}

/// Plans writing back the block of lines added to or removed from
/// `output` (relative to the project or to its output directory). Reads,
/// writes nothing.
///
/// # Errors
///
/// [`WriteBackError`], saying why: lines changed as well as added or
/// removed, no element whose copy or removal gives the edit back, or a
/// model file that cannot take the change.
pub fn plan_block_write_back(
    project: &Project,
    runtime: &Runtime,
    output: &str,
) -> Result<BlockPlan, WriteBackError> {
    let edited = read_output(project, output)?;
    let now = now(project, runtime, output, &edited)?;
    plan_block(project, runtime, output, &edited, now)
}

/// [`plan_block_write_back`], from the project's generation now.
pub(super) fn plan_block(
    project: &Project,
    runtime: &Runtime,
    output: &str,
    edited: &str,
    now: Now,
) -> Result<BlockPlan, WriteBackError> {
    let Now {
        rel,
        lock,
        inputs,
        generation,
    } = now;
    let (text, traced) = generated(&generation, &rel).expect("`now` checked it");
    let (g, e): (Vec<&str>, Vec<&str>) = (text.split('\n').collect(), edited.split('\n').collect());
    let (prefix, suffix) = common_ends(&g, &e);
    let (removed, added) = (g.len() - suffix - prefix, e.len() - suffix - prefix);
    let terms_of = |line: usize| -> Vec<String> {
        traced
            .iter()
            .find(|(l, _)| *l == line)
            .map(|(_, t)| t.to_vec())
            .unwrap_or_default()
    };
    // How many lines of the output each term is traced on: the fewer, the
    // more local the element, and the likelier it is the block's own.
    let spread = |term: &str| {
        traced
            .iter()
            .filter(|(_, t)| t.iter().any(|x| x == term))
            .count()
    };
    let model = &inputs.model;
    let stamp = || read_stamp(project, Some(&lock), false);
    let run = |edits: &[Edit]| -> Result<(Generation, Arc<Model>), WriteBackError> {
        let changed = Arc::new(model.edited(edits).map_err(GenerateError::from)?);
        let inputs = Inputs::new(changed.clone(), stamp()?);
        Ok((run_with_inputs(project, runtime, &inputs), changed))
    };
    let gives_edit =
        |generation: &Generation| generated(generation, &rel).is_some_and(|(t, _)| t == edited);

    let (change, changed, after) = match (removed, added) {
        (0, 0) => return Err(WriteBackError::NotEdited(output.to_owned())),
        (_, 0) => {
            let mut candidates: Vec<String> = (prefix + 1..=prefix + removed)
                .flat_map(terms_of)
                .filter(|t| model.is_element(t))
                .collect();
            candidates.sort_by_key(|t| (spread(t), t.clone()));
            candidates.dedup();
            let mut found = None;
            for element in candidates.into_iter().take(CANDIDATES) {
                let (after, changed) = run(&[Edit::Remove {
                    iri: element.clone(),
                }])?;
                if gives_edit(&after) {
                    found = Some((BlockChange::Removed { element }, changed, after));
                    break;
                }
            }
            found.ok_or_else(|| WriteBackError::NoBlockChange {
                output: output.to_owned(),
                what: format!("removing lines {}-{}", prefix + 1, prefix + removed),
                tried: "removing each element the removed lines were printed from",
            })?
        }
        (0, _) => {
            // The elements of the nearest traced lines above and below
            // that a container holds several of: the block's siblings.
            let above = (1..=prefix).rev().find(|l| !terms_of(*l).is_empty());
            let below = (prefix + 1..=g.len()).find(|l| !terms_of(*l).is_empty());
            let mut candidates: Vec<String> = above
                .into_iter()
                .chain(below)
                .flat_map(terms_of)
                .filter(|t| model.is_element(t) && !model.containers(t).is_empty())
                .collect();
            candidates.sort_by_key(|t| (spread(t), t.clone()));
            candidates.dedup();
            let mut found = None;
            for sibling in candidates.into_iter().take(CANDIDATES) {
                let element = fresh_iri(model, &sibling);
                // A label no text holds, then solved for the one that
                // prints the added lines.
                let marker = "\u{2063}seams-label\u{2063}";
                let (trial, _) = run(&[Edit::Copy {
                    from: sibling.clone(),
                    to: element.clone(),
                    label: marker.to_owned(),
                }])?;
                let Some(label) =
                    generated(&trial, &rel).and_then(|(t, _)| solve_label(t, edited, marker))
                else {
                    continue;
                };
                let (after, changed) = run(&[Edit::Copy {
                    from: sibling.clone(),
                    to: element.clone(),
                    label: label.clone(),
                }])?;
                if gives_edit(&after) {
                    found = Some((
                        BlockChange::Added {
                            sibling,
                            element,
                            label,
                        },
                        changed,
                        after,
                    ));
                    break;
                }
            }
            found.ok_or_else(|| WriteBackError::NoBlockChange {
                output: output.to_owned(),
                what: format!("adding lines {}-{}", prefix + 1, prefix + added),
                tried: "copying each element of the nearest traced lines that sits in a list",
            })?
        }
        _ => {
            return Err(WriteBackError::BlockAndLines {
                output: output.to_owned(),
                from: prefix + 1,
            });
        }
    };
    let (model_file, patched_text, diff) = patch_file(project, &change, &changed)?;
    let effects = effects(&generation, &after, |o, _| o == rel);
    Ok(BlockPlan {
        output: rel,
        lines: (prefix + 1, removed.max(added)),
        change,
        model_file,
        patched_text,
        diff,
        effects,
    })
}

/// An IRI like `sibling` that the model does not use: `<sibling>_2`, ...
fn fresh_iri(model: &Model, sibling: &str) -> String {
    (2..)
        .map(|n| format!("{sibling}_{n}"))
        .find(|iri| !model.mentions(iri))
        .expect("some suffix is free")
}

/// The label that turns `trial` (generated with `marker` as the label)
/// into `edited`, if one does.
fn solve_label(trial: &str, edited: &str, marker: &str) -> Option<String> {
    let count = trial.matches(marker).count();
    let start = trial.find(marker)?;
    let grow = edited.len() as isize - trial.len() as isize;
    if grow % count as isize != 0 {
        return None;
    }
    let len = usize::try_from(marker.len() as isize + grow / count as isize).ok()?;
    let label = edited.get(start..start + len)?;
    (!label.contains('\n') && trial.replace(marker, label) == edited).then(|| label.to_owned())
}

/// The one model file the change is written in, and its patched text,
/// checked to parse to exactly the changed model.
fn patch_file(
    project: &Project,
    change: &BlockChange,
    changed: &Model,
) -> Result<(PathBuf, String, Vec<String>), WriteBackError> {
    let texts: Vec<(PathBuf, String)> = project
        .model_files
        .iter()
        .filter_map(|f| Some((f.clone(), std::fs::read_to_string(f).ok()?)))
        .collect();
    let unwritable = |file: &PathBuf, why: Unwritable| WriteBackError::Unwritable {
        file: file.clone(),
        why,
    };
    let (file, patched) = match change {
        BlockChange::Removed { element } => {
            let mut touched = Vec::new();
            for (file, text) in &texts {
                if let Some(patched) =
                    remove_element(text, element).map_err(|why| unwritable(file, why))?
                {
                    touched.push((file.clone(), patched));
                }
            }
            if touched.len() > 1 {
                return Err(WriteBackError::SeveralFiles(
                    touched.into_iter().map(|(f, _)| f).collect(),
                ));
            }
            touched
                .pop()
                .ok_or_else(|| WriteBackError::BlockUnwritable {
                    element: element.clone(),
                })?
        }
        BlockChange::Added {
            sibling, element, ..
        } => {
            let (file, text) = texts
                .iter()
                .find(|(_, text)| subject_line(text, sibling).is_some())
                .ok_or_else(|| WriteBackError::BlockUnwritable {
                    element: sibling.clone(),
                })?;
            let triples =
                changed
                    .ntriples_about(element)
                    .ok_or_else(|| WriteBackError::BlockUnwritable {
                        element: sibling.clone(),
                    })?;
            let mut patched = text.clone();
            if !patched.is_empty() && !patched.ends_with('\n') {
                patched.push('\n');
            }
            patched.push_str(&format!(
                "\n# Added by seams write-back: a copy of <{sibling}>.\n{triples}"
            ));
            (file.clone(), patched)
        }
    };
    let diff = texts
        .iter()
        .find(|(f, _)| *f == file)
        .map(|(_, old)| line_diff(old, &patched))
        .unwrap_or_default();
    // The text must say exactly the changed model: a parse of every file,
    // the patched one in its place, has the changed model's hash.
    let files: Vec<(PathBuf, Vec<u8>)> = texts
        .into_iter()
        .map(|(f, t)| {
            let bytes = if f == file { patched.clone() } else { t };
            (f, bytes.into_bytes())
        })
        .collect();
    let reparsed = Model::from_files(&files).map_err(GenerateError::from)?;
    if reparsed.hash() != changed.hash() {
        return Err(WriteBackError::BlockUnwritable {
            element: match change {
                BlockChange::Added { element, .. } | BlockChange::Removed { element } => {
                    element.clone()
                }
            },
        });
    }
    Ok((file, patched, diff))
}

/// Writes the plan's model file, atomically; nothing else. With effects,
/// only when `accept_effects`.
///
/// # Errors
///
/// Effects not accepted, or the file cannot be written.
pub fn apply_block_write_back(
    plan: &BlockPlan,
    accept_effects: bool,
) -> Result<(), WriteBackError> {
    if !plan.effects.is_empty() && !accept_effects {
        return Err(WriteBackError::Effects(plan.effects.len()));
    }
    write_model(&plan.model_file, plan.patched_text.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_label_that_prints_the_added_lines_is_solved_for() {
        let m = "\u{2063}M\u{2063}";
        let table: &[(&str, &str, Option<&str>)] = &[
            (
                "<h1>M</h1>\n<p>M</p>",
                "<h1>Tea</h1>\n<p>Tea</p>",
                Some("Tea"),
            ),
            ("a M b", "a  b", Some("")),
            ("a M b M", "a X b Y", None),
            ("a M b", "a X\nY b", None),
            ("no marker", "no marker", None),
        ];
        for (trial, edited, label) in table {
            let trial = trial.replace('M', m);
            assert_eq!(
                solve_label(&trial, edited, m).as_deref(),
                *label,
                "{trial:?}"
            );
        }
    }

    #[test]
    fn a_diff_shows_the_lines_between_the_shared_ends() {
        assert_eq!(
            line_diff("a\nb\nc\n", "a\nb\nx\ny\nc\n"),
            ["@@ line 3 @@", "+x", "+y"]
        );
        assert_eq!(line_diff("a\nb\nc", "a\nc"), ["@@ line 2 @@", "-b"]);
        assert_eq!(common_ends(&["a", "a"], &["a"]), (1, 0));
    }
}
