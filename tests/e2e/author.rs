//! A generator author's loop: copy the htmx generator, change it, build it
//! as a component, and run it by naming its `.wasm` in `seams.toml`.

use std::process::Command;

use seams_tests::{TempProject, repo_root, seams, target_dir};

fn copy_dir(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let path = entry.unwrap().path();
        let dest = to.join(path.file_name().unwrap());
        if path.is_dir() {
            copy_dir(&path, &dest);
        } else {
            std::fs::copy(&path, &dest).unwrap();
        }
    }
}

#[test]
fn a_copied_and_changed_htmx_generator_runs_from_its_wasm() {
    let work = tempfile::tempdir().unwrap();
    let package = work.path().join("my-pages");
    copy_dir(&repo_root().join("generators/htmx"), &package);
    let manifest = std::fs::read_to_string(package.join("Cargo.toml")).unwrap();
    let sdk = repo_root().join("sdk");
    let ui_model = repo_root().join("generators/ui-model");
    let manifest = manifest
        .replace("name = \"seams-htmx\"", "name = \"my-pages\"")
        .replace(
            "path = \"../../sdk\"",
            &format!("path = {:?}", sdk.to_str().unwrap()),
        )
        .replace(
            "path = \"../ui-model\"",
            &format!("path = {:?}", ui_model.to_str().unwrap()),
        );
    std::fs::write(package.join("Cargo.toml"), manifest).unwrap();
    // The workspace's lock keeps the copy on the versions seams is tested with.
    std::fs::copy(repo_root().join("Cargo.lock"), package.join("Cargo.lock")).unwrap();
    // A component may not use a built-in's name.
    let lib = package.join("src/lib.rs");
    let source = std::fs::read_to_string(&lib).unwrap();
    assert!(source.contains("\"htmx\","), "the meta name to rename");
    std::fs::write(&lib, source.replacen("\"htmx\",", "\"my-pages\",", 1)).unwrap();
    let page = package.join("templates/page.html");
    let template = std::fs::read_to_string(&page).unwrap();
    std::fs::write(
        &page,
        template.replace(
            "<h2>{{ page.title }}</h2>",
            "<h2 class=\"mine\">{{ page.title }}</h2>",
        ),
    )
    .unwrap();

    // A directory in the build's target directory keeps the dependencies
    // compiled between runs.
    let target = target_dir().join("author-test");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let status = Command::new(cargo)
        .args([
            "build",
            "--release",
            "--target",
            "wasm32-wasip2",
            "--manifest-path",
        ])
        .arg(package.join("Cargo.toml"))
        .arg("--target-dir")
        .arg(&target)
        .env_remove("RUSTFLAGS")
        .status()
        .unwrap();
    assert!(status.success());
    let wasm = target.join("wasm32-wasip2/release/my_pages.wasm");

    let model = std::fs::read_to_string(repo_root().join("examples/chat/model.ttl")).unwrap();
    let p = TempProject::new(&model, "[[generator]]\nwasm = \"my-pages.wasm\"\n");
    p.add_file("my-pages.wasm", wasm.to_str().unwrap());
    let run = seams(&["generate", "--project", p.path().to_str().unwrap()]);
    assert_eq!(run.code, 0, "{run:?}");
    let thread = std::fs::read_to_string(p.path().join("out/thread.html")).unwrap();
    assert!(
        thread.contains("<h2 class=\"mine\">Thread</h2>"),
        "{thread}"
    );
    let lock = std::fs::read_to_string(p.path().join("seams.lock")).unwrap();
    assert!(lock.contains("\"source\": \"my-pages.wasm\""), "{lock}");
}
