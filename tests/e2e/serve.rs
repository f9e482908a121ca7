//! `seams serve`, the generation viewer, over HTTP: what it shows, that it
//! follows the project on disk, what it refuses (foreign hosts and
//! origins, writes without the run's token, non-loopback addresses), and
//! write-back through its form. The same viewer in a real browser is in
//! `browser.rs`.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use seams_tests::{TempProject, chat_project, seams, seams_in};

use crate::app::Server;

/// A running `seams serve` with the URL it printed.
pub(crate) struct Viewer {
    server: Server,
    /// The printed URL, with the token.
    pub(crate) url: String,
    pub(crate) token: String,
    _logs: tempfile::TempDir,
}

impl Viewer {
    /// `http://127.0.0.1:PORT`.
    pub(crate) fn base(&self) -> &str {
        &self.server.base
    }

    /// `127.0.0.1:PORT`.
    fn host(&self) -> &str {
        self.server.base.trim_start_matches("http://")
    }
}

/// Starts the viewer of `project` on a free loopback port.
pub(crate) fn start_viewer(project: &Path) -> Viewer {
    let logs = tempfile::tempdir().unwrap();
    let server = Server::listen(logs.path(), "seams-serve", |port| {
        let mut command = Command::new(env!("CARGO_BIN_EXE_seams"));
        command
            .args(["serve", "--project", project.to_str().unwrap()])
            .args(["--port", &port.to_string()]);
        command
    });
    // The URL is printed and flushed before the port is served.
    let log = std::fs::read_to_string(&server.log).unwrap();
    let url = log
        .lines()
        .find_map(|l| l.strip_prefix("seams serve: open "))
        .unwrap_or_else(|| panic!("no URL printed:\n{log}"))
        .to_owned();
    let token = url.rsplit_once("token=").unwrap().1.to_owned();
    assert!(
        url.starts_with(&format!("{}/?token=", server.base)),
        "{url}"
    );
    Viewer {
        server,
        url,
        token,
        _logs: logs,
    }
}

/// A generated copy of the chat example.
pub(crate) fn generated_chat() -> TempProject {
    let p = chat_project();
    let generated = seams_in(p.path(), &["generate"]);
    assert_eq!(generated.code, 0, "{generated:?}");
    p
}

/// One answer, as a raw HTTP/1.1 exchange: full control of every header
/// (a client library sets `Host` itself).
#[derive(Debug)]
struct Raw {
    status: u16,
    head: String,
    body: String,
}

fn raw(viewer: &Viewer, request_line: &str, headers: &[(&str, &str)], body: &str) -> Raw {
    let mut stream = TcpStream::connect(viewer.host()).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    let mut request = format!("{request_line} HTTP/1.1\r\nConnection: close\r\n");
    if !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("host")) {
        request.push_str(&format!("Host: {}\r\n", viewer.host()));
    }
    for (k, v) in headers {
        request.push_str(&format!("{k}: {v}\r\n"));
    }
    if !body.is_empty() {
        request.push_str(&format!(
            "Content-Type: application/x-www-form-urlencoded\r\nContent-Length: {}\r\n",
            body.len()
        ));
    }
    request.push_str("\r\n");
    request.push_str(body);
    stream.write_all(request.as_bytes()).unwrap();
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).unwrap();
    let answer = String::from_utf8(answer).unwrap();
    let (head, body) = answer.split_once("\r\n\r\n").unwrap_or((&answer, ""));
    Raw {
        status: head.split(' ').nth(1).unwrap().parse().unwrap(),
        head: head.to_ascii_lowercase(),
        body: body.to_owned(),
    }
}

/// `path` with the run's token in its query, as the viewer's links carry
/// it.
fn with_token(viewer: &Viewer, path: &str) -> String {
    let joint = if path.contains('?') { '&' } else { '?' };
    format!("{path}{joint}token={}", viewer.token)
}

/// A page, asked by the browser that opened the printed URL: a link of
/// the viewer's, carrying the run's token.
fn get(viewer: &Viewer, path: &str) -> Raw {
    raw(
        viewer,
        &format!("GET {}", with_token(viewer, path)),
        &[],
        "",
    )
}

/// A page, asked by someone who did not see the printed URL.
fn get_without_token(viewer: &Viewer, path: &str) -> Raw {
    raw(viewer, &format!("GET {path}"), &[], "")
}

