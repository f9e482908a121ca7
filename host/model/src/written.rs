//! Where a model file writes each string literal, and the minimal textual
//! change that gives one a new value: what writing a hand edit back into
//! the model needs (ADR-0019's T4). The RDF parser reports no positions, so
//! a small scanner follows Turtle's (and TriG's) structure: prefix
//! declarations, subjects, predicate lists (`;`), object lists (`,`), blank
//! node property lists (`[ ]`), collections (`( )`, whose members are not
//! an element's values) and graph blocks (`{ }`), skipping comments.

use std::collections::HashMap;
use std::ops::Range;

use crate::position::{advance, comment_len, iri_at, is_word_byte, string_len, unescape_local};

const RDF_TYPE: &str = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type";

/// A string literal as a file writes it, as the object of a named subject.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WrittenLiteral {
    /// The subject's IRI.
    pub subject: String,
    /// The predicate's IRI.
    pub predicate: String,
    /// The literal's value, escapes resolved.
    pub value: String,
    /// Its bytes in the file, quotes included (datatype or language tag
    /// not).
    pub span: Range<usize>,
    /// Its 1-based line.
    pub line: usize,
}

/// Why a literal cannot be rewritten.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Unwritable {
    /// The file does not write it.
    #[error("the file does not write this value of <{subject}> <{predicate}> as a plain literal")]
    Missing {
        /// The subject.
        subject: String,
        /// The predicate.
        predicate: String,
    },
    /// The element is the only value of a property that another element
    /// writes: removing the reference would leave a statement without its
    /// object.
    #[error(
        "<{subject}> <{predicate}> has <{object}> as its only value here; remove that line by hand"
    )]
    SoleValue {
        /// The element that points at it.
        subject: String,
        /// The property.
        predicate: String,
        /// The element removed.
        object: String,
    },
    /// The file writes it more than once.
    #[error("the file writes this value of <{subject}> <{predicate}> {} times (lines {}); change it by hand", lines.len(), lines.iter().map(usize::to_string).collect::<Vec<_>>().join(", "))]
    Several {
        /// The subject.
        subject: String,
        /// The predicate.
        predicate: String,
        /// Where.
        lines: Vec<usize>,
    },
}

/// Every string literal `text` writes as the object of a named subject,
/// in order.
pub fn literals(text: &str) -> Vec<WrittenLiteral> {
    Scanner::new(text).run().found
}

/// `text` without the element `iri`: every statement it is the subject
/// of, and its place in every object list that names it, with the comma
/// that separated it; every other byte unchanged. `None` when the text
/// does not write it.
///
/// # Errors
///
/// The element is the only object of a property another statement
/// writes ([`Unwritable::SoleValue`]).
pub fn remove_element(text: &str, iri: &str) -> Result<Option<String>, Unwritable> {
    let scanned = Scanner::new(text).run();
    let bytes = text.as_bytes();
    let mut cuts: Vec<Range<usize>> = Vec::new();
    for (_, span) in scanned.statements.iter().filter(|(s, _)| s == iri) {
        // The whole lines the statement fills, with its line break.
        let mut start = span.start;
        while start > 0 && matches!(bytes[start - 1], b' ' | b'\t') {
            start -= 1;
        }
        if start > 0 && bytes[start - 1] != b'\n' {
            start = span.start;
        }
        let mut end = span.end;
        while end < bytes.len() && matches!(bytes[end], b' ' | b'\t') {
            end += 1;
        }
        if end < bytes.len() && bytes[end] == b'\n' {
            end += 1;
        }
        cuts.push(start..end);
    }
    for object in scanned.objects.iter().filter(|o| o.iri == iri) {
        if cuts.iter().any(|c| c.contains(&object.span.start)) {
            continue;
        }
        let before = text[..object.span.start].trim_end();
        let after = &text[object.span.end..];
        let after_at = object.span.end + (after.len() - after.trim_start().len());
        if let Some(list) = before.strip_suffix(',') {
            // From the end of the previous object: `a , b .` becomes `a .`.
            cuts.push(list.trim_end().len()..object.span.end);
        } else if text[after_at..].starts_with(',') {
            let rest = &text[after_at + 1..];
            let spaces = rest.len() - rest.trim_start_matches([' ', '\t']).len();
            cuts.push(object.span.start..after_at + 1 + spaces);
        } else {
            return Err(Unwritable::SoleValue {
                subject: object.subject.clone(),
                predicate: object.predicate.clone(),
                object: iri.to_owned(),
            });
        }
    }
    if cuts.is_empty() {
        return Ok(None);
    }
    cuts.sort_by_key(|c| c.start);
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for cut in cuts {
        if cut.start >= at {
            out.push_str(&text[at..cut.start]);
            at = cut.end;
        } else {
            at = at.max(cut.end);
        }
    }
    out.push_str(&text[at..]);
    Ok(Some(out))
}

