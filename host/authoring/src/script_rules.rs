//! What a drafted `extract.py` or `extract.js` may contain. Its code runs
//! when componentize-py or componentize-js builds the component (a module's
//! top level runs at build time) and when the component runs; both happen
//! in a sandbox: the build-time interpreter is itself a WebAssembly
//! instance that sees only the package's copy, no environment but the
//! tool's own and no network, and the component runs in seams's. These
//! rules are a second wall in front of the sandbox, and a clear reason for
//! the provider: imports only of the SDK and of pure standard modules, and
//! no name that reaches code loading, the file system, the environment or
//! the network.

use crate::language::Language;

/// A token of a script, as far as the rules need one.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    /// A name, with its line.
    Name(usize, String),
    /// A string literal's text (escapes kept as written), with its line.
    Str(usize, String),
    /// Any other character outside strings and comments.
    Punct(usize, char),
}

/// The modules a drafted `extract.py` may import: the SDK, and standard
/// modules that compute without touching the world.
const PYTHON_MODULES: [&str; 17] = [
    "seams_sdk",
    "re",
    "json",
    "math",
    "itertools",
    "functools",
    "collections",
    "dataclasses",
    "typing",
    "string",
    "operator",
    "unicodedata",
    "textwrap",
    "bisect",
    "heapq",
    "enum",
    "decimal",
];

/// Names a drafted `extract.py` may not use: code loading, reflection
/// that reaches them, files and the interpreter's own state.
const PYTHON_DENIED: [&str; 19] = [
    "__import__",
    "importlib",
    "eval",
    "exec",
    "compile",
    "open",
    "globals",
    "locals",
    "vars",
    "getattr",
    "setattr",
    "delattr",
    "breakpoint",
    "input",
    "__builtins__",
    "__dict__",
    "__class__",
    "__subclasses__",
    "__globals__",
];

/// The one module a drafted `extract.js` may import.
const JS_MODULE: &str = "./seams-sdk/index.js";

/// Names a drafted `extract.js` may not use: code loading, the global
/// object, the host's APIs.
const JS_DENIED: [&str; 12] = [
    "eval",
    "Function",
    "constructor",
    "require",
    "process",
    "globalThis",
    "Deno",
    "Bun",
    "fetch",
    "XMLHttpRequest",
    "WebSocket",
    "importScripts",
];

/// The file a draft's extract step is, as reasons name it.
pub(crate) fn file_name(language: Language) -> &'static str {
    match language {
        Language::Rust => "extract.rs",
        Language::Python => "extract.py",
        Language::Js => "extract.js",
    }
}

/// Checks a Python or JavaScript `source` against the rules; each refusal
/// names its line.
pub fn check(language: Language, source: &str) -> Vec<String> {
    let file = file_name(language);
    let tokens = match lex(language, source) {
        Ok(tokens) => tokens,
        Err(line) => {
            return vec![format!(
                "{file} line {line}: a string or comment is not closed"
            )];
        }
    };
    let mut refusals = Vec::new();
    let mut refuse = |line: usize, why: String| refusals.push(format!("{file} line {line}: {why}"));
    match language {
        Language::Python => python_rules(&tokens, &mut refuse),
        _ => js_rules(&tokens, &mut refuse),
    }
    refusals
}

fn python_rules(tokens: &[Token], refuse: &mut impl FnMut(usize, String)) {
    let allowed = || format!(" (allowed: {})", PYTHON_MODULES.join(", "));
    for (i, token) in tokens.iter().enumerate() {
        let Token::Name(line, name) = token else {
            continue;
        };
        // `re.compile` is a method; `x.__class__` reaches the interpreter.
        let attribute = after_dot(tokens, i);
        if PYTHON_DENIED.contains(&name.as_str()) && (!attribute || name.starts_with("__")) {
            refuse(
                *line,
                format!(
                    "{name} is not allowed: an extract step reads the model through the SDK, nothing else"
                ),
            );
        }
        let module = |at: usize| match tokens.get(at) {
            Some(Token::Name(_, module)) => Some(module.clone()),
            _ => None,
        };
        // Only a statement's first name starts an import (not `yield from`).
        let starts = matches!(
            i.checked_sub(1).map(|j| &tokens[j]),
            None | Some(Token::Punct(_, '\n' | ';'))
        );
        if !starts {
            continue;
        }
        match name.as_str() {
            // `from M import ...`: M, unless relative.
            "from" => match module(i + 1) {
                Some(m) if PYTHON_MODULES.contains(&m.as_str()) => {}
                Some(m) if m != "import" => {
                    refuse(*line, format!("importing {m} is not allowed{}", allowed()));
                }
                _ => refuse(
                    *line,
                    format!("relative imports are not allowed{}", allowed()),
                ),
            },
            // `import M, N as O`: each root module.
            "import" => {
                let mut at = i + 1;
                while let Some(m) = module(at) {
                    if !PYTHON_MODULES.contains(&m.as_str()) {
                        refuse(*line, format!("importing {m} is not allowed{}", allowed()));
                    }
                    // Past `.sub`, `as alias`, to the `,` of the next one.
                    let rest = tokens[at + 1..]
                        .iter()
                        .position(|t| matches!(t, Token::Punct(_, ',' | '\n' | ';')));
                    match rest.map(|r| at + 1 + r) {
                        Some(comma) if tokens[comma] == Token::Punct(*line, ',') => at = comma + 1,
                        _ => break,
                    }
                }
            }
            _ => {}
        }
    }
}

