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

/// `git ARGS` in `dir`, which must succeed; its standard output.
fn git(dir: &Path, args: &[&str]) -> String {
    let out = std::process::Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_NAME", "attacker")
        .env("GIT_AUTHOR_EMAIL", "a@example.org")
        .env("GIT_COMMITTER_NAME", "attacker")
        .env("GIT_COMMITTER_EMAIL", "a@example.org")
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {out:?}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A repository whose committed journal would rewrite `.git/config` in a
/// fresh clone (the bytes of that file depend only on the URL and git's
/// version, so the attacker knows their sha256) with an `fsmonitor`
/// command that the next `git status` runs. seams replays only journals
/// sealed on this machine, and never reads a model file under `.git`, so
/// the clone's `.git/config` stays and nothing runs.
#[test]
fn a_committed_journal_cannot_rewrite_a_clones_git_config() {
    let dir = tempfile::tempdir().unwrap();
    let origin = dir.path().join("origin");
    let marker = dir.path().join("ran");
    let command = dir.path().join("command.sh");
    std::fs::write(&command, format!("#!/bin/sh\ntouch {}\n", marker.display())).unwrap();
    std::fs::set_permissions(
        &command,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let p = chat_project();
    std::fs::create_dir(&origin).unwrap();
    for file in ["model.ttl", "seams.toml"] {
        std::fs::copy(p.path().join(file), origin.join(file)).unwrap();
    }
    git(&origin, &["init", "-q", "-b", "main"]);
    git(&origin, &["add", "."]);
    git(&origin, &["commit", "-q", "-m", "a project"]);
    // What a fresh clone's .git/config holds, as the attacker learns it.
    git(dir.path(), &["clone", "-q", "origin", "probe"]);
    let config = std::fs::read(dir.path().join("probe/.git/config")).unwrap();
    let config_sha = seams_model::sha256_hex(&config);
    let pwned = format!(
        "{}[core]\n\tfsmonitor = {}\n",
        String::from_utf8_lossy(&config),
        command.display()
    );
    let model_entry = serde_json::json!({
        "path": ".git/config", "previous": config_sha, "text": pwned,
    });
    // The journal as it was (version 3, unsealed), with a seal made up,
    // and with the model files naming .git/config as the attack needs.
    let cases = [
        ("an unsealed journal", 3, None, false),
        ("a forged seal", 4, Some("0".repeat(64)), false),
        (
            "a forged seal, .git/config a model file",
            4,
            Some("0".repeat(64)),
            true,
        ),
    ];
    for (n, (what, version, seal, listed)) in cases.into_iter().enumerate() {
        let mut journal = serde_json::json!({
            "journal_version": version, "writes": [], "deletes": [], "model": model_entry,
        });
        if let Some(seal) = seal {
            journal["seal"] = seal.into();
        }
        std::fs::write(origin.join("seams.journal"), journal.to_string()).unwrap();
        let manifest = std::fs::read_to_string(p.path().join("seams.toml")).unwrap();
        let manifest = if listed {
            manifest.replace("\"model.ttl\"", "\"model.ttl\", \".git/config\"")
        } else {
            manifest
        };
        assert!(!listed || manifest.contains(".git/config"));
        std::fs::write(origin.join("seams.toml"), manifest).unwrap();
        git(&origin, &["add", "."]);
        git(&origin, &["commit", "-q", "-m", what]);
        let clone = dir.path().join(format!("clone{n}"));
        git(
            dir.path(),
            &["clone", "-q", "origin", clone.to_str().unwrap()],
        );
        assert_eq!(std::fs::read(clone.join(".git/config")).unwrap(), config);
        for command in ["generate", "check"] {
            let run = seams_in(&clone, &[command]);
            assert_eq!(run.code, 1, "{what}: {command}: {run:?}");
            let said = if listed {
                "is inside a version-control directory"
            } else {
                "seams replays only the journals it wrote here"
            };
            let printed = format!("{}{}", run.stdout, run.stderr);
            assert!(printed.contains(said), "{what}: {command}: {printed}");
        }
        assert_eq!(
            std::fs::read(clone.join(".git/config")).unwrap(),
            config,
            "{what}"
        );
        git(&clone, &["status", "--short"]);
        assert!(!marker.exists(), "{what}: the planted command ran");
        // The clone's own journal is the attacker's: removing it, as the
        // error says, lets generate run.
        if !listed {
            std::fs::remove_file(clone.join("seams.journal")).unwrap();
            let run = seams_in(&clone, &["generate"]);
            assert_eq!(run.code, 0, "{what}: {run:?}");
        }
    }
    // The planted command would have run, had the config been rewritten:
    // the test's own proof that it attacks something.
    std::fs::write(dir.path().join("probe/.git/config"), &pwned).unwrap();
    git(&dir.path().join("probe"), &["status", "--short"]);
    assert!(marker.exists(), "git did not run the fsmonitor command");
}

/// A sidecar that is a link to a device (or a FIFO) is refused at once by
/// `seams trace`, never read without end or waited on.
#[test]
fn a_sidecar_linked_to_dev_zero_or_a_fifo_is_refused_at_once() {
    for plant in ["link", "fifo"] {
        let p = chat_project();
        assert_eq!(seams_in(p.path(), &["generate"]).code, 0);
        let sidecar = p.path().join("out/conversations.html.trace.json");
        std::fs::remove_file(&sidecar).unwrap();
        if plant == "link" {
            symlink("/dev/zero", &sidecar).unwrap();
        } else {
            let status = std::process::Command::new("mkfifo")
                .arg(&sidecar)
                .status()
                .unwrap();
            assert!(status.success());
        }
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_seams"))
            .args(["trace", "out/conversations.html:22", "--project"])
            .arg(p.path())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        while child.try_wait().unwrap().is_none() {
            if std::time::Instant::now() > deadline {
                let _ = child.kill();
                panic!("{plant}: seams trace still reading after 60 s");
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        let output = child.wait_with_output().unwrap();
        assert_eq!(output.status.code(), Some(1), "{plant}: {output:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            stderr.contains("conversations.html.trace.json"),
            "{plant}: {stderr}"
        );
    }
}
