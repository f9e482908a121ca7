//! A `seams.lock` as a cloned project may hold it, read as `generate`
//! and `check` read it. Nothing may panic, whatever the bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = seams_core::fuzzing::lock(data);
});
