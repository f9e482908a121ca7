//! The template corpus (`tests/corpus/*.txt`): templates that exercise
//! what the tracing rewrite must respect (includes, macros, `extends` and
//! `block`, raw blocks, filters, whitespace control, both syntaxes). For
//! each, stripping the sentinels from the tracing render must give the
//! normal render byte for byte, and every non-blank line must be traced,
//! or tracing must refuse with the reason the case names.
//!
//! A case file: `key: value` header lines (`syntax: jinja|brackets`,
//! `context: JSON`, `expect: traced` or `expect: refused: TEXT`), then
//! templates, each after a `=== NAME` line; the first is rendered.

use std::path::PathBuf;

use crate::sentinel::{SENTINEL_CLOSE, SENTINEL_OPEN};
use crate::trace::sidecar_head;
use crate::{Syntax, TemplateService, sources_of};

struct Case {
    syntax: Syntax,
    context: serde_json::Value,
    expect: Result<(), String>,
    templates: Vec<(String, String)>,
}

fn parse(name: &str, text: &str) -> Case {
    let (header, body) = text
        .split_once("\n=== ")
        .unwrap_or_else(|| panic!("{name}: no `=== NAME` template"));
    let mut case = Case {
        syntax: Syntax::Jinja,
        context: serde_json::json!({}),
        expect: Ok(()),
        templates: Vec::new(),
    };
    for line in header
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
    {
        let (key, value) = line
            .split_once(": ")
            .unwrap_or_else(|| panic!("{name}: header line {line:?}"));
        match key {
            "syntax" => {
                case.syntax = match value {
                    "jinja" => Syntax::Jinja,
                    "brackets" => Syntax::Brackets,
                    other => panic!("{name}: syntax {other:?}"),
                }
            }
            "context" => case.context = serde_json::from_str(value).expect("context is JSON"),
            "expect" => {
                case.expect = match value.strip_prefix("refused: ") {
                    Some(reason) => Err(reason.to_owned()),
                    None if value == "traced" => Ok(()),
                    None => panic!("{name}: expect {value:?}"),
                }
            }
            other => panic!("{name}: unknown key {other:?}"),
        }
    }
    for template in format!("\n=== {body}").split("\n=== ").skip(1) {
        let (name, source) = template.split_once('\n').unwrap_or((template, ""));
        case.templates.push((name.to_owned(), source.to_owned()));
    }
    case
}

/// The traced text without its sentinels, each `OPEN ... CLOSE` run.
fn strip(traced: &str) -> String {
    let mut out = String::with_capacity(traced.len());
    let mut rest = traced;
    while let Some(at) = rest.find(SENTINEL_OPEN) {
        out.push_str(&rest[..at]);
        let after = &rest[at + SENTINEL_OPEN.len_utf8()..];
        let end = after
            .find(SENTINEL_CLOSE)
            .expect("every sentinel is closed");
        rest = &after[end + SENTINEL_CLOSE.len_utf8()..];
    }
    out.push_str(rest);
    out
}

#[test]
fn every_corpus_template_traces_to_its_normal_render_or_is_refused_with_its_reason() {
    // As cargo tells the running test: a binary built in another checkout
    // sharing the target directory reads this one.
    let manifest_dir = std::env::var_os("CARGO_MANIFEST_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| env!("CARGO_MANIFEST_DIR").into());
    let dir = manifest_dir.join("tests/corpus");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    assert!(files.len() >= 12, "the corpus has {} cases", files.len());
    let mut refused = 0;
    let mut made_once = 0;
    let mut cited = 0;
    // One numbering for every case, as a finishing thread has for every
    // render it traces: what it kept from one trace must not leak into
    // the next.
    let mut citations = crate::Citations::new();
    for file in &files {
        let name = file.file_name().unwrap().to_string_lossy().into_owned();
        let case = parse(&name, &std::fs::read_to_string(file).unwrap());
        let main = case.templates[0].0.clone();
        let service = TemplateService::new(case.templates, case.syntax)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let mut rendered = service
            .render(&main, case.context.clone())
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let traced = service.render_traced(&rendered);
        // Made once where the templates allow it: the same text and trace,
        // or the same refusal.
        let mut once = service
            .render_json_to_trace(&main, &case.context.to_string())
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        if service.renders_once().is_ok() {
            made_once += 1;
        }
        let traced_once = service.trace(&mut once);
        let trace = service.trace(&mut rendered);
        match (&trace, &traced_once) {
            (Ok(lines), Ok(lines_once)) => {
                assert_eq!(lines_once, lines, "{name}: the trace made once");
                assert_eq!(once.text, rendered.text, "{name}: the text made once");
            }
            (Err(e), Err(e_once)) => assert_eq!(e_once, e, "{name}"),
            _ => panic!("{name}: traced once {traced_once:?}, twice {trace:?}"),
        }
        // Written straight into a sidecar, made once or twice: the text
        // of the lines' sidecar, citing their sources, or the same refusal.
        let generator = "g \"quoted\"";
        for mut made in [
            service.render(&main, case.context.clone()).unwrap(),
            service
                .render_json_to_trace(&main, &case.context.to_string())
                .unwrap(),
        ] {
            match (
                &trace,
                service.trace_to_sidecar(&mut made, generator, &mut citations),
            ) {
                (Ok(lines), Ok(start)) => {
                    assert_eq!(start.head, sidecar_head(generator, lines), "{name}");
                    let sources: Vec<&str> = start.sources(&citations).collect();
                    assert_eq!(sources, sources_of(lines), "{name}");
                    cited += usize::from(!sources.is_empty());
                    assert_eq!(made.text, rendered.text, "{name}");
                }
                (Err(e), Err(e_sidecar)) => assert_eq!(&e_sidecar, e, "{name}"),
                (trace, start) => panic!("{name}: traced {trace:?}, to a sidecar {start:?}"),
            }
        }
        match (trace, &case.expect) {
            (Ok(lines), Ok(())) => {
                assert_eq!(
                    strip(&traced.unwrap()),
                    rendered.text,
                    "{name}: the stripped tracing render is not the normal render"
                );
                let non_blank: Vec<usize> = rendered
                    .text
                    .lines()
                    .enumerate()
                    .filter(|(_, l)| !l.trim().is_empty())
                    .map(|(i, _)| i + 1)
                    .collect();
                let traced_lines: Vec<usize> = lines.iter().map(|l| l.line).collect();
                assert_eq!(
                    traced_lines, non_blank,
                    "{name}: one trace line per non-blank line"
                );
                assert!(
                    lines.iter().all(|l| !l.templates.is_empty()),
                    "{name}: every line has a template origin"
                );
            }
            (Err(e), Err(reason)) => {
                assert!(
                    e.to_string().contains(reason.as_str()),
                    "{name}: refused with {e}, not {reason:?}"
                );
                refused += 1;
            }
            (Ok(_), Err(reason)) => panic!("{name}: traced, but should be refused: {reason}"),
            (Err(e), Ok(())) => panic!("{name}: refused: {e}"),
        }
    }
    assert!(refused >= 1, "the corpus shows a refusal too");
    assert!(made_once >= 8, "{made_once} cases are made in one render");
    assert!(cited >= 10, "{cited} sidecars cite model terms");
}
