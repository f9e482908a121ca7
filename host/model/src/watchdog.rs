//! One thread that cancels every query whose deadline has passed. A query
//! registers its cancellation token and deadline ([`watch`]) and withdraws
//! them when it ends (dropping the [`Watch`]). A thread of its own per
//! query cost a spawn and a join for each of a generator's queries.

use std::sync::{Condvar, Mutex, MutexGuard, OnceLock, PoisonError};
use std::time::Instant;

use oxigraph::sparql::CancellationToken;

/// The queries being watched, and the signal that one was added.
struct Watchdog {
    watched: Mutex<Watched>,
    added: Condvar,
}

#[derive(Default)]
struct Watched {
    next_id: u64,
    entries: Vec<Entry>,
    /// When the thread wakes by itself next: the earliest deadline it
    /// knows of (`None`: only when told). A query due no earlier need not
    /// wake it: queries mostly come one after another with one timeout,
    /// and waking the thread for each made it contend with the
    /// generator's thread for the lock (once 26 ms of its CPU in a 0.45 s
    /// run at expense x100).
    wakes_at: Option<Instant>,
    /// How many times the thread has looked at the entries.
    rounds: u64,
}

struct Entry {
    id: u64,
    deadline: Instant,
    token: CancellationToken,
}

/// A query being watched; dropping it withdraws the query.
pub(crate) struct Watch {
    dog: &'static Watchdog,
    id: u64,
}

impl Watchdog {
    fn lock(&self) -> MutexGuard<'_, Watched> {
        // Nothing panics while holding the lock; a poisoned list is still
        // a valid list.
        self.watched.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A watchdog with its thread started.
    fn start() -> Result<&'static Watchdog, String> {
        let dog: &'static Watchdog = Box::leak(Box::new(Watchdog {
            watched: Mutex::default(),
            added: Condvar::new(),
        }));
        std::thread::Builder::new()
            .name("seams-deadlines".to_owned())
            .spawn(move || dog.run())
            .map(|_| dog)
            .map_err(|e| format!("cannot start the thread that enforces query deadlines: {e}"))
    }

    /// The thread: cancels what is due, then sleeps until the next
    /// deadline or until a query due earlier is added.
    fn run(&self) {
        let mut watched = self.lock();
        loop {
            watched.rounds += 1;
            let now = Instant::now();
            watched.entries.retain(|e| {
                let due = e.deadline <= now;
                if due {
                    e.token.cancel();
                }
                !due
            });
            let next = watched.entries.iter().map(|e| e.deadline).min();
            watched.wakes_at = next;
            watched = match next {
                Some(at) => {
                    self.added
                        .wait_timeout(watched, at.saturating_duration_since(now))
                        .unwrap_or_else(PoisonError::into_inner)
                        .0
                }
                None => self
                    .added
                    .wait(watched)
                    .unwrap_or_else(PoisonError::into_inner),
            };
        }
    }

    /// Watches `token` until `deadline`; wakes the thread only when it
    /// would sleep past the deadline.
    fn watch(&'static self, token: CancellationToken, deadline: Instant) -> Watch {
        let mut watched = self.lock();
        let id = watched.next_id;
        watched.next_id += 1;
        watched.entries.push(Entry {
            id,
            deadline,
            token,
        });
        let wake = wakes_too_late(watched.wakes_at, deadline);
        if wake {
            // Told once: until it looks again, it wakes by then.
            watched.wakes_at = Some(deadline);
        }
        drop(watched);
        if wake {
            self.added.notify_one();
        }
        Watch { dog: self, id }
    }
}

/// Whether a thread that wakes by itself at `wakes_at` (never, when
/// `None`) would be too late for `deadline`.
fn wakes_too_late(wakes_at: Option<Instant>, deadline: Instant) -> bool {
    wakes_at.is_none_or(|at| deadline < at)
}

/// Has `token` cancelled at `deadline`, unless the [`Watch`] is dropped
/// first. Fails only when the watchdog's thread cannot be started.
pub(crate) fn watch(token: CancellationToken, deadline: Instant) -> Result<Watch, String> {
    static DOG: OnceLock<Result<&'static Watchdog, String>> = OnceLock::new();
    let dog = DOG.get_or_init(Watchdog::start).clone()?;
    Ok(dog.watch(token, deadline))
}

impl Drop for Watch {
    fn drop(&mut self) {
        self.dog.lock().entries.retain(|e| e.id != self.id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn each_token_is_cancelled_at_its_own_deadline_and_a_withdrawn_one_never() {
        let start = Instant::now();
        let deadlines = [300, 50, 150].map(|ms| start + Duration::from_millis(ms));
        let tokens: Vec<CancellationToken> =
            deadlines.iter().map(|_| CancellationToken::new()).collect();
        let watches: Vec<Watch> = tokens
            .iter()
            .zip(deadlines)
            .map(|(t, d)| watch(t.clone(), d).unwrap())
            .collect();
        let withdrawn = CancellationToken::new();
        drop(watch(withdrawn.clone(), start + Duration::from_millis(100)).unwrap());
        // The order they fall due in: 50, 150, 300 ms.
        for i in [1, 2, 0] {
            while !tokens[i].is_cancelled() {
                assert!(
                    start.elapsed() < Duration::from_secs(60),
                    "token {i} never cancelled"
                );
                std::thread::sleep(Duration::from_millis(5));
            }
            assert!(Instant::now() >= deadlines[i], "token {i} cancelled early");
        }
        assert!(!withdrawn.is_cancelled());
        drop(watches);
    }

    #[test]
    fn the_thread_is_woken_only_for_a_deadline_before_the_one_it_sleeps_until() {
        let now = Instant::now();
        let later = now + Duration::from_secs(1);
        for (wakes_at, deadline, wake) in [
            (None, now, true),
            (Some(later), now, true),
            (Some(now), later, false),
            (Some(now), now, false),
        ] {
            assert_eq!(
                wakes_too_late(wakes_at, deadline),
                wake,
                "{wakes_at:?} {deadline:?}"
            );
        }
    }

    #[test]
    fn queries_one_after_another_with_one_timeout_do_not_wake_the_thread_each() {
        let dog = Watchdog::start().unwrap();
        let timeout = Duration::from_secs(600);
        // Each query takes a while, as a real one does: the thread would
        // be asleep when the next one comes.
        for _ in 0..200 {
            let watch = dog.watch(CancellationToken::new(), Instant::now() + timeout);
            std::thread::sleep(Duration::from_micros(200));
            drop(watch);
        }
        // An earlier deadline still wakes it, and is still met.
        let soon = CancellationToken::new();
        let _watch = dog.watch(soon.clone(), Instant::now() + Duration::from_millis(20));
        let start = Instant::now();
        while !soon.is_cancelled() {
            assert!(start.elapsed() < Duration::from_secs(60), "never cancelled");
            std::thread::sleep(Duration::from_millis(5));
        }
        // Woken for the first query and the early one, and by the early
        // deadline: a few rounds, not one per query.
        let rounds = dog.lock().rounds;
        assert!(rounds <= 10, "{rounds} rounds for 201 queries");
    }
}