/// A form posted from the viewer's own page.
fn post(viewer: &Viewer, fields: &[(&str, &str)]) -> Raw {
    let origin = viewer.base().to_owned();
    raw(
        viewer,
        "POST /write-back",
        &[("Origin", &origin)],
        &encode(fields),
    )
}

fn encode(fields: &[(&str, &str)]) -> String {
    fields
        .iter()
        .map(|(k, v)| {
            let value: String = v
                .bytes()
                .map(|b| match b {
                    b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' => {
                        (b as char).to_string()
                    }
                    _ => format!("%{b:02X}"),
                })
                .collect();
            format!("{k}={value}")
        })
        .collect::<Vec<_>>()
        .join("&")
}

/// Every `<script` of a page loads a file: nothing inline.
fn assert_no_inline_script(page: &str) {
    for (i, _) in page.match_indices("<script") {
        let tag = &page[i..i + page[i..].find('>').unwrap()];
        assert!(tag.contains(" src="), "inline script: {tag}");
    }
}

fn model_of(p: &TempProject) -> PathBuf {
    p.path().join("model.ttl")
}

#[test]
fn the_viewer_shows_outputs_traces_and_check_state_and_follows_the_disk() {
    let p = generated_chat();
    let viewer = start_viewer(p.path());

    let index = get(&viewer, "/");
    assert_eq!(index.status, 200, "{index:?}");
    assert!(
        index
            .head
            .contains("content-security-policy: default-src 'none'; script-src 'self'")
    );
    assert!(
        index.body.contains("clean: every output matches"),
        "{}",
        index.body
    );
    for output in ["conversations.html", "thread.html", "app.py", "htmx.min.js"] {
        assert!(
            index.body.contains(&format!(
                "<a href=\"/output?path={output}&amp;token={}\">{output}</a>",
                viewer.token
            )),
            "{output} not listed"
        );
    }
    assert_no_inline_script(&index.body);

    // A line, its template line and the model element behind it, with its
    // triples and where the model writes it.
    let line = get(&viewer, "/output?path=conversations.html&line=22");
    assert_eq!(line.status, 200, "{line:?}");
    let aside = &line.body[line.body.find("<aside").unwrap()..];
    assert!(aside.contains("layout.html:22"), "{aside}");
    assert!(aside.contains("{{ item.title }}"), "{aside}");
    assert!(
        aside.contains("https:&#x2f;&#x2f;example.org&#x2f;chat#thread_page"),
        "{aside}"
    );
    assert!(aside.contains("<strong>Thread</strong>"), "{aside}");
    assert!(aside.contains("model.ttl:"), "{aside}");
    assert!(aside.contains("chat:thread_page a ui:Page"), "{aside}");
    // The browser that opened the printed URL may write back.
    assert!(
        aside.contains(&format!("name=\"token\" value=\"{}\"", viewer.token)),
        "{aside}"
    );
    // Without the token, nothing is shown at all: another user
    // of the machine who finds the port reads no output.
    for path in [
        "/",
        "/output?path=conversations.html&line=22",
        "/view?generator=builtin%3Ahtmx",
    ] {
        let refused = get_without_token(&viewer, path);
        assert_eq!(refused.status, 403, "{path}: {refused:?}");
        assert!(
            refused.body.contains("the URL `seams serve` printed"),
            "{refused:?}"
        );
        assert!(
            !refused.body.contains("Conversations"),
            "{path}: {refused:?}"
        );
    }
    // A sidecar is listed with its output, not as a row of its own.
    assert!(
        !index.body.contains("conversations.html.trace.json"),
        "{}",
        index.body
    );

    let view = get(&viewer, "/view?generator=builtin%3Ahtmx");
    assert_eq!(view.status, 200, "{view:?}");
    assert!(view.body.contains("&quot;pages&quot;"), "{}", view.body);

    // A hand edit that writes markup into an output: shown as text, and
    // check's word for the file on the project page.
    let page = p.path().join("out/conversations.html");
    let text = std::fs::read_to_string(&page).unwrap();
    let hostile = text.replacen(
        "<h2>Conversations</h2>",
        "<h2>Conversations</h2><script>alert(1)</script>",
        1,
    );
    std::fs::write(&page, hostile).unwrap();
    let index = get(&viewer, "/");
    assert!(
        index
            .body
            .contains("<span class=\"state hand-edited\">hand-edited</span>"),
        "{}",
        index.body
    );
    let shown = get(&viewer, "/output?path=conversations.html");
    assert!(
        shown
            .body
            .contains("&lt;script&gt;alert(1)&lt;&#x2f;script&gt;"),
        "{}",
        shown.body
    );
    assert_no_inline_script(&shown.body);

    // A line that is not a number is a bad request; one past the end
    // selects nothing.
    let bad = get(&viewer, "/output?path=conversations.html&line=x%1b%5b31m");
    assert_eq!(bad.status, 400, "{bad:?}");
    assert!(!bad.body.contains('\u{1b}'), "{bad:?}");
    let past = get(&viewer, "/output?path=conversations.html&line=99999999");
    assert_eq!(past.status, 200, "{past:?}");
    assert!(
        past.body.contains("Line 99999999 is not traced"),
        "{}",
        past.body
    );
    // Only outputs are shown: nothing outside the output directory.
    for path in [
        "..%2Fmodel.ttl",
        "%2Fetc%2Fpasswd",
        "..%2F..%2Fseams.toml",
        "nope.txt",
    ] {
        let answer = get(&viewer, &format!("/output?path={path}"));
        assert_eq!(answer.status, 404, "{path}: {answer:?}");
        assert!(!answer.body.contains("ui:Page"), "{path}");
    }
    // Nor through a link planted in the outputs: to a file outside, to a
    // directory outside, or to the model inside the project. A locked
    // output replaced by a link shows nothing either.
    let secret = tempfile::tempdir().unwrap();
    std::fs::write(secret.path().join("id_rsa"), "PRIVATE KEY").unwrap();
    let out = p.path().join("out");
    std::os::unix::fs::symlink(secret.path().join("id_rsa"), out.join("x.txt")).unwrap();
    std::os::unix::fs::symlink(secret.path(), out.join("d")).unwrap();
    std::os::unix::fs::symlink(p.path().join("model.ttl"), out.join("m.txt")).unwrap();
    std::fs::remove_file(out.join("app.py")).unwrap();
    std::os::unix::fs::symlink(secret.path().join("id_rsa"), out.join("app.py")).unwrap();
    for path in ["x.txt", "d%2Fid_rsa", "m.txt", "app.py"] {
        let answer = get(&viewer, &format!("/output?path={path}"));
        assert_eq!(answer.status, 404, "{path}: {answer:?}");
        assert!(!answer.body.contains("PRIVATE KEY"), "{path}: {answer:?}");
        assert!(!answer.body.contains("ui:Page"), "{path}: {answer:?}");
    }
}

