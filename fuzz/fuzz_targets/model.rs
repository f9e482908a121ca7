//! A model file as a cloned project may hold it: parsed as Turtle, checked
//! against the UI vocabulary and its shapes, each finding located by the
//! position scanner. Nothing may panic, whatever the bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use seams_model::{Model, Vocabulary};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(model) = Model::parse("model.ttl", text) else {
        return;
    };
    let ui = Vocabulary {
        namespace: "https://w3id.org/seams/ui#".into(),
        terms: include_str!("../../vocabulary/ui.ttl").into(),
        shapes: Some(include_str!("../../vocabulary/ui.shapes.ttl").into()),
    };
    let _ = seams_model::vocabulary::check(&model, &[ui]);
    let _ = model.label_lines();
});
