//! What a generator costs the host, counted where it is spent.
//!
//! Each run has a [`Budget`]: its memory cap and deadline. Every heap
//! allocation made on the run's threads (SPARQL answers and intermediate
//! results, render contexts, rendered texts, trace state, copies of what
//! the guest hands over) is charged to it by the process's global
//! allocator, and the limiter charges linear memory to the same count.
//! A run may have several threads (the generator's, and the one that
//! traces and writes its renders): each counts in a thread-local and adds
//! its count to the run's shared one every [`DRIFT`] bytes, so that what
//! one thread allocates and another frees comes out even, and the cap is
//! passed by at most [`DRIFT`] per thread.
//!
//! An allocation cannot fail gracefully in Rust (it aborts the process),
//! and a host library cannot be interrupted mid-call. So inside an
//! *enforced* region, an allocation that would pass the cap, or one made
//! after the deadline, never happens: the thread stops there for good and
//! the run is reported failed by whoever waits for it (see
//! `Runtime::call`). What the stopped thread holds stays allocated, but is
//! within the cap. Regions where the thread may hold a lock another run
//! needs (instantiation, dropping a store) are not enforced: there the
//! count is kept but nothing stops.

use std::alloc::{GlobalAlloc, Layout};

use mimalloc::MiMalloc;
use std::cell::Cell;
use std::sync::Arc;
use std::sync::atomic::{AtomicIsize, AtomicU8, Ordering};
use std::time::{Duration, Instant};

use crate::limits::HOST_STACK_BYTES;

/// How long past its deadline a run may take to stop before it is given
/// up (documented in the book's sandbox chapter).
pub(crate) const GRACE: Duration = Duration::from_secs(2);

/// How many allocations pass between two looks at the clock.
const CLOCK_EVERY: u32 = 256;

/// How far a thread's own count may drift from its run's shared count
/// before it is added to it: one atomic add per 64 KiB allocated or freed,
/// not one per allocation.
const DRIFT: isize = 64 << 10;

/// Why a run's thread stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stop {
    /// An allocation would have passed the memory cap.
    Memory,
    /// The deadline passed while the host worked for the generator.
    Deadline,
}

/// One run's memory cap and deadline, shared by the run's thread (which
/// counts what it uses in its thread-locals) and whoever waits for it.
#[derive(Debug)]
pub(crate) struct Budget {
    limit: isize,
    deadline: Instant,
    /// Bytes charged by the run's threads, each up to its [`DRIFT`].
    used: AtomicIsize,
    /// 0 while running, then the `Stop` that ended it.
    stopped: AtomicU8,
}

impl Budget {
    pub(crate) fn new(limit_bytes: usize, deadline: Instant) -> Arc<Budget> {
        Arc::new(Budget {
            limit: isize::try_from(limit_bytes).unwrap_or(isize::MAX),
            deadline,
            used: AtomicIsize::new(0),
            stopped: AtomicU8::new(0),
        })
    }

    /// Charges this thread's allocations to the budget until the guard
    /// is dropped. Not enforced until [`enforced`] says so.
    pub(crate) fn enter(self: &Arc<Self>) -> Entered {
        let _ = RUN.try_with(|run| {
            run.budget.set(Arc::as_ptr(self));
            run.drift.set(0);
            run.seen.set(self.used.load(Ordering::Relaxed));
            run.enforced.set(false);
        });
        Entered {
            _budget: self.clone(),
        }
    }

    /// When the run's time is up.
    pub(crate) fn deadline(&self) -> Instant {
        self.deadline
    }

    /// Why the run's thread stopped, once it has.
    pub(crate) fn stopped(&self) -> Option<Stop> {
        match self.stopped.load(Ordering::Acquire) {
            1 => Some(Stop::Memory),
            2 => Some(Stop::Deadline),
            _ => None,
        }
    }

