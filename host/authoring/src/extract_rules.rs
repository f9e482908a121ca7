//! What a drafted `extract.rs` may contain. It is written by an LLM and
//! compiled on the user's machine, where macros such as `include_str!` or
//! `env!` and attributes such as `#[path]` run at compile time: they could
//! read the user's files and environment into the component. So the file
//! is checked on its syntax tree against an allowlist before anything
//! builds it: only listed macros, called by their bare name; no `use` that
//! names or renames to a macro; no modules, `extern crate`, macro
//! definitions, or attributes beyond `derive` and `allow`.

use proc_macro2::{Delimiter, Ident, Spacing, TokenStream, TokenTree};
use syn::ext::IdentExt;
use syn::visit::Visit;

/// An identifier as the compiler resolves it: `r#env` is `env`.
fn name(ident: &Ident) -> String {
    ident.unraw().to_string()
}

/// The macros a drafted extract may call, by bare name.
pub const ALLOWED_MACROS: [&str; 12] = [
    "json",
    "format",
    "vec",
    "matches",
    "assert",
    "assert_eq",
    "assert_ne",
    "panic",
    "unreachable",
    "write",
    "writeln",
    "debug_assert",
];

/// The attributes a drafted extract may carry.
const ALLOWED_ATTRIBUTES: [&str; 2] = ["derive", "allow"];

/// Checks `source` against the allowlist; each refusal names its line.
pub fn check(source: &str) -> Vec<String> {
    let file = match syn::parse_file(source) {
        Ok(file) => file,
        Err(e) => {
            let line = e.span().start().line;
            return vec![format!("extract.rs line {line}: not valid Rust: {e}")];
        }
    };
    let mut rules = Rules::default();
    rules.visit_file(&file);
    rules.refusals
}

#[derive(Default)]
struct Rules {
    refusals: Vec<String>,
}

impl Rules {
    fn refuse(&mut self, line: usize, why: String) {
        self.refusals.push(format!("extract.rs line {line}: {why}"));
    }

    fn check_macro_path(&mut self, path: &syn::Path) {
        let line = path
            .segments
            .first()
            .map_or(0, |s| s.ident.span().start().line);
        let called = path_text(path);
        let bare = path.leading_colon.is_none() && path.segments.len() == 1;
        let allowed = path
            .segments
            .last()
            .is_some_and(|s| ALLOWED_MACROS.contains(&name(&s.ident).as_str()));
        if !(bare && allowed) {
            self.refuse(
                line,
                format!("the macro {called}! is not allowed{}", allowed_hint()),
            );
        }
    }

    /// Macro calls inside another macro's tokens (`json!({"a": env!("X")})`)
    /// are not parsed by syn: find `name!(...)` in the tokens.
    fn check_tokens(&mut self, tokens: &TokenStream) {
        let trees: Vec<TokenTree> = tokens.clone().into_iter().collect();
        for (i, tree) in trees.iter().enumerate() {
            match tree {
                TokenTree::Group(group) => self.check_tokens(&group.stream()),
                TokenTree::Punct(bang)
                    if bang.as_char() == '!' && bang.spacing() == Spacing::Alone =>
                {
                    let called = matches!(trees.get(i + 1), Some(TokenTree::Group(g)) if g.delimiter() != Delimiter::None);
                    if let (Some(TokenTree::Ident(called_name)), true) =
                        (i.checked_sub(1).map(|j| &trees[j]), called)
                    {
                        // `a::name!`: the two colons of `::` before the name.
                        let qualified = i >= 3
                            && matches!(&trees[i - 2], TokenTree::Punct(p) if p.as_char() == ':')
                            && matches!(&trees[i - 3], TokenTree::Punct(p) if p.as_char() == ':' && p.spacing() == Spacing::Joint);
                        let name_text = name(called_name);
                        if qualified || !ALLOWED_MACROS.contains(&name_text.as_str()) {
                            self.refuse(
                                called_name.span().start().line,
                                format!(
                                    "the macro {}{name_text}! is not allowed{}",
                                    if qualified { "…::" } else { "" },
                                    allowed_hint()
                                ),
                            );
                        }
                    }
                }
                _ => {}
            }
        }
    }
}

