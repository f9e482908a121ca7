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
    new_generator_in(p, "rust", name, reference, text)
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
fn the_scaffold_passes_its_test_for_every_type_and_says_where_parsing_does_not_apply() {
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
        (
            "feed.xml",
            "<?xml version=\"1.0\"?>\n<feed>\n  <title>Chat &amp; more</title>\n</feed>\n",
        ),
        // Plain text no parser knows: taken, and the test says it does
        // not apply.
        ("notes.md", "# Chat\n\n- one\n- two\n"),
        (
            "schema.sql",
            "CREATE TABLE message (\n  id INTEGER PRIMARY KEY\n);\n",
        ),
    ];
    for (i, (reference, text)) in references.iter().enumerate() {
        let dir = new_generator(&p, &format!("gen{i}"), reference, text);
        let run = test_generator(&p, &dir);
        assert_eq!(run.code, 0, "{reference}: {run:?}");
        let readme = std::fs::read_to_string(dir.join("README.md")).unwrap();
        let suffix = reference.rsplit_once('.').unwrap().1;
        if ["md", "sql"].contains(&suffix) {
            let note = format!(
                "  note: {reference}: seams has no parser for .{suffix} files, so \"output parses\" does not apply\n"
            );
            assert_eq!(
                run.stdout,
                ALL_OK.replace("output parses: ok\n", &format!("output parses: ok\n{note}")),
                "{reference}"
            );
            assert!(
                readme.contains("seams has no parser for its kind of file"),
                "{readme}"
            );
        } else {
            assert_eq!(run.stdout, ALL_OK, "{reference}");
            assert!(readme.contains("parses as"), "{readme}");
        }
    }
}

/// `seams new-generator --language LANGUAGE` on a reference in `p`.
fn new_generator_in(
    p: &TempProject,
    language: &str,
    name: &str,
    reference: &str,
    text: &str,
) -> std::path::PathBuf {
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
        "--language",
        language,
    ]);
    assert_eq!(run.code, 0, "{run:?}");
    dir
}