/// The 1-based line on which `text` first writes `iri` as the subject of
/// a statement: where the file defines that element.
pub fn subject_line(text: &str, iri: &str) -> Option<usize> {
    Scanner::new(text)
        .run()
        .subjects
        .into_iter()
        .find_map(|(subject, line)| (subject == iri).then_some(line))
}

/// `text` with the one literal `subject predicate value` written with
/// `new_value` instead: the same quotes, the datatype or language tag
/// kept, every other byte unchanged.
///
/// # Errors
///
/// The file writes it nowhere, or more than once.
pub fn rewrite(
    text: &str,
    subject: &str,
    predicate: &str,
    value: &str,
    new_value: &str,
) -> Result<String, Unwritable> {
    let found: Vec<WrittenLiteral> = literals(text)
        .into_iter()
        .filter(|l| l.subject == subject && l.predicate == predicate && l.value == value)
        .collect();
    let one = only(found, subject, predicate)?;
    let written = &text[one.span.clone()];
    let quote = &written[..quote_len(written)];
    let mut out = String::with_capacity(text.len() + new_value.len());
    out.push_str(&text[..one.span.start]);
    out.push_str(quote);
    out.push_str(&escape(new_value, quote));
    out.push_str(quote);
    out.push_str(&text[one.span.end..]);
    Ok(out)
}

/// The one literal of `found`, or why there is not one.
fn only(
    mut found: Vec<WrittenLiteral>,
    subject: &str,
    predicate: &str,
) -> Result<WrittenLiteral, Unwritable> {
    match found.len() {
        1 => Ok(found.remove(0)),
        0 => Err(Unwritable::Missing {
            subject: subject.to_owned(),
            predicate: predicate.to_owned(),
        }),
        _ => Err(Unwritable::Several {
            subject: subject.to_owned(),
            predicate: predicate.to_owned(),
            lines: found.iter().map(|l| l.line).collect(),
        }),
    }
}

/// `text` with the one integer `subject predicate value`, written bare
/// (`ui:order 2`), written as `new_value` instead; every other byte
/// unchanged.
///
/// # Errors
///
/// The file writes it nowhere (or not bare), or more than once.
pub fn rewrite_integer(
    text: &str,
    subject: &str,
    predicate: &str,
    value: i64,
    new_value: i64,
) -> Result<String, Unwritable> {
    let found: Vec<WrittenLiteral> = Scanner::new(text)
        .run()
        .integers
        .into_iter()
        .filter(|l| {
            l.subject == subject && l.predicate == predicate && l.value.parse() == Ok(value)
        })
        .collect();
    let one = only(found, subject, predicate)?;
    Ok(format!(
        "{}{new_value}{}",
        &text[..one.span.start],
        &text[one.span.end..]
    ))
}

/// 3 for a long string (`"""`, `'''`), else 1.
fn quote_len(written: &str) -> usize {
    let b = written.as_bytes();
    if b.len() >= 6 && b[1] == b[0] && b[2] == b[0] {
        3
    } else {
        1
    }
}

