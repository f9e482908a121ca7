//! `seams write-back OUTPUT[:LINE]` (ADR-0019's T4): a hand edit of one
//! output line, written back into the model as the one literal change that
//! explains it. The line's trace names the elements it prints; among their
//! values, exactly one must cover the change ([`explain`]). The model is
//! then patched in memory and everything generated again: the patch is
//! accepted only when the edited line comes back exactly as edited
//! (PutGet), and every other line that changes, in any output, is an
//! effect. The patch is a minimal textual change of the one model file
//! that writes the literal ([`seams_model::written::rewrite`]); applying it
//! writes that file alone, and a generate afterwards records the output as
//! generated again.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use seams_model::written::{Unwritable, rewrite};
use seams_model::{Edit, sha256_hex};
use seams_runtime::Runtime;

mod block;
mod diff;

pub use block::{BlockChange, BlockPlan};

use crate::error::GenerateError;
use crate::generate::{GenerateOptions, GenerateReport, generate_with_edit};
use crate::generation::{Generation, run_with_inputs};
use crate::inputs::{Inputs, read_lock, read_stamp};
use crate::journal::ModelEdit;
use crate::project::{Project, posix};
use crate::project_lock::Wait;
use crate::trace_view::parse_target;

/// Why an edit cannot be written back. Nothing is written then.
#[derive(Debug, thiserror::Error)]
pub enum WriteBackError {
    /// The project, lock, model or generators could not be read.
    #[error(transparent)]
    Generate(#[from] GenerateError),
    /// No such output.
    #[error("no such output: {0} does not exist under the output directory")]
    NoOutput(String),
    /// The lock does not list it.
    #[error(
        "{0} is not in seams.lock: run `seams generate` first; only generated files can be written back"
    )]
    NotGenerated(String),
    /// The file is as generated.
    #[error("{0} is as seams.lock records it: there is no hand edit to write back")]
    NotEdited(String),
    /// Its generator failed now.
    #[error(
        "{output}: its generator fails on the current model, so the edit cannot be compared: {message}"
    )]
    GeneratorFailed {
        /// The output.
        output: String,
        /// Why.
        message: String,
    },
    /// Lines were added or removed.
    #[error(
        "{output}: the edit adds or removes lines ({generated} generated, {edited} now), so no one line can be written back; leave out :LINE to write back the added or removed block"
    )]
    LinesChanged {
        /// The output.
        output: String,
        /// Lines generated.
        generated: usize,
        /// Lines now.
        edited: usize,
    },
    /// Which line is meant is not clear.
    #[error(
        "{output}: {count} lines differ from what is generated ({lines}); name one as {output}:LINE"
    )]
    WhichLine {
        /// The output.
        output: String,
        /// How many differ.
        count: usize,
        /// Their numbers.
        lines: String,
    },
    /// The line named is not edited, or not traced.
    #[error("{output}:{line}: {why}")]
    Line {
        /// The output.
        output: String,
        /// The line.
        line: usize,
        /// Why.
        why: String,
    },
    /// No single literal explains the edit.
    #[error("{output}:{line}: {why}")]
    Unexplained {
        /// The output.
        output: String,
        /// The line.
        line: usize,
        /// Why.
        why: Unexplained,
    },
    /// The patch does not give the edited line back.
    #[error("{at}: with <{}> <{}> set to {:?} the line reads {got:?}, not the edit; edit the model by hand", patch.element, patch.property, patch.new)]
    NotReproduced {
        /// `OUTPUT:LINE`.
        at: String,
        /// The patch tried.
        patch: Box<Patch>,
        /// What the line read.
        got: String,
    },
    /// The literal is not written exactly once in the model files.
    #[error("{}: {why}", file.display())]
    Unwritable {
        /// The model file looked in (the first, when none writes it).
        file: PathBuf,
        /// Why.
        why: Unwritable,
    },
    /// Several model files write the literal.
    #[error("{} model files write this value ({}); change it by hand", .0.len(), .0.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", "))]
    SeveralFiles(Vec<PathBuf>),
    /// Other files hold hand edits that the generate after the patch
    /// would refuse to overwrite: refused before the model is written.
    #[error(
        "{} hold(s) hand edits, which the generate after writing back would refuse to overwrite; nothing was written: move those edits elsewhere (or regenerate them), then write back again",
        .0.join(", ")
    )]
    EditedElsewhere(Vec<String>),
    /// The patch changes other lines of the edited output, which has other
    /// hand edits too.
    #[error(
        "{0} has other hand edits, and the patch changes lines of it too: write back one line at a time, or move the other edits elsewhere"
    )]
    OtherEdits(String),
    /// No copy or removal of an element gives the added or removed block.
    #[error(
        "{output}: {what}: no single model change gives this edit back (tried {tried}); change the model by hand{}",
        refused.iter().map(|why| format!("\n  refused by a generator: {why}")).collect::<String>()
    )]
    NoBlockChange {
        /// The output.
        output: String,
        /// The block, e.g. `adding lines 30-33`.
        what: String,
        /// What was tried.
        tried: &'static str,
        /// Each change tried that a generator refused, with what it said.
        refused: Vec<String>,
    },
    /// The block's model change cannot be written as a minimal change of
    /// one model file.
    #[error(
        "<{element}> cannot be written back as a change of one model file (it is written with blank nodes or collections, or nowhere); change the model by hand"
    )]
    BlockUnwritable {
        /// The element.
        element: String,
    },
    /// `--choose` names no change that gives the edit back.
    #[error(
        "{output}: --choose {choice}, but {count} model change(s) give this edit back; choose a number from 1 to {count}"
    )]
    Choice {
        /// The output (with its line, for a line's edit).
        output: String,
        /// The number chosen.
        choice: usize,
        /// How many there are.
        count: usize,
    },
    /// Applying a change that creates or removes a whole page, entity or
    /// form needs its own consent.
    #[error("{0}; to apply it, pass --accept-structure")]
    Sweeping(String),
    /// Applying needs the effects accepted.
    #[error(
        "the patch also changes {0} other line(s) (listed above); pass --accept-effects to apply it anyway"
    )]
    Effects(usize),
    /// The model file could not be written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
}

