//! Hostile components: every limit and rule of the sandbox stops the
//! generator with an error naming it and the limit, while the process
//! survives, the other generators still write their outputs, and nothing of
//! the hostile generator is written.

use seams_tests::{FUTURE_WASM, HOSTILE_WASM, OTHER_WORLD_WASM, TempProject, repo_root, seams};

/// What the htmx built-in writes for the chat model.
const HTMX_OUTPUTS: [&str; 10] = [
    "app.js",
    "app.js.trace.json",
    "conversations.html",
    "conversations.html.trace.json",
    "htmx.LICENSE",
    "htmx.LICENSE.trace.json",
    "htmx.min.js",
    "htmx.min.js.trace.json",
    "thread.html",
    "thread.html.trace.json",
];

const FAST_LIMITS: &str = "[sandbox]\nfuel = 500000000\ntimeout-seconds = 60\nmemory-mib = 64\n";

fn chat_model() -> String {
    std::fs::read_to_string(repo_root().join("examples/chat/model.ttl")).unwrap()
}

/// A project with the htmx built-in and the hostile generator, whose model
/// says how to misbehave (`behaviour` in Turtle string syntax).
fn hostile_project(behaviour: &str, sandbox: &str) -> TempProject {
    let model = format!(
        "{}\n<urn:seams:test#hostile> <urn:seams:test#behaviour> \"{behaviour}\" .\n",
        chat_model()
    );
    let p = TempProject::new(
        &model,
        &format!(
            "[[generator]]\nbuiltin = \"htmx\"\n\n[[generator]]\nwasm = \"hostile.wasm\"\n\n{sandbox}"
        ),
    );
    p.add_file("hostile.wasm", HOSTILE_WASM);
    p
}

/// The files under `out/`.
fn outputs(p: &TempProject) -> Vec<String> {
    p.files()
        .into_iter()
        .filter_map(|(path, _)| path.strip_prefix("out/").map(str::to_owned))
        .collect()
}

/// Generation fails for the hostile generator only: exit 1, an error that
/// names it and says each of `expected`, htmx's pages written, nothing else.
fn assert_stopped(p: &TempProject, expected: &[&str]) {
    let run = seams(&["generate", "--project", p.path().to_str().unwrap()]);
    assert_eq!(run.code, 1, "{run:?}");
    let error = run
        .stderr
        .lines()
        .find(|l| l.starts_with("seams generate: generator hostile.wasm: "))
        .unwrap_or_else(|| panic!("no error naming the generator in {:?}", run.stderr));
    for fragment in expected {
        assert!(
            error.contains(fragment),
            "{error:?} should say {fragment:?}"
        );
    }
    assert_eq!(outputs(p), HTMX_OUTPUTS, "only htmx's outputs are written");
    let lock = std::fs::read_to_string(p.path().join("seams.lock")).unwrap();
    assert!(lock.contains("out/thread.html"));
    assert!(
        !lock.contains("hostile"),
        "the failed generator is not locked:\n{lock}"
    );
}

#[test]
fn an_infinite_loop_is_stopped_by_the_fuel_budget() {
    let p = hostile_project("loop", FAST_LIMITS);
    assert_stopped(&p, &["ran out of fuel (limit 500000000)", "[sandbox] fuel"]);
}

#[test]
fn a_loop_of_slow_queries_is_stopped_by_the_deadline() {
    // Plenty of fuel: time spent in host queries costs none.
    let p = hostile_project("slow-queries", "[sandbox]\ntimeout-seconds = 1\n");
    assert_stopped(&p, &["time budget of 1s", "[sandbox] timeout-seconds"]);
}

#[test]
fn a_memory_bomb_is_stopped_by_the_cap() {
    let p = hostile_project("memory", FAST_LIMITS);
    assert_stopped(&p, &["more than 64 MiB of memory", "[sandbox] memory-mib"]);
}

#[test]
fn unbounded_recursion_overflows_the_stack() {
    let p = hostile_project("stack", FAST_LIMITS);
    assert_stopped(&p, &["overflowed its stack"]);
}

#[test]
fn a_panic_is_reported_with_its_message() {
    let p = hostile_project("panic", FAST_LIMITS);
    assert_stopped(&p, &["trapped", "boom: the hostile generator panicked"]);
}

