//! A W3C WebDriver session in headless Chromium, through Debian's
//! `chromedriver`: the few commands the browser tests use (navigate, find,
//! click, type, keys, run a script, screenshot), as blocking JSON calls.
//! Written here rather than taken from a crate: the async WebDriver
//! clients bring a second HTTP stack and runtime into the tests for eight
//! endpoints of a documented JSON protocol.

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// The key of an element reference in WebDriver's JSON.
const ELEMENT: &str = "element-6066-11e4-a52e-4f735466cecf";

/// A browser session; ended when dropped.
pub struct Browser {
    agent: ureq::Agent,
    session: String,
}

/// An element of the current page.
#[derive(Debug, Clone)]
pub struct Element(String);

impl Browser {
    /// Starts headless Chromium through the chromedriver at `driver`
    /// (`http://127.0.0.1:PORT`), with its profile in `profile`. Every
    /// host name but `localhost` (and `127.0.0.1`) fails to resolve, so the pages can reach
    /// nothing but the loopback address.
    pub fn start(driver: &str, profile: &Path) -> Browser {
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(Duration::from_secs(60)))
            .build()
            .into();
        let capabilities = json!({"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": {
                "binary": "/usr/bin/chromium",
                "args": [
                    "--headless=new",
                    // Root in a container has no user namespaces to sandbox with.
                    "--no-sandbox",
                    "--disable-gpu",
                    "--disable-dev-shm-usage",
                    "--no-first-run",
                    "--window-size=1280,900",
                    format!("--user-data-dir={}", profile.display()),
                    "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE localhost , EXCLUDE 127.0.0.1",
                ],
            },
        }}});
        let answer = call(
            &agent,
            "POST",
            &format!("{driver}/session"),
            Some(capabilities),
        );
        let session = answer["sessionId"]
            .as_str()
            .unwrap_or_else(|| panic!("chromedriver started no session: {answer}"))
            .to_owned();
        Browser {
            agent,
            session: format!("{driver}/session/{session}"),
        }
    }

    fn cmd(&self, method: &str, path: &str, body: Option<Value>) -> Value {
        call(
            &self.agent,
            method,
            &format!("{}{path}", self.session),
            body,
        )
    }

    /// Opens `url` and waits for the page to load.
    pub fn goto(&self, url: &str) {
        self.cmd("POST", "/url", Some(json!({ "url": url })));
    }

    /// The current URL.
    pub fn url(&self) -> String {
        self.cmd("GET", "/url", None).as_str().unwrap().to_owned()
    }

    /// The element `css` selects, waiting up to ten seconds for it.
    pub fn find(&self, css: &str) -> Element {
        let started = Instant::now();
        loop {
            let found = self.try_find(css);
            if let Some(element) = found {
                return element;
            }
            assert!(
                started.elapsed() < Duration::from_secs(10),
                "no element {css:?} on {}, which shows:\n{}",
                self.url(),
                self.run(
                    "return document.body ? document.body.innerText : '';",
                    json!([])
                )
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// The element `css` selects, if there is one now.
    pub fn try_find(&self, css: &str) -> Option<Element> {
        let answer = call_status(
            &self.agent,
            "POST",
            &format!("{}/element", self.session),
            Some(json!({"using": "css selector", "value": css})),
        );
        answer
            .ok()
            .and_then(|v| v[ELEMENT].as_str().map(|id| Element(id.to_owned())))
    }

    /// Clicks `element`.
    pub fn click(&self, element: &Element) {
        self.cmd(
            "POST",
            &format!("/element/{}/click", element.0),
            Some(json!({})),
        );
    }

    /// Empties the field `element`, then types `text` into it.
    pub fn type_into(&self, element: &Element, text: &str) {
        self.cmd(
            "POST",
            &format!("/element/{}/clear", element.0),
            Some(json!({})),
        );
        self.cmd(
            "POST",
            &format!("/element/{}/value", element.0),
            Some(json!({ "text": text })),
        );
    }

    /// The rendered text of `element`.
    pub fn text(&self, element: &Element) -> String {
        self.cmd("GET", &format!("/element/{}/text", element.0), None)
            .as_str()
            .unwrap_or_default()
            .to_owned()
    }

    /// Presses and releases `key` on whatever has the focus.
    pub fn press(&self, key: &str) {
        self.cmd(
            "POST",
            "/actions",
            Some(
                json!({"actions": [{"type": "key", "id": "keyboard", "actions": [
                    {"type": "keyDown", "value": key},
                    {"type": "keyUp", "value": key},
                ]}]}),
            ),
        );
    }

    /// Runs `script` (a function body; `arguments` holds `args`) in the
    /// page and returns its value.
    pub fn run(&self, script: &str, args: Value) -> Value {
        self.cmd(
            "POST",
            "/execute/sync",
            Some(json!({ "script": script, "args": args })),
        )
    }

    /// Runs `script` (a function body; `arguments` holds `args`, then the
    /// callback it calls with its value) in the page, waiting up to two
    /// minutes for it.
    pub fn run_async(&self, script: &str, args: Value) -> Value {
        self.cmd("POST", "/timeouts", Some(json!({ "script": 120_000 })));
        self.cmd(
            "POST",
            "/execute/async",
            Some(json!({ "script": script, "args": args })),
        )
    }

    /// Waits up to `limit` for `script` to return `true`.
    pub fn wait_for(&self, script: &str, limit: Duration) -> bool {
        let started = Instant::now();
        while started.elapsed() < limit {
            if self.run(script, json!([])) == json!(true) {
                return true;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        false
    }

    /// Saves a PNG screenshot of the window to `path`.
    pub fn screenshot(&self, path: &Path) {
        use base64::Engine as _;
        let png = self.cmd("GET", "/screenshot", None);
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(png.as_str().unwrap())
            .unwrap();
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).unwrap();
        }
        std::fs::write(path, bytes).unwrap();
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = call_status(&self.agent, "DELETE", &self.session, None);
    }
}

/// A WebDriver call; panics with the driver's message on an error.
fn call(agent: &ureq::Agent, method: &str, url: &str, body: Option<Value>) -> Value {
    call_status(agent, method, url, body)
        .unwrap_or_else(|error| panic!("WebDriver {method} {url}: {error}"))
}

/// A WebDriver call: its `value`, or the error it reported.
fn call_status(
    agent: &ureq::Agent,
    method: &str,
    url: &str,
    body: Option<Value>,
) -> Result<Value, Value> {
    let response = match (method, body) {
        ("GET", _) => agent.get(url).call(),
        ("DELETE", _) => agent.delete(url).call(),
        (_, body) => agent.post(url).send_json(body.unwrap_or_else(|| json!({}))),
    };
    let mut response = response.unwrap_or_else(|e| panic!("WebDriver {method} {url}: {e}"));
    let ok = response.status().is_success();
    let value: Value = response
        .body_mut()
        .with_config()
        .limit(64 * 1024 * 1024)
        .read_json()
        .unwrap_or(Value::Null);
    let value = value.get("value").cloned().unwrap_or(Value::Null);
    if ok { Ok(value) } else { Err(value) }
}
