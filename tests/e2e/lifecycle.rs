//! Nothing lost, nothing stale: `seams check` reports every state of every
//! file, `seams generate` refuses to destroy edits, repairs what is missing,
//! deletes clean orphans, pins components and does nothing when nothing
//! changed; an interrupted generate leaves a state that check describes and
//! the next generate repairs.

use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::process::Command;

use seams_tests::{HOSTILE_WASM, TempProject, seams};

/// Library generates of a project that keep their record of the locked
/// files' stats in a directory of their own.
struct Recording {
    _cache: tempfile::TempDir,
    stat_dir: std::path::PathBuf,
    runtime: seams_runtime::Runtime,
    project: seams_core::Project,
}

impl Recording {
    fn of(p: &TempProject) -> Recording {
        let cache = tempfile::tempdir().unwrap();
        Recording {
            stat_dir: cache.path().join("stat"),
            _cache: cache,
            runtime: seams_runtime::Runtime::new(seams::cli::cache_dir()).unwrap(),
            project: seams_core::Project::load(p.path()).unwrap(),
        }
    }

    fn generate(&self) -> Result<seams_core::GenerateReport, seams_core::GenerateError> {
        let options = seams_core::GenerateOptions {
            stat_cache: Some(self.stat_dir.clone()),
            ..seams_core::GenerateOptions::default()
        };
        seams_core::generate(&self.project, &self.runtime, &options)
    }

    /// The record's file, the only one, and its text.
    fn record(&self) -> (std::path::PathBuf, String) {
        let files: Vec<_> = std::fs::read_dir(&self.stat_dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        assert_eq!(files.len(), 1, "{files:?}");
        let text = std::fs::read_to_string(&files[0]).unwrap();
        (files[0].clone(), text)
    }
}

/// The record's line for the file at `path` holding the bytes of hash `sha`
/// with metadata `stat`.
fn record_line(sha: &str, path: &str, stat: &std::fs::Metadata) -> String {
    format!(
        "{sha} {} {} {} {}.{} {}.{} {path}",
        stat.dev(),
        stat.ino(),
        stat.size(),
        stat.mtime(),
        stat.mtime_nsec(),
        stat.ctime(),
        stat.ctime_nsec()
    )
}

/// A generated copy of the chat example.
fn chat() -> TempProject {
    let p = seams_tests::chat_project();
    assert_eq!(run(&p, &["generate"]).code, 0);
    p
}

fn run(p: &TempProject, args: &[&str]) -> seams_tests::Outcome {
    let mut all: Vec<&str> = args.to_vec();
    all.extend(["--project", p.path().to_str().unwrap()]);
    seams(&all)
}

fn edit(p: &TempProject, rel: &str, from: &str, to: &str) {
    let path = p.path().join(rel);
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains(from), "{rel} lacks {from:?}");
    std::fs::write(&path, text.replace(from, to)).unwrap();
}

/// The thread page moves to `discussion.html`: the conversations page
/// changes, `thread.html` and its sidecar become orphans.
fn rename_thread_page(p: &TempProject) {
    edit(
        p,
        "model.ttl",
        "ui:path \"thread\"",
        "ui:path \"discussion\"",
    );
}

#[test]
fn a_fresh_project_checks_clean() {
    let p = chat();
    let check = run(&p, &["check"]);
    assert_eq!(check.code, 0);
    insta::assert_snapshot!("check_clean", check.stdout);
}

#[test]
fn a_model_change_makes_files_stale_and_generate_fixes_them() {
    let p = chat();
    edit(
        &p,
        "model.ttl",
        "rdfs:label \"Chat\"",
        "rdfs:label \"Talk\"",
    );
    let check = run(&p, &["check"]);
    assert_eq!(check.code, 1);
    insta::assert_snapshot!("check_stale", check.stdout);
    let generate = run(&p, &["generate"]);
    assert_eq!(generate.code, 0, "{generate:?}");
    insta::assert_snapshot!("generate_after_model_change", generate.stdout);
    assert_eq!(run(&p, &["check"]).code, 0);
}