/// A line of another output, or of the same one, that the patch changes.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Effect {
    /// The output, output-relative.
    pub output: String,
    /// Its 1-based line: in the output with the patch, or, for a line
    /// that goes, as generated now.
    pub line: usize,
    /// The line as generated now; `None` for a line (or a file) the patch
    /// adds.
    pub old: Option<String>,
    /// The line with the patch; `None` for a line (or a file) it removes.
    pub new: Option<String>,
}

/// A write-back, planned: what it changes and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WriteBackPlan {
    /// The output, output-relative.
    pub output: String,
    /// The edited line.
    pub line: usize,
    /// The one literal change.
    pub patch: Patch,
    /// The model file it rewrites.
    pub model_file: PathBuf,
    /// That file's text with the patch.
    pub patched_text: String,
    /// The file's lines that change: (1-based line, old, new).
    pub diff: Vec<(usize, String, String)>,
    /// Every other line the patch changes.
    pub effects: Vec<Effect>,
    /// The output's text with the patch, when it differs from the file
    /// on disk (an effect on the edited output itself), and whether the
    /// file differs from what was generated in the edited line alone, so
    /// that writing it loses nothing of the user's.
    pub output_after: Option<(String, bool)>,
    /// The output directory.
    pub out_dir: PathBuf,
}

impl WriteBackPlan {
    /// The plan as text: the patch as a diff of the model file, then the
    /// effects.
    pub fn to_text(&self, root: &Path) -> String {
        let shown = self
            .model_file
            .strip_prefix(root)
            .unwrap_or(&self.model_file);
        let mut out = format!(
            "{}:{}: <{}> <{}> {:?} becomes {:?}\n--- {}\n+++ {}\n",
            self.output,
            self.line,
            self.patch.element,
            self.patch.property,
            self.patch.old,
            self.patch.new,
            shown.display(),
            shown.display()
        );
        for (line, old, new) in &self.diff {
            out.push_str(&format!("@@ line {line} @@\n-{old}\n+{new}\n"));
        }
        effects_text(&self.effects, &mut out);
        out
    }
}

/// `effects` as the plans' text shows them.
fn effects_text(effects: &[Effect], out: &mut String) {
    if effects.is_empty() {
        out.push_str("effects: none; no other line changes\n");
        return;
    }
    out.push_str(&format!(
        "effects: {} other line(s) change:\n",
        effects.len()
    ));
    // A file the patch writes anew or deletes is one line here.
    let mut at = 0;
    while at < effects.len() {
        let output = &effects[at].output;
        let run = effects[at..]
            .iter()
            .take_while(|e| e.output == *output)
            .count();
        let file = &effects[at..at + run];
        let whole = |side: fn(&Effect) -> bool| {
            file.iter().all(side) && file.iter().enumerate().all(|(i, e)| e.line == i + 1)
        };
        if whole(|e| e.old.is_none()) {
            out.push_str(&format!("  {output}: a new file of {run} line(s)\n"));
        } else if whole(|e| e.new.is_none()) {
            out.push_str(&format!("  {output}: deleted ({run} line(s))\n"));
        } else {
            for e in file {
                out.push_str(&format!("  {}:{}\n", e.output, e.line));
                if let Some(old) = &e.old {
                    out.push_str(&format!("  -{old}\n"));
                }
                if let Some(new) = &e.new {
                    out.push_str(&format!("  +{new}\n"));
                }
            }
        }
        at += run;
    }
}