/// `value` escaped for a string between `quote`s.
fn escape(value: &str, quote: &str) -> String {
    let long = quote.len() == 3;
    let q = quote.chars().next().unwrap_or('"');
    let mut out = String::with_capacity(value.len());
    for c in value.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            c if c == q => {
                out.push('\\');
                out.push(c);
            }
            '\n' if !long => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            c => out.push(c),
        }
    }
    out
}

/// The value a written string literal (quotes included) holds.
fn unescape(written: &str) -> String {
    let open = quote_len(written);
    let inner = written
        .get(open..written.len().saturating_sub(open))
        .unwrap_or_default();
    let mut out = String::with_capacity(inner.len());
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('t') => out.push('\t'),
            Some('b') => out.push('\u{8}'),
            Some('n') => out.push('\n'),
            Some('r') => out.push('\r'),
            Some('f') => out.push('\u{c}'),
            Some(u @ ('u' | 'U')) => {
                let digits: String = chars.by_ref().take(if u == 'u' { 4 } else { 8 }).collect();
                out.extend(
                    u32::from_str_radix(&digits, 16)
                        .ok()
                        .and_then(char::from_u32),
                );
            }
            Some(other) => out.push(other),
            None => {}
        }
    }
    out
}

/// Where the scanner is in a statement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Expect {
    Subject,
    Predicate,
    Object,
}

/// One level of nesting: a statement, or a blank node property list.
#[derive(Debug, Clone)]
struct Frame {
    /// `None` for a blank node.
    subject: Option<String>,
    predicate: Option<String>,
    expect: Expect,
}

struct Scanner<'a> {
    text: &'a str,
    at: usize,
    line: usize,
    prefixes: HashMap<String, String>,
    frame: Frame,
    outer: Vec<Frame>,
    /// Collections open: their members are nobody's values.
    lists: usize,
    found: Vec<WrittenLiteral>,
    /// Integers written bare (`ui:order 2`), as the objects of a named
    /// subject: their value is the word as written.
    integers: Vec<WrittenLiteral>,
    /// Each statement's named subject, with its line.
    subjects: Vec<(String, usize)>,
    /// Where the statement being read starts, when its subject is named.
    statement_start: Option<usize>,
    /// Each statement with a named subject: the subject and the bytes from
    /// it to the final dot.
    statements: Vec<(String, Range<usize>)>,
    /// Each IRI written as the object of a named subject.
    objects: Vec<WrittenObject>,
}

/// An IRI written as the object of a named subject.
#[derive(Debug, Clone)]
struct WrittenObject {
    subject: String,
    predicate: String,
    iri: String,
    span: Range<usize>,
}

impl<'a> Scanner<'a> {
    fn new(text: &'a str) -> Self {
        Scanner {
            text,
            at: 0,
            line: 1,
            prefixes: HashMap::new(),
            frame: Frame {
                subject: None,
                predicate: None,
                expect: Expect::Subject,
            },
            outer: Vec::new(),
            lists: 0,
            found: Vec::new(),
            integers: Vec::new(),
            subjects: Vec::new(),
            statement_start: None,
            statements: Vec::new(),
            objects: Vec::new(),
        }
    }

    fn skip(&mut self, len: usize) {
        advance(self.text, &mut self.at, &mut self.line, len);
    }

    /// A term where the statement expects one, written at `span`: `None`
    /// for a blank node or a term that cannot be expanded.
    fn term(&mut self, term: Option<String>, span: Range<usize>) {
        match self.frame.expect {
            Expect::Subject => {
                if let (Some(subject), true) = (&term, self.outer.is_empty()) {
                    self.subjects.push((subject.clone(), self.line));
                    self.statement_start = Some(span.start);
                }
                self.frame.subject = term;
                self.frame.expect = Expect::Predicate;
            }
            Expect::Predicate => {
                self.frame.predicate = term;
                self.frame.expect = Expect::Object;
            }
            Expect::Object => {
                if self.outer.is_empty()
                    && self.lists == 0
                    && let (Some(iri), Some(subject), Some(predicate)) =
                        (term, &self.frame.subject, &self.frame.predicate)
                {
                    self.objects.push(WrittenObject {
                        subject: subject.clone(),
                        predicate: predicate.clone(),
                        iri,
                        span,
                    });
                }
            }
        }
    }

