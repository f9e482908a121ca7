//! Generators written in Python (`sdk/python`, componentize-py) and in
//! JavaScript (`sdk/js`, componentize-js): traced and locked like any
//! other, the same bytes in every process, and held by the sandbox when
//! hostile. The fixtures are in `tests/fixtures/{python,js}`.

use std::path::Path;

use seams_tests::{TempProject, fixture_component, repo_root, seams_in};

/// The languages, as their fixture directories and meta names say them.
const LANGUAGES: [(&str, &str); 2] = [("python", "py"), ("js", "js")];

/// A project running the `language` fixture `name` on `model`.
fn project(language: &str, name: &str, model: &str) -> TempProject {
    let p = TempProject::new(model, "[[generator]]\nwasm = \"gen.wasm\"\n");
    std::fs::copy(fixture_component(language, name), p.path().join("gen.wasm")).unwrap();
    p
}

/// `seams generate` on `project` in a process of its own.
fn generate_elsewhere(project: &Path) {
    let run = std::process::Command::new(env!("CARGO_BIN_EXE_seams"))
        .args(["generate", "--project"])
        .arg(project)
        .output()
        .unwrap();
    assert!(run.status.success(), "{run:?}");
}

#[test]
fn a_generator_in_python_or_js_is_traced_locked_and_gives_the_same_bytes_in_every_process() {
    let chat = std::fs::read_to_string(repo_root().join("examples/chat/model.ttl")).unwrap();
    for (language, prefix) in LANGUAGES {
        let p = project(language, "title", &chat);
        let run = seams_in(p.path(), &["generate"]);
        assert_eq!(run.code, 0, "{language}: {run:?}");
        let out = p.path().join("out");
        assert_eq!(
            std::fs::read_to_string(out.join("title.html")).unwrap(),
            "<h1>Chat</h1>\n",
            "{language}"
        );
        let sidecar: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(out.join("title.html.trace.json")).unwrap(),
        )
        .unwrap();
        assert_eq!(sidecar["generator"], format!("{prefix}-title"));
        assert_eq!(sidecar["lines"][0]["templates"][0], "title.html:1");
        assert_eq!(
            sidecar["lines"][0]["terms"][0],
            "https://example.org/chat#app"
        );
        let lock = std::fs::read_to_string(p.path().join("seams.lock")).unwrap();
        assert!(lock.contains("https://example.org/chat#app"), "{lock}");
        assert_eq!(seams_in(p.path(), &["check"]).code, 0, "{language}");

        // Another process, from nothing: the same bytes.
        let first = p.files();
        std::fs::remove_dir_all(&out).unwrap();
        std::fs::remove_file(p.path().join("seams.lock")).unwrap();
        generate_elsewhere(p.path());
        assert_eq!(p.files(), first, "{language}");
    }
}

/// The hostile fixture's run on a model naming `attack`.
fn attack(language: &str, attack: &str) -> (TempProject, seams_tests::Outcome) {
    let p = project(
        language,
        "hostile",
        &format!("<urn:x> <urn:seams:attack> \"{attack}\" .\n"),
    );
    let run = seams_in(p.path(), &["generate"]);
    (p, run)
}

#[test]
fn a_hostile_generator_in_python_or_js_is_stopped_or_refused_naming_it_and_the_limit() {
    let fuel = "ran out of fuel (limit 150000000000); raise [sandbox] fuel";
    let memory = "tried to use more than 512 MiB of memory; raise [sandbox] memory-mib";
    let cases = [
        ("python", "loop", fuel),
        ("python", "memory", memory),
        ("python", "file", "extract failed: FileNotFoundError"),
        ("python", "socket", "extract failed: PermissionError"),
        ("js", "loop", fuel),
        ("js", "memory", memory),
        // The engine has no file API; a file: URL goes to fetch, which a
        // generator does not have.
        (
            "js",
            "file",
            "extract failed: fetch(\"file:///etc/passwd\"): a generator has no network or files",
        ),
        (
            "js",
            "socket",
            "extract failed: fetch(\"http://127.0.0.1:9/\"): a generator has no network or files",
        ),
    ];
    for (language, kind, says) in cases {
        let (p, run) = attack(language, kind);
        assert_eq!(run.code, 1, "{language} {kind}: {run:?}");
        assert!(
            run.stderr.contains(&format!("generator gen.wasm: {says}")),
            "{language} {kind}: {}",
            run.stderr
        );
        assert!(!p.path().join("out/loot.txt").exists(), "{language} {kind}");
    }
    // The environment each sees is empty, whatever the host's holds.
    for (language, loot) in [
        ("python", "[]\n".to_owned()),
        (
            "js",
            // No process, no Deno: nothing names the host's environment.
            r#"{"process":"undefined","deno":"undefined","#.to_owned(),
        ),
    ] {
        let (p, run) = attack(language, "env");
        assert_eq!(run.code, 0, "{language}: {run:?}");
        let got = std::fs::read_to_string(p.path().join("out/loot.txt")).unwrap();
        assert!(got.starts_with(&loot), "{language}: {got}");
        assert!(!got.contains("HOME") && !got.contains("PATH"), "{got}");
    }
}

