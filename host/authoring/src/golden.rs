//! Golden files: the expected output of a generator, every non-blank line
//! ending with a marker that says where it must come from:
//!
//! - `  [fixed]`: fixed text; the line must have a template origin.
//! - `  [graph: IRI, IRI]`: the line must be traced to these model elements
//!   (full IRIs, or prefixed names with the model's prefixes).
//!
//! A golden can also be kept as claims on a project's committed output
//! (`<output>.claims` in the goldens' directory): the expected text is the
//! output the project holds, so it is not kept twice, and the claims file
//! lists only the lines traced to the model, by number:
//!
//! ```text
//! # a comment
//! 6: chat:app, chat:thread_page
//! ```
//!
//! Every other non-blank line of the output is `[fixed]`.

mod suite;

use seams_model::Model;
use seams_templates::TraceLine;

pub(crate) use suite::PROBES;
pub(crate) use suite::test_built_in;
pub use suite::{
    SuiteError, SuiteReport, TestOutcome, golden_match, output_parses, test_generator,
};

/// The terms of a `[graph: ...]` marker or a claim: comma-separated, each
/// IRI with or without its angle brackets.
fn graph_terms(list: &str) -> Vec<String> {
    list.split(',')
        .map(|t| {
            t.trim()
                .trim_start_matches('<')
                .trim_end_matches('>')
                .to_owned()
        })
        .filter(|t| !t.is_empty())
        .collect()
}

/// What a golden line says about its output line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Marker {
    /// Fixed template text.
    Fixed,
    /// Traced to these terms (as written).
    Graph(Vec<String>),
}

/// A parsed golden file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Golden {
    /// The expected output, markers stripped.
    pub text: String,
    /// Per 1-based line number of a non-blank line, its marker.
    pub markers: Vec<(usize, Marker)>,
}

/// A golden file that cannot be read as one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}:{line}: {message}")]
pub struct GoldenError {
    /// The golden file.
    pub file: String,
    /// 1-based line.
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

impl Golden {
    /// Parses golden text; `file` names it in errors.
    ///
    /// # Errors
    ///
    /// A non-blank line without a marker, or a `[graph: ]` with no term.
    pub fn parse(file: &str, text: &str) -> Result<Golden, GoldenError> {
        let mut out = String::with_capacity(text.len());
        let mut markers = Vec::new();
        let lines: Vec<&str> = text.split('\n').collect();
        for (i, line) in lines.iter().enumerate() {
            let number = i + 1;
            if i > 0 {
                out.push('\n');
            }
            if line.trim().is_empty() {
                out.push_str(line);
                continue;
            }
            let error = |message: String| GoldenError {
                file: file.to_owned(),
                line: number,
                message,
            };
            let (content, marker) = if let Some(content) = line.strip_suffix("  [fixed]") {
                (content, Marker::Fixed)
            } else if let Some(at) = line.rfind("  [graph:") {
                let body = line[at + "  [graph:".len()..]
                    .strip_suffix(']')
                    .ok_or_else(|| {
                        error("a [graph: ...] marker must end the line with ']'".into())
                    })?;
                let terms = graph_terms(body);
                if terms.is_empty() {
                    return Err(error("[graph: ] names no model element".into()));
                }
                (&line[..at], Marker::Graph(terms))
            } else {
                return Err(error(
                    "the line has no marker; end it with \"  [fixed]\" or \"  [graph: IRI, ...]\""
                        .into(),
                ));
            };
            out.push_str(content);
            markers.push((number, marker));
        }
        Ok(Golden { text: out, markers })
    }

