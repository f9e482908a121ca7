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
    // A model the user keeps private stays private.
    use std::os::unix::fs::PermissionsExt;
    let model_path = p.path().join("model.ttl");
    std::fs::set_permissions(&model_path, std::fs::Permissions::from_mode(0o600)).unwrap();
    let applied = seams_in(p.path(), &args);
    assert_eq!(applied.code, 0, "{applied:?}");
    // Only the literal changed: comments, order and formatting are kept.
    assert_eq!(
        model(&p),
        before.replacen("\"Your conversations\"", "\"Your threads\"", 1)
    );
    let mode = std::fs::metadata(&model_path).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600, "{mode:o}");
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
    // A refusal of `target`, saying `why`, added to the messages.
    let mut refused = |p: &TempProject, target: &str, why: &str| {
        let run = seams_in(p.path(), &["write-back", target]);
        assert_eq!(run.code, 1, "{why}: {run:?}");
        assert!(run.stderr.contains(why), "{why}: {}", run.stderr);
        messages.push_str(&run.stderr);
    };
    // Not edited at all.
    let p = seams_tests::chat_project();
    assert_eq!(seams_in(p.path(), &["generate"]).code, 0);
    refused(&p, "out/thread.html", "is as seams.lock records it");
    // A line added: as a block, which no model change prints; as a line,
    // which it is not.
    let page = p.path().join("out/thread.html");
    let text = std::fs::read_to_string(&page).unwrap();
    std::fs::write(&page, format!("<!-- mine -->\n{text}")).unwrap();
    refused(
        &p,
        "out/thread.html",
        "adding lines 1-1: no single model change gives this edit back",
    );
    refused(&p, "out/thread.html:1", "adds or removes lines");
    insta::assert_snapshot!("write_back_refusals", messages);
}

/// A generated copy of `example` with the lines of `out/<output>` changed
/// by `edit`.
fn block_edited(example: &str, output: &str, edit: impl FnOnce(&mut Vec<String>)) -> TempProject {
    let p = seams_tests::example_project(example);
    assert_eq!(seams_in(p.path(), &["generate"]).code, 0);
    let page = p.path().join("out").join(output);
    let text = std::fs::read_to_string(&page).unwrap();
    let mut lines: Vec<String> = text.split('\n').map(str::to_owned).collect();
    edit(&mut lines);
    std::fs::write(&page, lines.join("\n")).unwrap();
    p
}

/// The structural edits of both examples: a form field's two lines.
/// (example, output, the field's label line, its label, its element)
const FIELDS: [(&str, &str, usize, &str, &str); 2] = [
    (
        "chat",
        "thread.html",
        37,
        "Your name",
        "https://example.org/chat#author_field",
    ),
    (
        "expense",
        "report.html",
        38,
        "Description",
        "https://example.org/expense#description_field",
    ),
];

/// PutGet after an applied write-back: the output is the edit, and the
/// project is clean.
fn assert_put_get(p: &TempProject, output: &str, edited: &str) {
    let now = std::fs::read_to_string(p.path().join("out").join(output)).unwrap();
    assert_eq!(now, edited, "{output}");
    let check = seams_in(p.path(), &["check"]);
    assert_eq!(check.code, 0, "{output}: {check:?}");
}

/// Form fields a record can be made without: an optional ISBN, a
/// checkbox (unticked is false).
const OPTIONAL_FIELDS: [(&str, &str, usize, &str, &str); 2] = [
    (
        "library",
        "books.html",
        41,
        "ISBN",
        "https://example.org/library#isbn_field",
    ),
    (
        "expense",
        "report.html",
        44,
        "Billable to a client",
        "https://example.org/expense#billable_field",
    ),
];

