//! What an LLM provider answers, as a draft reads it: the response body
//! of either API, the answer's JSON inside it, and the drafted extract
//! step (Rust, Python or JavaScript) vetted for what it may not do (files, environment, network,
//! copied values). Nothing may panic, whatever the bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use seams_authoring::Language;
use seams_authoring::fuzzing::{
    answer_text, check_extract, check_script, copied_values, parse_answer, script_strings,
};
use seams_authoring::provider::Api;

fuzz_target!(|data: &[u8]| {
    let mut texts: Vec<String> = [Api::OpenAi, Api::Anthropic]
        .into_iter()
        .filter_map(|api| answer_text(api, data))
        .collect();
    // A command provider's answer is the text itself.
    if let Ok(text) = std::str::from_utf8(data) {
        texts.push(text.to_owned());
    }
    for text in texts {
        // A Python or JavaScript extract step, read by the script rules.
        for language in [Language::Python, Language::Js] {
            let _ = check_script(language, &text);
            let _ = script_strings(language, &text);
        }
        if let Ok(answer) = parse_answer(&text) {
            let _ = check_extract(&answer.extract);
            let values = [("label".to_owned(), "Conversations".to_owned())];
            let _ = copied_values(&answer.extract, &values);
        }
    }
});
