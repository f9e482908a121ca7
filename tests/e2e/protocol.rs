//! Protocol versions: a component built against `seams:generator@0.1.0`
//! before 0.2.0 existed (committed with its sha256) keeps generating the
//! same bytes, and 0.2.0's vocabularies let the host refuse a model with a
//! typo, naming the file, line and closest term, before any generator
//! runs.

use seams_model::sha256_hex;
use seams_tests::{EXAMPLES, TempProject, example_project, repo_root, seams};

/// The htmx built-in as built against protocol 0.1.0, frozen.
fn frozen_htmx() -> Vec<u8> {
    let dir = repo_root().join("tests/fixtures/since-v0.1.0");
    let bytes = std::fs::read(dir.join("htmx.wasm")).unwrap();
    let pinned = std::fs::read_to_string(dir.join("htmx.wasm.sha256")).unwrap();
    assert_eq!(
        pinned.split_whitespace().next(),
        Some(sha256_hex(&bytes).as_str()),
        "the frozen 0.1.0 component changed"
    );
    bytes
}

/// How the built-in's pages load htmx now, and how they did in 0.1.0.
const SELF_CONTAINED: &str = r#"<script src="htmx.min.js" integrity="sha384-HGfztofotfshcF7+8n44JQL2oJmowVChPTg48S+jvZoztPfvwD79OC/LTtG6dMp+"></script>"#;
const FROM_UNPKG: &str = r#"<script src="https://unpkg.com/htmx.org@2.0.4/dist/htmx.min.js" integrity="sha384-HGfztofotfshcF7+8n44JQL2oJmowVChPTg48S+jvZoztPfvwD79OC/LTtG6dMp+" crossorigin="anonymous"></script>"#;

#[test]
fn a_component_built_for_0_1_0_generates_the_same_bytes_as_the_built_in() {
    let p = example_project("chat");
    std::fs::write(p.path().join("htmx.wasm"), frozen_htmx()).unwrap();
    std::fs::write(
        p.path().join("seams.toml"),
        "[model]\nfiles = [\"model.ttl\"]\n\n[[generator]]\nwasm = \"htmx.wasm\"\n",
    )
    .unwrap();
    let run = seams(&["generate", "--project", p.path().to_str().unwrap()]);
    assert_eq!(run.code, 0, "{run:?}");
    let inspected = seams(&["inspect", p.path().join("htmx.wasm").to_str().unwrap()]);
    assert!(
        inspected
            .stdout
            .contains("protocol:    seams:generator@0.1.0"),
        "{}",
        inspected.stdout
    );
    let committed = repo_root().join("examples/chat/out");
    let mut compared = 0;
    for entry in std::fs::read_dir(p.path().join("out")).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_str().unwrap().to_owned();
        // Since 0.1.0 the built-in writes htmx itself and the pages load it
        // from the app: the one line that changed.
        let now = std::fs::read_to_string(committed.join(&name))
            .unwrap()
            .replace(SELF_CONTAINED, FROM_UNPKG);
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            now,
            "{name} differs from what the 0.2.0 built-in wrote"
        );
        compared += 1;
    }
    // Two pages and the script, each with its sidecar.
    assert_eq!(compared, 6);
}

#[test]
fn a_0_1_0_component_declares_no_vocabulary_so_its_model_is_not_checked() {
    let model = std::fs::read_to_string(repo_root().join("examples/chat/model.ttl"))
        .unwrap()
        .replace("ui:emptyText", "ui:emptyTxt");
    let p = TempProject::new(&model, "[[generator]]\nwasm = \"htmx.wasm\"\n");
    std::fs::write(p.path().join("htmx.wasm"), frozen_htmx()).unwrap();
    let run = seams(&["generate", "--project", p.path().to_str().unwrap()]);
    assert_eq!(run.code, 0, "{run:?}");
}

/// Typos in a copy of each example: a class and a property.
fn typos(example: &str) -> (&'static str, &'static str, &'static str, &'static str) {
    match example {
        "chat" => ("a ui:Page", "a ui:Pag", "ui:shows", "ui:show"),
        _ => (
            "a ui:Page",
            "a ui:page",
            "ui:relatedEntity",
            "ui:relatedEntities",
        ),
    }
}

