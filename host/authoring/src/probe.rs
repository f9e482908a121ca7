//! The change-the-model gate (ADR-0012's second layer for drafts): a
//! generator that reproduces its reference on one model may still copy it
//! instead of reading it. So it is also run on changed copies of the model,
//! each derived mechanically ([`seams_model::Edit`]), and its output must
//! follow the change:
//!
//! - **relabel**: every label the reference cites gets a fresh string;
//!   the output is the old one with exactly those labels replaced.
//! - **revalue**: every other literal value the reference prints, of an
//!   element in the view, gets a fresh string, one per element and
//!   property; on each line, the values of the elements the line is traced
//!   to are replaced (as whole words), and nothing else changes.
//! - **rename**: every element in the view gets a fresh IRI, in the
//!   reverse order of the old ones; the generator still runs, and only
//!   lines printing IRI-derived text change (an order that followed the
//!   IRIs shows as moved lines).
//! - **add** (per type of the elements in the view that has two or more
//!   instances): the last such element is copied, without its children,
//!   with a fresh IRI and label, into the containers that hold several of
//!   its kind; lines traced to it appear, and no line traced neither to it
//!   nor to its containers changes.
//! - **remove** (same types): that element goes; no line traced neither to
//!   it, its children nor its containers changes.
//!
//! Planning and judging are pure ([`plan`], [`judge`]); [`run`] runs them.

use std::collections::BTreeSet;
use std::sync::Arc;

use seams_model::{Edit, Model};
use seams_runtime::{GeneratorRun, Limits, LoadedGenerator, Runtime};

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
    /// The old output with each (old, new) label replaced.
    Relabelled(Vec<(String, String)>),
    /// Each line with the (old, new) values of the (element, old, new)
    /// entries whose element it is traced to replaced as words.
    Revalued(Vec<(String, String, String)>),
    /// The same lines, but for lines showing one of these markers.
    Renamed(Vec<String>),
    /// Lines traced to `element` appear; lines traced to none of
    /// `elsewhere` are as they were.
    Added {
        element: String,
        elsewhere: Vec<String>,
    },
    /// Lines traced to none of `elsewhere` are as they were.
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

