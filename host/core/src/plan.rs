//! Plan, then apply: what `seams generate` will do to the project's files,
//! decided as a plain value from the audit, before anything is touched.
//! [`crate::apply`] carries it out.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use crate::audit::{Contents, FileAudit, FileState};
use crate::generation::{Generation, SourcedRun};
use crate::inputs::Inputs;
use crate::journal::{
    JOURNAL_VERSION, Journal, JournalDelete, JournalModel, JournalWrite, LockedBytes,
};
use crate::leftovers::Leftovers;
use crate::lock::{LOCK_VERSION, Lock, LockedGenerator, LockedOutput};
use crate::project::{Project, posix};

/// The lock a generation gives. A failed generator keeps its entries from
/// `previous`, since its files were left as they were.
pub(crate) fn lock_for(
    project: &Project,
    inputs: &Inputs,
    generation: &Generation,
    previous: Option<&Lock>,
) -> Lock {
    let out_dir = posix(&project.output_dir);
    // A failed generator's entries are the old ones.
    let failed: Vec<String> = generation.failures.iter().map(|(s, _)| s.label()).collect();
    let kept: Vec<(&LockedGenerator, Vec<&LockedOutput>)> = previous
        .iter()
        .flat_map(|previous| {
            previous
                .generators
                .iter()
                .filter(|g| failed.contains(&g.source))
                .map(|g| {
                    let outputs = previous
                        .outputs
                        .iter()
                        .filter(|o| o.generator == g.name)
                        .collect();
                    (g, outputs)
                })
        })
        .collect();
    // The table of every IRI an output cites, and each one's index. Each
    // run's outputs cite IRIs by their index in the run's own table of
    // terms: each string is compared and hashed once, not once per output
    // citing it, and an output's IRIs become the table's indexes by two
    // array lookups each.
    let cited: Vec<Vec<bool>> = generation
        .runs
        .iter()
        .map(|SourcedRun { run, .. }| {
            let mut cited = vec![false; run.terms.len()];
            for &i in run.outputs.iter().flat_map(|o| &o.sources) {
                if let Some(c) = cited.get_mut(i as usize) {
                    *c = true;
                }
            }
            cited
        })
        .collect();
    let mut iris: BTreeSet<&str> = generation
        .runs
        .iter()
        .zip(&cited)
        .flat_map(|(SourcedRun { run, .. }, cited)| {
            run.terms
                .iter()
                .zip(cited)
                .filter(|(_, cited)| **cited)
                .map(|(term, _)| &**term)
        })
        .collect();
    if let Some(previous) = previous {
        for (_, outputs) in &kept {
            for output in outputs {
                iris.extend(previous.source_iris(output));
            }
        }
    }
    let index: HashMap<&str, u32> = iris
        .iter()
        .enumerate()
        .map(|(i, iri)| (*iri, i as u32))
        .collect();
    let mut lock = Lock {
        lock_version: LOCK_VERSION,
        seams_version: env!("CARGO_PKG_VERSION").to_owned(),
        model_hash: generation.model_hash.clone(),
        manifest_sha256: inputs.stamp.manifest_sha256.clone(),
        model_files: inputs.stamp.model_files.clone(),
        // A failed generator's entries are the old ones: the lock must not
        // claim that this seams.toml was generated, or the next generate
        // would find everything "up to date" and not run it again.
        incomplete: !generation.failures.is_empty(),
        generators: Vec::new(),
        outputs: Vec::new(),
        sources: iris.iter().map(|iri| (*iri).to_owned()).collect(),
    };
    for SourcedRun { source, run, files } in &generation.runs {
        let oci = project
            .generators
            .iter()
            .zip(&inputs.stamp.components)
            .find(|(s, _)| *s == source)
            .and_then(|(_, component)| component.as_ref().ok()?.oci.clone());
        lock.generators.push(LockedGenerator {
            name: run.meta.name.clone(),
            version: run.meta.version.clone(),
            source: source.label(),
            component_sha256: run.component_sha256.clone(),
            oci,
        });
        // Each of the run's terms' index in the table (those cited).
        let at: Vec<u32> = run
            .terms
            .iter()
            .map(|term| index.get(&**term).copied().unwrap_or(u32::MAX))
            .collect();
        // An output's sources are sorted, and so is the table: its indexes
        // ascend. An output and its sidecar share them.
        let sources: Vec<Arc<[u32]>> = run
            .outputs
            .iter()
            .map(|o| {
                o.sources
                    .iter()
                    .filter_map(|&i| at.get(i as usize).copied())
                    .collect()
            })
            .collect();
        for file in files {
            lock.outputs.push(LockedOutput {
                path: format!("{out_dir}/{}", file.path),
                sha256: file.contents.sha256().to_owned(),
                generator: run.meta.name.clone(),
                generator_version: run.meta.version.clone(),
                component_sha256: run.component_sha256.clone(),
                sources: sources[file.output].clone(),
            });
        }
    }
    if let Some(previous) = previous {
        for (generator, outputs) in kept {
            lock.generators.push(generator.clone());
            for output in outputs {
                lock.outputs.push(LockedOutput {
                    sources: previous.source_iris(output).map(|iri| index[iri]).collect(),
                    ..output.clone()
                });
            }
        }
    }
    lock
}