#[test]
fn a_removed_form_field_is_written_back_as_its_element_removed() {
    for (example, output, line, label, element) in OPTIONAL_FIELDS {
        let p = block_edited(example, output, |lines| {
            lines.drain(line - 1..line + 1);
        });
        let edited = std::fs::read_to_string(p.path().join("out").join(output)).unwrap();
        let before = model(&p);
        let target = format!("out/{output}");
        let plan = seams_in(p.path(), &["write-back", &target]);
        assert_eq!(plan.code, 0, "{example}: {plan:?}");
        assert!(
            plan.stdout.contains(&format!(
                "{output}:{line}: 2 removed line(s): <{element}> removed\n"
            )),
            "{example}: {}",
            plan.stdout
        );
        assert!(plan.stdout.contains("nothing written"), "{}", plan.stdout);
        assert_eq!(model(&p), before, "a plan writes nothing");

        let applied = seams_in(
            p.path(),
            &["write-back", &target, "--apply", "--accept-effects"],
        );
        assert_eq!(applied.code, 0, "{example}: {applied:?}");
        let after = model(&p);
        // The element's statement and its place in the form's list are
        // gone; every other line of the model file is as it was.
        let local = element.rsplit_once('#').unwrap().1;
        assert!(before.contains(local) && !after.contains(local), "{after}");
        assert!(before.contains(&format!("\"{label}\"")), "{example}");
        let (kept, gone): (Vec<&str>, Vec<&str>) =
            before.lines().partition(|l| after.lines().any(|a| a == *l));
        assert!(gone.len() <= 8, "{example}: {gone:?}");
        assert!(kept.len() > before.lines().count() - 9, "{example}");
        assert_put_get(&p, output, &edited);
    }
}

#[test]
fn a_required_field_removed_is_refused_naming_the_rule_that_keeps_the_app_working() {
    // The field that sets a message's author, and the select that sets
    // its conversation: without them the app answers every post with
    // 422. Removing their elements gives the edit back, but the
    // generators refuse the model, and the refusal says why.
    for (lines, member) in [(37, "author"), (35, "message_conversation")] {
        let p = block_edited("chat", "thread.html", |l| {
            l.drain(lines - 1..lines + 1);
        });
        let before = model(&p);
        let refused = seams_in(p.path(), &["write-back", "out/thread.html", "--apply"]);
        assert_eq!(refused.code, 1, "{refused:?}");
        assert!(
            refused.stderr.contains(&format!(
                "no field of it binds the required {} <https://example.org/chat#{member}>",
                if member == "author" { "attribute" } else { "relation" }
            )) && refused.stderr.contains(&format!(
                "add a ui:Field with ui:binds <https://example.org/chat#{member}> to the form, or make <https://example.org/chat#{member}> ui:required false"
            )),
            "{}",
            refused.stderr
        );
        assert_eq!(model(&p), before, "nothing written");
    }
    // The same rule, on a model edited by hand: check says it.
    let p = seams_tests::example_project("chat");
    assert_eq!(seams_in(p.path(), &["generate"]).code, 0);
    let edited = model(&p).replace(
        "ui:field chat:conversation_field, chat:author_field",
        "ui:field chat:conversation_field",
    );
    std::fs::write(p.path().join("model.ttl"), edited).unwrap();
    let check = seams_in(p.path(), &["check"]);
    assert_eq!(check.code, 1, "{check:?}");
    assert!(
        check.stdout.contains("generator-failed")
            && check.stdout.contains(
                "no field of it binds the required attribute <https://example.org/chat#author>"
            ),
        "{}",
        check.stdout
    );
}

#[test]
fn a_nav_link_removed_removes_its_page_only_when_that_is_said_first_and_accepted_on_its_own() {
    // The Members link of the library's books page: nothing smaller than
    // removing the page gives the edit back.
    let p = block_edited("library", "books.html", |l| {
        let at = l
            .iter()
            .position(|x| x.contains("<a href=\"members.html\">Members</a>"))
            .unwrap();
        l.remove(at);
    });
    let edited = std::fs::read_to_string(p.path().join("out/books.html")).unwrap();
    let before = all_files(&p);
    let plan = seams_in(p.path(), &["write-back", "out/books.html"]);
    assert_eq!(plan.code, 0, "{plan:?}");
    assert!(
        plan.stdout.starts_with(
            "note: this edit of lines removes the whole page lib:members_page and the 4 element(s) it holds (members.html deleted), and no smaller change that gives it back was found"
        ) && plan
            .stdout
            .ends_with("nothing written: pass --apply --accept-structure to write the patch\n"),
        "{}",
        plan.stdout
    );
    // Accepting the effects is not accepting the page's removal.
    let refused = seams_in(
        p.path(),
        &[
            "write-back",
            "out/books.html",
            "--apply",
            "--accept-effects",
        ],
    );
    assert_eq!(refused.code, 1, "{refused:?}");
    assert!(
        refused.stderr.contains("pass --accept-structure"),
        "{refused:?}"
    );
    assert_eq!(all_files(&p), before, "nothing written");
    let applied = seams_in(
        p.path(),
        &[
            "write-back",
            "out/books.html",
            "--apply",
            "--accept-effects",
            "--accept-structure",
        ],
    );
    assert_eq!(applied.code, 0, "{applied:?}");
    assert!(!p.path().join("out/members.html").exists());
    assert_put_get(&p, "books.html", &edited);
}