#[test]
fn the_viewer_refuses_foreign_hosts_and_origins_and_writes_without_the_token() {
    let p = generated_chat();
    let model_before = std::fs::read(model_of(&p)).unwrap();
    let viewer = start_viewer(p.path());
    let port = viewer.host().rsplit(':').next().unwrap().to_owned();

    // DNS rebinding: a name that resolves here is still not served.
    for host in [
        format!("evil.example:{port}"),
        "127.0.0.1".into(),
        String::new(),
    ] {
        let answer = raw(&viewer, "GET /", &[("Host", &host)], "");
        assert_eq!(answer.status, 403, "{host}: {answer:?}");
        assert!(answer.body.contains("this viewer serves"), "{answer:?}");
    }
    let localhost = format!("localhost:{port}");
    assert_eq!(
        raw(
            &viewer,
            &format!("GET {}", with_token(&viewer, "/")),
            &[("Host", &localhost)],
            ""
        )
        .status,
        200
    );

    let edit = [
        ("token", viewer.token.as_str()),
        ("output", "conversations.html"),
        ("line", "22"),
        ("text", "      <a href=\"thread.html\">Discussion</a>"),
        ("apply", "1"),
        ("accept_effects", "1"),
    ];
    let body = encode(&edit);
    // A form posted from another site, with the token even.
    let cross = raw(
        &viewer,
        "POST /write-back",
        &[
            ("Origin", "http://evil.example"),
            ("Sec-Fetch-Site", "cross-site"),
        ],
        &body,
    );
    assert_eq!(cross.status, 403, "{cross:?}");
    let no_origin = raw(&viewer, "POST /write-back", &[], &body);
    assert_eq!(no_origin.status, 403, "{no_origin:?}");
    // From the viewer's own origin, without this run's token.
    let mut forged = edit;
    forged[0].1 = "00000000000000000000000000000000";
    let no_token = post(&viewer, &forged);
    assert_eq!(no_token.status, 403, "{no_token:?}");
    assert!(no_token.body.contains("token"), "{no_token:?}");
    // A form without its token field: a clear refusal, not the form
    // parser's words.
    let missing = post(&viewer, &edit[1..]);
    assert_eq!(missing.status, 400, "{missing:?}");
    assert!(
        missing
            .body
            .contains("refused: this is not a write-back form of the viewer"),
        "{missing:?}"
    );
    assert!(!missing.body.contains("missing field"), "{missing:?}");
    // A line without its text (or a text without its line): neither one
    // line's write-back nor the whole file's.
    let half = post(&viewer, &[edit[0], edit[1], edit[2], edit[4]]);
    assert_eq!(half.status, 400, "{half:?}");
    assert!(
        half.body.contains("needs both its line and its text"),
        "{half:?}"
    );
    let wrong = get_without_token(&viewer, "/?token=0123");
    assert_eq!(wrong.status, 403, "{wrong:?}");
    assert_eq!(std::fs::read(model_of(&p)).unwrap(), model_before);

    // The printed URL shows the project, sets no cookie (a cookie for
    // 127.0.0.1 would reach every port of it), and every link of the page
    // carries the token.
    let first = raw(
        &viewer,
        &format!("GET {}", viewer.url.trim_start_matches(viewer.base())),
        &[],
        "",
    );
    assert_eq!(first.status, 200, "{first:?}");
    assert!(!first.head.contains("set-cookie"), "{first:?}");
    for header in ["referrer-policy: same-origin", "x-frame-options: deny"] {
        assert!(first.head.contains(header), "{first:?}");
    }
    let links: Vec<&str> = first
        .body
        .split("href=\"")
        .skip(1)
        .filter_map(|rest| rest.split('"').next())
        .filter(|href| !href.starts_with("/assets/"))
        .collect();
    assert!(links.len() > 3, "{links:?}");
    for link in links {
        assert!(link.contains(&format!("token={}", viewer.token)), "{link}");
    }
}

