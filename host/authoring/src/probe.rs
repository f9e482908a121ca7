//! The change-the-model gate (ADR-0012's second layer for drafts): a
//! generator that reproduces its reference on one model may still copy it
//! instead of reading it. So it is also run on changed copies of the model,
//! each derived mechanically ([`seams_model::Edit`]), and its output must
//! follow the change. A probe asks only what every generator that reads
//! the model correctly gives; what a correct generator may do differently
//! (filter a list, derive a value, compute a separator) it leaves alone:
//!
//! - **relabel**: every label the reference cites gets a fresh word; every
//!   line shows the fresh label wherever it showed the old one, in the
//!   same form ([`shown`]: as written, lower-cased, in snake case...), and
//!   is otherwise as it was.
//! - **revalue**: every other literal value the reference prints, of an
//!   element in the view, gets a fresh word, one per element and
//!   property; each line shows, in the form it had, the new value of an
//!   element it is traced to or one such an element is linked with, where
//!   it showed the old one; a longer value kept (a title that starts with
//!   the submit label) keeps its text.
//! - **rename**: every element in the view gets a fresh IRI, in the
//!   reverse order of the old ones; the generator still runs, and only
//!   lines printing IRI-derived text change (an order that followed the
//!   IRIs shows as moved lines).
//! - **add** (per type of the elements in the view that has two or more
//!   instances): the last such element the reference shows is cloned with
//!   every triple it has and what it owns (its attributes, fields,
//!   states), under fresh IRIs, with fresh labels and values (not the
//!   values of an enumeration, which filters test), into the containers
//!   that hold several of its kind: whatever filter it passes, its clone
//!   passes. A line traced to the clone or its parts appears; the other
//!   lines stay (the originals' too), but for those traced to what the
//!   clone is linked with, and for the punctuation at their ends
//!   (separators), positions and counts.
//! - **remove** (same types): that element and what it owns go; the lines
//!   traced to none of them, their containers or what they are linked with
//!   stay, separators, positions and counts aside.
//!
//! Planning and judging are pure ([`plan`], [`judge`]); [`run`] runs them.

mod shown;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use seams_model::{Edit, Model};
use seams_runtime::{GeneratorRun, Limits, LoadedGenerator, Runtime};
use shown::Swap;

/// One output as the probes compare it: its lines and each line's terms.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutputLines {
    /// The output's path.
    pub path: String,
    /// Its lines, each with the model IRIs its trace names (none for a
    /// blank or untraced line).
    pub lines: Vec<(String, Vec<String>)>,
}

/// A run's outputs, sorted by path.
pub type Snapshot = Vec<OutputLines>;

/// The outputs of a run, as the probes compare them.
pub fn snapshot(run: &GeneratorRun) -> Snapshot {
    run.outputs
        .iter()
        .map(|output| {
            let mut lines: Vec<(String, Vec<String>)> = output
                .text
                .split('\n')
                .map(|l| (l.to_owned(), Vec::new()))
                .collect();
            for traced in output.trace.iter().flatten() {
                if let Some(line) = lines.get_mut(traced.line.wrapping_sub(1)) {
                    line.1 = traced.terms.clone();
                }
            }
            OutputLines {
                path: output.path.clone(),
                lines,
            }
        })
        .collect()
}

/// What a probe expects of the output on its changed model.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Expect {
    /// Each line shows the new values where it showed the old ones.
    /// `values` are (element, value) pairs; with `near`, a line is judged
    /// by the values of the elements it is traced to and the changed
    /// values of those they are linked with (`near`'s entries), else by
    /// every value. A kept value of a linked element does not count: a
    /// field named like the relation it binds does not excuse a line that
    /// copies the relation's old name.
    /// With `loose`, a kept value counts in every form, not only as
    /// written: relabel's, since code names things after a name that
    /// spells the label ("status", "Status"); not revalue's, where a value
    /// copied from a kept label ("conversations", "Conversations") is the
    /// mistake.
    Shows {
        values: Vec<(String, Swap)>,
        near: Option<BTreeMap<String, Vec<String>>>,
        loose: bool,
    },
    /// The same lines, but for lines showing one of these markers.
    Renamed(Vec<String>),
    /// A line traced to one of `added` appears; lines traced to none of
    /// `elsewhere` are as they were, separators aside ([`set_aside`]).
    Added {
        added: Vec<String>,
        elsewhere: Vec<String>,
    },
    /// Lines traced to none of `elsewhere` are as they were, separators
    /// aside ([`set_aside`]).
    Removed { elsewhere: Vec<String> },
}

/// One probe: a changed copy of the model and what the output must do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Probe {
    /// What it changes, for the report: `relabel`, `rename`,
    /// `add ui:Page`, `remove ui:Page`.
    pub name: String,
    /// The changes.
    pub edits: Vec<Edit>,
    expect: Expect,
}

/// Fresh words `stem` + a number, as many as `count`, all of one length
/// (so that none is inside another) and found nowhere in `taken`, in any
/// case.
fn fresh_words(stem: &str, count: usize, taken: &str) -> Vec<String> {
    let width = count.to_string().len().max(2);
    let taken = taken.to_lowercase();
    let mut stem = stem.to_owned();
    while taken.contains(&stem.to_lowercase()) {
        stem.push('x');
    }
    (1..=count).map(|i| format!("{stem}{i:0width$}")).collect()
}

/// `fresh` in the case `old` starts with, so that a value that names
/// something (a lower-case path or attribute name, a capitalised entity
/// name) keeps to its kind's pattern.
fn cased_like(old: &str, fresh: &str) -> String {
    if old.chars().next().is_some_and(char::is_lowercase) {
        fresh.to_lowercase()
    } else {
        fresh.to_owned()
    }
}

