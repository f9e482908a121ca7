//! The command line's conventions (`-q`, `-v`, `--color`, `--format`,
//! completions, exit statuses, progress only on a terminal) and the
//! messages a newcomer meets first.

use std::path::Path;
use std::process::Command;

use seams_tests::{TempProject, chat_project, seams, seams_in};

fn run(p: &TempProject, args: &[&str]) -> seams_tests::Outcome {
    seams_in(p.path(), args)
}

/// A generated copy of the chat example.
fn chat() -> TempProject {
    let p = chat_project();
    let generate = run(&p, &["generate"]);
    assert_eq!(generate.code, 0, "{generate:?}");
    p
}

/// Makes the next generate run the generators again without changing any
/// output: a comment added to seams.toml.
fn touch_manifest(p: &TempProject) {
    let path = p.path().join("seams.toml");
    let mut text = std::fs::read_to_string(&path).unwrap();
    text.push_str("# touched\n");
    std::fs::write(path, text).unwrap();
}

fn json(text: &str) -> serde_json::Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
}

#[test]
fn quiet_prints_nothing_but_results_and_errors() {
    let p = chat_project();
    let quiet = run(&p, &["-q", "generate"]);
    assert_eq!(quiet.code, 0, "{quiet:?}");
    assert_eq!((quiet.stdout.as_str(), quiet.stderr.as_str()), ("", ""));
    assert!(p.path().join("out/thread.html").is_file());
    // A clean check says nothing with -q, a dirty one still lists problems.
    assert_eq!(run(&p, &["check", "-q"]).stdout, "");
    std::fs::remove_file(p.path().join("out/thread.html")).unwrap();
    let check = run(&p, &["check", "-q"]);
    assert_eq!(check.code, 1);
    assert!(
        check.stdout.contains("missing: out/thread.html"),
        "{check:?}"
    );
}

#[test]
fn verbose_lists_unchanged_files_and_the_time_taken() {
    let p = chat();
    touch_manifest(&p);
    let plain = run(&p, &["generate"]);
    assert!(!plain.stdout.contains("unchanged out/"), "{plain:?}");
    touch_manifest(&p);
    let verbose = run(&p, &["generate", "-v"]);
    assert_eq!(verbose.code, 0, "{verbose:?}");
    assert!(
        verbose.stdout.contains("unchanged out/thread.html\n"),
        "{verbose:?}"
    );
    // What each generator spent of its fuel, to size `[sandbox] fuel`.
    let lines: Vec<&str> = verbose.stderr.lines().collect();
    let (took, spent) = lines.split_last().unwrap();
    assert!(took.starts_with("took "), "{verbose:?}");
    let names: Vec<&str> = spent.iter().map(|l| l.split(':').next().unwrap()).collect();
    assert_eq!(names, ["htmx", "fastapi", "compose"], "{verbose:?}");
    for line in spent {
        let fuel: u64 = line
            .split_whitespace()
            .nth(2)
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("{line}"));
        // Hundreds of thousands at least: compose, the smallest, spent
        // 718,086 once the SDK read query answers without a JSON tree.
        assert!(fuel > 100_000 && fuel < 150_000_000_000, "{line}");
        assert!(
            line.ends_with(" fuel of 150000000000 ([sandbox] fuel)"),
            "{line}"
        );
    }
    assert_eq!(run(&p, &["generate", "-q", "-v"]).code, 2);
}

#[test]
fn color_only_when_asked_or_on_a_terminal() {
    let p = chat_project();
    let plain = run(&p, &["generate"]);
    assert!(!plain.stdout.contains('\u{1b}'), "{plain:?}");
    touch_manifest(&p);
    let colored = run(&p, &["generate", "--color", "always"]);
    assert!(
        colored.stdout.contains("\u{1b}[32m0 written, 20 unchanged"),
        "{colored:?}"
    );
    let failed = seams(&["check", "--color=always", "--project", "/nonexistent/seams"]);
    assert!(
        failed.stderr.starts_with("\u{1b}[1m\u{1b}[31mseams check:"),
        "{failed:?}"
    );
    touch_manifest(&p);
    let never = run(&p, &["generate", "--color", "never"]);
    assert!(!never.stdout.contains('\u{1b}'), "{never:?}");
    // check too, into a pipe when asked: each problem's kind in red, a
    // clean project in green.
    let clean = run(&p, &["check", "--color", "always"]);
    assert!(
        clean
            .stdout
            .starts_with("\u{1b}[32mclean\u{1b}[0m: every output"),
        "{clean:?}"
    );
    std::fs::write(p.path().join("out/app.js"), "// edited\n").unwrap();
    let problems = run(&p, &["check", "--color", "always"]);
    assert_eq!(problems.code, 1, "{problems:?}");
    assert!(
        problems
            .stdout
            .contains("\u{1b}[1m\u{1b}[31mhand-edited\u{1b}[0m: out/app.js"),
        "{problems:?}"
    );
    let plain = run(&p, &["check"]);
    assert!(!plain.stdout.contains('\u{1b}'), "{plain:?}");
}

