//! Helpers for seams' end-to-end tests: temporary projects, fixture
//! components built from source, and the CLI run in-process or as a
//! process.

pub mod html;
pub mod listener;
pub mod registry;
pub mod webdriver;

use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// A generator that misbehaves as its model tells it to.
pub const HOSTILE_WASM: &str = env!("SEAMS_HOSTILE_WASM");
/// A WASI command component: another world.
pub const OTHER_WORLD_WASM: &str = env!("SEAMS_OTHER_WORLD_WASM");
/// An attacker's generator built against the WIT alone (no SDK).
pub const ATTACKER_WASM: &str = env!("SEAMS_ATTACKER_WASM");
/// A generator built for `seams:generator@0.9.0`.
pub const FUTURE_WASM: &str = env!("SEAMS_FUTURE_WASM");
/// The conformance generator in Rust (`tests/fixtures/labels`); its
/// Python and JavaScript twins are built by [`fixture_component`].
pub const LABELS_WASM: &str = env!("SEAMS_LABELS_WASM");

/// The repository's root: the parent of the package whose tests run, as
/// cargo tells them when it runs them, so that a test binary built in
/// another checkout sharing the target directory reads this checkout.
pub fn repo_root() -> PathBuf {
    std::env::var_os("CARGO_MANIFEST_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")))
        .parent()
        .unwrap()
        .to_owned()
}

/// The examples in `examples/`, each generated with all three built-ins.
pub const EXAMPLES: [&str; 3] = ["chat", "expense", "library"];

/// A copy of the chat example's sources (model and `seams.toml`, no
/// outputs or lock) in a temporary directory.
pub fn chat_project() -> TempProject {
    example_project("chat")
}

/// A copy of the sources of `examples/<name>` in a temporary directory.
pub fn example_project(name: &str) -> TempProject {
    let root = repo_root().join("examples").join(name);
    let p = TempProject::new(
        &std::fs::read_to_string(root.join("model.ttl")).unwrap(),
        "",
    );
    std::fs::copy(root.join("seams.toml"), p.path().join("seams.toml")).unwrap();
    p
}

/// [`example_project`] with the example's committed outputs in `out/`:
/// the text that goldens kept as claims are about.
pub fn example_project_with_outputs(name: &str) -> TempProject {
    let p = example_project(name);
    let out = repo_root().join("examples").join(name).join("out");
    for path in locked_outputs(name) {
        let to = p.path().join("out").join(&path);
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(out.join(&path), to).unwrap();
    }
    p
}

/// The files of an example's output directory that its lock records,
/// output-relative and sorted: what the tests compare and serve, whatever
/// else a user left there (a `__pycache__/` from running the app).
pub fn locked_outputs(example: &str) -> Vec<String> {
    let lock = repo_root()
        .join("examples")
        .join(example)
        .join("seams.lock");
    let lock: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(lock).unwrap()).unwrap();
    let mut outputs: Vec<String> = lock["outputs"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|o| Some(o["path"].as_str()?.strip_prefix("out/")?.to_owned()))
        .collect();
    outputs.sort();
    outputs
}

/// A project in a temporary directory.
pub struct TempProject {
    /// Keeps the directory alive.
    pub dir: tempfile::TempDir,
}

impl TempProject {
    /// A project whose model is `model` (Turtle) and whose `seams.toml` is
    /// `[model] files = ["model.ttl"]` followed by `rest`.
    pub fn new(model: &str, rest: &str) -> TempProject {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("model.ttl"), model).unwrap();
        std::fs::write(
            dir.path().join("seams.toml"),
            format!("[model]\nfiles = [\"model.ttl\"]\n\n{rest}"),
        )
        .unwrap();
        TempProject { dir }
    }

    /// The project directory.
    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Copies a file into the project under `name`.
    pub fn add_file(&self, name: &str, from: &str) {
        std::fs::copy(from, self.path().join(name)).unwrap();
    }

    /// Every file under the project, relative, sorted, with its bytes.
    pub fn files(&self) -> Vec<(String, Vec<u8>)> {
        let mut out = Vec::new();
        walk(self.path(), self.path(), &mut out);
        out.sort();
        out
    }
}

fn walk(root: &Path, dir: &Path, out: &mut Vec<(String, Vec<u8>)>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            walk(root, &path, out);
        } else {
            let rel = path
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            out.push((rel, std::fs::read(&path).unwrap()));
        }
    }
}

