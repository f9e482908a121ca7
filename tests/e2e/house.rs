//! The house's one direction: inside every crate, no module reaches a
//! module that reaches it back through `crate::` paths (comments and test
//! modules aside), so that each crate reads from the bottom up.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use seams_tests::repo_root;

/// The crates' source directories: every `src/` beside a `Cargo.toml`
/// that git tracks, the fuzz targets and fixtures included.
fn crate_sources(root: &Path) -> Vec<std::path::PathBuf> {
    let listed = std::process::Command::new("git")
        .args(["ls-files", "*Cargo.toml"])
        .current_dir(root)
        .output()
        .unwrap();
    String::from_utf8(listed.stdout)
        .unwrap()
        .lines()
        .filter_map(|manifest| Path::new(manifest).parent())
        .map(|dir| root.join(dir).join("src"))
        .filter(|src| src.is_dir())
        .collect()
}

/// Every module of a crate (`a::b` for `src/a/b.rs` or `src/a/b/mod.rs`)
/// with its source, the crate root left out.
fn modules(src: &Path) -> BTreeMap<String, String> {
    fn walk(src: &Path, dir: &Path, out: &mut BTreeMap<String, String>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(src, &path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let rel = path.strip_prefix(src).unwrap().with_extension("");
                let name = rel.to_string_lossy().replace('/', "::");
                let name = name.strip_suffix("::mod").unwrap_or(&name).to_owned();
                if name != "lib" && name != "main" {
                    out.insert(name, std::fs::read_to_string(&path).unwrap());
                }
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(src, src, &mut out);
    out
}

/// The modules `source` (of module `name`) names through `crate::`, its
/// own parents and children aside: the longest known module a path starts
/// with, for `crate::a::b::Item` and `use crate::{a, b::c}` alike.
fn imports(name: &str, source: &str, known: &BTreeSet<String>) -> BTreeSet<String> {
    let code = source
        .split("#[cfg(test)]\nmod tests")
        .next()
        .unwrap_or_default();
    let mut found = BTreeSet::new();
    for line in code.lines().filter(|l| !l.trim_start().starts_with("//")) {
        for (at, _) in line.match_indices("crate::") {
            let rest = &line[at + "crate::".len()..];
            let paths: Vec<&str> = match rest.strip_prefix('{') {
                Some(group) => group.split([',', '}']).collect(),
                None => vec![rest],
            };
            for path in paths {
                let segments: Vec<&str> = path
                    .trim()
                    .split("::")
                    .map(|s| s.trim_end_matches(|c: char| !c.is_alphanumeric() && c != '_'))
                    .take_while(|s| {
                        s.chars()
                            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
                            && !s.is_empty()
                    })
                    .collect();
                let target = (1..=segments.len())
                    .rev()
                    .map(|n| segments[..n].join("::"))
                    .find(|m| known.contains(m));
                if let Some(target) = target
                    && target != name
                    && !name.starts_with(&format!("{target}::"))
                    && !target.starts_with(&format!("{name}::"))
                {
                    found.insert(target);
                }
            }
        }
    }
    found
}

/// The modules reachable from `from` through `edges`.
fn reach(from: &str, edges: &BTreeMap<String, BTreeSet<String>>) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    let mut stack = vec![from.to_owned()];
    while let Some(m) = stack.pop() {
        for next in edges.get(&m).into_iter().flatten() {
            if seen.insert(next.clone()) {
                stack.push(next.clone());
            }
        }
    }
    seen
}

/// The circles of one crate: each module with the modules that reach it
/// back.
fn circles(src: &Path) -> Vec<String> {
    let modules = modules(src);
    let known: BTreeSet<String> = modules.keys().cloned().collect();
    let edges: BTreeMap<String, BTreeSet<String>> = modules
        .iter()
        .map(|(name, source)| (name.clone(), imports(name, source, &known)))
        .collect();
    let mut found = Vec::new();
    for name in &known {
        let back: Vec<String> = reach(name, &edges)
            .into_iter()
            .filter(|m| m != name && reach(m, &edges).contains(name))
            .collect();
        if !back.is_empty() {
            found.push(format!("{}: {name} <-> {back:?}", src.display()));
        }
    }
    found
}

#[test]
fn no_module_reaches_a_module_that_reaches_it_back() {
    let root = repo_root();
    let sources = crate_sources(&root);
    assert!(sources.len() > 10, "{sources:?}");
    let found: Vec<String> = sources.iter().flat_map(|src| circles(src)).collect();
    assert!(found.is_empty(), "import circles:\n{}", found.join("\n"));
}

#[test]
fn a_circle_is_found_through_a_use_group_and_a_path() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path();
    std::fs::write(src.join("a.rs"), "use crate::{b::Thing, c};\n").unwrap();
    std::fs::write(src.join("b.rs"), "fn f() { crate::a::g() }\n").unwrap();
    std::fs::write(
        src.join("c.rs"),
        "// crate::a::x in a comment\n#[cfg(test)]\nmod tests { use crate::a::y; }\n",
    )
    .unwrap();
    let found = circles(src);
    assert_eq!(found.len(), 2, "{found:?}");
    assert!(found[0].ends_with("a <-> [\"b\"]"), "{found:?}");
    assert!(found[1].ends_with("b <-> [\"a\"]"), "{found:?}");
}

/// The crates that read a project's files and its outputs, and the modules
/// among them allowed to open files directly: the readers themselves, and
/// what seams keeps in its own private directories.
const PROJECT_READERS: [(&str, &[&str]); 4] = [
    ("host/model/src", &["input_file"]),
    (
        "host/core/src",
        &["output_dir", "stat_cache", "project_lock", "seal", "trust"],
    ),
    ("host/serve/src", &[]),
    ("host/src", &[]),
];

/// Where `source` opens a file directly (test modules aside): the calls
/// that follow links, wait on a FIFO and read without end.
fn direct_reads(source: &str) -> Vec<String> {
    let code = source
        .split("#[cfg(test)]\nmod tests")
        .next()
        .unwrap_or_default();
    code.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim_start().starts_with("//"))
        .filter(|(_, l)| {
            ["fs::read(", "fs::read_to_string(", "File::open("]
                .iter()
                .any(|call| l.contains(call))
        })
        .map(|(n, l)| format!("{}: {}", n + 1, l.trim()))
        .collect()
}

/// Every file seams reads from a project or its output goes through one
/// bounded reader (`seams_model::input_file` for the project's files, the
/// output directory's own `read_regular` for outputs and sidecars): no
/// other module of those crates opens a file itself.
#[test]
fn no_project_or_output_file_is_read_but_through_the_bounded_readers() {
    let root = repo_root();
    let mut found = Vec::new();
    for (dir, allowed) in PROJECT_READERS {
        for (module, source) in modules(&root.join(dir)) {
            if allowed.contains(&module.as_str()) {
                continue;
            }
            for at in direct_reads(&source) {
                found.push(format!("{dir} {module}:{at}"));
            }
        }
    }
    assert!(found.is_empty(), "direct reads:\n{}", found.join("\n"));
    // The check finds what it looks for.
    assert_eq!(
        direct_reads(
            "fn f() { let t = std::fs::read_to_string(p); }\n#[cfg(test)]\nmod tests { fn g() { std::fs::read(p); } }\n"
        ),
        ["1: fn f() { let t = std::fs::read_to_string(p); }"]
    );
}
