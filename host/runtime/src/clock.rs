//! The generator's clocks: fixed, so that no real time reaches the guest.
//! Wall and monotonic time always say the same, and a timer is ready the
//! moment it is made: a sleep returns at once (it cannot stall the host)
//! and polling a timer gives the same answer on every run.

use std::time::Duration;

use wasmtime::component::{HasData, Linker, Resource, ResourceTable};
use wasmtime_wasi::WasiView;
use wasmtime_wasi::p2::bindings::clocks::monotonic_clock;
use wasmtime_wasi::p2::{DynPollable, Pollable, subscribe};

/// Clocks that always say the same: the Unix epoch, and zero.
pub(crate) struct FixedClock;

impl wasmtime_wasi::HostWallClock for FixedClock {
    fn resolution(&self) -> Duration {
        Duration::from_secs(1)
    }
    fn now(&self) -> Duration {
        Duration::ZERO
    }
}

impl wasmtime_wasi::HostMonotonicClock for FixedClock {
    fn resolution(&self) -> u64 {
        1_000_000_000
    }
    fn now(&self) -> u64 {
        0
    }
}

/// A timer that is ready when it is made.
struct Elapsed;

#[wasmtime_wasi::async_trait]
impl Pollable for Elapsed {
    async fn ready(&mut self) {}
}

/// The fixed monotonic clock's host side, over the resource table of any
/// store that gives WASI's view: its timers live there.
pub(crate) struct Timers<'a>(&'a mut ResourceTable);

/// What the linker hands [`Timers`]: a borrow of the store's table.
struct HasTimers;

impl HasData for HasTimers {
    type Data<'a> = Timers<'a>;
}

impl monotonic_clock::Host for Timers<'_> {
    fn now(&mut self) -> wasmtime::Result<monotonic_clock::Instant> {
        Ok(wasmtime_wasi::HostMonotonicClock::now(&FixedClock))
    }

    fn resolution(&mut self) -> wasmtime::Result<monotonic_clock::Duration> {
        Ok(wasmtime_wasi::HostMonotonicClock::resolution(&FixedClock))
    }

    fn subscribe_instant(
        &mut self,
        _when: monotonic_clock::Instant,
    ) -> wasmtime::Result<Resource<DynPollable>> {
        self.elapsed_timer()
    }

    fn subscribe_duration(
        &mut self,
        _duration: monotonic_clock::Duration,
    ) -> wasmtime::Result<Resource<DynPollable>> {
        self.elapsed_timer()
    }
}

impl Timers<'_> {
    fn elapsed_timer(&mut self) -> wasmtime::Result<Resource<DynPollable>> {
        let timer = self.0.push(Elapsed)?;
        subscribe(self.0, timer)
    }
}

/// Replaces WASI's monotonic clock (added by `wasmtime_wasi`) with the
/// fixed one whose timers are always ready.
pub(crate) fn add_to_linker<T: WasiView + 'static>(linker: &mut Linker<T>) -> wasmtime::Result<()> {
    linker.allow_shadowing(true);
    let added = monotonic_clock::add_to_linker::<T, HasTimers>(linker, |t| Timers(t.ctx().table));
    linker.allow_shadowing(false);
    added
}