/// An output's generated text, and each traced line's terms.
type Generated<'a> = (&'a str, Vec<(usize, &'a [String])>);

/// The generated text and the trace terms of each line of `output` in
/// `generation`.
fn generated<'a>(generation: &'a Generation, output: &str) -> Option<Generated<'a>> {
    generation.runs.iter().find_map(|run| {
        let o = run.run.outputs.iter().find(|o| o.path == output)?;
        let terms = o
            .trace
            .iter()
            .flatten()
            .map(|l| (l.line, l.terms.as_slice()))
            .collect();
        Some((o.text.as_str(), terms))
    })
}

/// What `seams write-back OUTPUT[:LINE]` plans: a line's write-back, or,
/// when no line is named and the edit adds or removes lines, a block's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Planned {
    /// One line, one literal.
    Line(WriteBackPlan),
    /// A block added or removed.
    Block(BlockPlan),
}

impl Planned {
    /// The plan as text.
    pub fn to_text(&self, root: &Path) -> String {
        match self {
            Planned::Line(plan) => plan.to_text(root),
            Planned::Block(plan) => plan.to_text(root),
        }
    }

    /// Every line of another output it changes.
    pub fn effects(&self) -> &[Effect] {
        match self {
            Planned::Line(plan) => &plan.effects,
            Planned::Block(plan) => &plan.effects,
        }
    }

    /// When it creates or removes a whole page, entity or form, that in
    /// words ([`Consent::structure`] applies it).
    pub fn sweeping(&self) -> Option<&str> {
        match self {
            Planned::Line(_) => None,
            Planned::Block(plan) => plan.sweeping.as_deref(),
        }
    }

    /// The model file it rewrites.
    pub fn model_file(&self) -> &Path {
        match self {
            Planned::Line(plan) => &plan.model_file,
            Planned::Block(plan) => &plan.model_file,
        }
    }

    /// The edited output, output-relative.
    fn output(&self) -> &str {
        match self {
            Planned::Line(plan) => &plan.output,
            Planned::Block(plan) => &plan.output,
        }
    }

    /// The model file's new text.
    fn patched_text(&self) -> &str {
        match self {
            Planned::Line(plan) => &plan.patched_text,
            Planned::Block(plan) => &plan.patched_text,
        }
    }

    /// Refuses what the user has not accepted: effects on other lines
    /// without `accept_effects`, or a line's patch over an output with
    /// other hand edits.
    fn permitted(&self, consent: Consent) -> Result<(), WriteBackError> {
        if let Planned::Block(BlockPlan {
            sweeping: Some(sweeping),
            ..
        }) = self
            && !consent.structure
        {
            return Err(WriteBackError::Sweeping(sweeping.clone()));
        }
        let accept_effects = consent.effects;
        let effects = self.effects();
        if !effects.is_empty() && !accept_effects {
            return Err(WriteBackError::Effects(effects.len()));
        }
        if let Planned::Line(WriteBackPlan {
            output,
            output_after: Some((_, false)),
            ..
        }) = self
        {
            return Err(WriteBackError::OtherEdits(output.clone()));
        }
        Ok(())
    }

    /// Writes the plan and generates, all or nothing: the outputs are
    /// generated from the patched model first, and the model file is
    /// written with them in one run (one journal: a run interrupted at
    /// any step is finished by the next generate), or nothing is written
    /// and the error says why (another output's hand edit, a generator
    /// that fails on the patched model).
    ///
    /// # Errors
    ///
    /// Effects not accepted, other hand edits in the edited output,
    /// [`WriteBackError::EditedElsewhere`], what `seams generate` refuses, [`GenerateError::FailedOnEdit`]; the model
    /// and outputs are then as they were.
    pub fn apply_and_generate(
        &self,
        project: &Project,
        runtime: &Runtime,
        consent: Consent,
    ) -> Result<GenerateReport, WriteBackError> {
        self.permitted(consent)?;
        let model_file = self.model_file();
        let edit = ModelEdit {
            path: posix(model_file.strip_prefix(&project.root).unwrap_or(model_file)),
            text: self.patched_text().to_owned(),
            output: self.output().to_owned(),
        };
        let options = GenerateOptions {
            wait: Wait::Block,
            ..GenerateOptions::default()
        };
        generate_with_edit(project, runtime, &options, &edit).map_err(|e| match e {
            GenerateError::HandEdited { overwrite, delete } => {
                WriteBackError::EditedElsewhere(overwrite.into_iter().chain(delete).collect())
            }
            e => e.into(),
        })
    }
}