    fn stop(&self, why: Stop) -> ! {
        let code = match why {
            Stop::Memory => 1,
            Stop::Deadline => 2,
        };
        let _ = self
            .stopped
            .compare_exchange(0, code, Ordering::AcqRel, Ordering::Acquire);
        let _ = RUN.try_with(|run| run.enforced.set(false));
        // Nothing here allocates: the thread sleeps until the process ends.
        loop {
            std::thread::sleep(Duration::from_secs(3600));
        }
    }
}

/// Why [`capped`] work was abandoned.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Exceeded {
    /// Its allocations would have passed the memory cap.
    #[error("would have taken more than {0} MiB of memory")]
    Memory(usize),
    /// It ran past its time.
    #[error("took more than {0} s")]
    Time(u64),
}

/// Runs `f` on a thread of its own whose live heap allocations are capped
/// at `limit_bytes` and which must finish within `timeout`: for host work
/// on input no library bounds (what a registry sends). Past either, the
/// thread is abandoned, holding at most the cap, as a stopped run's is.
///
/// # Errors
///
/// The cap or the time was passed.
pub fn capped<R: Send + 'static>(
    limit_bytes: usize,
    timeout: Duration,
    f: impl FnOnce() -> R + Send + 'static,
) -> Result<R, Exceeded> {
    let deadline = Instant::now() + timeout;
    let budget = Budget::new(limit_bytes, deadline);
    let (sender, receiver) = std::sync::mpsc::sync_channel(1);
    let inner = budget.clone();
    let spawned = std::thread::Builder::new()
        .name("seams-capped".to_owned())
        .spawn(move || {
            let _entered = inner.enter();
            let result = enforced(f);
            let _ = sender.send(result);
        });
    let memory = Exceeded::Memory(limit_bytes >> 20);
    let time = Exceeded::Time(timeout.as_secs());
    if spawned.is_err() {
        return Err(memory);
    }
    loop {
        match receiver.recv_timeout(Duration::from_millis(10)) {
            Ok(result) => return Ok(result),
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => return Err(memory),
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => match budget.stopped() {
                Some(Stop::Memory) => return Err(memory),
                Some(Stop::Deadline) => return Err(time),
                None if Instant::now() >= deadline + GRACE => return Err(time),
                None => {}
            },
        }
    }
}

/// Host work for a run on a thread of its own, charged to the run's
/// budget and stopped with it: [`alongside`].
pub(crate) struct Alongside<R> {
    result: std::sync::mpsc::Receiver<R>,
    budget: Arc<Budget>,
}

/// Starts `f` on a thread of its own, its allocations charged to `budget`
/// and enforced, while the caller goes on; with the native stack of the
/// run's own thread ([`HOST_STACK_BYTES`]), as `f` may parse what the
/// generator handed over.
pub(crate) fn alongside<R: Send + 'static>(
    budget: &Arc<Budget>,
    name: &str,
    f: impl FnOnce() -> R + Send + 'static,
) -> std::io::Result<Alongside<R>> {
    let (sender, result) = std::sync::mpsc::sync_channel(1);
    let inner = budget.clone();
    std::thread::Builder::new()
        .name(name.to_owned())
        .stack_size(HOST_STACK_BYTES)
        .spawn(move || {
            let _entered = inner.enter();
            let _ = sender.send(enforced(f));
        })?;
    Ok(Alongside {
        result,
        budget: budget.clone(),
    })
}

impl<R> Alongside<R> {
    /// Its result; `None` when it panicked or the budget stopped it.
    pub(crate) fn join(self) -> Option<R> {
        loop {
            match self.result.recv_timeout(Duration::from_millis(100)) {
                Ok(result) => return Some(result),
                Err(std::sync::mpsc::RecvTimeoutError::Timeout)
                    if self.budget.stopped().is_none() => {}
                Err(_) => return None,
            }
        }
    }
}

/// How much lower than the run's own threads a thread whose result is
/// wanted only at the end of the run ([`in_background`]) is scheduled
/// (Linux nice levels).
const BACKGROUND_NICENESS: i32 = 5;

