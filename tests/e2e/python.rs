//! Generators written in Python with `sdk/python`, made components by
//! componentize-py: traced and locked like any other, the same bytes in
//! every process, and held by the sandbox when hostile.

use seams_tests::{TempProject, python_component, repo_root, seams_in};

/// A project running the Python component `name` on `model`.
fn project(name: &str, model: &str) -> TempProject {
    let p = TempProject::new(model, "[[generator]]\nwasm = \"gen.wasm\"\n");
    std::fs::copy(python_component(name), p.path().join("gen.wasm")).unwrap();
    p
}

#[test]
fn a_python_generator_is_traced_locked_and_gives_the_same_bytes_in_every_process() {
    let chat = std::fs::read_to_string(repo_root().join("examples/chat/model.ttl")).unwrap();
    let p = project("title", &chat);
    let run = seams_in(p.path(), &["generate"]);
    assert_eq!(run.code, 0, "{run:?}");
    let out = p.path().join("out");
    assert_eq!(
        std::fs::read_to_string(out.join("title.html")).unwrap(),
        "<h1>Chat</h1>\n"
    );
    let sidecar: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("title.html.trace.json")).unwrap())
            .unwrap();
    assert_eq!(sidecar["generator"], "py-title");
    assert_eq!(sidecar["lines"][0]["templates"][0], "title.html:1");
    assert_eq!(
        sidecar["lines"][0]["terms"][0],
        "https://example.org/chat#app"
    );
    let lock = std::fs::read_to_string(p.path().join("seams.lock")).unwrap();
    assert!(lock.contains("https://example.org/chat#app"), "{lock}");
    assert_eq!(seams_in(p.path(), &["check"]).code, 0);

    // Another process, from nothing: the same bytes.
    let first = p.files();
    std::fs::remove_dir_all(&out).unwrap();
    std::fs::remove_file(p.path().join("seams.lock")).unwrap();
    let again = std::process::Command::new(env!("CARGO_BIN_EXE_seams"))
        .args(["generate", "--project"])
        .arg(p.path())
        .output()
        .unwrap();
    assert!(again.status.success(), "{again:?}");
    assert_eq!(p.files(), first);
}

/// The hostile component's run on a model naming `attack`.
fn attack(attack: &str) -> (TempProject, seams_tests::Outcome) {
    let p = project(
        "hostile",
        &format!("<urn:x> <urn:seams:attack> \"{attack}\" .\n"),
    );
    let run = seams_in(p.path(), &["generate"]);
    (p, run)
}

#[test]
fn a_hostile_python_generator_is_stopped_or_refused_naming_it_and_the_limit() {
    for (kind, says) in [
        (
            "loop",
            "ran out of fuel (limit 150000000000); raise [sandbox] fuel",
        ),
        (
            "memory",
            "tried to use more than 512 MiB of memory; raise [sandbox] memory-mib",
        ),
        ("file", "extract failed: FileNotFoundError"),
        ("socket", "extract failed: PermissionError"),
    ] {
        let (p, run) = attack(kind);
        assert_eq!(run.code, 1, "{kind}: {run:?}");
        assert!(
            run.stderr.contains(&format!("generator gen.wasm: {says}")),
            "{kind}: {}",
            run.stderr
        );
        assert!(!p.path().join("out/loot.txt").exists(), "{kind}");
    }
    // The environment it sees is empty, whatever the host's holds.
    let (p, run) = attack("env");
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(
        std::fs::read_to_string(p.path().join("out/loot.txt")).unwrap(),
        "[]\n"
    );
}

#[test]
fn what_a_python_generator_draws_from_random_time_and_hashes_is_the_same_in_every_process() {
    let (p, run) = attack("nondeterminism");
    assert_eq!(run.code, 0, "{run:?}");
    let loot = std::fs::read_to_string(p.path().join("out/loot.txt")).unwrap();
    // The clocks are fixed at zero.
    assert!(loot.contains(" 0.0 0.0 "), "{loot}");
    // Another project, another process: the same draws.
    let q = project(
        "hostile",
        "<urn:x> <urn:seams:attack> \"nondeterminism\" .\n",
    );
    let other = std::process::Command::new(env!("CARGO_BIN_EXE_seams"))
        .args(["generate", "--project"])
        .arg(q.path())
        .output()
        .unwrap();
    assert!(other.status.success(), "{other:?}");
    assert_eq!(
        std::fs::read_to_string(q.path().join("out/loot.txt")).unwrap(),
        loot
    );
}

/// The SDK's own tests (`sdk/python/tests`), on the tests' CPython.
#[test]
fn the_python_sdk_passes_its_own_tests() {
    let python = std::env::var_os("SEAMS_PYTHON").expect("run the tests with tests/run");
    let run = std::process::Command::new(python)
        .args(["-m", "unittest", "discover", "-s", "tests"])
        .current_dir(repo_root().join("sdk/python"))
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "{said}");
    assert!(said.contains("Ran 6 tests"), "{said}");
}
