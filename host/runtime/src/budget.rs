//! What a generator costs the host, counted where it is spent.
//!
//! Each run has a [`Budget`]: its memory cap and deadline. Every heap
//! allocation made on the run's thread (SPARQL answers and intermediate
//! results, render contexts, rendered texts, trace state, copies of what
//! the guest hands over) is charged to it by the process's global
//! allocator, and the limiter charges linear memory to the same count.
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

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::Arc;
use std::sync::atomic::{AtomicIsize, AtomicU8, Ordering};
use std::time::{Duration, Instant};

/// How many allocations pass between two looks at the clock.
const CLOCK_EVERY: u32 = 256;

/// Why a run's thread stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stop {
    /// An allocation would have passed the memory cap.
    Memory,
    /// The deadline passed while the host worked for the generator.
    Deadline,
}

/// One run's memory cap and deadline, and what it has used.
#[derive(Debug)]
pub(crate) struct Budget {
    used: AtomicIsize,
    limit: isize,
    deadline: Instant,
    /// 0 while running, then the `Stop` that ended it.
    stopped: AtomicU8,
}

impl Budget {
    pub(crate) fn new(limit_bytes: usize, deadline: Instant) -> Arc<Budget> {
        Arc::new(Budget {
            used: AtomicIsize::new(0),
            limit: isize::try_from(limit_bytes).unwrap_or(isize::MAX),
            deadline,
            stopped: AtomicU8::new(0),
        })
    }

    /// Charges this thread's allocations to the budget until the guard is
    /// dropped. Not enforced until [`enforced`] says so.
    pub(crate) fn enter(self: &Arc<Self>) -> Entered {
        let _ = CURRENT.try_with(|c| c.set(Arc::as_ptr(self)));
        Entered {
            _budget: self.clone(),
        }
    }

    /// Charges `bytes` of linear memory growth; false (and nothing
    /// charged) when that would pass the cap.
    pub(crate) fn grow(&self, bytes: usize) -> bool {
        let bytes = isize::try_from(bytes).unwrap_or(isize::MAX);
        let used = self
            .used
            .fetch_add(bytes, Ordering::Relaxed)
            .saturating_add(bytes);
        if used > self.limit {
            self.used.fetch_sub(bytes, Ordering::Relaxed);
            return false;
        }
        true
    }

    /// When the run's time is up.
    pub(crate) fn deadline(&self) -> Instant {
        self.deadline
    }

    /// Bytes charged now (host allocations and linear memory).
    #[cfg(test)]
    pub(crate) fn used(&self) -> usize {
        self.used.load(Ordering::Relaxed).max(0) as usize
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
        let _ = ENFORCED.try_with(|e| e.set(false));
        // Nothing here allocates: the thread sleeps until the process ends.
        loop {
            std::thread::sleep(Duration::from_secs(3600));
        }
    }

    fn charge(&self, bytes: usize) {
        let bytes = isize::try_from(bytes).unwrap_or(isize::MAX);
        let used = self
            .used
            .fetch_add(bytes, Ordering::Relaxed)
            .saturating_add(bytes);
        if !ENFORCED.try_with(Cell::get).unwrap_or(false) {
            return;
        }
        if used > self.limit {
            self.used.fetch_sub(bytes, Ordering::Relaxed);
            self.stop(Stop::Memory);
        }
        let count = TICKS.try_with(|t| {
            let n = t.get().wrapping_add(1);
            t.set(n);
            n
        });
        if count.unwrap_or(0).is_multiple_of(CLOCK_EVERY) && Instant::now() >= self.deadline {
            self.stop(Stop::Deadline);
        }
    }

    fn refund(&self, bytes: usize) {
        let bytes = isize::try_from(bytes).unwrap_or(isize::MAX);
        self.used.fetch_sub(bytes, Ordering::Relaxed);
    }
}

/// While alive, the thread's allocations are charged to a budget.
pub(crate) struct Entered {
    _budget: Arc<Budget>,
}

impl Drop for Entered {
    fn drop(&mut self) {
        let _ = ENFORCED.try_with(|e| e.set(false));
        let _ = CURRENT.try_with(|c| c.set(std::ptr::null()));
    }
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
            let _ = ENFORCED.try_with(|e| e.set(self.0));
        }
    }
    let before = ENFORCED.try_with(|e| e.replace(on)).unwrap_or(false);
    let _restore = Restore(before);
    f()
}

thread_local! {
    // Const-initialised and without destructors, so the allocator may
    // read them at any time, even while the thread is being torn down.
    static CURRENT: Cell<*const Budget> = const { Cell::new(std::ptr::null()) };
    static ENFORCED: Cell<bool> = const { Cell::new(false) };
    static TICKS: Cell<u32> = const { Cell::new(0) };
}

fn current() -> Option<&'static Budget> {
    let ptr = CURRENT.try_with(Cell::get).ok()?;
    // SAFETY: the pointer is set by `Budget::enter` from an `Arc` that the
    // `Entered` guard keeps alive, and cleared when the guard drops.
    unsafe { ptr.as_ref() }
}

/// The system allocator, charging each run's allocations to its budget.
pub(crate) struct Accounting;

// SAFETY: every call is forwarded to `System` unchanged; the accounting
// only reads and writes atomics and thread-locals, and never allocates.
unsafe impl GlobalAlloc for Accounting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if let Some(budget) = current() {
            budget.charge(layout.size());
        }
        // SAFETY: forwarded with the caller's guarantees.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if let Some(budget) = current() {
            budget.charge(layout.size());
        }
        // SAFETY: forwarded with the caller's guarantees.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        if let Some(budget) = current() {
            budget.refund(layout.size());
        }
        // SAFETY: forwarded with the caller's guarantees.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if let Some(budget) = current() {
            if new_size > layout.size() {
                budget.charge(new_size - layout.size());
            } else {
                budget.refund(layout.size() - new_size);
            }
        }
        // SAFETY: forwarded with the caller's guarantees.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allocations_on_the_thread_are_charged_and_refunded() {
        let budget = Budget::new(1 << 30, Instant::now() + Duration::from_secs(60));
        let _entered = budget.enter();
        let before = budget.used();
        let big = vec![0u8; 10 << 20];
        assert!(budget.used() >= before + (10 << 20));
        drop(big);
        assert!(budget.used() < before + (1 << 20));
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
        assert!(budget.used() <= 8 << 20, "{} bytes charged", budget.used());
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
    fn lenient_regions_count_but_never_stop() {
        let budget = Budget::new(1 << 20, Instant::now());
        let _entered = budget.enter();
        let kept = enforced(|| lenient(|| vec![0u8; 4 << 20]));
        assert!(budget.used() >= 4 << 20);
        assert_eq!(budget.stopped(), None);
        drop(kept);
    }
}
