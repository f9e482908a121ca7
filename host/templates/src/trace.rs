//! The generation trace of ADR-0019: one `<output>.trace.json` sidecar per
//! output, naming for every non-blank line the template lines that wrote
//! it and the model IRIs behind it.

use serde::{Deserialize, Serialize};

/// The sidecar format's version.
pub const TRACE_VERSION: u32 = 1;

/// The suffix a sidecar adds to its output's name.
pub const SIDECAR_SUFFIX: &str = ".trace.json";

/// One traced line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TraceLine {
    /// 1-based line number; only non-blank lines are traced.
    pub line: usize,
    /// `<template>:<line>` origins, outermost include first; never empty.
    pub templates: Vec<String>,
    /// Full model IRIs behind the line, sorted and de-duplicated.
    pub terms: Vec<String>,
    /// The IRIs of the view object the line was printed in (the innermost
    /// loop or macro object, else the include's), which a golden may cite
    /// too (ADR-0019 T04). Only the tracing render knows them; the sidecar
    /// does not keep them.
    #[serde(skip)]
    pub scope: Vec<String>,
}

/// A whole sidecar. Its fields are declared in sorted order, so the JSON
/// has sorted keys.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Trace {
    /// The generator's name.
    pub generator: String,
    /// One entry per non-blank line, in order.
    pub lines: Vec<TraceLine>,
    /// The output's posix path relative to the output directory.
    pub output: String,
    /// [`TRACE_VERSION`].
    pub trace_version: u32,
}

impl Trace {
    /// The sidecar's exact text: two-space indent, final newline.
    pub fn to_json(&self) -> String {
        let mut text = sidecar_head(&self.generator, &self.lines);
        text.push_str(&sidecar_tail(&self.output));
        text
    }
}

/// The start of a sidecar's text, up to its lines: what a render's trace
/// gives before the output's path is known. [`sidecar_tail`] completes it.
pub fn sidecar_head(generator: &str, lines: &[TraceLine]) -> String {
    let mut head = HeadWriter::new(generator, lines.len());
    for line in lines {
        head.line(
            line.line,
            line.templates.iter().map(String::as_str),
            line.terms.iter().map(String::as_str),
        );
    }
    head.finish()
}

/// Writes a sidecar's start line by line, from borrowed strings: a traced
/// render's lines need not be built as [`TraceLine`]s to be written.
///
/// Written by hand in ADR-0019's layout: objects two-space indented, a
/// line's lists of strings on its own line (`["a.html:1", "b.html:2"]`),
/// as the ADR's example shows. That is a fifth smaller than serde_json's
/// pretty layout, which puts each string on a line of its own, and a
/// traced run writes about three times its outputs' bytes in sidecars.
pub(crate) struct HeadWriter {
    out: String,
    lines: usize,
}

impl HeadWriter {
    /// A sidecar of `generator`, of about `lines` lines.
    pub(crate) fn new(generator: &str, lines: usize) -> HeadWriter {
        let mut out = String::with_capacity(40 + lines * 160);
        out.push_str("{\n  \"generator\": ");
        json_string(&mut out, generator);
        out.push_str(",\n  \"lines\": [");
        HeadWriter { out, lines: 0 }
    }

    /// Adds line `number`, with its origins and its sorted terms.
    pub(crate) fn line<'a>(
        &mut self,
        number: usize,
        templates: impl IntoIterator<Item = &'a str>,
        terms: impl IntoIterator<Item = &'a str>,
    ) {
        let out = &mut self.out;
        if self.lines > 0 {
            out.push(',');
        }
        self.lines += 1;
        out.push_str("\n    {\n      \"line\": ");
        out.push_str(itoa::Buffer::new().format(number));
        out.push_str(",\n      \"templates\": ");
        json_strings(out, templates);
        out.push_str(",\n      \"terms\": ");
        json_strings(out, terms);
        out.push_str("\n    }");
    }

    /// The text, up to and including the lines' closing bracket.
    pub(crate) fn finish(mut self) -> String {
        if self.lines > 0 {
            self.out.push_str("\n  ");
        }
        self.out.push(']');
        self.out
    }
}

