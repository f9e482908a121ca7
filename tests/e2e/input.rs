//! Bad input from the user's files gets one clear message: the file, the
//! line, the key, once, cut to a bounded length; a BOM is accepted in
//! every text file seams reads.

use seams_tests::{TempProject, chat_project, seams_in};

fn run(p: &TempProject, args: &[&str]) -> seams_tests::Outcome {
    seams_in(p.path(), args)
}

fn redact(p: &TempProject, text: &str) -> String {
    seams_tests::redact(p.path(), text)
}

fn write_manifest(p: &TempProject, bytes: &[u8]) {
    std::fs::write(p.path().join("seams.toml"), bytes).unwrap();
}

#[test]
fn invalid_utf8_in_the_manifest_is_located_once() {
    let p = chat_project();
    write_manifest(
        &p,
        b"[model]\nfiles = [\"model.ttl\"]\n# caf\xe9\n[[generator]]\nbuiltin = \"htmx\"\n",
    );
    let generate = run(&p, &["generate"]);
    assert_eq!(generate.code, 1, "{generate:?}");
    insta::assert_snapshot!("manifest_not_utf8", redact(&p, &generate.stderr));
}

#[test]
fn invalid_utf8_in_the_lock_is_located_and_check_says_so_in_json() {
    let p = chat_project();
    assert_eq!(run(&p, &["generate"]).code, 0);
    let lock = p.path().join("seams.lock");
    let mut bytes = std::fs::read(&lock).unwrap();
    bytes.splice(40..40, *b"\xff\xfe");
    std::fs::write(&lock, bytes).unwrap();
    let generate = run(&p, &["generate"]);
    assert_eq!(generate.code, 1);
    insta::assert_snapshot!("lock_not_utf8", redact(&p, &generate.stderr));
    let check = run(&p, &["check", "--format", "json"]);
    assert_eq!(check.code, 1);
    let report: serde_json::Value = serde_json::from_str(&check.stdout).unwrap();
    assert_eq!(report["clean"], false);
    assert_eq!(report["problems"][0]["kind"], "lock-unreadable");
    assert_eq!(report["problems"][0]["path"], "seams.lock");
    let text = run(&p, &["check"]);
    insta::assert_snapshot!("check_lock_unreadable", redact(&p, &text.stdout));
}

#[test]
fn a_duplicate_key_is_named() {
    let p = chat_project();
    write_manifest(
        &p,
        b"[model]\nfiles = [\"model.ttl\"]\n[output]\ndir = \"out\"\ndir = \"elsewhere\"\n[[generator]]\nbuiltin = \"htmx\"\n",
    );
    let generate = run(&p, &["generate"]);
    assert_eq!(generate.code, 1);
    insta::assert_snapshot!("duplicate_key", redact(&p, &generate.stderr));
}

#[test]
fn an_io_cause_is_said_once() {
    let p = chat_project();
    std::fs::remove_file(p.path().join("model.ttl")).unwrap();
    let generate = run(&p, &["generate"]);
    assert_eq!(generate.code, 1, "a missing input is the user's to fix");
    assert_eq!(
        generate.stderr.matches("No such file or directory").count(),
        1
    );
    insta::assert_snapshot!("missing_model_file", redact(&p, &generate.stderr));
}

#[test]
fn a_huge_value_is_cut_in_the_message() {
    let p = chat_project();
    let huge = "x".repeat(1 << 20);
    write_manifest(
        &p,
        format!("[model]\nfiles = [\"model.ttl\"]\n[[generator]]\nbuiltin = \"{huge}\"\n")
            .as_bytes(),
    );
    let generate = run(&p, &["generate"]);
    assert_eq!(generate.code, 1);
    assert!(
        generate.stderr.len() < 600,
        "{} bytes",
        generate.stderr.len()
    );
    insta::assert_snapshot!("huge_value", redact(&p, &generate.stderr));
    // A value with escape sequences is shown escaped.
    write_manifest(
        &p,
        b"[model]\nfiles = [\"model.ttl\"]\n[[generator]]\nbuiltin = \"\\u001b]0;pwned\\u0007\"\n",
    );
    let generate = run(&p, &["generate"]);
    assert!(!generate.stderr.contains('\u{1b}'), "{:?}", generate.stderr);
}

#[test]
fn a_bom_is_accepted_in_turtle_and_toml_alike() {
    let p = chat_project();
    let with_bom = |name: &str| {
        let path = p.path().join(name);
        let mut bytes = b"\xEF\xBB\xBF".to_vec();
        bytes.extend(std::fs::read(&path).unwrap());
        std::fs::write(path, bytes).unwrap();
    };
    with_bom("model.ttl");
    with_bom("seams.toml");
    let generate = run(&p, &["generate"]);
    assert_eq!(generate.code, 0, "{generate:?}");
    let plain = chat_project();
    assert_eq!(run(&plain, &["generate"]).code, 0);
    // The same model: the same outputs.
    assert_eq!(
        std::fs::read(p.path().join("out/thread.html")).unwrap(),
        std::fs::read(plain.path().join("out/thread.html")).unwrap()
    );
}
