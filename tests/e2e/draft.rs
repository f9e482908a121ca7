//! `seams draft-generator` with fake providers (tests/fixtures/draft_generator):
//! an accepted draft is written with its component and runs from
//! seams.toml; every kind of bad answer, bad template, provider failure and
//! exhausted retry is refused with the package directory and the cache
//! exactly as they were.

use std::path::{Path, PathBuf};
use std::process::Command;

use seams_tests::{TempProject, repo_root, seams};

const REFERENCE: &str = "<header>\n  <h1>Chat</h1>\n</header>\n";

fn project() -> TempProject {
    let p = seams_tests::chat_project();
    std::fs::write(p.path().join("title.html"), REFERENCE).unwrap();
    p
}

fn provider(case: &str) -> String {
    let script = repo_root().join("tests/fixtures/draft_generator/provider.py");
    format!("python3 {} {case}", script.display())
}

fn draft(p: &TempProject, case: &str, out: &Path, extra: &[&str]) -> seams_tests::Outcome {
    let provider = provider(case);
    let mut args = vec![
        "draft-generator",
        "chat-title",
        "--reference",
        p.path()
            .join("title.html")
            .to_str()
            .unwrap()
            .to_owned()
            .leak(),
        "--provider",
        provider.as_str(),
        "--out",
        out.to_str().unwrap(),
        "--project",
        p.path().to_str().unwrap(),
    ];
    args.extend(extra);
    seams(&args)
}

/// Every file under `dir`, with its bytes; empty when it does not exist.
fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    fn walk(dir: &Path, out: &mut Vec<(PathBuf, Vec<u8>)>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, out);
            } else {
                out.push((path.clone(), std::fs::read(&path).unwrap()));
            }
        }
    }
    walk(dir, &mut out);
    out.sort();
    out
}

/// The draft is refused, says each of `expected`, and neither the package
/// directory nor the cache changed.
fn assert_refused(p: &TempProject, case: &str, extra: &[&str], expected: &[&str]) {
    let out = p.path().join(format!("out-{case}"));
    let cache = p.path().join(".seams/generator-drafts");
    let before = (snapshot(&out), snapshot(&cache));
    let run = draft(p, case, &out, extra);
    assert_eq!(run.code, 1, "{case}: {run:?}");
    assert!(
        run.stderr.contains("seams draft-generator: "),
        "{case}: {}",
        run.stderr
    );
    for fragment in expected {
        assert!(
            run.stderr.contains(fragment),
            "{case}: {:?} should say {fragment:?}",
            run.stderr
        );
    }
    assert!(
        (snapshot(&out), snapshot(&cache)) == before,
        "{case}: DIR and the cache are unchanged"
    );
    assert!(!out.exists(), "{case}: no package directory");
}

#[test]
fn bad_answers_and_provider_failures_are_refused_with_nothing_written() {
    let p = project();
    let once = ["--retries", "0"];
    assert_refused(&p, "not-json", &once, &["the answer is not JSON"]);
    assert_refused(
        &p,
        "missing-key",
        &once,
        &["the answer has no key \"golden\""],
    );
    assert_refused(&p, "extra-key", &once, &["extra key \"notes\""]);
    assert_refused(
        &p,
        "non-string",
        &once,
        &["the answer's \"golden\" is not a string"],
    );
    assert_refused(
        &p,
        "restated",
        &once,
        &["template line 2: restates the label \"Chat\" of <https://example.org/chat#app>"],
    );
    for (case, what) in [
        ("logic-if", "[% if app %]"),
        ("logic-set", "[% set t = app.title %]"),
        ("logic-filter", "[[ app.title|upper ]]"),
        ("logic-call", "[[ app.title.lower() ]]"),
        ("logic-operator", "[[ app.title ~ '!' ]]"),
        ("logic-comment", "comments ([# #])"),
    ] {
        assert_refused(&p, case, &once, &["template line 2", what]);
    }
    assert_refused(
        &p,
        "exit-nonzero",
        &once,
        &["provider `python3 ", "failed", "the model is overloaded"],
    );
    assert_refused(&p, "empty", &once, &["answered with nothing"]);
    assert_refused(
        &p,
        "hang",
        &["--retries", "0", "--timeout", "1"],
        &["did not answer within 1 s and was stopped"],
    );
    // Retries are visible, bounded, and end with the last reasons.
    let out = p.path().join("out-always-bad");
    let run = draft(&p, "always-bad", &out, &["--retries", "2"]);
    assert_eq!(run.code, 1);
    assert!(run.stderr.contains("; retrying (1/2)\n"), "{}", run.stderr);
    assert!(run.stderr.contains("; retrying (2/2)\n"), "{}", run.stderr);
    assert!(
        run.stderr
            .contains("draft rejected after 3 attempts:\ntemplate line 2: restates"),
        "{}",
        run.stderr
    );
    assert!(!out.exists());
}

