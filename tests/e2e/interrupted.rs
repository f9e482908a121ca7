//! Nothing lost when interrupted, run twice at once, or fed blank nodes:
//! a generate killed at any write, rename, deletion or sync, followed by a
//! model change, is finished by the next generate without any file called
//! edited; a hand edit made after the kill is never lost; two generates at
//! once are serialised and a check never sees one half done; anonymous
//! blank nodes give the same bytes in every process.

use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use seams_model::sha256_hex;
use seams_tests::{
    Outcome, TempProject, chat_project, check_calls_nothing_edited, redact, seams_in, sha256_of,
};

/// `seams ARGS --project DIR`, allowed to reach outside the project: the
/// `OutputsElsewhere` layout's `out` is a symlink to another file system.
fn run(project: &Path, args: &[&str]) -> Outcome {
    let mut args = args.to_vec();
    args.push("--allow-outside");
    seams_in(project, &args)
}

fn binary() -> &'static str {
    env!("CARGO_BIN_EXE_seams")
}

/// The chat model and the changes the tests make to it. The killed run
/// goes from `Original` to `PageRenamed`; the next run may see any.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Variant {
    Original,
    PageRenamed,
    PageRenamedAndRelabelled,
    Relabelled,
    ThreadRelabelled,
}

const VARIANTS: [Variant; 5] = [
    Variant::Original,
    Variant::PageRenamed,
    Variant::PageRenamedAndRelabelled,
    Variant::Relabelled,
    Variant::ThreadRelabelled,
];

fn model_text(variant: Variant) -> String {
    let original =
        std::fs::read_to_string(seams_tests::repo_root().join("examples/chat/model.ttl")).unwrap();
    let renamed = |t: String| t.replace("ui:path \"thread\"", "ui:path \"discussion\"");
    let relabelled = |t: String| t.replace("rdfs:label \"Chat\"", "rdfs:label \"Talk\"");
    match variant {
        Variant::Original => original,
        Variant::PageRenamed => renamed(original),
        Variant::PageRenamedAndRelabelled => relabelled(renamed(original)),
        Variant::Relabelled => relabelled(original),
        Variant::ThreadRelabelled => {
            original.replace("rdfs:label \"Thread\"", "rdfs:label \"The thread\"")
        }
    }
}

/// Replaces the model atomically, so that a running generate never reads
/// half a file.
fn set_model(p: &Path, variant: Variant) {
    let temp = p.join("model.ttl.new");
    std::fs::write(&temp, model_text(variant)).unwrap();
    std::fs::rename(temp, p.join("model.ttl")).unwrap();
}

/// Files with their bytes, sorted by path.
type Files = Vec<(String, Vec<u8>)>;

/// The lock and every file under `out/` (any depth), with their bytes.
fn generated_files(p: &Path) -> Files {
    let mut files = vec![(
        "seams.lock".to_owned(),
        std::fs::read(p.join("seams.lock")).unwrap(),
    )];
    let mut pending = vec![p.join("out")];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                pending.push(path);
            } else {
                let rel = path.strip_prefix(p).unwrap().to_string_lossy().into_owned();
                files.push((rel, std::fs::read(&path).unwrap()));
            }
        }
    }
    files.sort();
    files
}

/// Every file a killed run may have left, anywhere in the project.
fn temporary_files(p: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut pending = vec![p.to_owned()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                pending.push(path);
            } else if path
                .file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with(".seams-tmp-")
            {
                found.push(path);
            }
        }
    }
    found
}

/// A clean generation of each variant.
fn references() -> Vec<(Variant, Files)> {
    VARIANTS
        .iter()
        .map(|&variant| {
            let p = chat_project();
            set_model(p.path(), variant);
            assert_eq!(run(p.path(), &["generate"]).code, 0);
            (variant, generated_files(p.path()))
        })
        .collect()
}

fn reference(references: &[(Variant, Files)], variant: Variant) -> &[(String, Vec<u8>)] {
    &references.iter().find(|(v, _)| *v == variant).unwrap().1
}

/// Where a killed run's project keeps its outputs.
#[derive(Debug, Clone, Copy)]
enum Layout {
    /// `out/` in the project directory.
    OneFileSystem,
    /// `out` a symlink to a directory on another file system (a tmpfs):
    /// a run then syncs each apart, with `fsync`s of its directories.
    OutputsElsewhere,
}

/// The file system the `OutputsElsewhere` layout keeps outputs on.
const ELSEWHERE: &str = "/dev/shm";

