//! The no-op's shortcut: each locked file's metadata as it was when a
//! no-op last read the file and found the lock's bytes, or when the
//! generate that wrote it had written it, so that the next no-op reads
//! only the files whose metadata changed (at expense x1000 a no-op
//! otherwise reads and hashes 1.7 GB).
//!
//! Why that is sound: every write to a file sets its change time (ctime),
//! which no one can set back short of changing the system clock, and a
//! file replaced by another is another inode. So a file whose device,
//! inode, size, modification and change times all equal the recorded ones
//! still holds the bytes it held, but for a write made within the same
//! tick of the file system's clock as the recorded change time (what git
//! calls "racy"). So a file is recorded only when its change time is older
//! than that of the cache file, made after every file was read; the others
//! are read again next time. Network file systems whose server clock lags
//! this machine's weaken that rule, as they do for git.
//!
//! A generate knows the bytes it wrote (it hashed them as it wrote them)
//! and the metadata each file had right after its last write: a file
//! that still has that inode, size and modification time was written by
//! no one since (a write sets the modification time, and only the file's
//! owner may set it back, who may as well edit this cache), so its
//! metadata now is recorded with the hash, under the same rule.
//!
//! The cache lives in seams's private cache directory (as compiled
//! components do, and trusted the same way), one file per project, named
//! by the hash of the project's path, the least recently refreshed of
//! them removed past [`MAX_PROJECTS`]. A cache that is missing, not
//! private, unreadable or garbled only costs the hashing. `seams check`
//! never uses it: it reads every byte.

use std::collections::{HashMap, HashSet};
use std::io::Write;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// The first line of a cache file: its format.
const HEADER: &str = "seams-stat 1\n";

/// The largest cache file read: far past any lock's (a line per locked
/// file); a larger one is not seams's.
const MAX_BYTES: u64 = 256 << 20;

/// How many projects' caches are kept: the least recently refreshed go
/// beyond it.
const MAX_PROJECTS: usize = 64;

/// A file's identity, size and times, as `stat` gives them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct FileStat {
    dev: u64,
    ino: u64,
    size: u64,
    mtime: (i64, i64),
    ctime: (i64, i64),
}

impl FileStat {
    /// The stat of an open file.
    pub(crate) fn of(meta: &std::fs::Metadata) -> FileStat {
        FileStat {
            dev: meta.dev(),
            ino: meta.ino(),
            size: meta.size(),
            mtime: (meta.mtime(), meta.mtime_nsec()),
            ctime: (meta.ctime(), meta.ctime_nsec()),
        }
    }

    /// The device the file is on: which file system a sync must reach.
    pub(crate) fn device(&self) -> u64 {
        self.dev
    }

    /// Whether a file with this stat was last written when it had
    /// `written`: the same inode, size and modification time. The change
    /// time is left out, for a rename sets it; a write sets the
    /// modification time, which only the file's owner may set back.
    pub(crate) fn same_write(&self, written: &FileStat) -> bool {
        (self.dev, self.ino, self.size, self.mtime)
            == (written.dev, written.ino, written.size, written.mtime)
    }
}

/// A project's cache, as read.
#[derive(Debug, Default)]
pub(crate) struct StatCache {
    /// Where it is kept; `None` when there is no private place for it.
    file: Option<PathBuf>,
    /// Per locked path: its sha256 and the stat it had.
    entries: HashMap<String, (String, FileStat)>,
}

impl StatCache {
    /// The cache of the project at `root`, kept in `dir` (created private
    /// when missing); empty when there is none that can be trusted.
    pub(crate) fn load(dir: &Path, root: &Path) -> StatCache {
        let Some(dir) = seams_runtime::private_dir(dir) else {
            return StatCache::default();
        };
        let Ok(root) = std::fs::canonicalize(root) else {
            return StatCache::default();
        };
        let name = seams_model::sha256_hex(root.as_os_str().as_encoded_bytes());
        let file = dir.join(format!("{name}.stat"));
        let entries = read_private(&file)
            .map(|text| parse(&text))
            .unwrap_or_default();
        StatCache {
            file: Some(file),
            entries,
        }
    }