#[test]
fn typos_in_each_example_are_refused_naming_file_line_and_the_closest_term() {
    for example in EXAMPLES {
        let p = example_project(example);
        let model_path = p.path().join("model.ttl");
        let (class, class_typo, property, property_typo) = typos(example);
        let model = std::fs::read_to_string(&model_path)
            .unwrap()
            .replacen(class, class_typo, 1)
            .replacen(property, property_typo, 1);
        std::fs::write(&model_path, model).unwrap();
        let run = seams(&["generate", "--project", p.path().to_str().unwrap()]);
        assert_eq!(run.code, 1, "{example}: {run:?}");
        assert!(
            !p.path().join("out").exists(),
            "{example}: nothing is written"
        );
        let shown = run.stderr.replace(p.path().to_str().unwrap(), "<project>");
        insta::assert_snapshot!(format!("typos_in_{example}"), shown);
    }
}

/// One element both a page and the application's database: each of its
/// shapes holds, but the vocabulary declares the two kinds disjoint, so
/// the model is refused before any generator runs, naming the element.
#[test]
fn an_element_of_two_kinds_is_refused_naming_it_and_both_kinds() {
    let p = example_project("expense");
    let model_path = p.path().join("model.ttl");
    let model = std::fs::read_to_string(&model_path)
        .unwrap()
        .replacen(
            "ui:database exp:expenses_db .",
            "ui:database exp:reports_page .",
            1,
        )
        .replacen(
            "exp:reports_page a ui:Page ;",
            "exp:reports_page a ui:Page, ui:Database ;\n    ui:engine \"postgres\" ;",
            1,
        );
    std::fs::write(&model_path, model).unwrap();
    let run = seams(&["generate", "--project", p.path().to_str().unwrap()]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(
        run.stderr.contains(
            "exp:reports_page is both a ui:Database and a ui:Page, which the vocabulary <https://w3id.org/seams/ui#> declares disjoint"
        ) && run.stderr.contains("model.ttl:"),
        "{}",
        run.stderr
    );
    assert!(!p.path().join("out").exists(), "nothing is written");
}

/// The component cache notes the namespaces of a generator's vocabularies
/// when it runs to its end, and later runs gather their IRIs as they read
/// the model instead of scanning the store: the findings are the same
/// either way.
#[test]
fn the_model_check_finds_the_same_with_its_namespaces_noted_or_not() {
    let p = example_project("chat");
    let cache = tempfile::tempdir().unwrap();
    let generate = || {
        std::process::Command::new(env!("CARGO_BIN_EXE_seams"))
            .args(["generate", "--project", p.path().to_str().unwrap()])
            .env("SEAMS_CACHE_DIR", cache.path())
            .output()
            .unwrap()
    };
    let notes = || -> Vec<std::path::PathBuf> {
        std::fs::read_dir(cache.path())
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|path| path.extension().is_some_and(|x| x == "namespaces"))
            .collect()
    };
    assert_eq!(generate().status.code(), Some(0));
    // One note per component that declares vocabularies (each of the
    // example's three reads the UI vocabulary).
    let noted = notes();
    assert_eq!(noted.len(), 3, "{noted:?}");
    for note in &noted {
        assert_eq!(
            std::fs::read_to_string(note).unwrap(),
            "https://w3id.org/seams/ui#\n"
        );
    }

    let model_path = p.path().join("model.ttl");
    let (class, class_typo, property, property_typo) = typos("chat");
    let model = std::fs::read_to_string(&model_path)
        .unwrap()
        .replacen(class, class_typo, 1)
        .replacen(property, property_typo, 1);
    std::fs::write(&model_path, model).unwrap();
    let watched = generate();
    assert_eq!(watched.status.code(), Some(1), "{watched:?}");
    let stderr = String::from_utf8_lossy(&watched.stderr);
    assert!(stderr.contains("did you mean"), "{stderr}");
    // Not noted (a run that fails notes nothing), or noted wrong.
    for note in &noted {
        std::fs::remove_file(note).unwrap();
    }
    let scanned = generate();
    assert!(notes().is_empty());
    for note in &noted {
        std::fs::write(note, "urn:other#\nhttps://example.org/chat#\n").unwrap();
    }
    let misled = generate();
    for run in [scanned, misled] {
        assert_eq!(run.status.code(), Some(1));
        assert_eq!(String::from_utf8_lossy(&run.stderr), stderr);
    }
}