/// Lowers the calling thread's scheduling priority: work whose result the
/// run wants only at its end (the model check) then takes the cores the
/// generator and the template parser leave. On two cores, a check beside
/// extract and the template parser delayed the first render of a small
/// model by the parse's time. Best effort: where it is refused, nothing
/// changes.
pub(crate) fn in_background() {
    let thread = Some(rustix::thread::gettid());
    if let Ok(now) = rustix::process::getpriority_process(thread) {
        let _ = rustix::process::setpriority_process(
            thread,
            now.saturating_add(BACKGROUND_NICENESS).min(19),
        );
    }
}

/// While alive, the thread's allocations are charged to a budget.
pub(crate) struct Entered {
    _budget: Arc<Budget>,
}

impl Drop for Entered {
    fn drop(&mut self) {
        let _ = RUN.try_with(|run| {
            run.enforced.set(false);
            settle(run, &self._budget, 0);
            run.budget.set(std::ptr::null());
        });
    }
}

/// Charges `bytes` of linear memory growth to the current run; false (and
/// nothing charged) when that would pass its cap.
pub(crate) fn grow(bytes: usize) -> bool {
    RUN.try_with(|run| {
        let Some(budget) = current(run) else {
            return true;
        };
        let bytes = isize::try_from(bytes).unwrap_or(isize::MAX);
        let total = budget
            .used
            .load(Ordering::Relaxed)
            .saturating_add(run.drift.get())
            .saturating_add(bytes);
        if total > budget.limit {
            return false;
        }
        settle(run, budget, bytes);
        true
    })
    .unwrap_or(true)
}

/// Bytes charged to the current run (host allocations and linear memory),
/// by all its threads.
#[cfg(test)]
pub(crate) fn used() -> usize {
    RUN.with(|run| {
        let budget = current(run).expect("a run is entered");
        (budget.used.load(Ordering::Relaxed) + run.drift.get()).max(0) as usize
    })
}

/// The run this thread's allocations are charged to.
#[inline]
fn current(run: &RunState) -> Option<&Budget> {
    let budget = run.budget.get();
    // SAFETY: set by `Budget::enter` from an `Arc` that the `Entered`
    // guard keeps alive, and cleared when the guard drops.
    (!budget.is_null()).then(|| unsafe { &*budget })
}

/// Adds this thread's drift and `bytes` to the run's shared count; the
/// count after.
#[inline]
fn settle(run: &RunState, budget: &Budget, bytes: isize) -> isize {
    let delta = run.drift.replace(0).saturating_add(bytes);
    let total = budget
        .used
        .fetch_add(delta, Ordering::AcqRel)
        .saturating_add(delta);
    run.seen.set(total);
    total
}

/// Runs `f` with the current budget enforced: an allocation past the cap
/// or the deadline stops the thread.
pub(crate) fn enforced<R>(f: impl FnOnce() -> R) -> R {
    with_enforcement(true, f)
}

/// Runs `f` counted but not enforced: for work that may hold a lock
/// another run needs.
pub(crate) fn lenient<R>(f: impl FnOnce() -> R) -> R {
    with_enforcement(false, f)
}

fn with_enforcement<R>(on: bool, f: impl FnOnce() -> R) -> R {
    struct Restore(bool);
    impl Drop for Restore {
        fn drop(&mut self) {
            let _ = RUN.try_with(|run| run.enforced.set(self.0));
        }
    }
    let before = RUN
        .try_with(|run| run.enforced.replace(on))
        .unwrap_or(false);
    let _restore = Restore(before);
    f()
}

/// A thread's run: which budget its allocations are charged to, and the
/// count, kept here so that charging takes no atomic operation.
struct RunState {
    budget: Cell<*const Budget>,
    /// Charged on this thread since it last settled with the run's count.
    drift: Cell<isize>,
    /// The run's count when this thread last settled.
    seen: Cell<isize>,
    enforced: Cell<bool>,
    ticks: Cell<u32>,
}

thread_local! {
    // Const-initialised and without a destructor, so the allocator may
    // read it at any time, even while the thread is being torn down.
    static RUN: RunState = const {
        RunState {
            budget: Cell::new(std::ptr::null()),
            drift: Cell::new(0),
            seen: Cell::new(0),
            enforced: Cell::new(false),
            ticks: Cell::new(0),
        }
    };
}