#[test]
fn every_spelling_of_a_compile_time_read_is_refused_before_building() {
    let p = project();
    let once = ["--retries", "0"];
    // The good extract is 37 lines; the stealing line comes after a blank.
    for (case, refusal) in [
        (
            "steal-env",
            "extract.rs line 39: the macro env! is not allowed",
        ),
        (
            "steal-option-env",
            "extract.rs line 39: the macro option_env! is not allowed",
        ),
        (
            "steal-include",
            "extract.rs line 39: the macro include! is not allowed",
        ),
        (
            "steal-include-str",
            "extract.rs line 39: the macro include_str! is not allowed",
        ),
        (
            "steal-include-bytes",
            "extract.rs line 39: the macro include_bytes! is not allowed",
        ),
        (
            "steal-path",
            "extract.rs line 39: the attribute #[path] is not allowed",
        ),
        (
            "steal-qualified",
            "extract.rs line 39: the macro ::core::include_str! is not allowed",
        ),
        (
            "steal-renamed",
            "extract.rs line 39: `use ... include_str as format` is not allowed",
        ),
        (
            "steal-doc",
            "extract.rs line 39: the attribute #[doc] is allowed only as a plain doc comment",
        ),
        (
            "steal-nested",
            "extract.rs line 39: the macro env! is not allowed",
        ),
    ] {
        assert_refused(&p, case, &once, &[refusal]);
    }
    // Refused before any build: nothing was compiled for the project.
    assert!(!p.path().join(".seams/target").exists());
}

/// The draft's build sees only what cargo and rustc need: a variable of
/// the parent's does not reach it (a stand-in `cargo` first on PATH
/// records the environment it is given, then runs the real one).
#[test]
fn a_draft_is_built_in_a_cleared_environment() {
    let p = project();
    let wrapper = tempfile::tempdir().unwrap();
    let seen = wrapper.path().join("seen-env");
    let real_cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let script = wrapper.path().join("cargo");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\nenv >> '{}'\nexec '{real_cargo}' \"$@\"\n",
            seen.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let path = format!(
        "{}:{}",
        wrapper.path().display(),
        std::env::var("PATH").unwrap()
    );
    let out = p.path().join("drafted");
    let run = Command::new(env!("CARGO_BIN_EXE_seams"))
        .args(["draft-generator", "chat-title", "--reference"])
        .arg(p.path().join("title.html"))
        .args(["--provider", &provider("good"), "--out"])
        .arg(&out)
        .arg("--project")
        .arg(p.path())
        .env_remove("CARGO")
        .env("PATH", path)
        .env("SEAMS_DRAFT_SECRET", "hunter2")
        .output()
        .unwrap();
    assert!(run.status.success(), "{run:?}");
    let seen = std::fs::read_to_string(&seen).expect("the draft was built with cargo from PATH");
    assert!(!seen.contains("hunter2"), "{seen}");
    let names: Vec<&str> = seen
        .lines()
        .filter_map(|l| l.split_once('=').map(|(k, _)| k))
        .filter(|k| !k.is_empty())
        .collect();
    for name in &names {
        assert!(
            [
                "PATH",
                "HOME",
                "CARGO_HOME",
                "RUSTUP_HOME",
                "RUSTUP_TOOLCHAIN",
                "TMPDIR",
                "PWD",
                "SHLVL",
                "_",
                "OLDPWD"
            ]
            .contains(name),
            "{name} reached the build: {seen}"
        );
    }
    assert!(names.contains(&"PATH"));
}

