//! Applying a [`Plan`]: the only place `seams generate` changes the
//! project's files. The order is what makes an interruption harmless: the
//! record of intent first, durably; then the outputs as a batch (staged,
//! synced, renamed); the deletions; the lock last; then, once those are
//! durable, the journal goes.
//!
//! Syncs are what a small generation waits for most, so they are shared:
//! when the project and output directories are on one file system, one
//! sync of it makes the journal's entry, every staged output and the
//! staged lock durable before anything is renamed or deleted, and one
//! more makes the renames, the deletions and the lock's rename durable
//! together. They may reach the disk in any order before it: the journal
//! names each file's bytes before and after, so the next run recognises
//! either ([`crate::journal::recover`]).
//!
//! Every effect goes through [`ProjectFs`], so tests can make any step
//! fail ([`crate::testing`]).

use std::collections::{BTreeSet, HashMap};
use std::io;
use std::path::{Path, PathBuf};

use crate::audit::Contents;
use crate::error::GenerateError;
use crate::lock::LOCK_FILE;
use crate::output_dir::parent_dir;
use crate::output_dir::{OutputDir, Staged};
use crate::plan::Plan;
use crate::project::{JOURNAL_FILE, Project, posix};
use crate::seal::SealKey;
use crate::stat_cache::FileStat;

/// The file operations applying a plan needs: records (the journal, the
/// lock) in the project directory, outputs in the output directory.
pub(crate) trait ProjectFs {
    /// Replaces the record `name` atomically, durably.
    fn write_record(&mut self, name: &str, bytes: &[u8]) -> io::Result<()>;
    /// Creates the record `name`, which must not exist: not synced.
    fn create_record(&mut self, name: &str, bytes: &[u8]) -> io::Result<()>;
    /// Stages the record `name`: written beside it, not yet synced nor
    /// renamed.
    fn stage_record(&mut self, name: &str, bytes: &[u8]) -> io::Result<Staged>;
    /// Removes the record (or leftover) `name`.
    fn remove_record(&mut self, name: &str) -> io::Result<()>;
    /// Whether the project and output directories are on one file
    /// system, so that syncing it makes both durable.
    fn one_file_system(&self) -> bool;
    /// The project directory's device, when known.
    fn device(&self) -> Option<u64>;
    /// The device of a directory of the output directory, when known.
    fn output_device(&self, dir: &str) -> Option<u64>;
    /// Makes the entries of a directory of the project directory (`""`
    /// for itself) durable.
    fn sync_project_dir(&mut self, dir: &str) -> io::Result<()>;
    /// Makes everything written to the project's file system durable:
    /// with [`ProjectFs::one_file_system`], both directories' entries.
    fn sync_file_system(&mut self) -> io::Result<()>;
    /// Stages an output's contents: written to a temporary file beside
    /// it, or, when a run wrote them to the output directory already,
    /// that file.
    fn stage(&mut self, path: &str, contents: &Contents) -> io::Result<Staged>;
    /// Removes an output (or leftover).
    fn remove_output(&mut self, path: &str) -> io::Result<()>;
    /// Makes a directory of the output directory durable.
    fn sync_output_dir(&mut self, dir: &str) -> io::Result<()>;
}

/// The real directories.
pub(crate) struct Dirs {
    root: OutputDir,
    out: OutputDir,
    out_path: PathBuf,
    one_file_system: bool,
    device: Option<u64>,
}

impl Dirs {
    /// Opens the project directory and the output directory, creating the
    /// latter.
    pub(crate) fn open(project: &Project) -> Result<Dirs, GenerateError> {
        let io = |path: PathBuf| move |source| GenerateError::Io { path, source };
        let out_path = project.output_path();
        let root = OutputDir::open(&project.root).map_err(io(project.root.clone()))?;
        let out = OutputDir::open(&out_path).map_err(io(out_path.clone()))?;
        // When in doubt, two file systems: each synced on its own.
        let root_device = root.device("").ok();
        let one_file_system = root_device.is_some_and(|root| out.device("").ok() == Some(root));
        Ok(Dirs {
            root,
            out,
            out_path,
            one_file_system,
            device: root_device,
        })
    }
}