/// Everything a generate will write and delete, and what it refuses to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Plan {
    /// Files to write, output-relative, sorted.
    pub(crate) writes: Vec<(String, Contents)>,
    /// Files to delete, output-relative, sorted.
    pub(crate) deletes: Vec<String>,
    /// Files that already hold what generation gives, output-relative.
    pub(crate) unchanged: Vec<String>,
    /// Edited files the plan would overwrite, output-relative: without
    /// `force`, their presence refuses the whole plan.
    pub(crate) refused_overwrites: Vec<String>,
    /// Edited files no longer generated, which it would delete.
    pub(crate) refused_deletes: Vec<String>,
    /// The record of intent, when the plan writes or deletes any file.
    pub(crate) journal: Option<Journal>,
    /// Whether a journal from an interrupted run is to be removed at the end.
    pub(crate) old_journal: bool,
    /// The new lock's text, when it differs from the lock on disk.
    pub(crate) lock_text: Option<String>,
    /// Temporary files of a killed run, to remove.
    pub(crate) leftovers: Leftovers,
}

/// What the planner is told besides the audits.
pub(crate) struct Context<'a> {
    /// Overwrite and delete edited files.
    pub(crate) force: bool,
    /// The output directory, project-relative, posix: how the lock and the
    /// journal name files.
    pub(crate) out_prefix: &'a str,
    /// The new lock.
    pub(crate) lock: &'a Lock,
    /// The lock the files on disk stand by (recovered after an interrupted
    /// run), if any: the journal names the bytes it records.
    pub(crate) previous: Option<&'a Lock>,
    /// The text of the lock on disk, if any.
    pub(crate) current_lock_text: Option<&'a str>,
    /// Whether an interrupted run left a journal.
    pub(crate) old_journal: bool,
    /// Temporary files of a killed run.
    pub(crate) leftovers: Leftovers,
    /// A write-back's model file, written with the outputs.
    pub(crate) model_write: Option<JournalModel>,
    /// The output a write-back's user edited, output-relative, with the
    /// sha256 of its bytes on disk: it is overwritten with what the edited
    /// model gives, not refused, and the journal vouches for the edited
    /// bytes as its previous ones, so that a run interrupted before the
    /// rename is finished, not refused, by the next.
    pub(crate) overwrite: Option<(&'a str, &'a str)>,
}

