//! Makes a run's written files durable while the run goes on.
//!
//! Nothing is renamed into place before one sync of the file system has
//! made every staged output durable (seams-core's `apply`). Left to then,
//! that sync writes the whole generation while the user waits, even when
//! every file's writeback was started as it was written (writeback is not
//! durability: the disk's cache is flushed only by a sync). So a run syncs
//! its file system in the background every [`EVERY`] bytes it writes, and
//! the last sync finds little left: for the 158 MB of expense x300,
//! traced, 0.16 to 0.21 s before, 0.04 to 0.07 s after, on the benchmark's
//! machine. Advisory: a sync that fails or is late leaves its bytes to
//! that last one, which reports errors.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, TrySendError};
use std::sync::{Mutex, PoisonError};

/// How many bytes written between two background syncs: a few syncs for a
/// generation of hundreds of megabytes, none for a small one.
pub(crate) const EVERY: u64 = 16 << 20;

/// Counts what one run writes to files in a directory, and syncs its file
/// system on a thread of its own every [`EVERY`] bytes.
#[derive(Debug)]
pub(crate) struct Flusher {
    dir: PathBuf,
    state: Mutex<State>,
    /// The syncing thread runs: [`Flusher::syncing`].
    syncing: AtomicBool,
}

#[derive(Debug, Default)]
struct State {
    /// Bytes written since the last sync was asked for.
    since: u64,
    /// Wakes the syncing thread, started at the first sync asked for; it
    /// ends when this goes (with the run's last file writer).
    wake: Option<SyncSender<()>>,
    /// The thread, not waited for: a run does not wait for its last
    /// background sync (the final one covers its bytes).
    thread: Option<std::thread::JoinHandle<()>>,
    /// The thread could not be started: no more tries.
    unable: bool,
}

impl Flusher {
    /// A count for files written in `dir`.
    pub(crate) fn new(dir: PathBuf) -> Flusher {
        Flusher {
            dir,
            state: Mutex::new(State::default()),
            syncing: AtomicBool::new(false),
        }
    }

    /// Counts `bytes` as written; past [`EVERY`] since the last sync was
    /// asked for, asks for one, unless one is waiting to start (it will
    /// cover these bytes too).
    pub(crate) fn wrote(&self, bytes: usize) {
        if !cfg!(target_os = "linux") {
            return;
        }
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        state.since = state.since.saturating_add(bytes as u64);
        if state.since < EVERY || state.unable {
            return;
        }
        state.since = 0;
        if state.wake.is_none() {
            // One waiting request at most: the thread takes it when its
            // sync in progress ends.
            let (wake, asked) = std::sync::mpsc::sync_channel(1);
            let dir = self.dir.clone();
            match std::thread::Builder::new()
                .name("seams-flush".to_owned())
                .spawn(move || sync_when_asked(&dir, &asked))
            {
                Ok(thread) => {
                    state.wake = Some(wake);
                    state.thread = Some(thread);
                    self.syncing.store(true, Ordering::Relaxed);
                }
                Err(_) => {
                    state.unable = true;
                    return;
                }
            }
        }
        if let Some(wake) = &state.wake
            && let Err(TrySendError::Disconnected(())) = wake.try_send(())
        {
            // The thread ended (its directory could not be opened).
            state.wake = None;
            state.unable = true;
            self.syncing.store(false, Ordering::Relaxed);
        }
    }

    /// Whether the background syncs run: from then on they write the
    /// run's files out, many at once, and a file's writeback is not
    /// started as it is written (see `BlobFile::append`).
    pub(crate) fn syncing(&self) -> bool {
        self.syncing.load(Ordering::Relaxed)
    }

    /// Whether a sync was ever asked for.
    #[cfg(test)]
    pub(crate) fn asked(&self) -> bool {
        let state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        state.thread.is_some()
    }

    /// The bytes counted since the last sync was asked for.
    #[cfg(test)]
    fn since(&self) -> u64 {
        self.state
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .since
    }
}

/// Syncs the file system holding `dir` each time it is asked, until the
/// asking side is gone.
fn sync_when_asked(dir: &std::path::Path, asked: &Receiver<()>) {
    let Ok(dir) = std::fs::File::open(dir) else {
        return;
    };
    while asked.recv().is_ok() {
        sync_file_system(&dir);
    }
}

#[cfg(target_os = "linux")]
fn sync_file_system(dir: &std::fs::File) {
    // Advisory (see the module's doc): a failure leaves the bytes to the
    // sync that makes a run durable, which checks its result.
    let _ = rustix::fs::syncfs(dir);
}

#[cfg(not(target_os = "linux"))]
fn sync_file_system(_dir: &std::fs::File) {}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn a_sync_is_asked_for_every_so_many_bytes_and_its_thread_ends_with_the_run() {
        let dir = tempfile::tempdir().unwrap();
        let flusher = Flusher::new(dir.path().to_owned());

        // Below the threshold: counted, no thread.
        flusher.wrote(1 << 20);
        flusher.wrote((EVERY - (1 << 20) - 1) as usize);
        assert_eq!(flusher.since(), EVERY - 1);
        assert!(!flusher.asked());

        // The byte that reaches it asks for a sync: the count starts
        // again, on a thread of its own.
        flusher.wrote(1);
        assert_eq!(flusher.since(), 0);
        assert!(flusher.asked());
        flusher.wrote(EVERY as usize);
        flusher.wrote(EVERY as usize);
        assert_eq!(flusher.since(), 0);
        flusher.wrote(3);
        assert_eq!(flusher.since(), 3);

        // Its thread syncs what it was asked to and ends once the run's
        // writers are gone.
        let state = flusher.state.into_inner().unwrap();
        assert!(!state.unable);
        drop(state.wake);
        state.thread.unwrap().join().unwrap();
    }

    #[test]
    fn a_directory_that_cannot_be_opened_stops_the_asking() {
        let dir = tempfile::tempdir().unwrap();
        let flusher = Flusher::new(dir.path().join("gone"));
        flusher.wrote(EVERY as usize);
        assert!(flusher.syncing());
        let thread = flusher.state.lock().unwrap().thread.take().unwrap();
        thread.join().unwrap();
        // The next request finds the thread gone, and no other starts:
        // files' writeback is started as they are written again.
        flusher.wrote(EVERY as usize);
        assert!(!flusher.syncing());
        let state = flusher.state.lock().unwrap();
        assert!(state.unable && state.wake.is_none() && state.thread.is_none());
    }
}