impl ProjectFs for Dirs {
    fn write_record(&mut self, name: &str, bytes: &[u8]) -> io::Result<()> {
        self.root.write(name, bytes)
    }

    fn create_record(&mut self, name: &str, bytes: &[u8]) -> io::Result<()> {
        self.root.write_new(name, bytes)
    }

    fn stage_record(&mut self, name: &str, bytes: &[u8]) -> io::Result<Staged> {
        self.root.stage_replacing(name, bytes)
    }

    fn remove_record(&mut self, name: &str) -> io::Result<()> {
        self.root.remove(name)
    }

    fn one_file_system(&self) -> bool {
        self.one_file_system
    }

    fn device(&self) -> Option<u64> {
        self.device
    }

    fn output_device(&self, dir: &str) -> Option<u64> {
        self.out.device(dir).ok()
    }

    fn sync_project_dir(&mut self, dir: &str) -> io::Result<()> {
        self.root.sync_dir(dir)
    }

    fn sync_file_system(&mut self) -> io::Result<()> {
        self.root.sync_file_system()
    }

    fn stage(&mut self, path: &str, contents: &Contents) -> io::Result<Staged> {
        if let Some(blob) = contents.blob()
            && let Some((dir, name)) = blob.file()
            && dir == self.out_path
            && let Some(staged) = self
                .out
                .adopt(name, path, blob.written().map(FileStat::of))?
        {
            return Ok(staged.of_blob(blob));
        }
        self.out.stage(path, &contents.read()?)
    }

    fn remove_output(&mut self, path: &str) -> io::Result<()> {
        self.out.remove(path)
    }

    fn sync_output_dir(&mut self, dir: &str) -> io::Result<()> {
        self.out.sync_dir(dir)
    }
}

/// What applying a plan did, project-relative.
#[derive(Debug, Default)]
pub(crate) struct Applied {
    pub(crate) written: Vec<String>,
    /// Of the outputs written, those whose stat right after seams's last
    /// write to them is known: path and stat.
    pub(crate) fresh: Vec<(String, FileStat)>,
    pub(crate) deleted: Vec<String>,
    pub(crate) leftovers: Vec<String>,
    pub(crate) lock_written: bool,
}