fn js_rules(tokens: &[Token], refuse: &mut impl FnMut(usize, String)) {
    for (i, token) in tokens.iter().enumerate() {
        match token {
            // `row.require` is a method; `f.constructor` reaches Function.
            Token::Name(line, name)
                if JS_DENIED.contains(&name.as_str())
                    && (!after_dot(tokens, i) || name == "constructor") =>
            {
                refuse(
                    *line,
                    format!(
                        "{name} is not allowed: an extract step reads the model through the SDK, nothing else"
                    ),
                );
            }
            // `import(...)` and `import.meta`.
            Token::Name(line, name)
                if name == "import"
                    && matches!(tokens.get(i + 1), Some(Token::Punct(_, '(' | '.'))) =>
            {
                refuse(
                    *line,
                    "dynamic import and import.meta are not allowed".into(),
                );
            }
            // A module specifier: the string after `from`, or after a bare
            // `import`.
            Token::Str(line, specifier)
                if matches!(i.checked_sub(1).map(|j| &tokens[j]), Some(Token::Name(_, k)) if k == "from" || k == "import")
                    && specifier != JS_MODULE =>
            {
                refuse(
                    *line,
                    format!("importing {specifier:?} is not allowed (allowed: {JS_MODULE:?})"),
                );
            }
            _ => {}
        }
    }
}

/// Whether the token at `i` follows a `.`: an attribute or a method.
fn after_dot(tokens: &[Token], i: usize) -> bool {
    matches!(
        i.checked_sub(1).map(|j| &tokens[j]),
        Some(Token::Punct(_, '.'))
    )
}

/// Every string literal of `source` with its line (comments left out):
/// what the copied-values check reads.
pub fn strings(language: Language, source: &str) -> Vec<(usize, String)> {
    lex(language, source)
        .unwrap_or_default()
        .into_iter()
        .filter_map(|t| match t {
            Token::Str(line, text) => Some((line, text)),
            _ => None,
        })
        .collect()
}