/// A list of strings as a line's field, on one line.
fn json_strings<'a>(out: &mut String, items: impl IntoIterator<Item = &'a str>) {
    out.push('[');
    for (i, item) in items.into_iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        json_string(out, item);
    }
    out.push(']');
}

/// A JSON string, escaped as serde_json escapes it.
fn json_string(out: &mut String, text: &str) {
    // serde_json escapes only quotes, backslashes and control characters;
    // IRIs and template names almost never hold one, and are copied. The
    // test is a fold over every byte, without an early exit, so that it
    // runs many bytes at a time.
    let escaped = text.as_bytes().iter().fold(false, |any, &b| {
        any | (b < 0x20) | (b == b'"') | (b == b'\\')
    });
    if escaped {
        out.push_str(&serde_json::to_string(text).expect("a string serializes"));
    } else {
        out.push('"');
        out.push_str(text);
        out.push('"');
    }
}

/// The end of a sidecar's text, after [`sidecar_head`]: the output's path
/// and the format version, with the final newline.
pub fn sidecar_tail(output: &str) -> String {
    let output = serde_json::to_string(output).expect("a string serializes");
    format!(",\n  \"output\": {output},\n  \"trace_version\": {TRACE_VERSION}\n}}\n")
}

/// The sorted union of the lines' terms: a traced output's lock sources.
pub fn sources_of(lines: &[TraceLine]) -> Vec<String> {
    let set: std::collections::BTreeSet<&String> = lines.iter().flat_map(|l| &l.terms).collect();
    set.into_iter().cloned().collect()
}

/// The sidecar path of an output path.
pub fn sidecar_path(output: &str) -> String {
    format!("{output}{SIDECAR_SUFFIX}")
}