#[test]
fn an_added_form_field_is_written_back_as_a_copy_of_its_sibling() {
    for (example, output, line, label, element) in FIELDS {
        let p = block_edited(example, output, |lines| {
            let block: Vec<String> = lines[line - 1..line + 1]
                .iter()
                .map(|l| l.replace(&format!(">{label}<"), ">Nickname<"))
                .collect();
            for (i, l) in block.into_iter().enumerate() {
                lines.insert(line + 1 + i, l);
            }
        });
        let edited = std::fs::read_to_string(p.path().join("out").join(output)).unwrap();
        let before = model(&p);
        let target = format!("out/{output}");
        let applied = seams_in(
            p.path(),
            &["write-back", &target, "--apply", "--accept-effects"],
        );
        assert_eq!(applied.code, 0, "{example}: {applied:?}");
        // Named after its new label where the sibling is named after its
        // own (`description_field` gives `nickname_field`), else `_2`.
        let was = label.to_lowercase().replace(' ', "_");
        let (namespace, local) = element.split_once('#').unwrap();
        let new = if local.contains(&was) {
            format!("{namespace}#{}", local.replacen(&was, "nickname", 1))
        } else {
            format!("{element}_2")
        };
        assert!(
            applied.stdout.contains(&format!(
                "2 added line(s): a new element <{new}>, a copy of <{element}> labelled \"Nickname\""
            )),
            "{example}: {}",
            applied.stdout
        );
        // The copy is appended, in the file's Turtle with its prefixes;
        // everything before it is byte for byte.
        let after = model(&p);
        assert!(after.starts_with(&before), "{example}: {after}");
        let new_local = new.split_once('#').unwrap().1;
        let appended = &after[before.len()..];
        assert!(
            appended.contains(&format!(
                ":{new_local} a ui:Field ;\n    rdfs:label \"Nickname\" ;"
            )),
            "{example}: {appended}"
        );
        assert_put_get(&p, output, &edited);
    }
}

#[test]
fn the_change_meant_is_chosen_by_its_number_when_several_give_the_edit_back() {
    let p = seams_tests::chat_with_a_mood_field();
    let target = "out/thread.html";
    let edited = std::fs::read_to_string(p.path().join(target)).unwrap();
    let plan = seams_in(p.path(), &["write-back", target]);
    assert_eq!(plan.code, 0, "{plan:?}");
    assert!(
        plan.stdout.contains("  with <https://example.org/chat#mood>, a copy of <https://example.org/chat#author>\nother model changes give this edit back too; pass --choose N to propose one of them (this is 1):\n  2. a new element <https://example.org/chat#mood_field>, a copy of <https://example.org/chat#author_field> labelled \"Mood\"\n---"),
        "{}",
        plan.stdout
    );
    // A number no change has is refused, naming the range.
    let before = all_files(&p);
    let wrong = seams_in(
        p.path(),
        &[
            "write-back",
            target,
            "--choose",
            "3",
            "--apply",
            "--accept-effects",
        ],
    );
    assert_eq!(wrong.code, 1, "{wrong:?}");
    assert!(
        wrong.stderr.contains(
            "--choose 3, but 2 model change(s) give this edit back; choose a number from 1 to 2"
        ),
        "{wrong:?}"
    );
    assert_eq!(all_files(&p), before, "nothing written");
    // The second: one more field on the author attribute.
    let second = seams_in(p.path(), &["write-back", target, "--choose", "2"]);
    assert!(
        second
            .stdout
            .contains("(this is 2):\n  1. a new element <https://example.org/chat#mood_field>"),
        "{}",
        second.stdout
    );
    let applied = seams_in(
        p.path(),
        &[
            "write-back",
            target,
            "--choose",
            "2",
            "--apply",
            "--accept-effects",
        ],
    );
    assert_eq!(applied.code, 0, "{applied:?}");
    seams_tests::assert_mood_on_the_author_attribute(&p);
    assert_put_get(&p, "thread.html", &edited);
}

