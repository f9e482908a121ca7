//! seams' benchmark: `seams generate` on scaled models, measured in one run
//! against a native floor (the htmx built-in's own code with no sandbox
//! and no tracing, see `floor.rs`).
//!
//! ```text
//! cargo run --release -p seams-bench -- [--sizes 1,10,100,300,1000]
//!     [--unrelated 1000000] [--blank 100000] [--limit SECONDS]
//! cargo run --release -p seams-bench -- project COPIES|unrelated N|blank N DIR
//! seams-bench ab MODE ROUNDS PROJECT BUILD BUILD...
//! seams-bench loop [--rounds N] [rust|python|js|ts...]
//! ```
//!
//! For each model: the floor; `seams generate` cold (empty component
//! cache), warm, untraced (the tracing render off), unchecked (no model
//! check against the generators' vocabularies), a no-op (the generate
//! recorded the stats of the files it wrote), `seams check` and a no-op
//! without that record (which reads every locked file);
//! each as its own process (this binary run in a child mode), with its
//! wall time and its own peak memory as the OS counts them. After the cold
//! run, every mode runs once per round, round after round, so that a
//! drift in the machine's speed touches them alike; each is reported by
//! its median round. The floor's files must equal seams's byte for byte.
//! Prints one Markdown table and the growth between sizes. `ab` measures
//! builds of this benchmark against each other, taking turns
//! (see `ab.rs`); `loop` measures an author's edit → `test-generator`
//! verdict per language (see `author_loop.rs`).

mod ab;
mod author_loop;
mod floor;
mod measure;
mod models;

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use measure::{Cost, run_self};
use models::Case;

