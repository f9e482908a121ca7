//! Real-browser tests: headless Chromium driven through Debian's
//! `chromedriver` (both installed by `tests/run`), with every host name
//! but `localhost` failing to resolve, so that a page that needs the
//! internet shows it. Screenshots of the main views go to
//! `<target>/screenshots/`.

use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use serde_json::json;

use seams_tests::webdriver::Browser;
use seams_tests::{seams_in, target_dir};

use seams_tests::html::attribute_values;

use crate::app::{Server, app_dir};
use crate::database::Postgres;
use crate::serve::{generated_chat, start_viewer};

/// A chromedriver and a Chromium session, stopped when dropped.
struct Chromium {
    // Dropped first: the session ends before its driver.
    browser: Browser,
    _driver: Server,
    _dir: tempfile::TempDir,
}

impl std::ops::Deref for Chromium {
    type Target = Browser;
    fn deref(&self) -> &Browser {
        &self.browser
    }
}

fn chromium() -> Chromium {
    let dir = tempfile::tempdir().unwrap();
    let driver = Server::listen(dir.path(), "chromedriver", |port| {
        let mut command = Command::new("chromedriver");
        command.arg(format!("--port={port}"));
        command
    });
    let browser = Browser::start(&driver.base, &dir.path().join("profile"));
    Chromium {
        browser,
        _driver: driver,
        _dir: dir,
    }
}

fn screenshot(name: &str) -> PathBuf {
    target_dir().join("screenshots").join(format!("{name}.png"))
}