#[test]
fn a_text_two_values_hold_is_given_to_the_one_whose_change_gives_the_edit_back() {
    // "ISBN" is the label of the field and of the attribute it binds; the
    // form prints the field's: changing the attribute's would not give
    // the edit back, so the field's is proposed, not refused as
    // ambiguous.
    let p = block_edited("library", "books.html", |l| {
        let at = l.iter().position(|x| x.contains(">ISBN</label>")).unwrap();
        l[at] = l[at].replace(">ISBN<", ">ISBN-13<");
    });
    let plan = seams_in(p.path(), &["write-back", "out/books.html"]);
    assert_eq!(plan.code, 0, "{plan:?}");
    assert!(
        plan.stdout.contains("<https://example.org/library#isbn_field> <http://www.w3.org/2000/01/rdf-schema#label> \"ISBN\" becomes \"ISBN-13\""),
        "{}",
        plan.stdout
    );
    let other = seams_in(p.path(), &["write-back", "out/books.html", "--choose", "2"]);
    assert!(
        other.code == 1 && other.stderr.contains("choose a number from 1 to 1"),
        "{other:?}"
    );
}

#[test]
fn a_block_edit_that_no_model_change_gives_back_is_refused_writing_nothing() {
    // A line no element printed, added; and a block added while a line
    // changed (refused as one change of lines 34-41).
    let p = block_edited("chat", "thread.html", |lines| {
        lines.insert(40, "      <p>Typed by hand</p>".to_owned());
    });
    let before = model(&p);
    let refused = seams_in(p.path(), &["write-back", "out/thread.html", "--apply"]);
    assert_eq!(refused.code, 1, "{refused:?}");
    assert!(
        refused.stderr.contains(
            "thread.html: adding lines 41-41: no single model change gives this edit back"
        ),
        "{refused:?}"
    );
    assert_eq!(model(&p), before);

    let p = block_edited("chat", "thread.html", |lines| {
        lines[33] = "      <h3>New post</h3>".to_owned();
        lines.insert(40, "      <p>Typed by hand</p>".to_owned());
    });
    let mixed = seams_in(p.path(), &["write-back", "out/thread.html"]);
    assert_eq!(mixed.code, 1, "{mixed:?}");
    assert!(
        mixed.stderr.contains(
            "thread.html: changing lines 34-41: no single model change gives this edit back"
        ) && mixed
            .stderr
            .contains("to write back one line, name it as OUTPUT:LINE"),
        "{mixed:?}"
    );
}

/// Every file of the project with its bytes.
fn all_files(p: &TempProject) -> Vec<(String, Vec<u8>)> {
    let mut files = p.files();
    files.retain(|(name, _)| !name.starts_with(".seams"));
    files
}

#[test]
fn write_back_writes_the_model_and_the_outputs_together_or_nothing() {
    let edit = "      <h3>Your threads</h3>";
    // Another output holds an unrelated hand edit: the generate after the
    // patch would refuse to overwrite it, so nothing is written at all.
    let p = edited(28, edit);
    let thread = p.path().join("out/thread.html");
    let text = std::fs::read_to_string(&thread).unwrap();
    std::fs::write(&thread, text.replacen("<h2>", "<h2 class=\"mine\">", 1)).unwrap();
    let args = [
        "write-back",
        "out/conversations.html:28",
        "--apply",
        "--accept-effects",
    ];
    // The write-back is refused saying each of `says`, and no file changed.
    let refused = |p: &TempProject, says: &[&str]| {
        let before = all_files(p);
        let refused = seams_in(p.path(), &args);
        assert_eq!(refused.code, 1, "{refused:?}");
        for said in says {
            assert!(refused.stderr.contains(said), "{said}: {}", refused.stderr);
        }
        assert_eq!(all_files(p), before, "the model or an output changed");
    };
    refused(
        &p,
        &["out/thread.html hold(s) hand edits", "nothing was written"],
    );

    // The edited output's own sidecar tampered with: refused the same way.
    let p = edited(28, edit);
    let sidecar = p.path().join("out/conversations.html.trace.json");
    let text = std::fs::read_to_string(&sidecar).unwrap();
    std::fs::write(
        &sidecar,
        text.replacen("conversation_list", "thread_page", 1),
    )
    .unwrap();
    refused(
        &p,
        &["out/conversations.html.trace.json hold(s) hand edits"],
    );

    // A generator that fails on the edited model (here on any model):
    // nothing is written, naming it.
    let p = edited(28, edit);
    p.add_file("hostile.wasm", seams_tests::HOSTILE_WASM);
    let toml = std::fs::read_to_string(p.path().join("seams.toml")).unwrap();
    std::fs::write(
        p.path().join("seams.toml"),
        format!("{toml}\n[[generator]]\nwasm = \"hostile.wasm\"\n"),
    )
    .unwrap();
    std::fs::write(
        p.path().join("model.ttl"),
        format!(
            "{}\n<urn:seams:test#hostile> <urn:seams:test#behaviour> \"error\" .\n",
            model(&p)
        ),
    )
    .unwrap();
    refused(
        &p,
        &[
            "nothing written: with model.ttl edited, generator hostile.wasm",
            "the model is not what I expected",
        ],
    );

    // Without them, both change: the model and every output it affects.
    let p = edited(28, edit);
    let applied = seams_in(p.path(), &args);
    assert_eq!(applied.code, 0, "{applied:?}");
    assert!(model(&p).contains("\"Your threads\""));
    assert_eq!(seams_in(p.path(), &["check"]).code, 0);
}