/// Whether `lower` (a reference, lower-cased) holds `value` in some
/// form: as written or cased otherwise, or its words (`ExpenseReport`:
/// expense, report) joined by `_`, `-` or nothing.
fn shows_in_some_form(lower: &str, value: &str) -> bool {
    let words: Vec<String> = shown::words(value)
        .iter()
        .map(|w| w.to_lowercase())
        .collect();
    lower.contains(&value.to_lowercase())
        || [words.join("_"), words.join("-"), words.concat()]
            .iter()
            .any(|form| !form.is_empty() && lower.contains(form.as_str()))
}

/// The values the reference shows that a change keeps: every literal of
/// a named element the reference holds (in some form when `loose`), but
/// for `changed` (element, value) pairs.
fn kept_values(
    model: &Model,
    reference: &str,
    changed: &BTreeSet<(String, String)>,
    loose: bool,
) -> Vec<(String, Swap)> {
    let lower = reference.to_lowercase();
    model
        .literal_values()
        .into_iter()
        .filter(|(element, _, value)| {
            value.trim().chars().count() >= 2
                && if loose {
                    shows_in_some_form(&lower, value)
                } else {
                    reference.contains(value.as_str())
                }
                && !changed.contains(&(element.clone(), value.clone()))
        })
        .map(|(element, _, value)| (element, Swap::kept(&value)))
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect()
}

/// The probes for `model` and a run on it (`base`) that printed
/// `reference`.
pub fn plan(model: &Model, base: &Snapshot, reference: &str) -> Vec<Probe> {
    let mut probes = Vec::new();
    // relabel: the labels the reference cites, each distinct label one
    // fresh word (elements sharing a label share it).
    let cited: Vec<&str> = model
        .labels()
        .iter()
        .map(|(_, label)| label.as_str())
        .filter(|label| label.trim().chars().count() >= 2 && reference.contains(label))
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    if !cited.is_empty() {
        let fresh: BTreeMap<&str, String> = cited
            .iter()
            .copied()
            .zip(fresh_words("Relabel", cited.len(), reference))
            .collect();
        let mut edits = Vec::new();
        let mut values = Vec::new();
        let mut changed = BTreeSet::new();
        for (iri, label) in model.labels() {
            if let Some(new) = fresh.get(label.as_str()) {
                edits.push(Edit::Relabel {
                    iri: iri.clone(),
                    label: new.clone(),
                });
                values.push((
                    iri.clone(),
                    Swap {
                        old: label.clone(),
                        new: new.clone(),
                    },
                ));
                changed.insert((iri.clone(), label.clone()));
            }
        }
        values.extend(kept_values(model, reference, &changed, true));
        probes.push(Probe {
            name: "relabel".into(),
            edits,
            expect: Expect::Shows {
                values,
                near: None,
                loose: true,
            },
        });
    }
    let elements: Vec<String> = base
        .iter()
        .flat_map(|o| o.lines.iter().flat_map(|(_, terms)| terms.iter()))
        .filter(|t| model.is_element(t))
        .cloned()
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    // Printed in some form: an entity's name may be printed lower-cased.
    let lower = reference.to_lowercase();
    let printed: Vec<(String, String, String)> = model
        .literal_values()
        .into_iter()
        .filter(|(element, property, value)| {
            property != RDFS_LABEL
                && telling(value)
                && elements.binary_search(element).is_ok()
                && shows_in_some_form(&lower, value)
        })
        .collect();
    if !printed.is_empty() {
        let fresh: Vec<String> = fresh_words("Value", printed.len(), reference)
            .iter()
            .zip(&printed)
            .map(|(fresh, (_, _, old))| cased_like(old, fresh))
            .collect();
        let changed: BTreeSet<(String, String)> = printed
            .iter()
            .map(|(e, _, v)| (e.clone(), v.clone()))
            .collect();
        let mut values: Vec<(String, Swap)> = printed
            .iter()
            .zip(&fresh)
            .map(|((e, _, old), new)| {
                (
                    e.clone(),
                    Swap {
                        old: old.clone(),
                        new: new.clone(),
                    },
                )
            })
            .collect();
        values.extend(kept_values(model, reference, &changed, false));
        let near = elements
            .iter()
            .map(|e| (e.clone(), model.neighbours(e)))
            .collect();
        probes.push(Probe {
            name: "revalue".into(),
            edits: printed
                .iter()
                .zip(&fresh)
                .map(|((e, p, _), new)| Edit::SetValue {
                    iri: e.clone(),
                    property: p.clone(),
                    value: new.clone(),
                })
                .collect(),
            expect: Expect::Shows {
                values,
                near: Some(near),
                loose: false,
            },
        });
    }
    if !elements.is_empty() {
        let count = elements.len();
        let mut edits = Vec::new();
        let mut markers = Vec::new();
        for (i, iri) in elements.iter().enumerate() {
            // Reversed: the first IRI gets the highest number.
            let marker = format!("r{:02}_", count - i);
            let (ns, local) = split_iri(iri);
            edits.push(Edit::Rename {
                from: iri.clone(),
                to: format!("{ns}{marker}{local}"),
            });
            markers.push(marker);
        }
        probes.push(Probe {
            name: "rename".into(),
            edits,
            expect: Expect::Renamed(markers),
        });
    }
    let enumerated = enumerated_properties(model);
    let types: BTreeSet<String> = elements.iter().flat_map(|e| model.types_of(e)).collect();
    for (i, class) in types.iter().enumerate() {
        let instances = model.instances_of(class);
        if instances.len() < 2 {
            continue;
        }
        // Only an element the reference shows: one it leaves out may be
        // filtered out, and then its copy would be too.
        let Some(sibling) = instances.iter().rev().find(|s| elements.contains(s)) else {
            continue;
        };
        let shown = model.compact(class);
        let owned = model.children(sibling);
        let group: Vec<String> = std::iter::once(sibling.clone())
            .chain(owned.iter().cloned())
            .collect();
        let containers: Vec<String> = model
            .containers(sibling)
            .into_iter()
            .map(|(s, _)| s)
            .collect();
        let linked: BTreeSet<String> = group
            .iter()
            .flat_map(|e| model.neighbours(e))
            .chain(containers.iter().cloned())
            .collect();
        let (iris, values) = clone_of(model, &group, i + 1, &enumerated, reference);
        let added: Vec<String> = iris.iter().map(|(_, new)| new.clone()).collect();
        // The elements copied stay as they were: a filter that let one
        // copy in instead of its original shows here.
        let mut elsewhere: BTreeSet<String> = linked.clone();
        elsewhere.extend(added.iter().cloned());
        elsewhere.retain(|e| !group.contains(e));
        probes.push(Probe {
            name: format!("add {shown}"),
            edits: vec![Edit::Clone { iris, values }],
            expect: Expect::Added {
                added,
                elsewhere: elsewhere.into_iter().collect(),
            },
        });
        let mut elsewhere = linked;
        elsewhere.extend(group.iter().cloned());
        probes.push(Probe {
            name: format!("remove {shown}"),
            edits: group
                .iter()
                .map(|iri| Edit::Remove { iri: iri.clone() })
                .collect(),
            expect: Expect::Removed {
                elsewhere: elsewhere.into_iter().collect(),
            },
        });
    }
    probes
}