    /// The golden that `claims` (a claims file, see the module) makes of
    /// `output`, the committed text it is about; `file` names the claims
    /// file in errors.
    ///
    /// # Errors
    ///
    /// A claims line that is not `N: term, ...`, names no term, or names
    /// a line the output does not have, holds blank, or was claimed on an
    /// earlier line.
    pub fn from_claims(file: &str, claims: &str, output: &str) -> Result<Golden, GoldenError> {
        let lines: Vec<&str> = output.split('\n').collect();
        let mut graph: Vec<(usize, Vec<String>)> = Vec::new();
        for (i, claim) in claims.lines().enumerate() {
            let claim = claim.trim();
            if claim.is_empty() || claim.starts_with('#') {
                continue;
            }
            let error = |message: String| GoldenError {
                file: file.to_owned(),
                line: i + 1,
                message,
            };
            let (number, terms) = claim
                .split_once(':')
                .and_then(|(n, terms)| Some((n.trim().parse::<usize>().ok()?, terms)))
                .ok_or_else(|| {
                    error("a claim is \"LINE: term, ...\", LINE the output's line number".into())
                })?;
            let terms = graph_terms(terms);
            if terms.is_empty() {
                return Err(error(format!(
                    "the claim on line {number} names no model element"
                )));
            }
            if lines
                .get(number.wrapping_sub(1))
                .is_none_or(|l| l.trim().is_empty())
            {
                return Err(error(format!(
                    "line {number} of the output is blank or past its end ({} lines); claim a line that holds text",
                    lines.len()
                )));
            }
            if graph.last().is_some_and(|&(last, _)| last >= number) {
                return Err(error(format!(
                    "line {number} comes after a claim on line {}; list each line once, in order",
                    graph.last().map_or(0, |g| g.0)
                )));
            }
            graph.push((number, terms));
        }
        let mut graph = graph.into_iter().peekable();
        let markers = lines
            .iter()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty())
            .map(|(i, _)| match graph.next_if(|(n, _)| *n == i + 1) {
                Some((n, terms)) => (n, Marker::Graph(terms)),
                None => (i + 1, Marker::Fixed),
            })
            .collect();
        Ok(Golden {
            text: output.to_owned(),
            markers,
        })
    }