#[test]
fn a_trap_is_reported() {
    let p = hostile_project("unreachable", FAST_LIMITS);
    assert_stopped(&p, &["trapped", "unreachable"]);
}

#[test]
fn a_reported_error_is_shown() {
    let p = hostile_project("error", FAST_LIMITS);
    assert_stopped(&p, &["extract failed: the model is not what I expected"]);
}

#[test]
fn an_update_query_is_refused() {
    let p = hostile_project("update", FAST_LIMITS);
    assert_stopped(&p, &["extract failed", "SPARQL updates are refused"]);
}

#[test]
fn output_paths_that_could_leave_the_output_directory_are_refused() {
    // Turtle escapes: `\\` is one backslash, `\u0007` a control character.
    for (path, rule) in [
        ("../x", "'..'"),
        ("/etc/x", "absolute"),
        ("a/../../x", "'..'"),
        ("C:\\\\x", "'\\'"),
        ("a\\u0007b", "control character"),
        ("a\\nb", "control character"),
        (
            "nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn",
            "longer than 255 bytes",
        ),
        ("nul.txt", "device name"),
        ("dir./x", "ending in '.'"),
        ("x\\u202Etxt.exe", "invisible formatting character"),
    ] {
        let p = hostile_project(&format!("path:{path}"), FAST_LIMITS);
        assert_stopped(&p, &["output path", "refused", rule]);
        assert!(!p.path().join("x").exists());
    }
}

#[test]
fn output_beyond_the_size_cap_is_refused() {
    let p = hostile_project("big-output", "[sandbox]\nmax-output-mib = 1\n");
    assert_stopped(
        &p,
        &["more than 1 MiB of output", "[sandbox] max-output-mib"],
    );
}

#[test]
fn outputs_beyond_the_count_cap_are_refused() {
    let p = hostile_project("many-outputs", "[sandbox]\nmax-outputs = 5\n");
    assert_stopped(
        &p,
        &[
            "returned 20 files, more than the limit of 5",
            "[sandbox] max-outputs",
        ],
    );
}

#[test]
fn files_environment_network_and_clocks_are_denied_or_fixed() {
    let p = hostile_project("probe", FAST_LIMITS);
    let run = seams(&["generate", "--project", p.path().to_str().unwrap()]);
    assert_eq!(run.code, 0, "{run:?}");
    let probe = std::fs::read_to_string(p.path().join("out/probe.txt")).unwrap();
    for line in [
        "passwd: denied",
        "cwd: denied",
        "env: 0 variables",
        "args: 0",
        "net: denied",
        "dns: denied",
        "stdin: 0 bytes",
        "clock: 0",
    ] {
        assert!(
            probe.lines().any(|l| l == line),
            "{line:?} missing from\n{probe}"
        );
    }
    // Randomness is seeded from the model hash: the same in a second
    // project with the same model, different with another model.
    let again = hostile_project("probe", FAST_LIMITS);
    assert_eq!(
        seams(&["generate", "--project", again.path().to_str().unwrap()]).code,
        0
    );
    assert_eq!(
        probe,
        std::fs::read_to_string(again.path().join("out/probe.txt")).unwrap()
    );
    let other = hostile_project("probe", FAST_LIMITS);
    std::fs::write(
        other.path().join("model.ttl"),
        format!("{}\n<urn:seams:test#hostile> <urn:seams:test#behaviour> \"probe\" .\n<urn:x> <urn:y> \"z\" .\n", chat_model()),
    )
    .unwrap();
    assert_eq!(
        seams(&["generate", "--project", other.path().to_str().unwrap()]).code,
        0
    );
    let random = |text: &str| {
        text.lines()
            .find(|l| l.starts_with("random: "))
            .unwrap()
            .to_owned()
    };
    let other_probe = std::fs::read_to_string(other.path().join("out/probe.txt")).unwrap();
    assert_ne!(random(&probe), random(&other_probe));
}