/// Carries out `plan` (which must not be refused) on `fs`.
///
/// # Errors
///
/// The first operation that fails, with the file it was for; what was done
/// before it is recorded in the journal, so the next generate recovers.
pub(crate) fn apply(
    project: &Project,
    plan: &Plan,
    fs: &mut dyn ProjectFs,
) -> Result<Applied, GenerateError> {
    let root_path = &project.root;
    let out_path = project.output_path();
    let out_prefix = posix(&project.output_dir);
    let shown = |path: &str| format!("{out_prefix}/{path}");
    let io = |path: &Path| {
        let path = path.to_owned();
        move |source| GenerateError::Io { path, source }
    };
    // An output's failure names the generator that gave it.
    let givers: HashMap<&str, &str> = plan
        .journal
        .iter()
        .flat_map(|j| &j.writes)
        .map(|w| (w.path.as_str(), w.generator.as_str()))
        .collect();
    let output_io = |path: &str| {
        let full = out_path.join(path);
        let generator = givers.get(shown(path).as_str()).map(|g| (*g).to_owned());
        move |source| match generator {
            Some(generator) => GenerateError::Output {
                generator,
                path: full,
                source,
            },
            None => GenerateError::Io { path: full, source },
        }
    };
    let mut applied = Applied::default();

    // The record of intent first, durable before anything is renamed or
    // deleted: from then on every file this run writes or deletes is
    // recognised as seams's by the next run.
    let one_file_system = fs.one_file_system();
    // The batch's sync below, of the one file system, makes it durable
    // with the staged files: written in place, it needs no sync of its
    // own. Cut short by a crash before that sync, it announces a run that
    // changed nothing, as the next run reads it ([`crate::journal`]). It
    // replaces an interrupted run's journal atomically instead, which
    // must not be lost, and is synced apart where the batch's syncs do not
    // cover the project directory.
    let in_place = one_file_system
        && !plan.old_journal
        && (!plan.writes.is_empty() || plan.lock_text.is_some());
    if let Some(journal) = &plan.journal {
        let path = root_path.join(JOURNAL_FILE);
        let text = journal.sealed_text(&SealKey::for_user()?);
        if in_place {
            fs.create_record(JOURNAL_FILE, text.as_bytes())
        } else {
            fs.write_record(JOURNAL_FILE, text.as_bytes())
        }
        .map_err(io(&path))?;
        if !one_file_system {
            fs.sync_project_dir("").map_err(io(root_path))?;
        }
    }
    for name in &plan.leftovers.root {
        fs.remove_record(name).map_err(io(&root_path.join(name)))?;
    }
    for path in &plan.leftovers.out {
        fs.remove_output(path).map_err(io(&out_path.join(path)))?;
    }
    applied.leftovers = plan.leftovers.paths(project);

    // Written as a batch: every file staged, then synced, then renamed.
    let mut touched: BTreeSet<&str> = BTreeSet::new();
    let mut staged = Vec::with_capacity(plan.writes.len());
    for (path, contents) in &plan.writes {
        let file = fs.stage(path, contents).map_err(output_io(path))?;
        staged.push((path, file));
    }
    // A write-back's model file is staged with them, and renamed into
    // place first: until the journal goes, the next run finishes its
    // write from the journal's copy if the rename did not reach the disk.
    let model_write = plan.journal.as_ref().and_then(|j| j.model.as_ref());
    let model = model_write
        .map(|m| {
            let path = root_path.join(&m.path);
            fs.stage_record(&m.path, m.text.as_bytes())
                .map(|staged| (staged, m.path.as_str()))
                .map_err(io(&path))
        })
        .transpose()?;
    // The lock is staged with them, and renamed into place last.
    let lock_path = root_path.join(LOCK_FILE);
    let lock = plan
        .lock_text
        .as_ref()
        .map(|text| fs.stage_record(LOCK_FILE, text.as_bytes()))
        .transpose()
        .map_err(io(&lock_path))?;
    // A file system mounted inside the output directory puts staged files
    // on a device that the project's sync does not reach: each is then
    // synced on its own, as for two file systems.
    let devices: Vec<Option<u64>> = staged
        .iter()
        .map(|(_, file)| file.written().map(|stat| stat.device()))
        .collect();
    let mut mounted = one_file_system && devices.iter().any(|&device| device != fs.device());
    // Nothing is renamed or deleted before this sync.
    if mounted {
        // The project's file system: the journal, the lock and the staged
        // files there; then each other device's.
        fs.sync_file_system().map_err(io(root_path))?;
        for point in sync_points(&devices, fs.device()) {
            let (path, file) = &staged[point.index];
            point.sync(file).map_err(output_io(path))?;
        }
    } else if one_file_system {
        if let Some((path, file)) = staged.first() {
            file.sync_file_system().map_err(output_io(path))?;
        } else if let Some(lock) = &lock {
            lock.sync_file_system().map_err(io(&lock_path))?;
        } else if let Some((staged, path)) = &model {
            staged
                .sync_file_system()
                .map_err(io(&root_path.join(path)))?;
        } else if plan.journal.is_some() {
            fs.sync_project_dir("").map_err(io(root_path))?;
        }
    } else {
        for point in sync_points(&devices, None) {
            let (path, file) = &staged[point.index];
            point.sync(file).map_err(output_io(path))?;
        }
        if let Some(lock) = &lock {
            lock.sync().map_err(io(&lock_path))?;
        }
        if let Some((staged, path)) = &model {
            staged.sync().map_err(io(&root_path.join(path)))?;
        }
    }
    let model_dir = model.as_ref().map(|(_, path)| parent_dir(path));
    if let Some((staged, path)) = model {
        staged.rename().map_err(io(&root_path.join(path)))?;
    }
    for (path, file) in staged {
        let written = file.written();
        file.rename().map_err(output_io(path))?;
        if let Some(stat) = written {
            applied.fresh.push((shown(path), stat));
        }
        applied.written.push(shown(path));
        touched.insert(parent_dir(path));
    }
    for path in &plan.deletes {
        fs.remove_output(path).map_err(io(&out_path.join(path)))?;
        applied.deleted.push(shown(path));
        let dir = parent_dir(path);
        // A deletion in a file system mounted there is synced there too.
        mounted = mounted
            || one_file_system
                && !dir.is_empty()
                && fs
                    .output_device(dir)
                    .is_some_and(|device| Some(device) != fs.device());
        touched.insert(dir);
    }
    // The lock last: until it is replaced, the old lock and the journal
    // describe the files.
    if let Some(lock) = lock {
        lock.rename().map_err(io(&lock_path))?;
        applied.lock_written = true;
    }
    // One sync for the renames, the deletions and the lock, in whatever
    // order they reach the disk: the journal recognises each file's old
    // and new bytes.
    if one_file_system && !mounted {
        fs.sync_file_system().map_err(io(root_path))?;
    } else {
        for dir in touched {
            fs.sync_output_dir(dir).map_err(io(&out_path.join(dir)))?;
        }
        fs.sync_project_dir("").map_err(io(root_path))?;
        if let Some(dir) = model_dir.filter(|dir| !dir.is_empty()) {
            fs.sync_project_dir(dir).map_err(io(&root_path.join(dir)))?;
        }
    }
    // The journal goes once they are durable, without a sync of its own:
    // kept by a crash, it describes the files as they are, and the next
    // run reads it as an interrupted run's and finishes it.
    if plan.old_journal || plan.journal.is_some() {
        fs.remove_record(JOURNAL_FILE)
            .map_err(io(&root_path.join(JOURNAL_FILE)))?;
    }
    Ok(applied)
}

