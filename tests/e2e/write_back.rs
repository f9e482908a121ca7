//! `seams write-back`: a hand edit of an output line becomes the one model
//! literal change that gives it back, shown as a diff of the model file,
//! applied only when asked (and, with effects elsewhere, only when those
//! are accepted); every refusal says why and writes nothing.

use seams_tests::{TempProject, seams_in};

/// A generated copy of the chat example, with `line` of
/// `out/conversations.html` replaced by `edited`.
fn edited(line: usize, edited: &str) -> TempProject {
    let p = seams_tests::chat_project();
    assert_eq!(seams_in(p.path(), &["generate"]).code, 0);
    let page = p.path().join("out/conversations.html");
    let text = std::fs::read_to_string(&page).unwrap();
    let mut lines: Vec<&str> = text.split('\n').collect();
    lines[line - 1] = edited;
    std::fs::write(&page, lines.join("\n")).unwrap();
    p
}

fn model(p: &TempProject) -> String {
    std::fs::read_to_string(p.path().join("model.ttl")).unwrap()
}

#[test]
fn a_label_edit_is_written_back_as_a_minimal_change_of_the_model_file() {
    let edit = "      <h3>Your threads</h3>";
    let p = edited(28, edit);
    let before = model(&p);
    let plan = seams_in(p.path(), &["write-back", "out/conversations.html"]);
    assert_eq!(plan.code, 0, "{plan:?}");
    for part in [
        "conversations.html:28: <https://example.org/chat#conversation_list> <http://www.w3.org/2000/01/rdf-schema#label> \"Your conversations\" becomes \"Your threads\"\n",
        "--- model.ttl\n+++ model.ttl\n",
        "-    rdfs:label \"Your conversations\" ;\n+    rdfs:label \"Your threads\" ;\n",
        "nothing written: pass --apply to write the patch\n",
    ] {
        assert!(plan.stdout.contains(part), "{part}\n{}", plan.stdout);
    }
    assert_eq!(model(&p), before, "a plan writes nothing");

    let args: Vec<&str> = if plan.stdout.contains("effects: none") {
        vec!["write-back", "out/conversations.html:28", "--apply"]
    } else {
        vec![
            "write-back",
            "out/conversations.html:28",
            "--apply",
            "--accept-effects",
        ]
    };
    let applied = seams_in(p.path(), &args);
    assert_eq!(applied.code, 0, "{applied:?}");
    // Only the literal changed: comments, order and formatting are kept.
    assert_eq!(
        model(&p),
        before.replacen("\"Your conversations\"", "\"Your threads\"", 1)
    );
    // PutGet: the output is the edit, and the project is clean again.
    let page = std::fs::read_to_string(p.path().join("out/conversations.html")).unwrap();
    assert_eq!(page.split('\n').nth(27), Some(edit));
    let check = seams_in(p.path(), &["check"]);
    assert_eq!(check.code, 0, "{check:?}");
}

#[test]
fn an_edit_with_effects_elsewhere_is_applied_only_when_they_are_accepted() {
    // The application's title is printed on every page and by app.py.
    let p = edited(19, "    <h1>Talk</h1>");
    let before = model(&p);
    let refused = seams_in(
        p.path(),
        &["write-back", "out/conversations.html", "--apply"],
    );
    assert_eq!(refused.code, 1, "{refused:?}");
    assert!(refused.stdout.contains("effects: "), "{}", refused.stdout);
    assert!(
        refused
            .stdout
            .contains("thread.html:19\n  -    <h1>Chat</h1>\n  +    <h1>Talk</h1>\n"),
        "{}",
        refused.stdout
    );
    assert!(
        refused
            .stderr
            .contains("pass --accept-effects to apply it anyway"),
        "{}",
        refused.stderr
    );
    assert_eq!(model(&p), before);
    let accepted = seams_in(
        p.path(),
        &[
            "write-back",
            "out/conversations.html",
            "--apply",
            "--accept-effects",
        ],
    );
    assert_eq!(accepted.code, 0, "{accepted:?}");
    assert!(model(&p).contains("rdfs:label \"Talk\" ;"));
    assert_eq!(seams_in(p.path(), &["check"]).code, 0);
    let thread = std::fs::read_to_string(p.path().join("out/thread.html")).unwrap();
    assert!(thread.contains("<h1>Talk</h1>"), "the effect was generated");
}

#[test]
fn each_refusal_says_why_and_writes_nothing() {
    let cases: [(usize, &str, &[&str], &str); 3] = [
        // Fixed text of the template changed.
        (
            28,
            "      <h4>Your conversations</h3>",
            &[],
            "no model value printed on this line covers the change",
        ),
        // A line that is not edited, named.
        (
            28,
            "      <h3>Your threads</h3>",
            &[":5"],
            "this line is as generated; nothing to write back",
        ),
        // Two values changed on one line.
        (
            21,
            "      <a href=\"chats.html\">Chats</a>",
            &[],
            "the edit spans several model values",
        ),
    ];
    // Every refusal's message, in order, for the snapshot.
    let mut messages = String::new();
    for (line, text, suffix, why) in cases {
        let p = edited(line, text);
        let before = model(&p);
        let target = format!(
            "out/conversations.html{}",
            suffix.first().copied().unwrap_or("")
        );
        let run = seams_in(p.path(), &["write-back", &target, "--apply"]);
        assert_eq!(run.code, 1, "{why}: {run:?}");
        assert!(run.stderr.contains(why), "{why}: {}", run.stderr);
        assert_eq!(model(&p), before, "{why}");
        messages.push_str(&run.stderr);
    }
    // Not edited at all.
    let p = seams_tests::chat_project();
    assert_eq!(seams_in(p.path(), &["generate"]).code, 0);
    let run = seams_in(p.path(), &["write-back", "out/thread.html"]);
    assert_eq!(run.code, 1);
    assert!(
        run.stderr.contains("is as seams.lock records it"),
        "{}",
        run.stderr
    );
    messages.push_str(&run.stderr);
    // A line added.
    let page = p.path().join("out/thread.html");
    let text = std::fs::read_to_string(&page).unwrap();
    std::fs::write(&page, format!("<!-- mine -->\n{text}")).unwrap();
    let run = seams_in(p.path(), &["write-back", "out/thread.html"]);
    assert_eq!(run.code, 1);
    assert!(
        run.stderr.contains("adds or removes lines"),
        "{}",
        run.stderr
    );
    messages.push_str(&run.stderr);
    insta::assert_snapshot!("write_back_refusals", messages);
}
