//! An OCI manifest (or index, or anything else) as a hostile registry
//! serves it, checked as a pull checks it. Nothing may panic, whatever
//! the bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = seams_registry::fuzzing::manifest(data);
});
