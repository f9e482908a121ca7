use std::borrow::Cow;

use serde_json::json;

use super::*;
use crate::context::{Field, SharedFields, object_fields};
use crate::view::{add_view_iris, is_map, sort_iris};

#[test]
fn an_untraced_service_renders_the_same_and_traces_nothing() {
    let templates = [(
        "page.html".to_owned(),
        "<h1>{{ title }}</h1>\n{% for x in xs %}<p>{{ x }}</p>\n{% endfor %}".to_owned(),
    )];
    let traced = TemplateService::new(templates.clone(), Syntax::Jinja).unwrap();
    let untraced = TemplateService::untraced(templates, Syntax::Jinja).unwrap();
    let context = r#"{"title": "T", "xs": [1, 2]}"#;
    let text = |service: &TemplateService| service.render_json("page.html", context).unwrap().text;
    assert_eq!(text(&untraced), text(&traced));
    assert_eq!(text(&untraced), "<h1>T</h1>\n<p>1</p>\n<p>2</p>\n");
    // Asked to trace anyway, it renders plainly and its trace fails:
    // it never passes a plain render off as traced.
    let mut plain = untraced.render_json_to_trace("page.html", context).unwrap();
    assert!(plain.traced.is_none());
    assert!(untraced.trace(&mut plain).is_err());
    let mut plain = traced.render_json("page.html", context).unwrap();
    assert!(traced.trace(&mut plain).is_ok());
    // A template that does not parse is refused as by `new`.
    let broken = [("t.txt".to_owned(), "{% if %}".to_owned())];
    assert!(TemplateService::untraced(broken, Syntax::Jinja).is_err());
}

fn service(syntax: Syntax, templates: &[(&str, &str)]) -> TemplateService {
    TemplateService::new(
        templates
            .iter()
            .map(|(n, s)| (n.to_string(), s.to_string())),
        syntax,
    )
    .unwrap()
}

#[test]
fn jinja_syntax_renders_with_block_lines_trimmed() {
    let s = service(
        Syntax::Jinja,
        &[("a.txt", "{% for x in xs %}\n- {{ x }}\n{% endfor %}\nend\n")],
    );
    let r = s.render("a.txt", json!({"xs": [1, 2]})).unwrap();
    assert_eq!(r.text, "- 1\n- 2\nend\n");
}

#[test]
fn bracket_syntax_leaves_braces_verbatim() {
    let s = service(
        Syntax::Brackets,
        &[(
            "a.vue",
            "<p>{{ vue }}</p>\n[% for x in xs %]\n[[ x ]]\n[# a comment line leaves nothing #]\n[% endfor %]\n",
        )],
    );
    let r = s.render("a.vue", json!({"xs": ["a"]})).unwrap();
    assert_eq!(r.text, "<p>{{ vue }}</p>\na\n");
}

#[test]
fn includes_resolve_among_the_generators_templates() {
    let s = service(
        Syntax::Jinja,
        &[
            (
                "page.html",
                "<main>\n{% include \"part.html\" %}\n</main>\n",
            ),
            ("part.html", "<p>{{ t }}</p>\n"),
        ],
    );
    let r = s.render("page.html", json!({"t": "<b>"})).unwrap();
    assert_eq!(r.text, "<main>\n<p>&lt;b&gt;</p>\n</main>\n");
}

#[test]
fn the_tracing_functions_cannot_be_reached_from_a_template() {
    // Calling them with a huge origin id panicked the host once.
    for source in [
        "{% if __seams_line is defined %}{{ __seams_line(4000000000) }}{% endif %}\n",
        "a\n{{ 4000000000|__seams_line }}\n",
        "a\n{{ __seams_include(4000000000, \"x\") }}\n",
        "{% set __seams_value = 1 %}\n",
        "text that mentions __seams_ is refused too\n",
    ] {
        let err = TemplateService::new([("t.txt".to_owned(), source.to_owned())], Syntax::Jinja)
            .unwrap_err();
        assert!(err.message.contains("reserves"), "{source:?}: {err}");
        assert_eq!(err.template, "t.txt");
        assert_eq!(
            err.line,
            Some(
                source[..source.find("__seams_").unwrap()]
                    .matches('\n')
                    .count()
                    + 1
            )
        );
    }
}

#[test]
fn a_tracing_call_with_an_unknown_origin_is_an_error_not_a_panic() {
    let env = tracing_environment(Syntax::Jinja, &Arc::new(Origins::default()));
    for call in [
        "{{ 4000000000|__seams_line }}",
        "{{ none|__seams_line }}",
        "{{ -1|__seams_line }}",
        "{{ 99|__seams_value(1) }}",
        "{{ 99|__seams_owned(1) }}",
        "{{ 7|__seams_include('x') }}",
    ] {
        let err = env.render_str(call, ()).unwrap_err();
        assert!(
            err.to_string().contains("without a valid origin"),
            "{call}: {err}"
        );
    }
}

