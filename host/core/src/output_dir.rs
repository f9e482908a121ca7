//! The output directory: the only writer of files in it. (The rules an
//! output path follows are `seams_runtime::validate_output_path`.)
//!
//! Every write goes through a `cap-std` directory handle, so neither a
//! path nor a symlink can lead outside, and replaces the file atomically:
//! the bytes go to a temporary file in the same directory, named with
//! [`TEMP_PREFIX`] so that one left behind by a killed run is recognised,
//! are synced, then renamed into place. Directories are synced by
//! [`OutputDir::sync_dir`] once a batch of renames is done.

use std::io::Write;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use cap_std::ambient_authority;
use cap_std::fs::{Dir, OpenOptions};

use seams_runtime::{Blob, TEMP_PREFIX};

use crate::stat_cache::FileStat;

/// How much of a file is read at a time to be hashed: large enough that
/// system calls cost little, small enough to stay in the CPU's cache
/// while it is hashed.
const HASH_BUFFER: usize = 256 << 10;

/// Numbers the temporary files of this process.
static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// A file [`OutputDir::hash_each`] found.
#[derive(Debug)]
pub(crate) enum Found {
    /// Vouched for by its stat: not read.
    Known(FileStat),
    /// Read and hashed, with the stat it had when opened.
    Hashed { sha256: String, stat: FileStat },
}

/// An open output directory.
#[derive(Debug)]
pub struct OutputDir {
    /// Shared with every file staged in it: a staged file holds no
    /// descriptor of its own, so a batch of thousands stays far below the
    /// usual limit of 1,024 open files (it failed at expense x300 traced,
    /// whose 1,806 staged files each held a copy of their directory's).
    dir: Arc<Dir>,
}

impl OutputDir {
    /// Opens `path`, creating it when missing.
    ///
    /// # Errors
    ///
    /// The directory cannot be created or opened.
    pub fn open(path: &Path) -> std::io::Result<OutputDir> {
        std::fs::create_dir_all(path)?;
        Ok(OutputDir {
            dir: Arc::new(Dir::open_ambient_dir(path, ambient_authority())?),
        })
    }

    /// Opens `path` if it is a directory; `None` when it does not exist yet
    /// (reading needs no directory, and nothing is created).
    ///
    /// # Errors
    ///
    /// The directory cannot be opened.
    pub fn open_existing(path: &Path) -> std::io::Result<Option<OutputDir>> {
        if !path.is_dir() {
            return Ok(None);
        }
        Ok(Some(OutputDir {
            dir: Arc::new(Dir::open_ambient_dir(path, ambient_authority())?),
        }))
    }

