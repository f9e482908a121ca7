//! Structural write-back (ADR-0019's T5): a block of lines added to or
//! removed from a generated output becomes a model change, an element
//! copied from a sibling or an element removed, accepted only when
//! generating with it gives the edited output back exactly.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::Arc;

use seams_model::written::{Unwritable, remove_element, rewrite, rewrite_integer, subject_line};
use seams_model::{Edit, Model};
use seams_runtime::Runtime;

use super::diff::line_diff;
use super::{Effect, Now, WriteBackError, effects, generated};
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
    /// A new element, a copy of `sibling` with the label `label`, and
    /// copies of what it owns and of what it binds that is named after it
    /// (a field's attribute), each value the added lines show solved for.
    Added {
        /// The element copied.
        sibling: String,
        /// The new element's IRI.
        element: String,
        /// Its label.
        label: String,
        /// The other elements copied with it: (original, copy).
        copies: Vec<(String, String)>,
        /// Every value the copies take that differs from their
        /// original's: (copy, property, value).
        values: Vec<(String, String, String)>,
        /// The siblings after it whose `ui:order` makes room for it:
        /// (element, old order, new order).
        orders: Vec<(String, i64, i64)>,
    },
    /// The element and every triple it occurs in, removed.
    Removed {
        /// The element.
        element: String,
    },
    /// Values of elements changed together, each value the changed lines
    /// show solved for: a field renamed (its label and name) and the
    /// attribute it binds, named after it.
    Revalued {
        /// (element, property, old value, new value).
        values: Vec<(String, String, String, String)>,
    },
    /// Elements shown in another order: their `ui:order` values swapped.
    Reordered {
        /// (element, old order, new order).
        orders: Vec<(String, i64, i64)>,
    },
}

impl BlockChange {
    /// What the change does, a line and then one indented line per other
    /// element it copies or value it changes.
    fn describe(&self) -> String {
        let mut text = match self {
            BlockChange::Added {
                sibling,
                element,
                label,
                ..
            } => format!("a new element <{element}>, a copy of <{sibling}> labelled {label:?}\n"),
            BlockChange::Removed { element } => format!("<{element}> removed\n"),
            BlockChange::Revalued { .. } => "values changed\n".to_owned(),
            BlockChange::Reordered { .. } => "in another order\n".to_owned(),
        };
        match self {
            BlockChange::Added { copies, orders, .. } => {
                for (original, copy) in copies {
                    text.push_str(&format!("  with <{copy}>, a copy of <{original}>\n"));
                }
                for (element, old, new) in orders {
                    text.push_str(&format!("  <{element}> <{UI_ORDER}> {old} becomes {new}\n"));
                }
            }
            BlockChange::Removed { .. } => {}
            BlockChange::Revalued { values } => {
                for (element, property, old, new) in values {
                    text.push_str(&format!(
                        "  <{element}> <{property}> {old:?} becomes {new:?}\n"
                    ));
                }
            }
            BlockChange::Reordered { orders } => {
                for (element, old, new) in orders {
                    text.push_str(&format!("  <{element}> <{UI_ORDER}> {old} becomes {new}\n"));
                }
            }
        }
        text
    }

    /// The element the change is about, to name it.
    fn element(&self) -> &str {
        match self {
            BlockChange::Added { element, .. } | BlockChange::Removed { element } => element,
            BlockChange::Revalued { values } => values.first().map_or("", |(e, ..)| e),
            BlockChange::Reordered { orders } => orders.first().map_or("", |(e, ..)| e),
        }
    }
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
    /// Its number among the changes found (1: the first ranked, proposed
    /// unless `--choose` names another).
    pub chosen: usize,
    /// The other changes that give the edit back too, in the order they
    /// were found (numbered 1, 2, ... with `chosen` left out).
    pub alternatives: Vec<BlockChange>,
    /// The model file it rewrites.
    pub model_file: PathBuf,
    /// That file's text with the change.
    pub patched_text: String,
    /// The file's lines that go and come, as `diff::line_diff` shows them.
    pub diff: Vec<String>,
    /// Every line of another output the change alters.
    pub effects: Vec<Effect>,
    /// When the change creates or removes a whole page, entity or form,
    /// that in words: said first, and applied only with its own consent.
    pub sweeping: Option<String>,
}

/// The kinds of element whose creation or removal an edit of lines must
/// never bring about unnoticed.
const SWEEPING: [(&str, &str); 3] = [
    ("https://w3id.org/seams/ui#Page", "page"),
    ("https://w3id.org/seams/ui#Entity", "entity"),
    ("https://w3id.org/seams/ui#Form", "form"),
];