#[test]
fn thousands_of_templates_load_and_trace() {
    // 20,000 templates once took 55 s (a linear search per template).
    let templates: Vec<(String, String)> = (0..20_000)
        .map(|i| (format!("t{i}.txt"), format!("line {{{{ x }}}} {i}\n")))
        .collect();
    let service = TemplateService::new(templates, Syntax::Jinja).unwrap();
    let rendered = service.render("t19999.txt", json!({"x": 1})).unwrap();
    assert_eq!(rendered.text, "line 1 19999\n");
    assert_eq!(
        service.trace(&mut rendered.clone()).unwrap()[0].templates,
        ["t19999.txt:1"]
    );
}

#[test]
fn errors_name_the_template_and_line() {
    let err = TemplateService::new(
        [("bad.txt".to_string(), "ok\n{% for %}\n".to_string())],
        Syntax::Jinja,
    )
    .unwrap_err();
    assert_eq!(err.template, "bad.txt");
    assert_eq!(err.line, Some(2));

    let s = service(Syntax::Jinja, &[("a.txt", "line\n{{ missing }}\n")]);
    let err = s.render("a.txt", json!({})).unwrap_err();
    assert_eq!((err.template.as_str(), err.line), ("a.txt", Some(2)));
    let err = s.render("nope.txt", json!({})).unwrap_err();
    assert!(err.message.contains("a.txt"), "{err}");
    let err = s.render("a.txt", json!([1])).unwrap_err();
    assert!(err.message.contains("JSON object"), "{err}");
}

/// A trace line as `(line, templates, terms)`.
type Line = (usize, Vec<String>, Vec<String>);

/// Renders and traces, in two renders and, where the templates allow
/// it, in one: both give the same text and trace.
fn traced(
    syntax: Syntax,
    templates: &[(&str, &str)],
    context: serde_json::Value,
) -> (String, Vec<Line>) {
    let s = service(syntax, templates);
    let mut r = s.render(templates[0].0, context.clone()).unwrap();
    let lines = s.trace(&mut r).unwrap();
    let mut once = s
        .render_json_to_trace(templates[0].0, &context.to_string())
        .unwrap();
    assert_eq!(once.traced.is_some(), s.renders_once().is_ok());
    assert_eq!(once.text_len(), r.text.len());
    assert_eq!(s.trace(&mut once).unwrap(), lines);
    assert_eq!(once.text, r.text);
    let non_blank = r.text.split('\n').filter(|l| !l.trim().is_empty()).count();
    assert_eq!(
        lines.len(),
        non_blank,
        "every non-blank line is traced:\n{}",
        r.text
    );
    (
        r.text,
        lines
            .into_iter()
            .map(|l| (l.line, l.templates, l.terms))
            .collect(),
    )
}

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| s.to_string()).collect()
}

#[test]
fn each_line_of_a_loop_over_view_objects_gets_its_own_terms() {
    let (text, lines) = traced(
        Syntax::Jinja,
        &[(
            "list.html",
            "<ul>\n{% for item in items %}\n  <li>{{ item.label }}</li>\n{% endfor %}\n</ul>\n",
        )],
        json!({"items": [
            {"iri": "urn:a", "label": "A"},
            {"iri": "urn:b", "origins": ["urn:b2"], "label": "B"}
        ]}),
    );
    assert_eq!(text, "<ul>\n  <li>A</li>\n  <li>B</li>\n</ul>\n");
    assert_eq!(
        lines,
        [
            (1, strings(&["list.html:1"]), strings(&[])),
            (2, strings(&["list.html:3"]), strings(&["urn:a"])),
            (3, strings(&["list.html:3"]), strings(&["urn:b", "urn:b2"])),
            (4, strings(&["list.html:5"]), strings(&[])),
        ]
    );
}