    /// The bytes of `rel`, or `None` when it does not exist.
    ///
    /// # Errors
    ///
    /// Any other I/O error, or a path that leads outside.
    pub(crate) fn read(&self, rel: &str) -> std::io::Result<Option<Vec<u8>>> {
        match self.dir.read(rel) {
            Ok(bytes) => Ok(Some(bytes)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// The bytes of `rel`, at most `limit`, when it is a regular file of
    /// this directory and its name is not a symlink: opened first (through
    /// the directory handle, so that no step leads outside; without
    /// blocking on a FIFO), then its name checked to be the file opened.
    /// What a viewer shows: a link planted in the outputs, even to a file
    /// inside, shows nothing.
    ///
    /// # Errors
    ///
    /// A missing file, a link, anything but a regular file, a file past
    /// `limit` (`InvalidData`), or another I/O error.
    pub fn read_regular(&self, rel: &str, limit: u64) -> std::io::Result<Vec<u8>> {
        use cap_std::fs::{MetadataExt, OpenOptionsExt};
        use std::io::Read;
        let refused =
            |why: &str| std::io::Error::new(std::io::ErrorKind::InvalidInput, why.to_owned());
        let file = self.dir.open_with(
            rel,
            cap_std::fs::OpenOptions::new()
                .read(true)
                .custom_flags(rustix::fs::OFlags::NONBLOCK.bits() as i32),
        )?;
        let opened = file.metadata()?;
        let named = self.dir.symlink_metadata(rel)?;
        if named.is_symlink() {
            return Err(refused(
                "it is a symbolic link, which seams never follows in outputs",
            ));
        }
        if !opened.is_file() || named.ino() != opened.ino() || named.dev() != opened.dev() {
            return Err(refused("it is not a regular file"));
        }
        if opened.len() > limit {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!(
                    "it holds {} bytes, over the {limit} an output may have",
                    opened.len()
                ),
            ));
        }
        let mut bytes = Vec::new();
        file.into_std().take(limit).read_to_end(&mut bytes)?;
        Ok(bytes)
    }

    /// The first symlink on the way to `rel` (`rel` itself or a directory
    /// above it), relative here, with what it points at; `None` when there
    /// is none.
    pub(crate) fn link_on_the_way(&self, rel: &str) -> Option<(String, String)> {
        let mut at = String::new();
        for part in rel.split('/') {
            if !at.is_empty() {
                at.push('/');
            }
            at.push_str(part);
            match self.dir.symlink_metadata(&at) {
                Ok(meta) if meta.is_symlink() => {
                    let target = self
                        .dir
                        .read_link_contents(&at)
                        .map_or_else(|_| "elsewhere".to_owned(), |t| t.display().to_string());
                    return Some((at, target));
                }
                Ok(_) => {}
                Err(_) => return None,
            }
        }
        None
    }

    /// The sha256 of each of `paths` that is a file here, by path (see
    /// [`OutputDir::hash_each`]).
    ///
    /// # Errors
    ///
    /// The path and the error of a file that cannot be read.
    pub(crate) fn hashes<'a>(
        &self,
        paths: impl IntoIterator<Item = &'a String>,
    ) -> Result<std::collections::BTreeMap<String, String>, (String, std::io::Error)> {
        // A path named twice is hashed once.
        let paths: Vec<&String> = paths
            .into_iter()
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect();
        let found = std::sync::Mutex::new(std::collections::BTreeMap::new());
        self.hash_each(
            &paths,
            |_, _| false,
            |i, file| {
                if let Some(Found::Hashed { sha256, .. }) = file {
                    let mut found = found
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner);
                    found.insert(paths[i].clone(), sha256);
                }
                true
            },
        )
        .map_err(|(i, e)| (paths[i].clone(), e))?;
        Ok(found
            .into_inner()
            .unwrap_or_else(std::sync::PoisonError::into_inner))
    }

    /// Hashes each of `paths` on every core, showing `seen` its index and
    /// what was found (`None` when it is not here) as each is done, in no
    /// particular order; stops once `seen` returns false. Whether none
    /// did. A file for which `known` vouches by its index and stat is not
    /// read. Files are taken one at a time, not in fixed shares (their
    /// sizes differ a thousandfold), and read a piece at a time into a
    /// buffer each worker reuses: hashing what a large project locked is
    /// most of a no-op.
    ///
    /// # Errors
    ///
    /// The index and the error of a file that cannot be read.
    pub(crate) fn hash_each<P: AsRef<str> + Sync>(
        &self,
        paths: &[P],
        known: impl Fn(usize, &FileStat) -> bool + Sync,
        seen: impl Fn(usize, Option<Found>) -> bool + Sync,
    ) -> Result<bool, (usize, std::io::Error)> {
        use std::sync::atomic::{AtomicBool, AtomicUsize};
        let next = AtomicUsize::new(0);
        let stop = AtomicBool::new(false);
        let work = || -> Result<bool, (usize, std::io::Error)> {
            // Made for the first file that is read: a no-op knows every
            // file by its stat, and zeroing it faulted in 64 pages a worker.
            let mut buffer = Vec::new();
            while !stop.load(Ordering::Relaxed) {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(path) = paths.get(i) else {
                    return Ok(true);
                };
                let found = self
                    .find(path.as_ref(), &mut buffer, |stat| known(i, stat))
                    .map_err(|e| (i, e));
                let carry_on = match found {
                    Ok(found) => seen(i, found),
                    Err(e) => {
                        stop.store(true, Ordering::Relaxed);
                        return Err(e);
                    }
                };
                if !carry_on {
                    stop.store(true, Ordering::Relaxed);
                    return Ok(false);
                }
            }
            Ok(false)
        };
        let workers = seams_model::cores().min(paths.len());
        std::thread::scope(|scope| {
            let others: Vec<_> = (1..workers).map(|_| scope.spawn(work)).collect();
            let mut all = work();
            for other in others {
                // A worker that panicked proves nothing: not all seen.
                let done = other.join().unwrap_or(Ok(false));
                all = match (all, done) {
                    // Files are taken in order, so every one before the
                    // first that failed was read: naming the lowest is
                    // naming the same file however the work was shared.
                    (Err(a), Err(b)) => Err(if b.0 < a.0 { b } else { a }),
                    (Err(e), _) | (_, Err(e)) => Err(e),
                    (Ok(a), Ok(b)) => Ok(a && b),
                };
            }
            all
        })
    }

    /// The file `rel`: known by its stat, or read a piece at a time into
    /// `buffer` (sized first, if empty) and hashed; `None` when there is
    /// no such file.
    fn find(
        &self,
        rel: &str,
        buffer: &mut Vec<u8>,
        known: impl Fn(&FileStat) -> bool,
    ) -> std::io::Result<Option<Found>> {
        let file = match self.dir.open(rel) {
            Ok(file) => file.into_std(),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e),
        };
        let stat = FileStat::of(&file.metadata()?);
        if known(&stat) {
            return Ok(Some(Found::Known(stat)));
        }
        if buffer.is_empty() {
            buffer.resize(HASH_BUFFER, 0);
        }
        let sha256 = seams_model::sha256_hex_of(file, buffer)?;
        Ok(Some(Found::Hashed { sha256, stat }))
    }

    /// Deletes the file `rel`; a file already gone is not an error.
    ///
    /// # Errors
    ///
    /// An I/O error, or a path that leads outside.
    pub(crate) fn remove(&self, rel: &str) -> std::io::Result<()> {
        match self.dir.remove_file(rel) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            other => other,
        }
    }

    /// Replaces `rel` with `bytes` atomically, creating its directories:
    /// a synced temporary file renamed into place, with the permissions
    /// of the file it replaces. The rename is durable once the parent
    /// directory is synced ([`OutputDir::sync_dir`]).
    ///
    /// # Errors
    ///
    /// An I/O error, or a path (or symlink) that leads outside. The
    /// temporary file is removed then, unless the process dies first.
    pub fn write(&self, rel: &str, bytes: &[u8]) -> std::io::Result<()> {
        let staged = self.stage_replacing(rel, bytes)?;
        staged.sync()?;
        staged.rename()
    }

    /// Creates `rel`, a file of this directory itself that must not exist
    /// yet, holding `bytes`: not synced, so durable only once something
    /// syncs its file system (`Staged::sync_file_system`).
    ///
    /// # Errors
    ///
    /// An I/O error; `AlreadyExists` when `rel` exists (even as a
    /// symlink).
    pub(crate) fn write_new(&self, rel: &str, bytes: &[u8]) -> std::io::Result<()> {
        let mut options = OpenOptions::new();
        options.write(true).create_new(true);
        let mut file = self.dir.open_with(rel, &options)?.into_std();
        let written = file.write_all(bytes);
        if written.is_err() {
            let _ = self.dir.remove_file(rel);
        }
        written
    }

    /// Writes `bytes` to a temporary file beside `rel` (creating its
    /// directories), not yet synced nor renamed: a batch of files is
    /// staged, then synced (`Staged::sync`), then renamed
    /// (`Staged::rename`), so that the disk sees the data of the whole
    /// batch before the first sync waits for it.
    ///
    /// # Errors
    ///
    /// An I/O error, or a path (or symlink) that leads outside.
    pub(crate) fn stage(&self, rel: &str, bytes: &[u8]) -> std::io::Result<Staged> {
        self.stage_with(rel, bytes, None)
    }

    /// [`OutputDir::stage`] for a file of the user's (the model, the
    /// lock) that keeps the permissions of the regular file it replaces:
    /// a model kept private (0600) stays private.
    ///
    /// # Errors
    ///
    /// As [`OutputDir::stage`].
    pub(crate) fn stage_replacing(&self, rel: &str, bytes: &[u8]) -> std::io::Result<Staged> {
        use cap_std::fs::PermissionsExt;
        let mode = match self.dir.symlink_metadata(rel) {
            Ok(meta) if meta.is_file() => Some(meta.permissions().mode()),
            Ok(_) => None,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(e),
        };
        self.stage_with(rel, bytes, mode)
    }

    fn stage_with(&self, rel: &str, bytes: &[u8], mode: Option<u32>) -> std::io::Result<Staged> {
        // The temporary file beside its final name, both named from this
        // directory (cap-std resolves them beneath it).
        let temp_name = format!(
            "{TEMP_PREFIX}{}-{}",
            std::process::id(),
            TEMP_COUNTER.fetch_add(1, Ordering::Relaxed)
        );
        let temp = match rel.rsplit_once('/') {
            Some((parent, _)) => {
                self.dir.create_dir_all(parent)?;
                format!("{parent}/{temp_name}")
            }
            None => temp_name,
        };
        let mut options = OpenOptions::new();
        options.write(true).create_new(true);
        let mut file = self.dir.open_with(&temp, &options)?.into_std();
        // Dropped on an error below, it removes the temporary file.
        let mut staged = Staged {
            dir: self.dir.clone(),
            temp,
            name: rel.to_owned(),
            written: None,
            blob: None,
        };
        // Closed once written: a batch of thousands of files holds no
        // descriptors.
        file.write_all(bytes)?;
        if let Some(mode) = mode {
            use std::os::unix::fs::PermissionsExt;
            file.set_permissions(std::fs::Permissions::from_mode(mode & 0o777))?;
        }
        staged.written = Some(FileStat::of(&file.metadata()?));
        Ok(staged)
    }

    /// Stages the file `temp`, a temporary file of this directory (as a
    /// run's [`seams_runtime::Sink::Files`] writes them), to become `rel`:
    /// no bytes are copied. `written` is its stat right after the run's
    /// last write to it ([`seams_runtime::Blob::written`]). `None` when
    /// `rel`'s directory is on another file system (one mounted inside
    /// this directory), where no rename reaches: the caller copies.
    ///
    /// # Errors
    ///
    /// An I/O error, or a path (or symlink) that leads outside.
    pub(crate) fn adopt(
        &self,
        temp: &str,
        rel: &str,
        written: Option<FileStat>,
    ) -> std::io::Result<Option<Staged>> {
        use std::os::unix::fs::MetadataExt;
        let parent = rel.rsplit_once('/').map(|(parent, _)| parent);
        if let Some(parent) = parent {
            self.dir.create_dir_all(parent)?;
        }
        // Only a regular file of this directory, never through a symlink.
        let kind = self.dir.symlink_metadata(temp)?.file_type();
        if !kind.is_file() {
            return Err(std::io::Error::other(format!(
                "{temp} is not a file seams wrote"
            )));
        }
        // `temp` is in this directory itself: only a subdirectory can be
        // another file system.
        if let Some(parent) = parent {
            let device = match written {
                Some(stat) => stat.device(),
                None => self.dir.open(temp)?.into_std().metadata()?.dev(),
            };
            if self.device(parent)? != device {
                return Ok(None);
            }
        }
        Ok(Some(Staged {
            dir: self.dir.clone(),
            temp: temp.to_owned(),
            name: rel.to_owned(),
            written,
            blob: None,
        }))
    }

    /// Syncs the directory `rel` (`""` for this one), so that the renames
    /// and deletions in it survive a power loss.
    ///
    /// # Errors
    ///
    /// An I/O error.
    pub(crate) fn sync_dir(&self, rel: &str) -> std::io::Result<()> {
        self.open_dir(rel)?.sync_all()
    }

    /// Makes everything written to this directory's file system durable
    /// (Linux `syncfs`): its entries and those of every directory on it.
    ///
    /// # Errors
    ///
    /// An I/O error.
    pub(crate) fn sync_file_system(&self) -> std::io::Result<()> {
        rustix::fs::syncfs(self.open_dir("")?).map_err(std::io::Error::from)
    }

    /// The device of the directory `rel` (`""` for this one): which file
    /// system a sync of its entries must reach.
    ///
    /// # Errors
    ///
    /// An I/O error, or a path that leads outside.
    pub(crate) fn device(&self, rel: &str) -> std::io::Result<u64> {
        use std::os::unix::fs::MetadataExt;
        Ok(self.open_dir(rel)?.into_std().metadata()?.dev())
    }

    /// The directory `rel` (`""` for this one), opened for reading.
    /// Directory handles are path-only (O_PATH), and neither `fsync` nor
    /// `syncfs` takes one: the directory is opened through the handle.
    fn open_dir(&self, rel: &str) -> std::io::Result<cap_std::fs::File> {
        let target = if rel.is_empty() { "." } else { rel };
        let mut options = OpenOptions::new();
        options.read(true);
        self.dir.open_with(target, &options)
    }

    /// The temporary files a killed seams left behind: paths relative to
    /// this directory, sorted; in every subdirectory when `recursive`.
    /// Symlinks are not followed.
    ///
    /// # Errors
    ///
    /// A directory that cannot be listed.
    pub(crate) fn leftovers(&self, recursive: bool) -> std::io::Result<Vec<String>> {
        let mut found = Vec::new();
        let mut pending = vec![String::new()];
        while let Some(rel) = pending.pop() {
            let dir = if rel.is_empty() {
                self.dir.try_clone()?
            } else {
                self.dir.open_dir(&rel)?
            };
            for entry in dir.entries()? {
                let entry = entry?;
                let name = entry.file_name().to_string_lossy().into_owned();
                let path = if rel.is_empty() {
                    name.clone()
                } else {
                    format!("{rel}/{name}")
                };
                let kind = entry.file_type()?;
                if kind.is_dir() {
                    if recursive {
                        pending.push(path);
                    }
                } else if name.starts_with(TEMP_PREFIX) {
                    found.push(path);
                }
            }
        }
        found.sort();
        Ok(found)
    }
}