/// `change` in words when it creates or removes a page, entity or form,
/// with what it holds and the outputs that come or go (from `now` to
/// `after`).
fn sweeping(
    model: &Model,
    change: &BlockChange,
    now: &Generation,
    after: &Generation,
) -> Option<String> {
    let (verb, element) = match change {
        BlockChange::Removed { element } => ("removes", element),
        BlockChange::Added { sibling, .. } => ("creates", sibling),
        BlockChange::Revalued { .. } | BlockChange::Reordered { .. } => return None,
    };
    let types = model.types_of(element);
    let kind = SWEEPING
        .iter()
        .find(|(class, _)| types.iter().any(|t| t == class))?
        .1;
    let held = model.children(element).len();
    let what = match change {
        BlockChange::Added { element: new, .. } => format!(
            "a new {kind} <{new}>, a copy of {} with the {held} element(s) it holds",
            model.compact(element)
        ),
        _ => format!(
            "the whole {kind} {} and the {held} element(s) it holds",
            model.compact(element)
        ),
    };
    // The outputs that come or go.
    let paths = |g: &Generation| -> BTreeSet<String> {
        g.runs
            .iter()
            .flat_map(|r| r.run.outputs.iter().map(|o| o.path.clone()))
            .collect()
    };
    let (before, later) = (paths(now), paths(after));
    let files: Vec<String> = before
        .difference(&later)
        .map(|p| format!("{p} deleted"))
        .chain(later.difference(&before).map(|p| format!("{p} written")))
        .collect();
    let files = if files.is_empty() {
        String::new()
    } else {
        format!(" ({})", files.join(", "))
    };
    Some(format!(
        "this edit of lines {verb} {what}{files}, and no smaller change that gives it back was found"
    ))
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
        let kind = match &self.change {
            BlockChange::Added { .. } => "added",
            BlockChange::Removed { .. } => "removed",
            BlockChange::Revalued { .. } | BlockChange::Reordered { .. } => "changed",
        };
        let mut out = self
            .sweeping
            .as_ref()
            .map_or_else(String::new, |sweeping| format!("note: {sweeping}\n"));
        out.push_str(&format!(
            "{}:{first}: {count} {kind} line(s): {}",
            self.output,
            self.change.describe()
        ));
        if !self.alternatives.is_empty() {
            out.push_str(&format!(
                "other model changes give this edit back too; pass --choose N to propose one of them (this is {}):\n",
                self.chosen
            ));
            for (i, other) in self.alternatives.iter().enumerate() {
                let number = if i + 1 < self.chosen { i + 1 } else { i + 2 };
                out.push_str(&format!(
                    "  {number}. {}",
                    other.describe().replace("\n  ", "\n     ")
                ));
            }
        }
        out.push_str(&format!("--- {shown}\n+++ {shown}\n"));
        for line in &self.diff {
            out.push_str(line);
            out.push('\n');
        }
        super::effects_text(&self.effects, &mut out);
        out
    }
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
/// `output` (`edited` is its text), from the project's generation now:
/// `choice` picks among several changes that give it back.
pub(super) fn plan_block(
    project: &Project,
    runtime: &Runtime,
    output: &str,
    edited: &str,
    now: Now,
    choice: Option<usize>,
) -> Result<BlockPlan, WriteBackError> {
    let Now {
        rel,
        lock,
        inputs,
        generation,
        text,
        traced,
    } = now;
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
    // What a generator said of a changed model it refused (an entity left
    // with no attribute, a form that can no longer create its records):
    // the refusal names it when no change is left.
    let refused: std::cell::RefCell<Vec<String>> = std::cell::RefCell::new(Vec::new());
    let trial = |edits: &[Edit]| -> Result<(Generation, Arc<Model>), WriteBackError> {
        let changed = Arc::new(model.edited(edits).map_err(GenerateError::from)?);
        let inputs = Inputs::new(changed.clone(), stamp()?);
        Ok((run_with_inputs(project, runtime, &inputs), changed))
    };
    // A change proposed to the user, unlike a trial with markers.
    let run = |edits: &[Edit]| -> Result<(Generation, Arc<Model>), WriteBackError> {
        let (generation, changed) = trial(edits)?;
        if let Some((_, failure)) = generation.failures.first() {
            let tried = match edits {
                [Edit::Remove { iri }] => format!("removing {}", model.compact(iri)),
                _ => "a change".to_owned(),
            };
            refused.borrow_mut().push(format!("{tried}: {failure}"));
        }
        Ok((generation, changed))
    };
    let gives_edit =
        |generation: &Generation| generated(generation, &rel).is_some_and(|(t, _)| t == edited);
    // The lines elements print now, beside the added or changed ones: a
    // value they show that the new lines do not is one the user changed.
    let lines_of = |olds: &[String]| {
        let shown: String = (1..=g.len())
            .filter(|l| terms_of(*l).iter().any(|t| olds.contains(t)))
            .map(|l| format!("{}\n", g[l - 1]))
            .collect();
        (shown, e[prefix..prefix + added].join("\n"))
    };

    // The output with a marker for each value `copy` solves for; when the
    // model check refuses a marker (a value the shapes enumerate, such as
    // an input type, or a path two pages must not share), the element's
    // own values alone, then its labels alone, as free text.
    let trial_of = |mut copy: Copied,
                    edits: &dyn Fn(&Copied) -> Vec<Edit>|
     -> Result<(Copied, Generation), WriteBackError> {
        let mut tried = trial(&edits(&copy))?.0;
        for narrower in [Copied::own_only, Copied::labels_only] {
            if generated(&tried, &rel).is_some() {
                break;
            }
            copy = narrower(copy);
            tried = trial(&edits(&copy))?.0;
        }
        Ok((copy, tried))
    };
    // Elements, the most local first (fewest lines printed), each once.
    let ranked = |mut elements: Vec<String>| {
        elements.sort_by_key(|t| (spread(t), t.clone()));
        elements.dedup();
        elements.truncate(CANDIDATES);
        elements
    };
    // Every change found that gives the edit back, the one proposed first.
    let mut found = Found::default();
    let (what, tried) = match (removed, added) {
        (0, 0) => return Err(WriteBackError::NotEdited(output.to_owned())),
        (_, 0) => {
            let candidates = ranked(
                (prefix + 1..=prefix + removed)
                    .flat_map(terms_of)
                    .filter(|t| model.is_element(t))
                    .collect(),
            );
            for element in candidates {
                let (after, changed) = run(&[Edit::Remove {
                    iri: element.clone(),
                }])?;
                if gives_edit(&after) {
                    found.push((BlockChange::Removed { element }, changed, after));
                    break;
                }
            }
            (
                format!("removing lines {}-{}", prefix + 1, prefix + removed),
                "removing each element the removed lines were printed from",
            )
        }
        (0, _) => {
            // The elements of the nearest traced lines above and below
            // that a container holds several of: the block's siblings.
            let above = (1..=prefix).rev().find(|l| !terms_of(*l).is_empty());
            let below = (prefix + 1..=g.len()).find(|l| !terms_of(*l).is_empty());
            let candidates = ranked(
                above
                    .into_iter()
                    .chain(below)
                    .flat_map(terms_of)
                    .filter(|t| model.is_element(t) && !model.containers(t).is_empty())
                    .collect(),
            );
            for sibling in candidates {
                // The sibling, what it owns, and what it alone of its kind
                // binds (a field's attribute): each string value a marker
                // no text holds, then solved for what the added lines
                // show.
                let (copy, trial) =
                    trial_of(Copied::of(model, &sibling, &lines_of), &|c| vec![c.trial()])?;
                let Some(solved) = generated(&trial, &rel)
                    .and_then(|(t, _)| solve_markers(t, edited, &copy.marker_names()))
                else {
                    continue;
                };
                // With an attribute of its own first, then binding the
                // sibling's; each with the IRI the lines name, then a
                // fresh one (the IRI may order the copy elsewhere).
                // A fresh IRI only where no named one gave the edit back:
                // the same change under other IRIs is no alternative.
                let mut named_given: Vec<bool> = Vec::new();
                for (with_bound, named_iri) in
                    [(true, true), (true, false), (false, true), (false, false)]
                {
                    if !named_iri && named_given.contains(&with_bound) {
                        continue;
                    }
                    let Some(edit) = copy.solved(model, &solved, with_bound, named_iri) else {
                        continue;
                    };
                    let (after, changed) = run(std::slice::from_ref(&edit))?;
                    if gives_edit(&after) {
                        found.push((copy.change(&edit, Vec::new()), changed, after));
                        if named_iri {
                            named_given.push(with_bound);
                        }
                        continue;
                    }
                    // The edit's lines in another order: the copy sits
                    // elsewhere among its siblings; placed by its
                    // `ui:order`, shifting the siblings after it when
                    // needed.
                    let shown = generated(&after, &rel).map(|(t, _)| t.split('\n').collect());
                    if !shown.is_some_and(|shown: Vec<&str>| same_lines(&shown, &e)) {
                        continue;
                    }
                    let siblings = ordered_siblings(model, &sibling);
                    for (order, shifts) in placements(&siblings) {
                        let Edit::Clone { iris, mut values } = edit.clone() else {
                            continue;
                        };
                        values.retain(|(e, p, _)| !(*e == sibling && p == UI_ORDER));
                        values.push((sibling.clone(), UI_ORDER.to_owned(), order.to_string()));
                        let placed = Edit::Clone { iris, values };
                        let mut edits = vec![placed.clone()];
                        edits.extend(shifts.iter().map(|(e, _, to)| Edit::SetValue {
                            iri: e.clone(),
                            property: UI_ORDER.to_owned(),
                            value: to.to_string(),
                        }));
                        let (after, changed) = run(&edits)?;
                        if gives_edit(&after) {
                            found.push((copy.change(&placed, shifts), changed, after));
                            if named_iri {
                                named_given.push(with_bound);
                            }
                            break;
                        }
                    }
                }
                if !found.is_empty() {
                    break;
                }
            }
            (
                format!("adding lines {}-{}", prefix + 1, prefix + added),
                "copying each element of the nearest traced lines that sits in a list",
            )
        }
        _ => {
            // Lines changed: elements put in another order (the same
            // lines), or values of one element (and what it owns and binds)
            // changed together.
            let candidates = ranked(
                (prefix + 1..=prefix + removed)
                    .flat_map(terms_of)
                    .filter(|t| model.is_element(t))
                    .collect(),
            );
            let (old_lines, new_lines) = (&g[prefix..prefix + removed], &e[prefix..prefix + added]);
            if same_lines(old_lines, new_lines) {
                let values = model.literal_values();
                let order = |iri: &str| order_of(&values, iri);
                // Two siblings of one list first (the edited lines show
                // fields: swap two fields), then two of one kind, then any
                // two: a field's order swapped with an attribute's may
                // print the same form and reorder the API's records.
                let containers = |iri: &str| -> BTreeSet<(String, String)> {
                    model.containers(iri).into_iter().collect()
                };
                let mut pairs: Vec<(u8, &String, &String)> = Vec::new();
                for (i, a) in candidates.iter().enumerate() {
                    for b in &candidates[i + 1..] {
                        let tier = if !containers(a).is_disjoint(&containers(b)) {
                            0
                        } else if model.types_of(a) == model.types_of(b) {
                            1
                        } else {
                            2
                        };
                        pairs.push((tier, a, b));
                    }
                }
                // Stable: within a tier, the most local first.
                pairs.sort_by_key(|(tier, ..)| *tier);
                for (_, a, b) in pairs {
                    let (Some(oa), Some(ob)) = (order(a), order(b)) else {
                        continue;
                    };
                    if oa == ob {
                        continue;
                    }
                    let set = |iri: &str, to: i64| Edit::SetValue {
                        iri: iri.to_owned(),
                        property: UI_ORDER.to_owned(),
                        value: to.to_string(),
                    };
                    let (after, changed) = run(&[set(a, ob), set(b, oa)])?;
                    if gives_edit(&after) {
                        let orders = vec![(a.clone(), oa, ob), (b.clone(), ob, oa)];
                        found.push((BlockChange::Reordered { orders }, changed, after));
                        break;
                    }
                }
            }
            for element in &candidates {
                if !found.is_empty() {
                    break;
                }
                let values = Copied::of(model, element, &lines_of).in_place();
                if values.marked.is_empty() {
                    continue;
                }
                let (values, trial) = trial_of(values, &Copied::trial_in_place)?;
                let Some(solved) = generated(&trial, &rel)
                    .and_then(|(t, _)| solve_markers(t, edited, &values.marker_names()))
                else {
                    continue;
                };
                // What it binds renamed with it first (an attribute named
                // like its field), then it alone.
                for with_bound in [true, false] {
                    let Some(changes) = values.changed_values(&solved, with_bound) else {
                        continue;
                    };
                    let edits: Vec<Edit> = changes
                        .iter()
                        .map(|(e, p, _, new)| Edit::SetValue {
                            iri: e.clone(),
                            property: p.clone(),
                            value: new.clone(),
                        })
                        .collect();
                    let (after, changed) = run(&edits)?;
                    if gives_edit(&after) {
                        found.push((BlockChange::Revalued { values: changes }, changed, after));
                    }
                }
            }
            (
                format!(
                    "changing lines {}-{}",
                    prefix + 1,
                    prefix + removed.max(added)
                ),
                "changing the values of each element the changed lines were printed from, with what it owns and binds, and swapping the ui:order of two of them; to write back one line, name it as OUTPUT:LINE",
            )
        }
    };
    let Some(first) = found.first else {
        return Err(WriteBackError::NoBlockChange {
            output: output.to_owned(),
            what,
            tried,
            refused: refused.into_inner(),
        });
    };
    // The change the user chose by its number (1, the first ranked, when
    // none): the others are listed, numbered as they were found.
    let count = 1 + found.others.len();
    let chosen = choice.unwrap_or(1);
    if chosen == 0 || chosen > count {
        return Err(WriteBackError::Choice {
            output: output.to_owned(),
            choice: chosen,
            count,
        });
    }
    let mut alternatives: Vec<BlockChange> = found.others.iter().map(|(c, _)| c.clone()).collect();
    let (change, changed, after) = if chosen == 1 {
        first
    } else {
        let (change, changed) = found.others.remove(chosen - 2);
        alternatives = std::iter::once(first.0)
            .chain(found.others.into_iter().map(|(c, _)| c))
            .collect();
        let inputs = Inputs::new(changed.clone(), stamp()?);
        (change, changed, run_with_inputs(project, runtime, &inputs))
    };
    let (model_file, patched_text, diff) = patch_file(project, &change, &changed)?;
    let effects = effects(&generation, &after, |o, _| o == rel);
    let sweeping = sweeping(model, &change, &generation, &after);
    Ok(BlockPlan {
        output: rel,
        lines: (prefix + 1, removed.max(added)),
        change,
        chosen,
        alternatives,
        model_file,
        patched_text,
        diff,
        effects,
        sweeping,
    })
}

