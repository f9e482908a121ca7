//! Traces end to end: sidecars beside outputs, exactly in ADR-0019's
//! format; generator traces of plain text checked; a tracing render that
//! cannot be trusted stops the generator with nothing written.

use seams_tests::{HOSTILE_WASM, TempProject, seams};

const ITEMS: &str = "@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .\n<urn:item:a> rdfs:label \"Apple\" .\n<urn:item:b> rdfs:label \"Banana\" .\n";

fn project(behaviour: &str) -> TempProject {
    let p = TempProject::new(
        &format!("{ITEMS}<urn:seams:test#hostile> <urn:seams:test#behaviour> \"{behaviour}\" .\n"),
        "[[generator]]\nwasm = \"hostile.wasm\"\n",
    );
    p.add_file("hostile.wasm", HOSTILE_WASM);
    p
}

fn generate(p: &TempProject) -> seams_tests::Outcome {
    seams(&["generate", "--project", p.path().to_str().unwrap()])
}

fn read(p: &TempProject, rel: &str) -> String {
    std::fs::read_to_string(p.path().join(rel)).unwrap()
}

/// `generate -v` names the template line that has each traced render of
/// a generator made twice (hostile's `mismatch.txt` has a filter block):
/// a plugin author's hint that tracing costs them more than it need. The
/// built-ins render once, and say nothing (see `cli.rs`).
#[test]
fn verbose_generate_names_the_template_line_that_has_each_render_made_twice() {
    let p = project("views");
    let run = seams(&["generate", "-v", "--project", p.path().to_str().unwrap()]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stderr.contains(
            "hostile: each traced render is made twice, plain and instrumented, because of mismatch.txt:2 (a filter block)\n"
        ),
        "{run:?}"
    );
    // Untraced, nothing is rendered twice: nothing is said.
    let options = seams_core::GenerateOptions::default();
    for (tracing, said) in [(true, 1), (false, 0)] {
        let p = project("views");
        let project = seams_core::Project::load(p.path()).unwrap();
        let runtime = seams_runtime::Runtime::new(None).unwrap();
        let runtime = if tracing {
            runtime
        } else {
            seams_runtime::testing::without_tracing(runtime)
        };
        let report = seams_core::generate(&project, &runtime, &options).unwrap();
        assert_eq!(report.renders_twice.len(), said, "tracing {tracing}");
    }
}

#[test]
fn a_sidecar_matches_a_hand_written_expected_file() {
    let p = project("views");
    let run = generate(&p);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(
        read(&p, "out/items.txt"),
        "Items of the list:\n- Apple\n- Banana\nend\n"
    );
    let expected = r#"{
  "generator": "hostile",
  "lines": [
    {
      "line": 1,
      "templates": ["items.txt:1"],
      "terms": ["urn:seams:test#hostile"]
    },
    {
      "line": 2,
      "templates": ["items.txt:3"],
      "terms": ["urn:item:a"]
    },
    {
      "line": 3,
      "templates": ["items.txt:3"],
      "terms": ["urn:item:b"]
    },
    {
      "line": 4,
      "templates": ["items.txt:5"],
      "terms": ["urn:seams:test#hostile"]
    }
  ],
  "output": "items.txt",
  "trace_version": 1
}
"#;
    assert_eq!(read(&p, "out/items.txt.trace.json"), expected);

    // The sidecar is locked like an output, with the traced file's sources:
    // the union of its terms.
    let lock: serde_json::Value = serde_json::from_str(&read(&p, "seams.lock")).unwrap();
    let entry = |path: &str| {
        lock["outputs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|o| o["path"] == path)
            .unwrap_or_else(|| panic!("{path} is not locked"))
            .clone()
    };
    let output = entry("out/items.txt");
    let sidecar = entry("out/items.txt.trace.json");
    // Three consecutive indexes of the lock's table, written as a range.
    assert_eq!(output["sources"], "0-2");
    let iris: Vec<&str> = (0..=2)
        .map(|i| lock["sources"][i].as_str().unwrap())
        .collect();
    assert_eq!(iris, ["urn:item:a", "urn:item:b", "urn:seams:test#hostile"]);
    assert_eq!(sidecar["sources"], output["sources"]);
    assert_eq!(sidecar["generator"], "hostile");
    assert_eq!(sidecar["generator_version"], output["generator_version"]);
    assert_eq!(
        sidecar["sha256"].as_str().unwrap(),
        seams_sha256(read(&p, "out/items.txt.trace.json").as_bytes())
    );
}