#[test]
fn init_quiet_prints_nothing_and_completions_survive_a_closed_pipe() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("new");
    let quiet = seams(&["init", target.to_str().unwrap(), "-q"]);
    assert_eq!(quiet.code, 0, "{quiet:?}");
    assert_eq!((quiet.stdout.as_str(), quiet.stderr.as_str()), ("", ""));
    assert!(target.join("seams.lock").is_file());

    // `seams completions bash | head -1`: the reader is gone before seams
    // writes; that is no bug of seams's.
    let mut child = Command::new(env!("CARGO_BIN_EXE_seams"))
        .args(["completions", "bash"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!stderr.contains("internal error"), "{stderr}");
    assert_eq!(output.status.code(), Some(0), "{stderr}");
}

#[test]
fn every_machine_output_has_one_format_flag() {
    let p = chat_project();
    let generate = run(&p, &["generate", "--format", "json"]);
    assert_eq!(generate.code, 0, "{generate:?}");
    let report = json(&generate.stdout);
    assert_eq!(report["written"].as_array().unwrap().len(), 20, "{report}");
    assert_eq!(report["lock_written"], true);
    assert_eq!(report["up_to_date"], false);
    let again = json(&run(&p, &["generate", "--format", "json"]).stdout);
    assert_eq!(again["up_to_date"], true);

    assert_eq!(
        json(&run(&p, &["check", "--format", "json"]).stdout)["clean"],
        true
    );

    let trace = run(&p, &["trace", "out/thread.html:1", "--format", "json"]);
    assert_eq!(trace.code, 0, "{trace:?}");
    assert_eq!(json(&trace.stdout)["output"], "out/thread.html");
    // The old spelling stays, hidden, for one release.
    assert_eq!(
        run(&p, &["trace", "out/thread.html:1", "--json"]).stdout,
        trace.stdout
    );
    assert!(!seams(&["trace", "--help"]).stdout.contains("--json"));

    let view = run(&p, &["view", "htmx", "--format", "json"]);
    assert_eq!(view.code, 0, "{view:?}");
    assert!(json(&view.stdout).is_object());

    let inspect = seams(&["inspect", seams_tests::HOSTILE_WASM, "--format", "json"]);
    assert_eq!(inspect.code, 0, "{inspect:?}");
    let inspection = json(&inspect.stdout);
    assert_eq!(inspection["protocol"], "seams:generator@0.2.0");
    assert_eq!(inspection["vocabularies"], serde_json::json!([]));
    assert_eq!(inspection["sha256"].as_str().unwrap().len(), 64);

    let reference = p.path().join("title.html");
    std::fs::write(&reference, "<h1>Chat</h1>\n").unwrap();
    let package = p.path().join("pkg");
    let new = seams(&[
        "new-generator",
        "title",
        "--reference",
        reference.to_str().unwrap(),
        "--out",
        package.to_str().unwrap(),
        "--format",
        "json",
    ]);
    assert_eq!(new.code, 0, "{new:?}");
    assert!(json(&new.stdout)["written"].as_array().unwrap().len() > 3);
}

#[test]
fn json_output_is_a_document_even_on_error() {
    let run = seams(&[
        "check",
        "--format",
        "json",
        "--project",
        "/nonexistent/seams",
    ]);
    assert_eq!(run.code, 1);
    let document = json(&run.stdout);
    assert_eq!(document["exit_code"], 1);
    assert!(
        document["error"]
            .as_str()
            .unwrap()
            .contains("/nonexistent/seams does not exist"),
        "{document}"
    );
}

#[test]
fn completions_are_printed_for_each_shell() {
    for (shell, marker) in [
        ("bash", "_seams()"),
        ("zsh", "#compdef seams"),
        ("fish", "complete -c seams"),
    ] {
        let run = seams(&["completions", shell]);
        assert_eq!(run.code, 0, "{shell}: {run:?}");
        assert!(run.stdout.contains(marker), "{shell}: {}", run.stdout);
        assert!(run.stdout.contains("generate"), "{shell}");
    }
    assert_eq!(seams(&["completions", "cmd.exe"]).code, 2);
}