#[test]
fn a_good_draft_is_accepted_retried_cached_and_runs_from_seams_toml() {
    let p = project();
    let cache = p.path().join(".seams/generator-drafts");

    // A draft that is not Rust, one that does not compile, then one whose
    // golden does not match.
    assert_refused(
        &p,
        "no-parse",
        &["--retries", "0"],
        &["extract.rs line 1: not valid Rust"],
    );
    assert_refused(
        &p,
        "no-compile",
        &["--retries", "0"],
        &[
            "the package does not compile",
            "error[E0308]: mismatched types",
            "src/extract.rs",
        ],
    );
    let run = draft(&p, "no-compile", &p.path().join("x"), &["--retries", "0"]);
    assert!(
        !run.stderr.contains(p.path().join("x").to_str().unwrap())
            && !run.stderr.contains("/tmp/.tmp"),
        "scratch paths are scrubbed: {}",
        run.stderr
    );
    assert_refused(
        &p,
        "golden-mismatch",
        &["--retries", "0"],
        &["golden match failed"],
    );

    // Accepted: the package with its component.
    let out = p.path().join("seams-chat-title");
    let run = draft(&p, "good", &out, &[]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stdout.starts_with("prompt sha256: "), "{}", run.stdout);
    assert!(run.stdout.contains("\ncache miss\n"), "{}", run.stdout);
    assert!(
        run.stdout.contains(
            "golden match: ok\ndeterminism: ok\noutput parses: ok\nsources name the files: ok\n"
        ),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains(&format!("wrote {}", out.join("chat-title.wasm").display()))
    );
    assert_eq!(
        std::fs::read_to_string(out.join("templates/title.html")).unwrap(),
        "<header>\n  <h1>[[ app.title ]]</h1>\n</header>\n"
    );
    assert_eq!(snapshot(&cache).len(), 1, "the accepted answer is cached");

    // seams generate runs the drafted component.
    std::fs::copy(
        out.join("chat-title.wasm"),
        p.path().join("chat-title.wasm"),
    )
    .unwrap();
    std::fs::write(
        p.path().join("seams.toml"),
        "[model]\nfiles = [\"model.ttl\"]\n[[generator]]\nwasm = \"chat-title.wasm\"\n",
    )
    .unwrap();
    let generate = seams(&["generate", "--project", p.path().to_str().unwrap()]);
    assert_eq!(generate.code, 0, "{generate:?}");
    assert_eq!(
        std::fs::read_to_string(p.path().join("out/title.html")).unwrap(),
        REFERENCE
    );

    // A fenced answer is accepted too; --force replaces the package's files.
    let run = draft(&p, "fenced", &out, &[]);
    assert_eq!(run.code, 1, "the directory is not empty");
    assert!(
        run.stderr.contains("exists and is not empty"),
        "{}",
        run.stderr
    );
    let run = draft(&p, "fenced", &out, &["--force"]);
    assert_eq!(run.code, 0, "{run:?}");

    // A retry that succeeds on the second attempt (the provider checks that
    // the first rejection's reasons reached it).
    let retried = p.path().join("retried");
    let run = draft(&p, "retry", &retried, &[]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stderr
            .starts_with("draft rejected: template line 2: restates the label \"Chat\""),
        "{}",
        run.stderr
    );
    assert!(run.stderr.ends_with("; retrying (1/2)\n"), "{}", run.stderr);

    // A cache hit calls no provider: this one fails if it runs.
    let first = p.path().join("first");
    let hit = p.path().join("hit");
    let binary = env!("CARGO_BIN_EXE_seams");
    let run = |out: &Path, forbid: bool| {
        let mut command = Command::new(binary);
        command
            .args(["draft-generator", "chat-title", "--reference"])
            .arg(p.path().join("title.html"));
        command
            .args(["--provider", &provider("good-unless-forbidden"), "--out"])
            .arg(out);
        command.arg("--project").arg(p.path());
        if forbid {
            command.env("FAKE_PROVIDER_MUST_NOT_RUN", "1");
        }
        command.output().unwrap()
    };
    let miss = run(&first, false);
    assert!(
        miss.status.success(),
        "{}",
        String::from_utf8_lossy(&miss.stderr)
    );
    let again = run(&hit, true);
    assert!(
        again.status.success(),
        "{}",
        String::from_utf8_lossy(&again.stderr)
    );
    assert!(String::from_utf8_lossy(&again.stdout).contains("\ncache hit\n"));
    let package = |dir: &Path| {
        snapshot(dir)
            .into_iter()
            .map(|(path, bytes)| (path.strip_prefix(dir).unwrap().to_owned(), bytes))
            .collect::<Vec<_>>()
    };
    assert!(
        package(&first) == package(&hit),
        "a hit gives the same package"
    );
}

