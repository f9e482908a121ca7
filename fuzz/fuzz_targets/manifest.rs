//! A `seams.toml` as a cloned project may hold it: parsed and checked
//! (generators, model files, sandbox limits, paths). Nothing may panic,
//! whatever the bytes.
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let root = Path::new("/project");
    let _ = seams_core::Project::parse(root, &root.join("seams.toml"), text);
});