/// T5's central edit: a field added below "Topic" with its own label and
/// name becomes a copy of the Topic field with both solved for, binding a
/// new attribute named after it in the entity the form creates; the
/// library's book form the same way.
#[test]
fn a_new_form_field_with_its_own_name_is_written_back_with_an_attribute_of_its_own() {
    let cases = [
        (
            "chat",
            "conversations.html",
            "new_conversation_form",
            "topic",
            "https://example.org/chat#Conversation",
        ),
        (
            "library",
            "books.html",
            "new_book_form",
            "isbn",
            "https://example.org/library#Book",
        ),
    ];
    for (example, output, form, name, entity) in cases {
        let p = block_edited(example, output, |lines| {
            let at = lines
                .iter()
                .position(|l| l.contains(&format!("name=\"{name}\"")))
                .unwrap();
            lines.insert(
                at + 1,
                format!("      <label for=\"{form}-mood\">Mood</label>"),
            );
            let input = lines[at]
                .replace(&format!("{form}-{name}"), &format!("{form}-mood"))
                .replace(&format!("name=\"{name}\""), "name=\"mood\"");
            lines.insert(at + 2, input);
        });
        let edited = std::fs::read_to_string(p.path().join("out").join(output)).unwrap();
        let before = model(&p);
        let target = format!("out/{output}");
        let plan = seams_in(p.path(), &["write-back", &target]);
        assert_eq!(plan.code, 0, "{example}: {plan:?}");
        assert!(
            plan.stdout.contains("2 added line(s): a new element <")
                && plan.stdout.contains("labelled \"Mood\"")
                && plan.stdout.contains("  with <"),
            "{example}: {}",
            plan.stdout
        );
        // Written in the file's Turtle, with its prefixes.
        let entity = entity
            .replace("https://example.org/chat#", "chat:")
            .replace("https://example.org/library#", "lib:");
        assert!(
            plan.stdout.contains(&format!("+{entity} ui:attribute ")),
            "{example}: {}",
            plan.stdout
        );
        assert_eq!(model(&p), before, "{example}: a plan writes nothing");
        let applied = seams_in(
            p.path(),
            &["write-back", &target, "--apply", "--accept-effects"],
        );
        assert_eq!(applied.code, 0, "{example}: {applied:?}");
        let after = model(&p);
        assert!(after.starts_with(&before), "{example}: {after}");
        for value in ["\"Mood\"", "\"mood\""] {
            assert_eq!(
                after[before.len()..].matches(value).count(),
                2,
                "{example}: the field and its attribute: {after}"
            );
        }
        assert_put_get(&p, output, &edited);
        // GetPut: generated again, nothing to write back.
        let again = seams_in(p.path(), &["write-back", &target]);
        assert_eq!(again.code, 1, "{example}: {again:?}");
        assert!(again.stderr.contains("no hand edit"), "{again:?}");
    }
}

/// The edits users make to a generated page, as functions of its lines so
/// that one edit applies to every example.
mod edits {
    /// The first text field: its label line's index, the form's id, the
    /// field's name and label.
    fn text_field(l: &[String]) -> (usize, String, String, String) {
        let at = (1..l.len())
            .find(|&i| l[i].contains("<input ") && l[i].contains("type=\"text\""))
            .map(|i| i - 1)
            .expect("a text field");
        let label = &l[at];
        let (for_, rest) = label
            .split_once("for=\"")
            .unwrap()
            .1
            .split_once('"')
            .unwrap();
        let (form, name) = for_.split_once('-').unwrap();
        let text = rest[1..].split_once("</label>").unwrap().0;
        (at, form.to_owned(), name.to_owned(), text.to_owned())
    }

