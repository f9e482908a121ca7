//! Where a term is written in a model file. The RDF parser reports no
//! positions of terms, so messages about a term (an unknown vocabulary
//! term, an element that breaks a shape) find its first line with a small
//! lexer that knows Turtle's comments, strings, IRIs, prefix declarations
//! and prefixed names (N-Triples, N-Quads and TriG are covered too).

use std::collections::HashMap;

/// The 1-based line on which `text` first writes `iri`, as `<iri>` or as
/// a prefixed name it declared.
pub fn line_of(text: &str, iri: &str) -> Option<usize> {
    let mut prefixes: HashMap<String, String> = HashMap::new();
    // After `@prefix` / `PREFIX`: the name being declared.
    let mut declaring: Option<Option<String>> = None;
    for (line, token) in Tokens::new(text) {
        match token {
            Token::Keyword(word) => {
                if word.eq_ignore_ascii_case("@prefix") || word.eq_ignore_ascii_case("prefix") {
                    declaring = Some(None);
                }
            }
            Token::Prefixed(name) => {
                let (prefix, local) = name.split_once(':').expect("a prefixed name has a colon");
                if let Some(None) = declaring {
                    declaring = Some(Some(prefix.to_owned()));
                    continue;
                }
                declaring = None;
                if let Some(ns) = prefixes.get(prefix)
                    && iri.strip_prefix(ns.as_str()) == Some(unescape_local(local).as_str())
                {
                    return Some(line);
                }
            }
            Token::Iri(written) => {
                if let Some(Some(prefix)) = declaring.take() {
                    prefixes.insert(prefix, written.to_owned());
                    continue;
                }
                if written == iri {
                    return Some(line);
                }
            }
        }
    }
    None
}

/// A local name as the IRI has it: `\-` escapes dropped.
pub(crate) fn unescape_local(local: &str) -> String {
    let mut out = String::with_capacity(local.len());
    let mut chars = local.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            out.extend(chars.next());
        } else {
            out.push(c);
        }
    }
    out
}

#[derive(Debug, PartialEq, Eq)]
enum Token<'a> {
    /// `<...>`, its text.
    Iri(&'a str),
    /// `prefix:local` (or `prefix:`), trailing dots cut.
    Prefixed(&'a str),
    /// Any other bare word: `a`, `@prefix`, `PREFIX`, `true`, `@en`.
    Keyword(&'a str),
}

/// The tokens that can name an IRI, each with its line; comments, strings
/// and punctuation are skipped.
struct Tokens<'a> {
    text: &'a str,
    at: usize,
    line: usize,
}

impl<'a> Tokens<'a> {
    fn new(text: &'a str) -> Self {
        Tokens {
            text,
            at: 0,
            line: 1,
        }
    }

    /// Moves past `len` bytes, counting their newlines.
    fn skip(&mut self, len: usize) {
        advance(self.text, &mut self.at, &mut self.line, len);
    }

    /// The length of the string literal at the cursor, quotes included.
    fn string_len(&self) -> usize {
        string_len(&self.text.as_bytes()[self.at..])
    }
}

/// Moves `at` past `len` bytes of `text` (not past its end), adding their
/// newlines to `line`.
pub(crate) fn advance(text: &str, at: &mut usize, line: &mut usize, len: usize) {
    let end = (*at + len).min(text.len());
    *line += text.as_bytes()[*at..end]
        .iter()
        .filter(|&&b| b == b'\n')
        .count();
    *at = end;
}

/// The length of the comment `rest` starts with: to the end of its line.
pub(crate) fn comment_len(rest: &[u8]) -> usize {
    rest.iter().position(|&c| c == b'\n').unwrap_or(rest.len())
}

/// The IRI `rest` starts with (`<...>`, or to the end of the line when it
/// is not closed), and how many bytes it takes.
pub(crate) fn iri_at(rest: &str) -> (&str, usize) {
    let body = &rest[1..];
    let len = body
        .bytes()
        .position(|c| c == b'>' || c == b'\n')
        .unwrap_or(body.len());
    (&body[..len], (len + 2).min(rest.len()))
}

/// The length of the string literal `rest` starts with, quotes included
/// (to the end of `rest` when it is not closed).
pub(crate) fn string_len(rest: &[u8]) -> usize {
    let quote = rest[0];
    let long = rest.len() >= 3 && rest[1] == quote && rest[2] == quote;
    let open = if long { 3 } else { 1 };
    let mut i = open;
    while i < rest.len() {
        match rest[i] {
            b'\\' => i += 2,
            b'\n' if !long => return i,
            c if c == quote => {
                if !long {
                    return i + 1;
                }
                if rest[i..].starts_with(&[quote, quote, quote]) {
                    return i + 3;
                }
                i += 1;
            }
            _ => i += 1,
        }
    }
    rest.len()
}

pub(crate) fn is_word_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric()
        || matches!(b, b'_' | b'-' | b'.' | b':' | b'%' | b'\\' | b'@')
        || b >= 0x80
}