#[inline]
fn charge(bytes: usize) {
    let _ = RUN.try_with(|run| {
        let Some(budget) = current(run) else {
            return;
        };
        let bytes = isize::try_from(bytes).unwrap_or(isize::MAX);
        let drift = run.drift.get().saturating_add(bytes);
        if !run.enforced.get() {
            run.drift.set(drift);
            if drift >= DRIFT {
                settle(run, budget, 0);
            }
            return;
        }
        let used = if drift >= DRIFT {
            // Checked against the count with the bytes, before adding them:
            // an allocation past the cap never happens.
            let total = budget.used.load(Ordering::Acquire).saturating_add(drift);
            if total > budget.limit {
                budget.stop(Stop::Memory);
            }
            run.drift.set(drift);
            settle(run, budget, 0)
        } else {
            run.drift.set(drift);
            run.seen.get().saturating_add(drift)
        };
        if used > budget.limit {
            budget.stop(Stop::Memory);
        }
        let ticks = run.ticks.get().wrapping_add(1);
        run.ticks.set(ticks);
        if ticks.is_multiple_of(CLOCK_EVERY) && Instant::now() >= budget.deadline {
            budget.stop(Stop::Deadline);
        }
    });
}

#[inline]
fn refund(bytes: usize) {
    let _ = RUN.try_with(|run| {
        if let Some(budget) = current(run) {
            let bytes = isize::try_from(bytes).unwrap_or(isize::MAX);
            let drift = run.drift.get().saturating_sub(bytes);
            run.drift.set(drift);
            if drift <= -DRIFT {
                settle(run, budget, 0);
            }
        }
    });
}

/// The allocator for a process that runs generators: mimalloc, charging
/// every allocation made while a run is current to that run's budget
/// (`[sandbox] memory-mib`), so that the host's work on a generator's
/// behalf (rendering, tracing, query answers) is bounded with the
/// generator's own memory. A binary chooses it as its allocator:
///
/// ```ignore
/// #[global_allocator]
/// static ALLOCATOR: seams_runtime::Accounting = seams_runtime::Accounting;
/// ```
///
/// Without it, a generator's linear memory is still bounded, but not what
/// the host allocates for it.
pub struct Accounting;