#[test]
fn a_value_of_several_lines_traces_each_of_its_lines_to_its_template_line() {
    // A model literal may hold line breaks: the lines it starts have
    // no sentinel of their own (it follows the value).
    let (text, lines) = traced(
        Syntax::Jinja,
        &[(
            "t.txt",
            "{{ note }}\n{% for i in items %}<a>{{ i.h }}</a>{{ i.t }}\n{% endfor %}end\n",
        )],
        json!({"note": "a\n\nb", "items": [{"iri": "urn:i", "h": "h\nh2", "t": "t\n\n\nt2"}]}),
    );
    assert_eq!(text, "a\n\nb\n<a>h\nh2</a>t\n\n\nt2\nend\n");
    assert_eq!(
        lines,
        [
            (1, strings(&["t.txt:1"]), strings(&[])),
            (3, strings(&["t.txt:1"]), strings(&[])),
            (4, strings(&["t.txt:2"]), strings(&["urn:i"])),
            (5, strings(&["t.txt:2"]), strings(&["urn:i"])),
            (8, strings(&["t.txt:2"]), strings(&["urn:i"])),
            (9, strings(&["t.txt:3"]), strings(&[])),
        ]
    );
}

#[test]
fn values_read_off_one_object_on_a_line_trace_as_if_each_were_marked() {
    // Only the last `i.` value of line 2 is marked (see `instrument`):
    // the line its first value starts, and the line whitespace
    // control joins to the next, cite the same origins and terms.
    let (text, lines) = traced(
        Syntax::Jinja,
        &[(
            "t.txt",
            "{% for i in items %}\n{{ i.a }}-{{ i.b -}}\n {{ p.x }}\n{% endfor %}\n",
        )],
        json!({"p": {"iri": "urn:p", "x": "X"}, "items": [{"iri": "urn:i", "a": "A\nA2", "b": "B"}]}),
    );
    assert_eq!(text, "A\nA2-BX\n");
    assert_eq!(
        lines,
        [
            (1, strings(&["t.txt:2"]), strings(&["urn:i"])),
            (
                2,
                strings(&["t.txt:2", "t.txt:3"]),
                strings(&["urn:i", "urn:p"])
            ),
        ]
    );
}

#[test]
fn a_line_without_a_traced_value_falls_back_to_the_enclosing_view_object() {
    let (_, lines) = traced(
        Syntax::Jinja,
        &[(
            "f.html",
            "{% for field in fields %}\n<input name=\"{{ field.name|upper }}\">\n<br>\n{% endfor %}\ntitle: {{ title }}\n",
        )],
        json!({"iri": "urn:page", "title": "T", "fields": [{"iri": "urn:f1", "name": "x"}]}),
    );
    assert_eq!(
        lines,
        [
            // A filter loses the origin; the loop's view object remains.
            (1, strings(&["f.html:2"]), strings(&["urn:f1"])),
            (2, strings(&["f.html:3"]), strings(&["urn:f1"])),
            // Outside any loop, the context itself is the view object.
            (3, strings(&["f.html:5"]), strings(&["urn:page"])),
        ]
    );
}

#[test]
fn an_include_chain_two_deep_lists_origins_outermost_first() {
    let (text, lines) = traced(
        Syntax::Jinja,
        &[
            (
                "page.html",
                "<main>\n{% for c in cs %}\n{% include \"card.html\" %}\n{% endfor %}\n</main>\n",
            ),
            ("card.html", "<div>\n{% include \"title.html\" %}\n</div>\n"),
            ("title.html", "<h3>{{ c.title }}</h3>\n"),
        ],
        json!({"cs": [{"iri": "urn:c1", "title": "One"}, {"iri": "urn:c2", "title": "Two"}]}),
    );
    assert_eq!(
        text,
        "<main>\n<div>\n<h3>One</h3>\n</div>\n<div>\n<h3>Two</h3>\n</div>\n</main>\n"
    );
    assert_eq!(
        lines[1],
        (
            2,
            strings(&["page.html:3", "card.html:1"]),
            strings(&["urn:c1"])
        )
    );
    assert_eq!(
        lines[2],
        (
            3,
            strings(&["page.html:3", "card.html:2", "title.html:1"]),
            strings(&["urn:c1"])
        )
    );
    assert_eq!(
        lines[3],
        (
            4,
            strings(&["page.html:3", "card.html:3"]),
            strings(&["urn:c1"])
        )
    );
    assert_eq!(
        lines[5],
        (
            6,
            strings(&["page.html:3", "card.html:2", "title.html:1"]),
            strings(&["urn:c2"])
        )
    );
    assert_eq!(lines[7], (8, strings(&["page.html:5"]), strings(&[])));
}

#[test]
fn macros_called_from_a_loop_trace_each_call() {
    let (text, lines) = traced(
        Syntax::Brackets,
        &[(
            "m.txt",
            "[% macro row(x) %]\n- [[ x.name ]]\n[% endmacro %]\n[% for x in xs %]\n[[ row(x) ]]\n[% endfor %]\n",
        )],
        json!({"xs": [{"iri": "urn:1", "name": "one"}, {"iri": "urn:2", "name": "two"}]}),
    );
    assert_eq!(text, "- one\n\n- two\n\n");
    assert_eq!(lines[0].1, strings(&["m.txt:2"]));
    assert_eq!(lines[0].2, strings(&["urn:1"]));
    assert_eq!(lines[1].2, strings(&["urn:2"]));
}

