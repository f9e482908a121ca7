//! `seams inspect` and `seams view`: what a component is, and the view
//! model a generator builds.

use seams_tests::{FUTURE_WASM, HOSTILE_WASM, OTHER_WORLD_WASM, repo_root, seams};

#[test]
fn inspect_shows_protocol_meta_hash_and_size() {
    let run = seams(&["inspect", HOSTILE_WASM]);
    assert_eq!(run.code, 0, "{run:?}");
    let bytes = std::fs::read(HOSTILE_WASM).unwrap();
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(lines[1], "  protocol:    seams:generator@0.2.0");
    assert_eq!(lines[2], "  name:        hostile");
    assert_eq!(lines[3], "  version:     0.1.0");
    for expected in [
        "    hello.txt (1 lines)\n",
        "  vocabularies: none (the model is not checked for it)\n  sha256: ",
    ] {
        assert!(run.stdout.contains(expected), "{}", run.stdout);
    }
    assert!(
        run.stdout
            .contains(&format!("  size:        {} bytes\n", bytes.len()))
    );
    let sha = lines
        .iter()
        .find_map(|l| l.strip_prefix("  sha256:      "))
        .unwrap();
    assert_eq!(sha.len(), 64);
}

#[test]
fn inspect_refuses_what_is_not_a_seams_generator() {
    let dir = tempfile::tempdir().unwrap();
    let core = dir.path().join("core.wasm");
    std::fs::write(&core, b"\0asm\x01\0\0\0").unwrap();
    for (file, expected) in [
        (core.to_str().unwrap(), "core WebAssembly module"),
        (OTHER_WORLD_WASM, "is not a seams generator"),
        (FUTURE_WASM, "seams:generator@0.9.0"),
        ("/no/such/file.wasm", "cannot read /no/such/file.wasm"),
    ] {
        let run = seams(&["inspect", file]);
        assert_eq!(run.code, 1, "{file}");
        assert!(run.stderr.starts_with("seams inspect: "), "{}", run.stderr);
        assert!(run.stderr.contains(expected), "{file}: {}", run.stderr);
    }
}

#[test]
fn view_prints_the_view_model_of_a_projects_generator() {
    let project = repo_root().join("examples/chat");
    let run = seams(&["view", "htmx", "--project", project.to_str().unwrap()]);
    assert_eq!(run.code, 0, "{run:?}");
    let view: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(view["app"]["iri"], "https://example.org/chat#app");
    assert_eq!(view["pages"].as_array().unwrap().len(), 2);

    let unknown = seams(&["view", "nope", "--project", project.to_str().unwrap()]);
    assert_eq!(unknown.code, 1);
    assert!(
        unknown
            .stderr
            .contains("the project has no generator \"nope\"; its generators are: builtin:htmx"),
        "{}",
        unknown.stderr
    );
}