/// The IRIs and values of a clone of `group` (an element, then what it
/// owns): `<iri>_added`, unused; fresh labels, and fresh values for its
/// telling literals but those of `enumerated` properties.
#[allow(clippy::type_complexity)]
fn clone_of(
    model: &Model,
    group: &[String],
    probe: usize,
    enumerated: &BTreeSet<String>,
    reference: &str,
) -> (Vec<(String, String)>, Vec<(String, String, String)>) {
    let iris = group
        .iter()
        .map(|iri| {
            let mut new = format!("{iri}_added");
            while model.mentions(&new) {
                new.push('_');
            }
            (iri.clone(), new)
        })
        .collect();
    let literals: BTreeMap<(String, String), String> = model
        .literal_values()
        .into_iter()
        .filter(|(e, p, v)| {
            group.contains(e) && (p == RDFS_LABEL || (telling(v) && !enumerated.contains(p)))
        })
        .map(|(e, p, v)| ((e, p), v))
        .collect();
    let fresh = fresh_words(&format!("Added{probe:02}v"), literals.len(), reference);
    let values = literals
        .into_iter()
        .zip(fresh)
        .map(|(((e, p), old), fresh)| (e, p, cased_like(&old, &fresh)))
        .collect();
    (iris, values)
}

/// The shapes of the UI vocabulary, whose `sh:in` lists name the
/// properties whose values are an enumeration.
const UI_SHAPES: &str = include_str!("../../../vocabulary/ui.shapes.ttl");

/// The properties whose values a filter may test, so that a clone keeps
/// them: those the UI vocabulary's shapes enumerate, and those two
/// elements of one type give the same value in `model`.
fn enumerated_properties(model: &Model) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    if let Ok(shapes) = Model::parse("ui.shapes.ttl", UI_SHAPES) {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        let answer = shapes.query(
            "SELECT DISTINCT ?p WHERE { ?s sh:path ?p ; sh:in ?values }",
            deadline,
            1 << 20,
        );
        if let Ok(answer) = answer
            && let Ok(json) = serde_json::from_str::<serde_json::Value>(&answer)
        {
            for row in json["results"]["bindings"].as_array().into_iter().flatten() {
                if let Some(p) = row["p"]["value"].as_str() {
                    found.insert(p.to_owned());
                }
            }
        }
    }
    let mut seen: BTreeMap<(Vec<String>, String, String), usize> = BTreeMap::new();
    for (element, property, value) in model.literal_values() {
        *seen
            .entry((model.types_of(&element), property, value))
            .or_default() += 1;
    }
    found.extend(
        seen.into_iter()
            .filter(|(_, n)| *n >= 2)
            .map(|((_, property, _), _)| property),
    );
    found
}

const RDFS_LABEL: &str = "http://www.w3.org/2000/01/rdf-schema#label";

/// Whether a literal value tells where it was printed: three characters
/// or more, and not a number or a boolean, which templates print often
/// for other reasons.
pub fn telling(value: &str) -> bool {
    value.trim().chars().count() >= 3
        && !value
            .chars()
            .all(|c| c.is_ascii_digit() || matches!(c, '.' | '-' | '+' | 'e' | 'E'))
        && value != "true"
        && value != "false"
}

/// (namespace, local name): split after the last `#`, `/` or `:`.
fn split_iri(iri: &str) -> (&str, &str) {
    let at = iri.rfind(['#', '/', ':']).map_or(0, |i| i + 1);
    iri.split_at(at)
}

/// Whether the output on the changed model (`probed`: the run's
/// snapshot, or why it failed) follows `probe`; the first line that does
/// not, else `None`.
pub fn judge(probe: &Probe, base: &Snapshot, probed: Result<&Snapshot, &str>) -> Option<String> {
    let probed = match probed {
        Ok(probed) => probed,
        Err(why) => return Some(format!("the generator failed on the changed model: {why}")),
    };
    let paths = |s: &Snapshot| s.iter().map(|o| o.path.clone()).collect::<Vec<_>>();
    if base.len() != probed.len() {
        return Some(format!(
            "the outputs changed from {:?} to {:?}",
            paths(base),
            paths(probed)
        ));
    }
    for (old, new) in base.iter().zip(probed) {
        if let Some(why) = judge_output(&probe.expect, old, new) {
            return Some(format!("{}: {why}", new.path));
        }
    }
    None
}

