//! What a query may look like before it reaches the SPARQL engine, whose
//! parser, optimiser and evaluator recurse over the query's structure: a
//! deep enough query would overflow the host's stack, which aborts the
//! process. Bounding the text's length, its bracket nesting and its
//! operators (a chain of `+` nests as deep as brackets do) bounds that
//! recursion.

/// The longest query accepted, in bytes.
pub(crate) const MAX_QUERY_BYTES: usize = 16 << 10;

/// The deepest nesting of `{`, `(` and `[` accepted.
pub(crate) const MAX_NESTING: usize = 64;

/// The most arithmetic and path operators (`+ - * / | ^`) accepted.
pub(crate) const MAX_OPERATORS: usize = 512;

/// Why a query's shape is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// Longer than [`MAX_QUERY_BYTES`].
    TooLong(usize),
    /// Nested deeper than [`MAX_NESTING`].
    TooDeep,
    /// More operators than [`MAX_OPERATORS`].
    TooManyOperators,
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refusal::TooLong(len) => write!(
                f,
                "the query is {len} bytes long, more than the {MAX_QUERY_BYTES} a query may have; split it"
            ),
            Refusal::TooDeep => write!(
                f,
                "the query nests brackets more than {MAX_NESTING} deep; flatten it"
            ),
            Refusal::TooManyOperators => write!(
                f,
                "the query has more than {MAX_OPERATORS} operators (+ - * / | ^); split it"
            ),
        }
    }
}

/// Checks a query's length, nesting and operators; what is inside string
/// literals, IRIs and comments does not count.
pub fn check(sparql: &str) -> Result<(), Refusal> {
    if sparql.len() > MAX_QUERY_BYTES {
        return Err(Refusal::TooLong(sparql.len()));
    }
    let bytes = sparql.as_bytes();
    let mut depth = 0usize;
    let mut operators = 0usize;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'{' | b'(' | b'[' => {
                depth += 1;
                if depth > MAX_NESTING {
                    return Err(Refusal::TooDeep);
                }
            }
            b'}' | b')' | b']' => depth = depth.saturating_sub(1),
            b'+' | b'-' | b'*' | b'/' | b'|' | b'^' => {
                operators += 1;
                if operators > MAX_OPERATORS {
                    return Err(Refusal::TooManyOperators);
                }
            }
            b'<' => {
                // An IRI runs to `>` with no space or bracket in between;
                // otherwise `<` is "less than".
                let iri = bytes[i + 1..]
                    .iter()
                    .position(|&b| b <= b' ' || b"<\"{}|^`\\".contains(&b) || b == b'>')
                    .filter(|&end| bytes[i + 1 + end] == b'>');
                if let Some(end) = iri {
                    i += end + 1;
                }
            }
            b'#' => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    i += 1;
                }
            }
            quote @ (b'"' | b'\'') => {
                let long = bytes[i..].starts_with(&[quote; 3]);
                i += if long { 3 } else { 1 };
                while i < bytes.len() {
                    if bytes[i] == b'\\' {
                        i += 2;
                        continue;
                    }
                    if bytes[i] == quote && (!long || bytes[i..].starts_with(&[quote; 3])) {
                        i += if long { 2 } else { 0 };
                        break;
                    }
                    i += 1;
                }
            }
            _ => {}
        }
        i += 1;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn length_and_nesting_are_bounded_outside_strings_and_comments() {
        let nested = |n: usize| {
            format!(
                "SELECT * WHERE {}?s ?p ?o{}",
                "{ ".repeat(n),
                " }".repeat(n)
            )
        };
        let cases: Vec<(String, Result<(), Refusal>)> = vec![
            ("SELECT * WHERE { ?s ?p ?o }".into(), Ok(())),
            (nested(MAX_NESTING), Ok(())),
            (nested(MAX_NESTING + 1), Err(Refusal::TooDeep)),
            (
                format!("ASK {{ FILTER(\"{}\" != \"\") }}", "{".repeat(500)),
                Ok(()),
            ),
            (
                format!("ASK {{ FILTER('{}' != '') }}", "(".repeat(500)),
                Ok(()),
            ),
            (
                format!(
                    "ASK {{ FILTER(\"\"\"{}\"\"\" != \"\") }}",
                    "[\"".repeat(200)
                ),
                Ok(()),
            ),
            (
                format!("ASK {{ FILTER(\"a\\\"{}\" != \"\") }}", "{".repeat(500)),
                Ok(()),
            ),
            (format!("# {}\nASK {{ }}", "{".repeat(500)), Ok(())),
            (
                format!("SELECT (0{} AS ?n) {{}}", " + 1".repeat(MAX_OPERATORS)),
                Ok(()),
            ),
            (
                format!("SELECT (0{} AS ?n) {{}}", " + 1".repeat(MAX_OPERATORS + 1)),
                Err(Refusal::TooManyOperators),
            ),
            (
                format!(
                    "ASK {{ {} }}",
                    "<http://a-b.example/x/y-z#(q)> ?p ?o . ".repeat(200)
                ),
                Ok(()),
            ),
            (
                format!("ASK {{ FILTER({}) }}", "1 < 2 && ".repeat(300) + "true"),
                Ok(()),
            ),
            (
                format!("ASK {{ FILTER(\"x\" != \"\") {} }}", "(".repeat(100)),
                Err(Refusal::TooDeep),
            ),
            (
                format!("ASK {{ }} #{}", "x".repeat(MAX_QUERY_BYTES)),
                Err(Refusal::TooLong(MAX_QUERY_BYTES + 9)),
            ),
        ];
        for (query, expected) in cases {
            assert_eq!(check(&query), expected, "{}", &query[..query.len().min(80)]);
        }
    }
}