/// A project a run was killed in.
struct Killed {
    project: TempProject,
    /// Keeps the outputs' directory alive, when elsewhere.
    _outputs: Option<tempfile::TempDir>,
}

impl Killed {
    fn path(&self) -> &Path {
        self.project.path()
    }
}

/// A generated copy of the chat example laid out as `layout`, moved to
/// `PageRenamed`, with a generate run under strace that is killed at the
/// `when`-th call of `syscalls`. Gives the project and whether the kill
/// happened (else the run finished).
fn killed_run(layout: Layout, syscalls: &str, when: usize) -> (Killed, bool) {
    let p = chat_project();
    let outputs = match layout {
        Layout::OneFileSystem => None,
        Layout::OutputsElsewhere => {
            let dir = tempfile::tempdir_in(ELSEWHERE).unwrap();
            std::os::unix::fs::symlink(dir.path(), p.path().join("out")).unwrap();
            let device = |path: &Path| {
                std::os::unix::fs::MetadataExt::dev(&std::fs::metadata(path).unwrap())
            };
            assert_ne!(
                device(p.path()),
                device(dir.path()),
                "{ELSEWHERE} must be another file system than the temporary directory {}",
                p.path().display()
            );
            Some(dir)
        }
    };
    assert_eq!(run(p.path(), &["generate"]).code, 0);
    set_model(p.path(), Variant::PageRenamed);
    let killed = killed_at(
        syscalls,
        when,
        &["generate", "-q", "--allow-outside", "--project"],
        p.path(),
    );
    let killed_in = Killed {
        project: p,
        _outputs: outputs,
    };
    (killed_in, killed)
}

/// Runs `seams ARGS PROJECT` under strace, killed at the `when`-th call of
/// `syscalls`; whether the kill happened (else the command succeeded).
fn killed_at(syscalls: &str, when: usize, args: &[&str], project: &Path) -> bool {
    let status = Command::new("strace")
        .args(["-f", "-o", "/dev/null", "-e"])
        .arg(format!("trace={syscalls}"))
        .arg("-e")
        .arg(format!("inject={syscalls}:signal=KILL:when={when}"))
        .arg(binary())
        .args(args)
        .arg(project)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("strace runs (tests/run installs it)");
    // strace dies of the same signal as the command it traces.
    let killed = status.signal() == Some(9) || status.code() == Some(137);
    assert!(killed || status.success(), "{syscalls} #{when}: {status:?}");
    killed
}

/// The classes of system call a run is killed at: every file it writes,
/// renames into place, deletes, every file it opens, and its syncs (on one
/// file system a run syncs it twice with `syncfs` and fsyncs nothing).
const KILL_AT: [&str; 5] = [
    "renameat,renameat2",
    "unlinkat",
    "write",
    "openat",
    "syncfs",
];

/// The next generate after an interruption gives exactly `clean` and
/// leaves nothing of the interrupted run.
fn generate_finishes_the_job(p: &Path, clean: &[(String, Vec<u8>)], what: &str) {
    let next = run(p, &["generate"]);
    assert_eq!(next.code, 0, "{what}: {next:?}");
    assert!(
        generated_files(p) == clean,
        "{what}: the project differs from a clean generation"
    );
    assert!(temporary_files(p).is_empty(), "{what}");
    assert!(!p.join("seams.journal").exists(), "{what}");
    assert_eq!(run(p, &["check"]).code, 0, "{what}");
}

/// Kills a generate at every call of `syscalls` in turn, changes the model
/// to each variant, and asserts that check calls nothing edited, reports
/// every leftover, and the next generate gives exactly a clean generation.
/// Gives the number of kills.
fn kill_and_change_the_model(layout: Layout, syscalls: &str) -> usize {
    let references = references();
    let mut kills = 0;
    for when in 1.. {
        let mut finished = false;
        for (i, &variant) in VARIANTS.iter().enumerate() {
            let (p, killed) = killed_run(layout, syscalls, when);
            if !killed {
                finished = true;
                break;
            }
            kills += 1;
            let what =
                format!("{layout:?}: killed at {syscalls} #{when}, then {variant:?} (case {i})");
            let leftovers = temporary_files(p.path());
            set_model(p.path(), variant);
            let checked = check_calls_nothing_edited(p.path(), &what);
            for leftover in &leftovers {
                let rel = leftover.strip_prefix(p.path()).unwrap().to_string_lossy();
                assert!(
                    checked.contains(&format!("leftover: {rel}:")),
                    "{what}: {rel} is not reported:\n{checked}"
                );
            }
            generate_finishes_the_job(p.path(), reference(&references, variant), &what);
        }
        if finished {
            break;
        }
    }
    // Seen with --nocapture: how many runs were really killed.
    eprintln!("{layout:?}: killed at {syscalls}: {kills} runs");
    kills
}