#[test]
fn what_a_python_or_js_generator_draws_from_random_and_time_is_the_same_in_every_process() {
    for (language, zero_clocks) in [
        ("python", " 0.0 0.0 "),
        ("js", " 0 1970-01-01T00:00:00.000Z 0 "),
    ] {
        let (p, run) = attack(language, "nondeterminism");
        assert_eq!(run.code, 0, "{language}: {run:?}");
        let loot = std::fs::read_to_string(p.path().join("out/loot.txt")).unwrap();
        // The clocks are fixed at zero.
        assert!(loot.contains(zero_clocks), "{language}: {loot}");
        // Another project, another process: the same draws.
        let q = project(
            language,
            "hostile",
            "<urn:x> <urn:seams:attack> \"nondeterminism\" .\n",
        );
        generate_elsewhere(q.path());
        assert_eq!(
            std::fs::read_to_string(q.path().join("out/loot.txt")).unwrap(),
            loot,
            "{language}"
        );
    }
}

/// The Python SDK's own tests (`sdk/python/tests`), on the tests' CPython.
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
    assert!(said.contains("Ran 7 tests"), "{said}");
}

/// The JavaScript SDK's own tests (`sdk/js/test`), on Node.js.
#[test]
fn the_js_sdk_passes_its_own_tests() {
    let run = std::process::Command::new("node")
        .args(["--test", "test/"])
        .current_dir(repo_root().join("sdk/js"))
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&run.stdout);
    assert!(run.status.success(), "{said}");
    assert!(
        said.contains("# pass 8") && said.contains("# fail 0"),
        "{said}"
    );
}

/// What a run of the conformance generator leaves: every output file, and
/// the lock's entries for them without the component's digest (the one
/// thing that differs between languages).
fn conformance_run(example: &str, wasm: &Path) -> (Vec<(String, Vec<u8>)>, serde_json::Value) {
    let model =
        std::fs::read_to_string(repo_root().join("examples").join(example).join("model.ttl"))
            .unwrap();
    let p = TempProject::new(&model, "[[generator]]\nwasm = \"gen.wasm\"\n");
    std::fs::copy(wasm, p.path().join("gen.wasm")).unwrap();
    let run = seams_in(p.path(), &["generate"]);
    assert_eq!(run.code, 0, "{example} {}: {run:?}", wasm.display());
    let files = p
        .files()
        .into_iter()
        .filter(|(path, _)| path.starts_with("out/"))
        .collect();
    let lock: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(p.path().join("seams.lock")).unwrap())
            .unwrap();
    let mut outputs = lock["outputs"].clone();
    for output in outputs.as_array_mut().unwrap() {
        output.as_object_mut().unwrap().remove("component_sha256");
    }
    (files, outputs)
}

#[test]
fn one_generator_in_rust_python_and_js_gives_the_same_outputs_sidecars_and_lock_sources() {
    let components = [
        ("rust", std::path::PathBuf::from(seams_tests::LABELS_WASM)),
        ("python", fixture_component("python", "labels")),
        ("js", fixture_component("js", "labels")),
    ];
    for example in ["chat", "expense"] {
        let (rust_files, rust_lock) = conformance_run(example, &components[0].1);
        let shown: Vec<&str> = rust_files.iter().map(|(path, _)| path.as_str()).collect();
        assert_eq!(
            shown,
            ["out/count.txt", "out/labels.md", "out/labels.md.trace.json"],
            "{example}"
        );
        // Not an empty agreement: every labelled thing is listed and traced.
        let sidecar: serde_json::Value = serde_json::from_slice(&rust_files[2].1).unwrap();
        let things = String::from_utf8(rust_files[0].1.clone()).unwrap();
        let count: usize = things.split(' ').next().unwrap().parse().unwrap();
        assert!(count > 10, "{example}: {things}");
        let traced = sidecar["lines"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|line| !line["terms"].as_array().unwrap().is_empty())
            .count();
        assert_eq!(traced, count, "{example}");
        assert!(
            rust_lock.to_string().contains("count.txt"),
            "{example}: {rust_lock}"
        );
        for (language, wasm) in &components[1..] {
            let (files, lock) = conformance_run(example, wasm);
            for ((path, bytes), (_, expected)) in files.iter().zip(&rust_files) {
                assert_eq!(
                    String::from_utf8_lossy(bytes),
                    String::from_utf8_lossy(expected),
                    "{example}: {language}'s {path} differs from Rust's"
                );
            }
            assert_eq!(files, rust_files, "{example}: {language}");
            assert_eq!(lock, rust_lock, "{example}: {language}'s lock");
        }
    }
}

