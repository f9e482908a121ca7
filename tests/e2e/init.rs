//! `seams init`: a new project that generates and checks clean at once,
//! and never written into a directory that holds anything.

use seams_tests::{redact, seams};

#[test]
fn a_new_project_generates_and_checks_clean() {
    let parent = tempfile::tempdir().unwrap();
    let dir = parent.path().join("todo");
    let dir_arg = dir.to_str().unwrap();
    let run = seams(&["init", dir_arg]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stdout.starts_with(&format!(
            "created {dir_arg}: model.ttl, seams.toml, .gitignore\n"
        )),
        "{run:?}"
    );
    for file in [
        "model.ttl",
        "seams.toml",
        ".gitignore",
        "seams.lock",
        "out/tasks.html",
        "out/app.js",
        "out/app.py",
        "out/docker-compose.yml",
    ] {
        assert!(dir.join(file).is_file(), "{file}");
    }
    let model = std::fs::read_to_string(dir.join("model.ttl")).unwrap();
    assert!(model.lines().filter(|l| l.starts_with('#')).count() >= 8);
    let tasks = std::fs::read_to_string(dir.join("out/tasks.html")).unwrap();
    assert!(tasks.contains("Add a task") && tasks.contains("Your tasks"));
    assert_eq!(seams(&["check", "--project", dir_arg]).code, 0);
    let again = seams(&["generate", "--project", dir_arg]);
    assert!(again.stdout.starts_with("up to date"), "{again:?}");
}

#[test]
fn a_directory_that_holds_anything_is_refused_untouched() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.txt"), "mine").unwrap();
    let run = seams(&["init", dir.path().to_str().unwrap()]);
    assert_eq!(run.code, 1, "{run:?}");
    insta::assert_snapshot!("init_not_empty", redact(dir.path(), &run.stderr));
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["notes.txt"]);
}