// SAFETY: every call is forwarded to `MiMalloc` unchanged; the accounting
// only reads and writes thread-locals and an atomic, and never allocates.
unsafe impl GlobalAlloc for Accounting {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        charge(layout.size());
        // SAFETY: forwarded with the caller's guarantees.
        unsafe { MiMalloc.alloc(layout) }
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        charge(layout.size());
        // SAFETY: forwarded with the caller's guarantees.
        unsafe { MiMalloc.alloc_zeroed(layout) }
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        refund(layout.size());
        // SAFETY: forwarded with the caller's guarantees.
        unsafe { MiMalloc.dealloc(ptr, layout) }
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if new_size > layout.size() {
            charge(new_size - layout.size());
        } else {
            refund(layout.size() - new_size);
        }
        // SAFETY: forwarded with the caller's guarantees.
        unsafe { MiMalloc.realloc(ptr, layout, new_size) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_background_thread_is_scheduled_below_the_others() {
        let niceness = || rustix::process::getpriority_process(Some(rustix::thread::gettid()));
        let here = niceness().unwrap();
        let there = std::thread::spawn(move || {
            let before = niceness().unwrap();
            in_background();
            (before, niceness().unwrap())
        })
        .join()
        .unwrap();
        assert_eq!(there.0, here);
        assert_eq!(there.1, (here + BACKGROUND_NICENESS).min(19));
        // The thread's alone: this one is as it was.
        assert_eq!(niceness().unwrap(), here);
    }

    #[test]
    fn capped_work_gives_its_result_or_why_it_was_abandoned() {
        assert_eq!(capped(8 << 20, Duration::from_secs(30), || 1 + 1), Ok(2));
        let greedy = || {
            let mut kept = Vec::new();
            while kept.len() < 1 << 20 {
                kept.push(vec![1u8; 1 << 20]);
            }
            kept.len()
        };
        assert_eq!(
            capped(8 << 20, Duration::from_secs(30), greedy),
            Err(Exceeded::Memory(8))
        );
    }

    #[test]
    fn allocations_on_the_thread_are_charged_and_refunded() {
        let budget = Budget::new(1 << 30, Instant::now() + Duration::from_secs(60));
        let _entered = budget.enter();
        let before = used();
        let big = vec![0u8; 10 << 20];
        assert!(used() >= before + (10 << 20));
        drop(big);
        assert!(used() < before + (1 << 20));
        assert!(grow(1 << 20));
        assert!(!grow(2 << 30), "linear memory past the cap is refused");
    }

    #[test]
    fn an_allocation_past_the_cap_stops_the_thread_and_says_why() {
        let budget = Budget::new(8 << 20, Instant::now() + Duration::from_secs(60));
        let inside = budget.clone();
        let thread = std::thread::spawn(move || {
            let _entered = inside.enter();
            enforced(|| {
                let mut kept = Vec::new();
                loop {
                    kept.push(vec![1u8; 1 << 20]);
                }
            })
        });
        let start = Instant::now();
        while budget.stopped().is_none() && start.elapsed() < Duration::from_secs(30) {
            std::thread::sleep(Duration::from_millis(5));
        }
        assert_eq!(budget.stopped(), Some(Stop::Memory));
        assert!(!thread.is_finished());
    }

    #[test]
    fn work_after_the_deadline_stops_the_thread() {
        let budget = Budget::new(1 << 30, Instant::now());
        let inside = budget.clone();
        std::thread::spawn(move || {
            let _entered = inside.enter();
            enforced(|| {
                loop {
                    std::hint::black_box(vec![0u8; 64]);
                }
            })
        });
        let start = Instant::now();
        while budget.stopped().is_none() && start.elapsed() < Duration::from_secs(30) {
            std::thread::sleep(Duration::from_millis(5));
        }
        assert_eq!(budget.stopped(), Some(Stop::Deadline));
    }

    #[test]
    fn every_thread_of_a_run_counts_against_its_one_cap() {
        let budget = Budget::new(1 << 30, Instant::now() + Duration::from_secs(60));
        let _entered = budget.enter();
        let before = used();
        let other = budget.clone();
        // Allocated on another thread of the run, freed on this one.
        let big = std::thread::spawn(move || {
            let _entered = other.enter();
            vec![0u8; 10 << 20]
        })
        .join()
        .unwrap();
        assert!(used() >= before + (10 << 20));
        drop(big);
        assert!(used() < before + (1 << 20));

        // Two threads of 6 MiB each pass a cap of 8 MiB that neither does alone.
        let small = Budget::new(8 << 20, Instant::now() + Duration::from_secs(60));
        let holders: Vec<_> = (0..2)
            .map(|_| {
                let inside = small.clone();
                std::thread::spawn(move || {
                    let _entered = inside.enter();
                    enforced(|| {
                        let mut kept = Vec::new();
                        for _ in 0..6 {
                            kept.push(vec![1u8; 1 << 20]);
                            std::thread::sleep(Duration::from_millis(20));
                        }
                        kept.len()
                    })
                })
            })
            .collect();
        let start = Instant::now();
        while small.stopped().is_none() && start.elapsed() < Duration::from_secs(30) {
            std::thread::sleep(Duration::from_millis(5));
        }
        assert_eq!(small.stopped(), Some(Stop::Memory));
        assert!(holders.iter().any(|h| !h.is_finished()));
    }

    #[test]
    fn lenient_regions_count_but_never_stop() {
        let budget = Budget::new(1 << 20, Instant::now());
        let _entered = budget.enter();
        let kept = enforced(|| lenient(|| vec![0u8; 4 << 20]));
        assert!(used() >= 4 << 20);
        assert_eq!(budget.stopped(), None);
        drop(kept);
    }
}