#[test]
fn tags_spanning_lines_whitespace_control_and_raw_blocks_trace_exactly() {
    let template = "A {{\n  a.v\n}} B\n  [%- if a %]\nC  [% endif -%]\n   D [[- a.v -]]  \nE\n[% raw %]\n[[ kept ]] {{ too }}\n[% endraw %]\n[% raw -%]\n  F\n[%- endraw %]\nG\n";
    let template = template
        .replace("{{", "[[")
        .replace("}}", "]]")
        .replace("[[ too ]]", "{{ too }}");
    let (text, lines) = traced(
        Syntax::Brackets,
        &[("w.txt", &template)],
        json!({"a": {"iri": "urn:a", "v": 1}}),
    );
    let normal = service(Syntax::Brackets, &[("w.txt", &template)])
        .render("w.txt", json!({"a": {"iri": "urn:a", "v": 1}}))
        .unwrap()
        .text;
    assert_eq!(text, normal);
    assert!(text.contains("[[ kept ]]"), "{text}");
    let origins: Vec<&str> = lines.iter().map(|l| l.1[0].as_str()).collect();
    assert!(
        origins.iter().all(|o| o.starts_with("w.txt:")),
        "{origins:?}"
    );
    assert!(
        lines.iter().any(|l| l.1.contains(&"w.txt:9".to_string())),
        "the raw block's line: {lines:?}"
    );
}

#[test]
fn a_sentinel_in_the_output_is_a_collision_naming_the_template_and_line() {
    let s = service(Syntax::Jinja, &[("c.txt", "ok\n{{ x }}\n")]);
    let mut r = s.render("c.txt", json!({"x": "sneaky \u{F8F0}"})).unwrap();
    let err = s.trace(&mut r).unwrap_err();
    assert_eq!(err.template, "c.txt");
    assert!(err.message.contains("output line 2"), "{err}");
}

#[test]
fn a_context_that_may_hold_a_sentinel_is_rendered_twice_and_its_trace_refused() {
    let s = service(Syntax::Jinja, &[("c.txt", "ok\n{{ x }}\n")]);
    for context in [
        "{\"x\": \"sneaky \u{F8F0}\"}",
        "{\"x\": \"sneaky \\uf8F1\"}",
    ] {
        let mut r = s.render_json_to_trace("c.txt", context).unwrap();
        assert!(r.traced.is_none(), "{context}");
        let err = s.trace(&mut r).unwrap_err();
        assert!(err.message.contains("sentinel"), "{context}: {err}");
    }
    // Not printed, it is no collision; still two renders.
    let mut r = s
        .render_json_to_trace("c.txt", "{\"\u{F8F1}\": 1, \"x\": 2}")
        .unwrap();
    assert!(r.traced.is_none());
    assert_eq!(s.trace(&mut r).unwrap().len(), 2);
    for (context, holds) in [
        ("{\"x\": \"\\\\uf8f0\"}", true),
        ("{\"x\": \"\\uf8f2 \u{F8F2} \u{F8EF}\"}", false),
        ("{\"x\": \"\\u00e9\"}", false),
    ] {
        assert_eq!(may_hold_sentinel(context), holds, "{context}");
    }
}