/// Checks a trace a generator returned for a plain-text file: one entry per
/// non-blank line, in order, each with origins; terms are sorted here.
///
/// # Errors
///
/// What is wrong, naming the line.
pub fn check_lines(text: &str, lines: &mut [TraceLine]) -> Result<(), String> {
    let non_blank: Vec<usize> = text
        .split('\n')
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, _)| i + 1)
        .collect();
    let total = text.split('\n').count();
    for (i, entry) in lines.iter_mut().enumerate() {
        if entry.line == 0 || entry.line > total {
            return Err(format!(
                "traces line {}, but the file has {} lines",
                entry.line,
                total.saturating_sub(usize::from(text.ends_with('\n')))
            ));
        }
        if non_blank.get(i) != Some(&entry.line) {
            return Err(match non_blank.binary_search(&entry.line) {
                Err(_) => format!("traces line {}, which is blank", entry.line),
                Ok(_) => format!(
                    "entry {} is line {}, but line {} is the next non-blank line",
                    i + 1,
                    entry.line,
                    non_blank.get(i).copied().unwrap_or(0)
                ),
            });
        }
        if entry.templates.is_empty() || entry.templates.iter().any(|t| t.trim().is_empty()) {
            return Err(format!("line {} has no template origin", entry.line));
        }
        entry.terms.sort();
        entry.terms.dedup();
    }
    if lines.len() < non_blank.len() {
        return Err(format!(
            "line {} is not traced; trace every non-blank line",
            non_blank[lines.len()]
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sidecar_is_laid_out_as_adr_0019_shows_it() {
        let trace = Trace {
            generator: "htmx".into(),
            lines: vec![
                TraceLine {
                    line: 1,
                    templates: vec!["page.html:1".into(), "part.html:2".into()],
                    terms: vec!["https://example.org/chat#a".into()],
                    scope: Vec::new(),
                },
                TraceLine {
                    line: 3,
                    templates: vec!["page.html:3".into()],
                    terms: Vec::new(),
                    scope: Vec::new(),
                },
            ],
            output: "chat.html".into(),
            trace_version: TRACE_VERSION,
        };
        let expected = r#"{
  "generator": "htmx",
  "lines": [
    {
      "line": 1,
      "templates": ["page.html:1", "part.html:2"],
      "terms": ["https://example.org/chat#a"]
    },
    {
      "line": 3,
      "templates": ["page.html:3"],
      "terms": []
    }
  ],
  "output": "chat.html",
  "trace_version": 1
}
"#;
        assert_eq!(trace.to_json(), expected);
    }

    #[test]
    fn head_and_tail_make_a_sidecar_that_reads_back_as_its_trace_with_any_characters() {
        let line = |n, terms: &[&str]| TraceLine {
            line: n,
            templates: vec![format!("page.html:{n}")],
            terms: terms.iter().map(|t| t.to_string()).collect(),
            scope: Vec::new(),
        };
        for (generator, lines, output) in [
            ("htmx", vec![], "a.html"),
            ("g", vec![line(1, &[])], "dir/b \"quoted\".txt"),
            (
                "g",
                vec![line(1, &["urn:a"]), line(3, &["urn:b", "urn:c"])],
                "\u{e9}\n.txt",
            ),
            (
                "a \"quoted\" \\ generator\u{1}\t\u{1f}/",
                vec![
                    line(12, &["urn:x?q=\"1\"&b=\\", "urn:\u{7f}\u{2028}\u{1f600}"]),
                    TraceLine {
                        templates: vec![],
                        ..line(100, &[])
                    },
                ],
                "x.txt",
            ),
        ] {
            let trace = Trace {
                generator: generator.into(),
                lines,
                output: output.into(),
                trace_version: TRACE_VERSION,
            };
            let text = trace.to_json();
            let read: Trace = serde_json::from_str(&text).unwrap();
            assert_eq!(read, trace, "{text}");
            // The same layout as serde's pretty printer, but for the lists
            // of strings, each on one line.
            let value: serde_json::Value = serde_json::from_str(&text).unwrap();
            let mut pretty = serde_json::to_string_pretty(&value).unwrap();
            pretty.push('\n');
            assert_eq!(text, collapse_lists(&pretty));
            assert!(text.ends_with("}\n") && !text.contains('\t'));
        }
    }

    /// serde_json's pretty text with every non-empty list of strings
    /// joined onto the line that opens it.
    fn collapse_lists(pretty: &str) -> String {
        let mut out = String::new();
        let mut list: Option<Vec<&str>> = None;
        for line in pretty.split_inclusive('\n') {
            let trimmed = line.trim();
            match &mut list {
                None if line.ends_with("[\n") && !line.contains("\"lines\"") => {
                    out.push_str(line.trim_end_matches('\n'));
                    list = Some(Vec::new());
                }
                None => out.push_str(line),
                Some(items) if trimmed.starts_with(']') => {
                    out.push_str(&items.join(", "));
                    out.push_str(trimmed);
                    out.push('\n');
                    list = None;
                }
                Some(items) => items.push(trimmed.trim_end_matches(',')),
            }
        }
        out
    }

    #[test]
    fn generator_traces_are_checked() {
        let line = |n, t: &[&str]| TraceLine {
            line: n,
            templates: t.iter().map(|s| s.to_string()).collect(),
            terms: vec!["b".into(), "a".into(), "a".into()],
            scope: Vec::new(),
        };
        let text = "one\n\nthree\n";
        let mut ok = vec![line(1, &["t:1"]), line(3, &["t:2"])];
        assert_eq!(check_lines(text, &mut ok), Ok(()));
        assert_eq!(ok[0].terms, ["a", "b"]);
        assert!(
            check_lines(text, &mut [line(1, &["t:1"]), line(9, &["t:2"])])
                .unwrap_err()
                .contains("line 9")
        );
        assert!(
            check_lines(text, &mut [line(1, &["t:1"]), line(2, &["t:2"])])
                .unwrap_err()
                .contains("blank")
        );
        assert!(
            check_lines(text, &mut [line(1, &[]), line(3, &["t:2"])])
                .unwrap_err()
                .contains("no template origin")
        );
        assert!(
            check_lines(text, &mut [line(1, &["t:1"])])
                .unwrap_err()
                .contains("line 3 is not traced")
        );
    }
}