#[test]
fn a_chatty_generator_is_cut_short_in_the_log_not_failed() {
    let p = hostile_project("flood", "[sandbox]\nmax-log-kib = 4\n");
    let run = seams(&["generate", "--project", p.path().to_str().unwrap()]);
    assert_eq!(run.code, 0, "{run:?}");
    let logged: Vec<&str> = run
        .stderr
        .lines()
        .filter(|l| l.starts_with("hostile: "))
        .collect();
    assert!(logged.len() < 200, "{} log lines", logged.len());
    assert_eq!(
        logged.first(),
        Some(&"hostile: stdout: line 0 of a very chatty generator")
    );
    assert!(
        logged
            .last()
            .unwrap()
            .contains("raise [sandbox] max-log-kib"),
        "{logged:?}"
    );
    assert!(p.path().join("out/flood.txt").is_file());
}

#[test]
fn things_that_are_not_generators_are_refused() {
    let cases: [(&str, &[u8], &[&str]); 4] = [
        (
            "not-wasm.wasm",
            b"this is not wasm",
            &["not a WebAssembly component"],
        ),
        (
            "core.wasm",
            b"\0asm\x01\0\0\0",
            &["core WebAssembly module", "--target wasm32-wasip2"],
        ),
        (
            "other-world.wasm",
            &std::fs::read(OTHER_WORLD_WASM).unwrap(),
            &[
                "is not a seams generator",
                "wasi:cli/run",
                "seams:generator/generator-api@0.2.0",
            ],
        ),
        (
            "future.wasm",
            &std::fs::read(FUTURE_WASM).unwrap(),
            &["seams:generator@0.9.0", "seams:generator 0.1.0 and 0.2.0"],
        ),
    ];
    for (name, bytes, expected) in cases {
        let p = TempProject::new(
            &chat_model(),
            &format!("[[generator]]\nbuiltin = \"htmx\"\n\n[[generator]]\nwasm = \"{name}\"\n"),
        );
        std::fs::write(p.path().join(name), bytes).unwrap();
        let run = seams(&["generate", "--project", p.path().to_str().unwrap()]);
        assert_eq!(run.code, 1, "{name}: {run:?}");
        let prefix = format!("seams generate: generator {name}: ");
        let error = run
            .stderr
            .lines()
            .find(|l| l.starts_with(&prefix))
            .unwrap_or_else(|| panic!("{name}: {}", run.stderr));
        for fragment in expected {
            assert!(
                error.contains(fragment),
                "{error:?} should say {fragment:?}"
            );
        }
        assert_eq!(outputs(&p), HTMX_OUTPUTS);
    }
}

#[test]
fn a_pinned_component_whose_bytes_changed_is_refused() {
    let p = TempProject::new(
        &chat_model(),
        &format!(
            "[[generator]]\nwasm = \"hostile.wasm\"\nsha256 = \"{}\"\n",
            "0".repeat(64)
        ),
    );
    p.add_file("hostile.wasm", HOSTILE_WASM);
    let run = seams(&["generate", "--project", p.path().to_str().unwrap()]);
    assert_eq!(run.code, 1);
    assert!(
        run.stderr.contains("but seams.toml pins 0000"),
        "{}",
        run.stderr
    );
    assert!(outputs(&p).is_empty());
}

#[test]
fn a_large_output_is_written_from_its_spilled_copy_and_checks_clean() {
    // 3 MiB: above the size at which the plan keeps an output in a
    // temporary file rather than in memory.
    let p = hostile_project("big-output", "");
    let run = seams(&["generate", "--project", p.path().to_str().unwrap()]);
    assert_eq!(run.code, 0, "{run:?}");
    let big = std::fs::read(p.path().join("out/big.txt")).unwrap();
    assert_eq!(big.len(), 3 << 20);
    assert!(big.iter().all(|&b| b == b'x'));
    let lock = std::fs::read_to_string(p.path().join("seams.lock")).unwrap();
    assert!(
        lock.contains(&seams_tests::sha256_of(&p.path().join("out/big.txt"))),
        "the lock pins the bytes written"
    );
    let check = seams(&["check", "--project", p.path().to_str().unwrap()]);
    assert_eq!(check.code, 0, "{check:?}");
}