/// Every resource the page loaded, as the browser recorded it.
fn resources(browser: &Browser) -> Vec<String> {
    let urls = browser.run(
        "return [location.href, ...performance.getEntriesByType('resource').map(e => e.name)];",
        json!([]),
    );
    urls.as_array()
        .unwrap()
        .iter()
        .map(|u| u.as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn the_viewer_in_chromium_follows_a_line_to_its_template_and_model_and_writes_an_edit_back() {
    let p = generated_chat();
    let viewer = start_viewer(p.path());
    let browser = chromium();

    // The printed URL: the token stays in the address (never in a
    // cookie, which every port of 127.0.0.1 would get), and every link
    // carries it.
    browser.goto(&viewer.url);
    assert_eq!(browser.url(), viewer.url);
    let outputs = browser.text(&browser.find("#outputs"));
    assert!(outputs.contains("conversations.html"), "{outputs}");
    browser.screenshot(&screenshot("viewer-project"));

    // Click an output, then one of its lines.
    browser.click(&browser.find("#outputs a[href^='/output?path=conversations.html&token=']"));
    browser.click(&browser.find("#L22 a"));
    let origin = browser.text(&browser.find("#origin"));
    assert!(origin.contains("layout.html:22"), "{origin}");
    assert!(origin.contains("{{ item.title }}"), "{origin}");
    assert!(origin.contains("Thread"), "{origin}");
    assert!(
        origin.contains("https://example.org/chat#thread_page"),
        "{origin}"
    );
    assert!(origin.contains("model.ttl:"), "{origin}");
    browser.screenshot(&screenshot("viewer-line"));

    // The keyboard moves between traced lines.
    browser.press("j");
    assert!(
        browser.wait_for(
            "return location.search.includes('line=') && !location.search.endsWith('line=22');",
            Duration::from_secs(10)
        ),
        "j did not move: {}",
        browser.url()
    );
    browser.press("k");
    assert!(
        browser.wait_for(
            "return location.search.endsWith('line=22');",
            Duration::from_secs(10)
        ),
        "k did not come back: {}",
        browser.url()
    );

    // Edit the line, see the model patch and its effects, apply.
    let field = browser.find("#edited");
    browser.type_into(&field, "      <a href=\"thread.html\">Discussion</a>");
    browser.click(&browser.find("#write-back button"));
    let patch = browser.text(&browser.find("#patch"));
    assert!(patch.contains("Thread becomes Discussion"), "{patch}");
    assert!(
        patch.contains("+    rdfs:label \"Discussion\" ;"),
        "{patch}"
    );
    let effects = browser.text(&browser.find("#effects"));
    assert!(effects.contains("thread.html:26"), "{effects}");
    browser.screenshot(&screenshot("viewer-write-back"));
    browser.click(&browser.find("#apply input[name=accept_effects]"));
    browser.click(&browser.find("#apply button"));
    let notice = browser.text(&browser.find("#notice"));
    assert!(notice.contains("wrote model.ttl"), "{notice}");
    let line = browser.text(&browser.find("#L22"));
    assert!(line.contains("Discussion"), "{line}");
    browser.screenshot(&screenshot("viewer-applied"));
    let model = std::fs::read_to_string(p.path().join("model.ttl")).unwrap();
    assert!(model.contains("rdfs:label \"Discussion\""), "{model}");

    // Nothing the viewer showed came from elsewhere.
    for url in resources(&browser) {
        assert!(url.starts_with(viewer.base()), "{url}");
    }
}

#[test]
fn the_viewer_in_chromium_writes_back_a_new_form_field_added_by_hand() {
    let p = generated_chat();
    // The central edit of structural write-back: a field added below
    // "Topic" with its own label and name.
    let page = p.path().join("out/conversations.html");
    let text = std::fs::read_to_string(&page).unwrap();
    let edited = text.replacen(
        "      <input id=\"new_conversation_form-topic\" name=\"topic\" type=\"text\" required>\n",
        "      <input id=\"new_conversation_form-topic\" name=\"topic\" type=\"text\" required>\n      <label for=\"new_conversation_form-mood\">Mood</label>\n      <input id=\"new_conversation_form-mood\" name=\"mood\" type=\"text\" required>\n",
        1,
    );
    assert_ne!(edited, text, "the field was not added");
    std::fs::write(&page, &edited).unwrap();
    let model_before = std::fs::read_to_string(p.path().join("model.ttl")).unwrap();
    let viewer = start_viewer(p.path());
    let browser = chromium();
    browser.goto(&viewer.url);
    browser.click(&browser.find("#outputs a[href^='/output?path=conversations.html&token=']"));

    // The page says the file holds hand edits and proposes the change,
    // writing nothing yet.
    browser.click(&browser.find("#write-back-file button"));
    let proposal = browser.text(&browser.find("#proposal"));
    for part in [
        "2 added line(s): a new element <https://example.org/chat#topic_field_2>, a copy of <https://example.org/chat#topic_field> labelled \"Mood\"",
        "with <https://example.org/chat#topic_2>, a copy of <https://example.org/chat#topic>",
        "+chat:topic_2 a ui:Attribute ;",
        "effects: ",
        "app.py",
    ] {
        assert!(proposal.contains(part), "{part}\n{proposal}");
    }
    browser.screenshot(&screenshot("viewer-block-proposal"));
    assert_eq!(
        std::fs::read_to_string(p.path().join("model.ttl")).unwrap(),
        model_before,
        "a proposal writes nothing"
    );

    // Applied with its effects: the model and the outputs in one run; the
    // page is the edit, and nothing is left to write back.
    browser.click(&browser.find("#accept-effects"));
    browser.click(&browser.find("#apply button"));
    let notice = browser.text(&browser.find("#notice"));
    assert!(notice.contains("wrote model.ttl"), "{notice}");
    assert!(
        browser.try_find("#write-back-file").is_none(),
        "still edited"
    );
    assert_eq!(std::fs::read_to_string(&page).unwrap(), edited);
    let model = std::fs::read_to_string(p.path().join("model.ttl")).unwrap();
    assert!(model.contains("    ui:name \"mood\" ;"), "{model}");
    let app = std::fs::read_to_string(p.path().join("out/app.py")).unwrap();
    assert!(app.contains("mood: str"), "the API takes the new field");
    assert_eq!(seams_in(p.path(), &["check"]).code, 0);
    browser.screenshot(&screenshot("viewer-block-applied"));
}

#[test]
fn each_generated_app_works_in_chromium_with_nothing_from_the_internet() {
    let browser = chromium();
    for example in seams_tests::EXAMPLES {
        let (dir, pages) = app_dir(example);
        let server = Server::start(dir.path());
        for page in pages.keys() {
            browser.goto(&format!("{}/{page}", server.base));
            // htmx ran (loaded from the app itself) and loaded every list.
            let loaded = browser.wait_for(
                "const lists = document.querySelectorAll('ul[hx-get]').length;
                 const loaded = performance.getEntriesByType('resource')
                   .filter(e => e.name.includes('/api/lists/')).length;
                 return typeof htmx === 'object' && loaded >= lists
                   && !document.querySelector('.htmx-request');",
                Duration::from_secs(20),
            );
            assert!(loaded, "{example}/{page}: htmx did not load the lists");
            let resources = resources(&browser);
            assert!(
                resources.iter().any(|u| u.ends_with("/htmx.min.js")),
                "{example}/{page}: {resources:?}"
            );
            for url in &resources {
                assert!(url.starts_with(&server.base), "{example}/{page}: {url}");
            }
        }
        browser.screenshot(&screenshot(&format!("app-{example}")));
    }

    // A user types into a form and submits it: the list reloads by itself.
    let (dir, _) = app_dir("chat");
    let server = Server::start(dir.path());
    browser.goto(&format!("{}/conversations.html", server.base));
    browser.type_into(
        &browser.find("#new_conversation_form-topic"),
        "Typed in Chromium",
    );
    browser.click(&browser.find("#new_conversation_form button"));
    assert!(
        browser.wait_for(
            "return document.querySelector('#conversation_list ul').textContent.includes('Typed in Chromium');",
            Duration::from_secs(20)
        ),
        "the list did not reload"
    );
    let result = browser.text(&browser.find("#new_conversation_form-result"));
    assert!(result.starts_with("Saved"), "{result}");
    browser.screenshot(&screenshot("app-chat-submitted"));
}

/// The click-through that runs in the page (see the file).
const CLICK_THROUGH: &str = include_str!("browser/click_through.js");

/// The integrity hash the pages must pin htmx with: the sha384 of the
/// file the htmx generator writes.
fn htmx_integrity() -> String {
    use base64::Engine as _;
    use sha2::Digest as _;
    let htmx =
        std::fs::read(seams_tests::repo_root().join("generators/htmx/templates/htmx.min.js"))
            .unwrap();
    format!(
        "sha384-{}",
        base64::engine::general_purpose::STANDARD.encode(sha2::Sha384::digest(htmx))
    )
}

#[test]
fn each_generated_app_can_be_clicked_through_in_chromium_on_postgresql() {
    let browser = chromium();
    let integrity = htmx_integrity();
    // The records go to a real PostgreSQL, as under compose.
    let postgres = Postgres::start();
    for example in seams_tests::EXAMPLES {
        let (dir, pages) = app_dir(example);
        let server = Server::start_on(dir.path(), Some(&postgres.database(example)));
        // The pages in navigation order: records made on one page are
        // chosen on the next.
        let first = pages.values().next().unwrap();
        let nav = &first[first.find("<nav>").unwrap()..first.find("</nav>").unwrap()];
        let order: Vec<String> = attribute_values(nav, "href");
        assert_eq!(order.len(), pages.len(), "{example}: {order:?}");
        let visit = |page: &str| {
            browser.goto(&format!("{}/{page}", server.base));
            let report = browser.run_async(CLICK_THROUGH, json!([integrity]));
            assert!(report.get("error").is_none(), "{example}/{page}: {report}");
            report
        };
        let mut reports: Vec<serde_json::Value> = order.iter().map(|p| visit(p)).collect();
        // Then each page's first item link, as a user picking a record would.
        let links: Vec<String> = reports
            .iter()
            .filter_map(|r| {
                r["item_links"]
                    .as_array()?
                    .first()?
                    .as_str()
                    .map(str::to_owned)
            })
            .collect();
        for link in links {
            let mut report = visit(&link);
            report["followed"] = true.into();
            reports.push(report);
        }
        let reports = serde_json::Value::from(reports);
        for page in reports.as_array().unwrap() {
            let name = page["page"].as_str().unwrap();
            let at = format!("{example}/{name}");
            assert_eq!(page["integrity_ok"], true, "{at}: htmx integrity hash");
            assert_eq!(page["errors"], serde_json::json!([]), "{at}");
            for list in page["lists_before"].as_array().unwrap() {
                assert!(
                    !list.as_str().unwrap().is_empty(),
                    "{at}: a list did not load"
                );
            }
            for form in page["forms"].as_array().unwrap() {
                let id = form["id"].as_str().unwrap();
                let result = form["result"].as_str().unwrap();
                assert!(result.starts_with("Saved "), "{at}#{id}: {result:?}");
                assert_eq!(form["reset"], true, "{at}#{id}: not emptied after saving");
                for select in form["selects"].as_array().unwrap() {
                    assert!(
                        select["options"].as_u64().unwrap() > 0,
                        "{at}#{id}: {select}"
                    );
                }
                if let Some(last) = form.get("last_option") {
                    // Every example's status flow refuses a draft's move to
                    // the last state; the page shows why.
                    let result = last["result"].as_str().unwrap();
                    assert!(result.contains("cannot move from"), "{at}#{id}: {result:?}");
                }
            }
            for list in page["lists_after"].as_array().unwrap() {
                let list = list.as_str().unwrap();
                assert!(
                    list.contains("Typed "),
                    "{at}: the list did not reload: {list:?}"
                );
            }
        }
        // Every page, then a page opened from a list item with it selected:
        // its selects of that entity choose it.
        let reports = reports.as_array().unwrap();
        let followed: Vec<&serde_json::Value> =
            reports.iter().filter(|r| r["followed"] == true).collect();
        assert_eq!(reports.len(), pages.len() + followed.len());
        assert!(
            !followed.is_empty(),
            "{example}: no list item links to a page"
        );
        for page in followed {
            let link = page["page"].as_str().unwrap();
            let (_, query) = link.split_once('?').expect("an item link selects its item");
            let (entity, key) = query.split_once('=').unwrap();
            let selects: Vec<&serde_json::Value> = page["forms"]
                .as_array()
                .unwrap()
                .iter()
                .flat_map(|f| f["selects"].as_array().unwrap())
                .filter(|s| s["entity"] == entity)
                .collect();
            assert!(
                !selects.is_empty(),
                "{example}: {link} has no select of {entity}"
            );
            for select in selects {
                assert_eq!(select["value"], key, "{example}: {link}: {select}");
            }
        }
        drop(server);
    }
}

/// What a server on another loopback port received: every request's head.
struct Neighbour {
    base: String,
    heads: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

impl Drop for Neighbour {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::SeqCst);
        // Wake the accept loop so that it sees the flag.
        let _ = std::net::TcpStream::connect(self.base.trim_start_matches("http://"));
    }
}

/// Another program's web server on 127.0.0.1 (another user's, or the
/// generated app run from `out/`): it serves `page` and keeps the head of
/// every request it gets, cookies and referrer included.
fn neighbour(page: String) -> Neighbour {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let heads = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let (kept, stopped) = (heads.clone(), stop.clone());
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            if stopped.load(std::sync::atomic::Ordering::SeqCst) {
                break;
            }
            let Ok(mut stream) = stream else { continue };
            let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
            let mut head = Vec::new();
            let mut byte = [0u8; 1];
            while !head.ends_with(b"\r\n\r\n") && head.len() < 65536 {
                match stream.read(&mut byte) {
                    Ok(1) => head.push(byte[0]),
                    _ => break,
                }
            }
            kept.lock()
                .unwrap()
                .push(String::from_utf8_lossy(&head).into_owned());
            let answer = format!(
                "HTTP/1.1 200 OK\r\ncontent-type: text/html\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{page}",
                page.len()
            );
            let _ = stream.write_all(answer.as_bytes());
        }
    });
    Neighbour { base, heads, stop }
}

