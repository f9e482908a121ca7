//! The template engine's settings, the same for the normal and the
//! tracing render.

use minijinja::{Environment, UndefinedBehavior};

use crate::syntax::{Delimiters, Syntax};

/// Minijinja fuel for one render: enough for hundreds of thousands of loop
/// iterations, small enough that a runaway template stops in about a second.
pub(crate) const RENDER_FUEL: u64 = 50_000_000;

/// An engine for templates in `syntax`, with the settings every render uses.
pub(crate) fn environment(syntax: Syntax) -> Environment<'static> {
    let mut env = Environment::new();
    env.set_syntax(Delimiters::for_syntax(syntax).config());
    env.set_undefined_behavior(UndefinedBehavior::Strict);
    env.set_fuel(Some(RENDER_FUEL));
    // HTML-escape in HTML and XML templates only. minijinja would also
    // JSON-quote every value in .json, .js and .yaml templates; generators
    // print those with `|tojson` where they want a literal.
    env.set_auto_escape_callback(|name| {
        let name = name.trim_end_matches(".j2").trim_end_matches(".jinja");
        match name.rsplit_once('.').map(|(_, suffix)| suffix) {
            Some("html" | "htm" | "xml") => minijinja::AutoEscape::Html,
            _ => minijinja::AutoEscape::None,
        }
    });
    env
}
