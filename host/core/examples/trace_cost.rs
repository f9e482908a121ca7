//! What tracing costs: `seams generate` with and without the tracing render
//! on a UI model 100 times the chat example (200 pages, 300 components).
//!
//! Run with `cargo run -p seams-core --example trace_cost [-- COPIES [ROUNDS]]` (add
//! `--config 'profile.dev.package.seams-core.opt-level=2'` to optimise the host
//! crate as a release build would; its dependencies are optimised in every
//! profile). It prints the median and fastest wall time of each, and their
//! ratios, measured in one run.

use std::time::{Duration, Instant};

fn model(copies: usize) -> String {
    let mut ttl = String::from(
        "@prefix ui: <https://w3id.org/seams/ui#> .\n@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .\n@prefix chat: <https://example.org/chat#> .\n\nchat:app a ui:Application ; rdfs:label \"Chat\" ; ui:homePage chat:conversations_page_0 .\n",
    );
    for i in 0..copies {
        ttl.push_str(&format!(
            r#"
chat:app ui:page chat:conversations_page_{i}, chat:thread_page_{i} .
chat:conversations_page_{i} a ui:Page ; rdfs:label "Conversations {i}" ; ui:path "conversations-{i}" ; ui:order {o1} ; ui:contains chat:conversation_list_{i} .
chat:conversation_list_{i} a ui:List ; rdfs:label "Your conversations {i}" ; ui:emptyText "No conversations yet." ; ui:order 1 ; ui:event chat:select_conversation_{i} .
chat:select_conversation_{i} a ui:Event ; rdfs:label "Select a conversation" ; ui:kind "select" .
chat:select_to_thread_{i} a ui:NavigationFlow ; rdfs:label "Open the thread" ; ui:trigger chat:select_conversation_{i} ; ui:target chat:thread_page_{i} .
chat:thread_page_{i} a ui:Page ; rdfs:label "Thread {i}" ; ui:path "thread-{i}" ; ui:order {o2} ; ui:contains chat:message_list_{i}, chat:new_message_form_{i} ; ui:event chat:go_back_{i} .
chat:go_back_{i} a ui:Event ; rdfs:label "Go back" ; ui:kind "navigate" .
chat:message_list_{i} a ui:List ; rdfs:label "Messages" ; ui:emptyText "No messages in this thread." ; ui:order 1 .
chat:new_message_form_{i} a ui:Form ; rdfs:label "New message" ; ui:submitLabel "Send" ; ui:order 2 ; ui:field chat:author_field_{i}, chat:body_field_{i} ; ui:event chat:send_message_{i} .
chat:author_field_{i} a ui:Field ; rdfs:label "Your name" ; ui:name "author" ; ui:inputType "text" ; ui:required true ; ui:order 1 .
chat:body_field_{i} a ui:Field ; rdfs:label "Message" ; ui:name "body" ; ui:inputType "textarea" ; ui:required true ; ui:order 2 .
chat:send_message_{i} a ui:Event ; rdfs:label "Send the message" ; ui:kind "submit" .
chat:back_to_conversations_{i} a ui:NavigationFlow ; rdfs:label "Back to conversations" ; ui:trigger chat:go_back_{i} ; ui:target chat:conversations_page_{i} .
"#,
            o1 = 2 * i + 1,
            o2 = 2 * i + 2,
        ));
    }
    ttl
}

/// The median and the fastest run: the fastest is the least disturbed by
/// whatever else the machine is doing.
fn summary(mut times: Vec<Duration>) -> (Duration, Duration) {
    times.sort();
    (times[times.len() / 2], times[0])
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let copies: usize = args.next().map(|a| a.parse()).transpose()?.unwrap_or(100);
    let rounds: usize = args.next().map(|a| a.parse()).transpose()?.unwrap_or(15);
    let dir = tempfile::tempdir()?;
    std::fs::write(dir.path().join("model.ttl"), model(copies))?;
    std::fs::write(
        dir.path().join("seams.toml"),
        "[model]\nfiles = [\"model.ttl\"]\n[[generator]]\nbuiltin = \"htmx\"\n",
    )?;
    let project = seams_core::Project::load(dir.path())?;
    let cache = tempfile::tempdir()?;
    let traced = seams_runtime::Runtime::new(Some(cache.path().to_owned()))?;
    let untraced = seams_runtime::testing::without_tracing(seams_runtime::Runtime::new(Some(
        cache.path().to_owned(),
    ))?);

    // Warm up: compile the component into the cache, fill the page cache.
    let first = seams_core::run_generators(&project, &traced)?;
    let pages = first.runs[0].run.outputs.len();
    let (mut with, mut without) = (Vec::new(), Vec::new());
    for _ in 0..rounds {
        let t = Instant::now();
        seams_core::run_generators(&project, &untraced)?;
        without.push(t.elapsed());
        let t = Instant::now();
        seams_core::run_generators(&project, &traced)?;
        with.push(t.elapsed());
    }
    let ((with, with_min), (without, without_min)) = (summary(with), summary(without));

    // The template service alone: normal renders against tracing renders
    // (the contexts from an untraced run: a traced one frees them).
    let untraced_run = seams_core::run_generators(&project, &untraced)?;
    let run = &untraced_run.runs[0].run;
    let service =
        seams_templates::TemplateService::new(run.meta.templates.clone(), run.meta.syntax)?;
    let mut rendered: Vec<seams_templates::Rendered> = run
        .outputs
        .iter()
        .filter_map(|o| o.rendered.clone())
        .collect();
    let t = Instant::now();
    for r in &rendered {
        service.render_again(r)?;
    }
    let render = t.elapsed();
    let t = Instant::now();
    for r in &mut rendered {
        service.trace(r)?;
    }
    let trace = t.elapsed();
    println!(
        "template service: {:.1} ms rendering, {:.1} ms tracing",
        render.as_secs_f64() * 1e3,
        trace.as_secs_f64() * 1e3
    );
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    println!("model: {copies} copies of the chat example, {pages} pages");
    println!(
        "without tracing: median {:.1} ms, fastest {:.1} ms ({rounds} runs)",
        ms(without),
        ms(without_min)
    );
    println!(
        "with tracing:    median {:.1} ms, fastest {:.1} ms ({rounds} runs)",
        ms(with),
        ms(with_min)
    );
    println!(
        "ratio: {:.2} (medians), {:.2} (fastest runs)",
        ms(with) / ms(without),
        ms(with_min) / ms(without_min)
    );
    Ok(())
}
