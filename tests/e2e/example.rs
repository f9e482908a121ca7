//! The examples: generating them gives exactly the committed outputs and
//! lock, every time, whatever the time zone, locale or working directory,
//! and `seams check` finds the committed files clean.

use std::path::Path;
use std::process::Command;

use seams_tests::{EXAMPLES, TempProject, example_project, repo_root, seams};

/// The `seams` binary, built from the host's `main.rs` for these tests.
fn seams_binary() -> &'static str {
    env!("CARGO_BIN_EXE_seams")
}

/// The committed files of `examples/<example>`: seams.toml, the model,
/// outputs and lock.
fn committed(example: &str) -> Vec<(String, Vec<u8>)> {
    let dir = repo_root().join("examples").join(example);
    let mut files = Vec::new();
    for rel in ["seams.toml", "model.ttl", "seams.lock"] {
        files.push((rel.to_owned(), std::fs::read(dir.join(rel)).unwrap()));
    }
    for name in seams_tests::locked_outputs(example) {
        let bytes = std::fs::read(dir.join("out").join(&name)).unwrap();
        files.push((format!("out/{name}"), bytes));
    }
    files.sort();
    files
}

fn assert_same(p: &TempProject, expected: &[(String, Vec<u8>)]) {
    let got = p.files();
    let names = |f: &[(String, Vec<u8>)]| f.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>();
    assert_eq!(names(&got), names(expected));
    for ((name, a), (_, b)) in got.iter().zip(expected) {
        assert!(
            a == b,
            "{name} differs from the committed example:\n{}",
            String::from_utf8_lossy(a)
        );
    }
}

/// Every file seams wrote has the mode a file this process creates gets
/// (0666 less the umask): a large output, written while the run goes on,
/// as much as a small one or the lock.
fn assert_modes_as_created(p: &TempProject) {
    use std::os::unix::fs::PermissionsExt;
    let mode = |path: &Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
    let probe = p.path().join("probe");
    std::fs::write(&probe, "").unwrap();
    let expected = mode(&probe);
    std::fs::remove_file(&probe).unwrap();
    let mut sizes = Vec::new();
    for (name, bytes) in p.files() {
        if name == "seams.lock" || name.starts_with("out/") {
            assert_eq!(mode(&p.path().join(&name)), expected, "{name}");
            sizes.push(bytes.len());
        }
    }
    // Both kinds were checked: outputs held in memory until the end, and
    // outputs written to disk as they were final (over 4 KiB).
    assert!(sizes.iter().any(|&n| n < 4096) && sizes.iter().any(|&n| n > 4096));
}

#[test]
fn each_example_generates_its_committed_outputs_and_lock_twice() {
    for example in EXAMPLES {
        let expected = committed(example);
        let p = example_project(example);
        let first = seams(&["generate", "--project", p.path().to_str().unwrap()]);
        assert_eq!(first.code, 0, "{example}: {first:?}");
        assert_same(&p, &expected);
        assert_modes_as_created(&p);

        let second = seams(&["generate", "--project", p.path().to_str().unwrap()]);
        assert_eq!(second.code, 0, "{example}: {second:?}");
        assert!(second.stdout.starts_with("up to date"), "{}", second.stdout);
        assert_same(&p, &expected);
    }
}

#[test]
fn each_example_is_the_same_whether_its_files_are_held_or_written_as_they_are_final() {
    let runtime = seams_runtime::Runtime::new(None).unwrap();
    // Every file written out and renamed into place; some of each; all
    // held in memory.
    for hold_bytes in [0, 4 << 10, seams_runtime::HOLD_BYTES] {
        for example in EXAMPLES {
            let expected = committed(example);
            let p = example_project(example);
            let project = seams_core::Project::load(p.path()).unwrap();
            let options = seams_core::GenerateOptions {
                hold_bytes,
                ..seams_core::GenerateOptions::default()
            };
            let report = seams_core::generate(&project, &runtime, &options).unwrap();
            let what = format!("{example} holding {hold_bytes}");
            assert!(report.failures.is_empty(), "{what}: {:?}", report.failures);
            assert!(!report.written.is_empty(), "{what}");
            // Nothing else is in the output directory: no temporary file.
            assert_same(&p, &expected);
        }
    }
}

#[test]
fn seams_check_finds_each_committed_example_clean() {
    for example in EXAMPLES {
        let dir = repo_root().join("examples").join(example);
        let run = seams(&["check", "--project", dir.to_str().unwrap()]);
        assert_eq!(
            run.code, 0,
            "examples/{example} is not clean; run `cargo run -p seams -- generate --project examples/{example}` and commit the result\n{run:?}"
        );
    }
}

#[test]
fn the_chat_example_is_the_same_under_another_time_zone_locale_and_directory() {
    let expected = committed("chat");
    let p = example_project("chat");
    let elsewhere = tempfile::tempdir().unwrap();
    let output = Command::new(seams_binary())
        .args(["generate", "--project"])
        .arg(p.path())
        .current_dir(elsewhere.path())
        .env("TZ", "Pacific/Kiritimati")
        .env("LC_ALL", "tr_TR.UTF-8")
        .env("LANG", "tr_TR.UTF-8")
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_same(&p, &expected);
    assert_eq!(
        std::fs::read_dir(elsewhere.path()).unwrap().count(),
        0,
        "nothing is written to the working directory"
    );
}

