//! An attacker's generator, written against the WIT alone, tries each way
//! to crash, hang, exhaust or fool the host. For every attack the seams
//! process exits 0 or 1 (never a signal or a panic), within the timeout
//! plus the grace, under the documented memory bound (as the OS counts
//! it), with the built-in beside it untouched and a message naming the
//! generator and the limit or rule.
//!
//! `cargo test -p seams --test e2e attacks -- --nocapture` prints the
//! table of measurements; `SEAMS_ATTACKS=sparql,ansi` runs only the attacks
//! whose names start so.

use std::path::Path;

use seams_tests::{ATTACKER_WASM, TempProject, repo_root, run_measured, seams};

/// What the host allows itself beyond the generators' budgets and the
/// model: engine, compiled code, and seams' own work (the book's sandbox chapter, "What the
/// sandbox guarantees").
const FIXED_OVERHEAD_MIB: u64 = 128;

/// The grace past `timeout-seconds` (the runtime's `GRACE`), plus what a
/// run spends before and after its generators (loading, writing).
const GRACE_SECONDS: f64 = 2.0;
const STARTUP_SECONDS: f64 = 8.0;

const LIMITS: &str = "[sandbox]\ntimeout-seconds = 5\nmemory-mib = 64\n";

/// What an attack should come to.
enum Expect {
    /// The attacker fails (exit 1) with a message saying each fragment;
    /// htmx still writes its files, byte for byte as in the example.
    Stopped(&'static [&'static str]),
    /// Both the attacker and htmx fail (exit 1), the first fragment in
    /// the attacker's message, the second in htmx's; neither writes.
    Clashed(&'static [&'static str; 2]),
    /// The attack does no harm: exit 0 and the attacker writes `file`
    /// with exactly these bytes.
    Written(&'static str, &'static str),
}

struct Attack {
    name: &'static str,
    sandbox: &'static str,
    expect: Expect,
}

const MEMORY: &[&str] = &["more than 64 MiB of memory", "[sandbox] memory-mib"];
const TIME: &[&str] = &["time budget of 5s", "[sandbox] timeout-seconds"];