#[test]
fn hand_edited_files_are_reported_and_never_overwritten_without_force() {
    let p = chat();
    edit(
        &p,
        "out/thread.html",
        "<h2>Thread</h2>",
        "<h2>My thread</h2>",
    );
    edit(
        &p,
        "out/conversations.html.trace.json",
        "\"line\": 1",
        "\"line\": 99",
    );
    edit(
        &p,
        "model.ttl",
        "rdfs:label \"Chat\"",
        "rdfs:label \"Talk\"",
    );
    let check = run(&p, &["check"]);
    assert_eq!(check.code, 1);
    insta::assert_snapshot!("check_hand_edited", check.stdout);

    let before = p.files();
    let generate = run(&p, &["generate"]);
    assert_eq!(generate.code, 1);
    insta::assert_snapshot!("generate_refuses_hand_edited", generate.stderr);
    assert!(p.files() == before, "nothing is written");

    let forced = run(&p, &["generate", "--force"]);
    assert_eq!(forced.code, 0, "{forced:?}");
    assert!(
        !std::fs::read_to_string(p.path().join("out/thread.html"))
            .unwrap()
            .contains("My thread")
    );
    assert_eq!(run(&p, &["check"]).code, 0);
}

#[test]
fn missing_files_are_reported_and_regenerated() {
    let p = chat();
    std::fs::remove_file(p.path().join("out/thread.html")).unwrap();
    std::fs::remove_file(p.path().join("out/thread.html.trace.json")).unwrap();
    let check = run(&p, &["check"]);
    assert_eq!(check.code, 1);
    insta::assert_snapshot!("check_missing", check.stdout);
    let generate = run(&p, &["generate"]);
    assert_eq!(generate.code, 0);
    insta::assert_snapshot!("generate_missing", generate.stdout);
    assert_eq!(run(&p, &["check"]).code, 0);
}

#[test]
fn orphans_are_reported_and_deleted_with_their_sidecars_unless_edited() {
    let p = chat();
    rename_thread_page(&p);
    let check = run(&p, &["check"]);
    assert_eq!(check.code, 1);
    insta::assert_snapshot!("check_orphans", check.stdout);
    let generate = run(&p, &["generate"]);
    assert_eq!(generate.code, 0, "{generate:?}");
    insta::assert_snapshot!("generate_deletes_orphans", generate.stdout);
    assert!(!p.path().join("out/thread.html").exists());
    assert!(!p.path().join("out/thread.html.trace.json").exists());
    assert!(p.path().join("out/discussion.html.trace.json").exists());
    assert_eq!(run(&p, &["check"]).code, 0);

    // An orphan edited since is not deleted without --force.
    let p = chat();
    edit(&p, "out/thread.html", "<h2>Thread</h2>", "<h2>Mine</h2>");
    rename_thread_page(&p);
    assert!(
        run(&p, &["check"])
            .stdout
            .contains("edited-orphan: out/thread.html: ")
    );
    let refused = run(&p, &["generate"]);
    assert_eq!(refused.code, 1);
    assert!(
        refused.stderr.contains("out/thread.html"),
        "{}",
        refused.stderr
    );
    assert!(p.path().join("out/thread.html").exists());
    assert_eq!(run(&p, &["generate", "--force"]).code, 0);
    assert!(!p.path().join("out/thread.html").exists());
}

#[test]
fn an_unchanged_project_runs_nothing_and_touches_nothing() {
    let p = chat();
    let mtimes = |p: &TempProject| {
        p.files()
            .into_iter()
            .map(|(f, _)| {
                std::fs::metadata(p.path().join(&f))
                    .unwrap()
                    .modified()
                    .unwrap()
            })
            .collect::<Vec<_>>()
    };
    let before = mtimes(&p);
    std::thread::sleep(std::time::Duration::from_millis(20));
    let again = run(&p, &["generate"]);
    assert_eq!(again.code, 0);
    insta::assert_snapshot!("generate_up_to_date", again.stdout);
    assert_eq!(mtimes(&p), before, "no file is touched");

    // Any input changing means work again: seams.toml here.
    edit(&p, "seams.toml", "[model]", "# a comment\n[model]");
    assert!(!run(&p, &["generate"]).stdout.starts_with("up to date"));

    // Another seams may render or trace differently: it generates again,
    // and with the same bytes rewrites only the lock.
    let version = format!("\"seams_version\": \"{}\"", env!("CARGO_PKG_VERSION"));
    edit(&p, "seams.lock", &version, "\"seams_version\": \"0.0.1\"");
    let other = run(&p, &["generate"]);
    assert_eq!(other.code, 0, "{other:?}");
    assert!(!other.stdout.starts_with("up to date"), "{}", other.stdout);
    assert!(other.stdout.contains("0 written"), "{}", other.stdout);
    assert!(
        std::fs::read_to_string(p.path().join("seams.lock"))
            .unwrap()
            .contains(&version)
    );
}

