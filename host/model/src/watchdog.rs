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

    /// The thread: cancels what is due, then sleeps until the next
    /// deadline or until a query is added.
    fn run(&self) {
        let mut watched = self.lock();
        loop {
            let now = Instant::now();
            watched.entries.retain(|e| {
                let due = e.deadline <= now;
                if due {
                    e.token.cancel();
                }
                !due
            });
            let next = watched.entries.iter().map(|e| e.deadline).min();
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
}

/// Has `token` cancelled at `deadline`, unless the [`Watch`] is dropped
/// first. Fails only when the watchdog's thread cannot be started.
pub(crate) fn watch(token: CancellationToken, deadline: Instant) -> Result<Watch, String> {
    static DOG: OnceLock<Result<&'static Watchdog, String>> = OnceLock::new();
    let dog = DOG
        .get_or_init(|| {
            let dog: &'static Watchdog = Box::leak(Box::new(Watchdog {
                watched: Mutex::default(),
                added: Condvar::new(),
            }));
            std::thread::Builder::new()
                .name("seams-deadlines".to_owned())
                .spawn(move || dog.run())
                .map(|_| dog)
                .map_err(|e| format!("cannot start the thread that enforces query deadlines: {e}"))
        })
        .clone()?;
    let mut watched = dog.lock();
    let id = watched.next_id;
    watched.next_id += 1;
    watched.entries.push(Entry {
        id,
        deadline,
        token,
    });
    drop(watched);
    dog.added.notify_one();
    Ok(Watch { dog, id })
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
}