#[test]
fn the_viewer_proposes_another_change_that_gives_the_edit_back_when_picked() {
    let p = seams_tests::chat_with_a_mood_field();
    let viewer = start_viewer(p.path());
    let fields = [("token", viewer.token.as_str()), ("output", "thread.html")];
    let plan = post(&viewer, &fields);
    assert_eq!(plan.status, 200, "{plan:?}");
    assert!(
        plan.body.contains("(this is 1)")
            && plan.body.contains("<option value=\"2\">change 2</option>"),
        "{}",
        plan.body
    );
    let mut picked = fields.to_vec();
    picked.push(("choose", "2"));
    let second = post(&viewer, &picked);
    assert_eq!(second.status, 200, "{second:?}");
    assert!(
        second.body.contains("(this is 2)")
            && second
                .body
                .contains("<input type=\"hidden\" name=\"choose\" value=\"2\">"),
        "{}",
        second.body
    );
    picked.extend([("apply", "1"), ("accept_effects", "1")]);
    let applied = post(&viewer, &picked);
    assert_eq!(applied.status, 200, "{applied:?}");
    seams_tests::assert_mood_on_the_author_attribute(&p);
}

#[test]
fn the_viewer_removes_a_page_for_a_removed_link_only_with_its_own_confirmation() {
    let p = seams_tests::example_project("library");
    assert_eq!(seams_in(p.path(), &["generate"]).code, 0);
    let page = p.path().join("out/books.html");
    let text = std::fs::read_to_string(&page).unwrap();
    std::fs::write(
        &page,
        text.replace("      <a href=\"members.html\">Members</a>\n", ""),
    )
    .unwrap();
    let model_before = std::fs::read_to_string(model_of(&p)).unwrap();
    let viewer = start_viewer(p.path());
    let fields = [("token", viewer.token.as_str()), ("output", "books.html")];
    let plan = post(&viewer, &fields);
    assert_eq!(plan.status, 200, "{plan:?}");
    assert!(
        plan.body
            .contains("this edit of lines removes the whole page lib:members_page")
            && plan.body.contains("name=\"accept_structure\""),
        "{}",
        plan.body
    );
    let mut apply = fields.to_vec();
    apply.extend([("apply", "1"), ("accept_effects", "1")]);
    let refused = post(&viewer, &apply);
    assert_eq!(refused.status, 422, "{refused:?}");
    // The viewer names its own box, not the command line's flag.
    assert!(
        refused
            .body
            .contains("apply this change of the application")
            && !refused.body.contains("--accept"),
        "{}",
        refused.body
    );
    assert_eq!(std::fs::read_to_string(model_of(&p)).unwrap(), model_before);
    apply.push(("accept_structure", "1"));
    let applied = post(&viewer, &apply);
    assert_eq!(applied.status, 200, "{applied:?}");
    assert!(!p.path().join("out/members.html").exists());
    assert_eq!(seams_in(p.path(), &["check"]).code, 0);
}