/// The changes that give an edit back: the first, proposed, with the
/// model and generation it makes; the others only as changes (a
/// generation of a large project holds hundreds of MB), each once by the
/// model it makes (two ways of writing one change are one candidate).
#[derive(Default)]
struct Found {
    first: Option<(BlockChange, Arc<Model>, Generation)>,
    others: Vec<(BlockChange, Arc<Model>)>,
    models: BTreeSet<String>,
}

impl Found {
    fn push(&mut self, (change, changed, after): (BlockChange, Arc<Model>, Generation)) {
        if !self.models.insert(changed.hash().to_owned()) {
            return;
        }
        if self.first.is_none() {
            self.first = Some((change, changed, after));
        } else {
            self.others.push((change, changed));
        }
    }

    fn is_empty(&self) -> bool {
        self.first.is_none()
    }
}

/// An IRI like `sibling` that the model does not use: `<sibling>_2`, ...
fn fresh_iri(model: &Model, sibling: &str) -> String {
    // A model mentions finitely many IRIs, so some suffix is free.
    let mut n: u64 = 2;
    loop {
        let iri = format!("{sibling}_{n}");
        if !model.mentions(&iri) {
            return iri;
        }
        n += 1;
    }
}

/// `text` as an IRI's local name is written: its runs of letters and
/// digits, lower-cased, joined by `_` ("Your name" reads `your_name`).
fn snake(text: &str) -> String {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect::<Vec<_>>()
        .join("_")
}