/// Decides what to do with every audited file. Pure: reads nothing,
/// writes nothing.
pub(crate) fn plan(audits: Vec<FileAudit>, context: Context<'_>) -> Plan {
    let mut plan = Plan {
        writes: Vec::new(),
        deletes: Vec::new(),
        unchanged: Vec::new(),
        refused_overwrites: Vec::new(),
        refused_deletes: Vec::new(),
        journal: None,
        old_journal: context.old_journal,
        lock_text: None,
        leftovers: context.leftovers,
    };
    for a in audits {
        match (a.state, a.generated) {
            (FileState::HandEdited, Some(_))
                if !context.force && context.overwrite.map(|(path, _)| path) != Some(&a.path) =>
            {
                plan.refused_overwrites.push(a.path)
            }
            (FileState::EditedOrphan, _) if !context.force => plan.refused_deletes.push(a.path),
            (FileState::Missing | FileState::Stale | FileState::HandEdited, Some(contents)) => {
                plan.writes.push((a.path, contents))
            }
            (FileState::Orphan | FileState::EditedOrphan, _) => plan.deletes.push(a.path),
            (FileState::Current | FileState::Unlocked, Some(_)) => plan.unchanged.push(a.path),
            // Gone: only the lock still lists it, and the new lock will not.
            _ => {}
        }
    }
    let shown = |path: &String| format!("{}/{path}", context.out_prefix);
    if !plan.writes.is_empty() || !plan.deletes.is_empty() || context.model_write.is_some() {
        let before: BTreeMap<&str, LockedBytes> = context
            .previous
            .iter()
            .flat_map(|lock| &lock.outputs)
            .map(|o| {
                let bytes = LockedBytes {
                    sha256: o.sha256.clone(),
                    generator: o.generator.clone(),
                };
                (o.path.as_str(), bytes)
            })
            .collect();
        let mut written: BTreeSet<String> = plan.writes.iter().map(|(p, _)| shown(p)).collect();
        // This journal replaces an interrupted run's: what only that one
        // vouched for (a file it wrote that this run leaves as it is) is
        // vouched for here too, or a kill before this run's lock is renamed
        // would leave those bytes in neither record, and the next run
        // would call them edited.
        if context.old_journal {
            written.extend(plan.unchanged.iter().map(shown));
        }
        plan.journal = Some(Journal {
            journal_version: JOURNAL_VERSION,
            writes: context
                .lock
                .outputs
                .iter()
                .filter(|o| written.contains(&o.path))
                .map(|o| JournalWrite {
                    path: o.path.clone(),
                    sha256: o.sha256.clone(),
                    generator: o.generator.clone(),
                    previous: match context.overwrite {
                        Some((path, on_disk)) if o.path == shown(&path.to_owned()) => {
                            Some(LockedBytes {
                                sha256: on_disk.to_owned(),
                                generator: o.generator.clone(),
                            })
                        }
                        _ => before.get(o.path.as_str()).cloned(),
                    },
                })
                .collect(),
            deletes: plan
                .deletes
                .iter()
                .map(|path| {
                    let path = shown(path);
                    let locked = before.get(path.as_str()).cloned();
                    JournalDelete { path, locked }
                })
                .collect(),
            model: context.model_write,
            seal: None,
        });
    }
    let text = context.lock.to_text();
    if context.current_lock_text != Some(text.as_str()) {
        plan.lock_text = Some(text);
    }
    plan
}

impl Plan {
    /// Whether the plan is refused for edited files in its way.
    pub(crate) fn is_refused(&self) -> bool {
        !self.refused_overwrites.is_empty() || !self.refused_deletes.is_empty()
    }
}

/// Every file the runs give, by output-relative path.
pub(crate) fn generated_files(generation: &Generation) -> BTreeMap<String, Contents> {
    generation
        .runs
        .iter()
        .flat_map(|run| &run.files)
        .map(|file| (file.path.clone(), file.contents.clone()))
        .collect()
}

/// The lock's files that the audit compares against, by output-relative
/// path and sha256: all of them but a failed generator's, whose files are
/// left as they are.
///
/// # Errors
///
/// A lock path outside the output directory.
pub(crate) fn locked_files(
    project: &Project,
    generation: &Generation,
    lock: Option<&Lock>,
) -> Result<BTreeMap<String, String>, crate::lock::LockError> {
    let Some(lock) = lock else {
        return Ok(BTreeMap::new());
    };
    let failed: BTreeSet<String> = generation.failures.iter().map(|(s, _)| s.label()).collect();
    let kept: BTreeSet<&str> = lock
        .generators
        .iter()
        .filter(|g| failed.contains(&g.source))
        .map(|g| g.name.as_str())
        .collect();
    lock.outputs
        .iter()
        .filter(|o| !kept.contains(o.generator.as_str()))
        .map(|o| {
            Ok((
                crate::audit::locked_path(project, &o.path)?,
                o.sha256.clone(),
            ))
        })
        .collect()
}