/// The directories [`OutputDir::create`] made, innermost first. Dropped,
/// it removes those still empty: a run that ends up writing nothing
/// leaves nothing behind.
#[derive(Debug)]
pub(crate) struct Created {
    dirs: Vec<std::path::PathBuf>,
}

impl Drop for Created {
    fn drop(&mut self) {
        for dir in &self.dirs {
            // Fails, and stops, at the first directory that is not empty.
            if std::fs::remove_dir(dir).is_err() {
                break;
            }
        }
    }
}

impl OutputDir {
    /// Creates `path` and its missing parents; which ones it made.
    ///
    /// # Errors
    ///
    /// A directory cannot be created.
    pub(crate) fn create(path: &Path) -> std::io::Result<Created> {
        let dirs: Vec<_> = path
            .ancestors()
            .take_while(|dir| !dir.as_os_str().is_empty() && !dir.exists())
            .map(Path::to_path_buf)
            .collect();
        std::fs::create_dir_all(path)?;
        Ok(Created { dirs })
    }
}

/// A file written to a temporary name, waiting to be synced and renamed
/// into place; dropped before its rename, the temporary file is removed.
#[derive(Debug)]
pub struct Staged {
    /// The output directory; `temp` and `name` are relative to it.
    dir: Arc<Dir>,
    temp: String,
    name: String,
    /// The file's stat right after seams's last write to it.
    written: Option<FileStat>,
    /// The blob whose file this is, when adopted: told of the rename.
    blob: Option<Blob>,
}