fn attacks() -> Vec<Attack> {
    use Expect::*;
    let a = |name, expect| Attack {
        name,
        sandbox: LIMITS,
        expect,
    };
    vec![
        a(
            "tracing-functions",
            Stopped(&[
                "uses the name prefix __seams_",
                "reserves for its tracing render",
            ]),
        ),
        a(
            "tracing-include",
            Stopped(&[
                "uses the name prefix __seams_",
                "reserves for its tracing render",
            ]),
        ),
        a("sleep", Written("page.txt", "page 1\n")),
        a("sleep-forever", Written("page.txt", "page 1\n")),
        Attack {
            name: "many-templates",
            sandbox: "[sandbox]\ntimeout-seconds = 5\nmemory-mib = 512\n",
            expect: Written("page.txt", "page 1\n"),
        },
        a("sparql-count", Stopped(TIME)),
        a("sparql-sort", Stopped(MEMORY)),
        a("sparql-concat", Stopped(MEMORY)),
        a(
            "sparql-nesting",
            Stopped(&["extract failed: query:", "nests brackets more than 64 deep"]),
        ),
        a("sparql-plus-chain", Stopped(&["more than 512 operators"])),
        a("sparql-bind-chain", Written("page.txt", "page 1\n")),
        a("sparql-union-chain", Written("page.txt", "page 1\n")),
        a("sparql-optional-chain", Written("page.txt", "page 1\n")),
        a("sparql-and-chain", Written("page.txt", "page 1\n")),
        a("sparql-join-chain", Stopped(TIME)),
        a("render-bomb", Stopped(MEMORY)),
        // Host work costs fuel by the byte: 20,000 traced renders of a
        // 10 KB context pass 500M on any machine; htmx fits.
        Attack {
            name: "host-work",
            sandbox: "[sandbox]\nfuel = 500000000\ntimeout-seconds = 30\nmemory-mib = 64\n",
            expect: Stopped(&["ran out of fuel (limit 500000000)", "[sandbox] fuel"]),
        },
        a("template-chain", Written("bomb.txt", "200001\n")),
        a(
            "broken-template",
            Stopped(&["template bad.txt:1", "syntax error"]),
        ),
        a("render-in-extract", Written("page.txt", "page 1\n")),
        a("template-nesting", Stopped(&["template bomb.txt"])),
        a("template-parens", Stopped(&["template bomb.txt"])),
        Attack {
            name: "context-bomb",
            sandbox: "[sandbox]\ntimeout-seconds = 5\nmemory-mib = 256\n",
            expect: Stopped(&["more than 256 MiB of memory", "[sandbox] memory-mib"]),
        },
        a(
            "timer",
            Written(
                "observed.txt",
                "polls until ready: 1\nmonotonic: 0 -> 0\nwall: 0.000000000\n",
            ),
        ),
        a(
            "relaxed-simd",
            Written(
                "observed.txt",
                "trunc: [0, 2147483647, -2147483648, 1]\nswizzle: [0, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9]\nmadd: [2826960896, 2826960896, 2826960896, 2826960896]\n",
            ),
        ),
        a("impersonate", Stopped(&["\"htmx\"", "built-in"])),
        a("long-segment", Stopped(&["longer than 255 bytes"])),
        a(
            "file-dir-clash",
            Clashed(&[
                "inside \"conversations.html\", which htmx writes as a file",
                "as a file, but attacker.wasm writes",
            ]),
        ),
        a(
            "path-hijack",
            Clashed(&[
                "returned \"conversations.html\", which htmx also writes",
                "which attacker.wasm also writes",
            ]),
        ),
        a("ansi", Stopped(&["extract failed"])),
        a("ansi-term", Stopped(&["which the model does not mention"])),
        a("ansi-path", Stopped(&["control character"])),
        a("ansi-template", Written("macro.txt", "made\n")),
        a("huge-error", Stopped(&["extract failed: eeee"])),
        a(
            "lie-term",
            Stopped(&[
                "urn:not-in-the-model#secret",
                "which the model does not mention",
            ]),
        ),
        a(
            "lie-source",
            Stopped(&[
                "the sources of \"text.txt\"",
                "which the model does not mention",
            ]),
        ),
        a(
            "lie-origin",
            Stopped(&["nowhere.txt:99", "not a line of one of its templates"]),
        ),
        a("stack-overflow", Stopped(&["shadow stack", "-zstack-size"])),
        a(
            "wasm-stack",
            Stopped(&["overflowed its stack (1024 KiB)", "[sandbox] stack-kib"]),
        ),
        Attack {
            name: "log-flood",
            sandbox: "[sandbox]\ntimeout-seconds = 30\nmemory-mib = 1024\n",
            expect: Written("page.txt", "page 1\n"),
        },
        a(
            "handles",
            Stopped(&["more than 10000 handles", "[sandbox] max-handles"]),
        ),
        // The renders' texts go to files as they are made (a run holds
        // 16 MiB of them at most), so keeping every handle costs the host
        // disk, counted against max-output-mib, not memory.
        Attack {
            name: "handle-hoard",
            sandbox: "[sandbox]\ntimeout-seconds = 60\nmemory-mib = 64\n",
            expect: Written("hoard.txt", "3000 kept\n"),
        },
        Attack {
            name: "big-output",
            sandbox: "[sandbox]\ntimeout-seconds = 30\nmemory-mib = 1024\nmax-output-mib = 256\n",
            expect: Written("big.txt", ""),
        },
    ]
}