/// A copy of a sibling element being planned: the elements copied with
/// their new IRIs, the values the user changed, each solved for through a
/// marker, and the values of what the sibling binds.
struct Copied {
    /// (original, copy): the sibling and what it owns first (`owned` of
    /// them), then what it alone of its kind binds (a field's attribute).
    iris: Vec<(String, String)>,
    owned: usize,
    /// The owned elements' values that their lines show now and the added
    /// lines do not: (original element, property, value).
    marked: Vec<(String, String, String)>,
    /// The bound elements' string values: (original element, property,
    /// value).
    bound: Vec<(String, String, String)>,
    /// The sibling's label.
    label: String,
    /// When the sibling's lines show its IRI's local name and the added
    /// lines do not: its namespace, and that name; the copy's IRI is then
    /// solved for too (an id, an API route).
    local: Option<(String, String)>,
}

/// The marker standing for the `i`-th value: a word no output holds,
/// cased like the value it stands for (`old`), so that it keeps to the
/// patterns the vocabulary's shapes give names (a lower-case attribute
/// name, a capitalised entity name), and none the start of another.
fn marker(i: usize, old: &str) -> String {
    let word = format!("zqseamsmark{i}q");
    if old.chars().next().is_some_and(char::is_uppercase) {
        let mut chars = word.chars();
        chars
            .next()
            .map(|c| c.to_ascii_uppercase().to_string() + chars.as_str())
            .unwrap_or_default()
    } else {
        word
    }
}

