//! The "output parses" test: a generated file of a known type must parse
//! as that type. One tree-sitter grammar per type (and a well-formedness
//! check for XML), so every check reports the first error's line and
//! column the same way. Plain text of any other kind (Markdown, SQL, CSV,
//! ...) has no parser here: the test does not apply to it, and says so
//! ([`not_applicable`]). The parsers are the `syntax` feature (on by
//! default); without it every file passes.

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
    ("xml", "XML"),
    ("svg", "XML"),
    ("xhtml", "XML"),
];

/// Why the test does not apply to `path`, when no parser knows its
/// suffix: said in the test's report and the scaffold's README, so that a
/// pass is not read as a checked syntax.
pub fn not_applicable(path: &str) -> Option<String> {
    if language_of(path).is_some() {
        return None;
    }
    Some(match path.rsplit_once('.') {
        Some((_, suffix)) => format!(
            "{path}: seams has no parser for .{suffix} files, so \"output parses\" does not apply"
        ),
        None => format!(
            "{path}: seams has no parser for files without a suffix, so \"output parses\" does not apply"
        ),
    })
}

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
    if language == "XML" {
        return xml::well_formed(text).map_err(|(at, what)| {
            let before = &text[..at.min(text.len())];
            SyntaxProblem {
                path: path.to_owned(),
                line: before.matches('\n').count() + 1,
                column: before.rsplit('\n').next().unwrap_or("").chars().count() + 1,
                language,
                what,
            }
        });
    }
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

/// XML well-formedness: one root element, every tag closed in order,
/// entities known.
#[cfg(feature = "syntax")]
mod xml {
    use quick_xml::Reader;
    use quick_xml::events::Event;

    /// The byte offset and what is wrong, at the first problem.
    pub(super) fn well_formed(text: &str) -> Result<(), (usize, String)> {
        let mut reader = Reader::from_str(text);
        let mut depth = 0usize;
        let mut roots = 0usize;
        loop {
            let at = usize::try_from(reader.buffer_position()).unwrap_or(usize::MAX);
            let event = reader.read_event().map_err(|e| {
                let at = usize::try_from(reader.error_position()).unwrap_or(at);
                (at, e.to_string())
            })?;
            match event {
                Event::Start(_) | Event::Empty(_) if depth == 0 => {
                    roots += 1;
                    if roots > 1 {
                        return Err((at, "a second root element".to_owned()));
                    }
                    if matches!(event, Event::Start(_)) {
                        depth += 1;
                    }
                }
                Event::Start(_) => depth += 1,
                Event::End(_) => depth -= 1,
                Event::Text(t) => {
                    t.unescape().map_err(|e| (at, e.to_string()))?;
                    if depth == 0 && !t.iter().all(u8::is_ascii_whitespace) {
                        return Err((at, "text outside the root element".to_owned()));
                    }
                }
                Event::CData(_) if depth == 0 => {
                    return Err((at, "text outside the root element".to_owned()));
                }
                Event::Eof if depth > 0 => {
                    return Err((at, "missing end tag".to_owned()));
                }
                Event::Eof if roots == 0 => {
                    return Err((at, "no root element".to_owned()));
                }
                Event::Eof => return Ok(()),
                _ => {}
            }
        }
    }
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
            (
                "a.xml",
                "<?xml version=\"1.0\"?>\n<a x=\"1\">\n  <b/>&amp;<![CDATA[<]]>\n</a>\n",
                "<a>\n  <b>\n</a>\n",
            ),
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
        for bad_xml in ["", "<a/><b/>", "<a>", "text", "<a>&nope;</a>", "<a></b>"] {
            assert!(check("f.xml", bad_xml).is_err(), "{bad_xml:?}");
        }
        let problem = check("f.svg", "<svg>\n  <g>\n</svg>\n").unwrap_err();
        assert_eq!((problem.line, problem.language), (3, "XML"), "{problem}");
    }

    #[test]
    fn a_file_no_parser_knows_is_said_to_be_not_applicable() {
        assert_eq!(not_applicable("page.html"), None);
        assert_eq!(
            not_applicable("schema.sql").as_deref(),
            Some(
                "schema.sql: seams has no parser for .sql files, so \"output parses\" does not apply"
            )
        );
        assert!(
            not_applicable("Dockerfile")
                .unwrap()
                .contains("without a suffix")
        );
    }
}