fn judge_output(expect: &Expect, old: &OutputLines, new: &OutputLines) -> Option<String> {
    let texts = |o: &OutputLines| o.lines.iter().map(|(t, _)| t.clone()).collect::<Vec<_>>();
    match expect {
        Expect::Shows {
            values,
            near,
            loose,
        } => {
            let news = texts(new);
            if old.lines.len() != news.len() {
                return Some(format!(
                    "has {} lines instead of {}: changing labels or values must not add or drop lines",
                    news.len(),
                    old.lines.len()
                ));
            }
            let global: Vec<&Swap> = values.iter().map(|(_, s)| s).collect();
            let all_forms = near.is_none().then(|| shown::forms(&global, *loose));
            old.lines.iter().zip(&news).enumerate().find_map(|(i, ((text, terms), got))| {
                let forms = match (&all_forms, near) {
                    (Some(forms), _) => forms.clone(),
                    (None, Some(near)) => {
                        let around: BTreeSet<&str> = terms
                            .iter()
                            .flat_map(|t| near.get(t).into_iter().flatten())
                            .map(String::as_str)
                            .collect();
                        let swaps: Vec<&Swap> = values
                            .iter()
                            .filter(|(e, s)| {
                                terms.contains(e) || (s.old != s.new && around.contains(e.as_str()))
                            })
                            .map(|(_, s)| s)
                            .collect();
                        shown::forms(&swaps, *loose)
                    }
                    (None, None) => Vec::new(),
                };
                let pieces = shown::pattern(text, &forms);
                (!shown::shows(&pieces, got)).then(|| {
                    format!(
                        "line {} should read {:?} with the new values where the old ones were shown, but reads {got:?}",
                        i + 1,
                        shown::expected(&pieces)
                    )
                })
            })
        }
        Expect::Renamed(markers) => {
            let (old, new) = (texts(old), texts(new));
            if old.len() != new.len() {
                return Some(format!(
                    "has {} lines instead of {}: renaming IRIs must not add or drop lines",
                    new.len(),
                    old.len()
                ));
            }
            old.iter().zip(&new).enumerate().find_map(|(i, (o, n))| {
                let lower = n.to_lowercase();
                (o != n && !markers.iter().any(|m| lower.contains(m.as_str()))).then(|| {
                    format!(
                        "line {} changed from {o:?} to {n:?} though it prints no IRI: does the order or the text follow the IRIs?",
                        i + 1
                    )
                })
            })
        }
        Expect::Added { added, elsewhere } => {
            if !new
                .lines
                .iter()
                .any(|(_, terms)| terms.iter().any(|t| added.contains(t)))
            {
                return Some(format!(
                    "no line is traced to the added element <{}>: is a list of its kind read from the model?",
                    added.first().map_or("", String::as_str)
                ));
            }
            unchanged_elsewhere(old, new, elsewhere)
        }
        Expect::Removed { elsewhere } => unchanged_elsewhere(old, new, elsewhere),
    }
}

/// `line` as the lines of other elements are compared: without the
/// punctuation and whitespace at its ends and with each run of digits
/// read as `#`. A list computes those from its neighbours (a comma after
/// all but the last, ` {` after the last, a position, a count); they are
/// not what an element shows.
fn set_aside(line: &str) -> String {
    let trimmed = line.trim_matches(|c: char| !c.is_alphanumeric());
    let mut out = String::with_capacity(trimmed.len());
    for c in trimmed.chars() {
        if !c.is_ascii_digit() {
            out.push(c);
        } else if !out.ends_with('#') {
            out.push('#');
        }
    }
    out
}

/// Lines traced to none of `elsewhere` (blank and separator-only lines
/// left out, each [`set_aside`]) are the same before and after.
fn unchanged_elsewhere(
    old: &OutputLines,
    new: &OutputLines,
    elsewhere: &[String],
) -> Option<String> {
    let kept = |o: &OutputLines| -> Vec<(String, String)> {
        o.lines
            .iter()
            .filter(|(_, terms)| !terms.iter().any(|t| elsewhere.contains(t)))
            .map(|(t, _)| (set_aside(t), t.clone()))
            .filter(|(t, _)| !t.is_empty())
            .collect()
    };
    let (old, new) = (kept(old), kept(new));
    let compared =
        |lines: &[(String, String)]| lines.iter().map(|(c, _)| c.clone()).collect::<Vec<_>>();
    first_difference(&compared(&old), &compared(&new)).map(|(i, _, _)| {
        let whole = |lines: &[(String, String)]| {
            lines
                .get(i - 1)
                .map_or_else(|| "<none>".to_owned(), |(_, t)| t.clone())
        };
        format!(
            "the line {:?}, traced to neither the changed element, what it owns, its containers nor what it is linked with, became {:?}",
            whole(&old),
            whole(&new)
        )
    })
}

/// The first (1-based index, expected, got) where two lists differ; a
/// missing line reads as `<none>`.
fn first_difference(expected: &[String], got: &[String]) -> Option<(usize, String, String)> {
    let none = || "<none>".to_owned();
    (0..expected.len().max(got.len())).find_map(|i| {
        let (e, g) = (expected.get(i), got.get(i));
        (e != g).then(|| {
            (
                i + 1,
                e.cloned().unwrap_or_else(none),
                g.cloned().unwrap_or_else(none),
            )
        })
    })
}

/// A probe's result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProbeOutcome {
    /// The probe's name.
    pub name: String,
    /// Why the output did not follow, if it did not.
    pub failure: Option<String>,
    /// What changed in the output, for a person to review: `path: - old`
    /// and `path: + new` lines, at most [`CHANGES_SHOWN`].
    pub changes: Vec<String>,
}