    fn end_statement(&mut self) {
        if let (Some(start), Some(subject)) = (self.statement_start.take(), &self.frame.subject)
            && self.outer.is_empty()
        {
            self.statements.push((subject.clone(), start..self.at));
        }
        self.outer.clear();
        self.lists = 0;
        self.frame = Frame {
            subject: None,
            predicate: None,
            expect: Expect::Subject,
        };
    }

    fn expand(&self, name: &str) -> Option<String> {
        let (prefix, local) = name.split_once(':')?;
        Some(format!(
            "{}{}",
            self.prefixes.get(prefix)?,
            unescape_local(local)
        ))
    }

    /// Reads a directive's rest: `@prefix p: <iri> .`, `PREFIX p: <iri>`,
    /// `@base <iri> .`, `BASE <iri>`.
    fn directive(&mut self, keyword: &str) {
        let bytes = self.text.as_bytes();
        let mut name: Option<String> = None;
        loop {
            while self.at < bytes.len() && bytes[self.at].is_ascii_whitespace() {
                self.skip(1);
            }
            if self.at >= bytes.len() {
                return;
            }
            match bytes[self.at] {
                b'<' => {
                    let (iri, len) = iri_at(&self.text[self.at..]);
                    let iri = iri.to_owned();
                    self.skip(len);
                    if let Some(name) = name.take() {
                        self.prefixes.insert(name, iri);
                    }
                    // `@prefix` and `@base` end with a dot.
                    if keyword.starts_with('@') {
                        while self.at < bytes.len() && bytes[self.at] != b'.' {
                            self.skip(1);
                        }
                        self.skip(1);
                    }
                    return;
                }
                b if is_word_byte(b) => {
                    let start = self.at;
                    while self.at < bytes.len() && is_word_byte(bytes[self.at]) {
                        self.skip(1);
                    }
                    let word = &self.text[start..self.at];
                    name = word.strip_suffix(':').map(str::to_owned);
                }
                _ => return,
            }
        }
    }

    fn run(mut self) -> Self {
        let bytes = self.text.as_bytes();
        while self.at < bytes.len() {
            let b = bytes[self.at];
            match b {
                b'#' => self.skip(comment_len(&bytes[self.at..])),
                b'"' | b'\'' => {
                    let len = string_len(&bytes[self.at..]);
                    let span = self.at..self.at + len;
                    let line = self.line;
                    self.skip(len);
                    if self.frame.expect == Expect::Object
                        && self.lists == 0
                        && let (Some(subject), Some(predicate)) =
                            (&self.frame.subject, &self.frame.predicate)
                    {
                        self.found.push(WrittenLiteral {
                            subject: subject.clone(),
                            predicate: predicate.clone(),
                            value: unescape(&self.text[span.clone()]),
                            span,
                            line,
                        });
                    }
                    self.skip_datatype();
                }
                b'<' => {
                    let (iri, len) = iri_at(&self.text[self.at..]);
                    let iri = iri.to_owned();
                    let span = self.at..self.at + len;
                    self.skip(len);
                    self.term(Some(iri), span);
                }
                b';' => {
                    self.skip(1);
                    self.frame.expect = Expect::Predicate;
                }
                b',' => self.skip(1),
                b'[' => {
                    self.skip(1);
                    if self.frame.expect == Expect::Subject {
                        self.frame.subject = None;
                        self.frame.expect = Expect::Predicate;
                    } else {
                        let inner = Frame {
                            subject: None,
                            predicate: None,
                            expect: Expect::Predicate,
                        };
                        self.outer.push(std::mem::replace(&mut self.frame, inner));
                    }
                }
                b']' => {
                    self.skip(1);
                    if let Some(outer) = self.outer.pop() {
                        self.frame = outer;
                    }
                }
                b'(' => {
                    self.skip(1);
                    self.lists += 1;
                }
                b')' => {
                    self.skip(1);
                    self.lists = self.lists.saturating_sub(1);
                    if self.lists == 0 {
                        self.term(None, self.at..self.at);
                    }
                }
                b'{' | b'}' => {
                    self.skip(1);
                    self.end_statement();
                }
                _ if is_word_byte(b) => self.word(),
                _ => self.skip(1),
            }
        }
        self
    }