/// The tokens of `source`; the line of a string or comment left open.
/// Interpolated strings (Python's f-strings, JavaScript's template
/// literals) are also read as code, so that no name hides in one.
fn lex(language: Language, source: &str) -> Result<Vec<Token>, usize> {
    let chars: Vec<char> = source.chars().collect();
    let mut tokens = Vec::new();
    let mut line = 1;
    let mut i = 0;
    let python = language == Language::Python;
    while i < chars.len() {
        let c = chars[i];
        if c == '\n' {
            tokens.push(Token::Punct(line, '\n'));
            line += 1;
            i += 1;
        } else if c.is_whitespace() {
            i += 1;
        } else if python && c == '#' || !python && c == '/' && chars.get(i + 1) == Some(&'/') {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if !python && c == '/' && chars.get(i + 1) == Some(&'*') {
            let start = line;
            i += 2;
            loop {
                match chars.get(i) {
                    None => return Err(start),
                    Some('*') if chars.get(i + 1) == Some(&'/') => break,
                    Some('\n') => line += 1,
                    _ => {}
                }
                i += 1;
            }
            i += 2;
        } else if c == '"' || c == '\'' || (!python && c == '`') {
            // A Python string's prefix letters are the name token before it.
            let prefix = match tokens.last() {
                Some(Token::Name(l, n))
                    if python
                        && *l == line
                        && i > 0
                        && chars[i - 1].is_alphanumeric()
                        && n.len() <= 2
                        && n.chars().all(|c| "rRbBfFuU".contains(c)) =>
                {
                    let prefix = n.to_lowercase();
                    tokens.pop();
                    prefix
                }
                _ => String::new(),
            };
            let raw = prefix.contains('r');
            let interpolated = prefix.contains('f') || c == '`';
            let triple = python && chars.get(i + 1) == Some(&c) && chars.get(i + 2) == Some(&c);
            let start = line;
            i += if triple { 3 } else { 1 };
            let mut text = String::new();
            loop {
                let Some(&d) = chars.get(i) else {
                    return Err(start);
                };
                if d == '\\' && !raw {
                    text.push(d);
                    if let Some(&e) = chars.get(i + 1) {
                        text.push(e);
                        if e == '\n' {
                            line += 1;
                        }
                    }
                    i += 2;
                    continue;
                }
                let closes = if triple {
                    d == c && chars.get(i + 1) == Some(&c) && chars.get(i + 2) == Some(&c)
                } else {
                    d == c
                };
                if closes {
                    i += if triple { 3 } else { 1 };
                    break;
                }
                if d == '\n' {
                    if !triple && c != '`' {
                        return Err(start);
                    }
                    line += 1;
                }
                text.push(d);
                i += 1;
            }
            if interpolated {
                // The names inside `{...}` / `${...}` are code.
                let names = lex(language, &text.replace(['"', '\'', '`'], " ")).unwrap_or_default();
                tokens.extend(names.into_iter().map(|t| match t {
                    Token::Name(l, n) => Token::Name(start + l - 1, n),
                    Token::Str(l, n) => Token::Str(start + l - 1, n),
                    Token::Punct(l, c) => Token::Punct(start + l - 1, c),
                }));
            }
            tokens.push(Token::Str(start, text));
        } else if c.is_alphabetic() || c == '_' || c == '$' {
            let begin = i;
            while i < chars.len()
                && (chars[i].is_alphanumeric() || chars[i] == '_' || chars[i] == '$')
            {
                i += 1;
            }
            tokens.push(Token::Name(line, chars[begin..i].iter().collect()));
        } else {
            tokens.push(Token::Punct(line, c));
            i += 1;
        }
    }
    Ok(tokens)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(language: Language, source: &str) -> Vec<String> {
        check(language, source)
    }

    #[test]
    fn honest_python_and_js_extract_steps_pass() {
        let python = "import re\nimport seams_sdk as seams\nWORD = re.compile(r'\\w+')\nfrom collections import defaultdict\n\n\ndef extract(model):\n    # open() in a comment is fine\n    rows = model.select(\"SELECT ?a WHERE { ?a rdfs:label ?l }\")\n    return {\"things\": [seams.traced(r.iri(\"a\"), label=f\"{r.require('l')}\") for r in rows]}\n";
        assert_eq!(refused(Language::Python, python), Vec::<String>::new());
        let js = "import * as seams from './seams-sdk/index.js';\n// fetch in a comment is fine\nexport function extract(model) {\n  /* eval too */\n  const rows = model.select(`SELECT ?a WHERE { ?a rdfs:label ?l }`);\n  return { things: rows.map((r) => seams.traced(r.iri('a'), { label: `${r.require('l')}` })) };\n}\n";
        assert_eq!(refused(Language::Js, js), Vec::<String>::new());
    }

    #[test]
    fn what_reaches_past_the_sdk_is_refused_naming_the_line() {
        let cases: [(Language, &str, &str); 15] = [
            (
                Language::Python,
                "import os\n",
                "extract.py line 1: importing os is not allowed",
            ),
            (
                Language::Python,
                "import re, socket as s\n",
                "importing socket is not allowed",
            ),
            (
                Language::Python,
                "x = 1\nfrom subprocess import run\n",
                "extract.py line 2: importing subprocess",
            ),
            (
                Language::Python,
                "from . import x\n",
                "relative imports are not allowed",
            ),
            (
                Language::Python,
                "m = __import__('os')\n",
                "__import__ is not allowed",
            ),
            (
                Language::Python,
                "t = open('/etc/passwd').read()\n",
                "open is not allowed",
            ),
            (
                Language::Python,
                "x = f\"{open('/etc/passwd')}\"\n",
                "open is not allowed",
            ),
            (
                Language::Python,
                "x = ().__class__.__base__\n",
                "__class__ is not allowed",
            ),
            (
                Language::Python,
                "x = [].__class__\n",
                "__class__ is not allowed",
            ),
            (
                Language::Js,
                "import fs from 'node:fs';\n",
                "importing \"node:fs\" is not allowed",
            ),
            (
                Language::Js,
                "const m = await import('x');\n",
                "dynamic import",
            ),
            (
                Language::Js,
                "const f = fetch;\n",
                "extract.js line 1: fetch is not allowed",
            ),
            (
                Language::Js,
                "const x = `${globalThis.process}`;\n",
                "globalThis is not allowed",
            ),
            (
                Language::Js,
                "[].map.constructor('return 1')();\n",
                "constructor is not allowed",
            ),
            (
                Language::Js,
                "const s = 'open\n",
                "a string or comment is not closed",
            ),
        ];
        for (language, source, says) in cases {
            let reasons = refused(language, source);
            assert!(
                reasons.iter().any(|r| r.contains(says)),
                "{source:?}: {reasons:?}"
            );
        }
    }

    #[test]
    fn strings_are_read_with_their_lines_and_comments_are_not() {
        let python = "# 'Chat'\nx = 'one'\ny = \"\"\"two\nlines\"\"\"\nz = r'\\d'\n";
        assert_eq!(
            strings(Language::Python, python),
            vec![
                (2, "one".into()),
                (3, "two\nlines".into()),
                (5, "\\d".into())
            ]
        );
        let js = "// 'Chat'\n/* \"x\" */ const a = \"one\";\nconst b = `t${a}`;\n";
        assert_eq!(
            strings(Language::Js, js),
            vec![(2, "one".into()), (3, "t${a}".into())]
        );
    }
}