    /// Whether the file at `rel` with metadata `stat` is known to hold the
    /// bytes whose hash is `sha256`.
    pub(crate) fn vouches(&self, rel: &str, sha256: &str, stat: &FileStat) -> bool {
        self.entries
            .get(rel)
            .is_some_and(|(known, was)| known == sha256 && was == stat)
    }

    /// The entries for the locked files `lock` gives the sha256 of, but
    /// for those `except` names: still true of those files, whose stat
    /// would change with their bytes, for a record to carry over.
    pub(crate) fn carried<'a>(
        &'a self,
        lock: &'a HashMap<&str, &str>,
        except: &'a HashSet<&str>,
    ) -> impl Iterator<Item = (&'a str, &'a str, FileStat)> + 'a {
        self.entries
            .iter()
            .filter_map(move |(path, (sha256, stat))| {
                (lock.get(path.as_str()) == Some(&sha256.as_str())
                    && !except.contains(path.as_str()))
                .then_some((path.as_str(), sha256.as_str(), *stat))
            })
    }

    /// Replaces the cache with `entries` (path, sha256, stat), each one a
    /// file known to hold those bytes under that stat; those changed in
    /// the cache file's own clock tick are left out. Best effort: a cache
    /// that cannot be written only costs the next no-op its hashing.
    pub(crate) fn record<'a>(
        &self,
        entries: impl IntoIterator<Item = (&'a str, &'a str, FileStat)>,
    ) {
        let Some(file) = &self.file else {
            return;
        };
        let Some(dir) = file.parent() else {
            return;
        };
        let written = || -> std::io::Result<()> {
            let mut temp = tempfile::NamedTempFile::new_in(dir)?;
            // Made after every file was read: its change time is the
            // clock's tick now.
            let now = FileStat::of(&temp.as_file().metadata()?).ctime;
            temp.write_all(render(entries, now).as_bytes())?;
            temp.persist(file).map_err(|e| e.error)?;
            seams_runtime::evict(dir, "stat", MAX_PROJECTS)
        };
        let _ = written();
    }
}

/// The text of a private regular file of at most [`MAX_BYTES`].
fn read_private(file: &Path) -> Option<String> {
    let meta = std::fs::symlink_metadata(file).ok()?;
    if !meta.is_file() || !seams_runtime::private(&meta) || meta.len() > MAX_BYTES {
        return None;
    }
    std::fs::read_to_string(file).ok()
}

/// A cache file's entries; lines that are not entries are skipped, and a
/// file of another format has none.
fn parse(text: &str) -> HashMap<String, (String, FileStat)> {
    let Some(body) = text.strip_prefix(HEADER) else {
        return HashMap::new();
    };
    body.lines().filter_map(parse_line).collect()
}

/// `sha256 dev ino size mtime.ns ctime.ns path`.
fn parse_line(line: &str) -> Option<(String, (String, FileStat))> {
    let mut fields = line.splitn(7, ' ');
    let sha256 = fields.next()?;
    if sha256.len() != 64 || !sha256.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    let mut number = || fields.next()?.parse::<u64>().ok();
    let (dev, ino, size) = (number()?, number()?, number()?);
    let mut time = || {
        let (s, ns) = fields.next()?.split_once('.')?;
        Some((s.parse::<i64>().ok()?, ns.parse::<i64>().ok()?))
    };
    let (mtime, ctime) = (time()?, time()?);
    let path = fields.next().filter(|p| !p.is_empty())?;
    let stat = FileStat {
        dev,
        ino,
        size,
        mtime,
        ctime,
    };
    Some((path.to_owned(), (sha256.to_owned(), stat)))
}

