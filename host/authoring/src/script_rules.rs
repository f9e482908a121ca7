//! What a drafted `extract.py` or `extract.js` may contain. Its code runs
//! when componentize-py or componentize-js builds the component (a module's
//! top level runs at build time) and when the component runs; both happen
//! in sandboxes (the operating system's around the build, seams's around
//! the component: [`crate::jail`]). These rules are a first line in front
//! of them, not the defence: early, clear reasons for the provider. They
//! read the language with its parser (tree-sitter's grammars), so that an
//! import nested in a block, split across lines or written with escapes
//! is the import it is, and they allow rather than deny: imports only of
//! the SDK and of pure standard modules, ASCII names only (Python folds
//! other letters to ASCII ones, NFKC), no double-underscore name but a
//! few methods, no source encoding but UTF-8, and no name that reaches
//! code loading, reflection, the file system, the environment or the
//! network, in any position.

use tree_sitter::{Node, Parser, Tree};

use crate::language::Language;

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

/// Names a drafted `extract.py` may not use anywhere (a call, an
/// attribute, an argument): code loading, reflection and the
/// interpreter's own state.
const PYTHON_DENIED: [&str; 14] = [
    "importlib",
    "eval",
    "exec",
    "globals",
    "locals",
    "vars",
    "getattr",
    "setattr",
    "delattr",
    "breakpoint",
    "input",
    "attrgetter",
    "methodcaller",
    "memoryview",
];

/// Modules reachable as an allowed module's attributes
/// (`typing.sys.modules`), refused as attributes; bare, without an
/// import, they name nothing.
const PYTHON_MODULE_ATTRIBUTES: [&str; 14] = [
    "sys",
    "os",
    "io",
    "builtins",
    "modules",
    "subprocess",
    "socket",
    "ctypes",
    "gc",
    "inspect",
    "marshal",
    "pickle",
    "posix",
    "codecs",
];

/// Names a drafted `extract.py` may not call bare (as attributes of an
/// allowed module they are its own: `re.compile`).
const PYTHON_BARE_DENIED: [&str; 2] = ["open", "compile"];

/// The double-underscore names a drafted `extract.py` may define or call:
/// the methods a plain class has.
const PYTHON_DUNDERS: [&str; 10] = [
    "__init__",
    "__repr__",
    "__str__",
    "__eq__",
    "__hash__",
    "__lt__",
    "__len__",
    "__iter__",
    "__post_init__",
    "__future__",
];

/// The one module a drafted `extract.js` may import.
const JS_MODULE: &str = "./seams-sdk/index.js";

/// Names a drafted `extract.js` may not use anywhere: code loading, the
/// global object, reflection, the host's APIs.
const JS_DENIED: [&str; 19] = [
    "eval",
    "Function",
    "AsyncFunction",
    "GeneratorFunction",
    "require",
    "process",
    "globalThis",
    "global",
    "self",
    "window",
    "Reflect",
    "Proxy",
    "Deno",
    "Bun",
    "fetch",
    "XMLHttpRequest",
    "WebSocket",
    "importScripts",
    "WebAssembly",
];

/// Properties a drafted `extract.js` may not name, on any object: they
/// reach `Function` and the prototypes.
const JS_PROPERTIES_DENIED: [&str; 3] = ["constructor", "prototype", "__proto__"];

/// The file a draft's extract step is, as reasons name it.
pub(crate) fn file_name(language: Language) -> &'static str {
    match language {
        Language::Rust => "extract.rs",
        Language::Python => "extract.py",
        Language::Js => "extract.js",
        Language::Ts => "extract.ts",
    }
}

/// `source` parsed with `language`'s grammar; `None` for Rust (checked by
/// syn instead) or a parser that gives up.
fn parse(language: Language, source: &str) -> Option<Tree> {
    let grammar: tree_sitter::Language = match language {
        Language::Python => tree_sitter_python::LANGUAGE.into(),
        Language::Js => tree_sitter_javascript::LANGUAGE.into(),
        // Drafts are not TypeScript; a TypeScript package is never read here.
        Language::Rust | Language::Ts => return None,
    };
    let mut parser = Parser::new();
    parser.set_language(&grammar).ok()?;
    parser.parse(source, None)
}

/// Every node of `tree`, in document order, without recursion (a hostile
/// source may nest deeper than any stack).
fn nodes(tree: &Tree) -> Vec<Node<'_>> {
    let mut all = Vec::new();
    let mut cursor = tree.walk();
    loop {
        all.push(cursor.node());
        if cursor.goto_first_child() {
            continue;
        }
        loop {
            if cursor.goto_next_sibling() {
                break;
            }
            if !cursor.goto_parent() {
                return all;
            }
        }
    }
}

