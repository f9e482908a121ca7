//! A write-back's edit of a model file: the file as a cloned project may
//! hold it, and the element, property, old and new values an edited
//! output line gives (split at NUL bytes). The literal is found by the
//! Turtle scanner and rewritten, or refused. Nothing may panic, whatever
//! the bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(input) = std::str::from_utf8(data) else {
        return;
    };
    let mut parts = input.splitn(5, '\0');
    let text = parts.next().unwrap_or_default();
    let subject = parts.next().unwrap_or("https://example.org/chat#chat");
    let predicate = parts
        .next()
        .unwrap_or("http://www.w3.org/2000/01/rdf-schema#label");
    let value = parts.next().unwrap_or("Chat");
    let new_value = parts.next().unwrap_or("Talk");
    let _ = seams_model::written::rewrite(text, subject, predicate, value, new_value);
});