/// What a CLI run gave.
#[derive(Debug)]
pub struct Outcome {
    /// The exit status.
    pub code: u8,
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
}

/// Runs `seams ARGS` in this process.
pub fn seams(args: &[&str]) -> Outcome {
    let mut argv: Vec<OsString> = vec!["seams".into()];
    argv.extend(args.iter().map(OsString::from));
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let code = seams::cli::run(argv, &mut out, &mut err);
    Outcome {
        code,
        stdout: String::from_utf8(out).unwrap(),
        stderr: String::from_utf8(err).unwrap(),
    }
}

/// Runs `seams ARGS --project PROJECT` in this process.
pub fn seams_in(project: &Path, args: &[&str]) -> Outcome {
    let mut all: Vec<&str> = args.to_vec();
    all.extend(["--project", project.to_str().unwrap()]);
    seams(&all)
}

/// `seams check` on `project` after an interrupted generate: what it
/// prints, asserting that it calls no file edited (`what` names the case).
/// The project may reach outside itself: some tests keep its outputs on
/// another file system, through a symlink.
pub fn check_calls_nothing_edited(project: &Path, what: &str) -> String {
    let check = seams_in(project, &["check", "--allow-outside"]);
    assert!(check.code <= 1, "{what}: {check:?}");
    assert!(
        !check.stdout.contains("hand-edited") && !check.stdout.contains("edited-orphan"),
        "{what}: nobody edited anything, check must not say so:\n{}",
        check.stdout
    );
    check.stdout
}

/// The generated chat project with its author field copied by hand as a
/// field "Mood" named `mood` in `out/thread.html`: a new field with an
/// attribute of its own (change 1), or one more field on the author
/// attribute (change 2) both give the edit back.
pub fn chat_with_a_mood_field() -> TempProject {
    let p = example_project("chat");
    assert_eq!(seams_in(p.path(), &["generate"]).code, 0);
    let page = p.path().join("out/thread.html");
    let text = std::fs::read_to_string(&page).unwrap();
    let field = "      <label for=\"new_message_form-author\">Your name</label>\n      <input id=\"new_message_form-author\" name=\"author\" type=\"text\" required>\n";
    assert!(text.contains(field), "{text}");
    let mood = field
        .replace("new_message_form-author", "new_message_form-mood")
        .replace("name=\"author\"", "name=\"mood\"")
        .replace(">Your name<", ">Mood<");
    std::fs::write(&page, text.replace(field, &format!("{field}{mood}"))).unwrap();
    p
}

/// Asserts that the chat's model file holds change 2 of
/// [`chat_with_a_mood_field`]: the new field, no new attribute.
pub fn assert_mood_on_the_author_attribute(p: &TempProject) {
    let model = std::fs::read_to_string(p.path().join("model.ttl")).unwrap();
    assert!(
        model.contains("chat:mood_field a ui:Field ;")
            && model.contains("    ui:binds chat:author ;")
            && !model.contains("a ui:Attribute ;\n    rdfs:label \"Author\" ;\n    ui:datatype xsd:string ;\n    ui:name \"mood\""),
        "{model}"
    );
}

/// `text` with `dir` (a temporary project) replaced by `[PROJECT]`, for
/// snapshots.
pub fn redact(dir: &Path, text: &str) -> String {
    text.replace(dir.to_str().unwrap(), "[PROJECT]")
}