#[cfg(test)]
pub(crate) mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::audit::audit;

    /// A lock of `outputs`: (path in the output directory `out`, sha256).
    pub(crate) fn lock(outputs: &[(&str, &str)]) -> Lock {
        Lock {
            lock_version: LOCK_VERSION,
            seams_version: "0".into(),
            model_hash: "m".into(),
            manifest_sha256: "t".into(),
            model_files: Vec::new(),
            incomplete: false,
            generators: Vec::new(),
            outputs: outputs
                .iter()
                .map(|(path, sha256)| LockedOutput {
                    path: format!("out/{path}"),
                    sha256: (*sha256).into(),
                    generator: "g".into(),
                    generator_version: "1".into(),
                    component_sha256: "c".into(),
                    sources: Arc::default(),
                })
                .collect(),
            sources: Vec::new(),
        }
    }

    /// A file's hash in one place: absent, or a letter standing for bytes.
    type Hash = Option<&'static str>;

    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    enum Action {
        Write,
        Delete,
        Unchanged,
        RefuseOverwrite,
        RefuseDelete,
        Nothing,
    }

    /// What the plan does with one file of bytes `generated`, locked as
    /// `locked` and on disk as `disk` (each absent or a letter standing
    /// for its bytes).
    fn action(
        generated: Option<&str>,
        locked: Option<&str>,
        disk: Option<&str>,
        force: bool,
        written_back: bool,
    ) -> (Action, Plan) {
        let sha = |s: &str| seams_model::sha256_hex(s.as_bytes());
        let generated: BTreeMap<String, Contents> = generated
            .map(|g| ("f".to_owned(), Contents::in_memory(Arc::from(g))))
            .into_iter()
            .collect();
        let locked: BTreeMap<String, String> = locked
            .map(|l| ("f".to_owned(), sha(l)))
            .into_iter()
            .collect();
        let disk: BTreeMap<String, String> =
            disk.map(|d| ("f".to_owned(), sha(d))).into_iter().collect();
        let new_lock = lock(
            &generated
                .values()
                .map(|c| ("f", c.sha256()))
                .collect::<Vec<_>>(),
        );
        let old_lock = lock(
            &locked
                .values()
                .map(|sha| ("f", sha.as_str()))
                .collect::<Vec<_>>(),
        );
        let plan = plan(
            audit(&generated, &locked, &disk),
            Context {
                force,
                out_prefix: "out",
                lock: &new_lock,
                previous: Some(&old_lock),
                current_lock_text: None,
                old_journal: false,
                leftovers: Leftovers::default(),
                model_write: written_back.then(|| JournalModel {
                    path: "model.ttl".to_owned(),
                    previous: sha("old model"),
                    text: "new model".to_owned(),
                }),
                // As generate gives it: with the bytes on disk, if any.
                overwrite: (written_back && !disk.is_empty()).then_some(("f", "edited")),
            },
        );
        let f = "f".to_owned();
        let action = if plan.writes.iter().any(|(p, _)| *p == f) {
            Action::Write
        } else if plan.deletes.contains(&f) {
            Action::Delete
        } else if plan.unchanged.contains(&f) {
            Action::Unchanged
        } else if plan.refused_overwrites.contains(&f) {
            Action::RefuseOverwrite
        } else if plan.refused_deletes.contains(&f) {
            Action::RefuseDelete
        } else {
            Action::Nothing
        };
        (action, plan)
    }

    #[test]
    fn every_state_of_generation_lock_and_disk_has_its_action() {
        use Action::*;
        // generated, locked, disk: without force, with force, as the
        // output a write-back's user edited (overwritten when generated,
        // never deleted)
        let table: &[(Hash, Hash, Hash, Action, Action, Action)] = &[
            (
                Some("a"),
                Some("a"),
                Some("a"),
                Unchanged,
                Unchanged,
                Unchanged,
            ),
            (Some("a"), None, Some("a"), Unchanged, Unchanged, Unchanged),
            (
                Some("a"),
                Some("b"),
                Some("a"),
                Unchanged,
                Unchanged,
                Unchanged,
            ),
            (Some("a"), None, None, Write, Write, Write),
            (Some("a"), Some("a"), None, Write, Write, Write),
            (Some("a"), Some("b"), None, Write, Write, Write),
            (Some("a"), Some("b"), Some("b"), Write, Write, Write),
            (Some("a"), None, Some("b"), RefuseOverwrite, Write, Write),
            (
                Some("a"),
                Some("a"),
                Some("b"),
                RefuseOverwrite,
                Write,
                Write,
            ),
            (
                Some("a"),
                Some("b"),
                Some("c"),
                RefuseOverwrite,
                Write,
                Write,
            ),
            (None, Some("a"), Some("a"), Delete, Delete, Delete),
            (
                None,
                Some("a"),
                Some("b"),
                RefuseDelete,
                Delete,
                RefuseDelete,
            ),
            (None, Some("a"), None, Nothing, Nothing, Nothing),
        ];
        for &(g, l, d, without_force, with_force, written_back) in table {
            for (force, edit, expected) in [
                (false, false, without_force),
                (true, false, with_force),
                (false, true, written_back),
            ] {
                let (got, plan) = action(g, l, d, force, edit);
                assert_eq!(
                    got, expected,
                    "generated {g:?}, locked {l:?}, disk {d:?}, force {force}, written back {edit}"
                );
                // A write-back's model file is in the record of intent
                // whatever happens to the outputs.
                assert_eq!(
                    plan.journal
                        .as_ref()
                        .and_then(|j| j.model.as_ref())
                        .is_some(),
                    edit,
                    "{plan:?}"
                );
                assert_eq!(
                    plan.is_refused(),
                    matches!(got, RefuseOverwrite | RefuseDelete)
                );
                // The record of intent lists exactly what is written and
                // deleted, as the lock names it, with the bytes the old
                // lock recorded there.
                let sha = |b: Hash| b.map(|b| seams_model::sha256_hex(b.as_bytes()));
                match (&plan.journal, got) {
                    (Some(journal), Write) => {
                        assert_eq!(journal.writes.len(), 1);
                        assert_eq!(journal.writes[0].path, "out/f");
                        assert_eq!(Some(journal.writes[0].sha256.clone()), sha(g));
                        // The edited output's previous bytes are those on
                        // disk, the user's edit.
                        assert_eq!(
                            journal.writes[0]
                                .previous
                                .as_ref()
                                .map(|b| b.sha256.clone()),
                            if edit && d.is_some() {
                                Some("edited".to_owned())
                            } else {
                                sha(l)
                            }
                        );
                        assert!(journal.deletes.is_empty());
                    }
                    (Some(journal), Delete) => {
                        assert!(journal.writes.is_empty());
                        let [delete] = journal.deletes.as_slice() else {
                            panic!("{journal:?}")
                        };
                        assert_eq!(delete.path, "out/f");
                        assert_eq!(delete.locked.as_ref().map(|b| b.sha256.clone()), sha(l));
                    }
                    (None, Unchanged | Nothing | RefuseOverwrite | RefuseDelete) => {}
                    (Some(journal), Unchanged | Nothing | RefuseOverwrite | RefuseDelete)
                        if edit =>
                    {
                        assert!(journal.writes.is_empty() && journal.deletes.is_empty());
                    }
                    (journal, action) => panic!("{action:?} with journal {journal:?}"),
                }
            }
        }
    }

    #[test]
    fn a_journal_that_replaces_an_interrupted_runs_vouches_for_what_it_leaves_alone() {
        let sha = |s: &str| seams_model::sha256_hex(s.as_bytes());
        let contents = |s: &str| Contents::in_memory(Arc::from(s));
        // An interrupted run wrote u (its bytes now recovered into the
        // lock) and this run leaves u as it is; w it writes.
        let generated: BTreeMap<String, Contents> = [
            ("u".to_owned(), contents("u new")),
            ("w".to_owned(), contents("w new")),
        ]
        .into();
        let recovered = lock(&[("u", &sha("u new")), ("w", &sha("w old"))]);
        let new_lock = lock(&[("u", &sha("u new")), ("w", &sha("w new"))]);
        let locked: BTreeMap<String, String> = [
            ("u".to_owned(), sha("u new")),
            ("w".to_owned(), sha("w old")),
        ]
        .into();
        let journaled = |old_journal: bool| {
            let plan = plan(
                audit(&generated, &locked, &locked),
                Context {
                    force: false,
                    out_prefix: "out",
                    lock: &new_lock,
                    previous: Some(&recovered),
                    current_lock_text: None,
                    old_journal,
                    leftovers: Leftovers::default(),
                    model_write: None,
                    overwrite: None,
                },
            );
            plan.journal
                .unwrap()
                .writes
                .into_iter()
                .map(|w| (w.path, w.sha256))
                .collect::<Vec<_>>()
        };
        assert_eq!(
            journaled(true),
            [
                ("out/u".to_owned(), sha("u new")),
                ("out/w".to_owned(), sha("w new"))
            ]
        );
        assert_eq!(journaled(false), [("out/w".to_owned(), sha("w new"))]);
    }

    #[test]
    fn the_lock_is_rewritten_only_when_its_text_changes() {
        let new_lock = lock(&[("f", "x")]);
        let context = |current: Option<&'static str>| Context {
            force: false,
            out_prefix: "out",
            lock: &new_lock,
            previous: None,
            current_lock_text: current,
            old_journal: false,
            leftovers: Leftovers::default(),
            model_write: None,
            overwrite: None,
        };
        let text = new_lock.to_text();
        let same: &'static str = Box::leak(text.clone().into_boxed_str());
        assert_eq!(plan(Vec::new(), context(Some(same))).lock_text, None);
        assert_eq!(
            plan(Vec::new(), context(None)).lock_text,
            Some(text.clone())
        );
        assert_eq!(
            plan(Vec::new(), context(Some("{}"))).lock_text,
            Some(text),
            "an older format is rewritten"
        );
    }
}