const RDFS_LABEL: &str = "http://www.w3.org/2000/01/rdf-schema#label";
const UI_ORDER: &str = "https://w3id.org/seams/ui#order";
const UI_NAME: &str = "https://w3id.org/seams/ui#name";

/// `iri`'s `ui:order` among a model's literal values.
fn order_of(values: &[(String, String, String)], iri: &str) -> Option<i64> {
    values
        .iter()
        .find(|(e, p, _)| e == iri && p == UI_ORDER)
        .and_then(|(_, _, v)| v.parse().ok())
}

/// An element's `ui:order` changed: (element, old, new).
type Shift = (String, i64, i64);

/// The elements that sit in the same list as `element` (and it), with
/// their `ui:order`, in the order a generator shows them: by order, ties
/// by IRI. Empty when one of them has no order.
fn ordered_siblings(model: &Model, element: &str) -> Vec<(String, i64)> {
    let values = model.literal_values();
    let order = |iri: &str| order_of(&values, iri);
    let lists = model.containers(element);
    let mut siblings: Vec<(String, i64)> = Vec::new();
    for (container, _) in &lists {
        for candidate in model.pointed_at(container) {
            if model
                .containers(&candidate)
                .iter()
                .any(|held| lists.contains(held))
            {
                let Some(o) = order(&candidate) else {
                    return Vec::new();
                };
                siblings.push((candidate, o));
            }
        }
    }
    siblings.sort_by(|a, b| (a.1, &a.0).cmp(&(b.1, &b.0)));
    siblings.dedup();
    siblings
}

/// Where a new element can go among `siblings` (in the order they are
/// shown): for each place, the `ui:order` it takes (one more than the
/// element before it) and the siblings after it whose order must grow to
/// stay after it: (element, old, new). Fewest shifts first.
fn placements(siblings: &[(String, i64)]) -> Vec<(i64, Vec<Shift>)> {
    let mut out: Vec<(i64, Vec<Shift>)> = (0..=siblings.len())
        .map(|at| {
            let order = match at {
                0 => siblings.first().map_or(1, |(_, o)| o - 1),
                _ => siblings[at - 1].1 + 1,
            };
            let mut last = order;
            let mut shifts = Vec::new();
            for (element, old) in &siblings[at..] {
                if *old > last {
                    break;
                }
                last += 1;
                shifts.push((element.clone(), *old, last));
            }
            (order, shifts)
        })
        .collect();
    out.sort_by_key(|(_, shifts)| shifts.len());
    out
}

/// Whether `a` and `b` hold the same lines, in any order.
fn same_lines(a: &[&str], b: &[&str]) -> bool {
    let (mut a, mut b) = (a.to_vec(), b.to_vec());
    a.sort_unstable();
    b.sort_unstable();
    a == b
}

impl Copied {
    /// `lines` gives, for the originals, the text of the lines they print
    /// now and of the added lines: only a value the first shows and the
    /// second does not is solved for (a value kept, like an input type,
    /// stays as it is, and may be one a shape enumerates).
    fn of(model: &Model, sibling: &str, lines: &dyn Fn(&[String]) -> (String, String)) -> Copied {
        let mut olds = vec![sibling.to_owned()];
        olds.extend(model.children(sibling));
        let owned = olds.len();
        // Bound: what the sibling points at and no other element of its
        // types points at, that sits in a list of its own (a field's
        // attribute, in its entity).
        let types = model.types_of(sibling);
        for target in model.pointed_at(sibling) {
            if olds.contains(&target) || model.containers(&target).is_empty() {
                continue;
            }
            let shared = model
                .neighbours(&target)
                .iter()
                .any(|n| n != sibling && model.types_of(n).iter().any(|t| types.contains(t)));
            if !shared {
                olds.push(target);
            }
        }
        let iris: Vec<(String, String)> = olds
            .iter()
            .map(|old| (old.clone(), fresh_iri(model, old)))
            .collect();
        let (before, after) = lines(&olds[..owned]);
        let strings: Vec<(String, String, String)> = model
            .literal_values()
            .into_iter()
            .filter(|(e, _, v)| {
                olds.contains(e)
                    && !v.is_empty()
                    && v.parse::<f64>().is_err()
                    && v != "true"
                    && v != "false"
            })
            .collect();
        let (owned_values, bound): (Vec<_>, Vec<_>) = strings
            .into_iter()
            .partition(|(e, _, _)| olds[..owned].contains(e));
        let marked = owned_values
            .into_iter()
            .filter(|(_, _, v)| before.contains(v.as_str()) && !after.contains(v.as_str()))
            .collect();
        let at = sibling.rfind(['#', '/']).map_or(0, |i| i + 1);
        let (namespace, name) = sibling.split_at(at);
        let local = (name.len() >= 3 && before.contains(name) && !after.contains(name))
            .then(|| (namespace.to_owned(), name.to_owned()));
        Copied {
            iris,
            owned,
            marked,
            bound,
            label: model.label(sibling).unwrap_or_default().to_owned(),
            local,
        }
    }

    /// The same copy solving for the first element's own values only.
    fn own_only(self) -> Copied {
        let own = self.iris[0].0.clone();
        Copied {
            marked: self
                .marked
                .into_iter()
                .filter(|(e, _, _)| *e == own)
                .collect(),
            ..self
        }
    }

    /// The same copy solving for labels only.
    fn labels_only(self) -> Copied {
        Copied {
            marked: self
                .marked
                .into_iter()
                .filter(|(_, p, _)| p == RDFS_LABEL)
                .collect(),
            local: None,
            ..self
        }
    }