#[test]
fn what_a_generator_prints_reaches_the_terminal_escaped_and_cut() {
    let raw = |c: char| matches!(c, '\u{1b}' | '\u{7}' | '\u{9b}' | '\u{202e}');
    for (behaviour, code) in [("ansi-log", 0), ("ansi-error", 1), ("huge-error", 1)] {
        let p = hostile_project(behaviour, FAST_LIMITS);
        let dir = p.path().to_str().unwrap();
        let generate = seams(&["generate", "--project", dir]);
        let check = seams(&["check", "--project", dir]);
        let json = seams(&["check", "--format", "json", "--project", dir]);
        assert_eq!(generate.code, code, "{behaviour}: {generate:?}");
        for (what, text) in [
            ("generate stdout", &generate.stdout),
            ("generate stderr", &generate.stderr),
            ("check stdout", &check.stdout),
            ("check stderr", &check.stderr),
            ("check json", &json.stdout),
        ] {
            assert!(!text.chars().any(raw), "{behaviour}, {what}: {text:?}");
            assert!(
                text.len() < 20_000,
                "{behaviour}, {what}: {} bytes",
                text.len()
            );
            assert!(
                !text
                    .lines()
                    .any(|l| l.starts_with("seams generate: 0 generators")
                        || l.starts_with("seams generate: all good")),
                "{behaviour}, {what}: a faked line in {text:?}"
            );
        }
        serde_json::from_str::<serde_json::Value>(&json.stdout).expect("still one JSON document");
        match behaviour {
            "ansi-log" => {
                assert!(
                    generate
                        .stderr
                        .contains("hostile: stdout: \\u{1b}]52;c;ZXZpbA==\\u{7}"),
                    "{}",
                    generate.stderr
                );
                assert!(
                    generate.stderr.contains("red\\u{202e}txt.exe"),
                    "{}",
                    generate.stderr
                );
            }
            "ansi-error" => assert!(
                generate.stderr.contains(
                    "extract failed: \\u{1b}[2J\\u{a}seams generate: 0 generators failed\\u{202e}"
                ),
                "{}",
                generate.stderr
            ),
            _ => assert!(
                generate.stderr.contains("... (8388608 bytes in all)"),
                "{}",
                &generate.stderr[generate.stderr.len().saturating_sub(200)..]
            ),
        }
    }
}

#[test]
fn a_generator_cannot_take_or_shadow_another_generators_file() {
    for (path, hostile_says, fastapi_says) in [
        (
            "app.py",
            "which fastapi also writes",
            "which hostile.wasm also writes",
        ),
        (
            "App.py",
            "same file as \"app.py\"",
            "same file as \"App.py\"",
        ),
        (
            "app.py/x",
            "inside \"app.py\"",
            "as a file, but hostile.wasm writes",
        ),
    ] {
        // Listed first, as a hijacker would be.
        let model = format!(
            "{}\n<urn:seams:test#hostile> <urn:seams:test#behaviour> \"path:{path}\" .\n",
            chat_model()
        );
        let p = TempProject::new(
            &model,
            "[[generator]]\nwasm = \"hostile.wasm\"\n\n[[generator]]\nbuiltin = \"fastapi\"\n\n[[generator]]\nbuiltin = \"htmx\"\n",
        );
        p.add_file("hostile.wasm", HOSTILE_WASM);
        let run = seams(&["generate", "--project", p.path().to_str().unwrap()]);
        assert_eq!(run.code, 1, "{path}: {run:?}");
        let line = |generator: &str| {
            run.stderr
                .lines()
                .find(|l| l.starts_with(&format!("seams generate: generator {generator}: ")))
                .unwrap_or_else(|| panic!("{path}: no error for {generator} in {:?}", run.stderr))
                .to_owned()
        };
        assert!(
            line("hostile.wasm").contains(hostile_says),
            "{path}: {}",
            line("hostile.wasm")
        );
        assert!(
            line("fastapi").contains(fastapi_says),
            "{path}: {}",
            line("fastapi")
        );
        assert!(
            !run.stderr.contains("generator htmx"),
            "htmx is not involved"
        );
        assert!(
            p.path().join("out/conversations.html").is_file(),
            "htmx carried on"
        );
        assert!(!p.path().join("out/app.py").exists(), "nobody wrote app.py");
        let lock = std::fs::read_to_string(p.path().join("seams.lock")).unwrap();
        assert!(
            !lock.contains("app.py") && !lock.contains("App.py"),
            "{lock}"
        );
    }
}