/// The sha256 of a file, lowercase hex.
pub fn sha256_of(path: &Path) -> String {
    use sha2::Digest;
    let digest = sha2::Sha256::digest(std::fs::read(path).unwrap());
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// The generator package in `tests/fixtures/LANGUAGE/NAME` (`python` or
/// `js`), made a component the way `seams test-generator` makes one (with
/// the SDK seams carries, by the tool it provisions in the shared build
/// directory), once per test process: the path of a copy of its `.wasm`.
pub fn fixture_component(language: &str, name: &str) -> PathBuf {
    static BUILT: std::sync::Mutex<Vec<(String, PathBuf)>> = std::sync::Mutex::new(Vec::new());
    let key = format!("{language}-{name}");
    let mut built = BUILT
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some((_, path)) = built.iter().find(|(k, _)| *k == key) {
        return path.clone();
    }
    let package = repo_root().join("tests/fixtures").join(language).join(name);
    let build_dir = seams::cli::build_dir().expect("a cache directory for the build");
    let component = seams_authoring::build_package(&package, &build_dir)
        .unwrap_or_else(|e| panic!("building {}: {e}", package.display()));
    let dir = target_dir().join("fixture-components");
    std::fs::create_dir_all(&dir).unwrap();
    let wasm = dir.join(format!("{key}.wasm"));
    std::fs::write(&wasm, &component.bytes).unwrap();
    built.push((key, wasm.clone()));
    wasm
}

/// The cargo target directory the tests were built in.
pub fn target_dir() -> PathBuf {
    // target/<profile>/deps/e2e-HASH
    let exe = std::env::current_exe().unwrap();
    exe.ancestors().nth(3).unwrap().to_owned()
}

/// A run of a program as its own process, measured by the OS.
#[derive(Debug)]
pub struct Measured {
    /// The exit status, or `None` when a signal ended it.
    pub code: Option<i32>,
    /// The signal that ended it, if one did.
    pub signal: Option<i32>,
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
    /// From start to exit.
    pub wall: std::time::Duration,
    /// Its own peak resident memory, in KiB.
    pub peak_rss_kib: u64,
}

/// Runs `program ARGS` to its end and measures it.
///
/// Measured through GNU time, which starts the program from its own small
/// process: Linux keeps the old address space's high-water mark in
/// `ru_maxrss` across `exec`, so a program spawned straight from this test
/// process (which may hold hundreds of MiB for other tests running beside
/// it) would report this process's peak, not its own.
pub fn run_measured(program: &Path, args: &[&str]) -> Measured {
    use std::io::{Read, Seek};
    let mut out = tempfile::tempfile().unwrap();
    let mut err = tempfile::tempfile().unwrap();
    let report = tempfile::NamedTempFile::new().unwrap();
    let start = std::time::Instant::now();
    let status = std::process::Command::new("/usr/bin/time")
        .args(["-f", "%M", "-o"])
        .arg(report.path())
        .arg("--")
        .arg(program)
        .args(args)
        .env("NO_COLOR", "1")
        .stdin(std::process::Stdio::null())
        .stdout(out.try_clone().unwrap())
        .stderr(err.try_clone().unwrap())
        .status()
        .expect("GNU time (Debian package `time`, installed by tests/run)");
    let wall = start.elapsed();
    let text = |f: &mut std::fs::File| {
        f.rewind().unwrap();
        let mut s = String::new();
        f.read_to_string(&mut s).unwrap();
        s
    };
    let report = std::fs::read_to_string(report.path()).unwrap();
    let signal = report.lines().find_map(|line| {
        line.strip_prefix("Command terminated by signal ")
            .map(|n| n.trim().parse().unwrap())
    });
    let peak_rss_kib = report
        .lines()
        .last()
        .and_then(|line| line.trim().parse().ok())
        .unwrap_or_else(|| panic!("GNU time reported no peak: {report:?}"));
    Measured {
        code: if signal.is_some() {
            None
        } else {
            status.code()
        },
        signal,
        stdout: text(&mut out),
        stderr: text(&mut err),
        wall,
        peak_rss_kib,
    }
}

/// `command` with its soft limit on open files lowered to `limit` (the
/// hard limit stays), as on a machine whose default is lower than the
/// test machine's: a process that holds a descriptor per file then fails.
pub fn with_open_file_limit(
    command: &mut std::process::Command,
    limit: u64,
) -> &mut std::process::Command {
    use std::os::unix::process::CommandExt;
    // SAFETY: between fork and exec the closure only calls getrlimit and
    // setrlimit, which are async-signal-safe, on a local value.
    unsafe {
        command.pre_exec(move || {
            let mut current = libc::rlimit {
                rlim_cur: 0,
                rlim_max: 0,
            };
            if libc::getrlimit(libc::RLIMIT_NOFILE, &mut current) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            let lowered = libc::rlimit {
                rlim_cur: limit.min(current.rlim_max),
                rlim_max: current.rlim_max,
            };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &lowered) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        })
    }
}

/// A lock's text without its `model_files` block: what formats 1 and 2
/// lack, and all that differs between two locks of one graph written in
/// two ways.
pub fn without_model_files(lock: &str) -> String {
    let start = lock
        .find("  \"model_files\": [")
        .expect("a model_files block");
    let end = start + lock[start..].find("\n  ],\n").expect("its end") + "\n  ],\n".len();
    format!("{}{}", &lock[..start], &lock[end..])
}