    /// The markers of the changed values, then of the local name.
    fn marker_names(&self) -> Vec<String> {
        let mut names: Vec<String> = self
            .marked
            .iter()
            .enumerate()
            .map(|(i, (_, _, old))| marker(i, old))
            .collect();
        if let Some((_, name)) = &self.local {
            names.push(marker(self.marked.len(), name));
        }
        names
    }

    /// The owned elements' copy with a marker for every value changed (and
    /// for its IRI's local name).
    fn trial(&self) -> Edit {
        let mut iris = self.iris[..self.owned].to_vec();
        if let (Some((namespace, _)), Some(name)) = (&self.local, self.marker_names().last()) {
            iris[0].1 = format!("{namespace}{name}");
        }
        Edit::Clone {
            iris,
            values: self
                .marked
                .iter()
                .zip(self.marker_names())
                .map(|((e, p, _), m)| (e.clone(), p.clone(), m))
                .collect(),
        }
    }

    /// The same elements changed in place: their IRIs are not solved for.
    fn in_place(self) -> Copied {
        Copied {
            local: None,
            ..self
        }
    }

    /// The owned elements changed in place, a marker for every value
    /// changed.
    fn trial_in_place(&self) -> Vec<Edit> {
        self.marked
            .iter()
            .zip(self.marker_names())
            .map(|((e, p, _), m)| Edit::SetValue {
                iri: e.clone(),
                property: p.clone(),
                value: m,
            })
            .collect()
    }

    /// The values the solved markers give, (element, property, old, new)
    /// for each that changed; `with_bound`: then a bound element's value
    /// that equals a changed one's original (an attribute named like its
    /// field) takes the same new value, and `None` when there is none.
    /// `None` too when the lines show none of the changed values.
    fn changed_values(
        &self,
        solved: &[Option<String>],
        with_bound: bool,
    ) -> Option<Vec<(String, String, String, String)>> {
        if !solved.is_empty() && solved.iter().all(Option::is_none) {
            return None;
        }
        let mut values: Vec<(String, String, String, String)> = self
            .marked
            .iter()
            .zip(&solved[..self.marked.len()])
            .filter_map(|((e, p, old), new)| {
                let new = new.as_deref()?;
                (new != old).then(|| (e.clone(), p.clone(), old.clone(), new.to_owned()))
            })
            .collect();
        if with_bound {
            let named: Vec<(String, String, String, String)> = self
                .bound
                .iter()
                .filter_map(|(e, p, old)| {
                    let (_, _, _, new) = values.iter().find(|(_, _, o, _)| o == old)?;
                    Some((e.clone(), p.clone(), old.clone(), new.clone()))
                })
                .collect();
            if named.is_empty() {
                return None;
            }
            values.extend(named);
        }
        Some(values)
    }

    /// The copy with the solved values (a value not solved for is its
    /// original's), and, `with_bound`, the bound elements named like a
    /// changed value copied too (a new field gets an attribute of its own;
    /// see [`Copied::changed_values`]). `named_iri`: the copy takes the
    /// IRI whose local name the added lines show, when it is free.
    fn solved(
        &self,
        model: &Model,
        solved: &[Option<String>],
        with_bound: bool,
        named_iri: bool,
    ) -> Option<Edit> {
        let values = self.changed_values(solved, with_bound)?;
        // The IRI the added lines name, when it is a free one.
        let iri = self
            .local
            .as_ref()
            .filter(|_| named_iri)
            .and_then(|(namespace, _)| {
                let name = solved.get(self.marked.len())?.as_deref()?;
                let iri = format!("{namespace}{name}");
                (seams_model::is_iri(&iri) && !model.mentions(&iri)).then_some(iri)
            });
        let mut iris = self.iris[..self.owned].to_vec();
        iris.extend(
            self.iris[self.owned..]
                .iter()
                .filter(|(old, _)| values.iter().any(|(e, _, _, _)| e == old))
                .cloned(),
        );
        if named_iri {
            // Each copy named after its new value where its original is
            // named after the old one (`author_field` with the name
            // "author" becomes `mood_field` with "mood"), not `_2`.
            let mut taken: Vec<String> = Vec::new();
            for (old, new) in &mut iris {
                let renamed = [UI_NAME, RDFS_LABEL].iter().find_map(|property| {
                    let (_, _, was, now) = values
                        .iter()
                        .find(|(e, p, _, _)| e == old && p == property)?;
                    let (was, now) = (snake(was), snake(now));
                    let at = old.rfind(['#', '/']).map_or(0, |i| i + 1);
                    let (namespace, local) = old.split_at(at);
                    let iri = format!("{namespace}{}", local.replacen(&was, &now, 1));
                    (!was.is_empty()
                        && !now.is_empty()
                        && local.contains(&was)
                        && seams_model::is_iri(&iri)
                        && !model.mentions(&iri)
                        && !taken.contains(&iri))
                    .then_some(iri)
                });
                if let Some(iri) = renamed {
                    taken.push(iri.clone());
                    *new = iri;
                }
            }
        }
        if let Some(iri) = iri {
            iris[0].1 = iri;
        }
        Some(Edit::Clone {
            iris,
            values: values
                .into_iter()
                .map(|(e, p, _, new)| (e, p, new))
                .collect(),
        })
    }

    /// The change an edit made of [`Copied::solved`] is, with `orders`
    /// the siblings it shifts.
    fn change(&self, edit: &Edit, orders: Vec<Shift>) -> BlockChange {
        let Edit::Clone { iris, values } = edit else {
            unreachable!("Copied makes clones")
        };
        let (sibling, element) = iris[0].clone();
        let new_of = |old: &str| {
            iris.iter()
                .find(|(o, _)| o == old)
                .map_or_else(|| old.to_owned(), |(_, n)| n.clone())
        };
        let label = values
            .iter()
            .find(|(e, p, _)| *e == sibling && p == RDFS_LABEL)
            .map(|(_, _, v)| v.clone())
            .unwrap_or_else(|| self.label.clone());
        BlockChange::Added {
            sibling,
            element,
            label,
            copies: iris[1..].to_vec(),
            values: values
                .iter()
                .map(|(e, p, v)| (new_of(e), p.clone(), v.clone()))
                .collect(),
            orders,
        }
    }
}