#[test]
fn a_shape_violation_names_the_element_its_line_and_the_shapes_message() {
    let model = std::fs::read_to_string(repo_root().join("examples/expense/model.ttl"))
        .unwrap()
        .replacen("ui:path \"reports\"", "ui:path \"Reports\"", 1)
        .replacen("ui:required true", "ui:required \"yes\"", 1);
    let p = TempProject::new(
        &model,
        "[[generator]]\nbuiltin = \"htmx\"\n[[generator]]\nbuiltin = \"fastapi\"\n",
    );
    let run = seams(&["generate", "--project", p.path().to_str().unwrap()]);
    assert_eq!(run.code, 1, "{run:?}");
    let shown = run.stderr.replace(p.path().to_str().unwrap(), "<project>");
    insta::assert_snapshot!("shape_violations_in_expense", shown);
}

#[test]
fn the_sdk_ships_its_own_copy_of_the_protocol_packages_as_it_is_and_builds_a_package_by_version() {
    let shipped = std::fs::read_to_string(repo_root().join("sdk/wit/since_v0.2.0/generator.wit"));
    assert_eq!(
        shipped.unwrap(),
        std::fs::read_to_string(repo_root().join("wit/since_v0.2.0/generator.wit")).unwrap(),
        "sdk/wit/ is the SDK's copy of wit/, the source: copy wit/since_v0.2.0 into sdk/wit/ again"
    );
    // Packaged and built from the package alone, as crates.io would; a
    // target directory of its own, as the tests' cargo holds the shared one.
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let output = std::process::Command::new(cargo)
        .args([
            "package",
            "-p",
            "seams-sdk",
            "--allow-dirty",
            "--target-dir",
        ])
        .arg(seams_tests::target_dir().join("sdk-package"))
        .current_dir(repo_root())
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );

    // A package made with `--sdk registry` depends on seams-sdk by version
    // and holds no copy. seams-sdk is not on crates.io from here, so
    // crates.io's seams-sdk is patched with the crate just packaged: what
    // `cargo publish` would upload.
    let version = env!("CARGO_PKG_VERSION");
    let packaged = seams_tests::target_dir()
        .join("sdk-package/package")
        .join(format!("seams-sdk-{version}.crate"));
    let p = seams_tests::chat_project();
    let unpacked = p.path().join("registry");
    std::fs::create_dir(&unpacked).unwrap();
    let untar = std::process::Command::new("tar")
        .arg("-xzf")
        .arg(&packaged)
        .arg("-C")
        .arg(&unpacked)
        .status()
        .unwrap();
    assert!(untar.success(), "cannot unpack {}", packaged.display());
    let reference = p.path().join("title.html");
    std::fs::write(&reference, "<h1>Chat</h1>\n").unwrap();
    let dir = p.path().join("seams-title");
    let run = seams(&[
        "new-generator",
        "title",
        "--reference",
        reference.to_str().unwrap(),
        "--out",
        dir.to_str().unwrap(),
        "--sdk",
        "registry",
    ]);
    assert_eq!(run.code, 0, "{run:?}");
    let manifest = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap();
    assert!(
        manifest.contains(&format!("seams-sdk = \"{version}\"\n")),
        "{manifest}"
    );
    assert!(
        !dir.join("seams-sdk").exists(),
        "a registry package vendors nothing"
    );
    std::fs::create_dir(dir.join(".cargo")).unwrap();
    std::fs::write(
        dir.join(".cargo/config.toml"),
        format!(
            "[patch.crates-io]\nseams-sdk = {{ path = {:?} }}\n",
            unpacked.join(format!("seams-sdk-{version}"))
        ),
    )
    .unwrap();
    let tested = seams(&[
        "test-generator",
        dir.to_str().unwrap(),
        "--project",
        p.path().to_str().unwrap(),
    ]);
    assert_eq!(tested.code, 0, "{tested:?}");
}
