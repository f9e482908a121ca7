//! `seams-bench ab MODE ROUNDS PROJECT BUILD BUILD...`: one measured run
//! (`run MODE PROJECT`) of each of two or more builds of this benchmark,
//! the builds taking turns round after round (in the reverse order every
//! other round), each run from a fresh output directory and lock (but for
//! `check`) and a synced file system. Prints each build's median and its
//! ratio to the first's. This is how a change is measured against the
//! build before it: the machine's speed drifts between minutes by more
//! than most changes move it, and runs that take turns drift alike.
//!
//! MODE is a mode of `run`, or `noop`: a generate, unmeasured, then the
//! generate that finds nothing to do, measured.

use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

use crate::measure;

/// The modes `ab` measures: `run`'s, and `noop`.
const MODES: [&str; 6] = ["seams", "untraced", "unchecked", "check", "floor", "noop"];

const USAGE: &str =
    "usage: seams-bench ab seams|untraced|unchecked|check|floor|noop ROUNDS PROJECT BUILD BUILD...";

/// A run longer than this is stopped: `ab` compares small runs.
const LIMIT: Duration = Duration::from_secs(600);

/// `ab` with its arguments (after `ab`): prints what it measured; exits 2
/// on a usage error, 1 when a run fails.
pub fn main(args: &[String]) -> ExitCode {
    match compare(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure::Usage(usage)) => {
            eprintln!("{usage}");
            ExitCode::from(2)
        }
        Err(Failure::Run(why)) => {
            eprintln!("seams-bench: {why}");
            ExitCode::FAILURE
        }
    }
}

/// Why `ab` stopped.
#[derive(Debug)]
enum Failure {
    /// The arguments are not `ab`'s, with what is wrong.
    Usage(String),
    /// A run failed, with its log.
    Run(String),
}

fn compare(args: &[String]) -> Result<(), Failure> {
    let [mode, rounds, project, builds @ ..] = args else {
        return Err(Failure::Usage(USAGE.to_owned()));
    };
    let rounds: usize = rounds
        .parse()
        .map_err(|e| Failure::Usage(format!("ROUNDS {rounds}: {e}\n{USAGE}")))?;
    if builds.len() < 2 || rounds == 0 || !MODES.contains(&mode.as_str()) {
        return Err(Failure::Usage(USAGE.to_owned()));
    }
    if let Some(build) = builds.iter().find(|build| !executable(Path::new(build))) {
        return Err(Failure::Usage(format!(
            "BUILD {build}: not an executable file (a build of seams-bench, e.g. target/release/seams-bench copied aside)\n{USAGE}"
        )));
    }
    let dir = Path::new(project);
    let cache = dir.join("cache");
    let log = std::env::temp_dir().join(format!("seams-bench-ab-{}.log", std::process::id()));
    let run = |build: &str, mode: &str| {
        measure::settle(dir);
        let cost = measure::run(
            Path::new(build),
            &["run", mode, project],
            &[("SEAMS_CACHE_DIR", &cache)],
            LIMIT,
            &log,
        );
        if cost.ok {
            Ok(cost.wall)
        } else {
            let log = std::fs::read_to_string(&log).unwrap_or_default();
            Err(Failure::Run(format!(
                "{build} run {mode} {project} failed: {}",
                log.trim()
            )))
        }
    };
    let measured = |build: &str| {
        if mode != "check" {
            crate::fresh(dir);
            let _ = std::fs::remove_dir_all(dir.join("floor"));
        }
        match mode.as_str() {
            "noop" => run(build, "seams").and_then(|_| run(build, "seams")),
            mode => run(build, mode),
        }
    };
    // A first run of each, unmeasured: the page cache, the component
    // cache.
    for build in builds {
        measured(build)?;
    }
    let mut walls = vec![Vec::new(); builds.len()];
    for round in 0..rounds {
        for at in turns(round, builds.len()) {
            walls[at].push(measured(&builds[at])?);
        }
    }
    let _ = std::fs::remove_file(&log);
    let first = median(&mut walls[0]);
    for (build, walls) in builds.iter().zip(&mut walls) {
        let median = median(walls);
        println!(
            "{build}: median {:.2} ms (min {:.2}, {rounds} runs), {:.3} times the first",
            median.as_secs_f64() * 1e3,
            walls[0].as_secs_f64() * 1e3,
            median.as_secs_f64() / first.as_secs_f64(),
        );
    }
    Ok(())
}

/// Whether `path` is a file someone may run.
fn executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path)
        .is_ok_and(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0)
}

/// The order the builds run in, in `round`: as given, reversed every
/// other round, so that none always runs right after another.
fn turns(round: usize, builds: usize) -> Vec<usize> {
    let order = 0..builds;
    if round.is_multiple_of(2) {
        order.collect()
    } else {
        order.rev().collect()
    }
}

/// The median of `walls`, which it sorts.
fn median(walls: &mut [Duration]) -> Duration {
    walls.sort();
    walls[walls.len() / 2]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builds_take_turns_in_the_reverse_order_every_other_round() {
        assert_eq!(turns(0, 2), [0, 1]);
        assert_eq!(turns(1, 2), [1, 0]);
        assert_eq!(turns(2, 2), [0, 1]);
        assert_eq!(turns(3, 3), [2, 1, 0]);
    }

    #[test]
    fn the_median_is_the_middle_run() {
        let ms = Duration::from_millis;
        assert_eq!(median(&mut [ms(5), ms(1), ms(3)]), ms(3));
        assert_eq!(median(&mut [ms(4), ms(2)]), ms(4));
    }

    #[test]
    fn a_comparison_needs_two_builds_and_a_count_of_rounds() {
        let args = |a: &[&str]| a.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        for bad in [
            &["untraced", "3", "/p", "a"][..],
            &["untraced", "x", "/p", "a", "b"][..],
            &["untraced", "0", "/p", "a", "b"][..],
            &["bogus", "3", "/p", "a", "b"][..],
            &["untraced"][..],
        ] {
            match compare(&args(bad)) {
                Err(Failure::Usage(usage)) => assert!(usage.contains("usage: seams-bench ab")),
                other => panic!("{bad:?}: {other:?}"),
            }
        }
    }

    #[test]
    fn each_build_must_be_an_executable_file() {
        let dir = tempfile::tempdir().unwrap();
        let plain = dir.path().join("plain");
        std::fs::write(&plain, "not a program").unwrap();
        let exe = std::env::current_exe().unwrap();
        let (exe, dir_path, plain, missing) = (
            exe.to_str().unwrap(),
            dir.path().to_str().unwrap(),
            plain.to_str().unwrap(),
            "/nonexistent/seams-bench",
        );
        for bad in [dir_path, plain, missing] {
            let args: Vec<String> = ["untraced", "3", "/p", exe, bad]
                .iter()
                .map(|s| (*s).to_owned())
                .collect();
            match compare(&args) {
                Err(Failure::Usage(usage)) => {
                    assert!(
                        usage.starts_with(&format!("BUILD {bad}: not an executable file")),
                        "{usage}"
                    );
                }
                other => panic!("{bad}: {other:?}"),
            }
        }
    }
}