/// A no-op is decided from bytes: a model file rewritten with the same
/// bytes (and a new mtime) stays a no-op; one byte more is work, even when
/// it does not change the parsed model (then only the lock is rewritten,
/// recording the new bytes).
#[test]
fn a_no_op_is_decided_from_the_model_files_bytes() {
    let p = chat();
    let model = p.path().join("model.ttl");
    let bytes = std::fs::read(&model).unwrap();
    std::fs::remove_file(&model).unwrap();
    std::fs::write(&model, &bytes).unwrap();
    let later = std::time::SystemTime::now() + std::time::Duration::from_secs(3600);
    std::fs::File::options()
        .write(true)
        .open(&model)
        .unwrap()
        .set_modified(later)
        .unwrap();
    let same = run(&p, &["generate"]);
    assert!(same.stdout.starts_with("up to date"), "{same:?}");

    let mut changed = bytes.clone();
    changed.extend_from_slice(b"# one comment more\n");
    std::fs::write(&model, &changed).unwrap();
    let work = run(&p, &["generate"]);
    assert_eq!(work.code, 0, "{work:?}");
    assert!(!work.stdout.starts_with("up to date"), "{}", work.stdout);
    assert!(
        work.stdout.contains("wrote seams.lock\n0 written"),
        "{}",
        work.stdout
    );
    let lock = std::fs::read_to_string(p.path().join("seams.lock")).unwrap();
    assert!(lock.contains(&seams_tests::sha256_of(&model)), "{lock}");
    assert!(run(&p, &["generate"]).stdout.starts_with("up to date"));
    assert_eq!(run(&p, &["check"]).code, 0);
}

/// A no-op reads again only the locked files whose stat changed since a
/// no-op last read them: an output rewritten in place with as many bytes
/// and its modification time set back is found (its change time moved).
/// The stat cache is trusted as compiled components in the same private
/// cache are: by generate, never by check, which reads every byte.
#[test]
fn a_no_op_reads_again_only_the_files_whose_stat_changed() {
    let p = chat();
    let recording = Recording::of(&p);
    let generate = || recording.generate();
    let recorded = || recording.record();
    // Out of the clock tick the files were written in, so that they are
    // recorded.
    std::thread::sleep(std::time::Duration::from_millis(50));
    assert!(generate().unwrap().up_to_date);
    let (cache_file, text) = recorded();
    let page = p.path().join("out/thread.html");
    let sha = seams_tests::sha256_of(&page);
    assert!(text.contains(&format!("{sha} ")), "{text}");
    assert!(text.contains(" out/thread.html\n"), "{text}");
    assert!(generate().unwrap().up_to_date);

    let original = std::fs::read_to_string(&page).unwrap();
    let modified = std::fs::metadata(&page).unwrap().modified().unwrap();
    let edited = original.replacen("<", "[", 1);
    assert_eq!(edited.len(), original.len());
    std::fs::write(&page, &edited).unwrap();
    let set_back = |path: &Path| {
        std::fs::File::options()
            .write(true)
            .open(path)
            .unwrap()
            .set_modified(modified)
            .unwrap();
    };
    set_back(&page);
    match generate() {
        Err(seams_core::GenerateError::HandEdited { overwrite, .. }) => {
            assert_eq!(overwrite, ["out/thread.html"]);
        }
        other => panic!("an edit of the same length is found: {other:?}"),
    }

    // A cache that vouches for the edited bytes (forged here with their
    // stat) is believed by generate; check reads every byte.
    let stat = std::fs::metadata(&page).unwrap();
    let line = text
        .lines()
        .find(|l| l.ends_with(" out/thread.html"))
        .unwrap();
    let forged = record_line(&sha, "out/thread.html", &stat);
    std::fs::write(&cache_file, text.replace(line, &forged)).unwrap();
    assert!(generate().unwrap().up_to_date);
    let check = run(&p, &["check"]);
    assert_eq!(check.code, 1, "{check:?}");
    assert!(check.stdout.contains("out/thread.html"), "{}", check.stdout);

    // Put back, the page is up to date again, read and recorded anew.
    std::fs::write(&page, &original).unwrap();
    set_back(&page);
    std::thread::sleep(std::time::Duration::from_millis(50));
    assert!(generate().unwrap().up_to_date);
    let (_, again) = recorded();
    assert!(!again.contains(&forged), "{again}");
    assert_eq!(again.lines().count(), text.lines().count());
}

