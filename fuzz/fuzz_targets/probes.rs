//! The drafting probes on random models: the bytes choose a model in the
//! UI vocabulary (with the coincidences real models have), and no probe
//! may refuse any of the reference generators written for the property
//! test, nor panic, whatever the model.
#![no_main]

use libfuzzer_sys::fuzz_target;
use seams_authoring::soundness::sound;

fuzz_target!(|data: &[u8]| {
    if let Err(why) = sound(data) {
        panic!("{why}");
    }
});