fn seams_sha256(bytes: &[u8]) -> String {
    // The lock's sha256 of a file, recomputed independently of seams.
    let out = std::process::Command::new("sha256sum")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut child| {
            use std::io::Write;
            child.stdin.take().unwrap().write_all(bytes)?;
            child.wait_with_output()
        })
        .unwrap();
    String::from_utf8(out.stdout)
        .unwrap()
        .split_whitespace()
        .next()
        .unwrap()
        .to_owned()
}

#[test]
fn a_generator_trace_of_plain_text_becomes_its_sidecar_and_sources() {
    let p = project("text-traced");
    let run = generate(&p);
    assert_eq!(run.code, 0, "{run:?}");
    let trace: serde_json::Value =
        serde_json::from_str(&read(&p, "out/text.txt.trace.json")).unwrap();
    assert_eq!(trace["lines"][1]["line"], 3);
    assert_eq!(
        trace["lines"][1]["terms"],
        serde_json::json!(["urn:item:a", "urn:item:b"]),
        "terms are sorted"
    );
    assert!(read(&p, "seams.lock").contains("\"urn:item:a\""));
}

#[test]
fn a_plain_text_file_without_a_trace_gets_no_sidecar() {
    let p = project("path:plain.txt");
    let run = generate(&p);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(p.path().join("out/plain.txt").is_file());
    assert!(!p.path().join("out/plain.txt.trace.json").exists());
}

/// The generator fails with an error that says each of `expected`, and
/// nothing is written: no output, no sidecar, no lock entry.
fn assert_refused(behaviour: &str, expected: &[&str]) {
    let p = project(behaviour);
    let run = generate(&p);
    assert_eq!(run.code, 1, "{behaviour}: {run:?}");
    for fragment in expected {
        assert!(
            run.stderr.contains(fragment),
            "{behaviour}: {:?} should say {fragment:?}",
            run.stderr
        );
    }
    assert!(
        run.stderr.contains("generator hostile.wasm:"),
        "{}",
        run.stderr
    );
    let files: Vec<String> = p
        .files()
        .into_iter()
        .map(|(f, _)| f)
        .filter(|f| f.starts_with("out/"))
        .collect();
    assert!(
        files.is_empty(),
        "{behaviour}: nothing is written, got {files:?}"
    );
    assert!(
        !p.path().join("seams.lock").exists(),
        "{behaviour}: no lock is written"
    );
}

#[test]
fn a_lying_trace_is_refused() {
    assert_refused(
        "lie-name",
        &["trace names \"nowhere.txt\", which render did not return"],
    );
    assert_refused("lie-line", &["trace of \"text.txt\" is refused", "line 7"]);
    assert_refused(
        "lie-blank",
        &["trace of \"text.txt\" is refused", "line 2, which is blank"],
    );
    assert_refused(
        "lie-origins",
        &[
            "trace of \"text.txt\" is refused",
            "line 3 has no template origin",
        ],
    );
    assert_refused(
        "lie-rendered",
        &["trace names \"hello.txt\", whose body the host rendered"],
    );
    assert_refused(
        "lie-term",
        &[
            "the trace of \"text.txt\" line 3 names \"urn:not:in-the-model\"",
            "which the model does not mention",
        ],
    );
    assert_refused(
        "lie-origin",
        &[
            "the trace of \"text.txt\" line 3 names the origin \"hello.txt:99\"",
            "not a line of one of its templates",
        ],
    );
}