// One test per class of system call, so that the harness runs them side by
// side; together they kill well over 200 runs (asserted in each below for
// its share).

#[test]
fn killed_at_any_rename_then_the_model_changes() {
    assert!(kill_and_change_the_model(Layout::OneFileSystem, KILL_AT[0]) >= 25);
}

#[test]
fn killed_at_any_deletion_then_the_model_changes() {
    assert!(kill_and_change_the_model(Layout::OneFileSystem, KILL_AT[1]) >= 10);
}

#[test]
fn killed_at_either_sync_then_the_model_changes() {
    // The first sync of the file system makes the journal's entry, the
    // staged outputs and the staged lock durable; the second the renames,
    // the deletions and the lock's rename. Each kill is followed by five
    // model changes.
    assert!(kill_and_change_the_model(Layout::OneFileSystem, KILL_AT[4]) >= 10);
}

#[test]
fn killed_at_any_write_then_the_model_changes() {
    // strace counts each thread's calls apart: a kill lands at the N-th
    // write of whichever thread makes one first. The main thread (journal,
    // outputs, lock) writes 4 times here, and no other thread more often
    // since renders are written on threads of their own.
    assert!(kill_and_change_the_model(Layout::OneFileSystem, KILL_AT[2]) >= 20);
}

#[test]
fn killed_at_any_open_then_the_model_changes() {
    assert!(kill_and_change_the_model(Layout::OneFileSystem, KILL_AT[3]) >= 100);
}

#[test]
fn killed_at_any_sync_or_rename_with_the_outputs_on_another_file_system_then_the_model_changes() {
    // The outputs' file system and the project's are synced apart: the
    // journal's fsync and its directory's before anything is staged, the
    // staged outputs' file system and the staged lock before anything is
    // renamed, then the output directory and the project directory.
    let layout = Layout::OutputsElsewhere;
    assert!(kill_and_change_the_model(layout, "fsync") >= 20);
    assert!(kill_and_change_the_model(layout, "syncfs") >= 5);
    assert!(kill_and_change_the_model(layout, "renameat,renameat2") >= 25);
}

#[test]
fn a_storm_of_kills_each_followed_by_a_model_change_never_calls_a_file_edited() {
    // Kills in a row on one project, no clean run between them: each
    // generate takes the model a step further and is killed at a call of
    // a class and number from a fixed stream, so that a run replaces the
    // journal of one that was itself interrupted (the report: one generate
    // in 55 kills called a file only seams wrote edited).
    const ROUNDS: usize = 55;
    let references = references();
    let p = chat_project();
    assert_eq!(run(p.path(), &["generate"]).code, 0);
    // (class, the highest call number killed at): a number past a run's
    // calls lets it finish, which the storm takes too.
    let classes: [(&str, u64); 4] = [
        ("renameat,renameat2", 8),
        ("unlinkat", 3),
        ("write", 6),
        ("syncfs", 2),
    ];
    let mut state = 0x5707_u64;
    let mut next = |n: u64| {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (state >> 33) % n
    };
    let (mut kills, mut variant) = (0, Variant::Original);
    for round in 0..ROUNDS {
        variant = VARIANTS[(round + 1) % VARIANTS.len()];
        set_model(p.path(), variant);
        let (class, most) = classes[usize::try_from(next(4)).unwrap()];
        let when = 1 + usize::try_from(next(most)).unwrap();
        let what = format!("round {round}: {variant:?}, killed at {class} #{when}");
        let killed = killed_at(
            class,
            when,
            &["generate", "-q", "--allow-outside", "--project"],
            p.path(),
        );
        kills += usize::from(killed);
        check_calls_nothing_edited(p.path(), &what);
    }
    generate_finishes_the_job(p.path(), reference(&references, variant), "after the storm");
    eprintln!("the storm: {kills} of {ROUNDS} runs killed");
    assert!(kills >= ROUNDS / 2, "{kills} of {ROUNDS} runs killed");
}

