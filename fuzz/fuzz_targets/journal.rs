//! A `seams.journal` as a cloned project (or a crash) may leave it, read
//! as `generate` and `check` read it: cut short, crafted, or whole.
//! Nothing may panic, whatever the bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = seams_core::fuzzing::journal(data);
});