#[test]
fn a_large_field_is_read_once_and_reads_as_the_whole_context_would() {
    let s = service(
        Syntax::Jinja,
        &[("t.txt", "{{ page }}: {{ nav|length }}\n")],
    );
    let nav = serde_json::to_string(
        &(0..200)
            .map(|i| json!({"iri": format!("urn:p{i}"), "label": format!("Page \"{i}\"")}))
            .collect::<Vec<_>>(),
    )
    .unwrap();
    assert!(nav.len() >= SharedFields::MIN_BYTES);
    let whole = |context: &str| serde_json::from_str::<Value>(context).unwrap();
    for page in 0..6 {
        let context = format!("{{\"page\": {page}, \"nav\": {nav}, \"p\\u0061ge\": {page}}}");
        assert_eq!(s.context_value("t.txt", &context).unwrap(), whole(&context));
        let r = s.render_json("t.txt", &context).unwrap();
        assert_eq!(r.text, format!("{page}: 200\n"));
    }
    // One field kept, read once, shared by every later context.
    let kept = s.shared.kept.lock().unwrap();
    assert_eq!(kept.len(), 1);
    assert_eq!(&*kept[0].0, nav.as_str());
    drop(kept);
    // Found by its text, not read again.
    let context = format!("{{\"page\": 1, \"nav\": {nav}}}");
    let fields = object_fields(&context, &["[1]", &nav]).unwrap();
    assert!(
        matches!(&fields[..], [(p, Field::Raw("1")), (n, Field::Kept(1))] if p == "page" && n == "nav")
    );
    // Duplicate keys, the last wins, as when read whole.
    let context = format!("{{\"nav\": 1, \"nav\": {nav}}}");
    assert_eq!(s.context_value("t.txt", &context).unwrap(), whole(&context));
    // A kept field is found byte for byte wherever the context puts
    // it; the same list spaced differently is read, and reads the same.
    let spaced = nav.replace(',', ", ");
    for context in [
        format!(" {{ \"nav\" :\n{nav} ,\t\"page\": {{}} }}\r\n"),
        format!("{{\"a\": [{nav}], \"nav\": {nav}, \"b\": {{\"nav\": {nav}}}}}"),
        format!("{{\"nav\": {spaced}}}"),
        format!("{{\"nav\": \"{}\"}}", "x".repeat(5000)),
    ] {
        assert_eq!(s.context_value("t.txt", &context).unwrap(), whole(&context));
    }
    // Bad contexts fail as when read whole.
    for bad in [
        format!("[{nav}]"),
        format!("{{\"nav\": {nav},}}"),
        format!("{{\"nav\": {nav}"),
        format!("{{\"nav\": {nav}]}}"),
        format!("{{\"nav\": {nav} 1}}"),
        format!("{{\"nav\": {nav}}} x"),
        format!("{{\"nav\" {nav}}}"),
        format!("{{nav: {nav}}}"),
        format!("{{\"nav\": {}}}", &nav[..nav.len() - 1]),
    ] {
        let err = s.render_json("t.txt", &bad).unwrap_err();
        let expected = match serde_json::from_str::<Value>(&bad) {
            Ok(_) => not_an_object("t.txt"),
            Err(e) => TemplateError {
                template: "t.txt".to_owned(),
                line: None,
                message: format!("the context is not JSON: {e}"),
            },
        };
        assert_eq!(err, expected, "{}", &bad[..20]);
    }
    // A field too large to keep is read every time.
    let huge = format!(
        "{{\"nav\": \"{}\", \"page\": 1}}",
        "y".repeat(SharedFields::MAX_BYTES)
    );
    assert_eq!(
        s.render_json("t.txt", &huge).unwrap().text,
        format!("1: {}\n", SharedFields::MAX_BYTES)
    );
    assert!(
        s.shared
            .kept
            .lock()
            .unwrap()
            .iter()
            .all(|(t, _)| t.len() < SharedFields::MAX_BYTES)
    );
    // At most a few fields are kept.
    for i in 0..10 {
        let context = format!("{{\"nav\": {nav}, \"page\": \"{i}{}\"}}", "x".repeat(5000));
        s.render_json("t.txt", &context).unwrap();
    }
    assert_eq!(s.shared.kept.lock().unwrap().len(), SharedFields::KEPT);
}

#[test]
fn a_render_made_once_fails_as_the_normal_render_does() {
    const XS: &str = "{\"xs\": [{\"t\": 1}]}";
    for (source, context) in [
        ("line\n{{ missing }}\n", "{}"),
        ("{{ a.b.c }}\n", "{\"a\": {}}"),
        ("{{ a.b }}\n", "{}"),
        ("x {{ 1 + \"y\" }}\n", "{}"),
        ("{% for x in n %}\n{{ x }}\n{% endfor %}\n", "{\"n\": 3}"),
        ("{% include \"nope.txt\" %}\n", "{}"),
        ("{{ x|upper }}\n", "{}"),
        // Read off a loop's object: marked once, by its owner alone.
        ("{% for i in xs %}\n{{ i.nope }}\n{% endfor %}\n", XS),
        // Printed bare, its line marked by the value after it.
        (
            "{% for i in xs %}\n<a href=\"{{ i.nope }}\">{{ i.t }}</a>\n{% endfor %}\n",
            XS,
        ),
    ] {
        let s = service(Syntax::Jinja, &[("t.txt", source)]);
        assert!(s.renders_once().is_ok(), "{source}");
        let normal = s.render_json("t.txt", context).unwrap_err();
        let once = s.render_json_to_trace("t.txt", context).unwrap_err();
        assert_eq!(once, normal, "{source}");
    }
    // A silent undefined prints nothing in both.
    let (text, _) = traced(
        Syntax::Jinja,
        &[("t.txt", "a{{ x if false }}b\n")],
        json!({}),
    );
    assert_eq!(text, "ab\n");
}