/// What the user accepted beyond the edited lines.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Consent {
    /// The other lines the change alters (`--accept-effects`).
    pub effects: bool,
    /// A page, entity or form created or removed (`--accept-structure`).
    pub structure: bool,
}

/// Plans writing back the edit of `target` (`OUTPUT[:LINE]`): a line's, or
/// a block's when no line is named and lines were added or removed, or
/// several changed; one generation in memory decides which. Reads, writes
/// nothing.
///
/// # Errors
///
/// [`WriteBackError`], saying why.
pub fn plan_target(
    project: &Project,
    runtime: &Runtime,
    target: &str,
    choice: Option<usize>,
) -> Result<Planned, WriteBackError> {
    let (output, line) = parse_target(target);
    let on_disk = read_output(project, output)?;
    let now = now(project, runtime, output, &on_disk)?;
    let text = &now.text;
    // A block: lines added or removed, or several lines changed.
    let block = text.split('\n').count() != on_disk.split('\n').count()
        || text
            .split('\n')
            .zip(on_disk.split('\n'))
            .filter(|(a, b)| a != b)
            .nth(1)
            .is_some();
    if line.is_none() && block {
        block::plan_block(project, runtime, output, &on_disk, now, choice).map(Planned::Block)
    } else {
        plan_line(project, runtime, output, line, &on_disk, now, choice).map(Planned::Line)
    }
}

/// Plans writing back `text` as the new text of line `line` of `output`,
/// an edit made elsewhere than in the file (the viewer's form): as
/// [`plan_target`] on the output with that line replaced. Reads, writes
/// nothing.
///
/// # Errors
///
/// [`WriteBackError`], saying why; a text with a line break, or a line
/// the file does not have, is a [`WriteBackError::Line`].
pub fn plan_line_edit(
    project: &Project,
    runtime: &Runtime,
    output: &str,
    line: usize,
    text: &str,
) -> Result<WriteBackPlan, WriteBackError> {
    let on_disk = read_output(project, output)?;
    let line_error = |why: &str| WriteBackError::Line {
        output: output.to_owned(),
        line,
        why: why.to_owned(),
    };
    if text.contains(['\n', '\r']) {
        return Err(line_error(
            "the new text holds a line break; write-back takes edits within one line",
        ));
    }
    let mut lines: Vec<&str> = on_disk.split('\n').collect();
    match line.checked_sub(1).and_then(|i| lines.get_mut(i)) {
        Some(slot) => *slot = text,
        None => return Err(line_error("the file has no such line")),
    }
    plan_edited(project, runtime, output, Some(line), &lines.join("\n"))
}

fn read_output(project: &Project, output: &str) -> Result<String, WriteBackError> {
    let rel = project.output_relative(output);
    crate::OutputDir::open_existing(&project.output_path())
        .ok()
        .flatten()
        .and_then(|dir| {
            dir.read_regular(&rel, project.limits.max_output_bytes as u64)
                .ok()
        })
        .and_then(|bytes| String::from_utf8(bytes).ok())
        .ok_or_else(|| WriteBackError::NoOutput(output.to_owned()))
}

/// An edited output's generation now.
struct Now {
    /// Output-relative.
    rel: String,
    lock: crate::Lock,
    inputs: Inputs,
    generation: Generation,
    /// The output as generated now (found in `generation` when it was
    /// made, so every use has it).
    text: String,
    /// Each traced line of it, with the terms behind it.
    traced: Vec<(usize, Vec<String>)>,
}

