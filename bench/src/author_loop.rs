//! The author's loop, measured: for each language, a package scaffolded
//! by `seams new-generator`, then round after round an edit of its extract
//! step and an edit of its template, each followed by `seams
//! test-generator` (build and the four tests) until its verdict, as its
//! own process; and `test-generator` on the unchanged package, which
//! builds nothing, so that the difference is what the build costs.
//!
//! ```text
//! seams-bench loop [--rounds N] [LANGUAGE...]   (rust, python, js, ts)
//! ```
//!
//! The machine's load average is printed first: the figures mean little
//! on a busy machine. Packages build in the shared build directory, as
//! an author's do (`$SEAMS_BUILD_DIR`, else the user's cache), so the
//! tools are installed and the SDK's dependencies compiled once, before
//! the first measured round.

use std::path::Path;
use std::time::Duration;

use crate::measure::run_self;

/// What one language's package is made of, as the scaffold writes it.
struct Shape {
    language: &'static str,
    extract: &'static str,
    /// A line the extract step may end with that changes nothing it does.
    comment: &'static str,
}

const SHAPES: [Shape; 4] = [
    Shape {
        language: "rust",
        extract: "src/extract.rs",
        comment: "// edited",
    },
    Shape {
        language: "python",
        extract: "extract.py",
        comment: "# edited",
    },
    Shape {
        language: "js",
        extract: "extract.js",
        comment: "// edited",
    },
    Shape {
        language: "ts",
        extract: "extract.ts",
        comment: "// edited",
    },
];

/// The reference output the packages are scaffolded from.
const REFERENCE: &str = "<header>\n  <h1>Chat</h1>\n</header>\n";

/// A step's limit: a first build installs a tool and compiles the SDK.
const LIMIT: Duration = Duration::from_secs(900);

/// `loop [--rounds N] [LANGUAGE...]`.
pub fn main(args: &[String]) -> std::process::ExitCode {
    let mut rounds = 5;
    let mut languages = Vec::new();
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--rounds" => match args.next().and_then(|n| n.parse().ok()) {
                Some(n) if n > 0 => rounds = n,
                _ => return usage(),
            },
            name => match SHAPES.iter().find(|s| s.language == name) {
                Some(shape) => languages.push(shape),
                None => return usage(),
            },
        }
    }
    if languages.is_empty() {
        languages = SHAPES.iter().collect();
    }
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!(
        "load average (1, 5, 15 min): {}",
        load.split_whitespace()
            .take(3)
            .collect::<Vec<_>>()
            .join(" ")
    );
    println!(
        "| language | first test-generator | unchanged | extract edited (median, min–max of {rounds}) | template edited (median, min–max) |"
    );
    println!("| --- | --- | --- | --- | --- |");
    for shape in languages {
        match measure(shape, rounds) {
            Ok(row) => println!("{row}"),
            Err(e) => println!("| {} | failed: {} |", shape.language, e.replace('\n', " ")),
        }
    }
    std::process::ExitCode::SUCCESS
}

fn usage() -> std::process::ExitCode {
    eprintln!("usage: seams-bench loop [--rounds N] [rust|python|js|ts...]");
    std::process::ExitCode::from(2)
}

/// `cli ARGS...`: seams's command line, as its own process (its output on
/// stderr, the measured run's log).
pub fn child(args: &[String]) -> ! {
    let mut argv: Vec<std::ffi::OsString> = vec!["seams".into()];
    argv.extend(args.iter().map(Into::into));
    let mut err = std::io::stderr();
    let code = seams::cli::run(argv, &mut std::io::sink(), &mut err);
    crate::measure::report_own_peak();
    seams::cli::exit(code)
}

/// One language's row.
fn measure(shape: &Shape, rounds: usize) -> Result<String, String> {
    let work = tempfile::tempdir().map_err(|e| e.to_string())?;
    let root = work.path();
    let chat = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/chat");
    for file in ["seams.toml", "model.ttl"] {
        std::fs::copy(chat.join(file), root.join(file)).map_err(|e| e.to_string())?;
    }
    std::fs::write(root.join("title.html"), REFERENCE).map_err(|e| e.to_string())?;
    let package = root.join("package");
    let (project, package_arg) = (root.to_string_lossy(), package.to_string_lossy());
    let log = root.join("log");
    let step = |args: &[&str]| -> Result<Duration, String> {
        let mut all = vec!["cli"];
        all.extend(args);
        let cost = run_self(&all, &[], LIMIT, &log);
        if !cost.ok {
            return Err(format!(
                "seams {} failed: {}",
                args.join(" "),
                std::fs::read_to_string(&log).unwrap_or_default()
            ));
        }
        Ok(cost.wall)
    };
    let name = format!("loop-{}", shape.language);
    step(&[
        "new-generator",
        &name,
        "--reference",
        &root.join("title.html").to_string_lossy(),
        "--out",
        &package_arg,
        "--language",
        shape.language,
    ])?;
    let test = ["test-generator", &package_arg, "--project", &project, "-q"];
    let first = step(&test)?;
    let unchanged = step(&test)?;
    let mut extract_times = Vec::new();
    let mut template_times = Vec::new();
    for round in 0..rounds {
        append(
            &package.join(shape.extract),
            &format!("{} {round}\n", shape.comment),
        )?;
        extract_times.push(step(&test)?);
        // A fixed line more in the template, and in the golden.
        let line = format!("<!-- round {round} -->\n");
        append(&package.join("templates/title.html"), &line)?;
        append(
            &package.join("tests/golden/title.html"),
            &format!("<!-- round {round} -->  [fixed]\n"),
        )?;
        template_times.push(step(&test)?);
    }
    Ok(format!(
        "| {} | {} | {} | {} | {} |",
        shape.language,
        seconds(first),
        seconds(unchanged),
        spread(&mut extract_times),
        spread(&mut template_times)
    ))
}

fn append(path: &Path, text: &str) -> Result<(), String> {
    let mut old = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    old.push_str(text);
    std::fs::write(path, old).map_err(|e| format!("{}: {e}", path.display()))
}

fn seconds(d: Duration) -> String {
    format!("{:.2} s", d.as_secs_f64())
}

/// The median, and the least and most, of `times`.
fn spread(times: &mut [Duration]) -> String {
    times.sort();
    format!(
        "{} ({}–{})",
        seconds(times[times.len() / 2]),
        seconds(times[0]),
        seconds(times[times.len() - 1])
    )
}