#[test]
fn a_generate_records_the_stat_of_every_file_it_wrote_for_the_next_no_op() {
    let p = seams_tests::chat_project();
    let recording = Recording::of(&p);
    let report = recording.generate().unwrap();
    assert!(!report.written.is_empty());
    let lock: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(p.path().join("seams.lock")).unwrap())
            .unwrap();
    let outputs = lock["outputs"].as_array().unwrap();
    // Each recorded line is the stat the locked file has, with the lock's
    // hash.
    let true_of_the_files = |text: &str| {
        for line in text.lines().skip(1) {
            let path = line.rsplit(' ').next().unwrap();
            let output = outputs.iter().find(|o| o["path"] == path).unwrap();
            let stat = std::fs::metadata(p.path().join(path)).unwrap();
            let sha = output["sha256"].as_str().unwrap();
            assert_eq!(line, record_line(sha, path, &stat));
        }
        text.lines().count() - 1
    };
    // What it records is the stat each locked file has, with the lock's
    // hash. (Those changed in the record's own clock tick are left out, for
    // a write in that tick would not change their stat: at this size, most
    // or all of them; see the unit test for files written earlier.)
    true_of_the_files(&recording.record().1);
    // Out of that tick, a no-op reads those left out and records them with
    // the others.
    std::thread::sleep(std::time::Duration::from_millis(50));
    assert!(recording.generate().unwrap().up_to_date);
    let (_, text) = recording.record();
    assert_eq!(true_of_the_files(&text), outputs.len(), "{text}");
}

#[test]
fn a_failed_generator_runs_again_on_the_next_generate() {
    let p = chat();
    edit(
        &p,
        "model.ttl",
        "ui:name \"Message\"",
        "ui:name \"message\"",
    );
    let failed = run(&p, &["generate"]);
    assert_eq!(failed.code, 1, "{failed:?}");
    let again = run(&p, &["generate"]);
    assert_eq!(again.code, 1, "not up to date after a failure: {again:?}");
    assert!(
        again.stderr.contains("ui:name value \"message\""),
        "{}",
        again.stderr
    );

    edit(
        &p,
        "model.ttl",
        "ui:name \"message\"",
        "ui:name \"Message\"",
    );
    assert_eq!(run(&p, &["generate"]).code, 0);
    assert!(run(&p, &["generate"]).stdout.starts_with("up to date"));
    assert_eq!(run(&p, &["check"]).code, 0);
}

/// Replaces sha256 digests (which change with the fixture's code) by
/// `[sha256]`, keeping the rest of a message for its snapshot.
fn redact_hashes(text: &str) -> String {
    let mut out = String::new();
    let mut run = String::new();
    for c in text.chars().chain(['\0']) {
        if c.is_ascii_hexdigit() && !c.is_ascii_uppercase() {
            run.push(c);
            continue;
        }
        out.push_str(if run.len() == 64 { "[sha256]" } else { &run });
        run.clear();
        if c != '\0' {
            out.push(c);
        }
    }
    out
}

/// A project whose only generator is the hostile fixture, doing
/// `behaviour`.
fn hostile_only(behaviour: &str) -> TempProject {
    let p = TempProject::new(
        &format!("<urn:seams:test#hostile> <urn:seams:test#behaviour> \"{behaviour}\" .\n"),
        "[[generator]]\nwasm = \"hostile.wasm\"\n",
    );
    p.add_file("hostile.wasm", HOSTILE_WASM);
    p
}

#[test]
fn a_changed_component_is_refused_unless_updated() {
    let p = hostile_only("ok");
    assert_eq!(run(&p, &["generate"]).code, 0);
    // The same component with a custom section appended: other bytes.
    let mut bytes = std::fs::read(HOSTILE_WASM).unwrap();
    bytes.extend_from_slice(b"\x00\x05\x04test");
    std::fs::write(p.path().join("hostile.wasm"), &bytes).unwrap();

    let check = run(&p, &["check"]);
    assert_eq!(check.code, 1);
    insta::assert_snapshot!("check_component_changed", redact_hashes(&check.stdout));
    let refused = run(&p, &["generate"]);
    assert_eq!(refused.code, 1);
    insta::assert_snapshot!(
        "generate_refuses_changed_component",
        redact_hashes(&refused.stderr)
    );
    let updated = run(&p, &["generate", "--update"]);
    assert_eq!(updated.code, 0, "{updated:?}");
    assert_eq!(run(&p, &["check"]).code, 0);
}