/// The cache file for `entries`, leaving out those changed at or after
/// `now` (a change in the same tick would not change their stat) and
/// paths that would not read back as one line.
fn render<'a>(
    entries: impl IntoIterator<Item = (&'a str, &'a str, FileStat)>,
    now: (i64, i64),
) -> String {
    let mut text = String::from(HEADER);
    for (path, sha256, stat) in entries {
        if stat.ctime >= now || path.is_empty() || path.contains(['\n', '\r']) {
            continue;
        }
        let FileStat {
            dev,
            ino,
            size,
            mtime,
            ctime,
        } = stat;
        text.push_str(&format!(
            "{sha256} {dev} {ino} {size} {}.{} {}.{} {path}\n",
            mtime.0, mtime.1, ctime.0, ctime.1
        ));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    const SHA: &str = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

    fn stat(ino: u64, ctime: (i64, i64)) -> FileStat {
        FileStat {
            dev: 2049,
            ino,
            size: 10,
            mtime: (1_700_000_000, 5),
            ctime,
        }
    }

    #[test]
    fn entries_read_back_as_written_and_those_changed_in_the_last_tick_are_left_out() {
        let now = (1_700_000_100, 400);
        // (path, its change time, whether it is kept)
        let cases = [
            ("a.html", (1_700_000_099, 999_999_999), true),
            ("dir/with space.txt", (1_700_000_100, 399), true),
            ("same-tick.txt", now, false),
            ("later.txt", (1_700_000_100, 401), false),
            ("two\nlines.txt", (1_000, 0), false),
        ];
        let stats: Vec<FileStat> = (0..cases.len() as u64)
            .map(|i| stat(i, cases[i as usize].1))
            .collect();
        let text = render(
            cases.iter().zip(&stats).map(|((p, _, _), s)| (*p, SHA, *s)),
            now,
        );
        let read = parse(&text);
        for ((path, _, kept), stat) in cases.iter().zip(&stats) {
            assert_eq!(
                read.get(*path) == Some(&(SHA.to_owned(), *stat)),
                *kept,
                "{path}"
            );
        }
        assert_eq!(read.len(), 2);
    }

    #[test]
    fn a_garbled_or_foreign_cache_vouches_for_nothing() {
        let good = render([("a.txt", SHA, stat(1, (5, 0)))], (9, 0));
        assert_eq!(parse(&good).len(), 1);
        let cases = [
            String::new(),
            good.replacen("seams-stat 1", "seams-stat 2", 1),
            good.replace(SHA, &SHA[1..]),
            good.replace(SHA, &SHA.replace('a', "g")),
            good.replace(" 5.0 ", " 5 "),
            good.replace(" 5.0 ", " 5.x "),
            good.replace(" 10 ", " -10 "),
            good.replace(" a.txt", " "),
            good.replace(" 2049 ", " 99999999999999999999999 "),
            good[..good.len() - 12].to_owned(),
        ];
        for text in cases {
            assert!(parse(&text).is_empty(), "{text:?}");
        }
    }

    #[test]
    fn a_recorded_file_is_vouched_for_until_it_changes() {
        let cache_dir = tempfile::tempdir().unwrap();
        let project = tempfile::tempdir().unwrap();
        let file = project.path().join("a.txt");
        std::fs::write(&file, "one").unwrap();
        let stat_now = || FileStat::of(&std::fs::metadata(&file).unwrap());
        // Written well before it is recorded: out of the racy tick.
        let before = stat_now();
        std::thread::sleep(std::time::Duration::from_millis(50));
        let dir = cache_dir.path().join("stat");
        StatCache::load(&dir, project.path()).record([("a.txt", SHA, before)]);
        let cache = StatCache::load(&dir, project.path());
        assert!(cache.vouches("a.txt", SHA, &stat_now()));
        assert!(!cache.vouches("a.txt", &SHA.replace('0', "1"), &stat_now()));
        assert!(!cache.vouches("b.txt", SHA, &stat_now()));
        // Same size, modification time set back: the change time moved.
        let modified = std::fs::metadata(&file).unwrap().modified().unwrap();
        std::fs::write(&file, "two").unwrap();
        let times = std::fs::FileTimes::new().set_modified(modified);
        std::fs::File::options()
            .write(true)
            .open(&file)
            .unwrap()
            .set_times(times)
            .unwrap();
        assert_eq!(stat_now().mtime, before.mtime);
        assert!(!cache.vouches("a.txt", SHA, &stat_now()));
        // Another project's cache is another file.
        let other = tempfile::tempdir().unwrap();
        assert!(StatCache::load(&dir, other.path()).entries.is_empty());
    }

    #[test]
    fn records_past_the_limit_go_the_least_recently_refreshed_first() {
        let cache_dir = tempfile::tempdir().unwrap();
        let dir = cache_dir.path().join("stat");
        let projects: Vec<_> = (0..MAX_PROJECTS + 2)
            .map(|_| tempfile::tempdir().unwrap())
            .collect();
        let long_ago = stat(1, (1_000, 0));
        // Each record refreshed a second after the one before, all in the
        // past: the two first go.
        let start = std::time::SystemTime::now() - std::time::Duration::from_secs(1000);
        for (i, project) in projects.iter().enumerate() {
            let cache = StatCache::load(&dir, project.path());
            cache.record([("a.txt", SHA, long_ago)]);
            let refreshed = start + std::time::Duration::from_secs(i as u64);
            std::fs::File::options()
                .write(true)
                .open(cache.file.unwrap())
                .unwrap()
                .set_modified(refreshed)
                .unwrap();
        }
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), MAX_PROJECTS);
        for (i, project) in projects.iter().enumerate() {
            let kept = StatCache::load(&dir, project.path()).vouches("a.txt", SHA, &long_ago);
            assert_eq!(kept, i >= 2, "project {i}");
        }
    }

    #[test]
    fn a_cache_others_may_write_is_not_used() {
        use std::os::unix::fs::PermissionsExt;
        let cache_dir = tempfile::tempdir().unwrap();
        let project = tempfile::tempdir().unwrap();
        let dir = cache_dir.path().join("stat");
        let long_ago = stat(1, (1_000, 0));
        StatCache::load(&dir, project.path()).record([("a.txt", SHA, long_ago)]);
        assert!(StatCache::load(&dir, project.path()).vouches("a.txt", SHA, &long_ago));
        let file = std::fs::read_dir(&dir)
            .unwrap()
            .next()
            .unwrap()
            .unwrap()
            .path();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o666)).unwrap();
        assert!(!StatCache::load(&dir, project.path()).vouches("a.txt", SHA, &long_ago));
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
        // Nor one larger than any lock's could need (sparse here).
        let record = std::fs::read(&file).unwrap();
        std::fs::File::options()
            .write(true)
            .open(&file)
            .unwrap()
            .set_len(MAX_BYTES + 1)
            .unwrap();
        assert!(!StatCache::load(&dir, project.path()).vouches("a.txt", SHA, &long_ago));
        std::fs::write(&file, &record).unwrap();
        assert!(StatCache::load(&dir, project.path()).vouches("a.txt", SHA, &long_ago));
        // A link to a private record elsewhere is not a record.
        let elsewhere = cache_dir.path().join("elsewhere.stat");
        std::fs::rename(&file, &elsewhere).unwrap();
        std::os::unix::fs::symlink(&elsewhere, &file).unwrap();
        assert!(!StatCache::load(&dir, project.path()).vouches("a.txt", SHA, &long_ago));
        std::fs::remove_file(&file).unwrap();
        std::fs::rename(&elsewhere, &file).unwrap();
        assert!(StatCache::load(&dir, project.path()).vouches("a.txt", SHA, &long_ago));
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).unwrap();
        assert!(!StatCache::load(&dir, project.path()).vouches("a.txt", SHA, &long_ago));
    }
}