/// A node's text in `source`.
fn text<'s>(node: Node<'_>, source: &'s str) -> &'s str {
    source.get(node.byte_range()).unwrap_or_default()
}

/// A node's 1-based line.
fn line(node: Node<'_>) -> usize {
    node.start_position().row + 1
}

/// Checks a Python or JavaScript `source` against the rules; each refusal
/// names its line.
pub fn check(language: Language, source: &str) -> Vec<String> {
    let file = file_name(language);
    let mut refusals = Vec::new();
    let mut refuse = |line: usize, why: String| {
        let refusal = format!("{file} line {line}: {why}");
        if !refusals.contains(&refusal) {
            refusals.push(refusal);
        }
    };
    let Some(tree) = parse(language, source) else {
        refuse(1, "cannot be parsed".into());
        return refusals;
    };
    let all = nodes(&tree);
    if let Some(broken) = all.iter().find(|n| n.is_error() || n.is_missing()) {
        refuse(
            line(*broken),
            "is not valid: a parser cannot read it here (an unclosed string, bracket or block?)"
                .into(),
        );
        return refusals;
    }
    match language {
        Language::Python => python_rules(source, &all, &mut refuse),
        _ => js_rules(source, &all, &mut refuse),
    }
    refusals
}

/// Why a name is refused: not ASCII, or written with an escape.
fn unusual_name(name: &str) -> Option<&'static str> {
    if !name.is_ascii() {
        Some("names must be ASCII (other letters may fold to a name these rules refuse)")
    } else if name.contains('\\') {
        Some("names may not be written with escapes")
    } else {
        None
    }
}

fn denied(name: &str) -> String {
    format!("{name} is not allowed: an extract step reads the model through the SDK, nothing else")
}

/// Why importing the dotted `module` is refused, unless its root is one
/// of [`PYTHON_MODULES`].
fn unknown_module(module: &str) -> Option<String> {
    let root = module.split('.').next().unwrap_or_default().trim();
    (!PYTHON_MODULES.contains(&root)).then(|| {
        format!(
            "importing {module} is not allowed (allowed: {})",
            PYTHON_MODULES.join(", ")
        )
    })
}