impl<'a> Iterator for Tokens<'a> {
    type Item = (usize, Token<'a>);

    fn next(&mut self) -> Option<Self::Item> {
        let bytes = self.text.as_bytes();
        while self.at < bytes.len() {
            let b = bytes[self.at];
            match b {
                b'#' => self.skip(comment_len(&bytes[self.at..])),
                b'"' | b'\'' => {
                    let len = self.string_len();
                    self.skip(len);
                }
                b'<' => {
                    let line = self.line;
                    let (iri, len) = iri_at(&self.text[self.at..]);
                    self.skip(len);
                    return Some((line, Token::Iri(iri)));
                }
                _ if is_word_byte(b) => {
                    let start = self.at;
                    let mut end = start;
                    while end < bytes.len() && is_word_byte(bytes[end]) {
                        // An escaped character belongs to the word, whole.
                        if bytes[end] == b'\\' {
                            end += 1;
                            end += self.text[end..].chars().next().map_or(0, char::len_utf8);
                        } else {
                            end += 1;
                        }
                    }
                    let line = self.line;
                    self.skip(end - start);
                    let word = self.text[start..end].trim_end_matches('.');
                    if word.is_empty() || word.starts_with("_:") {
                        continue;
                    }
                    if word.contains(':') && !word.starts_with('@') {
                        return Some((line, Token::Prefixed(word)));
                    }
                    return Some((line, Token::Keyword(word)));
                }
                _ => self.skip(1),
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const UI: &str = "https://w3id.org/seams/ui#";

    #[test]
    fn a_term_is_found_as_a_prefixed_name_or_an_iri_never_in_a_comment_or_string() {
        let text = "# ui:Pag in a comment\n\
                    @prefix ui: <https://w3id.org/seams/ui#> .\n\
                    PREFIX ex: <urn:ex:>\n\
                    ex:a rdfs:label \"ui:Pag in a string\" ;\n\
                    \x20 rdfs:comment \"\"\"over\n ui:Pag\n lines\"\"\" .\n\
                    ex:a a ui:Pag.\n\
                    <urn:ex:b> a <https://w3id.org/seams/ui#Other> .\n\
                    ex:c ui:x\\-y 1 .\n";
        let ui = |local: &str| format!("{UI}{local}");
        let cases: &[(&str, Option<usize>)] = &[
            (&ui("Pag"), Some(8)),
            (&ui("Other"), Some(9)),
            ("urn:ex:a", Some(4)),
            ("urn:ex:b", Some(9)),
            (&ui("x-y"), Some(10)),
            (&ui("Page"), None),
            ("urn:ex:", None),
        ];
        for (iri, line) in cases {
            assert_eq!(line_of(text, iri), *line, "{iri}");
        }
    }

    #[test]
    fn a_prefix_counts_only_once_declared_and_an_unterminated_text_ends_cleanly() {
        let text = "ui:Page a ui:Page .\n@prefix ui: <urn:ui#> .\nui:Page a ui:Page .\n";
        assert_eq!(line_of(text, "urn:ui#Page"), Some(3));
        for broken in [
            "\"never closed",
            "<never closed",
            "'''long",
            "ui:a\\",
            "ui:a\\é",
        ] {
            assert_eq!(line_of(broken, "urn:ui#a"), None, "{broken}");
        }
    }
}