/// The most changed lines a probe's outcome keeps.
pub const CHANGES_SHOWN: usize = 8;

/// The lines only `old` has and those only `new` has, as `- ` and `+ `
/// lines prefixed with the output's path; blank lines left out.
fn changes(old: &Snapshot, new: &Snapshot) -> Vec<String> {
    let mut out = Vec::new();
    for (o, n) in old.iter().zip(new) {
        let mut only_new: Vec<&str> = n.lines.iter().map(|(t, _)| t.as_str()).collect();
        let mut only_old = Vec::new();
        for (text, _) in &o.lines {
            match only_new.iter().position(|t| t == text) {
                Some(at) => {
                    only_new.remove(at);
                }
                None => only_old.push(text.as_str()),
            }
        }
        let keep = |t: &&&str| !t.trim().is_empty();
        out.extend(
            only_old
                .iter()
                .filter(keep)
                .map(|t| format!("{}: - {t}", n.path)),
        );
        out.extend(
            only_new
                .iter()
                .filter(keep)
                .map(|t| format!("{}: + {t}", n.path)),
        );
    }
    out.truncate(CHANGES_SHOWN);
    out
}

/// Runs every probe of `generator` on changed copies of `model`; `base` is
/// its run on `model` itself.
pub fn run(
    runtime: &Runtime,
    generator: &LoadedGenerator,
    model: &Model,
    limits: &Limits,
    base: &GeneratorRun,
) -> Vec<ProbeOutcome> {
    let base = snapshot(base);
    let printed: String = base
        .iter()
        .flat_map(|o| o.lines.iter().map(|(t, _)| format!("{t}\n")))
        .collect();
    plan(model, &base, &printed)
        .into_iter()
        .map(|probe| {
            let probed = model
                .edited(&probe.edits)
                .map_err(|e| e.to_string())
                .and_then(|changed| {
                    runtime
                        .run_reporting(generator, &Arc::new(changed), limits)
                        .map(|r| snapshot(&r))
                        .map_err(|e| e.to_string())
                });
            let failure = judge(&probe, &base, probed.as_ref().map_err(String::as_str));
            ProbeOutcome {
                name: probe.name,
                failure,
                changes: probed.map(|p| changes(&base, &p)).unwrap_or_default(),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    fn output(lines: &[(&str, &[&str])]) -> Snapshot {
        vec![OutputLines {
            path: "o.html".into(),
            lines: lines
                .iter()
                .map(|(t, terms)| {
                    (
                        (*t).to_owned(),
                        terms.iter().map(|s| (*s).to_owned()).collect(),
                    )
                })
                .collect(),
        }]
    }

    fn probe(expect: Expect) -> Probe {
        Probe {
            name: "p".into(),
            edits: Vec::new(),
            expect,
        }
    }

    fn swap(old: &str, new: &str) -> Swap {
        Swap {
            old: old.into(),
            new: new.into(),
        }
    }

    #[test]
    fn the_changes_a_person_reviews_are_the_lines_each_side_alone_has() {
        let old = output(&[("<h1>Chat</h1>", &[]), ("<li>A</li>", &[]), ("", &[])]);
        let new = output(&[("<h1>Relabel01</h1>", &[]), ("<li>A</li>", &[]), ("", &[])]);
        assert_eq!(
            changes(&old, &new),
            ["o.html: - <h1>Chat</h1>", "o.html: + <h1>Relabel01</h1>"]
        );
        assert!(changes(&old, &old).is_empty());
    }

    #[test]
    fn fresh_words_have_one_length_and_are_nowhere_in_the_reference() {
        assert_eq!(
            fresh_words("Value", 3, ""),
            ["Value01", "Value02", "Value03"]
        );
        assert_eq!(fresh_words("Value", 100, "")[99], "Value100");
        assert_eq!(fresh_words("Value", 100, "")[0], "Value001");
        assert_eq!(fresh_words("Value", 1, "<input value=x>"), ["Valuex01"]);
    }

    #[test]
    fn each_expectation_accepts_a_following_output_and_names_the_line_that_does_not() {
        let base = output(&[
            ("<h1>Chat</h1>", &["urn:app"]),
            ("<li>A,</li>", &["urn:a"]),
            ("</ul>", &[]),
        ]);
        let global = |values: Vec<(&str, Swap)>| Expect::Shows {
            values: values.into_iter().map(|(e, s)| (e.to_owned(), s)).collect(),
            near: None,
            loose: true,
        };
        let traced = |values: Vec<(&str, Swap)>| Expect::Shows {
            values: values.into_iter().map(|(e, s)| (e.to_owned(), s)).collect(),
            near: Some(BTreeMap::from([(
                "urn:a".to_owned(),
                vec!["urn:b".to_owned()],
            )])),
            loose: false,
        };
        let cases: Vec<(Expect, Snapshot, Option<&str>)> = vec![
            (
                global(vec![("urn:app", swap("Chat", "Relabel01"))]),
                output(&[
                    ("<h1>Relabel01</h1>", &["urn:app"]),
                    ("<li>A,</li>", &["urn:a"]),
                    ("</ul>", &[]),
                ]),
                None,
            ),
            (
                global(vec![("urn:app", swap("Chat", "Relabel01"))]),
                base.clone(),
                Some("o.html: line 1 should read \"<h1>Relabel01</h1>\""),
            ),
            (
                Expect::Renamed(vec!["r01_".into()]),
                output(&[
                    ("<h1>Chat</h1>", &["urn:app"]),
                    ("<li id=\"R01_a\">A,</li>", &["urn:a"]),
                    ("</ul>", &[]),
                ]),
                None,
            ),
            (
                // A value of an element the line's element is linked with.
                traced(vec![("urn:b", swap("A", "Value01"))]),
                output(&[
                    ("<h1>Chat</h1>", &["urn:app"]),
                    ("<li>Value01,</li>", &["urn:a"]),
                    ("</ul>", &[]),
                ]),
                None,
            ),
            (
                // An element the line is not traced to, nor linked with.
                traced(vec![("urn:x", swap("A", "Value01"))]),
                output(&[
                    ("<h1>Chat</h1>", &["urn:app"]),
                    ("<li>Value01,</li>", &["urn:a"]),
                    ("</ul>", &[]),
                ]),
                Some("line 2 should read \"<li>A,</li>\""),
            ),
            (
                Expect::Renamed(vec!["r01_".into()]),
                output(&[
                    ("<h1>Chat</h1>", &["urn:app"]),
                    ("<li>B,</li>", &["urn:a"]),
                    ("</ul>", &[]),
                ]),
                Some(
                    "line 2 changed from \"<li>A,</li>\" to \"<li>B,</li>\" though it prints no IRI",
                ),
            ),
            (
                Expect::Renamed(vec!["r01_".into()]),
                output(&[("<h1>Chat</h1>", &["urn:app"])]),
                Some("has 1 lines instead of 3"),
            ),
            (
                Expect::Added {
                    added: vec!["urn:new".into(), "urn:new-part".into()],
                    elsewhere: vec!["urn:new".into(), "urn:new-part".into(), "urn:app".into()],
                },
                output(&[
                    ("<h1>Chat</h1>", &["urn:app"]),
                    ("<li>A,</li>", &["urn:a"]),
                    ("<li>Added01</li>", &["urn:new-part"]),
                    ("</ul>", &[]),
                ]),
                None,
            ),
            (
                Expect::Added {
                    added: vec!["urn:new".into()],
                    elsewhere: vec!["urn:new".into()],
                },
                base.clone(),
                Some("no line is traced to the added element <urn:new>"),
            ),
            (
                Expect::Added {
                    added: vec!["urn:new".into()],
                    elsewhere: vec!["urn:new".into()],
                },
                output(&[
                    ("<h1>Chat</h1>", &["urn:app"]),
                    ("<li>Added01</li>", &["urn:new"]),
                    ("<li>A, again</li>", &["urn:a"]),
                    ("</ul>", &[]),
                ]),
                Some(
                    "the line \"<li>A,</li>\", traced to neither the changed element, what it owns, its containers nor what it is linked with, became \"<li>A, again</li>\"",
                ),
            ),
            (
                // The comma after the element that went is set aside.
                Expect::Removed {
                    elsewhere: vec!["urn:b".into()],
                },
                output(&[
                    ("<h1>Chat</h1>", &["urn:app"]),
                    ("<li>A</li>", &["urn:a"]),
                    ("</ul>", &[]),
                ]),
                Some("the line \"<li>A,</li>\""),
            ),
            (
                Expect::Removed {
                    elsewhere: vec!["urn:a".into()],
                },
                output(&[("<h1>Chat</h1>", &["urn:app"]), ("</ul>", &[])]),
                None,
            ),
            (
                Expect::Removed {
                    elsewhere: vec!["urn:a".into()],
                },
                output(&[
                    ("<h1>Chat</h1>", &["urn:app"]),
                    ("<li>A</li>", &[]),
                    ("</ul>", &[]),
                ]),
                Some("the line \"</ul>\", traced to neither"),
            ),
        ];
        for (expect, probed, failure) in cases {
            let judged = judge(&probe(expect.clone()), &base, Ok(&probed));
            match failure {
                None => assert_eq!(judged, None, "{expect:?}"),
                Some(part) => {
                    let judged = judged.unwrap_or_else(|| panic!("{expect:?} accepted {probed:?}"));
                    assert!(judged.contains(part), "{judged}\n  lacks {part}");
                }
            }
        }
        assert!(
            judge(
                &probe(Expect::Removed { elsewhere: vec![] }),
                &base,
                Err("boom")
            )
            .unwrap()
            .contains("failed on the changed model: boom")
        );
    }

    #[test]
    fn separators_positions_and_counts_are_set_aside_between_elements() {
        assert_eq!(set_aside("  \"conversations\","), "conversations");
        assert_eq!(set_aside(".state-returned {"), "state-returned");
        assert_eq!(set_aside("| a |"), "a");
        assert_eq!(set_aside("3. Thread (of 12)"), "#. Thread (of #");
        assert_eq!(set_aside(" ); "), "");
    }

    #[test]
    fn the_plan_derives_each_probe_from_the_model_and_the_view() {
        let model = Model::parse(
            "m.ttl",
            r#"@prefix ui: <https://w3id.org/seams/ui#> .
               @prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
               @prefix ex: <https://example.org/x#> .
               ex:app a ui:Application ; rdfs:label "Chat" ; ui:page ex:a, ex:b .
               ex:a a ui:Page ; rdfs:label "Alpha" ; ui:path "alpha" ; ui:order 1 ; ui:contains ex:l .
               ex:b a ui:Page ; rdfs:label "Beta" ; ui:path "beta" ; ui:contains ex:f, ex:g .
               ex:l a ui:List ; rdfs:label "List" .
               ex:f a ui:Form ; rdfs:label "F" . ex:g a ui:Form .
            "#,
        )
        .unwrap();
        let x = |l: &str| format!("https://example.org/x#{l}");
        let base = output(&[
            ("<h1>Chat</h1>", &[x("app").as_str()]),
            (
                "<li><a href=\"alpha.html\">Alpha</a></li>",
                &[x("a").as_str()],
            ),
            ("<li>Beta</li>", &[x("b").as_str()]),
        ]);
        let probes = plan(
            &model,
            &base,
            "<h1>Chat</h1>\n<li><a href=\"alpha.html\">Alpha</a></li>\n<li>Beta</li>\n",
        );
        let names: Vec<&str> = probes.iter().map(|p| p.name.as_str()).collect();
        // Application has one instance: neither added nor removed.
        assert_eq!(
            names,
            [
                "relabel",
                "revalue",
                "rename",
                "add ui:Page",
                "remove ui:Page"
            ]
        );
        assert_eq!(probes[0].edits.len(), 3, "Chat, Alpha, Beta; not List");
        // The path is printed; the order (a number) is not telling.
        assert_eq!(
            probes[1].edits,
            [
                Edit::SetValue {
                    iri: x("a"),
                    property: "https://w3id.org/seams/ui#path".into(),
                    value: "value01".into()
                },
                // Shown in some form: "Beta".
                Edit::SetValue {
                    iri: x("b"),
                    property: "https://w3id.org/seams/ui#path".into(),
                    value: "value02".into()
                }
            ]
        );
        assert_eq!(
            probes[2].edits[0],
            Edit::Rename {
                from: x("a"),
                to: x("r03_a")
            },
            "reversed: the first IRI gets the highest number"
        );
        // The last page shown, with the forms it owns, fresh labels and
        // a fresh path.
        assert_eq!(
            probes[3].edits,
            [Edit::Clone {
                iris: vec![
                    (x("b"), x("b_added")),
                    (x("f"), x("f_added")),
                    (x("g"), x("g_added"))
                ],
                values: vec![
                    (x("b"), RDFS_LABEL.into(), "Added02v01".into()),
                    (
                        x("b"),
                        "https://w3id.org/seams/ui#path".into(),
                        "added02v02".into()
                    ),
                    (x("f"), RDFS_LABEL.into(), "Added02v03".into()),
                ]
            }]
        );
        assert_eq!(
            probes[4].edits,
            [
                Edit::Remove { iri: x("b") },
                Edit::Remove { iri: x("f") },
                Edit::Remove { iri: x("g") }
            ]
        );
        assert_eq!(
            probes[4].expect,
            Expect::Removed {
                elsewhere: vec![x("app"), x("b"), x("f"), x("g")]
            }
        );
    }

    // The five refusals of correct generators seen with a live model,
    // each now accepted, and each beside the wrong generator its probe is
    // there to catch, still refused. A generator here is a function of
    // the model, as a drafted extract and template are.

    type Generator = fn(&Model) -> Snapshot;

    fn select(model: &Model, sparql: &str) -> Vec<BTreeMap<String, String>> {
        let answer = model
            .query(sparql, Instant::now() + Duration::from_secs(30), 1 << 24)
            .unwrap();
        let json: serde_json::Value = serde_json::from_str(&answer).unwrap();
        json["results"]["bindings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|row| {
                row.as_object()
                    .unwrap()
                    .iter()
                    .map(|(k, v)| (k.clone(), v["value"].as_str().unwrap().to_owned()))
                    .collect()
            })
            .collect()
    }

    fn lines(lines: Vec<(String, Vec<String>)>) -> Snapshot {
        vec![OutputLines {
            path: "out.txt".into(),
            lines,
        }]
    }

    /// The first probe `generator` fails on `model`, with why.
    fn refusal(model: &Model, generator: Generator) -> Option<String> {
        let base = generator(model);
        let printed: String = base
            .iter()
            .flat_map(|o| o.lines.iter().map(|(t, _)| format!("{t}\n")))
            .collect();
        let probes = plan(model, &base, &printed);
        assert!(probes.len() >= 4, "{probes:?}");
        probes.iter().find_map(|probe| {
            let changed = model.edited(&probe.edits).unwrap();
            judge(probe, &base, Ok(&generator(&changed)))
                .map(|why| format!("{}: {why}", probe.name))
        })
    }

    fn chat() -> Model {
        Model::parse("chat.ttl", include_str!("../../../examples/chat/model.ttl")).unwrap()
    }

    fn expense() -> Model {
        Model::parse(
            "expense.ttl",
            include_str!("../../../examples/expense/model.ttl"),
        )
        .unwrap()
    }

    fn library() -> Model {
        Model::parse(
            "library.ttl",
            include_str!("../../../examples/library/model.ttl"),
        )
        .unwrap()
    }

    fn capitalised(s: &str) -> String {
        let mut c = s.chars();
        c.next()
            .map(|f| f.to_uppercase().chain(c).collect())
            .unwrap_or_default()
    }

    /// The first refusal: a Python enum per status attribute, only the
    /// attributes that have states.
    fn status_enums(model: &Model, first_only: bool) -> Snapshot {
        let limit = if first_only { "LIMIT 1" } else { "" };
        let mut out = Vec::new();
        for a in select(
            model,
            &format!(
                "SELECT DISTINCT ?a ?name ?o WHERE {{ ?e ui:attribute ?a . ?a ui:name ?name ; ui:state ?s . OPTIONAL {{ ?a ui:order ?o }} }} ORDER BY ?o ?name {limit}"
            ),
        ) {
            out.push((
                format!("class {}(Enum):", capitalised(&a["name"])),
                vec![a["a"].clone()],
            ));
            for s in select(
                model,
                &format!(
                    "SELECT ?s ?name WHERE {{ <{}> ui:state ?s . ?s ui:name ?name ; ui:order ?o }} ORDER BY ?o",
                    a["a"]
                ),
            ) {
                out.push((
                    format!("    {} = \"{}\"", s["name"].to_uppercase(), s["name"]),
                    vec![s["s"].clone(), a["a"].clone()],
                ));
            }
        }
        lines(out)
    }

    #[test]
    fn add_on_a_filtered_list_clones_what_the_element_owns() {
        for model in [expense(), library()] {
            assert_eq!(refusal(&model, |m| status_enums(m, false)), None);
            let wrong = refusal(&model, |m| status_enums(m, true)).expect("refused");
            assert!(wrong.starts_with("add ui:Attribute: "), "{wrong}");
        }
    }

    /// The second: each form's title and submit button.
    fn forms(model: &Model, submit_from_title: bool) -> Snapshot {
        let mut out = Vec::new();
        for f in select(
            model,
            "SELECT ?f ?label ?submit WHERE { ?p ui:contains ?f . ?f a ui:Form ; rdfs:label ?label ; ui:submitLabel ?submit ; ui:order ?o . ?p ui:order ?po } ORDER BY ?po ?o",
        ) {
            let submit = if submit_from_title {
                f["label"].split(' ').next().unwrap().to_owned()
            } else {
                f["submit"].clone()
            };
            out.push((format!("<h2>{}</h2>", f["label"]), vec![f["f"].clone()]));
            out.push((format!("<button>{submit}</button>"), vec![f["f"].clone()]));
        }
        lines(out)
    }

    #[test]
    fn revalue_leaves_a_longer_value_that_holds_the_changed_one() {
        for model in [chat(), library()] {
            assert_eq!(refusal(&model, |m| forms(m, false)), None);
            let wrong = refusal(&model, |m| forms(m, true)).expect("refused");
            assert!(wrong.contains("<button>"), "{wrong}");
        }
    }

    /// The third and fifth: a SQL schema, a table per entity, a column per
    /// attribute, a reference per relation to the linked entity's table.
    fn schema(model: &Model, wrong: Option<&str>) -> Snapshot {
        let mut out = Vec::new();
        for e in select(
            model,
            "SELECT ?e ?name WHERE { ?e a ui:Entity ; ui:name ?name ; ui:order ?o } ORDER BY ?o",
        ) {
            out.push((
                format!("CREATE TABLE {} (", e["name"].to_lowercase()),
                vec![e["e"].clone()],
            ));
            for a in select(
                model,
                &format!(
                    "SELECT ?a ?name WHERE {{ <{}> ui:attribute ?a . ?a ui:name ?name . OPTIONAL {{ ?a ui:order ?o }} }} ORDER BY ?o",
                    e["e"]
                ),
            ) {
                let traced = if wrong == Some("columns traced to the first") {
                    // The model's first attribute, whatever entity it is of.
                    select(
                        model,
                        "SELECT ?a WHERE { ?e ui:attribute ?a ; ui:order ?o } ORDER BY ?o LIMIT 1",
                    )[0]["a"]
                        .clone()
                } else {
                    a["a"].clone()
                };
                out.push((format!("  {} TEXT,", a["name"]), vec![traced]));
            }
            for r in select(
                model,
                &format!(
                    "SELECT ?r ?name ?t ?target ?tlabel WHERE {{ <{}> ui:relation ?r . ?r ui:name ?name ; ui:relatedEntity ?t . ?t ui:name ?target ; rdfs:label ?tlabel }} ORDER BY ?name",
                    e["e"]
                ),
            ) {
                let target = if wrong == Some("target from its label") {
                    r["tlabel"].to_lowercase()
                } else {
                    r["target"].to_lowercase()
                };
                out.push((
                    format!("  {}_id INTEGER REFERENCES {target}(id),", r["name"]),
                    vec![r["r"].clone(), r["t"].clone()],
                ));
            }
            out.push((");".to_owned(), vec![]));
        }
        lines(out)
    }

    #[test]
    fn revalue_accepts_a_value_derived_from_a_linked_element() {
        for (model, shown) in [
            (chat(), "REFERENCES conversation(id)"),
            (library(), "REFERENCES book(id)"),
        ] {
            assert_eq!(refusal(&model, |m| schema(m, None)), None);
            let wrong =
                refusal(&model, |m| schema(m, Some("target from its label"))).expect("refused");
            assert!(wrong.starts_with("revalue: "), "{wrong}");
            assert!(wrong.contains(shown), "{wrong}");
        }
    }

    #[test]
    fn remove_takes_what_the_element_owns_with_it() {
        for model in [chat(), expense(), library()] {
            assert_eq!(refusal(&model, |m| schema(m, None)), None);
            let wrong = refusal(&model, |m| schema(m, Some("columns traced to the first")))
                .expect("refused");
            assert!(
                wrong.starts_with("add ") || wrong.starts_with("remove "),
                "{wrong}"
            );
        }
    }

    /// The fourth: the pages' paths as a JSON list, a comma after all but
    /// the last.
    fn paths(model: &Model, traced_to_first: bool) -> Snapshot {
        let pages = select(
            model,
            "SELECT ?p ?path WHERE { ?a a ui:Application ; ui:page ?p . ?p ui:path ?path ; ui:order ?o } ORDER BY ?o",
        );
        let mut out = vec![("[".to_owned(), vec![])];
        for (i, p) in pages.iter().enumerate() {
            let comma = if i + 1 < pages.len() { "," } else { "" };
            let traced = if traced_to_first {
                &pages[0]["p"]
            } else {
                &p["p"]
            };
            out.push((format!("  \"{}\"{comma}", p["path"]), vec![traced.clone()]));
        }
        out.push(("]".to_owned(), vec![]));
        lines(out)
    }

    #[test]
    fn add_and_remove_leave_separators_between_elements_alone() {
        for model in [chat(), expense(), library()] {
            assert_eq!(refusal(&model, |m| paths(m, false)), None);
            let wrong = refusal(&model, |m| paths(m, true)).expect("refused");
            assert!(
                wrong.starts_with("add ui:Page: ") || wrong.starts_with("remove ui:Page: "),
                "{wrong}"
            );
        }
    }
}