fn python_rules(source: &str, all: &[Node<'_>], refuse: &mut impl FnMut(usize, String)) {
    // A source encoding other than UTF-8 (`# coding: utf-7`,
    // `unicode_escape`) makes the interpreter read other code than the
    // parser did.
    for (i, first) in source.lines().take(2).enumerate() {
        let comment = first.trim_start();
        if let Some(at) = comment.strip_prefix('#').and_then(|c| c.find("coding")) {
            let rest = &comment[1 + at + "coding".len()..];
            if rest.starts_with([':', '=']) {
                let name = rest[1..]
                    .trim_start()
                    .split(|c: char| !(c.is_alphanumeric() || "-_.".contains(c)))
                    .next()
                    .unwrap_or_default()
                    .to_ascii_lowercase()
                    .replace('_', "-");
                if name != "utf-8" && name != "utf8" {
                    refuse(
                        i + 1,
                        format!("a source encoding other than UTF-8 is not allowed ({name})"),
                    );
                }
            }
        }
    }
    for &node in all {
        if !node.is_named() {
            continue;
        }
        let at = line(node);
        match node.kind() {
            "import_statement" => {
                let mut cursor = node.walk();
                for name in node.children_by_field_name("name", &mut cursor) {
                    let module = match name.kind() {
                        "aliased_import" => name.child_by_field_name("name").unwrap_or(name),
                        _ => name,
                    };
                    if let Some(why) = unknown_module(text(module, source)) {
                        refuse(at, why);
                    }
                }
            }
            "import_from_statement" => match node.child_by_field_name("module_name") {
                Some(module) if module.kind() == "dotted_name" => {
                    if let Some(why) = unknown_module(text(module, source)) {
                        refuse(at, why);
                    }
                }
                _ => refuse(
                    at,
                    format!(
                        "relative imports are not allowed (allowed: {})",
                        PYTHON_MODULES.join(", ")
                    ),
                ),
            },
            "identifier" => {
                let name = text(node, source);
                if let Some(why) = unusual_name(name) {
                    refuse(at, why.into());
                } else if PYTHON_DENIED.contains(&name)
                    || name.starts_with("__")
                        && name.ends_with("__")
                        && !PYTHON_DUNDERS.contains(&name)
                {
                    refuse(at, denied(name));
                } else {
                    let attribute = node.parent().is_some_and(|p| {
                        p.kind() == "attribute" && p.child_by_field_name("attribute") == Some(node)
                    });
                    let refused = if attribute {
                        PYTHON_MODULE_ATTRIBUTES.contains(&name)
                    } else {
                        PYTHON_BARE_DENIED.contains(&name)
                    };
                    if refused {
                        refuse(at, denied(name));
                    }
                }
            }
            // A string naming a double-underscore attribute is what
            // reflection would be handed.
            "string_content" => {
                let content = text(node, source);
                if content.contains("__") && dunder_in(content) {
                    refuse(
                        at,
                        "a string naming a double-underscore attribute is not allowed".into(),
                    );
                }
            }
            _ => {}
        }
    }
}

/// Whether `text` holds a double underscore next to a name's character:
/// a `__name__`, or a piece of one to be joined to another.
fn dunder_in(text: &str) -> bool {
    let bytes = text.as_bytes();
    bytes.windows(2).enumerate().any(|(i, pair)| {
        pair == b"__"
            && (i
                .checked_sub(1)
                .and_then(|j| bytes.get(j))
                .is_some_and(u8::is_ascii_alphanumeric)
                || bytes.get(i + 2).is_some_and(u8::is_ascii_alphanumeric))
    })
}

fn js_rules(source: &str, all: &[Node<'_>], refuse: &mut impl FnMut(usize, String)) {
    for &node in all {
        if !node.is_named() {
            continue;
        }
        let at = line(node);
        match node.kind() {
            "import_statement" | "export_statement" => {
                if let Some(from) = node.child_by_field_name("source") {
                    let specifier = string_text(Language::Js, from, source);
                    if specifier != JS_MODULE {
                        refuse(
                            at,
                            format!(
                                "importing {specifier:?} is not allowed (allowed: {JS_MODULE:?})"
                            ),
                        );
                    }
                }
            }
            "import" => refuse(at, "dynamic import and import.meta are not allowed".into()),
            "meta_property" => refuse(at, "import.meta and new.target are not allowed".into()),
            "identifier"
            | "property_identifier"
            | "shorthand_property_identifier"
            | "shorthand_property_identifier_pattern"
            | "private_property_identifier" => {
                let name = text(node, source);
                // A property is the object's own (`row.require`), but
                // for the ones that reach Function and the prototypes.
                let property = matches!(
                    node.kind(),
                    "property_identifier" | "private_property_identifier"
                );
                if let Some(why) = unusual_name(name) {
                    refuse(at, why.into());
                } else if JS_PROPERTIES_DENIED.contains(&name)
                    || !property && JS_DENIED.contains(&name)
                {
                    refuse(at, denied(name));
                }
            }
            // `x['constr' + 'uctor']`: a property named by a computed
            // string reaches whatever the string spells.
            "subscript_expression" => {
                if let Some(index) = node.child_by_field_name("index")
                    && has_string(index)
                {
                    refuse(
                        at,
                        "a property named by a string expression is not allowed; use `.name` or a Map".into(),
                    );
                }
            }
            "string_fragment" => {
                let content = text(node, source);
                if JS_PROPERTIES_DENIED.contains(&content) {
                    refuse(at, denied(content));
                }
            }
            _ => {}
        }
    }
}

/// Whether `node` is or holds a string or template literal.
fn has_string(node: Node<'_>) -> bool {
    let mut stack = vec![node];
    while let Some(n) = stack.pop() {
        if matches!(n.kind(), "string" | "template_string") {
            return true;
        }
        let mut cursor = n.walk();
        stack.extend(n.children(&mut cursor));
    }
    false
}

/// A string literal's text between its quotes (escapes kept as written;
/// a template's interpolations too).
fn string_text(language: Language, node: Node<'_>, source: &str) -> String {
    let literal = text(node, source);
    let unprefixed = match language {
        Language::Python => literal.trim_start_matches(|c: char| "rRbBfFuU".contains(c)),
        _ => literal,
    };
    for quote in ["\"\"\"", "'''", "\"", "'", "`"] {
        if let Some(inner) = unprefixed
            .strip_prefix(quote)
            .and_then(|rest| rest.strip_suffix(quote))
        {
            return inner.to_owned();
        }
    }
    unprefixed.to_owned()
}

/// The SDKs' row accessors, whose argument is a query variable's name.
const ROW_ACCESSORS: [&str; 5] = ["require", "iri", "value", "get", "term"];

/// Whether the string `node` is a name rather than text: a row accessor's
/// argument (`row.require("title")`, a query variable), a key of a
/// dictionary or object (`{"title": ...}`), or an index (`row["title"]`).
/// None of them can reach the output as a value.
fn names_something(node: Node<'_>, source: &str) -> bool {
    let Some(parent) = node.parent() else {
        return false;
    };
    match parent.kind() {
        "pair" => parent.child_by_field_name("key") == Some(node),
        "subscript" | "subscript_expression" => {
            parent.child_by_field_name("subscript") == Some(node)
                || parent.child_by_field_name("index") == Some(node)
        }
        "argument_list" | "arguments" => {
            let mut cursor = parent.walk();
            let only = parent.named_children(&mut cursor).count() == 1;
            let callee = parent
                .parent()
                .and_then(|call| call.child_by_field_name("function"))
                .and_then(|f| {
                    f.child_by_field_name("attribute")
                        .or_else(|| f.child_by_field_name("property"))
                });
            only && callee.is_some_and(|name| ROW_ACCESSORS.contains(&text(name, source)))
        }
        _ => false,
    }
}

/// Every string literal of `source` with its line that may be text
/// (comments, names of variables, keys and indices left out, and a string
/// inside another's interpolation read as part of it): what the
/// copied-values check reads.
pub fn strings(language: Language, source: &str) -> Vec<(usize, String)> {
    let Some(tree) = parse(language, source) else {
        return Vec::new();
    };
    let literal = |n: Node<'_>| matches!(n.kind(), "string" | "template_string");
    nodes(&tree)
        .into_iter()
        .filter(|&n| literal(n) && !names_something(n, source))
        .filter(|&n| {
            let mut up = n.parent();
            while let Some(p) = up {
                if literal(p) {
                    return false;
                }
                up = p.parent();
            }
            true
        })
        .map(|n| (line(n), string_text(language, n, source)))
        .collect()
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
        let cases: [(Language, &str, &str); 29] = [
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
            (Language::Js, "const s = 'open\n", "is not valid"),
            // The ways past the token rules the last round found.
            (
                Language::Python,
                "if 1:\n    import os\n",
                "importing os is not allowed",
            ),
            (
                Language::Python,
                "import \\\n    os\n",
                "importing os is not allowed",
            ),
            (
                Language::Python,
                "import typing\nm = typing.sys.modules['os']\n",
                "sys is not allowed",
            ),
            (
                Language::Python,
                "\u{ff4f}\u{ff50}\u{ff45}\u{ff4e}('/etc/passwd')\n",
                "names must be ASCII",
            ),
            (
                Language::Python,
                "# coding: utf-7\nx = 1\n",
                "other than UTF-8",
            ),
            (
                Language::Python,
                "# -*- coding: unicode_escape -*-\nx = 1\n",
                "other than UTF-8",
            ),
            (
                Language::Python,
                "x = __spec__.loader\n",
                "__spec__ is not allowed",
            ),
            (
                Language::Python,
                "x = __loader__\n",
                "__loader__ is not allowed",
            ),
            (
                Language::Python,
                "import operator\nf = operator.attrgetter('__globals__')\n",
                "attrgetter is not allowed",
            ),
            (
                Language::Python,
                "x = ('__glob' 'als__')\n",
                "double-underscore",
            ),
            (Language::Js, "\\u0046unction('return 1')();\n", "not"),
            (
                Language::Js,
                "(() => 0)['constr' + 'uctor']('return 1')();\n",
                "string expression",
            ),
            (
                Language::Js,
                "const f = self['fe' + 'tch'];\n",
                "self is not allowed",
            ),
            (Language::Js, "const m = import\n('x');\n", "dynamic import"),
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
    fn a_regex_literal_and_honest_names_are_not_refused() {
        let js = "import * as seams from './seams-sdk/index.js';\nexport function extract(model) {\n  const types = {};\n  const quoted = (s) => s.replace(/\"/g, '\\\\\"');\n  return { x: quoted(types.a ?? '') };\n}\n";
        assert_eq!(refused(Language::Js, js), Vec::<String>::new());
        let python = "import seams_sdk as seams\nfrom dataclasses import dataclass\n\n@dataclass\nclass Row:\n    name: str\n\n    def __post_init__(self):\n        self.types = [self.name]\n\n\ndef extract(model):\n    types = model.select('SELECT ?t WHERE { ?t a ?k }')\n    return {'types': [t.require('t') for t in types]}\n";
        assert_eq!(refused(Language::Python, python), Vec::<String>::new());
    }

    #[test]
    fn names_of_variables_keys_and_indices_are_not_read_as_text() {
        let python = "def extract(model):\n    row = model.select('SELECT ?title WHERE { ?x rdfs:label ?title }')[0]\n    return {'title': row.require('title'), 'x': row['title'], 'y': 'Title'}\n";
        let found: Vec<String> = strings(Language::Python, python)
            .into_iter()
            .map(|(_, t)| t)
            .collect();
        assert_eq!(
            found,
            ["SELECT ?title WHERE { ?x rdfs:label ?title }", "Title"]
        );
        let js = "const r = rows[0];\nexport const v = { title: r.require('title'), 'label': r.iri(\"t\"), s: r.value('a', 'b'), t: 'Title' };\n";
        let found: Vec<String> = strings(Language::Js, js)
            .into_iter()
            .map(|(_, t)| t)
            .collect();
        assert_eq!(found, ["a", "b", "Title"]);
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
