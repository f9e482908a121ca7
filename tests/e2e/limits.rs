//! seams within an ordinary machine's limits: a project of hundreds of
//! outputs is generated, regenerated, pruned and checked under a small
//! soft limit on open files. The usual limit is 1,024 (systemd's default;
//! this machine's is 20,000), and a generate of 903 outputs once failed
//! under it because every staged file held a descriptor until its rename:
//! a step that holds one per file fails here long before.

use std::path::Path;
use std::process::Command;

use seams_tests::{TempProject, with_open_file_limit};

/// Far below the outputs' count, above what seams holds at once (it
/// passes with 16).
const OPEN_FILES: u64 = 32;

/// An application of `pages` pages, each with the label `label N`: the
/// htmx built-in writes a page each, plus its script and htmx itself.
fn pages_model(pages: usize, label: &str) -> String {
    let listed: Vec<String> = (0..pages).map(|i| format!("t:page_{i}")).collect();
    let mut model = format!(
        "@prefix ui: <https://w3id.org/seams/ui#> .\n\
         @prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .\n\
         @prefix t: <https://example.org/t#> .\n\
         t:app a ui:Application ; rdfs:label \"Pages\" ; ui:homePage t:page_0 ;\n    ui:page {} .\n",
        listed.join(", ")
    );
    for i in 0..pages {
        model.push_str(&format!(
            "t:page_{i} a ui:Page ; rdfs:label \"{label} {i}\" ; ui:path \"page-{i}\" ; ui:order {} .\n",
            i + 1
        ));
    }
    model
}

/// `seams ARGS --project P` as its own process, under [`OPEN_FILES`].
fn limited(p: &TempProject, args: &[&str]) -> std::process::Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_seams"));
    command
        .args(args)
        .arg("--project")
        .arg(p.path())
        .env("NO_COLOR", "1");
    with_open_file_limit(&mut command, OPEN_FILES)
        .output()
        .unwrap()
}

fn succeeded(what: &str, run: &std::process::Output) {
    assert!(
        run.status.success(),
        "{what} failed under {OPEN_FILES} open files: {}",
        String::from_utf8_lossy(&run.stderr)
    );
}

/// The names in `out/`, and how many of them are sidecars.
fn outputs(project: &Path) -> (usize, usize) {
    let names: Vec<String> = std::fs::read_dir(project.join("out"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    let sidecars = names.iter().filter(|n| n.ends_with(".trace.json")).count();
    (names.len(), sidecars)
}

#[test]
fn hundreds_of_outputs_are_written_replaced_pruned_and_checked_under_a_small_open_file_limit() {
    let pages = 150;
    let p = TempProject::new(
        &pages_model(pages, "Page"),
        "[[generator]]\nbuiltin = \"htmx\"\n",
    );
    let model = p.path().join("model.ttl");

    succeeded("a first generate", &limited(&p, &["generate", "-q"]));
    // Each page, app.js, htmx.min.js and its licence; a sidecar each.
    let written = pages + 3;
    assert_eq!(outputs(p.path()), (2 * written, written));
    let first = std::fs::read_to_string(p.path().join("out/page-7.html")).unwrap();
    assert!(first.contains("Page 7"), "{first}");

    // Nothing changed: a no-op, under the limit too.
    let noop = limited(&p, &["generate"]);
    succeeded("a no-op generate", &noop);
    assert!(
        String::from_utf8_lossy(&noop.stdout).contains("up to date"),
        "{noop:?}"
    );

    // Every page's label changed: every page and sidecar replaced at once.
    std::fs::write(&model, pages_model(pages, "Sheet")).unwrap();
    succeeded(
        "a generate replacing every page",
        &limited(&p, &["generate", "-q"]),
    );
    let replaced = std::fs::read_to_string(p.path().join("out/page-7.html")).unwrap();
    assert!(replaced.contains("Sheet 7") && !replaced.contains("Page 7"));

    // Half the pages gone: their outputs and sidecars deleted at once.
    std::fs::write(&model, pages_model(pages / 2, "Sheet")).unwrap();
    succeeded("a generate pruning half", &limited(&p, &["generate", "-q"]));
    let kept = pages / 2 + 3;
    assert_eq!(outputs(p.path()), (2 * kept, kept));
    assert!(
        !p.path()
            .join(format!("out/page-{}.html", pages - 1))
            .exists()
    );

    let check = limited(&p, &["check"]);
    succeeded("a check", &check);
}