#[test]
fn a_hand_edit_made_after_a_kill_is_never_lost() {
    let references = references();
    let mut kills = 0;
    for syscalls in KILL_AT {
        for when in 1.. {
            let (p, killed) = killed_run(Layout::OneFileSystem, syscalls, when);
            if !killed {
                break;
            }
            kills += 1;
            let what = format!("killed at {syscalls} #{when}");
            let app = p.path().join("out/app.py");
            let mut edited = std::fs::read(&app).unwrap();
            edited.extend_from_slice(b"# my own route\n");
            std::fs::write(&app, &edited).unwrap();
            set_model(p.path(), Variant::Relabelled);

            let check = run(p.path(), &["check"]);
            let called_edited: Vec<&str> = check
                .stdout
                .lines()
                .filter(|l| l.starts_with("hand-edited") || l.starts_with("edited-orphan"))
                .collect();
            assert_eq!(called_edited.len(), 1, "{what}: {}", check.stdout);
            assert!(called_edited[0].contains("out/app.py"), "{what}");

            let refused = run(p.path(), &["generate"]);
            assert_eq!(refused.code, 1, "{what}: {refused:?}");
            assert!(
                refused
                    .stderr
                    .contains("this file was edited since seams wrote it: out/app.py"),
                "{what}: {}",
                refused.stderr
            );
            assert_eq!(
                std::fs::read(&app).unwrap(),
                edited,
                "{what}: the edit is lost"
            );

            let forced = run(p.path(), &["generate", "--force"]);
            assert_eq!(forced.code, 0, "{what}: {forced:?}");
            assert!(
                generated_files(p.path()) == reference(&references, Variant::Relabelled),
                "{what}"
            );
        }
    }
    assert!(kills >= 40, "{kills}");
}

#[test]
fn renames_deletions_and_the_lock_reaching_the_disk_in_any_order_leave_nothing_called_edited() {
    // After the batch's sync, a run renames its outputs, deletes its
    // orphans and renames the lock, then syncs once: a power loss before
    // that sync may keep any of these and lose the others. The worst case
    // for the audit is the new lock kept with files still old or not yet
    // deleted, which the journal's old bytes account for.
    let references = references();
    let old = reference(&references, Variant::Original);
    let new = reference(&references, Variant::PageRenamed);
    let new_lock = &new.iter().find(|(path, _)| path == "seams.lock").unwrap().1;
    let changed: Vec<&(String, Vec<u8>)> = new
        .iter()
        .filter(|file| file.0 != "seams.lock" && !old.contains(file))
        .collect();
    let gone: Vec<&String> = old
        .iter()
        .map(|(path, _)| path)
        .filter(|path| !new.iter().any(|(p, _)| p == *path))
        .collect();
    assert!(
        changed.len() >= 4 && gone.len() >= 2,
        "{changed:?} {gone:?}"
    );
    // Which of the renames and deletions reached the disk: none, every
    // other one (two ways), all.
    let cases: [fn(usize) -> bool; 4] = [|_| false, |i| i % 2 == 0, |i| i % 2 == 1, |_| true];
    for (case, kept) in cases.into_iter().enumerate() {
        for next in [Variant::PageRenamed, Variant::Original] {
            let what = format!("case {case}, then {next:?}");
            // Killed before its batch's sync: the journal and the staged
            // files written, nothing renamed or deleted.
            let (p, killed) = killed_run(Layout::OneFileSystem, "syncfs", 1);
            assert!(killed, "{what}");
            assert!(p.path().join("seams.journal").exists(), "{what}");
            std::fs::write(p.path().join("seams.lock"), new_lock).unwrap();
            for (i, (path, bytes)) in changed.iter().enumerate() {
                if kept(i) {
                    std::fs::write(p.path().join(path), bytes).unwrap();
                }
            }
            for (i, path) in gone.iter().enumerate() {
                if kept(i) {
                    std::fs::remove_file(p.path().join(path)).unwrap();
                }
            }
            set_model(p.path(), next);
            let checked = check_calls_nothing_edited(p.path(), &what);
            assert!(
                checked.contains("interrupted: seams.journal"),
                "{what}: {checked}"
            );
            generate_finishes_the_job(p.path(), reference(&references, next), &what);
        }
    }
}

/// `seams check --format json`'s exit code and its problems, each as its
/// kind and path.
fn problems(p: &Path) -> (u8, Vec<String>) {
    let check = run(p, &["check", "--format", "json"]);
    let report: serde_json::Value = serde_json::from_str(&check.stdout).unwrap();
    let kinds = report["problems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            format!(
                "{} {}",
                p["kind"].as_str().unwrap(),
                p["path"].as_str().unwrap_or("")
            )
        })
        .collect();
    (check.code, kinds)
}