    /// `lines` with the field `name` of `form` labelled `label` renamed to
    /// `mood`, labelled `Mood`.
    fn moody(lines: &[String], form: &str, name: &str, label: &str) -> Vec<String> {
        lines
            .iter()
            .map(|l| {
                l.replace(&format!("{form}-{name}"), &format!("{form}-mood"))
                    .replace(&format!("name=\"{name}\""), "name=\"mood\"")
                    .replace(&format!(">{label}</label>"), ">Mood</label>")
            })
            .collect()
    }

    pub fn add_field(l: &mut Vec<String>) {
        let (at, form, name, label) = text_field(l);
        let copy = moody(&l[at..at + 2], &form, &name, &label);
        l.splice(at + 2..at + 2, copy);
    }

    pub fn remove_field(l: &mut Vec<String>) {
        let (at, ..) = text_field(l);
        l.drain(at..at + 2);
    }

    /// The first field a record can be made without (an input that is not
    /// `required`), with its label.
    pub fn remove_optional_field(l: &mut Vec<String>) {
        let at = (1..l.len())
            .find(|&i| l[i].contains("<input ") && !l[i].contains(" required"))
            .map(|i| i - 1)
            .expect("an optional field");
        l.drain(at..at + 2);
    }

    pub fn rename_field(l: &mut Vec<String>) {
        let (at, form, name, label) = text_field(l);
        let renamed = moody(&l[at..at + 2], &form, &name, &label);
        l.splice(at..at + 2, renamed);
    }

    /// The first two fields of the first form, swapped.
    pub fn reorder_fields(l: &mut Vec<String>) {
        let at = l.iter().position(|x| x.contains("<label for=")).unwrap();
        assert!(l[at + 2].contains("<label for="), "two fields");
        let first: Vec<String> = l.drain(at..at + 2).collect();
        l.splice(at + 2..at + 2, first);
    }

    pub fn add_page(l: &mut Vec<String>) {
        let at = l.iter().position(|x| x.contains("</nav>")).unwrap();
        let indent = l[at - 1].len() - l[at - 1].trim_start().len();
        let link = format!(
            "{}<a href=\"settings.html\">Settings</a>",
            " ".repeat(indent)
        );
        l.insert(at, link);
    }

    /// The first list's section, and where it ends.
    fn section(l: &[String]) -> (usize, usize, String) {
        let from = l.iter().position(|x| x.contains("<section id=\"")).unwrap();
        let to = from
            + l[from..]
                .iter()
                .position(|x| x.contains("</section>"))
                .unwrap();
        let id = l[from].split('"').nth(1).unwrap().to_owned();
        (from, to, id)
    }

    pub fn add_list(l: &mut Vec<String>) {
        let (from, to, id) = section(l);
        let copy: Vec<String> = l[from..=to]
            .iter()
            .map(|x| {
                let x = x.replace(&id, "archive_list");
                if x.contains("<h3>") {
                    let indent = &x[..x.len() - x.trim_start().len()];
                    format!("{indent}<h3>Archived</h3>")
                } else if x.contains("<li>") {
                    let indent = &x[..x.len() - x.trim_start().len()];
                    format!("{indent}<li>Nothing archived.</li>")
                } else {
                    x
                }
            })
            .collect();
        l.splice(to + 1..to + 1, copy);
    }

    pub fn remove_list(l: &mut Vec<String>) {
        let (from, to, _) = section(l);
        l.drain(from..=to);
    }

    /// A state added after the last state of the first status flow shown.
    pub fn add_state(l: &mut Vec<String>) {
        let at = l
            .iter()
            .rposition(|x| x.contains("<option value="))
            .unwrap();
        let indent = l[at].len() - l[at].trim_start().len();
        let option = format!(
            "{}<option value=\"withdrawn\">Withdrawn</option>",
            " ".repeat(indent)
        );
        l.insert(at + 1, option);
    }
}