/// Checks that `output` is generated and edited (`on_disk` differs from
/// the lock), and generates the project in memory.
fn now(
    project: &Project,
    runtime: &Runtime,
    output: &str,
    on_disk: &str,
) -> Result<Now, WriteBackError> {
    let rel = project.output_relative(output);
    let lock =
        read_lock(project)?.ok_or_else(|| WriteBackError::NotGenerated(output.to_owned()))?;
    let locked_path = format!("{}/{rel}", posix(&project.output_dir));
    let locked = lock
        .outputs
        .iter()
        .find(|o| o.path == locked_path)
        .ok_or_else(|| WriteBackError::NotGenerated(output.to_owned()))?;
    if sha256_hex(on_disk.as_bytes()) == locked.sha256 {
        return Err(WriteBackError::NotEdited(output.to_owned()));
    }
    let inputs = read_stamp(project, Some(&lock), false)?
        .load_model_listing(project, seams_model::ui_shapes::list_properties())?;
    let generation = run_with_inputs(project, runtime, &inputs);
    let Some((text, traced)) = generated(&generation, &rel).map(|(t, traced)| {
        (
            t.to_owned(),
            traced.into_iter().map(|(l, t)| (l, t.to_vec())).collect(),
        )
    }) else {
        let message = generation
            .failures
            .iter()
            .map(|(_, e)| e.to_string())
            .collect::<Vec<_>>()
            .join("; ");
        return Err(WriteBackError::GeneratorFailed {
            output: output.to_owned(),
            message: if message.is_empty() {
                "it no longer writes this file".into()
            } else {
                message
            },
        });
    };
    Ok(Now {
        rel,
        lock,
        inputs,
        generation,
        text,
        traced,
    })
}

/// Plans writing back `on_disk`, the edited text of `output`.
fn plan_edited(
    project: &Project,
    runtime: &Runtime,
    output: &str,
    line: Option<usize>,
    on_disk: &str,
) -> Result<WriteBackPlan, WriteBackError> {
    let now = now(project, runtime, output, on_disk)?;
    plan_line(project, runtime, output, line, on_disk, now, None)
}