#[test]
fn a_shared_loop_prints_again_what_running_it_prints() {
    for syntax in [Syntax::Jinja, Syntax::Brackets] {
        shared_loop_prints_what_running_it_prints(syntax);
    }
}

fn shared_loop_prints_what_running_it_prints(syntax: Syntax) {
    let delimiters = |text: &str| match syntax {
        Syntax::Jinja => text.to_owned(),
        Syntax::Brackets => text
            .replace("{%", "[%")
            .replace("%}", "%]")
            .replace("{{", "[[")
            .replace("}}", "]]")
            .replace("{#", "[#")
            .replace("#}", "#]"),
    };
    // The navigation loop keeps its output; with a comment in its body
    // (which prints nothing) it does not.
    let page = "<title>{{ page.title }}</title>\n{% if page.extra %}\n<p>{{ page.extra }}</p>\n{% endif %}\n<nav>\n{% for item in nav %}@\n  <a href=\"{{ item.href }}\">{{ item.title }}</a>\n{% endfor %}\n</nav>\n{% include \"body.html\" %}\n";
    let body = delimiters("<main>{{ page.title }}</main>\n");
    let body = ("body.html", body.as_str());
    let page = delimiters(page);
    let kept = service(syntax, &[("page.html", &page.replace('@', "")), body]);
    let run = service(
        syntax,
        &[
            ("page.html", &page.replace('@', &delimiters("{# #}"))),
            body,
        ],
    );
    assert!(kept.keeps_fragments() && !run.keeps_fragments());
    let nav = |n: usize, title: &str| -> serde_json::Value {
        (0..n)
            .map(|i| json!({"iri": format!("urn:nav:{i}"), "href": format!("p{i}.html"), "title": format!("{title} {i} & <more>")}))
            .collect()
    };
    let replays = || TRACE.with_borrow(|st| st.replays);
    let before = replays();
    let check = |nav: &serde_json::Value, p: usize| {
        let context = json!({
            "page": {"iri": format!("urn:page:{p}"), "title": format!("Page {p}"), "extra": (p % 2 == 1).then_some("odd")},
            "nav": nav,
        })
        .to_string();
        let mut a = kept.render_json_to_trace("page.html", &context).unwrap();
        let mut b = run.render_json_to_trace("page.html", &context).unwrap();
        assert_eq!(
            kept.trace(&mut a).unwrap(),
            run.trace(&mut b).unwrap(),
            "page {p}"
        );
        assert_eq!(a.text, b.text, "page {p}");
        assert_eq!(
            a.text,
            kept.render_json("page.html", &context).unwrap().text
        );
        // It never spends less fuel than running the loop does.
        let (_, with_kept) = kept
            .render_traced_value(
                "page.html",
                kept.context_value("page.html", &context).unwrap(),
            )
            .unwrap();
        let (_, with_run) = run
            .render_traced_value(
                "page.html",
                run.context_value("page.html", &context).unwrap(),
            )
            .unwrap();
        assert!(with_kept >= with_run, "page {p}: {with_kept} < {with_run}");
    };
    // Over 4 KiB: one value, shared by the contexts.
    let first = nav(120, "Page");
    for p in 0..5 {
        check(&first, p);
    }
    // Printed from the kept output, renumbered after odd pages' extra
    // mark, in every render but the first (each render above is made
    // twice with the loop kept).
    assert_eq!(replays() - before, 5 * 2 - 1);
    // Another list runs the loop again.
    let second = nav(130, "Other");
    check(&second, 5);
    check(&second, 6);
    assert_eq!(replays() - before, 5 * 2 - 1 + 3);
    // A list that is not shared (under 4 KiB) is run every time.
    let small = nav(3, "Small");
    check(&small, 7);
    check(&small, 8);
    assert_eq!(replays() - before, 5 * 2 - 1 + 3);
    // Text that looks like a sentinel is not kept.
    let hostile = nav(120, &format!("x{SENTINEL_OPEN}1{SENTINEL_CLOSE}"));
    for _ in 0..2 {
        let context = json!({"page": {"title": "t", "extra": null}, "nav": &hostile}).to_string();
        let mut a = kept.render_json_to_trace("page.html", &context).unwrap();
        let mut b = run.render_json_to_trace("page.html", &context).unwrap();
        assert_eq!(kept.trace(&mut a).is_ok(), run.trace(&mut b).is_ok());
    }
    assert_eq!(replays() - before, 5 * 2 - 1 + 3);
}