    /// Writes a golden for `output` with every non-blank line `[fixed]`.
    pub fn all_fixed(output: &str) -> String {
        output
            .split('\n')
            .map(|l| {
                if l.trim().is_empty() {
                    l.to_owned()
                } else {
                    format!("{l}  [fixed]")
                }
            })
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// Compares a golden with an output and its trace: the texts must be
/// equal, every `[graph: ...]` term must be among its line's trace terms or
/// those of the view object it was printed in (its scope), every `[fixed]`
/// line must have a template origin.
///
/// Returns one message per failure, each naming the golden file and line.
pub fn compare(
    file: &str,
    golden: &Golden,
    output: &str,
    trace: Option<&[TraceLine]>,
    model: &Model,
) -> Vec<String> {
    let mut failures = Vec::new();
    if golden.text != output {
        failures.push(format!(
            "{file}: the output differs from the golden (markers removed):\n{}",
            diff(&golden.text, output)
        ));
        return failures;
    }
    let traced = |n: usize| trace.and_then(|t| t.iter().find(|l| l.line == n));
    for (line, marker) in &golden.markers {
        match marker {
            Marker::Fixed => {
                if traced(*line).is_none_or(|l| l.templates.is_empty()) {
                    failures.push(format!(
                        "{file}:{line}: [fixed] but the line has no template origin in the trace"
                    ));
                }
            }
            Marker::Graph(terms) => {
                let (have, scope) = traced(*line)
                    .map(|l| (l.terms.as_slice(), l.scope.as_slice()))
                    .unwrap_or_default();
                for term in terms {
                    let iri = model.expand(term);
                    if !have.contains(&iri) && !scope.contains(&iri) {
                        let mut message = format!(
                            "{file}:{line}: [graph: {term}] but the line is traced to {}",
                            if have.is_empty() {
                                "no model element".to_owned()
                            } else {
                                have.join(", ")
                            }
                        );
                        if !scope.is_empty() && scope != have {
                            message.push_str(&format!(" in {}", scope.join(", ")));
                        }
                        failures.push(message);
                    }
                }
            }
        }
    }
    failures
}

/// A short line diff: the first differing line of each, with its number.
pub fn diff(expected: &str, actual: &str) -> String {
    let e: Vec<&str> = expected.split('\n').collect();
    let a: Vec<&str> = actual.split('\n').collect();
    let at = e
        .iter()
        .zip(&a)
        .position(|(x, y)| x != y)
        .unwrap_or(e.len().min(a.len()));
    let show = |lines: &[&str], i: usize| {
        lines
            .get(i)
            .map_or("(end of file)".to_owned(), |l| format!("{l:?}"))
    };
    format!(
        "  line {}:\n  - expected {}\n  + actual   {}",
        at + 1,
        show(&e, at),
        show(&a, at)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model() -> Model {
        Model::parse("m.ttl", "@prefix ex: <urn:ex:> .\nex:a ex:p \"x\" .\n").unwrap()
    }

    fn line(n: usize, terms: &[&str]) -> TraceLine {
        TraceLine {
            line: n,
            templates: vec![format!("t:{n}")],
            terms: terms.iter().map(|t| t.to_string()).collect(),
            scope: Vec::new(),
        }
    }

    #[test]
    fn markers_are_stripped_and_checked_against_the_trace() {
        let golden =
            Golden::parse("g", "<h1>x</h1>  [graph: ex:a]\n\n<p>fixed</p>  [fixed]\n").unwrap();
        assert_eq!(golden.text, "<h1>x</h1>\n\n<p>fixed</p>\n");
        let output = "<h1>x</h1>\n\n<p>fixed</p>\n";
        let good = [line(1, &["urn:ex:a"]), line(3, &[])];
        assert!(compare("g", &golden, output, Some(&good), &model()).is_empty());
        let wrong_term = [line(1, &["urn:ex:b"]), line(3, &[])];
        let failures = compare("g", &golden, output, Some(&wrong_term), &model());
        assert_eq!(
            failures,
            ["g:1: [graph: ex:a] but the line is traced to urn:ex:b"]
        );
        let mut in_scope = [line(1, &["urn:ex:b"]), line(3, &[])];
        in_scope[0].scope = vec!["urn:ex:a".into()];
        assert!(compare("g", &golden, output, Some(&in_scope), &model()).is_empty());
        let untraced = compare("g", &golden, output, None, &model());
        assert_eq!(untraced.len(), 2, "{untraced:?}");
        let differs = compare("g", &golden, "<h1>y</h1>\n", Some(&good), &model());
        assert!(differs[0].contains("line 1:"), "{differs:?}");
    }

    #[test]
    fn claims_on_a_committed_output_make_the_golden_its_annotated_text_would() {
        let output = "<h1>x</h1>\n\n<p>fixed</p>\n<p>y</p>\n";
        let annotated = "<h1>x</h1>  [graph: ex:a]\n\n<p>fixed</p>  [fixed]\n<p>y</p>  [graph: <urn:ex:b>, ex:a]\n";
        let claims = "# claims\n1: ex:a\n\n4: <urn:ex:b>, ex:a\n";
        assert_eq!(
            Golden::from_claims("c", claims, output).unwrap(),
            Golden::parse("g", annotated).unwrap()
        );
        // Nothing claimed: every line fixed.
        assert_eq!(
            Golden::from_claims("c", "", output).unwrap(),
            Golden::parse("g", &Golden::all_fixed(output)).unwrap()
        );
        for (claims, line, says) in [
            ("1 ex:a", 1, "LINE: term"),
            ("x: ex:a", 1, "LINE: term"),
            ("# c\n1: ", 2, "names no model element"),
            ("2: ex:a", 1, "blank or past its end (5 lines)"),
            ("9: ex:a", 1, "blank or past its end"),
            ("0: ex:a", 1, "blank or past its end"),
            ("3: ex:a\n1: ex:a", 2, "comes after a claim on line 3"),
            ("1: ex:a\n1: ex:b", 2, "list each line once"),
        ] {
            let err = Golden::from_claims("c", claims, output).unwrap_err();
            assert_eq!((err.line, err.file.as_str()), (line, "c"), "{claims:?}");
            assert!(err.message.contains(says), "{claims:?}: {}", err.message);
        }
    }

    #[test]
    fn a_line_without_a_marker_is_refused_with_its_line() {
        let err = Golden::parse("g", "ok  [fixed]\nno marker\n").unwrap_err();
        assert_eq!(err.line, 2);
        assert_eq!(Golden::parse("g", "x  [graph: ]\n").unwrap_err().line, 1);
    }

    #[test]
    fn all_fixed_round_trips() {
        let text = "a\n\n  b\n";
        let golden = Golden::parse("g", &Golden::all_fixed(text)).unwrap();
        assert_eq!(golden.text, text);
        assert_eq!(golden.markers.len(), 2);
    }
}