#[test]
fn the_prompt_is_deterministic_and_keeps_data_fenced() {
    let model = seams_model::Model::load(&[repo_root().join("examples/chat/model.ttl")]).unwrap();
    let reference = seams_authoring::Reference {
        name: "title.html".into(),
        text: REFERENCE.into(),
    };
    let prompt = seams_authoring::build_prompt("chat-title", &reference, &model);
    assert_eq!(
        prompt,
        seams_authoring::build_prompt("chat-title", &reference, &model)
    );
    assert!(
        prompt.contains("```DATA\n<header>\n  <h1>Chat</h1>\n</header>\n```"),
        "{prompt}"
    );
    assert!(prompt.contains("https://example.org/chat#app\tChat\n"));
    assert!(
        prompt.contains("mod extract;"),
        "the package module is shown"
    );
    insta::assert_snapshot!("draft_prompt", prompt);
}

#[test]
fn propose_settings_are_used_and_flags_win() {
    let p = project();
    let manifest = std::fs::read_to_string(p.path().join("seams.toml")).unwrap();
    std::fs::write(
        p.path().join("seams.toml"),
        format!(
            "{manifest}\n[propose]\nprovider = {:?}\nretries = 0\ntimeout = 30\n",
            provider("not-json")
        ),
    )
    .unwrap();
    let reference = p.path().join("title.html");
    let out = p.path().join("out");
    let base = [
        "draft-generator",
        "chat-title",
        "--reference",
        reference.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--project",
        p.path().to_str().unwrap(),
    ];
    let from_manifest = seams(&base);
    assert_eq!(from_manifest.code, 1);
    assert!(
        from_manifest
            .stderr
            .contains("draft rejected after 1 attempt:\nthe answer is not JSON"),
        "{}",
        from_manifest.stderr
    );
    let flag = provider("exit-nonzero");
    let mut args = base.to_vec();
    args.extend(["--provider", &flag]);
    let from_flag = seams(&args);
    assert!(
        from_flag.stderr.contains("the model is overloaded"),
        "{}",
        from_flag.stderr
    );

    let bare = TempProject::new(
        "<urn:a> <urn:b> \"c\" .\n",
        "[[generator]]\nbuiltin = \"htmx\"\n",
    );
    std::fs::write(bare.path().join("title.html"), REFERENCE).unwrap();
    let none = seams(&[
        "draft-generator",
        "x",
        "--reference",
        bare.path().join("title.html").to_str().unwrap(),
        "--out",
        bare.path().join("pkg").to_str().unwrap(),
        "--project",
        bare.path().to_str().unwrap(),
    ]);
    assert_eq!(none.code, 1);
    assert!(
        none.stderr
            .contains("no provider command: pass --provider CMD or set provider in [propose]"),
        "{}",
        none.stderr
    );
}