#[test]
fn threads_tracing_at_once_keep_their_own_marks() {
    let s = Arc::new(service(
        Syntax::Jinja,
        &[("t.txt", "{% for x in xs %}\n{{ x.n }}\n{% endfor %}\n")],
    ));
    let threads: Vec<_> = (0..4)
        .map(|t| {
            let s = s.clone();
            std::thread::spawn(move || {
                for round in 0..200 {
                    let xs: Vec<_> = (0..round % 7 + 1)
                        .map(|i| json!({"iri": format!("urn:{t}:{i}"), "n": i}))
                        .collect();
                    let context = json!({ "xs": xs }).to_string();
                    let mut r = s.render_json_to_trace("t.txt", &context).unwrap();
                    let lines = s.trace(&mut r).unwrap();
                    assert_eq!(lines.len(), xs.len());
                    for (i, line) in lines.iter().enumerate() {
                        assert_eq!(line.terms, [format!("urn:{t}:{i}")]);
                    }
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
}

#[test]
fn a_render_that_tracing_changes_is_refused_naming_the_template_and_line() {
    let s = service(
        Syntax::Jinja,
        &[("m.txt", "one\n{% filter length %}abc{% endfilter %}\n")],
    );
    let mut r = s.render("m.txt", json!({})).unwrap();
    assert_eq!(r.text, "one\n3");
    let err = s.trace(&mut r).unwrap_err();
    assert_eq!(err.template, "m.txt");
    assert!(err.message.contains("output line 2"), "{err}");
}

#[test]
fn a_sidecar_reserves_for_lines_not_for_the_length_of_one_huge_line() {
    let s = service(Syntax::Jinja, &[("t.txt", "{{ s }}\n")]);
    // One line of 16 MiB: guessed at one line per 64 bytes, its
    // sidecar would reserve 40 MiB, charged to the run's memory.
    let mut r = s
        .render("t.txt", json!({ "s": "x".repeat(16 << 20) }))
        .unwrap();
    let start = s
        .trace_to_sidecar(&mut r, "g", &mut Citations::new())
        .unwrap();
    assert!(start.head.contains("\"t.txt:1\""), "{}", start.head);
    assert!(
        start.head.capacity() < 11 << 20,
        "reserved {} bytes",
        start.head.capacity()
    );
}

#[test]
fn a_runaway_template_runs_out_of_fuel() {
    let s = service(
        Syntax::Jinja,
        &[(
            "a.txt",
            "{% for a in range(10000) %}{% for b in range(10000) %}x{% endfor %}{% endfor %}",
        )],
    );
    let err = s.render("a.txt", json!({})).unwrap_err();
    assert!(err.message.contains("fuel"), "{err}");
    // Made once, it runs out of the tracing render's fuel; the normal
    // render's error is the one given.
    let mut s = s;
    s.set_fuel(1_000_000);
    let err = s.render_json_to_trace("a.txt", "{}").unwrap_err();
    assert_eq!(err, s.render_json("a.txt", "{}").unwrap_err());
    assert!(err.message.contains("fuel"), "{err}");
    assert_eq!(err.template, "a.txt");
}

/// A render passes or fails the same, made once or twice: the tracing
/// render has more fuel than the normal render (it makes more calls),
/// and a render made once that spends more than the normal render may
/// is decided by the normal render.
#[test]
fn a_render_made_once_passes_or_fails_as_the_normal_render_does() {
    let mut s = service(
        Syntax::Jinja,
        &[("a.txt", "{% for i in range(n) %}{{ i }}\n{% endfor %}")],
    );
    s.set_fuel(20_000);
    // The normal render's cost, in loop iterations, is found by trying.
    let passes = |n: usize| s.render_json("a.txt", &format!("{{\"n\": {n}}}")).is_ok();
    let limit = (1..20_000)
        .find(|&n| !passes(n))
        .expect("a loop that runs out");
    for n in [
        1,
        limit / 2,
        limit - 1,
        limit,
        limit + 1,
        limit * 2,
        limit * 5,
    ] {
        let context = format!("{{\"n\": {n}}}");
        let normal = s.render_json("a.txt", &context);
        let once = s.render_json_to_trace("a.txt", &context);
        match (normal, once) {
            (Ok(normal), Ok(mut once)) => {
                assert_eq!(once.text_len(), normal.text.len(), "n = {n}");
                s.trace_to_sidecar(&mut once, "g", &mut Citations::new())
                    .unwrap();
                assert_eq!(once.text, normal.text, "n = {n}");
            }
            (Err(normal), Err(once)) => assert_eq!(once, normal, "n = {n}"),
            (normal, once) => panic!(
                "n = {n}: the normal render passes: {}, made once: {}",
                normal.is_ok(),
                once.is_ok()
            ),
        }
    }
    // Just under the normal render's limit, the tracing render spends
    // more than it: the normal render is made too, and traced twice.
    let once = s
        .render_json_to_trace("a.txt", &format!("{{\"n\": {}}}", limit - 1))
        .unwrap();
    assert!(once.traced.is_none());
}

#[test]
fn view_iris_read_alike_from_every_kind_of_map() {
    // What `get_attr` finds, by reading each field of the object.
    fn by_attributes(value: &Value) -> Option<Vec<String>> {
        let iri = value.get_attr("iri").ok()?;
        let iri = iri.as_str()?.to_owned();
        let origins = value.get_attr("origins").ok();
        let origins = origins.iter().filter_map(|o| o.try_iter().ok()).flatten();
        Some(
            std::iter::once(iri)
                .chain(origins.filter_map(|o| o.as_str().map(str::to_owned)))
                .collect(),
        )
    }
    let many: serde_json::Map<String, serde_json::Value> =
        (0..20).map(|i| (format!("f{i}"), json!(i))).collect();
    let mut wide = serde_json::Value::Object(many);
    wide["iri"] = json!("urn:wide");
    wide["origins"] = json!(["urn:o1", 3, "urn:o2"]);
    let json_cases = [
        json!({"iri": "urn:a"}),
        json!({"iri": "urn:a", "origins": ["urn:b", null, "urn:c"]}),
        json!({"iri": "urn:a", "origins": "urn:not-a-list"}),
        json!({"iri": 7, "origins": ["urn:b"]}),
        json!({"origins": ["urn:b"]}),
        json!({"iri": "https://example.org/a-long-iri-held-on-the-heap"}),
        wide,
        json!(["urn:a"]),
        json!("urn:a"),
    ];
    // Read from JSON (maps of values), from serialized values, and
    // maps of other kinds: of strings, and a context's top level.
    let mut values: Vec<Value> = json_cases
        .iter()
        .flat_map(|j| {
            [
                serde_json::from_str::<Value>(&j.to_string()).unwrap(),
                Value::from(minijinja::value::Serde(j)),
            ]
        })
        .collect();
    let mut strings = BTreeMap::new();
    strings.insert("iri".to_owned(), Value::from("urn:s"));
    strings.insert(
        "origins".to_owned(),
        Value::from(vec![Value::from("urn:t"), Value::from(1)]),
    );
    values.push(Value::from(strings));
    let shared = SharedFields::default();
    let context = json!({"iri": "urn:top", "origins": ["urn:o"], "pad": "x".repeat(5000)});
    values.push(shared.read(&context.to_string()).unwrap());
    let mut read = 0;
    for (i, value) in values.iter().enumerate() {
        let mut terms = Vec::new();
        let found = add_view_iris(value, &mut terms);
        if found && i < 2 * json_cases.len() {
            // Read from JSON: borrowed, not copied.
            assert!(matches!(terms[0], Cow::Borrowed(_)), "{value:?}");
        }
        let texts: Vec<String> = terms.iter().map(|t| iri_text(t).to_owned()).collect();
        let expected = by_attributes(value).filter(|_| is_map(value));
        assert_eq!(found.then_some(texts), expected, "{value:?}");
        read += usize::from(found);
    }
    assert_eq!(read, 12, "the view objects among the cases");
}

#[test]
fn cited_iris_come_out_sorted_once_each_whether_shared_or_equal() {
    for n in [3, 40, 500] {
        let shared: Vec<Value> = (0..n)
            .map(|i| Value::from(format!("iri:{}", i % 7)))
            .collect();
        let mut iris: Vec<Value> = Vec::new();
        for i in 0..n * 3 {
            // Clones of shared values, and equal values made apart.
            iris.push(shared[(i * 5) % n].clone());
            iris.push(shared[(i * 7) % n].clone());
            iris.push(Value::from(format!("iri:{}", (i * 3) % 11)));
        }
        let expected: Vec<String> = iris
            .iter()
            .map(|v| iri_text(v).to_owned())
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect();
        // As values, and as a thread's numbers.
        let mut citations = Citations::new();
        let mut numbers = Vec::new();
        citations.iris(&iris, &mut numbers);
        citations.sort(&mut numbers);
        let numbered: Vec<&str> = numbers.iter().map(|&n| citations.text(n)).collect();
        assert_eq!(numbered, expected, "{n}");
        sort_iris(&mut iris);
        let texts: Vec<&str> = iris.iter().map(iri_text).collect();
        assert_eq!(texts, expected, "{n}");
    }
}