#[test]
fn a_sentinel_collision_names_the_template_and_line_and_writes_nothing() {
    assert_refused(
        "collision",
        &["template hello.txt", "output line 1", "sentinel"],
    );
}

#[test]
fn a_strip_mismatch_names_the_template_and_line_and_writes_nothing() {
    assert_refused(
        "mismatch",
        &[
            "template mismatch.txt",
            "output line 2",
            "near mismatch.txt:1",
        ],
    );
}

#[test]
fn a_render_that_cannot_be_traced_is_reported_whatever_the_generator_does_after_it() {
    // Renders are traced on a thread of their own while the generator
    // goes on; the run still fails on the first render that failed.
    for behaviour in [
        "mismatch-then-error",
        "mismatch-dropped",
        "mismatch-then-read",
    ] {
        assert_refused(
            behaviour,
            &[
                "template mismatch.txt",
                "output line 2",
                "near mismatch.txt:1",
            ],
        );
    }
}

/// A generated copy of the chat example.
fn chat() -> TempProject {
    let p = seams_tests::chat_project();
    assert_eq!(generate(&p).code, 0);
    p
}

#[test]
fn seams_trace_shows_a_line_its_template_origins_and_labelled_terms() {
    let p = chat();
    let dir = p.path().to_str().unwrap();
    let run = seams(&["trace", "out/thread.html:37", "--project", dir]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(
        run.stdout,
        concat!(
            "out/thread.html:37:       <label for=\"new_message_form-author\">Your name</label>\n",
            "  template layout.html:27: {% include \"page.html\" %}\n",
            "  template page.html:6: {% include \"form.html\" %}\n",
            "  template form.html:8:       <label for=\"{{ component.slug }}-{{ field.name }}\">{{ field.label }}</label>\n",
            "  term https://example.org/chat#author \"Author\"\n",
            "  term https://example.org/chat#author_field \"Your name\"\n",
            "  term https://example.org/chat#new_message_form \"New message\"\n",
        )
    );
    // The output may also be named relative to the output directory.
    assert_eq!(
        seams(&["trace", "thread.html:37", "--project", dir]).stdout,
        run.stdout
    );
}

#[test]
fn seams_trace_json_covers_every_line() {
    let p = chat();
    let run = seams(&[
        "trace",
        "out/conversations.html",
        "--json",
        "--project",
        p.path().to_str().unwrap(),
    ]);
    assert_eq!(run.code, 0, "{run:?}");
    let view: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(view["generator"], "htmx");
    let text = std::fs::read_to_string(p.path().join("out/conversations.html")).unwrap();
    let non_blank = text.lines().filter(|l| !l.trim().is_empty()).count();
    let lines = view["lines"].as_array().unwrap();
    assert_eq!(lines.len(), non_blank);
    for line in lines {
        let n = line["line"].as_u64().unwrap() as usize;
        assert_eq!(line["text"], text.lines().nth(n - 1).unwrap());
        assert!(
            line["templates"]
                .as_array()
                .unwrap()
                .iter()
                .all(|t| t["source"].is_string())
        );
    }
}

#[test]
fn seams_trace_refuses_what_it_cannot_show() {
    let p = chat();
    let dir = p.path().to_str().unwrap();
    let missing = seams(&["trace", "out/nope.html", "--project", dir]);
    assert_eq!(missing.code, 1);
    assert!(
        missing
            .stderr
            .contains("no such output: out/nope.html does not exist"),
        "{}",
        missing.stderr
    );
    let past = seams(&["trace", "out/thread.html:999", "--project", dir]);
    assert_eq!(past.code, 1);
    assert!(
        past.stderr
            .contains("out/thread.html:999 is not traced: the file has no such line"),
        "{}",
        past.stderr
    );
    assert_eq!(
        seams(&["trace", "--project", dir]).code,
        2,
        "OUTPUT is required"
    );
}