/// `timeout-seconds` and `memory-mib` of a `[sandbox]` text.
fn budgets(sandbox: &str) -> (f64, u64) {
    let value = |key: &str| {
        sandbox
            .lines()
            .find_map(|l| l.strip_prefix(&format!("{key} = ")))
            .unwrap()
            .parse::<f64>()
            .unwrap()
    };
    (value("timeout-seconds"), value("memory-mib") as u64)
}

fn project(attack: &Attack) -> TempProject {
    let model = format!(
        "{}\n<urn:seams:test#attacker> <urn:seams:test#attack> \"{}\" .\n",
        std::fs::read_to_string(repo_root().join("examples/chat/model.ttl")).unwrap(),
        attack.name
    );
    // Listed first, as a hijacker would be.
    let p = TempProject::new(
        &model,
        &format!(
            "[[generator]]\nwasm = \"attacker.wasm\"\n\n[[generator]]\nbuiltin = \"htmx\"\n\n{}",
            attack.sandbox
        ),
    );
    p.add_file("attacker.wasm", ATTACKER_WASM);
    p
}

/// htmx's files as the chat example has them.
fn htmx_unchanged(out: &Path) -> Result<(), String> {
    let example = repo_root().join("examples/chat/out");
    for name in ["app.js", "conversations.html", "thread.html"] {
        let written = std::fs::read(out.join(name)).map_err(|e| format!("{name}: {e}"))?;
        if written != std::fs::read(example.join(name)).unwrap() {
            return Err(format!("{name} differs from the example's"));
        }
    }
    Ok(())
}