/// Values the reference prints that `source` writes in a string literal
/// instead of reading them from the model: `values` are (element, value)
/// pairs. A SPARQL query (a string holding `SELECT`, `ASK` or `WHERE`)
/// counts only when it quotes the value (a hard-coded filter); other
/// strings when they hold it as a word. Doc comments do not count.
#[cfg(any(test, fuzzing))]
pub fn copied_values(source: &str, values: &[(String, String)]) -> Vec<String> {
    copied_in("extract.rs", &strings(source), values)
}

/// Every string literal of `source` with its line, doc comments left out;
/// none when it does not parse (which [`check`] refuses).
pub(crate) fn strings(source: &str) -> Vec<(usize, String)> {
    let mut strings = Vec::new();
    if let Ok(tokens) = source.parse::<TokenStream>() {
        collect_strings(tokens, &mut strings);
    }
    strings
}

/// [`copied_values`] on the string literals of any language's `file`,
/// each with its line.
pub(crate) fn copied_in(
    file: &str,
    strings: &[(usize, String)],
    values: &[(String, String)],
) -> Vec<String> {
    let mut refusals = Vec::new();
    for (line, text) in strings {
        let upper = text.to_uppercase();
        let query = ["SELECT", "ASK", "WHERE"].iter().any(|k| upper.contains(k));
        for (element, value) in values {
            let copied = if query {
                text.contains(&format!("\"{value}\"")) || text.contains(&format!("'{value}'"))
            } else {
                holds_word(text, value)
            };
            if copied {
                refusals.push(format!(
                    "{file} line {line}: the string {text:?} writes {value:?}, a value of <{element}> that the reference prints: a generator that copies it prints it for every model; if the output shows the model's value there, query it from the model; if it is a fixed word of the output's format, write it in the template, not the extract"
                ));
            }
        }
    }
    refusals
}

/// Whether `text` holds `word` with no letter or digit on either side.
fn holds_word(text: &str, word: &str) -> bool {
    text.match_indices(word).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + word.len()..].chars().next();
        !before.is_some_and(char::is_alphanumeric) && !after.is_some_and(char::is_alphanumeric)
    })
}

/// Every string literal in `tokens` with its line, doc comments left out.
fn collect_strings(tokens: TokenStream, out: &mut Vec<(usize, String)>) {
    let mut after_hash = false;
    for tree in tokens {
        match tree {
            TokenTree::Group(group) => {
                let doc = after_hash
                    && group.delimiter() == Delimiter::Bracket
                    && matches!(group.stream().into_iter().next(), Some(TokenTree::Ident(i)) if i == "doc");
                if !doc {
                    collect_strings(group.stream(), out);
                }
                after_hash = false;
            }
            TokenTree::Literal(literal) => {
                if let Ok(string) = syn::parse_str::<syn::LitStr>(&literal.to_string()) {
                    out.push((literal.span().start().line, string.value()));
                }
                after_hash = false;
            }
            // `#[doc = ...]`, and `#![doc = ...]` (an inner `//!`).
            TokenTree::Punct(p) => {
                after_hash = p.as_char() == '#' || (after_hash && p.as_char() == '!');
            }
            TokenTree::Ident(_) => after_hash = false,
        }
    }
}

fn allowed_hint() -> String {
    format!(" (allowed: {}!)", ALLOWED_MACROS.join("!, "))
}

fn path_text(path: &syn::Path) -> String {
    let segments: Vec<String> = path.segments.iter().map(|s| name(&s.ident)).collect();
    format!(
        "{}{}",
        if path.leading_colon.is_some() {
            "::"
        } else {
            ""
        },
        segments.join("::")
    )
}

