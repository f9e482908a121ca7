//! Real-browser tests: headless Chromium driven through Debian's
//! `chromedriver` (both installed by `tests/run`), with every host name
//! but `localhost` failing to resolve, so that a page that needs the
//! internet shows it. Screenshots of the main views go to
//! `<target>/screenshots/`.

use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use serde_json::json;

use seams_tests::target_dir;
use seams_tests::webdriver::Browser;

use crate::app::{Server, app_dir};
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

    // The printed URL: its token becomes a cookie, and the address bar
    // drops it.
    browser.goto(&viewer.url);
    assert_eq!(browser.url(), format!("{}/", viewer.base()));
    let outputs = browser.text(&browser.find("#outputs"));
    assert!(outputs.contains("conversations.html"), "{outputs}");
    browser.screenshot(&screenshot("viewer-project"));

    // Click an output, then one of its lines.
    browser.click(&browser.find("#outputs a[href='/output?path=conversations.html']"));
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