/// [`plan_edited`], from the project's generation now.
fn plan_line(
    project: &Project,
    runtime: &Runtime,
    output: &str,
    line: Option<usize>,
    on_disk: &str,
    now: Now,
    choice: Option<usize>,
) -> Result<WriteBackPlan, WriteBackError> {
    let Now {
        rel,
        lock,
        inputs,
        generation: now,
        text,
        traced: terms,
    } = now;
    let generated_lines: Vec<&str> = text.split('\n').collect();
    let edited_lines: Vec<&str> = on_disk.split('\n').collect();
    if generated_lines.len() != edited_lines.len() {
        return Err(WriteBackError::LinesChanged {
            output: output.to_owned(),
            generated: generated_lines.len(),
            edited: edited_lines.len(),
        });
    }
    let differing: Vec<usize> = (0..generated_lines.len())
        .filter(|&i| generated_lines[i] != edited_lines[i])
        .map(|i| i + 1)
        .collect();
    let n = match (line, differing.as_slice()) {
        (Some(n), _) => n,
        (None, [one]) => *one,
        (None, several) => {
            return Err(WriteBackError::WhichLine {
                output: output.to_owned(),
                count: several.len(),
                lines: several
                    .iter()
                    .map(usize::to_string)
                    .collect::<Vec<_>>()
                    .join(", "),
            });
        }
    };
    let line_error = |why: &str| WriteBackError::Line {
        output: output.to_owned(),
        line: n,
        why: why.to_owned(),
    };
    if n == 0 || n > generated_lines.len() {
        return Err(line_error("the file has no such line"));
    }
    if !differing.contains(&n) {
        return Err(line_error(
            "this line is as generated; nothing to write back",
        ));
    }
    let line_terms: &[String] = terms
        .iter()
        .find(|(l, _)| *l == n)
        .map(|(_, t)| t.as_slice())
        .ok_or_else(|| {
            line_error("the generated line is not traced, so no model element is known to print it")
        })?;
    let candidates: Vec<Literal> = inputs
        .model
        .literal_values()
        .into_iter()
        .filter(|(element, _, _)| line_terms.contains(element))
        .collect();
    let (old_line, edited) = (generated_lines[n - 1], edited_lines[n - 1]);
    let unexplained = |why| WriteBackError::Unexplained {
        output: output.to_owned(),
        line: n,
        why,
    };
    let patches = explanations(old_line, edited, &candidates).map_err(unexplained)?;

    // PutGet: the patched model prints the edit. Where several values
    // explain the text, only those that give it back are offered.
    let stamp = || read_stamp(project, Some(&lock), false);
    let put_get = |patch: &Patch| -> Result<(Generation, String), WriteBackError> {
        let patched = inputs
            .model
            .edited(&[Edit::SetValue {
                iri: patch.element.clone(),
                property: patch.property.clone(),
                value: patch.new.clone(),
            }])
            .map_err(GenerateError::from)?;
        let again = run_with_inputs(project, runtime, &Inputs::new(Arc::new(patched), stamp()?));
        let new_text = generated(&again, &rel).map(|(t, _)| t).unwrap_or_default();
        let got = new_text
            .split('\n')
            .nth(n - 1)
            .unwrap_or_default()
            .to_owned();
        Ok((again, got))
    };
    // A generation is kept only for a value that gives the line back: a
    // large project's is hundreds of MB.
    let mut tried = Vec::new();
    for patch in patches {
        let (again, got) = put_get(&patch)?;
        tried.push((patch, (got == edited).then_some(again), got));
    }
    let giving: Vec<usize> = (0..tried.len()).filter(|&i| tried[i].2 == edited).collect();
    let at = match (choice, giving.as_slice()) {
        (None, []) => {
            let (patch, _, got) = tried.swap_remove(0);
            return Err(WriteBackError::NotReproduced {
                at: format!("{output}:{n}"),
                patch: Box::new(patch),
                got,
            });
        }
        (None, [one]) => *one,
        (None, several) => {
            return Err(unexplained(Unexplained::Several(
                several
                    .iter()
                    .map(|&i| {
                        let p = &tried[i].0;
                        (p.element.clone(), p.property.clone(), p.old.clone())
                    })
                    .collect(),
            )));
        }
        (Some(chosen), giving) => match chosen.checked_sub(1).and_then(|i| giving.get(i)) {
            Some(&i) => i,
            None => {
                return Err(WriteBackError::Choice {
                    output: format!("{output}:{n}"),
                    choice: chosen,
                    count: giving.len(),
                });
            }
        },
    };
    let (patch, again, got) = tried.swap_remove(at);
    let Some(again) = again else {
        return Err(WriteBackError::NotReproduced {
            at: format!("{output}:{n}"),
            patch: Box::new(patch),
            got,
        });
    };
    let new_text = generated(&again, &rel).map(|(t, _)| t).unwrap_or_default();
    let effects = effects(&now, &again, |o, l| o == rel && l == n);
    let output_after =
        (new_text != on_disk).then(|| (new_text.to_owned(), differing.as_slice() == [n]));

    // The one model file that writes the literal, once.
    let mut found: Option<(PathBuf, String, String)> = None;
    let mut several = Vec::new();
    for file in &project.model_files {
        let Some(text) = model_text(file) else {
            continue;
        };
        match rewrite(
            &text,
            &patch.element,
            &patch.property,
            &patch.old,
            &patch.new,
        ) {
            Ok(patched) => {
                if found.is_some() {
                    several.push(file.clone());
                }
                found.get_or_insert((file.clone(), text, patched));
            }
            Err(Unwritable::Missing { .. }) => {}
            Err(why) => {
                return Err(WriteBackError::Unwritable {
                    file: file.clone(),
                    why,
                });
            }
        }
    }
    let Some((model_file, text, patched_text)) = found else {
        return Err(WriteBackError::Unwritable {
            file: project.model_files.first().cloned().unwrap_or_default(),
            why: Unwritable::Missing {
                subject: patch.element,
                predicate: patch.property,
            },
        });
    };
    if !several.is_empty() {
        several.insert(0, model_file);
        return Err(WriteBackError::SeveralFiles(several));
    }
    let diff = text
        .split('\n')
        .zip(patched_text.split('\n'))
        .enumerate()
        .filter(|(_, (a, b))| a != b)
        .map(|(i, (a, b))| (i + 1, a.to_owned(), b.to_owned()))
        .collect();
    Ok(WriteBackPlan {
        output: rel,
        line: n,
        patch,
        model_file,
        patched_text,
        diff,
        effects,
        output_after,
        out_dir: project.output_path(),
    })
}

/// Every line of every output that differs between `before` and `after`,
/// but those `edited(output, line)` holds for.
fn effects<'a>(
    before: &'a Generation,
    after: &'a Generation,
    edited: impl Fn(&str, usize) -> bool,
) -> Vec<Effect> {
    // Every output of either generation, once, in order.
    let paths: std::collections::BTreeSet<&str> = [before, after]
        .iter()
        .flat_map(|g| g.runs.iter().flat_map(|r| r.run.outputs.iter()))
        .map(|o| o.path.as_str())
        .collect();
    let mut out = Vec::new();
    for path in paths {
        let text_of = |g| generated(g, path).map(|(t, _)| t);
        let hunks = match (text_of(before), text_of(after)) {
            (Some(old), Some(new)) => diff::hunks(old, new),
            // A file written or deleted: every line of it.
            (old, new) => {
                let lines =
                    |t: Option<&'a str>| t.map(|t| t.split('\n').collect()).unwrap_or_default();
                vec![diff::Hunk {
                    old_line: 1,
                    new_line: 1,
                    old: lines(old),
                    new: lines(new),
                }]
            }
        };
        for diff::Hunk {
            old_line,
            new_line,
            old,
            new,
        } in hunks
        {
            // A line changed is one effect; a line added or removed is one
            // too, its other side `None`.
            for i in 0..old.len().max(new.len()) {
                let line = if i < new.len() {
                    new_line + i
                } else {
                    old_line + i
                };
                if !edited(path, line) {
                    out.push(Effect {
                        output: path.to_owned(),
                        line,
                        old: old.get(i).map(|l| (*l).to_owned()),
                        new: new.get(i).map(|l| (*l).to_owned()),
                    });
                }
            }
        }
    }
    out
}