/// The probes for `model` and a run on it (`base`) that printed
/// `reference`.
pub fn plan(model: &Model, base: &Snapshot, reference: &str) -> Vec<Probe> {
    let mut probes = Vec::new();
    // relabel: the labels the reference cites, each distinct label one
    // fresh string (elements sharing a label share it), longest first so
    // that a label inside another is replaced as part of it.
    let mut cited: Vec<&str> = model
        .labels()
        .iter()
        .map(|(_, label)| label.as_str())
        .filter(|label| label.trim().chars().count() >= 2 && reference.contains(label))
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    cited.sort_by(|a, b| b.len().cmp(&a.len()).then(a.cmp(b)));
    if !cited.is_empty() {
        let fresh: Vec<(String, String)> = cited
            .iter()
            .enumerate()
            .map(|(i, old)| ((*old).to_owned(), format!("Relabel{:02}", i + 1)))
            .collect();
        let edits = model
            .labels()
            .iter()
            .filter_map(|(iri, label)| {
                let (_, new) = fresh.iter().find(|(old, _)| old == label)?;
                Some(Edit::Relabel {
                    iri: iri.clone(),
                    label: new.clone(),
                })
            })
            .collect();
        probes.push(Probe {
            name: "relabel".into(),
            edits,
            expect: Expect::Relabelled(fresh),
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
    let printed: Vec<(String, String, String)> = model
        .literal_values()
        .into_iter()
        .filter(|(element, property, value)| {
            property != RDFS_LABEL
                && telling(value)
                && elements.binary_search(element).is_ok()
                && reference.contains(value.as_str())
        })
        .collect();
    if !printed.is_empty() {
        let fresh: Vec<(String, String, String, String)> = printed
            .into_iter()
            .enumerate()
            .map(|(i, (e, p, v))| (e, p, v, format!("Value{:02}", i + 1)))
            .collect();
        probes.push(Probe {
            name: "revalue".into(),
            edits: fresh
                .iter()
                .map(|(e, p, _, new)| Edit::SetValue {
                    iri: e.clone(),
                    property: p.clone(),
                    value: new.clone(),
                })
                .collect(),
            expect: Expect::Revalued(
                fresh
                    .into_iter()
                    .map(|(e, _, old, new)| (e, old, new))
                    .collect(),
            ),
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
    let types: BTreeSet<String> = elements.iter().flat_map(|e| model.types_of(e)).collect();
    for (i, class) in types.iter().enumerate() {
        let instances = model.instances_of(class);
        if instances.len() < 2 {
            continue;
        }
        let Some(sibling) = instances.iter().rev().find(|s| elements.contains(s)) else {
            continue;
        };
        let containers: Vec<String> = model
            .containers(sibling)
            .into_iter()
            .map(|(s, _)| s)
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        let (ns, local) = split_iri(sibling);
        let mut added = format!("{ns}{local}_added");
        while model.mentions(&added) {
            added.push('_');
        }
        let shown = model.compact(class);
        let mut elsewhere = containers.clone();
        elsewhere.push(added.clone());
        probes.push(Probe {
            name: format!("add {shown}"),
            edits: vec![Edit::Copy {
                from: sibling.clone(),
                to: added.clone(),
                label: format!("Added{:02}", i + 1),
            }],
            expect: Expect::Added {
                element: added,
                elsewhere,
            },
        });
        let mut elsewhere = containers;
        elsewhere.push(sibling.clone());
        elsewhere.extend(model.children(sibling));
        probes.push(Probe {
            name: format!("remove {shown}"),
            edits: vec![Edit::Remove {
                iri: sibling.clone(),
            }],
            expect: Expect::Removed { elsewhere },
        });
    }
    probes
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
        Expect::Relabelled(map) => {
            let expected: Vec<String> =
                old.lines.iter().map(|(t, _)| replace_all(t, map)).collect();
            first_difference(&expected, &texts(new)).map(|(n, e, g)| {
                format!("line {n} should read {e:?} with the labels changed, but reads {g:?}")
            })
        }
        Expect::Revalued(values) => {
            let (olds, news) = (texts(old), texts(new));
            if olds.len() != news.len() {
                return Some(format!(
                    "has {} lines instead of {}: changing values must not add or drop lines",
                    news.len(),
                    olds.len()
                ));
            }
            old.lines.iter().zip(&news).enumerate().find_map(|(i, ((text, terms), got))| {
                let mut map: Vec<(String, String)> = values
                    .iter()
                    .filter(|(element, _, _)| terms.contains(element))
                    .map(|(_, o, n)| (o.clone(), n.clone()))
                    .collect();
                map.sort_by(|a, b| b.0.len().cmp(&a.0.len()).then(a.cmp(b)));
                map.dedup();
                // One value of two traced elements, changed two ways:
                // which one the line prints cannot be told.
                if map.windows(2).any(|w| w[0].0 == w[1].0) {
                    return None;
                }
                let expected = replace_words(text, &map);
                (expected != *got).then(|| {
                    format!(
                        "line {} should read {expected:?} with the values of the elements it is traced to changed, but reads {got:?}",
                        i + 1
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
        Expect::Added { element, elsewhere } => {
            if !new.lines.iter().any(|(_, terms)| terms.contains(element)) {
                return Some(format!(
                    "no line is traced to the added element <{element}>: is a list of its kind read from the model?"
                ));
            }
            unchanged_elsewhere(old, new, elsewhere)
        }
        Expect::Removed { elsewhere } => unchanged_elsewhere(old, new, elsewhere),
    }
}

/// Lines traced to none of `elsewhere` (blank lines left out) are the
/// same before and after.
fn unchanged_elsewhere(
    old: &OutputLines,
    new: &OutputLines,
    elsewhere: &[String],
) -> Option<String> {
    let kept = |o: &OutputLines| -> Vec<String> {
        o.lines
            .iter()
            .filter(|(text, terms)| {
                !text.trim().is_empty() && !terms.iter().any(|t| elsewhere.contains(t))
            })
            .map(|(t, _)| t.clone())
            .collect()
    };
    first_difference(&kept(old), &kept(new)).map(|(_, e, g)| {
        format!(
            "the line {e:?}, traced to neither the changed element nor its containers, became {g:?}"
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

/// `text` with every `old` replaced by its `new`, longest first at each
/// position (`map` is sorted longest first).
fn replace_all(text: &str, map: &[(String, String)]) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    'outer: while !rest.is_empty() {
        for (old, new) in map {
            if let Some(after) = rest.strip_prefix(old.as_str()) {
                out.push_str(new);
                rest = after;
                continue 'outer;
            }
        }
        let c = rest.chars().next().expect("not empty");
        out.push(c);
        rest = &rest[c.len_utf8()..];
    }
    out
}

/// `text` with every `old` that stands as a word (no letter or digit on
/// either side) replaced by its `new`, longest first.
fn replace_words(text: &str, map: &[(String, String)]) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    let mut before: Option<char> = None;
    'outer: while !rest.is_empty() {
        if !before.is_some_and(char::is_alphanumeric) {
            for (old, new) in map {
                if let Some(after) = rest.strip_prefix(old.as_str())
                    && !after.chars().next().is_some_and(char::is_alphanumeric)
                {
                    out.push_str(new);
                    rest = after;
                    before = old.chars().next_back();
                    continue 'outer;
                }
            }
        }
        let c = rest.chars().next().expect("not empty");
        out.push(c);
        rest = &rest[c.len_utf8()..];
        before = Some(c);
    }
    out
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
    fn labels_are_replaced_longest_first_at_each_position() {
        let map = vec![
            ("Chat room".to_owned(), "R2".to_owned()),
            ("Chat".to_owned(), "R1".to_owned()),
        ];
        assert_eq!(replace_all("Chat room, Chat, Chats", &map), "R2, R1, R1s");
        assert_eq!(replace_all("héllo Chat", &map), "héllo R1");
        let words = vec![("text".to_owned(), "V1".to_owned())];
        assert_eq!(
            replace_words("type=\"text\" textarea context text", &words),
            "type=\"V1\" textarea context V1"
        );
    }

    #[test]
    fn each_expectation_accepts_a_following_output_and_names_the_line_that_does_not() {
        let base = output(&[
            ("<h1>Chat</h1>", &["urn:app"]),
            ("<li>A</li>", &["urn:a"]),
            ("</ul>", &[]),
        ]);
        let cases: Vec<(Expect, Snapshot, Option<&str>)> = vec![
            (
                Expect::Relabelled(vec![("Chat".into(), "Relabel01".into())]),
                output(&[
                    ("<h1>Relabel01</h1>", &["urn:app"]),
                    ("<li>A</li>", &["urn:a"]),
                    ("</ul>", &[]),
                ]),
                None,
            ),
            (
                Expect::Relabelled(vec![("Chat".into(), "Relabel01".into())]),
                base.clone(),
                Some("o.html: line 1 should read \"<h1>Relabel01</h1>\""),
            ),
            (
                Expect::Renamed(vec!["r01_".into()]),
                output(&[
                    ("<h1>Chat</h1>", &["urn:app"]),
                    ("<li id=\"R01_a\">A</li>", &["urn:a"]),
                    ("</ul>", &[]),
                ]),
                None,
            ),
            (
                Expect::Revalued(vec![
                    ("urn:a".into(), "A".into(), "V1".into()),
                    ("urn:b".into(), "Chat".into(), "V2".into()),
                ]),
                output(&[
                    ("<h1>Chat</h1>", &["urn:app"]),
                    ("<li>V1</li>", &["urn:a"]),
                    ("</ul>", &[]),
                ]),
                None,
            ),
            (
                // Printed another element's value, which happened to be equal.
                Expect::Revalued(vec![
                    ("urn:a".into(), "A".into(), "V1".into()),
                    ("urn:x".into(), "A".into(), "V2".into()),
                ]),
                output(&[
                    ("<h1>Chat</h1>", &["urn:app"]),
                    ("<li>V2</li>", &["urn:a"]),
                    ("</ul>", &[]),
                ]),
                Some(
                    "line 2 should read \"<li>V1</li>\" with the values of the elements it is traced to changed, but reads \"<li>V2</li>\"",
                ),
            ),
            (
                Expect::Renamed(vec!["r01_".into()]),
                output(&[
                    ("<h1>Chat</h1>", &["urn:app"]),
                    ("<li>B</li>", &["urn:a"]),
                    ("</ul>", &[]),
                ]),
                Some(
                    "line 2 changed from \"<li>A</li>\" to \"<li>B</li>\" though it prints no IRI",
                ),
            ),
            (
                Expect::Renamed(vec!["r01_".into()]),
                output(&[("<h1>Chat</h1>", &["urn:app"])]),
                Some("has 1 lines instead of 3"),
            ),
            (
                Expect::Added {
                    element: "urn:new".into(),
                    elsewhere: vec!["urn:new".into(), "urn:app".into()],
                },
                output(&[
                    ("<h1>Chat</h1>", &["urn:app"]),
                    ("<li>A</li>", &["urn:a"]),
                    ("<li>Added01</li>", &["urn:new"]),
                    ("</ul>", &[]),
                ]),
                None,
            ),
            (
                Expect::Added {
                    element: "urn:new".into(),
                    elsewhere: vec!["urn:new".into()],
                },
                base.clone(),
                Some("no line is traced to the added element <urn:new>"),
            ),
            (
                Expect::Added {
                    element: "urn:new".into(),
                    elsewhere: vec!["urn:new".into()],
                },
                output(&[
                    ("<h1>Chat</h1>", &["urn:app"]),
                    ("<li>Added01</li>", &["urn:new"]),
                    ("<li>A, again</li>", &["urn:a"]),
                    ("</ul>", &[]),
                ]),
                Some(
                    "the line \"<li>A</li>\", traced to neither the changed element nor its containers, became \"<li>A, again</li>\"",
                ),
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
    fn the_plan_derives_each_probe_from_the_model_and_the_view() {
        let model = Model::parse(
            "m.ttl",
            r#"@prefix ui: <https://w3id.org/seams/ui#> .
               @prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
               @prefix ex: <https://example.org/x#> .
               ex:app a ui:Application ; rdfs:label "Chat" ; ui:page ex:a, ex:b .
               ex:a a ui:Page ; rdfs:label "Alpha" ; ui:path "alpha" ; ui:order 1 ; ui:contains ex:l .
               ex:b a ui:Page ; rdfs:label "Beta" .
               ex:l a ui:List ; rdfs:label "List" .
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
            [Edit::SetValue {
                iri: x("a"),
                property: "https://w3id.org/seams/ui#path".into(),
                value: "Value01".into()
            }]
        );
        assert_eq!(
            probes[2].edits[0],
            Edit::Rename {
                from: x("a"),
                to: x("r03_a")
            },
            "reversed: the first IRI gets the highest number"
        );
        assert_eq!(
            probes[3].edits,
            [Edit::Copy {
                from: x("b"),
                to: x("b_added"),
                label: "Added02".into()
            }]
        );
        assert_eq!(
            probes[4].expect,
            Expect::Removed {
                elsewhere: vec![x("app"), x("b")]
            }
        );
    }
}