#[test]
fn what_a_module_runs_while_it_is_built_sees_no_environment_files_or_network() {
    for (language, expected) in [
        (
            "python",
            // componentize-py's own three variables, none of this process's
            // (HOME, PATH); no file outside the package; no socket.
            r#"{"env": ["PYTHONHOME", "PYTHONPATH", "PYTHONUNBUFFERED"], "home": "FileNotFoundError", "passwd": "FileNotFoundError", "planted": "tried", "root": "FileNotFoundError", "site": [], "socket": "PermissionError"}"#,
        ),
        (
            "js",
            // No Node.js or Deno API; fetch refused by the SDK.
            r#"{"process":"undefined","require":"undefined","deno":"undefined","fetch":"GeneratorError","socket":"GeneratorError"}"#,
        ),
    ] {
        let p = project(language, "buildtime", "<urn:x> <urn:y> \"z\" .\n");
        let run = seams_in(p.path(), &["generate"]);
        assert_eq!(run.code, 0, "{language}: {run:?}");
        assert_eq!(
            std::fs::read_to_string(p.path().join("out/loot.txt")).unwrap(),
            format!("{expected}\n"),
            "{language}"
        );
    }
    // The `.pth` the Python module tried to plant on its path reached no
    // site-packages of a Python of this machine's (componentize-py gives
    // the build those of the first `python3` on PATH, and the user's own,
    // unless seams says otherwise).
    let sites = std::process::Command::new("python3")
        .args([
            "-c",
            "import site, sys; print('\\n'.join(site.getsitepackages() + [site.getusersitepackages()]))",
        ])
        .output()
        .unwrap();
    let sites = String::from_utf8(sites.stdout).unwrap();
    assert!(!sites.trim().is_empty());
    for site in sites.lines() {
        let planted = std::path::Path::new(site).join("seams-planted.pth");
        assert!(!planted.exists(), "the build wrote {}", planted.display());
    }
}

/// The JS SDK's types (`sdk/js/index.d.ts`) check a generator written in
/// TypeScript, and refuse one that breaks them, with the TypeScript that
/// seams's pinned componentize-js install brings.
#[test]
fn the_js_sdks_types_check_a_typescript_generator_and_refuse_a_wrong_one() {
    // Provisions the JavaScript toolchain, if no test did yet.
    fixture_component("js", "title");
    let tsc = seams::cli::build_dir()
        .unwrap()
        .join("toolchains/componentize-js-0.23.0/node_modules/.bin/tsc");
    let dir = tempfile::tempdir().unwrap();
    let sdk = dir.path().join("seams-sdk");
    std::fs::create_dir(&sdk).unwrap();
    for file in ["index.js", "index.d.ts", "package.json"] {
        std::fs::copy(repo_root().join("sdk/js").join(file), sdk.join(file)).unwrap();
    }
    let good = r#"import * as seams from './seams-sdk/index.js';

type View = { app: seams.Traced<{ label: string }> };

const generator: seams.Generator<View> = {
  meta: () => seams.meta('t', '0.1.0', 'd', { templates: [seams.template('t.html', '[[ app.label ]]')], syntax: 'brackets' }),
  extract(model) {
    const [row] = model.select('SELECT ?app ?label WHERE { ?app rdfs:label ?label }');
    return { app: seams.traced(row.iri('app'), { label: row.require('label') }, ['urn:x']) };
  },
  render: (view) => [seams.File.rendered('t.html', seams.render('t.html', view))],
};
export default generator;
"#;
    let check = |name: &str, text: &str| {
        std::fs::write(dir.path().join(name), text).unwrap();
        std::process::Command::new(&tsc)
            .args(["--noEmit", "--strict", "--target", "es2022"])
            .args([
                "--module",
                "nodenext",
                "--moduleResolution",
                "nodenext",
                name,
            ])
            .current_dir(dir.path())
            .output()
            .unwrap()
    };
    let run = check("good.ts", good);
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stdout)
    );
    for (name, wrong, says) in [
        (
            "syntax.ts",
            good.replace("'brackets'", "'mustache'"),
            "\"mustache\"",
        ),
        (
            "row.ts",
            good.replace("row.require('label')", "row.require(1)"),
            "number",
        ),
        (
            "file.ts",
            good.replace("seams.File.rendered('t.html', ", "seams.File.rendered("),
            "Expected 2 arguments",
        ),
    ] {
        let run = check(name, &wrong);
        let said = String::from_utf8_lossy(&run.stdout);
        assert!(
            !run.status.success() && said.contains(says),
            "{name}: {said}"
        );
    }
}
