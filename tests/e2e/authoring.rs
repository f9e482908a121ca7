//! Generator authors: `seams new-generator` writes a package whose test
//! passes as written, for every type the "output parses" test knows, and
//! `seams test-generator` fails exactly the test a broken package breaks.

use std::path::Path;

use seams_tests::{TempProject, repo_root, seams};

/// One project for every package, so they share `.seams/target`.
fn project() -> TempProject {
    seams_tests::chat_project()
}

fn new_generator(p: &TempProject, name: &str, reference: &str, text: &str) -> std::path::PathBuf {
    let reference_path = p.path().join(reference);
    std::fs::write(&reference_path, text).unwrap();
    let dir = p.path().join(format!("seams-{name}"));
    let run = seams(&[
        "new-generator",
        name,
        "--reference",
        reference_path.to_str().unwrap(),
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(run.code, 0, "{run:?}");
    dir
}

fn test_generator(p: &TempProject, dir: &Path) -> seams_tests::Outcome {
    seams(&[
        "test-generator",
        dir.to_str().unwrap(),
        "--project",
        p.path().to_str().unwrap(),
    ])
}

const ALL_OK: &str =
    "golden match: ok\ndeterminism: ok\noutput parses: ok\nsources name the files: ok\n";

#[test]
fn the_scaffold_passes_its_test_for_every_supported_type() {
    let p = project();
    let references = [
        (
            "page.html",
            "<!DOCTYPE html>\n<html>\n<body>\n  <p>{{ vue }} and {% raw %}</p>\n</body>\n</html>\n",
        ),
        (
            "data.json",
            "{\n  \"a\": [1, 2],\n  \"b\": {\"c\": null}\n}\n",
        ),
        (
            "compose.yaml",
            "services:\n  api:\n    image: app\n    ports:\n      - \"8000:8000\"\n",
        ),
        (
            "config.toml",
            "[server]\nport = 8000\n\n[db]\nurl = \"sqlite://x\"\n",
        ),
        (
            "app.py",
            "from x import y\n\n\ndef main():\n    return {\"a\": 1}\n",
        ),
        ("lib.rs", "pub fn answer() -> u32 {\n    42\n}\n"),
        ("app.js", "export const f = (x) => ({ a: x });\n"),
        ("style.css", "body {\n  color: red;\n}\n"),
    ];
    for (i, (reference, text)) in references.iter().enumerate() {
        let dir = new_generator(&p, &format!("gen{i}"), reference, text);
        let run = test_generator(&p, &dir);
        assert_eq!(run.code, 0, "{reference}: {run:?}");
        assert_eq!(run.stdout, ALL_OK, "{reference}");
    }
}

#[test]
fn the_scaffolded_package_is_stable_byte_for_byte() {
    let p = project();
    let dir = new_generator(
        &p,
        "pages",
        "index.html",
        "<html>\n<body>\n  <h1>Chat</h1>\n</body>\n</html>\n",
    );
    let mut shown = String::new();
    for rel in [
        "Cargo.toml",
        "README.md",
        "src/lib.rs",
        "src/extract.rs",
        "templates/index.html",
        "tests/golden/index.html",
    ] {
        shown.push_str(&format!(
            "=== {rel}\n{}",
            std::fs::read_to_string(dir.join(rel)).unwrap()
        ));
    }
    insta::assert_snapshot!("scaffolded_package", shown);
    // The vendored SDK is this seams's SDK, pointed at its own WIT.
    let vendored = std::fs::read_to_string(dir.join("seams-sdk/src/model.rs")).unwrap();
    assert_eq!(
        vendored,
        std::fs::read_to_string(repo_root().join("sdk/src/model.rs")).unwrap()
    );
    let lib = std::fs::read_to_string(dir.join("seams-sdk/src/lib.rs")).unwrap();
    assert!(lib.contains("path: \"wit/since_v0.1.0\""));
    assert!(
        dir.join("seams-sdk/wit/since_v0.1.0/generator.wit")
            .is_file()
    );
    let manifest = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap();
    assert!(
        !manifest.contains(repo_root().to_str().unwrap()),
        "no absolute path of this machine"
    );
}

#[test]
fn new_generator_refuses_with_nothing_written() {
    let p = project();
    std::fs::write(p.path().join("ok.html"), "<p>x</p>\n").unwrap();
    std::fs::write(p.path().join("brackets.html"), "<p>[[ x ]]</p>\n").unwrap();
    let busy = p.path().join("busy");
    std::fs::create_dir(&busy).unwrap();
    std::fs::write(busy.join("mine.txt"), "keep").unwrap();
    let reference = |f: &str| p.path().join(f).to_str().unwrap().to_owned();
    for (args, expected) in [
        (
            vec!["new-generator", "Bad", "--reference", &reference("ok.html")],
            "generator name \"Bad\" is invalid",
        ),
        (
            vec![
                "new-generator",
                "a",
                "--reference",
                &reference("brackets.html"),
            ],
            "line 1, column 4: holds \"[[\"",
        ),
        (
            vec![
                "new-generator",
                "a",
                "--reference",
                &reference("ok.html"),
                "--out",
                busy.to_str().unwrap(),
            ],
            "exists and is not empty",
        ),
    ] {
        let before = p.files();
        let run = seams(&args);
        assert_eq!(run.code, 1, "{args:?}");
        assert!(run.stderr.contains(expected), "{}", run.stderr);
        assert!(p.files() == before, "{args:?}: nothing is written");
    }
}

#[test]
fn a_broken_package_fails_exactly_the_test_it_breaks() {
    let p = project();
    // A golden that no longer matches: golden match alone fails.
    let dir = new_generator(&p, "golden", "a.json", "{\"a\": 1}\n");
    std::fs::write(dir.join("tests/golden/a.json"), "{\"a\": 2}  [fixed]\n").unwrap();
    let run = test_generator(&p, &dir);
    assert_eq!(run.code, 1);
    assert!(
        run.stdout
            .starts_with("golden match: FAILED\n  tests/golden/a.json: the output differs"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .ends_with("determinism: ok\noutput parses: ok\nsources name the files: ok\n"),
        "{}",
        run.stdout
    );

    // An output that does not parse (golden kept in step): only that test.
    let dir = new_generator(&p, "parses", "b.json", "{\"a\": 1}\n");
    std::fs::write(dir.join("templates/b.json"), "{\"a\": 1\n").unwrap();
    std::fs::write(dir.join("tests/golden/b.json"), "{\"a\": 1  [fixed]\n").unwrap();
    let run = test_generator(&p, &dir);
    assert_eq!(run.code, 1);
    assert_eq!(
        run.stdout
            .lines()
            .map(|l| l.split(':').next().unwrap())
            .filter(|l| !l.starts_with(' '))
            .collect::<Vec<_>>(),
        [
            "golden match",
            "determinism",
            "output parses",
            "sources name the files"
        ]
    );
    assert!(
        run.stdout.contains("output parses: FAILED\n  b.json:"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("golden match: ok\ndeterminism: ok\n"),
        "{}",
        run.stdout
    );

    // A build error is shown with the package's paths.
    let dir = new_generator(&p, "broken", "c.json", "{}\n");
    std::fs::write(dir.join("src/extract.rs"), "pub fn extract( {}\n").unwrap();
    let run = test_generator(&p, &dir);
    assert_eq!(run.code, 1);
    assert!(run.stderr.contains("src/extract.rs"), "{}", run.stderr);
}

/// The guide's worked example ("Write your own generator" in the README):
/// one turn of the author's loop on a scaffold.
#[test]
fn the_guides_worked_example_passes() {
    let p = project();
    // 1. Scaffold from a hand-written reference.
    let dir = new_generator(
        &p,
        "chat-title",
        "title.html",
        "<header>\n  <h1>Chat</h1>\n</header>\n",
    );
    assert_eq!(test_generator(&p, &dir).stdout, ALL_OK);

    // 2. Pick a literal the model holds ("Chat", the application's label)
    //    and read it in the extract step, as a view object.
    std::fs::write(
        dir.join("src/extract.rs"),
        include_str!("../fixtures/app_title/extract.rs"),
    )
    .unwrap();
    // 3. Replace the literal in the template with the view model's field.
    std::fs::write(
        dir.join("templates/title.html"),
        "<header>\n  <h1>[[ app.title ]]</h1>\n</header>\n",
    )
    .unwrap();
    // 4. Mark the golden line with the model element it now comes from.
    std::fs::write(
        dir.join("tests/golden/title.html"),
        "<header>  [fixed]\n  <h1>Chat</h1>  [graph: chat:app]\n</header>  [fixed]\n",
    )
    .unwrap();
    let run = test_generator(&p, &dir);
    assert_eq!(run.stdout, ALL_OK, "{run:?}");

    // A graph marker the trace does not bear out fails the golden match.
    std::fs::write(
        dir.join("tests/golden/title.html"),
        "<header>  [fixed]\n  <h1>Chat</h1>  [graph: chat:thread_page]\n</header>  [fixed]\n",
    )
    .unwrap();
    let run = test_generator(&p, &dir);
    assert!(
        run.stdout.contains("tests/golden/title.html:2: [graph: chat:thread_page] but the line is traced to https://example.org/chat#app"),
        "{}",
        run.stdout
    );
}

#[test]
fn a_sources_mismatch_fails_exactly_its_test() {
    let p = project();
    // A sources export that names a file render did not return.
    let dir = new_generator(&p, "ghost", "g.json", "{}\n");
    let lib = std::fs::read_to_string(dir.join("src/lib.rs")).unwrap();
    let lib = lib
        .replace("use seams_sdk::{File,", "use seams_sdk::{FileSources, File,")
        .replace(
            "    fn render(view: &Value)",
            "    fn sources(_view: &Value) -> Result<Vec<FileSources>> {\n        Ok(vec![FileSources { path: \"ghost.txt\".into(), iris: vec![] }])\n    }\n\n    fn render(view: &Value)",
        );
    std::fs::write(dir.join("src/lib.rs"), lib).unwrap();
    let run = test_generator(&p, &dir);
    assert_eq!(run.code, 1, "{run:?}");
    assert_eq!(
        run.stdout,
        "golden match: ok\ndeterminism: ok\noutput parses: ok\nsources name the files: FAILED\n  sources names \"ghost.txt\", which render did not return\n"
    );
}

#[test]
fn a_builtin_passes_test_generator_with_its_goldens_for_a_project() {
    let p = seams_tests::example_project("expense");
    let goldens = repo_root().join("generators/htmx/tests/golden/expense");
    let run = seams(&[
        "test-generator",
        repo_root().join("generators/htmx").to_str().unwrap(),
        "--project",
        p.path().to_str().unwrap(),
        "--goldens",
        goldens.to_str().unwrap(),
    ]);
    assert_eq!(run.stdout, ALL_OK, "{run:?}");
    assert_eq!(run.code, 0);
    // Without --goldens it looks in the package's tests/golden, which holds
    // one directory per example, not the outputs.
    let run = test_generator(&p, &repo_root().join("generators/htmx"));
    assert_eq!(run.code, 1);
    assert!(
        run.stdout.contains("tests/golden/reports.html: missing"),
        "{}",
        run.stdout
    );
}
