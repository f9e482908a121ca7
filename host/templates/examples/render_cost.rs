//! What a tracing render costs beside the normal one, in this crate alone:
//! the htmx built-in's templates, pages whose context shares one
//! navigation list of N pages (as at expense x N/3), rendered on one
//! thread. No sandbox, no files: it isolates the template engine's share
//! of a traced run, so that a change to the tracing render is measured in
//! seconds, not in a rebuild of the whole host.
//!
//! Run with `cargo run --release -p seams-templates --example render_cost
//! [-- PAGES [ROUNDS]]`. It prints the fastest round's time per page of
//! each way to render and the ratios to the normal render.

use std::time::{Duration, Instant};

use seams_templates::{Citations, Syntax, TemplateService};

const TEMPLATES: [(&str, &str); 4] = [
    (
        "layout.html",
        include_str!("../../../generators/htmx/templates/layout.html"),
    ),
    (
        "page.html",
        include_str!("../../../generators/htmx/templates/page.html"),
    ),
    (
        "list.html",
        include_str!("../../../generators/htmx/templates/list.html"),
    ),
    (
        "form.html",
        include_str!("../../../generators/htmx/templates/form.html"),
    ),
];

/// Each page's context, as the htmx built-in serializes it: the shared
/// navigation list, and the page's own list and form.
fn contexts(pages: usize) -> Vec<String> {
    let iri = |what: &str, i: usize| format!("https://example.org/expense#{what}_c{i}");
    let nav: Vec<serde_json::Value> = (0..pages)
        .map(|i| {
            serde_json::json!({
                "iri": iri("page", i),
                "title": format!("Page {i}"),
                "href": format!("page-c{i}.html"),
            })
        })
        .collect();
    let nav = serde_json::to_string(&nav).expect("JSON");
    (0..pages)
        .map(|i| {
            let page = serde_json::json!({
                "iri": iri("page", i),
                "title": format!("Page {i}"),
                "file": format!("page-c{i}.html"),
                "components": [
                    {
                        "iri": iri("list", i), "origins": [iri("entity", i)],
                        "kind": "list", "label": "Reports", "slug": format!("reports-{i}"),
                        "empty_text": "None yet.", "entity": null, "links": [],
                    },
                    {
                        "iri": iri("form", i), "kind": "form", "label": "File a report",
                        "slug": format!("file-{i}"), "submit_label": "File", "update": false,
                        "fields": (0..4).map(|f| serde_json::json!({
                            "iri": iri(&format!("field{f}"), i), "name": format!("f{f}"),
                            "label": format!("Field {f}"), "input_type": "text", "required": f % 2 == 0,
                        })).collect::<Vec<_>>(),
                        "links": [{"iri": iri("flow", i), "href": "page-c0.html", "label": "Back"}],
                    },
                ],
                "links": [],
            });
            format!(
                "{{\"app\":{{\"iri\":\"https://example.org/expense#app\",\"title\":\"Expenses\"}},\"nav\":{nav},\"page\":{page}}}"
            )
        })
        .collect()
}

fn fastest(rounds: usize, mut round: impl FnMut() -> usize) -> (Duration, usize) {
    let mut best = Duration::MAX;
    let mut bytes = 0;
    for _ in 0..rounds {
        let start = Instant::now();
        bytes = round();
        best = best.min(start.elapsed());
    }
    (best, bytes)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let pages: usize = args.next().map(|a| a.parse()).transpose()?.unwrap_or(900);
    let rounds: usize = args.next().map(|a| a.parse()).transpose()?.unwrap_or(5);
    let service = TemplateService::new(
        TEMPLATES.map(|(n, s)| (n.to_owned(), s.to_owned())),
        Syntax::Jinja,
    )?;
    if let Err(why) = service.renders_once() {
        return Err(format!("the htmx templates are rendered twice: {why}").into());
    }
    let contexts = contexts(pages);
    let (normal, text) = fastest(rounds, || {
        contexts
            .iter()
            .map(|c| {
                service
                    .render_json("layout.html", c)
                    .expect("renders")
                    .text
                    .len()
            })
            .sum()
    });
    let traced = |once: bool| {
        fastest(rounds, || {
            let mut citations = Citations::new();
            contexts
                .iter()
                .map(|c| {
                    let mut r = if once {
                        service.render_json_to_trace("layout.html", c)
                    } else {
                        service.render_json("layout.html", c)
                    }
                    .expect("renders");
                    let start = service
                        .trace_to_sidecar(&mut r, "htmx", &mut citations)
                        .expect("traces");
                    start.head.len() + start.sources(&citations).count()
                })
                .sum::<usize>()
        })
    };
    let (instrumented, _) = fastest(rounds, || {
        contexts
            .iter()
            .map(|c| {
                let r = service
                    .render_json_to_trace("layout.html", c)
                    .expect("renders");
                r.text_len()
            })
            .sum()
    });
    let (once, sidecars) = traced(true);
    let (twice, _) = traced(false);
    let per_page = |d: Duration| d.as_secs_f64() * 1e6 / pages as f64;
    println!(
        "{pages} pages ({} MB of text, {} MB of sidecars), fastest of {rounds} rounds, per page:",
        text >> 20,
        sidecars >> 20
    );
    println!(
        "  normal render                  {:>9.1} us",
        per_page(normal)
    );
    for (what, d) in [
        ("the instrumented render alone", instrumented),
        ("traced, rendered once", once),
        ("traced, rendered twice", twice),
    ] {
        println!(
            "  {what:<30} {:>9.1} us  {:.2} x normal",
            per_page(d),
            d.as_secs_f64() / normal.as_secs_f64()
        );
    }
    Ok(())
}