#[test]
fn a_kill_between_writing_a_temporary_file_and_renaming_it_leaves_nothing_unreported() {
    let (p, killed) = killed_run(Layout::OneFileSystem, "renameat,renameat2", 2);
    assert!(killed);
    // The outputs are staged as a batch, with the lock: each of them waits
    // under a temporary name when the first rename is refused.
    let leftovers: Vec<String> = temporary_files(p.path())
        .iter()
        .map(|path| {
            path.strip_prefix(p.path())
                .unwrap()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    assert!(!leftovers.is_empty());
    assert!(
        leftovers
            .iter()
            .all(|rel| rel.starts_with("out/.seams-tmp-") || rel.starts_with(".seams-tmp-")),
        "{leftovers:?}"
    );
    assert!(
        leftovers.iter().any(|rel| rel.starts_with(".seams-tmp-")),
        "the staged lock: {leftovers:?}"
    );
    let (code, kinds) = problems(p.path());
    assert_eq!(code, 1);
    for rel in &leftovers {
        assert!(
            kinds.contains(&format!("leftover {rel}")),
            "{rel}: {kinds:?}"
        );
    }
    assert!(
        kinds.contains(&"interrupted seams.journal".to_owned()),
        "{kinds:?}"
    );
    let next = run(p.path(), &["generate"]);
    assert_eq!(next.code, 0, "{next:?}");
    for rel in &leftovers {
        assert!(
            next.stdout.contains(&format!(
                "removed {rel} (a temporary file an interrupted run left)"
            )),
            "{}",
            next.stdout
        );
    }
    assert!(temporary_files(p.path()).is_empty());
    assert_eq!(run(p.path(), &["check"]).code, 0);
}

#[test]
fn two_generates_at_once_on_two_models_are_serialised_and_check_waits() {
    let references = references();
    for round in 0..15 {
        let p = chat_project();
        assert_eq!(run(p.path(), &["generate"]).code, 0);
        let (first, second) = if round % 2 == 0 {
            (Variant::PageRenamed, Variant::Relabelled)
        } else {
            (Variant::Relabelled, Variant::PageRenamedAndRelabelled)
        };
        let spawn = |args: &[&str]| {
            Command::new(binary())
                .args(args)
                .arg("--project")
                .arg(p.path())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        };
        set_model(p.path(), first);
        let a = spawn(&["generate"]);
        std::thread::sleep(std::time::Duration::from_millis(round as u64 * 2));
        set_model(p.path(), second);
        let b = spawn(&["generate"]);
        let checks: Vec<_> = (0..3).map(|_| spawn(&["check"])).collect();
        for (name, child) in [("first", a), ("second", b)] {
            let out = child.wait_with_output().unwrap();
            assert!(
                out.status.success(),
                "round {round}, {name} generate: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        for child in checks {
            let out = child.wait_with_output().unwrap();
            let stdout = String::from_utf8_lossy(&out.stdout);
            assert!(
                !stdout.contains("hand-edited") && !stdout.contains("edited-orphan"),
                "round {round}: a check saw a generate half done:\n{stdout}"
            );
        }
        assert!(
            generated_files(p.path()) == reference(&references, second),
            "round {round}: the last model's generation is not what is on disk"
        );
        assert_eq!(run(p.path(), &["check"]).code, 0, "round {round}");
    }
}

#[test]
fn no_wait_refuses_or_reports_a_running_generate() {
    let p = chat_project();
    // A held lock stands for a running generate.
    let project = seams_core::Project::load(p.path()).unwrap();
    let held = std::fs::File::open(&project.root).unwrap();
    held.lock().unwrap();
    let generate = run(p.path(), &["generate", "--no-wait"]);
    assert_eq!(generate.code, 1, "{generate:?}");
    insta::assert_snapshot!("generate_no_wait", redact(p.path(), &generate.stderr));
    assert!(!p.path().join("out").exists(), "nothing written");
    let check = run(p.path(), &["check", "--no-wait", "--format", "json"]);
    assert_eq!(check.code, 1);
    let report: serde_json::Value = serde_json::from_str(&check.stdout).unwrap();
    assert_eq!(report["problems"][0]["kind"], "generate-in-progress");
    // Without --no-wait, generate waits (saying so) and runs once the
    // other run is done.
    let waiting = Command::new(binary())
        .args(["generate", "--project"])
        .arg(p.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(500));
    assert!(!p.path().join("seams.lock").exists(), "it waited");
    held.unlock().unwrap();
    let out = waiting.wait_with_output().unwrap();
    assert!(out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .starts_with("seams generate: waiting for another seams run on this project to finish"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(p.path().join("seams.lock").exists());
}

/// A model whose items are anonymous blank nodes, in the given order.
fn blank_node_model(reversed: bool) -> String {
    let mut lines: Vec<String> = (0..40)
        .map(|i| {
            format!(
                "<urn:x> <urn:seams:test#has> [ <urn:seams:test#name> \"item {i:02}\" ; <urn:seams:test#part> [ <urn:seams:test#size> {i} ] ] ."
            )
        })
        .collect();
    if reversed {
        lines.reverse();
    }
    format!(
        "<urn:seams:test#hostile> <urn:seams:test#behaviour> \"blank-nodes\" .\n{}\n",
        lines.join("\n")
    )
}

#[test]
fn anonymous_blank_nodes_give_the_same_bytes_in_every_process() {
    let generate = |model: String| {
        let p = TempProject::new(&model, "[[generator]]\nwasm = \"hostile.wasm\"\n");
        p.add_file("hostile.wasm", seams_tests::HOSTILE_WASM);
        let out = Command::new(binary())
            .args(["generate", "--project"])
            .arg(p.path())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let files = generated_files(p.path());
        (p, files)
    };
    let (_a, first) = generate(blank_node_model(false));
    let (_b, second) = generate(blank_node_model(false));
    let (_c, reordered) = generate(blank_node_model(true));
    assert!(
        first == second,
        "two processes, the same model: different bytes"
    );
    // The lock records each model file's bytes: only that differs.
    let comparable = |files: &[(String, Vec<u8>)]| -> Vec<(String, Vec<u8>)> {
        files
            .iter()
            .map(|(path, bytes)| match path.as_str() {
                "seams.lock" => (
                    path.clone(),
                    seams_tests::without_model_files(&String::from_utf8_lossy(bytes)).into_bytes(),
                ),
                _ => (path.clone(), bytes.clone()),
            })
            .collect()
    };
    assert!(
        comparable(&first) == comparable(&reordered),
        "the same graph written in another order: different bytes"
    );
    let sidecar = first
        .iter()
        .find(|(path, _)| path == "out/items.txt.trace.json")
        .map(|(_, bytes)| String::from_utf8_lossy(bytes).into_owned())
        .unwrap();
    assert!(sidecar.contains("\"_:c14n"), "{sidecar}");
}

#[test]
fn the_output_directory_is_a_subdirectory_and_a_crafted_lock_cannot_reach_outside_it() {
    for (dir, name) in [
        (".", "output_dir_dot"),
        ("./", "output_dir_dot_slash"),
        ("", "output_dir_empty"),
    ] {
        let p = chat_project();
        let manifest = p.path().join("seams.toml");
        let text = std::fs::read_to_string(&manifest).unwrap();
        std::fs::write(
            &manifest,
            text.replace("dir = \"out\"", &format!("dir = \"{dir}\"")),
        )
        .unwrap();
        let generate = run(p.path(), &["generate"]);
        assert_eq!(generate.code, 1, "{dir:?}: {generate:?}");
        insta::assert_snapshot!(name, redact(p.path(), &generate.stderr));
    }
    // The model may not live in the output directory.
    let p = TempProject::new(
        "",
        "[output]\ndir = \"data\"\n[[generator]]\nbuiltin = \"htmx\"\n",
    );
    let manifest = p.path().join("seams.toml");
    let text = std::fs::read_to_string(&manifest).unwrap();
    std::fs::write(&manifest, text.replace("model.ttl", "data/model.ttl")).unwrap();
    let generate = run(p.path(), &["generate"]);
    assert_eq!(generate.code, 1);
    insta::assert_snapshot!(
        "output_dir_holds_the_model",
        redact(p.path(), &generate.stderr)
    );

    // A lock entry pointing at a project file is refused, and nothing is
    // deleted, after a model change that would otherwise delete orphans.
    let p = chat_project();
    assert_eq!(run(p.path(), &["generate"]).code, 0);
    let lock_path = p.path().join("seams.lock");
    let lock: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&lock_path).unwrap()).unwrap();
    let manifest_sha = sha256_of(&p.path().join("seams.toml"));
    for path in ["out/../seams.toml", "./seams.toml", "seams.toml"] {
        let mut crafted = lock.clone();
        let mut entry = crafted["outputs"][0].clone();
        entry["path"] = path.into();
        entry["sha256"] = manifest_sha.clone().into();
        crafted["outputs"].as_array_mut().unwrap().push(entry);
        std::fs::write(&lock_path, serde_json::to_string_pretty(&crafted).unwrap()).unwrap();
        set_model(p.path(), Variant::PageRenamed);
        let generate = run(p.path(), &["generate"]);
        assert_eq!(generate.code, 1, "{path}: {generate:?}");
        assert!(
            generate
                .stderr
                .contains("is not inside the output directory"),
            "{}",
            generate.stderr
        );
        assert!(p.path().join("seams.toml").exists(), "{path}");
    }
}

#[test]
fn a_journal_cut_short_by_a_crash_announces_nothing() {
    // A crash before the batch's sync can leave the journal, written in
    // place, empty, cut anywhere or ending in zeros: its run renamed and
    // deleted nothing, so it claims no file, and the next run finishes.
    let p = chat_project();
    assert_eq!(run(p.path(), &["generate"]).code, 0);
    let page = p.path().join("out/conversations.html");
    let generated = std::fs::read(&page).unwrap();
    let edited = b"<p>edited by hand</p>\n";
    // Whole, this journal would make the hand edit seams's.
    let whole = serde_json::to_string_pretty(&serde_json::json!({
        "journal_version": 1,
        "writes": [{
            "path": "out/conversations.html",
            "sha256": sha256_hex(edited),
            "generator": "htmx",
        }],
        "deletes": [],
    }))
    .unwrap();
    let zeros = [whole.as_bytes(), &[0; 64]].concat();
    for cut in [&b""[..], &whole.as_bytes()[..whole.len() / 2], &zeros] {
        let what = String::from_utf8_lossy(cut).into_owned();
        std::fs::write(&page, edited).unwrap();
        std::fs::write(p.path().join("seams.journal"), cut).unwrap();
        let (_, kinds) = problems(p.path());
        for problem in [
            "interrupted seams.journal",
            "hand-edited out/conversations.html",
        ] {
            assert!(kinds.contains(&problem.to_owned()), "{what}: {kinds:?}");
        }
        let generate = run(p.path(), &["generate"]);
        assert_eq!(generate.code, 1, "{what}: {generate:?}");
        assert!(
            generate.stderr.contains("conversations.html"),
            "{what}: {generate:?}"
        );
        assert_eq!(std::fs::read(&page).unwrap(), edited, "{what}");
        std::fs::write(&page, &generated).unwrap();
        let generate = run(p.path(), &["generate"]);
        assert_eq!(generate.code, 0, "{what}: {generate:?}");
        assert!(!p.path().join("seams.journal").exists(), "{what}");
        assert_eq!(run(p.path(), &["check"]).code, 0, "{what}");
    }
}

#[test]
fn a_broken_or_crafted_journal_is_refused_and_touches_nothing() {
    let p = chat_project();
    assert_eq!(run(p.path(), &["generate"]).code, 0);
    let journal = p.path().join("seams.journal");

    // Not JSON: named, with what to do; check says so in its document.
    std::fs::write(&journal, "{ half a journal").unwrap();
    let generate = run(p.path(), &["generate"]);
    assert_eq!(generate.code, 1, "{generate:?}");
    assert!(
        generate.stderr.contains("seams.journal"),
        "{}",
        generate.stderr
    );
    let check = run(p.path(), &["check", "--format", "json"]);
    let report: serde_json::Value = serde_json::from_str(&check.stdout).unwrap();
    assert_eq!(report["problems"][0]["kind"], "lock-unreadable");
    assert_eq!(report["problems"][0]["path"], "seams.journal");

    // Crafted journals (paths outside the output directory announced as
    // written or deleted, a model write naming a file that is not one of
    // `[model] files`), unsealed or with a seal made up: refused before
    // anything in them is used, and the project's files stay. (The checks
    // behind the seal are unit-tested in seams-core.)
    let manifest_sha = sha256_of(&p.path().join("seams.toml"));
    let manifest = std::fs::read(p.path().join("seams.toml")).unwrap();
    let before = std::fs::read(p.path().join("model.ttl")).unwrap();
    let crafted = [
        serde_json::json!({
            "journal_version": 1,
            "writes": [{ "path": "seams.toml", "sha256": manifest_sha, "generator": "htmx" }],
            "deletes": [],
        }),
        serde_json::json!({
            "journal_version": 1,
            "writes": [],
            "deletes": ["out/../model.ttl"],
        }),
        serde_json::json!({
            "journal_version": 3,
            "writes": [],
            "deletes": [],
            "model": { "path": "seams.toml", "previous": manifest_sha, "text": "pwned" },
        }),
        serde_json::json!({
            "journal_version": 4,
            "writes": [],
            "deletes": [],
            "model": { "path": "model.ttl", "previous": sha256_hex(&before), "text": "pwned" },
            "seal": "ab".repeat(32),
        }),
    ];
    for crafted in crafted {
        std::fs::write(&journal, crafted.to_string()).unwrap();
        set_model(p.path(), Variant::PageRenamed);
        let generate = run(p.path(), &["generate"]);
        assert_eq!(generate.code, 1, "{crafted}: {generate:?}");
        assert!(
            generate
                .stderr
                .contains("seams replays only the journals it wrote here"),
            "{}",
            generate.stderr
        );
        assert_eq!(
            std::fs::read(p.path().join("seams.toml")).unwrap(),
            manifest
        );
        set_model(p.path(), Variant::Original);
        assert_eq!(std::fs::read(p.path().join("model.ttl")).unwrap(), before);
    }
    // A journal of a newer seams is refused naming both versions.
    std::fs::write(
        &journal,
        r#"{"journal_version": 9, "writes": [], "deletes": []}"#,
    )
    .unwrap();
    let generate = run(p.path(), &["generate"]);
    assert_eq!(generate.code, 1);
    assert!(
        generate.stderr.contains("journal_version 9 is not 4"),
        "{}",
        generate.stderr
    );
}

/// A write-back is one run: the model file and the outputs it changes are
/// in one journal. Killed at any rename, deletion or sync, the project is
/// left as it was (the model untouched, the user's edit still in the
/// output, nothing else changed) or the next generate finishes it to
/// exactly what a clean generation of the edited model gives, the model
/// edited, whether or not the model file had reached the disk.
#[test]
fn a_write_back_killed_at_any_step_leaves_model_and_outputs_as_they_were_or_both_changed() {
    let references = references();
    let original = reference(&references, Variant::Original);
    let edited_model = model_text(Variant::Relabelled);
    let mut outcomes = [0usize; 2];
    for syscalls in ["renameat,renameat2", "unlinkat", "syncfs", "write"] {
        for when in 1.. {
            let p = chat_project();
            assert_eq!(run(p.path(), &["generate"]).code, 0);
            let page = p.path().join("out/conversations.html");
            let edit = std::fs::read_to_string(&page)
                .unwrap()
                .replace("<h1>Chat</h1>", "<h1>Talk</h1>");
            std::fs::write(&page, &edit).unwrap();
            let args = [
                "write-back",
                "--apply",
                "--accept-effects",
                "conversations.html",
                "--project",
            ];
            let killed = killed_at(syscalls, when, &args, p.path());
            let what = format!("write-back killed at {syscalls} #{when}");
            let next = run(p.path(), &["generate"]);
            let model = std::fs::read_to_string(p.path().join("model.ttl")).unwrap();
            if model == edited_model {
                // Begun: the next generate finished it.
                assert_eq!(next.code, 0, "{what}: {next:?}");
                assert!(
                    generated_files(p.path()) == reference(&references, Variant::Relabelled),
                    "{what}: the project differs from a clean generation"
                );
                assert!(temporary_files(p.path()).is_empty(), "{what}");
                assert!(!p.path().join("seams.journal").exists(), "{what}");
                outcomes[1] += 1;
            } else {
                // Not begun: all as it was, the edit still there (which
                // the next generate refuses to overwrite).
                assert_eq!(model, model_text(Variant::Original), "{what}");
                assert_eq!(next.code, 1, "{what}: {next:?}");
                assert!(
                    next.stderr.contains("out/conversations.html"),
                    "{what}: {next:?}"
                );
                let files = generated_files(p.path());
                for (path, bytes) in original {
                    let now = &files.iter().find(|(p, _)| p == path).unwrap().1;
                    if path == "out/conversations.html" {
                        assert_eq!(now, edit.as_bytes(), "{what}: the edit is lost");
                    } else {
                        assert_eq!(now, bytes, "{what}: {path} changed");
                    }
                }
                outcomes[0] += 1;
            }
            if !killed {
                break;
            }
        }
    }
    // Both happen: killed before the journal is written, and after.
    eprintln!("write-back runs: {outcomes:?} (as it was, finished)");
    assert!(outcomes[0] >= 1 && outcomes[1] >= 10, "{outcomes:?}");
}