#[test]
fn a_project_given_relatively_generates_the_same() {
    let expected = committed("chat");
    let p = example_project("chat");
    let parent = p.path().parent().unwrap();
    let name = p.path().file_name().unwrap();
    let output = Command::new(seams_binary())
        .args(["generate", "--project"])
        .arg(Path::new(name))
        .current_dir(parent)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_same(&p, &expected);
}

#[test]
fn usage_errors_exit_2_and_project_errors_exit_1() {
    let run = seams(&["generate", "--no-such-flag"]);
    assert_eq!(run.code, 2, "{run:?}");
    let empty = tempfile::tempdir().unwrap();
    let run = seams(&["generate", "--project", empty.path().to_str().unwrap()]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(run.stderr.contains("no seams.toml in"), "{}", run.stderr);
}

#[test]
fn a_model_syntax_error_names_the_file_line_and_column_and_writes_nothing() {
    let p = TempProject::new(
        "@prefix ex: <urn:ex:> .\nex:a ex:b .\n",
        "[[generator]]\nbuiltin = \"htmx\"\n",
    );
    let run = seams(&["generate", "--project", p.path().to_str().unwrap()]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(run.stderr.contains("model.ttl:2:"), "{}", run.stderr);
    assert_eq!(p.files().len(), 2, "only model.ttl and seams.toml");
}

#[test]
fn every_non_blank_line_of_the_examples_has_a_template_origin() {
    for example in EXAMPLES {
        every_non_blank_line_has_a_template_origin(example);
    }
}

fn every_non_blank_line_has_a_template_origin(example: &str) {
    let out = repo_root().join("examples").join(example).join("out");
    let mut traced = 0;
    for name in seams_tests::locked_outputs(example) {
        let path = out.join(&name);
        if name.ends_with(".trace.json") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let sidecar: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(out.join(format!("{name}.trace.json"))).unwrap(),
        )
        .unwrap();
        assert_eq!(sidecar["output"], name.as_str());
        assert_eq!(sidecar["trace_version"], 1);
        let lines = sidecar["lines"].as_array().unwrap();
        let non_blank: Vec<usize> = text
            .lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty())
            .map(|(i, _)| i + 1)
            .collect();
        let numbers: Vec<usize> = lines
            .iter()
            .map(|l| l["line"].as_u64().unwrap() as usize)
            .collect();
        assert_eq!(numbers, non_blank, "{name}");
        for line in lines {
            assert!(
                !line["templates"].as_array().unwrap().is_empty(),
                "{name}: {line}"
            );
        }
        traced += 1;
    }
    // htmx pages, app.js, htmx.min.js and htmx.LICENSE, app.py,
    // schema.sql, requirements.txt, docker-compose.yml and README.md.
    let pages = if example == "chat" { 2 } else { 3 };
    assert_eq!(traced, pages + 8, "{example}");
}

#[test]
fn an_output_directory_on_another_file_system_is_written_and_checked_alike() {
    use std::os::unix::fs::MetadataExt;
    // The output directory, a symlink into /dev/shm (a tmpfs here): the
    // project's records and the outputs are then synced each on its own.
    let elsewhere = tempfile::tempdir_in("/dev/shm").unwrap();
    for example in EXAMPLES {
        let expected = committed(example);
        let p = example_project(example);
        let out = elsewhere.path().join(example);
        std::fs::create_dir(&out).unwrap();
        std::os::unix::fs::symlink(&out, p.path().join("out")).unwrap();
        let device = |path: &Path| std::fs::metadata(path).unwrap().dev();
        assert_ne!(
            device(p.path()),
            device(&out),
            "/dev/shm is the project's file system"
        );
        let project = p.path().to_str().unwrap();
        // Refused without the user's word: a cloned project's `out` may
        // point anywhere; nothing is written there.
        let refused = seams(&["generate", "--project", project]);
        assert_eq!(refused.code, 1, "{example}: {refused:?}");
        assert!(
            refused
                .stderr
                .contains("the output directory out leads outside the project")
                && refused.stderr.contains("--allow-outside"),
            "{refused:?}"
        );
        assert_eq!(std::fs::read_dir(&out).unwrap().count(), 0);
        assert!(!p.path().join("seams.lock").exists());
        let seams = |args: &[&str]| {
            let mut args = args.to_vec();
            args.push("--allow-outside");
            seams(&args)
        };

        let first = seams(&["generate", "--project", project]);
        assert_eq!(first.code, 0, "{example}: {first:?}");
        // Nothing else: no journal, no staged lock or output left behind.
        assert_same(&p, &expected);
        let again = seams(&["generate", "--project", project]);
        assert!(again.stdout.starts_with("up to date"), "{again:?}");
        let check = seams(&["check", "--project", project]);
        assert_eq!(check.code, 0, "{example}: {check:?}");

        // A changed model rewrites what it changes, on both file systems.
        let model = p.path().join("model.ttl");
        let text = std::fs::read_to_string(&model).unwrap();
        std::fs::write(
            &model,
            format!("{text}\n<urn:seams:extra> <urn:seams:p> \"x\" .\n"),
        )
        .unwrap();
        let changed = seams(&["generate", "--project", project]);
        assert_eq!(changed.code, 0, "{example}: {changed:?}");
        let check = seams(&["check", "--project", project]);
        assert_eq!(check.code, 0, "{example}: {check:?}");
        assert!(!p.path().join("seams.journal").exists());
    }
}