#[test]
fn check_json_has_its_documented_shape() {
    let p = chat();
    rename_thread_page(&p);
    std::fs::remove_file(p.path().join("out/conversations.html")).unwrap();
    let check = run(&p, &["check", "--format", "json"]);
    assert_eq!(check.code, 1);
    let report: serde_json::Value = serde_json::from_str(&check.stdout).unwrap();
    let object = report.as_object().unwrap();
    assert_eq!(
        object.keys().collect::<Vec<_>>(),
        ["check_version", "clean", "problems"]
    );
    assert_eq!(report["check_version"], 1);
    assert_eq!(report["clean"], false);
    let kinds = [
        "stale",
        "hand-edited",
        "missing",
        "orphan",
        "edited-orphan",
        "unlocked",
        "component-changed",
        "generator-failed",
        "no-lock",
    ];
    let mut seen = Vec::new();
    for problem in report["problems"].as_array().unwrap() {
        let keys: Vec<&String> = problem.as_object().unwrap().keys().collect();
        assert!(
            keys == ["kind", "message", "path"] || keys == ["kind", "message"],
            "{keys:?}"
        );
        let kind = problem["kind"].as_str().unwrap();
        assert!(kinds.contains(&kind), "{kind}");
        seen.push((
            kind.to_owned(),
            problem["path"].as_str().unwrap_or("").to_owned(),
        ));
    }
    assert!(
        seen.contains(&("missing".into(), "out/conversations.html".into())),
        "{seen:?}"
    );
    assert!(
        seen.contains(&("orphan".into(), "out/thread.html.trace.json".into())),
        "{seen:?}"
    );
    assert!(
        seen.contains(&("missing".into(), "out/discussion.html".into())),
        "{seen:?}"
    );
}