/// Where a batch of staged files is synced: through one file of each
/// device, by `syncfs` (or `fsync` when it is the device's only file).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct SyncPoint {
    /// The file's index in the batch.
    index: usize,
    /// Whether no other file of the batch is on its device.
    alone: bool,
}

impl SyncPoint {
    fn sync(self, file: &Staged) -> io::Result<()> {
        if self.alone {
            file.sync()
        } else {
            file.sync_file_system()
        }
    }
}

/// One [`SyncPoint`] per device among `devices` (each staged file's, in
/// batch order; files of unknown device count as one device), but
/// `synced`, a device synced already.
fn sync_points(devices: &[Option<u64>], synced: Option<u64>) -> Vec<SyncPoint> {
    let mut points: Vec<(Option<u64>, SyncPoint)> = Vec::new();
    for (index, &device) in devices.iter().enumerate() {
        if device.is_some() && device == synced {
            continue;
        }
        match points.iter_mut().find(|(seen, _)| *seen == device) {
            Some((_, point)) => point.alone = false,
            None => points.push((device, SyncPoint { index, alone: true })),
        }
    }
    points.into_iter().map(|(_, point)| point).collect()
}

#[cfg(test)]
mod tests {
    use super::{SyncPoint, sync_points};

    #[test]
    fn a_batch_is_synced_through_one_file_of_each_device_not_synced_already() {
        let point = |index, alone| SyncPoint { index, alone };
        // Each staged file's device, the device synced already, the points.
        type Case<'a> = (&'a [Option<u64>], Option<u64>, Vec<SyncPoint>);
        let cases: &[Case] = &[
            (&[], None, vec![]),
            (&[Some(1)], None, vec![point(0, true)]),
            (&[Some(1), Some(1)], None, vec![point(0, false)]),
            // A mount inside the output directory: its files too.
            (
                &[Some(1), Some(2), Some(1)],
                None,
                vec![point(0, false), point(1, true)],
            ),
            (&[Some(1), Some(2), Some(2)], Some(1), vec![point(1, false)]),
            (&[Some(1), Some(1)], Some(1), vec![]),
            // Files whose device is not known are synced all the same.
            (&[None, Some(1), None], Some(1), vec![point(0, false)]),
            (&[Some(2), None], None, vec![point(0, true), point(1, true)]),
        ];
        for (devices, synced, expected) in cases {
            assert_eq!(
                &sync_points(devices, *synced),
                expected,
                "{devices:?} {synced:?}"
            );
        }
    }
}
