//! The "output parses" test: a generated file of a known type must parse
//! as that type. One tree-sitter grammar per type, so every check reports
//! the first error's line and column the same way. The grammars are the
//! `syntax` feature (on by default); without it every file passes.

#[cfg(feature = "syntax")]
use tree_sitter::{Language, Node, Parser};

/// A file that does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{path}:{line}:{column}: does not parse as {language}: {what}")]
pub struct SyntaxProblem {
    /// The file.
    pub path: String,
    /// 1-based line of the first error.
    pub line: usize,
    /// 1-based column.
    pub column: usize,
    /// The language it was parsed as.
    pub language: &'static str,
    /// What is wrong there.
    pub what: String,
}

/// The suffixes the test knows, with the language each means.
pub const SUFFIXES: &[(&str, &str)] = &[
    ("html", "HTML"),
    ("htm", "HTML"),
    ("json", "JSON"),
    ("yaml", "YAML"),
    ("yml", "YAML"),
    ("toml", "TOML"),
    ("py", "Python"),
    ("rs", "Rust"),
    ("js", "JavaScript"),
    ("mjs", "JavaScript"),
    ("css", "CSS"),
];

/// The language of `path` by its suffix, if the test knows it.
pub fn language_of(path: &str) -> Option<&'static str> {
    let suffix = path.rsplit_once('.')?.1.to_ascii_lowercase();
    SUFFIXES.iter().find(|(s, _)| *s == suffix).map(|(_, l)| *l)
}

#[cfg(feature = "syntax")]
fn grammar(language: &str) -> Language {
    match language {
        "HTML" => tree_sitter_html::LANGUAGE.into(),
        "JSON" => tree_sitter_json::LANGUAGE.into(),
        "YAML" => tree_sitter_yaml::LANGUAGE.into(),
        "TOML" => tree_sitter_toml_ng::LANGUAGE.into(),
        "Python" => tree_sitter_python::LANGUAGE.into(),
        "Rust" => tree_sitter_rust::LANGUAGE.into(),
        "JavaScript" => tree_sitter_javascript::LANGUAGE.into(),
        "CSS" => tree_sitter_css::LANGUAGE.into(),
        other => unreachable!("no grammar for {other}"),
    }
}

/// Parses `text` as the language `path`'s suffix names. A suffix the test
/// does not know passes (and, without the `syntax` feature, every file).
///
/// # Errors
///
/// The first syntax error, with its line and column.
pub fn check(path: &str, text: &str) -> Result<(), SyntaxProblem> {
    let Some(language) = language_of(path) else {
        return Ok(());
    };
    parse(path, text, language)
}

#[cfg(not(feature = "syntax"))]
fn parse(_path: &str, _text: &str, _language: &'static str) -> Result<(), SyntaxProblem> {
    Ok(())
}

#[cfg(feature = "syntax")]
fn parse(path: &str, text: &str, language: &'static str) -> Result<(), SyntaxProblem> {
    let mut parser = Parser::new();
    parser
        .set_language(&grammar(language))
        .expect("bundled grammars match the tree-sitter version");
    let tree = parser
        .parse(text, None)
        .expect("no cancellation or timeout is set");
    let root = tree.root_node();
    if !root.has_error() {
        return Ok(());
    }
    let node = first_error(root).unwrap_or(root);
    let start = node.start_position();
    let what = if node.is_missing() {
        format!("missing {}", node.kind())
    } else {
        let snippet: String = text[node.byte_range()].chars().take(40).collect();
        format!("unexpected {snippet:?}")
    };
    Err(SyntaxProblem {
        path: path.to_owned(),
        line: start.row + 1,
        column: start.column + 1,
        language,
        what,
    })
}

#[cfg(feature = "syntax")]
fn first_error(node: Node<'_>) -> Option<Node<'_>> {
    if node.is_error() || node.is_missing() {
        return Some(node);
    }
    let mut cursor = node.walk();
    for child in node.children(&mut cursor) {
        if (child.has_error() || child.is_missing())
            && let Some(found) = first_error(child)
        {
            return Some(found);
        }
    }
    None
}

#[cfg(all(test, feature = "syntax"))]
mod tests {
    use super::*;

    #[test]
    fn each_known_type_accepts_good_text_and_names_where_bad_text_breaks() {
        let cases = [
            (
                "a.html",
                "<!DOCTYPE html>\n<html><body><p>hi</p></body></html>\n",
                "<html>\n<body>\n<p class=\"x>hi</p>\n",
            ),
            ("a.json", "{\"a\": [1, 2]}\n", "{\"a\": [1, 2}\n"),
            ("a.yaml", "a:\n  - 1\n  - 2\n", "a: [1, 2\nb: }\n"),
            ("a.toml", "[a]\nb = 1\n", "[a]\nb = = 1\n"),
            (
                "a.py",
                "def f(x):\n    return x\n",
                "def f(x:\n    return x\n",
            ),
            ("a.rs", "fn main() {}\n", "fn main() {\n"),
            ("a.js", "const a = () => 1;\n", "const a = () => {;\n"),
            ("a.css", "a { color: red; }\n", "a { color: red;\n"),
        ];
        for (path, good, bad) in cases {
            assert_eq!(check(path, good), Ok(()), "{path}");
            let problem = check(path, bad).unwrap_err();
            assert!(problem.line >= 1, "{path}: {problem}");
            assert!(
                problem.to_string().starts_with(&format!("{path}:")),
                "{problem}"
            );
        }
        assert_eq!(check("notes.txt", "anything {"), Ok(()));
        assert_eq!(language_of("x/Y.JSON"), Some("JSON"));
    }
}
