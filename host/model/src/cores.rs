//! How many threads the machine runs at once, for the work seams shares
//! among threads (hashing files, finishing renders and sidecars), and
//! running two pieces of work at once.

use std::sync::{Mutex, OnceLock, PoisonError};

/// How many threads can run at once (1 when that cannot be told). Asked
/// once per process: the standard library reads the cgroup's files on
/// every call, three opens each time, several times a run.
pub fn cores() -> usize {
    static CORES: OnceLock<usize> = OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, usize::from))
}

/// Below this many bytes of model files, reading, hashing, parsing and
/// storing them stay on the calling thread: starting a thread and ending
/// it (0.1 to 0.2 ms here) costs more than the work it would take over.
pub const WORTH_A_THREAD_BYTES: u64 = 256 << 10;

/// Lets a thread just started run before this one goes on. Some schedulers
/// queue a new thread on its parent's CPU while the other idles, until the
/// parent blocks (this machine's kernel packs vCPUs: a thread started
/// while its parent worked on waited over 1 ms in 10 to 14 of 60 runs,
/// in none after one yield); a yield costs a system call.
fn let_it_start() {
    std::thread::yield_now();
}

/// Runs `aside` on a thread named `name` while `here` runs on this one,
/// and gives both results. When the system will not start a thread, the
/// two run one after the other on this one: a busy machine makes a run
/// slower, never a failure. A panic in `aside` is resumed here.
pub fn beside<A: Send, H>(
    name: &str,
    aside: impl FnOnce() -> A + Send,
    here: impl FnOnce() -> H,
) -> (A, H) {
    beside_on(
        std::thread::Builder::new().name(name.to_owned()),
        aside,
        here,
    )
}

/// [`beside`], starting the thread with `builder`.
fn beside_on<A: Send, H>(
    builder: std::thread::Builder,
    aside: impl FnOnce() -> A + Send,
    here: impl FnOnce() -> H,
) -> (A, H) {
    // Kept where this thread can take it back if no other starts.
    let work = Mutex::new(Some(aside));
    let take = || {
        work.lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
            .expect("the work is taken once")
    };
    std::thread::scope(|scope| {
        let thread = builder.spawn_scoped(scope, || take()());
        let_it_start();
        let here = here();
        let aside = match thread {
            Ok(thread) => thread
                .join()
                .unwrap_or_else(|payload| std::panic::resume_unwind(payload)),
            Err(_) => take()(),
        };
        (aside, here)
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_count_is_the_standard_librarys_asked_once() {
        let expected = std::thread::available_parallelism().map_or(1, usize::from);
        assert_eq!(super::cores(), expected);
        assert_eq!(super::cores(), expected);
    }

    #[test]
    fn work_beside_gives_both_results_and_runs_on_a_named_thread() {
        let here = std::thread::current().id();
        let ((name, id), value) = super::beside(
            "seams-test-aside",
            || {
                let me = std::thread::current();
                (me.name().map(str::to_owned), me.id())
            },
            || 7,
        );
        assert_eq!(name.as_deref(), Some("seams-test-aside"));
        assert_ne!(id, here);
        assert_eq!(value, 7);
    }

    #[test]
    fn a_panic_aside_is_resumed_here() {
        let caught = std::panic::catch_unwind(|| {
            super::beside("seams-test-panic", || panic!("aside failed"), || ())
        });
        let payload = caught.expect_err("the panic comes through");
        assert_eq!(payload.downcast_ref::<&str>(), Some(&"aside failed"));
    }

    #[test]
    fn with_no_thread_to_start_the_work_runs_here_one_after_the_other() {
        // A stack larger than the address space: the system refuses the
        // thread, as it does when it runs out of them.
        let here = std::thread::current().id();
        let refused = std::thread::Builder::new().stack_size(1 << 50);
        let (aside, value) = super::beside_on(refused, || std::thread::current().id(), || 3);
        assert_eq!(aside, here);
        assert_eq!(value, 3);
    }
}