/// The value each marker of `markers` stands for in `edited`, given
/// `trial`, the output generated with the markers in place of the values:
/// `edited` must be `trial` with every marker replaced by one value (the
/// same wherever it occurs, on one line); `None` for a marker `trial` does
/// not hold. `None` when no such values exist.
fn solve_markers(trial: &str, edited: &str, markers: &[String]) -> Option<Vec<Option<String>>> {
    // The part that differs: markers sit only there.
    let prefix = trial
        .bytes()
        .zip(edited.bytes())
        .take_while(|(a, b)| a == b)
        .count();
    let prefix = trial[..prefix].rfind('\n').map_or(0, |i| i + 1);
    let most = trial.len().min(edited.len()) - prefix;
    let suffix = trial
        .bytes()
        .rev()
        .zip(edited.bytes().rev())
        .take(most)
        .take_while(|(a, b)| a == b)
        .count();
    let suffix = trial[trial.len() - suffix..]
        .find('\n')
        .map_or(0, |i| suffix - i);
    let (pattern, text) = (
        &trial[prefix..trial.len() - suffix],
        &edited[prefix..edited.len() - suffix],
    );
    // The pattern as literal text and marker indices.
    let mut pieces: Vec<Result<usize, &str>> = Vec::new();
    let mut rest = pattern;
    while !rest.is_empty() {
        let next = markers
            .iter()
            .enumerate()
            .filter_map(|(i, m)| rest.find(m.as_str()).map(|at| (at, i)))
            .min();
        match next {
            Some((at, i)) => {
                if at > 0 {
                    pieces.push(Err(&rest[..at]));
                }
                pieces.push(Ok(i));
                rest = &rest[at + markers[i].len()..];
            }
            None => {
                pieces.push(Err(rest));
                rest = "";
            }
        }
    }
    let mut values: Vec<Option<String>> = vec![None; markers.len()];
    fn fill(pieces: &[Result<usize, &str>], text: &str, values: &mut Vec<Option<String>>) -> bool {
        let Some((piece, more)) = pieces.split_first() else {
            return text.is_empty();
        };
        match piece {
            Err(literal) => text
                .strip_prefix(literal)
                .is_some_and(|rest| fill(more, rest, values)),
            Ok(i) => {
                if let Some(value) = values[*i].clone() {
                    return text
                        .strip_prefix(value.as_str())
                        .is_some_and(|rest| fill(more, rest, values));
                }
                let line = text.find('\n').unwrap_or(text.len());
                for end in (1..=line).filter(|e| text.is_char_boundary(*e)) {
                    values[*i] = Some(text[..end].to_owned());
                    if fill(more, &text[end..], values) {
                        return true;
                    }
                }
                values[*i] = None;
                false
            }
        }
    }
    fill(&pieces, text, &mut values).then_some(values)
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
        .filter_map(|f| Some((f.clone(), crate::write_back::model_text(f)?)))
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
        BlockChange::Revalued { values } => rewritten(
            &texts,
            values,
            change.element(),
            |text, (e, p, old, new)| rewrite(text, e, p, old, new),
        )?,
        BlockChange::Reordered { orders } => {
            rewritten(&texts, orders, change.element(), |text, (e, old, new)| {
                rewrite_integer(text, e, UI_ORDER, *old, *new)
            })?
        }
        BlockChange::Added {
            sibling,
            element,
            copies,
            orders,
            ..
        } => {
            let (file, text) = texts
                .iter()
                .find(|(_, text)| subject_line(text, sibling).is_some())
                .ok_or_else(|| WriteBackError::BlockUnwritable {
                    element: sibling.clone(),
                })?;
            let mut patched = text.clone();
            if !patched.is_empty() && !patched.ends_with('\n') {
                patched.push('\n');
            }
            for (shifted, old, new) in orders {
                patched = rewrite_integer(&patched, shifted, UI_ORDER, *old, *new)
                    .map_err(|why| unwritable(file, why))?;
            }
            // The new elements as the file writes its own: Turtle with its
            // prefixes, each new element a statement, then the lists it
            // joins; N-Triples only if that does not read back as the
            // changed model.
            let news: Vec<String> = std::iter::once(element.clone())
                .chain(copies.iter().map(|(_, c)| c.clone()))
                .collect();
            let own_prefixes = Model::parse(&file.display().to_string(), text)
                .map(|m| m.prefixes().clone())
                .unwrap_or_default();
            let head = format!(
                "\n# Added by seams write-back: a copy of {}.\n",
                changed.compact(sibling)
            );
            let turtle = changed
                .turtle_about(&news, &own_prefixes)
                .map(|t| format!("{patched}{head}{t}"))
                .filter(|t| reads_as(&texts, file, t, changed));
            let patched = match turtle {
                Some(turtle) => turtle,
                None => {
                    // Each new element's triples, and those pointing at it;
                    // a triple between two of them once.
                    let mut triples = String::new();
                    for new in &news {
                        let about = changed.ntriples_about(new).ok_or_else(|| {
                            WriteBackError::BlockUnwritable {
                                element: sibling.clone(),
                            }
                        })?;
                        for line in about.lines() {
                            if !triples.lines().any(|l| l == line) {
                                triples.push_str(line);
                                triples.push('\n');
                            }
                        }
                    }
                    format!(
                        "{patched}\n# Added by seams write-back: a copy of <{sibling}>.\n{triples}"
                    )
                }
            };
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
    if !reads_as(&texts, &file, &patched, changed) {
        return Err(WriteBackError::BlockUnwritable {
            element: change.element().to_owned(),
        });
    }
    Ok((file, patched, diff))
}

/// Whether the model files `texts`, with `file`'s text `patched`, parse
/// to exactly `changed` (its hash).
fn reads_as(texts: &[(PathBuf, String)], file: &PathBuf, patched: &str, changed: &Model) -> bool {
    let files: Vec<(PathBuf, Vec<u8>)> = texts
        .iter()
        .map(|(f, t)| {
            let bytes = if f == file { patched } else { t.as_str() };
            (f.clone(), bytes.as_bytes().to_vec())
        })
        .collect();
    Model::from_files(&files).is_ok_and(|reparsed| reparsed.hash() == changed.hash())
}

/// The one model file that writes every value of `changes`, with each
/// rewritten by `rewrite` in turn; `element` names the change.
fn rewritten<C>(
    texts: &[(PathBuf, String)],
    changes: &[C],
    element: &str,
    rewrite: impl Fn(&str, &C) -> Result<String, Unwritable>,
) -> Result<(PathBuf, String), WriteBackError> {
    let mut found: Option<(PathBuf, String)> = None;
    for change in changes {
        let mut writers = Vec::new();
        let mut why = None;
        for (file, text) in texts {
            let current = match &found {
                Some((f, patched)) if f == file => patched.as_str(),
                _ => text.as_str(),
            };
            match rewrite(current, change) {
                Ok(patched) => writers.push((file.clone(), patched)),
                Err(e) => {
                    why.get_or_insert((file.clone(), e));
                }
            }
        }
        let (file, patched) = match (writers.pop(), writers.pop(), why) {
            (Some(one), None, _) => one,
            (Some((a, _)), Some((b, _)), _) => {
                return Err(WriteBackError::SeveralFiles(vec![b, a]));
            }
            (None, _, Some((file, why))) => return Err(WriteBackError::Unwritable { file, why }),
            (None, _, None) => {
                return Err(WriteBackError::BlockUnwritable {
                    element: element.to_owned(),
                });
            }
        };
        if let Some((first, _)) = found.take_if(|(f, _)| *f != file) {
            return Err(WriteBackError::SeveralFiles(vec![first, file]));
        }
        found = Some((file, patched));
    }
    found.ok_or_else(|| WriteBackError::BlockUnwritable {
        element: element.to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_values_that_print_the_added_lines_are_solved_for() {
        let markers = vec![marker(0, "Topic"), marker(1, "topic")];
        assert_eq!(markers, ["Zqseamsmark0q", "zqseamsmark1q"]);
        type Row = (
            &'static str,
            &'static str,
            Option<[Option<&'static str>; 2]>,
        );
        let table: &[Row] = &[
            (
                "x\n<h1>A</h1>\n<p>A</p>\ny",
                "x\n<h1>Tea</h1>\n<p>Tea</p>\ny",
                Some([Some("Tea"), None]),
            ),
            // A label and a name, each once or twice.
            (
                "<label for=\"f-B\">A</label>\n<input id=\"f-B\" name=\"B\">",
                "<label for=\"f-mood\">Mood</label>\n<input id=\"f-mood\" name=\"mood\">",
                Some([Some("Mood"), Some("mood")]),
            ),
            ("a A b A", "a X b Y", None),
            ("a A b", "a X\nY b", None),
            ("a A b", "a  b", None),
            ("no marker", "no marker", Some([None, None])),
        ];
        for (trial, edited, values) in table {
            let trial = trial.replace('A', &markers[0]).replace('B', &markers[1]);
            let expected = values.map(|v| v.map(|x| x.map(str::to_owned)).to_vec());
            assert_eq!(
                solve_markers(&trial, edited, &markers),
                expected,
                "{trial:?}"
            );
        }
    }

    #[test]
    fn a_new_element_is_placed_by_its_order_shifting_the_fewest_siblings() {
        let siblings = |orders: &[(&str, i64)]| -> Vec<(String, i64)> {
            orders.iter().map(|(e, o)| ((*e).to_owned(), *o)).collect()
        };
        let shift = |e: &str, old: i64, new: i64| (e.to_owned(), old, new);
        // A gap after the first: no shift there; right after it, the
        // second moves up.
        assert_eq!(
            placements(&siblings(&[("a", 1), ("b", 3)])),
            [(0, vec![]), (2, vec![]), (4, vec![]),]
        );
        assert_eq!(
            placements(&siblings(&[("a", 1), ("b", 2), ("c", 3)])),
            [
                (0, vec![]),
                (4, vec![]),
                (3, vec![shift("c", 3, 4)]),
                (2, vec![shift("b", 2, 3), shift("c", 3, 4)]),
            ]
        );
        // Ties among the siblings after the place move up together; a
        // place between two tied ones moves only the second.
        let tied = placements(&siblings(&[("a", 1), ("b", 2), ("c", 2)]));
        assert_eq!(tied[2], (3, vec![shift("c", 2, 4)]));
        assert_eq!(tied[3], (2, vec![shift("b", 2, 3), shift("c", 2, 4)]));
        assert_eq!(placements(&[]), [(1, vec![])]);
    }

    #[test]
    fn the_shared_ends_of_two_texts_are_found() {
        assert_eq!(common_ends(&["a", "a"], &["a"]), (1, 0));
        assert_eq!(common_ends(&["a", "b", "c"], &["a", "x", "c"]), (1, 1));
    }
}