/// The viewer's token is in no cookie: a page the user opens from another
/// server on 127.0.0.1 gets nothing of it (cookies are scoped by host, not
/// port, and SameSite counts every port of a host as one site), and what
/// that page makes the browser send to the viewer reads and writes
/// nothing.
#[test]
fn a_page_on_another_loopback_port_gets_no_viewer_token_and_writes_nothing() {
    let p = generated_chat();
    let model_before = std::fs::read(p.path().join("model.ttl")).unwrap();
    let viewer = start_viewer(p.path());
    let browser = chromium();
    browser.goto(&viewer.url);
    assert!(
        browser
            .text(&browser.find("#outputs"))
            .contains("conversations.html")
    );
    browser.click(&browser.find("#outputs a[href^='/output?path=conversations.html&token=']"));
    assert!(browser.url().contains(&viewer.token));

    // The attacker's page: it asks its own server (which would get every
    // cookie of 127.0.0.1), reads the viewer as the browser, and posts a
    // write-back to it from a form.
    let page = format!(
        r#"<!DOCTYPE html><html><body><p id="ready">attacker</p>
<img src="/pixel">
<iframe name="sink"></iframe>
<form id="f" method="post" action="{base}/write-back" target="sink">
<input name="output" value="conversations.html"><input name="line" value="22">
<input name="text" value="      <a href=&quot;thread.html&quot;>Pwned</a>">
<input name="apply" value="1"><input name="accept_effects" value="1">
<input name="token" value="guess">
</form>
<script>
fetch('/own', {{credentials: 'include'}}).catch(() => {{}});
fetch('{base}/', {{credentials: 'include', mode: 'no-cors'}}).catch(() => {{}});
document.getElementById('f').submit();
</script></body></html>"#,
        base = viewer.base()
    );
    let other = neighbour(page);
    browser.goto(&format!("{}/", other.base));
    assert!(
        browser.wait_for(
            "return document.getElementById('ready') !== null;",
            Duration::from_secs(10)
        ),
        "the attacker's page did not load"
    );
    // Its own requests (the page, the image, the fetch) have arrived.
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while other.heads.lock().unwrap().len() < 3 && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(500));
    let heads = other.heads.lock().unwrap().clone();
    assert!(heads.len() >= 3, "{heads:?}");
    for head in &heads {
        assert!(
            !head.contains(&viewer.token),
            "the other port got the viewer's token: {head}"
        );
        assert!(!head.to_ascii_lowercase().contains("cookie:"), "{head}");
    }
    assert_eq!(
        std::fs::read(p.path().join("model.ttl")).unwrap(),
        model_before,
        "the attacker's form wrote back"
    );
}