    /// After a string: `^^datatype` and `@lang` belong to it.
    fn skip_datatype(&mut self) {
        let bytes = self.text.as_bytes();
        if bytes[self.at..].starts_with(b"^^") {
            self.skip(2);
            if self.at < bytes.len() && bytes[self.at] == b'<' {
                let (_, len) = iri_at(&self.text[self.at..]);
                self.skip(len);
            } else {
                self.skip_word();
            }
        } else if self.at < bytes.len() && bytes[self.at] == b'@' {
            self.skip_word();
        }
    }

    fn skip_word(&mut self) {
        let bytes = self.text.as_bytes();
        let start = self.at;
        while self.at < bytes.len() && is_word_byte(bytes[self.at]) {
            // A dot ends the statement unless a name character follows.
            if bytes[self.at] == b'.'
                && !bytes
                    .get(self.at + 1)
                    .is_some_and(|&n| is_word_byte(n) && n != b'.')
            {
                break;
            }
            self.skip(1);
        }
        if self.at == start {
            self.skip(1);
        }
    }

    fn word(&mut self) {
        let start = self.at;
        self.skip_word();
        let word = &self.text[start..self.at];
        if word.is_empty() || word == "." {
            self.end_statement();
            return;
        }
        let lower = word.to_ascii_lowercase();
        if matches!(lower.as_str(), "@prefix" | "prefix" | "@base" | "base") {
            self.directive(&lower);
            return;
        }
        if lower == "graph" {
            return;
        }
        let span = start..self.at;
        if word.starts_with("_:") {
            self.term(None, span);
        } else if word == "a" && self.frame.expect == Expect::Predicate {
            self.term(Some(RDF_TYPE.to_owned()), span);
        } else if word.contains(':') && !word.starts_with('@') {
            let expanded = self.expand(word);
            self.term(expanded, span);
        } else {
            // A number, a boolean: an object, or nothing of interest.
            let integer = word
                .strip_prefix(['+', '-'])
                .unwrap_or(word)
                .bytes()
                .all(|b| b.is_ascii_digit());
            if integer
                && self.frame.expect == Expect::Object
                && self.outer.is_empty()
                && self.lists == 0
                && let (Some(subject), Some(predicate)) =
                    (&self.frame.subject, &self.frame.predicate)
            {
                self.integers.push(WrittenLiteral {
                    subject: subject.clone(),
                    predicate: predicate.clone(),
                    value: word.to_owned(),
                    span: span.clone(),
                    line: self.line,
                });
            }
            self.term(None, span);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = r#"# A model, with comments that must survive.
@prefix ex: <https://example.org/x#> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
PREFIX ui: <https://w3id.org/seams/ui#>

ex:app a ui:Application ;
    rdfs:label "Chat" ;   # the title
    ui:page ex:a, ex:b .

ex:a rdfs:label "Threads"@en ; ui:path 'threads' ;
    rdfs:comment """A long "quoted"
text""" ; ui:order 1 .
<https://example.org/x#b> rdfs:label "Say \"hi\"\n"^^<http://www.w3.org/2001/XMLSchema#string> ;
    ui:tags ( "in a list" ) ;
    ui:part [ rdfs:label "inner" ] ;
    ui:note "after the blank node" .
ex:c rdfs:label "Chat" .
ex:d rdfs:label "Chat" .
"#;

    fn x(local: &str) -> String {
        format!("https://example.org/x#{local}")
    }

    const LABEL: &str = "http://www.w3.org/2000/01/rdf-schema#label";
    const UI: &str = "https://w3id.org/seams/ui#";

    #[test]
    fn removing_an_element_cuts_its_statements_and_its_place_in_lists() {
        let removed = remove_element(TEXT, &x("b")).unwrap().unwrap();
        // Its statement (four lines) and `, ex:b` are gone; the rest is
        // byte for byte.
        let expected = TEXT
            .replace("    ui:page ex:a, ex:b .", "    ui:page ex:a .")
            .replace(
                &TEXT[TEXT.find("<https://example.org/x#b>").unwrap()
                    ..TEXT.find("ex:c rdfs:label").unwrap()],
                "",
            );
        assert_eq!(removed, expected);
        let first = remove_element(TEXT, &x("a")).unwrap().unwrap();
        assert!(first.contains("    ui:page ex:b ."), "{first}");
        assert!(!first.contains("Threads"), "{first}");
        assert!(first.starts_with("# A model, with comments that must survive."));
        // The only value of a property: refused, not left dangling.
        let sole = "@prefix ex: <https://example.org/x#> .\nex:p ex:q ex:r .\nex:r ex:s \"t\" .\n";
        assert!(matches!(
            remove_element(sole, &x("r")),
            Err(Unwritable::SoleValue { .. })
        ));
        assert_eq!(remove_element(TEXT, &x("nowhere")).unwrap(), None);
    }

    #[test]
    fn an_element_is_defined_where_it_first_is_a_subject() {
        // ex:a and ex:b are objects first (line 7); a blank node's
        // predicate is no subject.
        let table = [
            ("app", Some(6)),
            ("a", Some(10)),
            ("b", Some(13)),
            ("c", Some(17)),
            ("nowhere", None),
        ];
        for (local, line) in table {
            assert_eq!(subject_line(TEXT, &x(local)), line, "{local}");
        }
        assert_eq!(subject_line(TEXT, &format!("{UI}part")), None);
    }

    #[test]
    fn every_string_a_named_subject_holds_is_found_with_its_place() {
        let found: Vec<(String, String, String, usize)> = literals(TEXT)
            .into_iter()
            .map(|l| (l.subject, l.predicate, l.value, l.line))
            .collect();
        let ui = |l: &str| format!("{UI}{l}");
        assert_eq!(
            found,
            [
                (x("app"), LABEL.to_owned(), "Chat".to_owned(), 7),
                (x("a"), LABEL.to_owned(), "Threads".to_owned(), 10),
                (x("a"), ui("path"), "threads".to_owned(), 10),
                (
                    x("a"),
                    "http://www.w3.org/2000/01/rdf-schema#comment".to_owned(),
                    "A long \"quoted\"\ntext".to_owned(),
                    11
                ),
                (x("b"), LABEL.to_owned(), "Say \"hi\"\n".to_owned(), 13),
                (x("b"), ui("note"), "after the blank node".to_owned(), 16),
                (x("c"), LABEL.to_owned(), "Chat".to_owned(), 17),
                (x("d"), LABEL.to_owned(), "Chat".to_owned(), 18),
            ]
        );
        // The list member and the blank node's label are nobody's values
        // here; the model parses the same triples.
        let model = crate::Model::parse("m.ttl", TEXT).unwrap();
        assert_eq!(model.label(&x("b")), Some("Say \"hi\"\n"));
    }

    #[test]
    fn an_integer_written_bare_is_rewritten_in_place() {
        let order = format!("{UI}order");
        let rewritten = rewrite_integer(TEXT, &x("a"), &order, 1, 12).unwrap();
        assert_eq!(
            rewritten,
            TEXT.replace("text\"\"\" ; ui:order 1 .", "text\"\"\" ; ui:order 12 .")
        );
        // Not written, or written as a string: nothing to rewrite in place.
        assert!(rewrite_integer(TEXT, &x("a"), &order, 2, 3).is_err());
        assert!(rewrite_integer(TEXT, &x("b"), &order, 1, 3).is_err());
        let twice = format!("{TEXT}ex:a ui:order 1 .\n");
        assert!(matches!(
            rewrite_integer(&twice, &x("a"), &order, 1, 3),
            Err(Unwritable::Several { .. })
        ));
        // Inside a blank node or a collection: nobody's value.
        let nested =
            "@prefix ex: <https://example.org/x#> .\nex:p ex:q [ ex:r 1 ] ; ex:s ( 1 ) .\n";
        assert!(rewrite_integer(nested, &x("p"), &x("r"), 1, 2).is_err());
        assert!(rewrite_integer(nested, &x("p"), &x("s"), 1, 2).is_err());
    }

    #[test]
    fn a_rewrite_changes_only_the_literal_and_keeps_quotes_and_tags() {
        let cases = [
            (
                x("app"),
                LABEL,
                "Chat",
                "Talk",
                "rdfs:label \"Talk\" ;   # the title",
            ),
            (x("a"), LABEL, "Threads", "Fils", "rdfs:label \"Fils\"@en ;"),
            (
                x("a"),
                &format!("{UI}path") as &str,
                "threads",
                "it's",
                "ui:path 'it\\'s' ;",
            ),
            (
                x("b"),
                LABEL,
                "Say \"hi\"\n",
                "Say \\ \"bye\"",
                "rdfs:label \"Say \\\\ \\\"bye\\\"\"^^<http://www.w3.org/2001/XMLSchema#string> ;",
            ),
        ];
        for (subject, predicate, old, new, line) in cases {
            let rewritten = rewrite(TEXT, &subject, predicate, old, new).unwrap();
            assert!(rewritten.contains(line), "{line}\n{rewritten}");
            // Everything else is byte for byte as it was.
            let changed = TEXT
                .lines()
                .zip(rewritten.lines())
                .filter(|(a, b)| a != b)
                .count();
            assert_eq!(changed, 1, "{rewritten}");
            let model = crate::Model::parse("m.ttl", &rewritten).unwrap();
            let values = model.literal_values();
            assert!(values.contains(&(subject.clone(), predicate.to_owned(), new.to_owned())));
        }
        assert_eq!(
            rewrite(TEXT, &x("c"), LABEL, "Nope", "x").unwrap_err(),
            Unwritable::Missing {
                subject: x("c"),
                predicate: LABEL.into()
            }
        );
        // Written once per subject: each is rewritable; a value written
        // twice for one subject is not.
        assert!(rewrite(TEXT, &x("c"), LABEL, "Chat", "x").is_ok());
        let twice = format!("{TEXT}ex:c rdfs:label \"Chat\" .\n");
        assert_eq!(
            rewrite(&twice, &x("c"), LABEL, "Chat", "x").unwrap_err(),
            Unwritable::Several {
                subject: x("c"),
                predicate: LABEL.into(),
                lines: vec![17, 19]
            }
        );
    }

    #[test]
    fn trig_graphs_and_broken_text_end_cleanly() {
        let trig =
            "@prefix ex: <urn:ex:> .\nex:g { ex:s ex:p \"v\" . }\nGRAPH ex:h { ex:t ex:p \"w\" }\n";
        let found: Vec<(String, String)> = literals(trig)
            .into_iter()
            .map(|l| (l.subject, l.value))
            .collect();
        assert_eq!(
            found,
            [
                ("urn:ex:s".to_owned(), "v".to_owned()),
                ("urn:ex:t".to_owned(), "w".to_owned())
            ]
        );
        for broken in [
            "\"open",
            "ex:a ex:b '''long",
            "<open",
            "ex:a ex:b \"x\"^^",
            "[ [ ] ] ) (",
        ] {
            let _ = literals(broken);
        }
    }
}
