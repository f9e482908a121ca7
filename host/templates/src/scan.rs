//! Reading a template's tags: where the next one opens, where it ends
//! (string literals skipped), its whitespace-control marks, and names.
//! Shared by the instrumentation and the search for shared loops.

use crate::syntax::Delimiters;

/// The first tag that opens in `rest`: where, and which. Only as far as
/// that tag is read: searching `rest` for each kind of opener in turn read
/// to the end for a kind it lacks, at every tag (a template of 100,000
/// block tags and no `{{` took minutes).
pub(crate) fn next_tag(rest: &str, d: &Delimiters) -> Option<(usize, Tag)> {
    let openers = [
        (d.var.0, Tag::Var),
        (d.block.0, Tag::Block),
        (d.comment.0, Tag::Comment),
    ];
    let [a, b, c] = openers.map(|(open, _)| open.as_bytes()[0]);
    let bytes = rest.as_bytes();
    let mut from = 0;
    loop {
        let at = from + memchr::memchr3(a, b, c, &bytes[from..])?;
        // An opener starts with an ASCII character: `at` is a boundary.
        if let Some(&(_, tag)) = openers
            .iter()
            .find(|(open, _)| bytes[at..].starts_with(open.as_bytes()))
        {
            return Some((at, tag));
        }
        from = at + 1;
    }
}

#[derive(Clone, Copy)]
pub(crate) enum Tag {
    Var,
    Block,
    Comment,
}

/// The end (exclusive) of a tag opened at the start of `rest`, skipping
/// string literals, so that a `}}` inside quotes does not close it.
pub(crate) fn tag_end(rest: &str, open_len: usize, close: &str) -> Option<usize> {
    let bytes = rest.as_bytes();
    let mut i = open_len;
    let mut quote: Option<u8> = None;
    while i < bytes.len() {
        let b = bytes[i];
        match quote {
            Some(q) => {
                if b == b'\\' {
                    i += 1;
                } else if b == q {
                    quote = None;
                }
            }
            None => {
                if b == b'"' || b == b'\'' {
                    quote = Some(b);
                } else if bytes[i..].starts_with(close.as_bytes()) {
                    // Compared as bytes: `i` steps a byte at a time (and
                    // past an escaped one), so it may sit inside a
                    // character; a closer is ASCII, so where it matches is
                    // a boundary.
                    return Some(i + close.len());
                }
            }
        }
        i += 1;
    }
    None
}

pub(crate) fn split_ws_prefix(inner: &str) -> (&str, &str) {
    match inner.as_bytes().first() {
        Some(b'-' | b'+') => (&inner[..1], &inner[1..]),
        _ => ("", inner),
    }
}

pub(crate) fn split_ws_suffix(inner: &str) -> (&str, &str) {
    match inner.as_bytes().last() {
        Some(b'-' | b'+') => (&inner[..inner.len() - 1], &inner[inner.len() - 1..]),
        _ => (inner, ""),
    }
}

pub(crate) fn is_identifier(text: &str) -> bool {
    let mut chars = text.chars();
    matches!(chars.next(), Some(c) if c.is_alphabetic() || c == '_')
        && chars.all(|c| c.is_alphanumeric() || c == '_')
        && !matches!(
            text,
            "true" | "false" | "none" | "True" | "False" | "None" | "loop"
        )
}
