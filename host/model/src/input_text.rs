//! Text read from the user's files (`seams.toml`, `seams.lock`, model
//! files), and how values from them appear in messages: a UTF-8 BOM is
//! accepted, invalid UTF-8 is named by line and column, and an echoed value
//! is cut to [`ECHO_LIMIT`] characters so that a huge value cannot flood
//! the terminal. Text from an untrusted source (a generator's log or
//! error) is escaped so that it cannot drive a terminal ([`escape_line`]).

use std::borrow::Cow;

/// The most characters of a value from a file that a message repeats.
pub(crate) const ECHO_LIMIT: usize = 120;

/// Where a file stops being UTF-8.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotUtf8 {
    /// 1-based line of the first invalid byte.
    pub line: usize,
    /// 1-based column (in characters) of that byte.
    pub column: usize,
    /// The byte.
    pub byte: u8,
}

impl NotUtf8 {
    /// The message for a place that already names the line.
    pub fn at_column(&self) -> String {
        format!(
            "column {}: byte 0x{:02x} is not UTF-8; save the file as UTF-8",
            self.column, self.byte
        )
    }
}

impl std::fmt::Display for NotUtf8 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "line {} {}", self.line, self.at_column())
    }
}

/// `bytes` as text, without a leading UTF-8 byte order mark.
///
/// # Errors
///
/// Where the bytes stop being UTF-8.
pub fn decode(bytes: &[u8]) -> Result<&str, NotUtf8> {
    let bytes = strip_bom(bytes);
    std::str::from_utf8(bytes).map_err(|e| {
        let valid = &bytes[..e.valid_up_to()];
        // The prefix is valid UTF-8 by definition.
        let before = std::str::from_utf8(valid).unwrap_or_default();
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        NotUtf8 {
            line: before.matches('\n').count() + 1,
            column: before[line_start..].chars().count() + 1,
            byte: bytes[e.valid_up_to()],
        }
    })
}

/// `bytes` without a leading UTF-8 byte order mark.
pub(crate) fn strip_bom(bytes: &[u8]) -> &[u8] {
    bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes)
}

/// `value` quoted and escaped as Rust's `{:?}` does (control characters
/// included), cut to [`ECHO_LIMIT`] characters with the full size said.
pub fn echo(value: &str) -> String {
    let count = value.chars().count();
    if count <= ECHO_LIMIT {
        return format!("{value:?}");
    }
    let head: String = value.chars().take(ECHO_LIMIT).collect();
    format!("{head:?}... ({count} characters in all)")
}

/// A message from a parser, cut like an echoed value: some parsers quote
/// the whole offending value.
pub fn cut(message: &str) -> String {
    let limit = ECHO_LIMIT * 3;
    if message.chars().count() <= limit {
        return message.to_owned();
    }
    let head: String = message.chars().take(limit).collect();
    format!("{head}... (cut)")
}

/// Whether `c` must not reach a terminal as it is: control characters
/// (C0, DEL, C1: escape sequences start with them) and the invisible
/// formatting characters that reorder or hide text (bidi overrides and
/// isolates, zero-width characters, the BOM).
pub fn unsafe_char(c: char) -> bool {
    c.is_control()
        || matches!(c,
            '\u{200B}'..='\u{200F}'
            | '\u{202A}'..='\u{202E}'
            | '\u{2060}'..='\u{2069}'
            | '\u{FEFF}'
            | '\u{061C}'
        )
}

/// `text` as one line that is safe to print: every [`unsafe_char`] (the
/// newline included) written as `\u{..}`, cut to `limit` characters with
/// its full size said.
pub fn escape_line(text: &str, limit: usize) -> Cow<'_, str> {
    escape(text, limit, false)
}

/// `text` safe to print, its lines kept: like [`escape_line`] but for
/// `\n`.
pub fn escape_text(text: &str, limit: usize) -> Cow<'_, str> {
    escape(text, limit, true)
}

fn escape(text: &str, limit: usize, keep_newlines: bool) -> Cow<'_, str> {
    let needs = |c: char| unsafe_char(c) && !(keep_newlines && c == '\n');
    let long = limit != usize::MAX && text.len() > limit && text.chars().nth(limit).is_some();
    if !long && !text.chars().any(needs) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len().min(limit.saturating_mul(4)) + 32);
    for (count, c) in text.chars().enumerate() {
        if count == limit {
            out.push_str(&format!("... ({} bytes in all)", text.len()));
            break;
        }
        if needs(c) {
            out.push_str(&format!("\\u{{{:x}}}", c as u32));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bom_is_accepted_and_invalid_utf8_is_located() {
        assert_eq!(decode(b"\xEF\xBB\xBFa = 1\n"), Ok("a = 1\n"));
        assert_eq!(
            decode(b"a\nb\xc3\xa9c\xff\n"),
            Err(NotUtf8 {
                line: 2,
                column: 4,
                byte: 0xff
            })
        );
        assert_eq!(
            decode(b"\xfe").unwrap_err().to_string(),
            "line 1 column 1: byte 0xfe is not UTF-8; save the file as UTF-8"
        );
    }

    #[test]
    fn long_values_are_cut_and_escaped() {
        assert_eq!(echo("a\u{1b}[31m"), "\"a\\u{1b}[31m\"");
        let long = "x".repeat(1_000_000);
        let shown = echo(&long);
        assert!(shown.len() < 200, "{}", shown.len());
        assert!(
            shown.ends_with("... (1000000 characters in all)"),
            "{shown}"
        );
        assert!(cut(&long).len() < 400);
        assert_eq!(cut("short"), "short");
    }
}