#[test]
fn no_attack_crashes_hangs_exhausts_or_fools_the_host() {
    let binary = Path::new(env!("CARGO_BIN_EXE_seams"));
    let model_mib = 1; // the chat model's store, rounded up
    let mut failures = Vec::new();
    println!("| attack | exit | wall (s) | peak RSS (MiB) | bound (MiB) | message |");
    println!("|---|---|---|---|---|---|");
    let only = std::env::var("SEAMS_ATTACKS").unwrap_or_default();
    for attack in attacks()
        .into_iter()
        .filter(|a| only.is_empty() || only.split(',').any(|o| a.name.starts_with(o)))
    {
        let p = project(&attack);
        let run = run_measured(
            binary,
            &["generate", "--project", p.path().to_str().unwrap()],
        );
        let (timeout, memory_mib) = budgets(attack.sandbox);
        // Two generators run at once.
        let bound_mib = 2 * memory_mib + model_mib + FIXED_OVERHEAD_MIB;
        let peak_mib = run.peak_rss_kib.div_ceil(1024);
        let message = run
            .stderr
            .lines()
            .find(|l| l.starts_with("seams generate: generator attacker.wasm: "))
            .unwrap_or("")
            .to_owned();
        let shown: String = message.chars().take(150).collect();
        println!(
            "| {} | {} | {:.2} | {peak_mib} | {bound_mib} | {} |",
            attack.name,
            run.code
                .map_or_else(|| format!("signal {:?}", run.signal), |c| c.to_string()),
            run.wall.as_secs_f64(),
            shown.replace('|', "\\|")
        );
        let mut wrong = Vec::new();
        if run.wall.as_secs_f64() > timeout + GRACE_SECONDS + STARTUP_SECONDS {
            wrong.push(format!("took {:.1}s", run.wall.as_secs_f64()));
        }
        if peak_mib > bound_mib {
            wrong.push(format!("peak {peak_mib} MiB > {bound_mib} MiB"));
        }
        if run.stderr.contains('\u{1b}') || run.stderr.contains('\u{9b}') {
            wrong.push("raw escape on stderr".to_owned());
        }
        if run.stderr.len() > 64 << 10 {
            wrong.push(format!("{} bytes of stderr", run.stderr.len()));
        }
        let out = p.path().join("out");
        match attack.expect {
            Expect::Stopped(fragments) => {
                if run.code != Some(1) {
                    wrong.push(format!("exit {:?} signal {:?}", run.code, run.signal));
                }
                for fragment in fragments {
                    if !message.contains(fragment) {
                        wrong.push(format!("message lacks {fragment:?}"));
                    }
                }
                if let Err(e) = htmx_unchanged(&out) {
                    wrong.push(e);
                }
            }
            Expect::Clashed([attacker_says, htmx_says]) => {
                if run.code != Some(1) {
                    wrong.push(format!("exit {:?} signal {:?}", run.code, run.signal));
                }
                if !message.contains(attacker_says) {
                    wrong.push(format!("message lacks {attacker_says:?}"));
                }
                if !run.stderr.lines().any(|l| {
                    l.starts_with("seams generate: generator htmx: ") && l.contains(htmx_says)
                }) {
                    wrong.push(format!("htmx's message lacks {htmx_says:?}"));
                }
                if out.exists() {
                    wrong.push("something was written".to_owned());
                }
            }
            Expect::Written(file, bytes) => {
                if run.code != Some(0) {
                    wrong.push(format!("exit {:?} signal {:?}", run.code, run.signal));
                }
                let written = std::fs::read(out.join(file)).unwrap_or_default();
                let right = if bytes.is_empty() {
                    // The big output: 250 MiB of 'x'.
                    written.len() == 250 << 20 && written.iter().all(|&b| b == b'x')
                } else {
                    written == bytes.as_bytes()
                };
                if !right {
                    wrong.push(format!(
                        "{file} is {:?}",
                        String::from_utf8_lossy(&written[..written.len().min(200)])
                    ));
                }
                if let Err(e) = htmx_unchanged(&out) {
                    wrong.push(e);
                }
            }
        }
        if !wrong.is_empty() {
            failures.push(format!(
                "{}: {}\n  stderr: {}",
                attack.name,
                wrong.join("; "),
                run.stderr.chars().take(1500).collect::<String>()
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Where the host keeps renders in memory (write-back's regeneration, a
/// library caller's `run_generators`), the texts of kept handles are
/// charged to the generator's `memory-mib`: the hoard is stopped there,
/// and htmx beside it still runs.
#[test]
fn kept_handles_held_in_memory_are_charged_to_memory_mib() {
    let p = project(&Attack {
        name: "handle-hoard",
        sandbox: LIMITS,
        expect: Expect::Written("hoard.txt", "3000 kept\n"),
    });
    let project = seams_core::Project::load(p.path()).unwrap();
    let runtime = seams_runtime::Runtime::new(None).unwrap();
    let generation = seams_core::run_generators(&project, &runtime).unwrap();
    let failures: Vec<String> = generation
        .failures
        .iter()
        .map(|(_, e)| e.to_string())
        .collect();
    assert_eq!(failures.len(), 1, "{failures:?}");
    assert!(
        failures[0].contains("attacker.wasm") && failures[0].contains("[sandbox] memory-mib"),
        "{failures:?}"
    );
    assert_eq!(generation.runs.len(), 1, "htmx ran");
}

/// A template's name is the generator's text: where `generate -v` names
/// the template line that has each render made twice, it is escaped.
#[test]
fn a_template_name_is_escaped_where_verbose_generate_names_it() {
    let p = project(&Attack {
        name: "ansi-template",
        sandbox: LIMITS,
        expect: Expect::Written("macro.txt", "made\n"),
    });
    let run = seams(&["generate", "-v", "--project", p.path().to_str().unwrap()]);
    assert_eq!(run.code, 0, "{run:?}");
    let said = run
        .stderr
        .lines()
        .find(|l| l.starts_with("attacker: each traced render is made twice"))
        .unwrap_or_else(|| panic!("{run:?}"));
    assert!(said.ends_with(":1 (a macro)"), "{said}");
    for raw in ['\u{1b}', '\u{7}', '\u{9b}'] {
        assert!(!run.stderr.contains(raw), "{:?}", run.stderr);
    }
}