impl<'ast> Visit<'ast> for Rules {
    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        self.check_macro_path(&mac.path);
        self.check_tokens(&mac.tokens);
    }

    fn visit_attribute(&mut self, attr: &'ast syn::Attribute) {
        let path = attr.path();
        let attribute = path_text(path);
        let line = path
            .segments
            .first()
            .map_or(0, |s| s.ident.span().start().line);
        // Doc comments are `#[doc = "..."]`: a plain string only.
        if attribute == "doc" {
            let plain = matches!(
                &attr.meta,
                syn::Meta::NameValue(syn::MetaNameValue {
                    value: syn::Expr::Lit(syn::ExprLit {
                        lit: syn::Lit::Str(_),
                        ..
                    }),
                    ..
                })
            );
            if !plain {
                self.refuse(
                    line,
                    "the attribute #[doc] is allowed only as a plain doc comment".to_owned(),
                );
            }
            return;
        }
        if !(path.segments.len() == 1 && ALLOWED_ATTRIBUTES.contains(&attribute.as_str())) {
            self.refuse(
                line,
                format!(
                    "the attribute #[{attribute}] is not allowed (allowed: #[derive], #[allow])"
                ),
            );
            return;
        }
        if let syn::Meta::List(list) = &attr.meta {
            self.check_tokens(&list.tokens);
        }
    }

    fn visit_item_mod(&mut self, item: &'ast syn::ItemMod) {
        for attr in &item.attrs {
            self.visit_attribute(attr);
        }
        let line = item.ident.span().start().line;
        self.refuse(
            line,
            format!(
                "the module declaration `mod {}` is not allowed; keep everything in extract.rs",
                item.ident
            ),
        );
    }

    fn visit_item_extern_crate(&mut self, item: &'ast syn::ItemExternCrate) {
        let line = item.ident.span().start().line;
        self.refuse(
            line,
            format!("`extern crate {}` is not allowed", item.ident),
        );
    }

    fn visit_item_macro(&mut self, item: &'ast syn::ItemMacro) {
        // `macro_rules!` and macros in item position.
        for attr in &item.attrs {
            self.visit_attribute(attr);
        }
        self.visit_macro(&item.mac);
    }

    fn visit_item_foreign_mod(&mut self, item: &'ast syn::ItemForeignMod) {
        let line = item.abi.extern_token.span.start().line;
        self.refuse(line, "`extern` blocks are not allowed".to_owned());
    }

    fn visit_use_tree(&mut self, tree: &'ast syn::UseTree) {
        let named = |ident: &syn::Ident| {
            let text = name(ident);
            ALLOWED_MACROS.contains(&text.as_str()) || FORBIDDEN_NAMES.contains(&text.as_str())
        };
        match tree {
            syn::UseTree::Name(used) if named(&used.ident) && name(&used.ident) != "json" => {
                self.refuse(used.ident.span().start().line, format!("`use` of the macro name {} is not allowed; call allowed macros by their bare name", name(&used.ident)));
            }
            syn::UseTree::Rename(rename) if named(&rename.ident) || named(&rename.rename) => {
                self.refuse(
                    rename.ident.span().start().line,
                    format!(
                        "`use ... {} as {}` is not allowed: macros may not be renamed",
                        name(&rename.ident),
                        name(&rename.rename)
                    ),
                );
            }
            syn::UseTree::Path(path) if FORBIDDEN_NAMES.contains(&name(&path.ident).as_str()) => {
                self.refuse(
                    path.ident.span().start().line,
                    format!("`use` through {} is not allowed", name(&path.ident)),
                );
            }
            _ => syn::visit::visit_use_tree(self, tree),
        }
    }
}

