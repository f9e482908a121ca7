//! Generators cannot harm each other: before anything is written, every
//! successful run's name and outputs are claimed, and a claim that clashes
//! fails every generator involved, naming the others. A pure decision on
//! names and paths.
//!
//! Paths clash when a file system would take them for one file: equal, or
//! equal up to case or Unicode normalisation (macOS and Windows fold them),
//! or one a directory the other needs. Names clash when two components use
//! one `meta` name, or a component uses the name of a built-in the project
//! also runs (a built-in's own package, pulled from a registry in place of
//! the built-in, keeps its name).

use std::collections::{BTreeMap, BTreeSet};

use unicode_normalization::UnicodeNormalization;

use crate::project::GeneratorSource;

/// One successful run, as the claims see it.
pub(crate) struct Claimant<'a> {
    /// How `seams.toml` names the generator.
    pub(crate) source: &'a GeneratorSource,
    /// Its `meta` name.
    pub(crate) name: &'a str,
    /// Its outputs' paths.
    pub(crate) paths: Vec<&'a str>,
}

/// The path as a case-insensitive, normalising file system sees it.
fn fold(path: &str) -> String {
    path.nfc().collect::<String>().to_lowercase()
}

/// Why each clashing claimant fails, by its index. `builtins` are the
/// built-ins the project runs, whether they succeeded or not.
pub(crate) fn clashes(claimants: &[Claimant<'_>], builtins: &[&str]) -> BTreeMap<usize, String> {
    let mut failed: BTreeMap<usize, String> = BTreeMap::new();
    let mut fail = |i: usize, why: String| {
        failed.entry(i).or_insert(why);
    };

    // Names.
    let mut by_name: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (i, c) in claimants.iter().enumerate() {
        let is_that_builtin = matches!(c.source, GeneratorSource::Builtin(n) if n == c.name);
        if builtins.contains(&c.name) && !is_that_builtin {
            fail(
                i,
                format!(
                    "calls itself {:?}, the name of a built-in generator this project also runs; a component must use a name of its own, or replace the built-in",
                    c.name
                ),
            );
        }
        by_name.entry(c.name).or_default().push(i);
    }
    for (name, holders) in by_name.iter().filter(|(_, h)| h.len() > 1) {
        for &i in holders {
            // The built-in keeps its name; the others fail above.
            if matches!(claimants[i].source, GeneratorSource::Builtin(n) if n == name) {
                continue;
            }
            let others: Vec<String> = holders
                .iter()
                .filter(|&&j| j != i)
                .map(|&j| claimants[j].source.to_string())
                .collect();
            fail(
                i,
                format!(
                    "calls itself {name:?}, as {} does; generator names must be unique",
                    others.join(" and ")
                ),
            );
        }
    }

    // Paths: by folded form, with the claimant and the path as returned.
    let mut files: BTreeMap<String, Vec<(usize, &str)>> = BTreeMap::new();
    for (i, c) in claimants.iter().enumerate() {
        for path in &c.paths {
            files.entry(fold(path)).or_default().push((i, path));
        }
    }
    let owner = |j: usize| claimants[j].source.to_string();
    for holders in files.values().filter(|h| h.len() > 1) {
        for &(i, path) in holders {
            for &(j, other) in holders.iter().filter(|&&(j, p)| (j, p) != (i, path)) {
                let why = match (i == j, path == other) {
                    (false, true) => format!("returned {path:?}, which {} also writes", owner(j)),
                    (false, false) => format!(
                        "returned {path:?}, which is the same file as {other:?} that {} writes on file systems that ignore case or Unicode form",
                        owner(j)
                    ),
                    // The runtime refuses exact duplicates within one run.
                    (true, _) => format!(
                        "returned {path:?} and {other:?}, which are one file on file systems that ignore case or Unicode form"
                    ),
                };
                fail(i, why);
            }
        }
    }
    // A file one generator writes where another needs a directory.
    for (i, c) in claimants.iter().enumerate() {
        for path in &c.paths {
            let mut dirs: BTreeSet<String> = BTreeSet::new();
            let mut rest = *path;
            while let Some((dir, _)) = rest.rsplit_once('/') {
                dirs.insert(fold(dir));
                rest = dir;
            }
            for dir in dirs {
                for &(j, file) in files.get(&dir).into_iter().flatten() {
                    if i != j {
                        fail(
                            i,
                            format!(
                                "returned {path:?}, inside {file:?}, which {} writes as a file",
                                owner(j)
                            ),
                        );
                        fail(
                            j,
                            format!(
                                "returned {file:?} as a file, but {} writes {path:?} inside it",
                                owner(i)
                            ),
                        );
                    }
                }
            }
        }
    }
    failed
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;

    fn wasm(path: &str) -> GeneratorSource {
        GeneratorSource::Wasm {
            path: PathBuf::from(path),
            sha256: None,
        }
    }

    /// Which claimants fail (by index), with a fragment of each reason.
    fn check(claimants: &[Claimant<'_>], expected: &[(usize, &str)]) {
        let builtins: Vec<&str> = claimants
            .iter()
            .filter_map(|c| match c.source {
                GeneratorSource::Builtin(name) => Some(name.as_str()),
                _ => None,
            })
            .collect();
        let failed = clashes(claimants, &builtins);
        assert_eq!(
            failed.keys().copied().collect::<Vec<_>>(),
            expected.iter().map(|(i, _)| *i).collect::<Vec<_>>(),
            "{failed:#?}"
        );
        for (i, fragment) in expected {
            assert!(
                failed[i].contains(fragment),
                "{i}: {:?} lacks {fragment:?}",
                failed[i]
            );
        }
    }

    #[test]
    fn each_kind_of_clash_fails_every_generator_involved_and_only_them() {
        let htmx = GeneratorSource::Builtin("htmx".into());
        let fastapi = GeneratorSource::Builtin("fastapi".into());
        let (a, b) = (wasm("a.wasm"), wasm("b.wasm"));
        let c = |source, name, paths: &[&'static str]| Claimant {
            source,
            name,
            paths: paths.to_vec(),
        };
        // No clash.
        check(
            &[
                c(&htmx, "htmx", &["index.html"]),
                c(&a, "mine", &["app.py"]),
            ],
            &[],
        );
        // The same path, listed first or last.
        check(
            &[
                c(&a, "hijack", &["app.py"]),
                c(&fastapi, "fastapi", &["app.py", "requirements.txt"]),
                c(&htmx, "htmx", &["index.html"]),
            ],
            &[
                (0, "which fastapi also writes"),
                (1, "which a.wasm also writes"),
            ],
        );
        // Equal up to case, or to Unicode normalisation (é composed or not).
        check(
            &[c(&a, "x", &["App.py"]), c(&b, "y", &["app.py"])],
            &[
                (0, "same file as \"app.py\""),
                (1, "same file as \"App.py\""),
            ],
        );
        check(
            &[
                c(&a, "x", &["caf\u{e9}.txt"]),
                c(&b, "y", &["cafe\u{301}.txt"]),
            ],
            &[(0, "Unicode form"), (1, "Unicode form")],
        );
        // Within one generator.
        check(&[c(&a, "x", &["README", "readme"])], &[(0, "are one file")]);
        // A file where another needs a directory.
        check(
            &[
                c(&a, "x", &["app.py/x"]),
                c(&fastapi, "fastapi", &["app.py"]),
            ],
            &[
                (0, "inside \"app.py\""),
                (1, "as a file, but a.wasm writes"),
            ],
        );
        // A built-in's name, and a name used twice.
        check(
            &[
                c(&a, "htmx", &["p.html"]),
                c(&htmx, "htmx", &["index.html"]),
            ],
            &[(0, "the name of a built-in generator this project also runs")],
        );
        // A built-in's name where the project does not run it: the
        // built-in's own package from a registry.
        check(&[c(&a, "htmx", &["p.html"])], &[]);
        check(
            &[c(&a, "twin", &["a.txt"]), c(&b, "twin", &["b.txt"])],
            &[(0, "as b.wasm does"), (1, "as a.wasm does")],
        );
    }
}