/// Every heap allocation goes through the runtime's accounting allocator,
/// as in the `seams` binary: seams's runs and the floor allocate alike.
#[global_allocator]
static ALLOCATOR: seams_runtime::Accounting = seams_runtime::Accounting;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("run") {
        child(&args[1..]);
    }
    if args.first().map(String::as_str) == Some("project") {
        return write_project(&args[1..]);
    }
    if args.first().map(String::as_str) == Some("ab") {
        return ab::main(&args[1..]);
    }
    if args.first().map(String::as_str) == Some("cli") {
        author_loop::child(&args[1..]);
    }
    if args.first().map(String::as_str) == Some("loop") {
        return author_loop::main(&args[1..]);
    }
    match driver(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("seams-bench: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Where the floor leaves the model's triple count: the benchmark itself
/// never loads a model, so that it stays small beside the runs it starts.
const TRIPLES: &str = "triples.txt";

/// A measured run, in its own process: `run MODE PROJECT`.
/// It ends as `seams` does ([`seams::cli::exit`]), the floor too.
fn child(args: &[String]) -> ! {
    let [mode, dir] = args else {
        eprintln!("usage: seams-bench run seams|untraced|unchecked|check|floor PROJECT");
        seams::cli::exit(2);
    };
    measure::usual_open_file_limit();
    let code = measured(mode, Path::new(dir));
    measure::report_own_peak();
    seams::cli::exit(code)
}

/// The work of `run MODE PROJECT`.
fn measured(mode: &str, dir: &Path) -> u8 {
    let cli = |command: &str| {
        let argv = ["seams", command, "--project", &dir.to_string_lossy(), "-q"];
        let mut err = std::io::stderr();
        seams::cli::run(argv.map(Into::into), &mut std::io::sink(), &mut err)
    };
    match mode {
        "seams" => cli("generate"),
        "check" => cli("check"),
        "untraced" | "unchecked" => match modified(dir, mode) {
            Ok(()) => seams::cli::EXIT_OK,
            Err(e) => {
                eprintln!("{e}");
                seams::cli::EXIT_FAILURE
            }
        },
        "floor" => {
            let project = match seams_core::Project::load(dir) {
                Ok(p) => p,
                Err(e) => {
                    eprintln!("{e}");
                    return seams::cli::EXIT_FAILURE;
                }
            };
            match floor::run(&project.model_files, &dir.join("floor")) {
                Ok(triples) if std::fs::write(dir.join(TRIPLES), triples.to_string()).is_ok() => {
                    seams::cli::EXIT_OK
                }
                Ok(_) => seams::cli::EXIT_FAILURE,
                Err(e) => {
                    eprintln!("{e}");
                    seams::cli::EXIT_FAILURE
                }
            }
        }
        other => {
            eprintln!("unknown mode {other}");
            seams::cli::EXIT_USAGE
        }
    }
}

/// `project COPIES DIR`: writes the expense x COPIES project into DIR,
/// to profile one run by hand (e.g. `perf record seams generate --project
/// DIR`); `project unrelated N DIR` and `project blank N DIR` write the
/// chat example beside N unrelated triples or N blank nodes.
fn write_project(args: &[String]) -> ExitCode {
    let usage = || {
        eprintln!("usage: seams-bench project COPIES|unrelated N|blank N DIR");
        ExitCode::from(2)
    };
    let (case, dir) = match args {
        [copies, dir] => match copies.parse() {
            Ok(copies) => (models::expense(copies), dir),
            Err(_) => return usage(),
        },
        [kind, n, dir] => match (kind.as_str(), n.parse()) {
            ("unrelated", Ok(n)) => (models::chat_beside_unrelated(n), dir),
            ("blank", Ok(n)) => (models::chat_beside_blank_nodes(n), dir),
            _ => return usage(),
        },
        _ => return usage(),
    };
    match project_files(Path::new(dir), &case) {
        Ok(_) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{e}");
            ExitCode::FAILURE
        }
    }
}

/// Writes `case`'s model files and a `seams.toml` with htmx alone into
/// `dir`; the manifest's text.
fn project_files(dir: &Path, case: &Case) -> Result<String, String> {
    std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
    let names: Vec<String> = case
        .write(dir)
        .map_err(|e| e.to_string())?
        .iter()
        .map(|name| format!("\"{name}\""))
        .collect();
    let manifest = format!(
        "[model]\nfiles = [{}]\n\n[[generator]]\nbuiltin = \"htmx\"\n",
        names.join(", ")
    );
    std::fs::write(dir.join("seams.toml"), &manifest).map_err(|e| e.to_string())?;
    Ok(manifest)
}

/// `seams generate` with the tracing render off (`untraced`: no traces, no
/// sidecars), or without the model check against the generators'
/// vocabularies (`unchecked`). Its limits are raised: it is a measurement,
/// and untraced renders keep their contexts for whoever traces them later.
fn modified(dir: &Path, mode: &str) -> Result<(), String> {
    let mut project = seams_core::Project::load(dir).map_err(|e| e.to_string())?;
    project.limits.memory_bytes = 16 << 30;
    project.limits.fuel = 1_000_000_000_000;
    project.limits.timeout = Duration::from_secs(3600);
    project.limits.max_output_bytes = 4096 << 20;
    let runtime =
        seams_runtime::Runtime::with_stack(seams::cli::cache_dir(), project.limits.stack_bytes)
            .map_err(|e| e.to_string())?;
    let runtime = match mode {
        "untraced" => seams_runtime::testing::without_tracing(runtime),
        _ => seams_runtime::testing::without_model_check(runtime),
    };
    let report = seams_core::generate(&project, &runtime, &seams_core::GenerateOptions::default())
        .map_err(|e| e.to_string())?;
    match report.failures.first() {
        Some(failure) => Err(failure.to_string()),
        None => Ok(()),
    }
}

struct Options {
    sizes: Vec<usize>,
    unrelated: usize,
    blank: usize,
    limit: Duration,
}

fn options(args: &[String]) -> Result<Options, String> {
    let mut options = Options {
        sizes: vec![1, 10, 100, 300],
        unrelated: 1_000_000,
        blank: 100_000,
        limit: Duration::from_secs(900),
    };
    let mut args = args.iter();
    while let Some(flag) = args.next() {
        let value = args.next().ok_or_else(|| format!("{flag} needs a value"))?;
        let number = |v: &str| v.parse::<usize>().map_err(|e| format!("{flag} {v}: {e}"));
        match flag.as_str() {
            "--sizes" => options.sizes = value.split(',').map(number).collect::<Result<_, _>>()?,
            "--unrelated" => options.unrelated = number(value)?,
            "--blank" => options.blank = number(value)?,
            "--limit" => options.limit = Duration::from_secs(number(value)? as u64),
            _ => return Err(format!("unknown option {flag}")),
        }
    }
    Ok(options)
}

/// What one model gave.
struct Row {
    case: String,
    copies: Option<usize>,
    triples: usize,
    output_bytes: u64,
    floor: Cost,
    untraced: Cost,
    traced: Cost,
    unchecked: Cost,
    cold: Cost,
    noop: Cost,
    /// A no-op without the record of the locked files' stats: it reads
    /// every one.
    unrecorded: Cost,
    check: Cost,
    defaults: String,
}

const RAISED: &str = "\n[sandbox]\nfuel = 1000000000000\ntimeout-seconds = 3600\nmemory-mib = 4096\nmax-output-mib = 4096\nmax-outputs = 1000000\n";

fn driver(args: &[String]) -> Result<(), String> {
    let options = options(args)?;
    let work = tempfile::tempdir().map_err(|e| e.to_string())?;
    let mut cases: Vec<Case> = options.sizes.iter().map(|&k| models::expense(k)).collect();
    if options.unrelated > 0 {
        cases.push(models::chat_beside_unrelated(options.unrelated));
    }
    if options.blank > 0 {
        cases.push(models::chat_beside_blank_nodes(options.blank));
    }
    // Each row is printed as soon as it is measured: a case that fails
    // (or runs past the limit) is said and the others carry on.
    print_header();
    let mut rows = Vec::new();
    for (n, case) in cases.into_iter().enumerate() {
        eprintln!("seams-bench: {}", case.name);
        let name = case.name.clone();
        match measure_case(&work.path().join(format!("case{n}")), case, &options) {
            Ok(row) => {
                print_row(&row);
                rows.push(row);
            }
            Err(e) => println!(
                "| {name} | failed: {} |",
                e.replace('|', "/").replace('\n', " ")
            ),
        }
    }
    print_growth(&rows);
    Ok(())
}

fn measure_case(dir: &Path, case: Case, options: &Options) -> Result<Row, String> {
    let manifest = project_files(dir, &case)?;
    // Small runs are short and this machine's speed drifts: more rounds
    // (with 11, the ratio to the floor at ten copies moved from 1.32 to
    // 1.63 between runs of one build). At least three, so that one
    // disturbed run is not the median.
    let rounds = match case.copies {
        Some(k) if k <= 10 => 31,
        Some(k) if k <= 100 => 5,
        _ => 3,
    };
    let cache = dir.join("cache");
    let log = dir.join("log.txt");
    let project = dir.to_str().ok_or("a UTF-8 temporary directory")?;
    let fresh = || fresh(dir);
    let once = |mode: &str, cache_dir: &Path| {
        measure::settle(dir);
        run_self(
            &["run", mode, project],
            &[("SEAMS_CACHE_DIR", cache_dir)],
            options.limit,
            &log,
        )
    };
    let failed = |what: &str| {
        let log = std::fs::read_to_string(&log).unwrap_or_default();
        format!("{}: {what} failed: {}", case.name, log.trim())
    };

    let run_floor = || {
        let _ = std::fs::remove_dir_all(dir.join("floor"));
        once("floor", &cache)
    };
    let first_floor = run_floor();
    if !first_floor.ok {
        return Err(failed("the floor"));
    }
    let triples = std::fs::read_to_string(dir.join(TRIPLES))
        .ok()
        .and_then(|t| t.trim().parse().ok())
        .unwrap_or(0);
    // Cold: an empty component cache. With the default limits first.
    fresh();
    let cold_cache = dir.join("cold-cache");
    let mut cold = once("seams", &cold_cache);
    let mut defaults = "pass".to_owned();
    if !cold.ok {
        let log = std::fs::read_to_string(&log).unwrap_or_default();
        let limit = log
            .split("raise [sandbox] ")
            .nth(1)
            .and_then(|r| r.split_whitespace().next())
            .unwrap_or("?");
        defaults = format!("fail ({limit})");
        std::fs::write(dir.join("seams.toml"), format!("{manifest}{RAISED}"))
            .map_err(|e| e.to_string())?;
        let _ = std::fs::remove_dir_all(&cold_cache);
        fresh();
        cold = once("seams", &cold_cache);
        if !cold.ok {
            return Err(failed("seams generate"));
        }
    }
    let output_bytes = dir_bytes(&dir.join("out"));
    compare(&dir.join("floor"), &dir.join("out"))
        .map_err(|e| format!("{}: the floor's files differ from seams's: {e}", case.name))?;

    // Every mode once per round, so that a drift in the machine's speed
    // touches each alike and the ratios hold; the median round of each.
    let mut costs: [Vec<Cost>; 7] = Default::default();
    for round in 0..rounds {
        let floor = if round == 0 { first_floor } else { run_floor() };
        let mut measured = [floor, Cost::default(), Cost::default(), Cost::default()];
        for (at, (mode, what)) in [
            ("untraced", "the untraced run"),
            ("unchecked", "the unchecked run"),
            ("seams", "seams generate"),
        ]
        .into_iter()
        .enumerate()
        {
            fresh();
            measured[at + 1] = once(mode, &cache);
            if !measured[at + 1].ok {
                return Err(failed(what));
            }
        }
        // Up to date after the traced run: a no-op (which reads only the
        // files whose stats changed since the generate recorded them), a
        // check, and a no-op without the record (which reads every locked
        // file).
        let noop = once("seams", &cache);
        let check = once("check", &cache);
        let _ = std::fs::remove_dir_all(cache.join("stat"));
        let unrecorded = once("seams", &cache);
        if !(noop.ok && check.ok && unrecorded.ok) {
            return Err(failed("a warm run"));
        }
        for (kept, cost) in costs
            .iter_mut()
            .zip(measured.into_iter().chain([noop, check, unrecorded]))
        {
            kept.push(cost);
        }
    }
    let [floor, untraced, unchecked, traced, noop, check, unrecorded] = costs.map(|mut c| {
        c.sort_by_key(|c| c.wall);
        c[c.len() / 2]
    });
    let _ = std::fs::remove_dir_all(dir);
    Ok(Row {
        case: case.name,
        copies: case.copies,
        triples,
        output_bytes,
        floor,
        untraced,
        traced,
        unchecked,
        cold,
        noop,
        unrecorded,
        check,
        defaults,
    })
}

/// Total bytes of the files under `dir`.
/// Removes what a generate of the project in `dir` wrote (its output
/// directory and lock), so that the next one starts from nothing.
fn fresh(dir: &Path) {
    let _ = std::fs::remove_dir_all(dir.join("out"));
    let _ = std::fs::remove_file(dir.join("seams.lock"));
}

fn dir_bytes(dir: &Path) -> u64 {
    let mut total = 0;
    if let Ok(entries) = std::fs::read_dir(dir) {
        for entry in entries.flatten() {
            let path = entry.path();
            total += if path.is_dir() {
                dir_bytes(&path)
            } else {
                entry.metadata().map(|m| m.len()).unwrap_or(0)
            };
        }
    }
    total
}

/// Every file of the floor equals seams's, and seams wrote no other
/// output (its trace sidecars aside).
fn compare(floor: &Path, seams: &Path) -> Result<(), String> {
    let files = |root: &Path| -> Vec<PathBuf> {
        fn walk(root: &Path, dir: &Path, out: &mut Vec<PathBuf>) {
            for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
                let path = entry.path();
                if path.is_dir() {
                    walk(root, &path, out);
                } else if !path.to_string_lossy().ends_with(".trace.json") {
                    out.push(path.strip_prefix(root).unwrap().to_owned());
                }
            }
        }
        let mut out = Vec::new();
        walk(root, root, &mut out);
        out.sort();
        out
    };
    let (ours, theirs) = (files(floor), files(seams));
    if ours != theirs {
        return Err(format!("{} files against {}", ours.len(), theirs.len()));
    }
    for path in ours {
        if std::fs::read(floor.join(&path)).ok() != std::fs::read(seams.join(&path)).ok() {
            return Err(format!("{} differs", path.display()));
        }
    }
    Ok(())
}

