//! Reading a tracing render back: its text stripped of sentinels, checked
//! against the normal render, and walked line by line into template
//! origins and terms.

use minijinja::value::Value;

use crate::error::TemplateError;
use crate::recorder::{MarkInfo, Origins};
use crate::sentinel::{SENTINEL_CLOSE, SENTINEL_OPEN, digits_at};
use crate::view::IriReader;

/// A tracing render's text without its sentinels, and per output line
/// its start in that text and its marks.
pub(crate) struct Stripped {
    pub(crate) text: String,
    /// Per line: where it starts in `text`, and where its marks start in
    /// `marks`. One list for all the marks, not one per line: a page has
    /// thousands of lines.
    lines: Vec<(usize, usize)>,
    marks: Vec<usize>,
}

impl Stripped {
    /// The marks printed on line `line` (from 0).
    fn line_marks(&self, line: usize) -> &[usize] {
        let from = self.lines[line].1;
        let to = self.lines.get(line + 1).map_or(self.marks.len(), |l| l.1);
        &self.marks[from..to]
    }
}

/// Splits the traced text into lines and their marks; marks past
/// `marks_len` are dropped.
pub(crate) fn strip(traced: &str, marks_len: usize) -> Stripped {
    let mut stripped = String::with_capacity(traced.len());
    let mut lines: Vec<(usize, usize)> = vec![(0, 0)];
    let mut marks = Vec::with_capacity(marks_len);
    // Byte search (memchr) for '\n' and the sentinel's first byte: this
    // loop runs over every byte of every traced output.
    let bytes = traced.as_bytes();
    let open = SENTINEL_OPEN.to_string();
    let close = SENTINEL_CLOSE.to_string();
    let mut pos = 0;
    while let Some(found) = memchr::memchr2(b'\n', open.as_bytes()[0], &bytes[pos..]) {
        let at = pos + found;
        if bytes[at] == b'\n' {
            stripped.push_str(&traced[pos..=at]);
            lines.push((stripped.len(), marks.len()));
            pos = at + 1;
            continue;
        }
        if !traced[at..].starts_with(&open) {
            // Another character that starts with the same byte.
            let len = traced[at..].chars().next().map_or(1, char::len_utf8);
            stripped.push_str(&traced[pos..at + len]);
            pos = at + len;
            continue;
        }
        stripped.push_str(&traced[pos..at]);
        let body_start = at + open.len();
        // A sentinel is its mark's number, then the closing character.
        let digits = digits_at(bytes, body_start);
        let end = if traced[body_start + digits..].starts_with(&close) {
            body_start + digits
        } else {
            memchr::memmem::find(&bytes[body_start..], close.as_bytes())
                .map_or(bytes.len(), |e| body_start + e)
        };
        if let Ok(i) = traced[body_start..end].parse::<usize>()
            && i < marks_len
        {
            marks.push(i);
        }
        pos = (end + close.len()).min(bytes.len());
    }
    stripped.push_str(&traced[pos..]);
    Stripped {
        text: stripped,
        lines,
        marks,
    }
}

/// The template lines behind a mark, outermost include first.
pub(crate) fn chain_of<'a>(m: &'a MarkInfo, origins: &'a Origins) -> impl Iterator<Item = &'a str> {
    m.chain
        .iter()
        .chain([&m.origin])
        .map(|&id| origins.names[id].as_str())
}

/// Checks that the stripped tracing render is the normal render's text.
pub(crate) fn same_text(
    name: &str,
    stripped: &Stripped,
    normal: &str,
    marks: &[MarkInfo],
    origins: &Origins,
) -> Result<(), TemplateError> {
    if stripped.text == normal {
        return Ok(());
    }
    let lines = stripped.lines.len();
    let line = stripped
        .text
        .split('\n')
        .zip(normal.split('\n'))
        .position(|(a, b)| a != b)
        .unwrap_or_else(|| {
            stripped
                .text
                .split('\n')
                .count()
                .min(normal.split('\n').count())
                - 1
        });
    // The differing line's own marks, else the nearest before it: a
    // filter block, say, may have swallowed the line's sentinels.
    let origin = (0..=line.min(lines - 1))
        .rev()
        .find_map(|l| stripped.line_marks(l).first())
        .map(|&m| chain_of(&marks[m], origins).collect::<Vec<_>>().join(" > "))
        .unwrap_or_else(|| name.to_owned());
    Err(TemplateError {
        template: name.to_owned(),
        line: None,
        message: format!(
            "the tracing render differs from the normal render at output line {} (near {origin}); nothing was written",
            line + 1
        ),
    })
}