/// Every file of a project except its model and manifest, for comparing
/// outcomes.
fn generated_files(p: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = vec![(
        "seams.lock".to_owned(),
        std::fs::read(p.join("seams.lock")).unwrap(),
    )];
    let mut entries: Vec<_> = std::fs::read_dir(p.join("out"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for path in entries {
        out.push((
            path.file_name().unwrap().to_string_lossy().into_owned(),
            std::fs::read(&path).unwrap(),
        ));
    }
    out
}

/// After an interruption: check describes it without calling anything
/// edited, and the next generate gives exactly the reference result.
fn assert_recovers(p: &TempProject, reference: &[(String, Vec<u8>)], what: &str) {
    seams_tests::check_calls_nothing_edited(p.path(), what);
    let repair = run(p, &["generate"]);
    assert_eq!(repair.code, 0, "{what}: {repair:?}");
    assert!(
        generated_files(p.path()) == reference,
        "{what}: the repaired project differs from a clean generation"
    );
    assert_eq!(run(p, &["check"]).code, 0, "{what}");
}

#[test]
fn a_generate_that_fails_after_any_write_is_repaired_by_the_next() {
    let reference = chat();
    rename_thread_page(&reference);
    assert_eq!(run(&reference, &["generate"]).code, 0);
    let reference = generated_files(reference.path());

    let runtime = seams_runtime::Runtime::new(seams::cli::cache_dir()).unwrap();
    let mut k = 0;
    loop {
        let p = chat();
        rename_thread_page(&p);
        let project = seams_core::Project::load(p.path()).unwrap();
        let result = seams_core::testing::generate_failing_after(
            &project,
            &runtime,
            &seams_core::GenerateOptions::default(),
            k,
        );
        let finished = result.is_ok();
        if !finished {
            let message = result.unwrap_err().to_string();
            assert!(message.contains("injected fault"), "{message}");
            // After the journal, the first write is an output: its failure
            // names the generator that gave it and the file.
            if k == 1 {
                assert!(
                    message.starts_with("generator ") && message.contains(": cannot write "),
                    "{message}"
                );
            }
        }
        assert_recovers(&p, &reference, &format!("fault after {k} writes"));
        if finished {
            break;
        }
        k += 1;
    }
    assert!(
        k >= 5,
        "the change takes several writes and deletes, then the lock: {k}"
    );
}

#[test]
fn a_killed_generate_is_repaired_by_the_next() {
    let reference = chat();
    rename_thread_page(&reference);
    assert_eq!(run(&reference, &["generate"]).code, 0);
    let reference = generated_files(reference.path());
    for delay_ms in (0..40).step_by(3) {
        let p = chat();
        rename_thread_page(&p);
        let mut child = Command::new(env!("CARGO_BIN_EXE_seams"))
            .args(["generate", "--project"])
            .arg(p.path())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(delay_ms));
        let _ = child.kill();
        let _ = child.wait();
        assert_recovers(&p, &reference, &format!("killed after {delay_ms} ms"));
    }
}

#[test]
fn a_lock_of_an_older_format_is_read_reported_and_rewritten_by_the_next_generate() {
    let p = chat();
    let lock_path = p.path().join("seams.lock");
    let current = std::fs::read_to_string(&lock_path).unwrap();
    assert!(current.contains("\"lock_version\": 6"), "{current}");
    // An output's indexes, its ranges (`3-7`) spelled out.
    let indexes = |text: &str| -> Vec<usize> {
        let mut all = Vec::new();
        for word in text.split(' ').filter(|w| !w.is_empty()) {
            let (first, last) = word.split_once('-').unwrap_or((word, word));
            all.extend(first.parse::<usize>().unwrap()..=last.parse().unwrap());
        }
        all
    };
    let mut ranges = 0;
    // Format 5: every index written out, no ranges.
    let v5 = {
        let mut lock: serde_json::Value = serde_json::from_str(&current).unwrap();
        for output in lock["outputs"].as_array_mut().unwrap() {
            let text = output["sources"].as_str().unwrap();
            ranges += text.matches('-').count();
            let words: Vec<String> = indexes(text).iter().map(usize::to_string).collect();
            output["sources"] = words.join(" ").into();
        }
        lock["lock_version"] = 5.into();
        serde_json::to_string_pretty(&lock).unwrap() + "\n"
    };
    assert!(ranges > 0, "the chat lock has a run of indexes: {current}");
    // Format 4: each output lists its sources' IRIs, with no table.
    let v4 = {
        let mut lock: serde_json::Value = serde_json::from_str(&current).unwrap();
        let table = lock.as_object_mut().unwrap().remove("sources").unwrap();
        for output in lock["outputs"].as_array_mut().unwrap() {
            let iris: Vec<serde_json::Value> = indexes(output["sources"].as_str().unwrap())
                .into_iter()
                .map(|i| table[i].clone())
                .collect();
            output["sources"] = serde_json::Value::Array(iris);
        }
        lock["lock_version"] = 4.into();
        serde_json::to_string_pretty(&lock).unwrap() + "\n"
    };
    // Format 3: no `oci` digests (the chat example has no oci generator).
    let v3 = v4.replace("\"lock_version\": 4", "\"lock_version\": 3");
    // Format 2: nor `model_files`.
    let v2 =
        seams_tests::without_model_files(&v3).replace("\"lock_version\": 3", "\"lock_version\": 2");
    // Format 1: nor `incomplete`; an empty manifest hash meant incomplete.
    let v1 = v2
        .replace("\"lock_version\": 2", "\"lock_version\": 1")
        .replace("  \"incomplete\": false,\n", "");
    for (format, old) in [(5, v5), (4, v4), (3, v3), (2, v2), (1, v1)] {
        assert_ne!(old, current);
        std::fs::write(&lock_path, &old).unwrap();
        let outputs_before = p.files();

        let check = run(&p, &["check", "--format", "json"]);
        assert_eq!(check.code, 1, "{format}: {check:?}");
        let report: serde_json::Value = serde_json::from_str(&check.stdout).unwrap();
        let kinds: Vec<&str> = report["problems"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["kind"].as_str().unwrap())
            .collect();
        assert_eq!(kinds, ["old-lock-format"], "{format}: {}", check.stdout);

        let generate = run(&p, &["generate"]);
        assert_eq!(generate.code, 0, "{format}: {generate:?}");
        assert!(
            generate.stdout.contains("wrote seams.lock"),
            "{format}: {}",
            generate.stdout
        );
        assert_eq!(std::fs::read_to_string(&lock_path).unwrap(), current);
        let changed: Vec<String> = p
            .files()
            .into_iter()
            .zip(outputs_before)
            .filter(|(now, before)| now != before)
            .map(|(now, _)| now.0)
            .collect();
        assert_eq!(
            changed,
            ["seams.lock"],
            "{format}: only the lock is rewritten"
        );
        assert_eq!(run(&p, &["check"]).code, 0);
    }
}

#[test]
fn a_lock_of_a_newer_format_is_refused_naming_both_versions_and_nothing_is_touched() {
    let p = chat();
    let lock_path = p.path().join("seams.lock");
    let newer = std::fs::read_to_string(&lock_path)
        .unwrap()
        .replace("\"lock_version\": 6", "\"lock_version\": 7")
        .replace(
            "\"seams_version\": \"0.1.0\"",
            "\"seams_version\": \"0.9.0\"",
        );
    std::fs::write(&lock_path, &newer).unwrap();
    edit(&p, "model.ttl", "\"Chat\"", "\"Talk\"");
    let before = p.files();
    let generate = run(&p, &["generate"]);
    assert_eq!(generate.code, 1, "{generate:?}");
    insta::assert_snapshot!(
        "newer_lock_format",
        seams_tests::redact(p.path(), &generate.stderr)
    );
    assert_eq!(p.files(), before, "nothing written");
    let check = run(&p, &["check"]);
    assert_eq!(check.code, 1);
    assert!(
        check.stdout.starts_with("lock-unreadable: seams.lock: ")
            && check.stdout.contains("lock_version 7 is newer than 6"),
        "{}",
        check.stdout
    );
}

#[test]
fn outputs_reach_a_file_system_mounted_inside_the_output_directory() {
    // A run stores its larger files in the output directory as it goes,
    // then renames each into place: no rename crosses into another file
    // system, so a file for a directory mounted there is copied, and that
    // file system is synced too. The mount lives in a namespace of the
    // test's own (as root inside it), with the runs made there: a
    // generate, then one that deletes what is no longer generated.
    let p = hostile_only("nested");
    std::fs::create_dir_all(p.path().join("out/sub")).unwrap();
    let script = r#"set -e
mount -t tmpfs seams-test "$1/out/sub"
[ "$(stat -c %d "$1/out")" != "$(stat -c %d "$1/out/sub")" ]
"$2" generate --project "$1" -q
"$2" check --project "$1"
cp "$1/seams.lock" "$1/first.lock"
(cd "$1/out" && sha256sum top.txt sub/big.txt sub/small.txt)
sed -i 's/"nested"/"ok"/' "$1/model.ttl"
"$2" generate --project "$1" -q
"$2" check --project "$1"
echo "left in sub: $(ls -A "$1/out/sub" | wc -l)""#;
    let run = Command::new("unshare")
        .args(["--user", "--map-root-user", "--mount"])
        .args(["sh", "-c", script, "sh"])
        .arg(p.path())
        .arg(env!("CARGO_BIN_EXE_seams"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(
        run.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let sha = |bytes: &[u8]| seams_model::sha256_hex(bytes);
    let expected = [
        ("top.txt", sha("t".repeat(2 << 20).as_bytes())),
        ("sub/big.txt", sha("b".repeat(2 << 20).as_bytes())),
        ("sub/small.txt", sha(b"small\n")),
    ];
    let lock = std::fs::read_to_string(p.path().join("first.lock")).unwrap();
    for (path, sha256) in &expected {
        let locked = format!("\"path\": \"out/{path}\",\n      \"sha256\": \"{sha256}\"");
        assert!(stdout.contains(&format!("{sha256}  {path}")), "{stdout}");
        assert!(lock.contains(&locked), "{path}: {lock}");
    }
    assert!(stdout.contains("left in sub: 0"), "{stdout}");
    // Outside the namespace, on the project's file system: the second
    // run's file, and no temporary file.
    let left: Vec<String> = p.files().into_iter().map(|(path, _)| path).collect();
    assert!(left.contains(&"out/hello.txt".to_owned()), "{left:?}");
    assert!(!left.contains(&"out/top.txt".to_owned()), "{left:?}");
    assert!(
        !left.iter().any(|path| path.contains(".seams-tmp")),
        "{left:?}"
    );
}