impl Staged {
    /// The staged file is `blob`'s file ([`OutputDir::adopt`]): once
    /// renamed, the blob no longer removes it by its old name.
    pub(crate) fn of_blob(mut self, blob: &Blob) -> Staged {
        self.blob = Some(blob.clone());
        self
    }

    /// The file's stat right after seams's last write to it, when known.
    pub(crate) fn written(&self) -> Option<FileStat> {
        self.written
    }

    /// Waits until the bytes are on disk.
    ///
    /// # Errors
    ///
    /// An I/O error.
    pub(crate) fn sync(&self) -> std::io::Result<()> {
        self.open()?.sync_all()
    }

    fn open(&self) -> std::io::Result<cap_std::fs::File> {
        let mut options = OpenOptions::new();
        options.read(true);
        self.dir.open_with(&self.temp, &options)
    }

    /// Makes every file staged on this one's file system durable at once
    /// (Linux `syncfs`): for a batch, one sync instead of an fsync per
    /// file, each of which would wait for its own journal commit.
    ///
    /// # Errors
    ///
    /// An I/O error.
    pub(crate) fn sync_file_system(&self) -> std::io::Result<()> {
        rustix::fs::syncfs(self.open()?).map_err(std::io::Error::from)
    }

    /// Renames the file into place.
    ///
    /// # Errors
    ///
    /// An I/O error.
    pub(crate) fn rename(mut self) -> std::io::Result<()> {
        let renamed = self.dir.rename(&self.temp, &self.dir, &self.name);
        if renamed.is_ok() {
            self.temp.clear();
            if let Some(blob) = &self.blob {
                blob.renamed();
            }
        }
        renamed
    }
}

