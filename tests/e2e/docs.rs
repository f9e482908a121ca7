//! The book (`docs/`) and the README hold to what seams is: no link leads
//! nowhere, the references generated from the code (the command line) and
//! from `vocabulary/` are what those give now, every `seams.toml` key the
//! code takes is documented with the default and range the code has, and
//! the tutorial runs as written.
//!
//! `SEAMS_UPDATE_DOCS=1 cargo test -p seams --test e2e docs` rewrites the
//! generated references after a deliberate change.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use seams_tests::repo_root;

fn book() -> PathBuf {
    repo_root().join("docs/src")
}

/// Every Markdown file of the book, by its path in `docs/src`.
fn chapters() -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut todo = vec![book()];
    while let Some(dir) = todo.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                todo.push(path);
            } else if path.extension().is_some_and(|e| e == "md") {
                let rel = path.strip_prefix(book()).unwrap();
                let text = std::fs::read_to_string(&path).unwrap();
                out.insert(rel.to_string_lossy().into_owned(), text);
            }
        }
    }
    out
}

/// `text` without its fenced code blocks (their brackets are code).
fn prose(text: &str) -> String {
    let mut fenced = false;
    let mut out = String::new();
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if !fenced {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

/// The targets of the inline links `[text](target)` of `text`'s prose.
fn links(text: &str) -> Vec<String> {
    let prose = prose(text);
    let mut out = Vec::new();
    let mut rest = prose.as_str();
    while let Some(at) = rest.find("](") {
        rest = &rest[at + 2..];
        if let Some(end) = rest.find(')') {
            out.push(rest[..end].to_owned());
        }
    }
    out
}

/// The anchors mdBook gives `text`'s headings: lower case, spaces as
/// hyphens, other punctuation dropped.
fn anchors(text: &str) -> BTreeSet<String> {
    prose(text)
        .lines()
        .filter_map(|l| l.strip_prefix('#'))
        .map(|h| {
            h.trim_start_matches('#')
                .trim()
                .chars()
                .filter_map(|c| match c {
                    ' ' => Some('-'),
                    c if c.is_alphanumeric() || c == '-' || c == '_' => {
                        Some(c.to_ascii_lowercase())
                    }
                    _ => None,
                })
                .collect()
        })
        .collect()
}

/// Why `target`, linked from the file `from`, leads nowhere; `None` when
/// it leads to a file (and heading) that exists.
fn broken(from: &Path, target: &str) -> Option<String> {
    if target.starts_with("http://") || target.starts_with("https://") {
        return None;
    }
    let (file, anchor) = target.split_once('#').unwrap_or((target, ""));
    let path = if file.is_empty() {
        from.to_owned()
    } else {
        from.parent().unwrap().join(file)
    };
    let Ok(text) = std::fs::read_to_string(&path) else {
        return Some(format!("{target}: no file {}", path.display()));
    };
    (!anchor.is_empty() && !anchors(&text).contains(anchor))
        .then(|| format!("{target}: no heading #{anchor} in {}", path.display()))
}

#[test]
fn no_link_of_the_book_or_the_readme_leads_nowhere() {
    let chapters = chapters();
    let mut wrong = Vec::new();
    let mut files: Vec<(PathBuf, String)> = chapters
        .iter()
        .map(|(rel, text)| (book().join(rel), text.clone()))
        .collect();
    let readme = repo_root().join("README.md");
    files.push((readme.clone(), std::fs::read_to_string(&readme).unwrap()));
    for (path, text) in &files {
        for target in links(text) {
            if let Some(why) = broken(path, &target) {
                wrong.push(format!("{}: {why}", path.display()));
            }
        }
    }
    // The summary lists every chapter, and only chapters.
    let summary = &chapters["SUMMARY.md"];
    let listed: BTreeSet<String> = links(summary).into_iter().collect();
    for rel in chapters.keys().filter(|r| *r != "SUMMARY.md") {
        if !listed.contains(rel) {
            wrong.push(format!("SUMMARY.md does not list {rel}"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// Compares the generated text `made` with the committed `rel`, or
/// rewrites it under `SEAMS_UPDATE_DOCS=1`.
fn generated(rel: &str, made: &str) {
    let path = book().join(rel);
    if std::env::var_os("SEAMS_UPDATE_DOCS").is_some() {
        std::fs::write(&path, made).unwrap();
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == made,
        "{} is not what the code gives now; run `SEAMS_UPDATE_DOCS=1 cargo test -p seams --test e2e docs` and commit it",
        path.display()
    );
}

#[test]
fn the_command_line_reference_is_the_binarys() {
    generated("reference/cli.md", &seams::cli::reference());
}

/// The vocabulary reference, from `vocabulary/ui.ttl`: each class and
/// property with the comment above it, its domain and its range.
fn vocabulary_reference(ttl: &str) -> String {
    let mut classes = String::new();
    let mut properties = String::new();
    let mut comment: Vec<String> = Vec::new();
    let mut lines = ttl.lines().peekable();
    while let Some(line) = lines.next() {
        if let Some(text) = line.strip_prefix('#') {
            if text.trim_start().starts_with("---") {
                comment.clear();
            } else {
                comment.push(text.trim().to_owned());
            }
            continue;
        }
        let Some(term) = line
            .strip_prefix("ui:")
            .and_then(|l| l.split_whitespace().next())
        else {
            comment.clear();
            continue;
        };
        let mut statement = line.to_owned();
        while !statement.trim_end().ends_with(" .") {
            let Some(next) = lines.next() else { break };
            statement.push(' ');
            statement.push_str(next.trim());
        }
        let after = |key: &str| {
            statement
                .split(key)
                .nth(1)
                .and_then(|r| r.split([' ', ';']).find(|w| !w.is_empty()))
                .map(|w| format!("`{w}`"))
                .unwrap_or_default()
        };
        let text = comment
            .join(" ")
            .replace('|', "\\|")
            .replace('<', "&lt;")
            .replace('>', "&gt;");
        comment.clear();
        if statement.contains(" a rdfs:Class") {
            classes.push_str(&format!("| `ui:{term}` | {text} |\n"));
        } else if statement.contains(" a rdf:Property") {
            properties.push_str(&format!(
                "| `ui:{term}` | {} | {} | {text} |\n",
                after("rdfs:domain"),
                after("rdfs:range")
            ));
        }
    }
    format!(
        "# The UI vocabulary, term by term\n\nGenerated from `vocabulary/ui.ttl` by `tests/e2e/docs.rs`: each term with the comment written above it. The rules a model must keep are its shapes, `vocabulary/ui.shapes.ttl`.\n\n## Classes\n\n| class | what it is |\n| --- | --- |\n{classes}\n## Properties\n\n| property | domain | range | what it says |\n| --- | --- | --- | --- |\n{properties}"
    )
}

#[test]
fn the_vocabulary_reference_is_the_vocabularys() {
    let ttl = std::fs::read_to_string(repo_root().join("vocabulary/ui.ttl")).unwrap();
    let made = vocabulary_reference(&ttl);
    assert!(made.contains("| `ui:Page` |"), "{made}");
    assert!(
        made.contains("| `ui:homePage` | `ui:Application` | `ui:Page` |"),
        "{made}"
    );
    generated("reference/vocabulary.md", &made);
}

/// The documented keys of each `seams.toml` table: (table, key) to
/// (default, range), from `seams-toml.md`'s tables.
fn documented_keys() -> BTreeMap<(String, String), (String, String)> {
    let text = std::fs::read_to_string(book().join("seams-toml.md")).unwrap();
    let mut table = String::new();
    let mut out = BTreeMap::new();
    for line in text.lines() {
        if let Some(heading) = line.strip_prefix("### `") {
            table = heading.trim_end_matches('`').to_owned();
            continue;
        }
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        if table.is_empty() || cells.len() < 5 || !cells[1].starts_with('`') {
            continue;
        }
        let key = cells[1].trim_matches('`').to_owned();
        out.insert(
            (table.clone(), key),
            (cells[2].trim_matches('`').to_owned(), cells[3].to_owned()),
        );
    }
    out
}

/// `seams.toml`'s error for `text` in a fresh project, or `None` when it
/// loads.
fn manifest_error(text: &str) -> Option<String> {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("m.ttl"), "").unwrap();
    std::fs::write(dir.path().join("seams.toml"), text).unwrap();
    seams_core::Project::load(dir.path())
        .err()
        .map(|e| e.to_string())
}

/// The keys the code takes in `table`, from the refusal of an unknown one.
fn code_keys(table: &str) -> BTreeSet<String> {
    let text = match table {
        "[model]" => "[model]\nzz-unknown = 1\n".to_owned(),
        "[[generator]]" => {
            "[model]\nfiles = [\"m.ttl\"]\n[[generator]]\nzz-unknown = 1\n".to_owned()
        }
        other => format!("[model]\nfiles = [\"m.ttl\"]\n{other}\nzz-unknown = 1\n"),
    };
    let error = manifest_error(&text).expect("an unknown key is refused");
    let expected = error.split("expected").nth(1).unwrap_or_default();
    expected
        .split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_owned)
        .collect()
}

#[test]
fn every_seams_toml_key_is_documented_with_the_default_and_range_the_code_has() {
    let documented = documented_keys();
    let tables: BTreeSet<&str> = documented.keys().map(|(t, _)| t.as_str()).collect();
    assert_eq!(
        tables,
        BTreeSet::from([
            "[model]",
            "[output]",
            "[[generator]]",
            "[sandbox]",
            "[propose]"
        ])
    );
    for table in &tables {
        let listed: BTreeSet<String> = documented
            .keys()
            .filter(|(t, _)| t == table)
            .map(|(_, k)| k.clone())
            .collect();
        assert_eq!(listed, code_keys(table), "{table}");
    }
    // Each sandbox default is the code's: setting it changes nothing; each
    // range's top is taken and one more refused, naming the key.
    let base = "[model]\nfiles = [\"m.ttl\"]\n[[generator]]\nbuiltin = \"htmx\"\n";
    let limits = |sandbox: &str| {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("m.ttl"), "").unwrap();
        std::fs::write(
            dir.path().join("seams.toml"),
            format!("{base}[sandbox]\n{sandbox}"),
        )
        .unwrap();
        format!(
            "{:?}",
            seams_core::Project::load(dir.path()).unwrap().limits
        )
    };
    let defaults = limits("");
    for ((table, key), (default, range)) in &documented {
        if table != "[sandbox]" {
            continue;
        }
        assert_eq!(limits(&format!("{key} = {default}\n")), defaults, "{key}");
        let top = range.rsplit(' ').next().unwrap();
        if top == "up" {
            continue;
        }
        let over = top.parse::<u64>().unwrap() + 1;
        assert!(
            manifest_error(&format!("{base}[sandbox]\n{key} = {top}\n")).is_none(),
            "{key} = {top}"
        );
        let refused = manifest_error(&format!("{base}[sandbox]\n{key} = {over}\n"))
            .unwrap_or_else(|| panic!("{key} = {over} was taken"));
        assert!(refused.contains(key.as_str()), "{refused}");
        let zero = manifest_error(&format!("{base}[sandbox]\n{key} = 0\n"));
        assert!(zero.is_some_and(|e| e.contains(key.as_str())), "{key} = 0");
    }
    // The drafting defaults, from the crate that applies them.
    for (key, default) in [
        ("timeout", seams_authoring::DEFAULT_TIMEOUT.to_string()),
        ("retries", seams_authoring::DEFAULT_RETRIES.to_string()),
        (
            "build_timeout",
            seams_authoring::DEFAULT_BUILD_TIMEOUT.to_string(),
        ),
        (
            "build_memory_mib",
            seams_authoring::DEFAULT_BUILD_MEMORY_MIB.to_string(),
        ),
    ] {
        let documented = &documented[&("[propose]".to_owned(), key.to_owned())].0;
        assert_eq!(*documented, default, "[propose] {key}");
    }
}

/// The `sh` blocks of a tutorial chapter, line by line: each runs in one
/// directory, in order, with the built `seams` first on PATH; a line
/// ending in `# exits N` must exit N, every other 0.
#[test]
fn the_tutorial_runs_as_written() {
    let text = std::fs::read_to_string(book().join("tutorial.md")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let bin = Path::new(env!("CARGO_BIN_EXE_seams")).parent().unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut fenced = false;
    let mut ran = 0;
    for line in text.lines() {
        if line.starts_with("```") {
            fenced = line == "```sh";
            continue;
        }
        if !fenced || line.trim().is_empty() {
            continue;
        }
        let expected = line
            .rsplit_once("# exits ")
            .and_then(|(_, n)| n.trim().parse::<i32>().ok())
            .unwrap_or(0);
        let run = std::process::Command::new("bash")
            .args(["-c", line])
            .current_dir(dir.path())
            .env("PATH", &path)
            .env("NO_COLOR", "1")
            .output()
            .unwrap();
        assert_eq!(
            run.status.code(),
            Some(expected),
            "{line}\n{}{}",
            String::from_utf8_lossy(&run.stdout),
            String::from_utf8_lossy(&run.stderr)
        );
        ran += 1;
    }
    assert!(ran >= 10, "only {ran} commands found");
    // The tour ends clean, with the field it added.
    let page = std::fs::read_to_string(dir.path().join("todo/out/tasks.html")).unwrap();
    assert!(page.contains("name=\"due\""), "{page}");
}

/// What the Python SDK's reference is made from: each name of
/// `seams_sdk.__all__` with its signature and docstring, and each public
/// method of a class (or of `log`'s class) the SDK defines; a name or
/// method without a docstring is printed as `UNDOCUMENTED`, which the test
/// refuses.
const PYTHON_REFERENCE: &str = r####"
import inspect, sys
sys.path.insert(0, sys.argv[1])
import seams_sdk as sdk

def doc(obj):
    text = inspect.getdoc(obj)
    return text if text else "UNDOCUMENTED"

def signature(obj):
    try:
        return str(inspect.signature(obj))
    except (TypeError, ValueError):
        return ""

out = ["# The Python SDK", "",
       "Generated from `sdk/python/seams_sdk` (its `__all__` and docstrings) by",
       "`tests/e2e/docs.rs`; `import seams_sdk as seams`.", ""]
for name in sdk.__all__:
    obj = getattr(sdk, name)
    kind = "class" if inspect.isclass(obj) else "def" if callable(obj) else "object"
    shown = f"{kind} {name}{signature(obj) if kind != 'object' else ''}"
    out += [f"## `{name}`", "", "```python", shown, "```", "", doc(obj), ""]
    cls = obj if inspect.isclass(obj) else type(obj) if kind == "object" else None
    if cls is None:
        continue
    for member, value in cls.__dict__.items():
        if member.startswith("_") or not callable(getattr(value, "__func__", value)):
            continue
        function = getattr(value, "__func__", value)
        out += [f"### `{name}.{member}`", "", "```python",
                f"def {member}{signature(function)}", "```", "", doc(function), ""]
print("\n".join(out).rstrip() + "\n", end="")
"####;

/// The Python SDK's reference page.
fn python_reference() -> String {
    let python = std::env::var_os("SEAMS_PYTHON").unwrap_or_else(|| "python3".into());
    let run = std::process::Command::new(python)
        .args(["-c", PYTHON_REFERENCE])
        .arg(repo_root().join("sdk/python"))
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    String::from_utf8(run.stdout).unwrap()
}

/// The JavaScript SDK's reference page, from `sdk/js/index.d.ts`: each
/// top-level `export` with the JSDoc above it, and each documented member
/// of an exported class; and the names `index.js` exports that the
/// declarations leave out or do not document.
fn js_reference() -> (String, Vec<String>) {
    let declarations = std::fs::read_to_string(repo_root().join("sdk/js/index.d.ts")).unwrap();
    let code = std::fs::read_to_string(repo_root().join("sdk/js/index.js")).unwrap();
    let mut out = String::from(
        "# The JavaScript and TypeScript SDK\n\nGenerated from `sdk/js/index.d.ts` (its declarations and JSDoc) by\n`tests/e2e/docs.rs`; `import * as seams from './seams-sdk/index.js'`.\n",
    );
    let mut documented = BTreeSet::new();
    let mut doc: Vec<String> = Vec::new();
    let mut lines = declarations.lines();
    let mut class: Option<String> = None;
    while let Some(line) = lines.next() {
        let trimmed = line.trim();
        if let Some(rest) = trimmed.strip_prefix("/**") {
            doc.clear();
            let mut text = rest.to_owned();
            while !text.contains("*/") {
                let Some(next) = lines.next() else { break };
                let next = next.trim();
                text.push('\n');
                if next.starts_with("*/") {
                    text.push_str("*/");
                } else {
                    text.push_str(next.trim_start_matches('*').trim());
                }
            }
            let text = text.split("*/").next().unwrap_or("");
            doc.extend(
                text.lines()
                    .map(|l| l.trim().to_owned())
                    .filter(|l| !l.is_empty()),
            );
            continue;
        }
        if let Some(declaration) = line.strip_prefix("export ") {
            let name = declaration
                .split_whitespace()
                .find(|w| {
                    ![
                        "declare",
                        "const",
                        "class",
                        "function",
                        "type",
                        "interface",
                        "abstract",
                    ]
                    .contains(w)
                })
                .unwrap_or("")
                .split(['<', '(', ':', ' ', '='])
                .next()
                .unwrap_or("")
                .to_owned();
            class = declaration.starts_with("class ").then(|| name.clone());
            if !doc.is_empty() {
                documented.insert(name.clone());
            }
            out.push_str(&format!(
                "\n## `{name}`\n\n```typescript\n{}\n```\n\n{}\n",
                line.trim_end_matches('{').trim_end(),
                if doc.is_empty() {
                    "UNDOCUMENTED".to_owned()
                } else {
                    doc.join("\n")
                }
            ));
            doc.clear();
            continue;
        }
        if line.starts_with('}') {
            class = None;
        } else if let Some(class) = &class
            && line.starts_with("  ")
            && !doc.is_empty()
        {
            out.push_str(&format!(
                "\n### `{class}` member\n\n```typescript\n{trimmed}\n```\n\n{}\n",
                doc.join("\n")
            ));
        }
        doc.clear();
    }
    let missing = code
        .lines()
        .filter_map(|l| l.strip_prefix("export "))
        .filter_map(|d| d.split_whitespace().nth(1))
        .map(|n| n.split(['(', ' ', '=']).next().unwrap_or("").to_owned())
        .filter(|n| !documented.contains(n))
        .collect();
    (out, missing)
}

/// The SDK references are generated from the SDKs' own doc comments, and
/// every name an SDK exports is in its reference with a doc.
#[test]
fn the_sdk_references_are_the_sdks_and_document_every_export() {
    let python = python_reference();
    assert!(
        !python.contains("UNDOCUMENTED"),
        "a Python SDK name has no docstring:\n{python}"
    );
    for name in ["traced", "Generator", "Model", "Row.require", "log.info"] {
        assert!(python.contains(&format!("`{name}`")), "{name}");
    }
    generated("reference/sdk-python.md", &python);
    let (js, missing) = js_reference();
    assert!(
        missing.is_empty(),
        "index.js exports without a documented declaration in index.d.ts: {missing:?}"
    );
    assert!(
        !js.contains("UNDOCUMENTED"),
        "a declaration of index.d.ts has no JSDoc:\n{js}"
    );
    for name in ["traced", "Model", "Generator", "render"] {
        assert!(js.contains(&format!("## `{name}`")), "{name}");
    }
    generated("reference/sdk-js.md", &js);
}
