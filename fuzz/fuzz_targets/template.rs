//! A template as a generator (untrusted) ships it: instrumented for
//! tracing, parsed in both syntaxes, then rendered and traced with an
//! empty context. Nothing may panic, whatever the bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use seams_templates::{Syntax, TemplateService};

fuzz_target!(|data: &[u8]| {
    let Ok(source) = std::str::from_utf8(data) else {
        return;
    };
    for syntax in [Syntax::Jinja, Syntax::Brackets] {
        let Ok(service) = TemplateService::new([("t.txt".to_owned(), source.to_owned())], syntax)
        else {
            continue;
        };
        if let Ok(mut rendered) = service.render_json("t.txt", "{}") {
            let _ = service.trace(&mut rendered);
        }
    }
});