impl Drop for Staged {
    fn drop(&mut self) {
        if !self.temp.is_empty() {
            let _ = self.dir.remove_file(&self.temp);
        }
    }
}

/// The directory of an output path, `""` for the output directory itself.
pub(crate) fn parent_dir(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(dir, _)| dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// This process's open descriptors.
    fn open_descriptors() -> usize {
        std::fs::read_dir("/proc/self/fd").unwrap().count()
    }

    #[test]
    fn a_new_file_is_never_written_over_anything_nor_through_a_link() {
        let root = tempfile::tempdir().unwrap();
        let dir = OutputDir::open(root.path()).unwrap();
        dir.write_new("journal", b"first").unwrap();
        assert_eq!(
            std::fs::read(root.path().join("journal")).unwrap(),
            b"first"
        );
        let again = dir.write_new("journal", b"second").unwrap_err();
        assert_eq!(again.kind(), std::io::ErrorKind::AlreadyExists);
        assert_eq!(
            std::fs::read(root.path().join("journal")).unwrap(),
            b"first"
        );
        // A link planted under the name, even one leading nowhere yet, is
        // not followed: its target is never created.
        let target = root.path().join("elsewhere");
        std::os::unix::fs::symlink(&target, root.path().join("linked")).unwrap();
        let linked = dir.write_new("linked", b"x").unwrap_err();
        assert_eq!(linked.kind(), std::io::ErrorKind::AlreadyExists);
        assert!(!target.exists());
    }

    #[test]
    fn staged_files_hold_no_descriptor_each_and_land_in_their_directories() {
        let root = tempfile::tempdir().unwrap();
        let out = OutputDir::open(root.path()).unwrap();
        let before = open_descriptors();
        // More than a tenth of the usual limit of 1,024 open files, in the
        // output directory and in subdirectories of it.
        let staged: Vec<Staged> = (0..300)
            .map(|i| {
                let rel = match i % 3 {
                    0 => format!("f{i}.txt"),
                    1 => format!("a/f{i}.txt"),
                    _ => format!("a/b/f{i}.txt"),
                };
                out.stage(&rel, rel.as_bytes()).unwrap()
            })
            .collect();
        let held = open_descriptors().saturating_sub(before);
        assert!(held < 100, "{held} descriptors held by 300 staged files");
        staged[0].sync_file_system().unwrap();
        for file in staged {
            file.rename().unwrap();
        }
        for (i, rel) in ["f0.txt", "a/f1.txt", "a/b/f2.txt", "a/b/f299.txt"]
            .iter()
            .enumerate()
        {
            assert_eq!(
                std::fs::read(root.path().join(rel)).unwrap(),
                rel.as_bytes(),
                "{i}"
            );
        }
        assert!(
            out.leftovers(true).unwrap().is_empty(),
            "no temporary file left"
        );
    }

    #[test]
    fn every_file_is_hashed_whole_missing_ones_are_none_and_a_mismatch_stops_the_rest() {
        let root = tempfile::tempdir().unwrap();
        let out = OutputDir::open(root.path()).unwrap();
        // Past the buffer, to be read in several pieces.
        let large: Vec<u8> = (0..HASH_BUFFER * 2 + 17).map(|i| (i % 251) as u8).collect();
        let mut paths = Vec::new();
        for i in 0..40 {
            let path = format!("d{}/f{i}.txt", i % 3);
            out.write(&path, if i == 7 { &large } else { path.as_bytes() })
                .unwrap();
            paths.push(path);
        }
        paths.push("missing.txt".to_owned());
        let hashes = out.hashes(&paths).unwrap();
        assert_eq!(hashes.len(), 40);
        for path in &paths[..40] {
            let bytes = std::fs::read(root.path().join(path)).unwrap();
            assert_eq!(hashes[path], seams_model::sha256_hex(&bytes), "{path}");
        }
        assert_eq!(hashes[&paths[7]], seams_model::sha256_hex(&large));

        assert!(
            !out.hash_each(&paths, |_, _| false, |_, found| found.is_some())
                .unwrap()
        );
        assert!(
            out.hash_each(&paths[..40], |_, _| false, |_, found| found.is_some())
                .unwrap()
        );
        // A worker stops at its first mismatch and the others at their
        // next file: far fewer than all are hashed.
        let seen = std::sync::atomic::AtomicUsize::new(0);
        let all = out
            .hash_each(
                &paths[..40],
                |_, _| false,
                |_, _| {
                    seen.fetch_add(1, Ordering::Relaxed);
                    false
                },
            )
            .unwrap();
        assert!(!all);
        assert!(seen.into_inner() <= seams_model::cores());
    }

    #[test]
    fn a_file_that_cannot_be_read_is_named_by_its_index() {
        let root = tempfile::tempdir().unwrap();
        let out = OutputDir::open(root.path()).unwrap();
        out.write("a.txt", b"a").unwrap();
        std::fs::create_dir(root.path().join("dir.txt")).unwrap();
        let paths = ["a.txt", "dir.txt"];
        let (index, error) = out
            .hash_each(&paths, |_, _| false, |_, _| true)
            .unwrap_err();
        assert_eq!(index, 1, "{error}");
        let (path, _) = out
            .hashes(&["a.txt".to_owned(), "dir.txt".to_owned()])
            .unwrap_err();
        assert_eq!(path, "dir.txt");
        // Many that cannot be read: the first is named, every time, whichever
        // worker took it.
        let paths: Vec<String> = (0..40).map(|i| format!("f{i}")).collect();
        for (i, path) in paths.iter().enumerate() {
            if i >= 7 {
                std::fs::create_dir(root.path().join(path)).unwrap();
            } else {
                // Large enough that both workers are busy by file 7.
                out.write(path, &vec![i as u8; 1 << 20]).unwrap();
            }
        }
        for _ in 0..20 {
            assert_eq!(
                out.hash_each(&paths, |_, _| false, |_, _| true)
                    .unwrap_err()
                    .0,
                7
            );
        }
    }

    #[test]
    fn an_adopted_file_is_renamed_into_place_without_a_copy() {
        let root = tempfile::tempdir().unwrap();
        let out = OutputDir::open(root.path()).unwrap();
        let blob = seams_runtime::Blob::write(root.path(), b"page\n").unwrap();
        let (_, name) = blob.file().unwrap();
        let written = blob.written().map(FileStat::of);
        let name = name.to_owned();
        let staged = out
            .adopt(&name, "deep/er/page.html", written)
            .unwrap()
            .expect("one file system")
            .of_blob(&blob);
        assert_eq!(staged.written(), written);
        staged.sync_file_system().unwrap();
        staged.rename().unwrap();
        assert_eq!(
            std::fs::read(root.path().join("deep/er/page.html")).unwrap(),
            b"page\n"
        );
        assert_eq!(out.leftovers(true).unwrap(), Vec::<String>::new());
        // The blob's old name is not its own any more: whatever has it
        // when the blob goes stays.
        std::fs::write(root.path().join(&name), b"another's").unwrap();
        drop(blob);
        assert!(root.path().join("deep/er/page.html").exists(), "kept");
        assert!(root.path().join(&name).exists(), "not the blob's to remove");
        // Only a regular file of the directory is adopted.
        std::os::unix::fs::symlink("/etc/passwd", root.path().join(".seams-tmp-link")).unwrap();
        assert!(out.adopt(".seams-tmp-link", "stolen.txt", None).is_err());
        assert!(out.adopt("missing", "x.txt", None).is_err());
    }

    #[test]
    fn a_replaced_file_keeps_its_permissions_and_a_new_one_gets_the_default() {
        use std::os::unix::fs::PermissionsExt;
        let root = tempfile::tempdir().unwrap();
        let out = OutputDir::open(root.path()).unwrap();
        let mode = |name: &str| {
            std::fs::metadata(root.path().join(name))
                .unwrap()
                .permissions()
                .mode()
                & 0o7777
        };
        out.write("model.ttl", b"old").unwrap();
        let default = mode("model.ttl");
        for kept in [0o600, 0o640, 0o755] {
            std::fs::set_permissions(
                root.path().join("model.ttl"),
                std::fs::Permissions::from_mode(kept),
            )
            .unwrap();
            out.write("model.ttl", b"new").unwrap();
            assert_eq!(mode("model.ttl"), kept);
            let staged = out.stage_replacing("model.ttl", b"newer").unwrap();
            staged.sync().unwrap();
            staged.rename().unwrap();
            assert_eq!(mode("model.ttl"), kept);
        }
        out.write("fresh.ttl", b"x").unwrap();
        assert_eq!(mode("fresh.ttl"), default);
    }

    #[test]
    fn a_staged_file_dropped_before_its_rename_is_removed() {
        let root = tempfile::tempdir().unwrap();
        let out = OutputDir::open(root.path()).unwrap();
        let staged = out.stage("a/b.txt", b"x").unwrap();
        assert_eq!(out.leftovers(true).unwrap().len(), 1);
        drop(staged);
        assert_eq!(out.leftovers(true).unwrap(), Vec::<String>::new());
        assert!(!root.path().join("a/b.txt").exists());
    }

    #[test]
    fn directories_a_run_created_go_when_it_wrote_nothing() {
        let root = tempfile::tempdir().unwrap();
        let out = root.path().join("gen/out");
        drop(OutputDir::create(&out).unwrap());
        assert!(!root.path().join("gen").exists(), "both created, both gone");

        let created = OutputDir::create(&out).unwrap();
        std::fs::write(out.join("kept.txt"), "x").unwrap();
        drop(created);
        assert!(out.join("kept.txt").exists(), "a written file stays");

        std::fs::remove_file(out.join("kept.txt")).unwrap();
        std::fs::remove_dir(&out).unwrap();
        // "gen" was there before: only "out" is the run's.
        drop(OutputDir::create(&out).unwrap());
        assert!(root.path().join("gen").exists() && !out.exists());
    }
}