/// The edits users make to a generated page, on all three examples, each
/// given back exactly (PutGet, then GetPut: nothing more to write back),
/// its effects listed, nothing written by the plan. The book (traces.md) lists the
/// same table.
#[test]
fn the_edits_users_make_are_each_given_back_or_refused_naming_why() {
    type Edit = fn(&mut Vec<String>);
    // What the plan says, or what the refusal says (a change that would
    // leave the app unable to work).
    enum Expected {
        Given(&'static str),
        Refused(&'static str),
    }
    use Expected::{Given, Refused};
    let kinds: [(&str, Edit); 9] = [
        ("add a form field", edits::add_field),
        ("remove a form field", edits::remove_field),
        (
            "remove an optional form field",
            edits::remove_optional_field,
        ),
        ("rename a form field (label and name)", edits::rename_field),
        ("reorder two fields", edits::reorder_fields),
        ("add a page to the navigation", edits::add_page),
        ("add a list", edits::add_list),
        ("remove a list", edits::remove_list),
        ("add a state to a status flow", edits::add_state),
    ];
    // (example, output, kind, expected); a kind an example has no place
    // for (chat has no status flow) is left out.
    let rows: &[(&str, &str, &str, Expected)] = &[
        (
            "chat",
            "thread.html",
            "add a form field",
            Given(
                "2 added line(s): a new element <https://example.org/chat#mood_field>, a copy of <https://example.org/chat#author_field> labelled \"Mood\"\n  with <https://example.org/chat#mood>, a copy of <https://example.org/chat#author>\n",
            ),
        ),
        (
            "chat",
            "thread.html",
            "remove a form field",
            Refused(
                "no field of it binds the required attribute <https://example.org/chat#author> (\"author\"), so the app would refuse every record it sends; add a ui:Field",
            ),
        ),
        (
            "chat",
            "thread.html",
            "rename a form field (label and name)",
            Given(
                "values changed\n  <https://example.org/chat#author_field> <http://www.w3.org/2000/01/rdf-schema#label> \"Your name\" becomes \"Mood\"",
            ),
        ),
        (
            "chat",
            "thread.html",
            "reorder two fields",
            Given("in another order\n"),
        ),
        (
            "chat",
            "thread.html",
            "add a page to the navigation",
            Given("1 added line(s): a new element <https://example.org/chat#"),
        ),
        (
            "chat",
            "thread.html",
            "add a list",
            Given("a copy of <https://example.org/chat#message_list> labelled \"Archived\""),
        ),
        (
            "chat",
            "thread.html",
            "remove a list",
            Given("<https://example.org/chat#message_list> removed"),
        ),
        (
            "expense",
            "reports.html",
            "add a form field",
            Given("2 added line(s): a new element <https://example.org/expense#"),
        ),
        (
            "expense",
            "reports.html",
            "remove a form field",
            Refused(
                "no field of it binds the required attribute <https://example.org/expense#title>",
            ),
        ),
        (
            "expense",
            "report.html",
            "remove an optional form field",
            Given("2 removed line(s): <https://example.org/expense#billable_field> removed"),
        ),
        (
            "expense",
            "reports.html",
            "rename a form field (label and name)",
            Given("values changed\n"),
        ),
        (
            "expense",
            "reports.html",
            "reorder two fields",
            Given("in another order\n"),
        ),
        (
            "expense",
            "reports.html",
            "add a page to the navigation",
            Given("1 added line(s): a new element <https://example.org/expense#"),
        ),
        (
            "expense",
            "reports.html",
            "add a list",
            Given("labelled \"Archived\""),
        ),
        (
            "expense",
            "reports.html",
            "remove a list",
            Given("<https://example.org/expense#report_list> removed"),
        ),
        (
            "expense",
            "report.html",
            "add a state to a status flow",
            Given(
                "1 added line(s): a new element <https://example.org/expense#withdrawn>, a copy of <https://example.org/expense#rejected> labelled \"Withdrawn\"",
            ),
        ),
        (
            "library",
            "books.html",
            "add a form field",
            Given("2 added line(s): a new element <https://example.org/library#"),
        ),
        (
            "library",
            "books.html",
            "remove a form field",
            Refused(
                "no field of it binds the required attribute <https://example.org/library#book_title>",
            ),
        ),
        (
            "library",
            "books.html",
            "remove an optional form field",
            Given("2 removed line(s): <https://example.org/library#isbn_field> removed"),
        ),
        (
            "library",
            "books.html",
            "rename a form field (label and name)",
            Given("values changed\n"),
        ),
        (
            "library",
            "books.html",
            "reorder two fields",
            Given("in another order\n"),
        ),
        (
            "library",
            "books.html",
            "add a page to the navigation",
            Given("1 added line(s): a new element <https://example.org/library#"),
        ),
        (
            "library",
            "books.html",
            "add a list",
            Given("labelled \"Archived\""),
        ),
        (
            "library",
            "books.html",
            "remove a list",
            Given("<https://example.org/library#book_list> removed"),
        ),
        (
            "library",
            "loans.html",
            "add a state to a status flow",
            Given("labelled \"Withdrawn\""),
        ),
    ];
    let mut failed = Vec::new();
    for (example, output, kind, expected) in rows {
        let edit = kinds.iter().find(|(k, _)| k == kind).unwrap().1;
        let what = format!("{example}/{output}: {kind}");
        let p = block_edited(example, output, edit);
        let target = format!("out/{output}");
        let edited = std::fs::read_to_string(p.path().join("out").join(output)).unwrap();
        let before = all_files(&p);
        let planned = seams_in(p.path(), &["write-back", &target]);
        let mut apply = vec!["write-back", target.as_str(), "--apply", "--accept-effects"];
        // A new page is said first, and applied only with its own consent.
        if *kind == "add a page to the navigation" {
            assert!(
                planned
                    .stdout
                    .starts_with("note: this edit of lines creates a new page <"),
                "{what}: {}",
                planned.stdout
            );
            let refused = seams_in(p.path(), &apply);
            assert!(
                refused.code == 1 && refused.stderr.contains("pass --accept-structure"),
                "{what}: {refused:?}"
            );
            assert_eq!(all_files(&p), before, "{what}: refused, yet written");
            apply.push("--accept-structure");
        }
        let said = match expected {
            Given(said) => said,
            Refused(why) => {
                if planned.code != 1 || !planned.stderr.contains(why) {
                    failed.push(format!("{what}: {planned:?}"));
                }
                let applied = seams_in(p.path(), &apply);
                assert_eq!(applied.code, 1, "{what}: {applied:?}");
                assert_eq!(all_files(&p), before, "{what}: a refusal wrote something");
                continue;
            }
        };
        if planned.code != 0 || !planned.stdout.contains(said) {
            failed.push(format!("{what}: {planned:?}"));
            continue;
        }
        // Two fields swapped are two fields' orders swapped, not a field's
        // with an attribute's, which prints the same form and reorders the
        // records' other views.
        if *kind == "reorder two fields" {
            let swapped = planned
                .stdout
                .matches("_field> <https://w3id.org/seams/ui#order> ")
                .count();
            assert_eq!(swapped, 2, "{what}: {}", planned.stdout);
        }
        assert!(
            planned.stdout.contains("effects: "),
            "{what}: {}",
            planned.stdout
        );
        assert_eq!(all_files(&p), before, "{what}: a plan wrote something");
        let applied = seams_in(p.path(), &apply);
        assert_eq!(applied.code, 0, "{what}: {applied:?}");
        // PutGet: the output is the edit and the project is clean; GetPut:
        // nothing more to write back.
        assert_put_get(&p, output, &edited);
        let again = seams_in(p.path(), &["write-back", &target]);
        assert!(again.stderr.contains("no hand edit"), "{what}: {again:?}");
    }
    assert!(failed.is_empty(), "{}", failed.join("\n\n"));
}

/// A model file that is a link inside the project: write-back replaces a
/// model file whole, which would turn the link into a file and leave the
/// file it points at as it was, so the write is refused, naming both, and
/// nothing changes.
#[test]
fn a_model_file_that_is_a_link_is_not_replaced_by_a_write_back() {
    let p = edited(28, "      <h3>Your threads</h3>");
    let data = p.path().join("data");
    std::fs::create_dir(&data).unwrap();
    std::fs::rename(p.path().join("model.ttl"), data.join("model.ttl")).unwrap();
    std::os::unix::fs::symlink("data/model.ttl", p.path().join("model.ttl")).unwrap();
    let before = std::fs::read(data.join("model.ttl")).unwrap();
    let apply = seams_in(
        p.path(),
        &["write-back", "out/conversations.html:28", "--apply"],
    );
    assert_eq!(apply.code, 1, "{apply:?}");
    assert!(
        apply
            .stderr
            .contains("is a symbolic link to data/model.ttl"),
        "{}",
        apply.stderr
    );
    assert!(
        std::fs::symlink_metadata(p.path().join("model.ttl"))
            .unwrap()
            .is_symlink()
    );
    assert_eq!(std::fs::read(data.join("model.ttl")).unwrap(), before);
}