/// Whether a trace walk shows every line's scope ([`TraceLine::scope`],
/// for goldens) or only where it is the line's terms (sidecars).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Scopes {
    Kept,
    Dropped,
}

/// One traced line, borrowed from the walk that found it; its IRIs as
/// the walk's [`IriReader`] reads them.
pub(crate) struct Line<'a, I> {
    pub(crate) number: usize,
    /// `template:line` origins, outermost include first.
    pub(crate) templates: &'a [&'a str],
    /// The IRIs behind it, sorted by text, each once.
    pub(crate) terms: &'a [I],
    /// The IRIs of the view object it was printed in, when asked for or
    /// when they are its terms.
    pub(crate) scope: &'a [I],
}

/// What a trace walk needs beside the render: the template's name (for
/// errors), the origins, the context's own IRIs and which scopes to show.
pub(crate) struct Walk<'w> {
    pub(crate) name: &'w str,
    pub(crate) origins: &'w Origins,
    pub(crate) root: &'w [Value],
    pub(crate) scopes: Scopes,
}

impl Walk<'_> {
    /// Walks a stripped tracing render: per non-blank line, its template
    /// origins and terms, shown to `visit` with `reader`, which read the
    /// terms. A line's buffers are reused for the next: a page of
    /// thousands of lines allocates for few of them.
    pub(crate) fn lines<R: IriReader>(
        &self,
        stripped: &Stripped,
        marks: &[MarkInfo],
        reader: &mut R,
        visit: &mut dyn FnMut(Line<'_, R::Iri>, &R),
    ) -> Result<(), TemplateError> {
        let lines = &stripped.lines;
        let text = &stripped.text;
        let mut templates: Vec<&str> = Vec::new();
        let mut terms: Vec<R::Iri> = Vec::new();
        let mut scope: Vec<R::Iri> = Vec::new();
        let mut fallback: Vec<R::Iri> = Vec::new();
        // Per line, the next line with a mark: made when first needed.
        let mut next_marked: Option<Vec<usize>> = None;
        for (number, &(start, _)) in lines.iter().enumerate() {
            let end = lines
                .get(number + 1)
                .map_or(text.len(), |&(next, _)| next - 1);
            if text[start..end].trim().is_empty() {
                continue;
            }
            // A line without a sentinel is the start of a printed value that
            // holds a line break (a model literal of several lines): its
            // sentinel is the next one, printed right after the value.
            let mut line_marks = stripped.line_marks(number);
            if line_marks.is_empty() {
                let next = next_marked.get_or_insert_with(|| next_marked_lines(stripped));
                if next[number] < lines.len() {
                    line_marks = &stripped.line_marks(next[number])[..1];
                }
            }
            templates.clear();
            terms.clear();
            for &m in line_marks {
                let info = &marks[m];
                for origin in chain_of(info, self.origins) {
                    if !templates.contains(&origin) {
                        templates.push(origin);
                    }
                }
                if let Some(owner) = &info.owner {
                    reader.view_iris(owner, &mut terms);
                }
            }
            reader.sort(&mut terms);
            scope.clear();
            if terms.is_empty() || self.scopes == Scopes::Kept {
                let enclosing = line_marks.iter().find_map(|&m| {
                    let info = &marks[m];
                    info.enclosing()
                        .into_iter()
                        .chain(&info.frame)
                        .find(|object| reader.view_iris(object, &mut scope))
                });
                if enclosing.is_none() {
                    reader.iris(self.root, &mut scope);
                }
            }
            if templates.is_empty() {
                return Err(TemplateError {
                    template: self.name.to_owned(),
                    line: None,
                    message: format!(
                        "output line {} has no template origin in the tracing render",
                        number + 1
                    ),
                });
            }
            // No value read off a view object: the enclosing view object's.
            let own = !terms.is_empty();
            if !own {
                fallback.clone_from(&scope);
                reader.sort(&mut fallback);
            }
            visit(
                Line {
                    number: number + 1,
                    templates: &templates,
                    terms: if own { &terms } else { &fallback },
                    scope: &scope,
                },
                reader,
            );
        }
        Ok(())
    }
}

/// Per line, the index of the first line at or after it that has a
/// mark (`lines.len()` when none does): one pass from the end, so that
/// a value of many lines costs no more than its lines.
fn next_marked_lines(stripped: &Stripped) -> Vec<usize> {
    let lines = stripped.lines.len();
    let mut next = vec![lines; lines];
    let mut found = lines;
    for i in (0..lines).rev() {
        if !stripped.line_marks(i).is_empty() {
            found = i;
        }
        next[i] = found;
    }
    next
}
