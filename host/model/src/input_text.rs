//! Text read from the user's files (`seams.toml`, `seams.lock`, model
//! files), and how values from them appear in messages: a UTF-8 BOM is
//! accepted, invalid UTF-8 is named by line and column, and an echoed value
//! is cut to [`ECHO_LIMIT`] characters so that a huge value cannot flood
//! the terminal.

/// The most characters of a value from a file that a message repeats.
pub const ECHO_LIMIT: usize = 120;

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
pub fn strip_bom(bytes: &[u8]) -> &[u8] {
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