/// Names that reach the compiler's environment or files, refused in `use`
/// as well as in calls.
const FORBIDDEN_NAMES: [&str; 9] = [
    "env",
    "option_env",
    "include",
    "include_str",
    "include_bytes",
    "concat_idents",
    "global_asm",
    "asm",
    "macro_rules",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_the_reference_prints_are_flagged_where_extract_writes_them() {
        let values = vec![
            ("urn:app".to_owned(), "Chat".to_owned()),
            ("urn:page".to_owned(), "thread".to_owned()),
        ];
        let source = r#"//! Reads the Chat title.
/// The Chat title, read from the model.
fn f() {
    let a = "Chat";
    let b = format!("{}.html", "thread");
    let q = "SELECT ?t WHERE { ?a rdfs:label ?t FILTER(?t = \"Chat\") }";
    let fine = "SELECT ?thread WHERE { ?thread ui:path ?p }";
    let also_fine = "Chatter threads";
}
"#;
        let flagged = copied_values(source, &values);
        assert_eq!(flagged.len(), 3, "{flagged:#?}");
        assert!(flagged[0].starts_with(
            "extract.rs line 4: the string \"Chat\" writes \"Chat\", a value of <urn:app>"
        ));
        assert!(flagged[1].starts_with("extract.rs line 5: the string \"thread\""));
        assert!(flagged[2].starts_with("extract.rs line 6:"));
    }

    const GOOD: &str = include_str!("../../../tests/fixtures/app_title/extract.rs");

    #[test]
    fn the_worked_example_passes() {
        assert_eq!(check(GOOD), Vec::<String>::new());
    }

    #[test]
    fn every_spelling_of_a_compile_time_read_is_refused() {
        let cases = [
            ("const S: &str = env!(\"HOME\");", "the macro env!"),
            (
                "const S: Option<&str> = option_env!(\"HOME\");",
                "the macro option_env!",
            ),
            (
                "const S: &str = include_str!(\"/etc/passwd\");",
                "the macro include_str!",
            ),
            (
                "const B: &[u8] = include_bytes!(\"/etc/passwd\");",
                "the macro include_bytes!",
            ),
            ("include!(\"/etc/passwd\");", "the macro include!"),
            (
                "const S: &str = ::core::include_str!(\"/etc/passwd\");",
                "the macro ::core::include_str!",
            ),
            (
                "const S: &str = std::include_str!(\"/etc/passwd\");",
                "the macro std::include_str!",
            ),
            (
                "use std::include_str as format;",
                "`use ... include_str as format`",
            ),
            (
                "use core::include_str as text;",
                "`use ... include_str as text`",
            ),
            (
                "use core::r#include_str as r#format;",
                "`use ... include_str as format`",
            ),
            ("const S: &str = r#env!(\"HOME\");", "the macro env!"),
            (
                "fn f() -> String { format!(\"{}\", r#include_str!(\"/x\")) }",
                "the macro include_str!",
            ),
            ("use std::env;", "`use` of the macro name env"),
            (
                "use std::{include_bytes};",
                "`use` of the macro name include_bytes",
            ),
            (
                "#[path = \"/etc/passwd\"] mod secrets;",
                "the attribute #[path]",
            ),
            (
                "/// fine\n#[doc = \"fine\"]\nfn f() {}\nconst X: u8 = env!(\"A\");",
                "line 4: the macro env!",
            ),
            ("mod secrets;", "the module declaration `mod secrets`"),
            (
                "#[doc = include_str!(\"/etc/passwd\")] fn f() {}",
                "the attribute #[doc]",
            ),
            (
                "fn f() -> serde_json::Value { json!({\"a\": env!(\"HOME\")}) }",
                "the macro env!",
            ),
            (
                "fn f() -> String { format!(\"{}\", include_str!(\"/etc/passwd\")) }",
                "the macro include_str!",
            ),
            (
                "fn f() -> String { format!(\"{}\", ::core::include_str!(\"/x\")) }",
                "the macro …::include_str!",
            ),
            (
                "fn f() -> Vec<u8> { vec![include_bytes!(\"/x\")[0]] }",
                "the macro include_bytes!",
            ),
            (
                "macro_rules! m { () => { env!(\"HOME\") } }",
                "the macro macro_rules!",
            ),
            ("extern crate std as s;", "`extern crate std`"),
            (
                "#![doc = include_str!(\"/etc/passwd\")]",
                "the attribute #[doc]",
            ),
            (
                "#[cfg_attr(all(), path = \"/etc/passwd\")] mod m {}",
                "the attribute #[cfg_attr]",
            ),
            (
                "#[derive(Debug)] #[serde(rename = \"x\")] struct S;",
                "the attribute #[serde]",
            ),
            (
                "fn f() { let _ = concat!(\"a\", \"b\"); }",
                "the macro concat!",
            ),
            ("unsafe extern \"C\" { fn getenv(); }", "`extern` blocks"),
        ];
        for (source, refusal) in cases {
            let found = check(source);
            assert!(
                found.iter().any(|r| r.contains(refusal)
                    && (r.starts_with("extract.rs line 1: ") || refusal.starts_with("line "))),
                "{source}: {found:?} should say {refusal:?}"
            );
        }
    }

    #[test]
    fn allowed_macros_and_attributes_pass() {
        let source = "#[derive(Debug, Clone)]\n#[allow(dead_code)]\nstruct S { a: u8 }\nfn f(x: u8) -> String {\n    let v = vec![1, 2];\n    assert!(x != 3);\n    let b = !matches!(x, 1 | 2);\n    format!(\"{v:?} {b} {}\", json!({\"a\": [x]}))\n}\n";
        assert_eq!(check(source), Vec::<String>::new());
    }

    #[test]
    fn not_rust_is_refused_with_its_line() {
        let found = check("fn f() {\n  let = ;\n}\n");
        assert!(
            found[0].starts_with("extract.rs line 2: not valid Rust"),
            "{found:?}"
        );
    }
}