fn seconds(c: &Cost) -> f64 {
    c.wall.as_secs_f64()
}

fn print_header() {
    println!(
        "| model | triples | output MB | floor s (MB) | untraced s (MB) | untraced / floor | traced s (MB) | traced / untraced | traced / floor | unchecked s | traced / unchecked | cold s | no-op s | no-op / traced | no-op reading all s | reading all / traced | check s | defaults |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
}

fn print_row(r: &Row) {
    let s = seconds;
    let mb = |c: &Cost| c.peak as f64 / (1 << 20) as f64;
    {
        println!(
            "| {} | {} | {:.1} | {:.3} ({:.0}) | {:.3} ({:.0}) | {:.2} | {:.3} ({:.0}) | {:.2} | {:.2} | {:.3} | {:.2} | {:.3} | {:.3} | {:.3} | {:.3} | {:.3} | {:.3} | {} |",
            r.case,
            r.triples,
            r.output_bytes as f64 / (1 << 20) as f64,
            s(&r.floor),
            mb(&r.floor),
            s(&r.untraced),
            mb(&r.untraced),
            s(&r.untraced) / s(&r.floor),
            s(&r.traced),
            mb(&r.traced),
            s(&r.traced) / s(&r.untraced),
            s(&r.traced) / s(&r.floor),
            s(&r.unchecked),
            s(&r.traced) / s(&r.unchecked),
            s(&r.cold),
            s(&r.noop),
            s(&r.noop) / s(&r.traced),
            s(&r.unrecorded),
            s(&r.unrecorded) / s(&r.traced),
            s(&r.check),
            r.defaults
        );
    }
}

fn print_growth(rows: &[Row]) {
    let s = seconds;
    let sized: Vec<&Row> = rows.iter().filter(|r| r.copies.is_some()).collect();
    if sized.len() > 1 {
        println!();
        println!(
            "| growth | copies | output bytes | floor time | traced time | traced peak memory | floor peak memory |"
        );
        println!("|---|---|---|---|---|---|---|");
        for pair in sized.windows(2) {
            let (a, b) = (pair[0], pair[1]);
            let ratio = |x: f64, y: f64| y / x;
            println!(
                "| {} -> {} | {:.2}x | {:.2}x | {:.2}x | {:.2}x | {:.2}x | {:.2}x |",
                a.copies.unwrap_or(0),
                b.copies.unwrap_or(0),
                ratio(a.copies.unwrap_or(1) as f64, b.copies.unwrap_or(1) as f64),
                ratio(a.output_bytes as f64, b.output_bytes as f64),
                ratio(s(&a.floor), s(&b.floor)),
                ratio(s(&a.traced), s(&b.traced)),
                ratio(a.traced.peak as f64, b.traced.peak as f64),
                ratio(a.floor.peak as f64, b.floor.peak as f64),
            );
        }
    }
}
