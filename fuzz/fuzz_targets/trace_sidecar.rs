//! A `.trace.json` sidecar as a cloned project may hold it: read as a
//! trace and its lines checked. Nothing may panic, whatever the bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use seams_templates::Trace;

fuzz_target!(|data: &[u8]| {
    if let Ok(trace) = serde_json::from_slice::<Trace>(data) {
        let _ = serde_json::to_string(&trace);
    }
});
