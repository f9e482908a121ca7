//! A cloned project is trusted with nothing outside itself: its `out`, its
//! model, its lock and its outputs may be symlinks planted by whoever made
//! the repository. seams refuses each, naming it, its target and the
//! opt-in, and reads, writes and shows nothing outside the project.

use std::os::unix::fs::symlink;
use std::path::Path;

use seams_tests::{TempProject, chat_project, seams_in};

/// Every file under `dir` with its bytes, to compare before and after.
fn snapshot(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(at) = stack.pop() {
        for entry in std::fs::read_dir(&at).unwrap() {
            let path = entry.unwrap().path();
            let meta = std::fs::symlink_metadata(&path).unwrap();
            if meta.is_dir() {
                stack.push(path);
            } else if meta.is_file() {
                let rel = path.strip_prefix(dir).unwrap().display().to_string();
                files.push((rel, std::fs::read(&path).unwrap()));
            }
        }
    }
    files.sort();
    files
}

/// The cloner's own files, which a cloned project must not touch.
fn outside() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("secret.txt"), "SECRET of the cloner\n").unwrap();
    std::fs::write(dir.path().join("notes.lock"), "KEEP\n").unwrap();
    std::fs::create_dir(dir.path().join("docs")).unwrap();
    dir
}

#[test]
fn a_cloned_projects_planted_symlinks_are_refused_and_nothing_outside_is_touched() {
    let elsewhere = outside();
    let o = elsewhere.path();
    let before = snapshot(o);
    type Plant = fn(&TempProject, &Path);
    let cases: [(&str, Plant, &str); 5] = [
        (
            "out to a directory of the cloner's",
            |p, o| symlink(o.join("docs"), p.path().join("out")).unwrap(),
            "the output directory out leads outside the project",
        ),
        (
            "the model to a private file",
            |p, o| {
                std::fs::remove_file(p.path().join("model.ttl")).unwrap();
                symlink(o.join("secret.txt"), p.path().join("model.ttl")).unwrap();
            },
            "the model file model.ttl leads outside the project",
        ),
        (
            "the lock to a file seams would replace",
            |p, o| symlink(o.join("notes.lock"), p.path().join("seams.lock")).unwrap(),
            "the lock seams.lock leads outside the project",
        ),
        (
            "the manifest",
            |p, o| {
                let text = std::fs::read(p.path().join("seams.toml")).unwrap();
                std::fs::write(o.join("seams.toml"), text).unwrap();
                std::fs::remove_file(p.path().join("seams.toml")).unwrap();
                symlink(o.join("seams.toml"), p.path().join("seams.toml")).unwrap();
            },
            "the manifest seams.toml leads outside the project",
        ),
        (
            "a dangling link where the lock goes",
            |p, o| symlink(o.join("new.lock"), p.path().join("seams.lock")).unwrap(),
            "the lock seams.lock leads outside the project",
        ),
    ];
    for (what, plant, said) in cases {
        let p = chat_project();
        plant(&p, o);
        let before_here = snapshot(o);
        for command in ["generate", "check", "trace"] {
            let args: &[&str] = if command == "trace" {
                &["trace", "out/conversations.html"]
            } else {
                &[command]
            };
            let run = seams_in(p.path(), args);
            assert_eq!(run.code, 1, "{what}: {command}: {run:?}");
            assert!(
                run.stderr.contains(said),
                "{what}: {command}: {}",
                run.stderr
            );
            assert!(run.stderr.contains("--allow-outside"), "{}", run.stderr);
            assert!(!run.stderr.contains("SECRET"), "{what}: {}", run.stderr);
            assert!(!run.stdout.contains("SECRET"), "{what}: {}", run.stdout);
        }
        assert_eq!(
            snapshot(o),
            before_here,
            "{what}: something outside changed"
        );
        assert!(!o.join("new.lock").exists(), "{what}");
    }
    // The seams.toml copied for the manifest case is the only new file.
    let after: Vec<_> = snapshot(o)
        .into_iter()
        .filter(|(name, _)| name != "seams.toml")
        .collect();
    assert_eq!(after, before);

    // The user who made the link says so, and seams follows it.
    let p = chat_project();
    symlink(o.join("docs"), p.path().join("out")).unwrap();
    let allowed = seams_in(p.path(), &["generate", "--allow-outside"]);
    assert_eq!(allowed.code, 0, "{allowed:?}");
    assert!(o.join("docs/conversations.html").is_file());
}

#[test]
fn a_link_planted_among_the_outputs_is_named_with_the_generator_that_writes_there() {
    let elsewhere = outside();
    let o = elsewhere.path();
    let before = snapshot(o);
    let p = chat_project();
    assert_eq!(seams_in(p.path(), &["generate"]).code, 0);
    let out = p.path().join("out");
    // An output replaced by a link to a private file, then a directory of
    // outputs replaced by a link to a directory of the cloner's.
    std::fs::remove_file(out.join("app.py")).unwrap();
    symlink(o.join("secret.txt"), out.join("app.py")).unwrap();
    for command in ["generate", "check"] {
        let run = seams_in(p.path(), &[command]);
        assert_eq!(run.code, 1, "{command}: {run:?}");
        assert!(
            run.stderr.contains("out/app.py is a symbolic link (to ")
                && run
                    .stderr
                    .contains("where generator fastapi writes out/app.py")
                && run.stderr.contains("remove the link and run again"),
            "{command}: {}",
            run.stderr
        );
        assert!(!run.stderr.contains("SECRET"), "{}", run.stderr);
    }
    std::fs::remove_file(out.join("app.py")).unwrap();
    assert_eq!(seams_in(p.path(), &["generate"]).code, 0);
    let html = std::fs::read(out.join("conversations.html")).unwrap();
    std::fs::remove_file(out.join("conversations.html")).unwrap();
    std::fs::create_dir(o.join("docs/inner")).unwrap();
    symlink(o.join("docs/inner"), out.join("conversations.html")).unwrap();
    let run = seams_in(p.path(), &["generate"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(
        run.stderr
            .contains("out/conversations.html is a symbolic link")
            && run
                .stderr
                .contains("generator htmx writes out/conversations.html"),
        "{}",
        run.stderr
    );
    std::fs::remove_file(out.join("conversations.html")).unwrap();
    std::fs::write(out.join("conversations.html"), html).unwrap();
    std::fs::remove_dir(o.join("docs/inner")).unwrap();
    assert_eq!(snapshot(o), before, "nothing outside was written");
    assert_eq!(seams_in(p.path(), &["check"]).code, 0);
}