#[test]
fn the_python_js_and_ts_scaffolds_pass_their_test_as_written_and_a_broken_one_names_its_file() {
    let p = project();
    for (language, entry, extract, module) in [
        (
            "python",
            "generator.py",
            "extract.py",
            "seams_sdk/__init__.py",
        ),
        ("js", "generator.js", "extract.js", "seams-sdk/index.js"),
        ("ts", "generator.ts", "extract.ts", "seams-sdk/index.d.ts"),
    ] {
        let dir = new_generator_in(
            &p,
            language,
            &format!("page-{language}"),
            "page.html",
            "<!DOCTYPE html>\n<html>\n<body>\n  <p>{{ vue }}</p>\n</body>\n</html>\n",
        );
        for file in [
            entry,
            extract,
            module,
            "README.md",
            "templates/page.html",
            "tests/golden/page.html",
        ] {
            assert!(dir.join(file).is_file(), "{language}: {file}");
        }
        assert!(!dir.join("Cargo.toml").exists(), "{language}");
        let run = test_generator(&p, &dir);
        assert_eq!(run.code, 0, "{language}: {run:?}");
        assert_eq!(run.stdout, ALL_OK, "{language}");
        // Unchanged, the package is not built again: the component is the
        // one tested before (the tools never build the same bytes twice).
        let component = || {
            let run = seams(&[
                "test-generator",
                dir.to_str().unwrap(),
                "--project",
                p.path().to_str().unwrap(),
                "--format",
                "json",
            ]);
            let report: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
            assert_eq!(report["passed"], true, "{language}: {run:?}");
            std::fs::read(report["component"].as_str().unwrap()).unwrap()
        };
        let first = component();
        assert!(first == component(), "{language}: rebuilt though unchanged");
        // A changed template is built again.
        for file in ["templates/page.html", "tests/golden/page.html"] {
            let path = dir.join(file);
            let text = std::fs::read_to_string(&path).unwrap();
            std::fs::write(&path, text.replace("<body>", "<body class=\"x\">")).unwrap();
        }
        assert!(
            first != component(),
            "{language}: not rebuilt though changed"
        );

        if language == "ts" {
            // A type error the SDK's declarations catch: the build stops
            // before componentize-js, naming the file, line and type.
            let path = dir.join(extract);
            let text = std::fs::read_to_string(&path).unwrap();
            std::fs::write(&path, text.replace("model.hash()", "model.hash(1)")).unwrap();
            let run = test_generator(&p, &dir);
            assert_eq!(run.code, 1, "{run:?}");
            assert!(run.stderr.contains("extract.ts("), "{}", run.stderr);
            assert!(
                run.stderr.contains("Expected 0 arguments"),
                "{}",
                run.stderr
            );
            assert!(!run.stderr.contains("/packages/"), "{}", run.stderr);
            std::fs::write(&path, &text).unwrap();
            // The package's tsconfig.json cannot turn the checks off.
            std::fs::write(
                dir.join("tsconfig.json"),
                "{\"compilerOptions\": {\"strict\": false, \"noEmitOnError\": false}}",
            )
            .unwrap();
            std::fs::write(
                &path,
                text.replace(
                    "export function extract(model: seams.Model)",
                    "export function extract(model)",
                ),
            )
            .unwrap();
            let run = test_generator(&p, &dir);
            assert_eq!(run.code, 1, "{run:?}");
            assert!(
                run.stderr.contains("implicitly has an 'any' type"),
                "{}",
                run.stderr
            );
        }
        // A syntax error in the extract step: the build fails, naming the
        // package's file (not the build's copy of it).
        std::fs::write(dir.join(extract), "this is not ( code\n").unwrap();
        let run = test_generator(&p, &dir);
        assert_eq!(run.code, 1, "{language}: {run:?}");
        assert!(run.stderr.contains("failed"), "{language}: {}", run.stderr);
        assert!(run.stderr.contains(extract), "{language}: {}", run.stderr);
        assert!(
            !run.stderr.contains("/packages/"),
            "{language}: {}",
            run.stderr
        );
    }
    // The SDK's registry copy is a Rust matter.
    std::fs::write(p.path().join("x.html"), "<p>x</p>\n").unwrap();
    let run = seams(&[
        "new-generator",
        "x",
        "--reference",
        p.path().join("x.html").to_str().unwrap(),
        "--out",
        p.path().join("x").to_str().unwrap(),
        "--language",
        "js",
        "--sdk",
        "registry",
    ]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(
        run.stderr.contains("--sdk registry is for Rust packages"),
        "{}",
        run.stderr
    );
    assert!(!p.path().join("x").exists());
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
        "rust-toolchain.toml",
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
    assert!(lib.contains("path: \"wit/since_v0.2.0\""));
    assert!(
        dir.join("seams-sdk/wit/since_v0.2.0/generator.wit")
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

/// A fenced code block of the book: its language, the path its info
/// string names (if any) and its text, the fence's indentation removed.
struct Block {
    language: String,
    path: Option<String>,
    text: String,
}

/// The code blocks of the book's chapter `chapter` (in `docs/src`).
fn chapter_blocks(chapter: &str) -> Vec<Block> {
    let section = std::fs::read_to_string(repo_root().join("docs/src").join(chapter)).unwrap();
    let mut blocks = Vec::new();
    let mut lines = section.lines();
    while let Some(line) = lines.next() {
        let Some(info) = line.trim_start().strip_prefix("```") else {
            continue;
        };
        let indent = line.len() - line.trim_start().len();
        let mut words = info.split_whitespace();
        let language = words.next().unwrap_or("").to_owned();
        let path = words.next().map(str::to_owned);
        let mut text = String::new();
        for line in lines.by_ref() {
            if line.trim_start().starts_with("```") {
                break;
            }
            text.push_str(line.get(indent..).unwrap_or(""));
            text.push('\n');
        }
        blocks.push(Block {
            language,
            path,
            text,
        });
    }
    blocks
}

/// A `sh` block's commands, comments cut.
fn commands(block: &Block) -> Vec<&str> {
    block
        .text
        .lines()
        .map(|line| line.split('#').next().unwrap().trim())
        .filter(|line| !line.is_empty())
        .collect()
}

/// Runs one command as typed, in `dir`, with this seams.
fn run_command(line: &str, dir: &Path) -> seams_tests::Outcome {
    let mut words = line.split_whitespace();
    assert_eq!(words.next(), Some("seams"), "{line}");
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_seams"))
        .args(words)
        .current_dir(dir)
        .output()
        .unwrap();
    seams_tests::Outcome {
        code: output.status.code().map_or(u8::MAX, |c| c as u8),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

/// A directory where the guide's commands run as typed: `examples/chat`
/// holds a copy of the chat example's manifest and model.
fn guide_work() -> tempfile::TempDir {
    let work = tempfile::tempdir().unwrap();
    let chat = work.path().join("examples/chat");
    std::fs::create_dir_all(&chat).unwrap();
    for file in ["seams.toml", "model.ttl"] {
        std::fs::copy(
            repo_root().join("examples/chat").join(file),
            chat.join(file),
        )
        .unwrap();
    }
    work
}

/// The guide's worked example (the book's "Write your own generator"),
/// run as it is written there: its commands as typed, its files as shown.
#[test]
fn the_guides_worked_example_passes() {
    let blocks = chapter_blocks("writing-a-generator.md");
    let work = guide_work();
    let files = |prefix: &str| {
        for block in blocks.iter().filter(|b| b.language != "sh") {
            let path = block.path.as_deref().expect("a file block names its path");
            if path.starts_with(prefix) {
                std::fs::write(work.path().join(path), &block.text).unwrap();
            }
        }
    };
    // The reference, then the scaffold and its first test run.
    files("title.html");
    let sh = blocks.iter().find(|b| b.language == "sh").unwrap();
    let [scaffold, test] = commands(sh)[..] else {
        panic!("the guide scaffolds, then tests: {:?}", sh.text);
    };
    let run = run_command(scaffold, work.path());
    assert_eq!(run.code, 0, "{run:?}");
    let run = run_command(test, work.path());
    assert_eq!(run.stdout, ALL_OK, "{run:?}");

    // One turn of the loop: the files as the guide shows them.
    files("seams-chat-title/");
    let extract = blocks
        .iter()
        .find(|b| b.path.as_deref() == Some("seams-chat-title/src/extract.rs"))
        .unwrap();
    assert_eq!(
        extract.text,
        include_str!("../fixtures/app_title/extract.rs"),
        "the fake provider's good answer is the guide's extract step"
    );
    let again = run_command(test, work.path());
    assert_eq!(again.stdout, ALL_OK, "{again:?}");

    // A graph marker the trace does not bear out fails the golden match.
    let dir = work.path().join("seams-chat-title");
    std::fs::write(
        dir.join("tests/golden/title.html"),
        "<header>  [fixed]\n  <h1>Chat</h1>  [graph: chat:thread_page]\n</header>  [fixed]\n",
    )
    .unwrap();
    let run = run_command(test, work.path());
    assert!(
        run.stdout.contains("tests/golden/title.html:2: [graph: chat:thread_page] but the line is traced to https://example.org/chat#app"),
        "{}",
        run.stdout
    );

    // The package goes into the project and generates with it.
    let use_it = blocks
        .iter()
        .find(|b| b.language == "sh" && b.text.contains("seams add"))
        .unwrap();
    for line in commands(use_it) {
        if let Some(paths) = line.strip_prefix("mv ") {
            let [from, to] = paths.split_whitespace().collect::<Vec<_>>()[..] else {
                panic!("{line}");
            };
            let from = work.path().join(from);
            std::fs::rename(&from, work.path().join(to).join(from.file_name().unwrap())).unwrap();
            continue;
        }
        let run = run_command(line, work.path());
        assert_eq!(run.code, 0, "{line}: {run:?}");
    }
    let chat = work.path().join("examples/chat");
    assert_eq!(
        std::fs::read_to_string(chat.join("out/title.html")).unwrap(),
        "<header>\n  <h1>Chat</h1>\n</header>\n"
    );
    assert!(chat.join("out/title.html.trace.json").is_file());
    assert!(
        std::fs::read_to_string(chat.join("seams.lock"))
            .unwrap()
            .contains("\"package:seams-chat-title\"")
    );
}

#[test]
fn the_guides_worked_example_passes_in_python_and_js() {
    let blocks = chapter_blocks("writing-a-generator.md");
    let block = |path: &str| {
        blocks
            .iter()
            .find(|b| b.path.as_deref() == Some(path))
            .unwrap_or_else(|| panic!("the guide shows {path}"))
    };
    let work = guide_work();
    std::fs::write(work.path().join("title.html"), &block("title.html").text).unwrap();
    for (language, package, extract, answer) in [
        ("python", "seams-py-title", "extract.py", "title-good.py"),
        ("js", "seams-js-title", "extract.js", "title-good.js"),
    ] {
        let sh = blocks
            .iter()
            .find(|b| b.language == "sh" && b.path.as_deref() == Some(language))
            .unwrap_or_else(|| panic!("the guide scaffolds in {language}"));
        let [scaffold, test] = commands(sh)[..] else {
            panic!("the guide scaffolds, then tests: {:?}", sh.text);
        };
        let run = run_command(scaffold, work.path());
        assert_eq!(run.code, 0, "{language}: {run:?}");
        let run = run_command(test, work.path());
        assert_eq!(run.stdout, ALL_OK, "{language}: {run:?}");

        // The loop's turn: the guide's extract step, the Rust example's
        // template and golden.
        let dir = work.path().join(package);
        let shown = &block(&format!("{package}/{extract}")).text;
        assert_eq!(
            shown,
            &std::fs::read_to_string(
                repo_root()
                    .join("tests/fixtures/draft_generator/answers")
                    .join(answer)
            )
            .unwrap(),
            "the fake provider's good {language} answer is the guide's extract step"
        );
        std::fs::write(dir.join(extract), shown).unwrap();
        for file in ["templates/title.html", "tests/golden/title.html"] {
            std::fs::write(
                dir.join(file),
                &block(&format!("seams-chat-title/{file}")).text,
            )
            .unwrap();
        }
        let again = run_command(test, work.path());
        assert_eq!(again.stdout, ALL_OK, "{language}: {again:?}");
        // The golden's graph marker is borne out by the trace.
        std::fs::write(
            dir.join("tests/golden/title.html"),
            "<header>  [fixed]\n  <h1>Chat</h1>  [graph: chat:thread_page]\n</header>  [fixed]\n",
        )
        .unwrap();
        let run = run_command(test, work.path());
        assert!(
            run.stdout
                .contains("but the line is traced to https://example.org/chat#app"),
            "{language}: {}",
            run.stdout
        );
    }
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
            "    fn render(view: &View)",
            "    fn sources(_view: &View) -> Result<Vec<FileSources>> {\n        Ok(vec![FileSources { path: \"ghost.txt\".into(), iris: vec![] }])\n    }\n\n    fn render(view: &View)",
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
    // The goldens are claims on the example's committed outputs.
    let p = seams_tests::example_project_with_outputs("expense");
    let goldens = repo_root().join("generators/htmx/tests/golden/expense");
    let run = seams(&[
        "test-generator",
        repo_root().join("generators/htmx").to_str().unwrap(),
        "--project",
        p.path().to_str().unwrap(),
        "--goldens",
        goldens.to_str().unwrap(),
    ]);
    // htmx's licence is a file type no parser knows.
    let licence_note = "  note: htmx.LICENSE: seams has no parser for .LICENSE files, so \"output parses\" does not apply\n";
    assert_eq!(
        run.stdout,
        ALL_OK.replace(
            "output parses: ok\n",
            &format!("output parses: ok\n{licence_note}")
        ),
        "{run:?}"
    );
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

/// The component kept from the last build of the `language` package
/// `name` in the shared build directory, and when it was written.
fn kept_component(language: &str, name: &str) -> std::time::SystemTime {
    let path = seams::cli::build_dir()
        .unwrap()
        .join("packages")
        .join(language)
        .join(format!("{name}.wasm"));
    std::fs::metadata(&path)
        .and_then(|m| m.modified())
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The component sha256 the project's lock pins for `source`.
fn locked_component(p: &TempProject, source: &str) -> String {
    let lock: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(p.path().join("seams.lock")).unwrap())
            .unwrap();
    lock["generators"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["source"] == source)
        .unwrap_or_else(|| panic!("the lock pins no {source}: {lock}"))["component_sha256"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// A package in the project is a generator source: `seams add ./DIR`
/// names it in seams.toml, `seams generate` builds it (in the sandbox) and
/// runs it, the lock pins its component; an unchanged package is not
/// built again, a changed one is, on the next generate.
#[test]
fn a_package_in_the_project_is_added_built_by_generate_and_rebuilt_only_when_changed() {
    let p = project();
    let project_dir = p.path().to_str().unwrap();
    let languages = ["rust", "python", "js", "ts"];
    for language in languages {
        let name = format!("site-{language}");
        let dir = new_generator_in(
            &p,
            language,
            &name,
            &format!("{name}.md"),
            "# Site map\n\n- Home\n",
        );
        let run = seams(&["add", dir.to_str().unwrap(), "--project", project_dir]);
        assert_eq!(run.code, 0, "{language}: {run:?}");
        assert!(
            run.stdout
                .contains(&format!("added {name} 0.1.0 (package:seams-{name})")),
            "{language}: {}",
            run.stdout
        );
        let manifest = std::fs::read_to_string(p.path().join("seams.toml")).unwrap();
        assert!(
            manifest.contains(&format!("[[generator]]\npackage = \"seams-{name}\"\n")),
            "{manifest}"
        );
        // Named once only.
        let again = seams(&["add", dir.to_str().unwrap(), "--project", project_dir]);
        assert_eq!(again.code, 1, "{again:?}");
        assert!(
            again.stderr.contains(&format!(
                "already has [[generator]] package = \"seams-{name}\""
            )),
            "{}",
            again.stderr
        );
    }
    // What cannot be a project's package is refused, seams.toml untouched.
    let manifest = std::fs::read_to_string(p.path().join("seams.toml")).unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    std::fs::create_dir(p.path().join("notes")).unwrap();
    for (dir, says) in [
        (elsewhere.path().to_owned(), "is outside the project"),
        (p.path().join("out"), "is inside out, which seams writes"),
        (p.path().join("notes"), "is not a generator package"),
    ] {
        std::fs::create_dir_all(&dir).unwrap();
        let run = seams(&["add", dir.to_str().unwrap(), "--project", project_dir]);
        assert_eq!(run.code, 1, "{}: {run:?}", dir.display());
        assert!(
            run.stderr.contains(says),
            "{}: {}",
            dir.display(),
            run.stderr
        );
    }
    assert_eq!(
        std::fs::read_to_string(p.path().join("seams.toml")).unwrap(),
        manifest
    );

    let run = seams(&["generate", "--project", project_dir]);
    assert_eq!(run.code, 0, "{run:?}");
    let pinned: Vec<String> = languages
        .iter()
        .map(|language| {
            let name = format!("site-{language}");
            assert_eq!(
                std::fs::read_to_string(p.path().join(format!("out/{name}.md"))).unwrap(),
                "# Site map\n\n- Home\n"
            );
            locked_component(&p, &format!("package:seams-{name}"))
        })
        .collect();
    let built: Vec<_> = languages
        .iter()
        .map(|language| kept_component(language, &format!("site-{language}")))
        .collect();
    assert_eq!(seams(&["check", "--project", project_dir]).code, 0);

    // Unchanged: nothing is built, nothing written.
    let run = seams(&["generate", "--project", project_dir]);
    assert_eq!(run.code, 0, "{run:?}");
    for (i, language) in languages.iter().enumerate() {
        let name = format!("site-{language}");
        assert_eq!(kept_component(language, &name), built[i], "{language}");
        assert_eq!(
            locked_component(&p, &format!("package:seams-{name}")),
            pinned[i]
        );
    }

    // One package's template changed: that package alone is built again,
    // and its output follows.
    let template = p.path().join("seams-site-python/templates/site-python.md");
    let text = std::fs::read_to_string(&template).unwrap();
    std::fs::write(&template, text.replace("- Home", "- Home\n- About")).unwrap();
    let run = seams(&["generate", "--project", project_dir]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(
        std::fs::read_to_string(p.path().join("out/site-python.md")).unwrap(),
        "# Site map\n\n- Home\n- About\n"
    );
    for (i, language) in languages.iter().enumerate() {
        let name = format!("site-{language}");
        let rebuilt = kept_component(language, &name) != built[i];
        assert_eq!(rebuilt, *language == "python", "{language}");
        assert_eq!(
            locked_component(&p, &format!("package:seams-{name}")) != pinned[i],
            *language == "python",
            "{language}"
        );
    }
    assert_eq!(seams(&["check", "--project", project_dir]).code, 0);
}