#[test]
fn the_viewer_writes_back_an_edited_line_only_when_asked() {
    let p = generated_chat();
    let model_before = std::fs::read_to_string(model_of(&p)).unwrap();
    let viewer = start_viewer(p.path());
    let edited = "      <a href=\"thread.html\">Discussion</a>";
    let fields = [
        ("token", viewer.token.as_str()),
        ("output", "conversations.html"),
        ("line", "22"),
        ("text", edited),
    ];
    let plan = post(&viewer, &fields);
    assert_eq!(plan.status, 200, "{plan:?}");
    assert!(
        plan.body.contains(
            "-    rdfs:label &quot;Thread&quot; ;\n+    rdfs:label &quot;Discussion&quot; ;"
        ),
        "{}",
        plan.body
    );
    assert!(
        plan.body.contains("3 other line(s) change"),
        "{}",
        plan.body
    );
    assert!(plan.body.contains("thread.html:26"), "{}", plan.body);
    assert_eq!(std::fs::read_to_string(model_of(&p)).unwrap(), model_before);

    // Applying a patch with effects needs them accepted.
    let mut apply = fields.to_vec();
    apply.push(("apply", "1"));
    let refused = post(&viewer, &apply);
    assert_eq!(refused.status, 422, "{refused:?}");
    assert!(
        refused.body.contains("apply with its effect(s)") && !refused.body.contains("--accept"),
        "{}",
        refused.body
    );
    assert_eq!(std::fs::read_to_string(model_of(&p)).unwrap(), model_before);

    apply.push(("accept_effects", "1"));
    let applied = post(&viewer, &apply);
    assert_eq!(applied.status, 200, "{applied:?}");
    assert!(
        applied.body.contains("wrote model.ttl, then generated"),
        "{}",
        applied.body
    );
    let model_after = std::fs::read_to_string(model_of(&p)).unwrap();
    assert_eq!(
        model_after,
        model_before.replacen(
            "    rdfs:label \"Thread\" ;",
            "    rdfs:label \"Discussion\" ;",
            1
        )
    );
    let page = std::fs::read_to_string(p.path().join("out/conversations.html")).unwrap();
    assert_eq!(page.split('\n').nth(21), Some(edited));
    let check = seams_in(p.path(), &["check"]);
    assert_eq!(check.code, 0, "{check:?}");

    // A refusal is shown, and writes nothing.
    let unexplained = post(
        &viewer,
        &[
            ("token", viewer.token.as_str()),
            ("output", "conversations.html"),
            ("line", "3"),
            ("text", "  <meta charset=\"latin1\">"),
        ],
    );
    assert_eq!(unexplained.status, 422, "{unexplained:?}");
    assert!(
        unexplained.body.contains("id=\"refusal\""),
        "{unexplained:?}"
    );
    assert_eq!(std::fs::read_to_string(model_of(&p)).unwrap(), model_after);
}

#[test]
fn serve_refuses_an_address_other_machines_reach_unless_asked() {
    let p = generated_chat();
    let project = p.path().to_str().unwrap();
    let remote = seams(&[
        "serve",
        "--project",
        project,
        "--address",
        "192.0.2.1",
        "--port",
        "0",
    ]);
    assert_eq!(remote.code, 1, "{remote:?}");
    assert!(
        remote.stderr.contains("not a loopback address"),
        "{remote:?}"
    );
    assert!(remote.stderr.contains("--allow-remote"), "{remote:?}");
    let every = seams(&[
        "serve",
        "--project",
        project,
        "--address",
        "0.0.0.0",
        "--allow-remote",
    ]);
    assert_eq!(every.code, 1, "{every:?}");
    assert!(every.stderr.contains("every interface"), "{every:?}");
    let missing = seams(&["serve", "--project", "/nonexistent/project"]);
    assert_eq!(missing.code, 1, "{missing:?}");
    assert!(missing.stdout.is_empty(), "{missing:?}");
}