/// A literal of the model: (element, property, value).
pub type Literal = (String, String, String);

/// The one change of the model that explains an edit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Patch {
    /// The element.
    pub element: String,
    /// The property.
    pub property: String,
    /// Its value now.
    pub old: String,
    /// The value that would print the edited line.
    pub new: String,
}

/// Why no single literal explains an edit.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Unexplained {
    /// The line was not changed.
    #[error("the line is as generated: there is nothing to write back")]
    Unchanged,
    /// No value printed on the line covers the change.
    #[error(
        "no model value printed on this line covers the change: edit the model, or the template, by hand"
    )]
    Nothing,
    /// Several values would give the edit back.
    #[error("several model values would give the edit back: {}; pass --choose N to write back the one you mean (its number), or edit it in the model", numbered(.0))]
    Several(Vec<Literal>),
    /// The change covers parts of several values.
    #[error("the edit spans several model values ({}): change one at a time", list(.0))]
    SpansSeveral(Vec<Literal>),
}

fn numbered(literals: &[Literal]) -> String {
    literals
        .iter()
        .enumerate()
        .map(|(i, (e, p, v))| format!("{}. <{e}> <{p}> {v:?}", i + 1))
        .collect::<Vec<_>>()
        .join(", ")
}

fn list(literals: &[Literal]) -> String {
    literals
        .iter()
        .map(|(e, p, v)| format!("<{e}> <{p}> {v:?}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The one literal among `candidates` (the values of the elements the line
/// is traced to) whose new value turns `generated` into `edited`: what the
/// table test below asks of [`explanations`].
#[cfg(test)]
fn explain(generated: &str, edited: &str, candidates: &[Literal]) -> Result<Patch, Unexplained> {
    let mut patches = explanations(generated, edited, candidates)?;
    if patches.len() == 1 {
        return Ok(patches.remove(0));
    }
    Err(Unexplained::Several(
        patches
            .into_iter()
            .map(|p| (p.element, p.property, p.old))
            .collect(),
    ))
}

/// Every literal among `candidates` whose new value turns `generated`
/// into `edited` (one or more), in the candidates' order.
fn explanations(
    generated: &str,
    edited: &str,
    candidates: &[Literal],
) -> Result<Vec<Patch>, Unexplained> {
    if generated == edited {
        return Err(Unexplained::Unchanged);
    }
    let g: Vec<char> = generated.chars().collect();
    let e: Vec<char> = edited.chars().collect();
    let prefix = g.iter().zip(&e).take_while(|(a, b)| a == b).count();
    let room = g.len().min(e.len()) - prefix;
    let suffix = g
        .iter()
        .rev()
        .zip(e.iter().rev())
        .take(room)
        .take_while(|(a, b)| a == b)
        .count();
    // The change: g[prefix..g.len() - suffix] became e[prefix..e.len() - suffix].
    let (from, to) = (prefix, g.len() - suffix);
    let grown = e.len() as isize - g.len() as isize;
    let mut patches: Vec<Patch> = Vec::new();
    let mut touched: Vec<Literal> = Vec::new();
    for (element, property, value) in candidates {
        let v: Vec<char> = value.chars().collect();
        if v.is_empty() || v.len() > g.len() {
            continue;
        }
        for start in 0..=g.len() - v.len() {
            if g[start..start + v.len()] != v[..] {
                continue;
            }
            let end = start + v.len();
            // Covers the whole change: its new value is what the edit left
            // between the unchanged text around it.
            if start <= from && end >= to {
                let new_end = (end as isize + grown) as usize;
                let new: String = e[start..new_end].iter().collect();
                let patch = Patch {
                    element: element.clone(),
                    property: property.clone(),
                    old: value.clone(),
                    new,
                };
                if !patches.contains(&patch) {
                    patches.push(patch);
                }
            } else if start < to.max(from + 1) && end > from {
                let literal = (element.clone(), property.clone(), value.clone());
                if !touched.contains(&literal) {
                    touched.push(literal);
                }
            }
        }
    }
    match patches.len() {
        0 if touched.len() > 1 => Err(Unexplained::SpansSeveral(touched)),
        0 => Err(Unexplained::Nothing),
        _ => Ok(patches),
    }
}

/// A model file's text, read as every project file is (regular, bounded);
/// `None` when it cannot be.
pub(crate) fn model_text(path: &std::path::Path) -> Option<String> {
    seams_model::input_file::read(path, seams_model::input_file::MODEL_FILE_LIMIT)
        .ok()
        .and_then(|bytes| String::from_utf8(bytes).ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (generated line, edited line, candidates, what explains it).
    type Case<'a> = (&'a str, &'a str, &'a [Literal], Result<Patch, Unexplained>);

    fn lit(e: &str, p: &str, v: &str) -> Literal {
        (e.into(), p.into(), v.into())
    }

    #[test]
    fn each_edit_is_explained_by_one_literal_or_refused_saying_why() {
        let title = lit("urn:app", "label", "Chat");
        let path = lit("urn:page", "path", "thread");
        let page = lit("urn:page", "label", "Thread");
        let same = lit("urn:other", "label", "Chat");
        let candidates = [title.clone(), path.clone(), page.clone()];
        let accented = [lit("urn:app", "label", "Chat")];
        let twins = [title.clone(), same.clone()];
        let patch = |l: &Literal, new: &str| Patch {
            element: l.0.clone(),
            property: l.1.clone(),
            old: l.2.clone(),
            new: new.into(),
        };
        let cases: Vec<Case<'_>> = vec![
            // A word replaced, grown, shrunk, emptied.
            (
                "<h1>Chat</h1>",
                "<h1>Talk</h1>",
                &candidates,
                Ok(patch(&title, "Talk")),
            ),
            (
                "<h1>Chat</h1>",
                "<h1>Chat room</h1>",
                &candidates,
                Ok(patch(&title, "Chat room")),
            ),
            (
                "<h1>Chat</h1>",
                "<h1>Ch</h1>",
                &candidates,
                Ok(patch(&title, "Ch")),
            ),
            (
                "<h1>Chat</h1>",
                "<h1></h1>",
                &candidates,
                Ok(patch(&title, "")),
            ),
            // Inside a longer line, the right one of two values.
            (
                "<a href=\"thread.html\">Thread</a>",
                "<a href=\"thread.html\">Discussion</a>",
                &candidates,
                Ok(patch(&page, "Discussion")),
            ),
            (
                "<a href=\"thread.html\">Thread</a>",
                "<a href=\"threads.html\">Thread</a>",
                &candidates,
                Ok(patch(&path, "threads")),
            ),
            // Non-ASCII text around and in the change.
            (
                "<h1>Chat · é</h1>",
                "<h1>Châteaux · é</h1>",
                &accented,
                Ok(patch(&title, "Châteaux")),
            ),
            (
                "<h1>Chat</h1>",
                "<h1>Chat</h1>",
                &candidates,
                Err(Unexplained::Unchanged),
            ),
            // Fixed text changed: no value covers it.
            (
                "<h1>Chat</h1>",
                "<h2>Chat</h1>",
                &candidates,
                Err(Unexplained::Nothing),
            ),
            // Two elements print the same value on the line.
            (
                "<h1>Chat</h1>",
                "<h1>Talk</h1>",
                &twins,
                Err(Unexplained::Several(vec![title.clone(), same.clone()])),
            ),
            // One edit across two values.
            (
                "<a href=\"thread.html\">Thread</a>",
                "<a href=\"x.html\">Y</a>",
                &candidates,
                Err(Unexplained::SpansSeveral(vec![path.clone(), page.clone()])),
            ),
        ];
        for (generated, edited, candidates, expected) in cases {
            assert_eq!(
                explain(generated, edited, candidates),
                expected,
                "{generated} -> {edited}"
            );
        }
    }

    #[test]
    fn refusals_name_the_values() {
        let text =
            Unexplained::Several(vec![lit("urn:a", "urn:p", "X"), lit("urn:b", "urn:p", "X")])
                .to_string();
        assert!(
            text.contains("1. <urn:a> <urn:p> \"X\", 2. <urn:b> <urn:p> \"X\"; pass --choose N"),
            "{text}"
        );
    }
}