/// The binary ends without the exit handlers (`seams::cli::exit`): what it
/// printed still arrives whole, through a pipe, with its status.
#[test]
fn the_binary_flushes_what_it_prints_before_it_ends() {
    let binary = env!("CARGO_BIN_EXE_seams");
    let p = chat();
    let cases: [&[&str]; 3] = [
        &["completions", "bash"],
        &["view", "htmx", "--project", &p.path().display().to_string()],
        &["generate", "--no-such-flag"],
    ];
    for args in cases {
        let piped = Command::new(binary).args(args).output().unwrap();
        let in_process = seams(args);
        assert_eq!(
            piped.status.code(),
            Some(i32::from(in_process.code)),
            "{args:?}"
        );
        assert_eq!(
            String::from_utf8_lossy(&piped.stdout),
            in_process.stdout,
            "{args:?}"
        );
        assert_eq!(
            String::from_utf8_lossy(&piped.stderr),
            in_process.stderr,
            "{args:?}"
        );
    }
}

/// A FIFO put where seams keeps its lock or its journal is refused at
/// once, named, not waited on for a writer that never comes.
#[test]
fn a_fifo_in_place_of_a_record_is_refused_not_waited_on() {
    let binary = env!("CARGO_BIN_EXE_seams");
    for name in ["seams.lock", "seams.journal"] {
        let p = chat();
        let record = p.path().join(name);
        let _ = std::fs::remove_file(&record);
        let made = Command::new("mkfifo").arg(&record).status().unwrap();
        assert!(made.success());
        for command in ["generate", "check"] {
            let mut child = Command::new(binary)
                .args([command, "--project", p.path().to_str().unwrap()])
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap();
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
            while child.try_wait().unwrap().is_none() && std::time::Instant::now() < deadline {
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            let waited = child.try_wait().unwrap().is_none();
            if waited {
                child.kill().unwrap();
            }
            let output = child.wait_with_output().unwrap();
            assert!(!waited, "{command} with a FIFO as {name} waited on it");
            let stderr = String::from_utf8_lossy(&output.stderr);
            assert_ne!(output.status.code(), Some(0), "{command} {name}: {stderr}");
            let said = format!("{stderr}{}", String::from_utf8_lossy(&output.stdout));
            assert!(said.contains(name), "{command} {name}: {said}");
        }
    }
}

/// A lock or journal larger than any seams writes is refused before it
/// is read, naming it, the limit and what to do; sparse, it costs no disk.
#[test]
fn a_record_past_its_size_limit_is_refused_unread() {
    for name in ["seams.lock", "seams.journal"] {
        let p = chat();
        let record = std::fs::File::create(p.path().join(name)).unwrap();
        record.set_len(600 << 20).unwrap();
        for command in ["generate", "check"] {
            let outcome = run(&p, &[command]);
            assert_eq!(outcome.code, 1, "{command} {name}: {outcome:?}");
            let said = format!("{}{}", outcome.stderr, outcome.stdout);
            for part in [name, "over the limit of 536870912", "seams generate"] {
                assert!(said.contains(part), "{command} {name}: {said}");
            }
        }
    }
}

#[test]
fn exit_status_says_whose_problem_it_is() {
    // Usage: 2.
    assert_eq!(seams(&["generate", "--no-such-flag"]).code, 2);
    // Bad input: 1.
    assert_eq!(seams(&["check", "--project", "/nonexistent/seams"]).code, 1);
    // seams cannot do its job (its lock is a directory it cannot read): 3.
    let p = chat_project();
    std::fs::create_dir(p.path().join("seams.lock")).unwrap();
    let generate = run(&p, &["generate"]);
    assert_eq!(generate.code, 3, "{generate:?}");
    insta::assert_snapshot!(
        "lock_is_a_directory",
        seams_tests::redact(p.path(), &generate.stderr)
    );
    // The help says so.
    assert!(
        seams(&["--help"])
            .stdout
            .contains("3 seams itself could not do the job")
    );
}

#[test]
fn a_missing_project_directory_is_named_as_such() {
    let missing = seams(&["generate", "--project", "/nonexistent/seams"]);
    assert_eq!(missing.code, 1);
    insta::assert_snapshot!("missing_project_directory", missing.stderr);
    let empty = tempfile::tempdir().unwrap();
    let no_manifest = seams(&["generate", "--project", empty.path().to_str().unwrap()]);
    assert_eq!(no_manifest.code, 1);
    insta::assert_snapshot!(
        "no_manifest",
        no_manifest
            .stderr
            .replace(empty.path().to_str().unwrap(), "[DIR]")
    );
}

#[test]
fn view_accepts_a_built_in_as_its_own_error_names_it() {
    let p = chat_project();
    let by_label = run(&p, &["view", "builtin:htmx"]);
    assert_eq!(by_label.code, 0, "{by_label:?}");
    assert_eq!(by_label.stdout, run(&p, &["view", "htmx"]).stdout);
    let unknown = run(&p, &["view", "builtin:nope"]);
    assert_eq!(unknown.code, 1);
    insta::assert_snapshot!("view_unknown_generator", unknown.stderr);
}

#[test]
fn a_refused_component_is_reported_before_what_the_others_did() {
    let p = chat_project();
    std::fs::write(p.path().join("notes.wasm"), "not a component\n").unwrap();
    let manifest = p.path().join("seams.toml");
    let mut text = std::fs::read_to_string(&manifest).unwrap();
    text.push_str("\n[[generator]]\nwasm = \"notes.wasm\"\n");
    std::fs::write(&manifest, text).unwrap();
    let generate = run(&p, &["generate"]);
    assert_eq!(generate.code, 1, "{generate:?}");
    insta::assert_snapshot!("refused_component_stderr", generate.stderr);
    insta::assert_snapshot!("refused_component_stdout", generate.stdout);
}

#[test]
fn trace_says_what_is_not_an_output() {
    let p = chat();
    for (name, target) in [
        ("trace_lock", "seams.lock"),
        ("trace_missing_output", "out/nothing.html"),
        ("trace_missing_output_short", "nothing.html:3"),
        ("trace_sidecar", "out/thread.html.trace.json"),
    ] {
        let trace = run(&p, &["trace", target]);
        assert_eq!(trace.code, 1, "{target}: {trace:?}");
        insta::assert_snapshot!(name, trace.stderr);
    }
    // An output whose sidecar is gone still says it has no trace.
    std::fs::remove_file(p.path().join("out/thread.html.trace.json")).unwrap();
    let trace = run(&p, &["trace", "out/thread.html"]);
    assert_eq!(trace.code, 1);
    insta::assert_snapshot!("trace_no_sidecar", trace.stderr);
}

#[test]
fn one_edited_file_is_named_in_the_singular() {
    let p = chat();
    let page = p.path().join("out/thread.html");
    let text = std::fs::read_to_string(&page).unwrap();
    std::fs::write(&page, text.replace("<h2>Thread</h2>", "<h2>Mine</h2>")).unwrap();
    let model = p.path().join("model.ttl");
    let text = std::fs::read_to_string(&model).unwrap();
    std::fs::write(
        &model,
        text.replace("rdfs:label \"Thread\"", "rdfs:label \"Talk\""),
    )
    .unwrap();
    let generate = run(&p, &["generate"]);
    assert_eq!(generate.code, 1, "{generate:?}");
    insta::assert_snapshot!("generate_refuses_one_edited_file", generate.stderr);
}

/// The fake provider that answers after `seconds`, badly.
fn slow_provider(seconds: &str) -> String {
    let script = seams_tests::repo_root().join("tests/fixtures/draft_generator/provider.py");
    format!("python3 {} slow-{seconds}", script.display())
}

#[test]
fn progress_is_drawn_on_a_terminal_and_never_into_a_pipe() {
    let p = chat_project();
    let reference = p.path().join("title.html");
    std::fs::write(&reference, "<header>\n  <h1>Chat</h1>\n</header>\n").unwrap();
    let args = |out: &Path| {
        vec![
            "draft-generator".to_owned(),
            "title".to_owned(),
            "--reference".to_owned(),
            reference.display().to_string(),
            "--provider".to_owned(),
            slow_provider("2"),
            "--retries".to_owned(),
            "0".to_owned(),
            "--out".to_owned(),
            out.display().to_string(),
            "--project".to_owned(),
            p.path().display().to_string(),
        ]
    };
    let binary = env!("CARGO_BIN_EXE_seams");

    let piped = Command::new(binary)
        .args(args(&p.path().join("a")))
        .output()
        .unwrap();
    assert_eq!(piped.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&piped.stderr);
    assert!(!stderr.contains("waiting for the provider"), "{stderr}");
    assert!(
        !stderr.contains('\r') && !stderr.contains('\u{1b}'),
        "{stderr:?}"
    );

    // script(1) gives the command a terminal and copies what it draws.
    let line = std::iter::once(binary.to_owned())
        .chain(args(&p.path().join("b")))
        .map(|a| format!("'{}'", a.replace('\'', "'\\''")))
        .collect::<Vec<_>>()
        .join(" ");
    let on_terminal = Command::new("script")
        .args(["-qefc", &line, "/dev/null"])
        .env("TERM", "xterm")
        .output()
        .unwrap();
    assert_eq!(on_terminal.status.code(), Some(1));
    let drawn = String::from_utf8_lossy(&on_terminal.stdout);
    assert!(
        drawn.contains("waiting for the provider (attempt 1 of 1)"),
        "{drawn:?}"
    );
    // It cleared itself: the last thing printed is the error, not the bar.
    assert!(drawn.trim_end().ends_with("slow and wrong"), "{drawn:?}");
}
