//! The generated apps really run: each example's committed `app.py` under
//! uvicorn on a loopback port, answering every page and route its pages ask
//! for, taking every form once, refusing bad input, and (for the expense
//! example) keeping to the status flow.
//!
//! Python with FastAPI and uvicorn comes from `SEAMS_PYTHON`, else from
//! `.venv/bin/python` in the repository (see the README; `tests/run` makes
//! it). The same apps clicked through in Chromium are in `browser.rs`.

use std::collections::BTreeMap;
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use seams_tests::html::{attribute, attribute_values, elements};
use seams_tests::listener::{free_port, listens_on};
use seams_tests::{EXAMPLES, repo_root};

/// How long uvicorn may take to start, and a request to answer.
const START_TIMEOUT: Duration = Duration::from_secs(30);
const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);

pub(crate) fn python() -> PathBuf {
    let python = std::env::var_os("SEAMS_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo_root().join(".venv/bin/python"));
    let ok = Command::new(&python)
        .args(["-c", "import fastapi, uvicorn"])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    assert!(
        ok,
        "the generated-app tests need Python with FastAPI and uvicorn at {}; make it with \
         `python3 -m venv .venv && .venv/bin/pip install -r examples/chat/out/requirements.txt`, \
         or set SEAMS_PYTHON to such a python",
        python.display()
    );
    python
}

/// A uvicorn process, killed and reaped when dropped, so no test leaves
/// one behind, failed or not.
pub(crate) struct Server {
    child: Child,
    pub(crate) log: PathBuf,
    pub(crate) base: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Server {
    /// Starts `app.py` in `dir` on a free loopback port, keeping its
    /// records in the SQLite file it makes beside itself.
    pub(crate) fn start(dir: &Path) -> Server {
        Server::start_on(dir, None)
    }

    /// Starts `app.py` in `dir` on a free loopback port, keeping its
    /// records in the database `database` names (`DATABASE_URL`), or in
    /// its own SQLite file.
    pub(crate) fn start_on(dir: &Path, database: Option<&str>) -> Server {
        let python = python();
        Server::listen(dir, "uvicorn", |port| {
            app_command(&python, dir, database, port)
        })
    }

    /// Starts the server `command(port)` runs, on a free loopback port,
    /// logging to a file in `dir`; returns once it accepts connections.
    pub(crate) fn listen(dir: &Path, name: &str, command: impl Fn(u16) -> Command) -> Server {
        for _ in 0..3 {
            // The port is free now; another process may take it before the
            // server binds, in which case it exits and we try again.
            let port = free_port();
            let log = dir.join(format!("{name}-{port}.log"));
            let child = command(port)
                .stdin(Stdio::null())
                .stdout(std::fs::File::create(&log).unwrap())
                .stderr(std::fs::File::options().append(true).open(&log).unwrap())
                .spawn()
                .unwrap_or_else(|e| panic!("cannot start {name}: {e}"));
            let mut server = Server {
                child,
                log,
                base: format!("http://127.0.0.1:{port}"),
            };
            let started = Instant::now();
            while started.elapsed() < START_TIMEOUT {
                if let Some(status) = server.child.try_wait().unwrap() {
                    let log = std::fs::read_to_string(&server.log).unwrap_or_default();
                    assert!(
                        log.to_lowercase().contains("address already in use"),
                        "{name} exited ({status}) in {}:\n{log}",
                        dir.display()
                    );
                    break;
                }
                // A connection alone is not enough: a server another test
                // started on the same port between our probe and this
                // child's bind would answer it, and this test would then
                // talk to the wrong app.
                if TcpStream::connect(("127.0.0.1", port)).is_ok()
                    && listens_on(server.child.id(), port)
                {
                    return server;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            assert!(
                server.child.try_wait().unwrap().is_some(),
                "{name} did not listen within {START_TIMEOUT:?}:\n{}",
                std::fs::read_to_string(&server.log).unwrap_or_default()
            );
        }
        panic!("no free port for {name} after three tries");
    }

    fn port(&self) -> &str {
        self.base.rsplit(':').next().unwrap()
    }
}

/// uvicorn running `app.py` in `dir` on `port`.
pub(crate) fn app_command(python: &Path, dir: &Path, database: Option<&str>, port: u16) -> Command {
    let mut command = Command::new(python);
    command
        .args(["-m", "uvicorn", "app:app", "--host", "127.0.0.1"])
        .args(["--port", &port.to_string()])
        .current_dir(dir)
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .env_remove("DATABASE_URL");
    if let Some(url) = database {
        command.env("DATABASE_URL", url);
    }
    command
}

/// One answer: status, `HX-Trigger` header, content type, body.
#[derive(Debug)]
pub(crate) struct Answer {
    pub(crate) status: u16,
    pub(crate) trigger: Option<String>,
    content_type: String,
    pub(crate) body: String,
}

pub(crate) struct Client {
    agent: ureq::Agent,
    base: String,
}

impl Client {
    pub(crate) fn new(server: &Server) -> Client {
        Client::at(&server.base)
    }

    /// A client of the server at `base` (`http://127.0.0.1:PORT`).
    pub(crate) fn at(base: &str) -> Client {
        let agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(REQUEST_TIMEOUT))
            .build()
            .into();
        Client {
            agent,
            base: base.to_owned(),
        }
    }

    fn answer(mut response: ureq::http::Response<ureq::Body>) -> Answer {
        let header = |name: &str| {
            response
                .headers()
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned)
        };
        let trigger = header("hx-trigger");
        let content_type = header("content-type").unwrap_or_default();
        Answer {
            status: response.status().as_u16(),
            trigger,
            content_type,
            body: response.body_mut().read_to_string().unwrap(),
        }
    }

    pub(crate) fn get(&self, path: &str) -> Answer {
        let url = format!("{}{path}", self.base);
        Client::answer(self.agent.get(&url).call().unwrap())
    }

    pub(crate) fn post(&self, path: &str, form: &[(String, String)]) -> Answer {
        let url = format!("{}{path}", self.base);
        let pairs = form.iter().map(|(k, v)| (k.as_str(), v.as_str()));
        Client::answer(self.agent.post(&url).send_form(pairs).unwrap())
    }
}

/// Form fields as the client sends them.
pub(crate) fn form(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// A copy of an example's outputs (sidecars left out) to run the app in,
/// so nothing is written next to the committed files.
pub(crate) fn app_dir(example: &str) -> (tempfile::TempDir, BTreeMap<String, String>) {
    let out = repo_root().join("examples").join(example).join("out");
    let dir = tempfile::tempdir().unwrap();
    let mut pages = BTreeMap::new();
    for name in seams_tests::locked_outputs(example) {
        let path = out.join(&name);
        if name.ends_with(".trace.json") {
            continue;
        }
        std::fs::copy(&path, dir.path().join(&name)).unwrap();
        if name.ends_with(".html") {
            pages.insert(name, std::fs::read_to_string(&path).unwrap());
        }
    }
    (dir, pages)
}

/// `/` opens the home page; every page is served as written, as HTML.
fn assert_serves_the_pages(client: &Client, example: &str, pages: &BTreeMap<String, String>) {
    let home = client.get("/");
    assert_eq!(home.status, 200, "{example}: / {home:?}");
    assert!(pages.values().any(|p| *p == home.body), "{example}: /");
    for (name, text) in pages {
        let answer = client.get(&format!("/{name}"));
        assert_eq!(answer.status, 200, "{example}: {name}");
        assert!(answer.content_type.starts_with("text/html"), "{answer:?}");
        assert_eq!(&answer.body, text, "{example}: {name}");
    }
}

/// A value a user might type into `input`.
fn sample(name: &str, input_type: &str) -> String {
    match input_type {
        "email" => "someone@example.org".into(),
        "number" => "12.50".into(),
        "date" => "2026-11-29".into(),
        "checkbox" => "true".into(),
        _ => format!("Sample {name}"),
    }
}

/// The values a user would send with `form`, or `None` while a select it
/// needs has nothing to choose from yet.
pub(crate) fn fill(client: &Client, form: &str) -> Option<Vec<(String, String)>> {
    let mut values = Vec::new();
    for input in elements(form, "input") {
        let name = attribute(input, "name").unwrap();
        let input_type = attribute(input, "type").unwrap_or_else(|| "text".into());
        values.push((name.clone(), sample(&name, &input_type)));
    }
    for area in elements(form, "textarea") {
        let name = attribute(area, "name").unwrap();
        values.push((name.clone(), format!("Sample {name} text")));
    }
    for select in elements(form, "select") {
        let name = attribute(select, "name").unwrap();
        let options = match attribute(select, "hx-get") {
            Some(route) => {
                let answer = client.get(&route);
                assert_eq!(answer.status, 200, "{route}: {answer:?}");
                attribute_values(&answer.body, "value")
            }
            None => attribute_values(select, "value"),
        };
        values.push((name, options.into_iter().next()?));
    }
    Some(values)
}

/// Posts every form of the pages once, with values a user might type;
/// a form whose select has no choices yet waits for the forms that make
/// them. Returns the forms.
pub(crate) fn post_every_form<'a>(
    client: &Client,
    example: &str,
    pages: &'a BTreeMap<String, String>,
) -> Vec<&'a str> {
    let forms: Vec<&str> = pages.values().flat_map(|p| elements(p, "form")).collect();
    assert!(!forms.is_empty(), "{example}");
    let mut posted = vec![false; forms.len()];
    for _round in 0..forms.len() {
        for (i, form) in forms.iter().enumerate() {
            if posted[i] {
                continue;
            }
            let Some(values) = fill(client, form) else {
                continue;
            };
            let route = attribute(form, "hx-post").unwrap();
            let answer = client.post(&route, &values);
            assert_eq!(
                answer.status, 200,
                "{example}: {route} {values:?}: {answer:?}"
            );
            assert!(answer.body.starts_with("Saved "), "{answer:?}");
            let trigger = answer.trigger.unwrap_or_default();
            assert!(trigger.ends_with("-changed"), "{route}: {trigger:?}");
            posted[i] = true;
        }
    }
    let unposted: Vec<_> = forms
        .iter()
        .zip(&posted)
        .filter(|(_, p)| !**p)
        .map(|(f, _)| attribute(f, "hx-post").unwrap())
        .collect();
    assert!(unposted.is_empty(), "{example}: never posted {unposted:?}");
    forms
}

#[test]
fn each_generated_app_serves_its_pages_and_routes_and_takes_every_form() {
    for example in EXAMPLES {
        let (dir, pages) = app_dir(example);
        let server = Server::start(dir.path());
        let client = Client::new(&server);

        assert_serves_the_pages(&client, example, &pages);

        // Every list the pages load: the empty text the page shows first.
        let lists: Vec<String> = pages
            .values()
            .flat_map(|p| attribute_values(p, "hx-get"))
            .filter(|r| r.starts_with("/api/lists/"))
            .collect();
        assert!(!lists.is_empty(), "{example}");
        let mut before = BTreeMap::new();
        for list in &lists {
            let answer = client.get(list);
            assert_eq!(answer.status, 200, "{example}: {list} {answer:?}");
            assert!(answer.content_type.starts_with("text/html"), "{answer:?}");
            assert!(answer.body.starts_with("<li>"), "{list}: {}", answer.body);
            before.insert(list.clone(), answer.body);
        }

        let forms = post_every_form(&client, example, &pages);

        // The records show in the lists, which the pages reload on the
        // events the forms trigger.
        for list in &lists {
            let answer = client.get(list);
            assert_eq!(answer.status, 200);
            assert_ne!(
                answer.body, before[list],
                "{example}: {list} did not change"
            );
            assert!(answer.body.contains("Sample "), "{list}: {}", answer.body);
        }

        // Bad input is refused with a message, and stores nothing.
        for form in &forms {
            let route = attribute(form, "hx-post").unwrap();
            let answer = client.post(&route, &[]);
            assert!(
                answer.status == 422 || answer.status == 404,
                "{example}: empty post to {route}: {answer:?}"
            );
            assert!(!answer.body.is_empty(), "{route}");
            assert_eq!(answer.trigger, None, "{route}");
        }
        drop(server);
    }
}

#[test]
fn the_expense_app_keeps_to_the_status_flow() {
    let (dir, _) = app_dir("expense");
    let server = Server::start(dir.path());
    let client = Client::new(&server);
    let made = client.post(
        "/api/forms/new_report_form",
        &form(&[("title", "Trip to Lyon"), ("submitter", "ann@example.org")]),
    );
    assert_eq!(made.status, 200, "{made:?}");
    assert!(
        client
            .get("/api/lists/report_list")
            .body
            .contains("Trip to Lyon · ann@example.org · Draft"),
    );

    // A draft cannot be approved: it must be submitted first.
    let early = client.post(
        "/api/forms/approval_form",
        &form(&[("id", "1"), ("decision", "approved")]),
    );
    assert_eq!(early.status, 409, "{early:?}");
    assert_eq!(early.body, "Status: cannot move from Draft to Approved.");

    let submitted = client.post(
        "/api/forms/submit_form",
        &form(&[("id", "1"), ("status", "submitted")]),
    );
    assert_eq!(submitted.status, 200, "{submitted:?}");
    let approved = client.post(
        "/api/forms/approval_form",
        &form(&[("id", "1"), ("decision", "approved"), ("note", "Fine")]),
    );
    assert_eq!(approved.status, 200, "{approved:?}");
    let queue = client.get("/api/lists/approval_queue").body;
    assert!(queue.contains("Approved · Fine"), "{queue}");

    // Approved is final; a line item must name a report that exists.
    let reopen = client.post(
        "/api/forms/submit_form",
        &form(&[("id", "1"), ("status", "draft")]),
    );
    assert_eq!(reopen.status, 409, "{reopen:?}");
    let orphan = client.post(
        "/api/forms/new_line_item_form",
        &form(&[
            ("report", "7"),
            ("description", "Taxi"),
            ("amount", "12.50"),
            ("spent_on", "2026-11-29"),
        ]),
    );
    assert_eq!(orphan.status, 409, "{orphan:?}");
    assert_eq!(orphan.body, "Report: there is no expense report #7.");
    let bad_amount = client.post(
        "/api/forms/new_line_item_form",
        &form(&[
            ("report", "1"),
            ("description", "Taxi"),
            ("amount", "twelve"),
            ("spent_on", "2026-11-29"),
        ]),
    );
    assert_eq!(bad_amount.status, 422, "{bad_amount:?}");
    assert!(bad_amount.body.starts_with("amount: "), "{bad_amount:?}");
}

#[test]
fn a_selected_record_narrows_the_lists_of_what_refers_to_it() {
    let (dir, _) = app_dir("chat");
    let server = Server::start(dir.path());
    let client = Client::new(&server);
    for topic in ["Lunch", "Holidays"] {
        let made = client.post(
            "/api/forms/new_conversation_form",
            &form(&[("topic", topic)]),
        );
        assert_eq!(made.status, 200, "{made:?}");
    }
    for (conversation, body) in [("1", "Pizza?"), ("2", "Beach!")] {
        let sent = client.post(
            "/api/forms/new_message_form",
            &form(&[
                ("conversation", conversation),
                ("author", "Ann"),
                ("body", body),
            ]),
        );
        assert_eq!(sent.status, 200, "{sent:?}");
    }
    let conversations = client.get("/api/lists/conversation_list").body;
    assert!(
        conversations
            .contains(r#"<a class="flow" href="thread.html?conversation=2">Open the thread</a>"#),
        "{conversations}"
    );
    let all = client.get("/api/lists/message_list").body;
    assert!(all.contains("Pizza?") && all.contains("Beach!"), "{all}");
    let second = client.get("/api/lists/message_list?conversation=2").body;
    assert!(
        second.contains("Beach!") && !second.contains("Pizza?"),
        "{second}"
    );
    let none = client.get("/api/lists/message_list?conversation=3").body;
    assert_eq!(none, "<li>No messages in this thread.</li>");
}

/// The nginx server block of the compose file's `pages` config.
fn pages_server_block(compose: &str) -> String {
    let start = compose
        .find("    content: |\n")
        .expect("the compose file configures the pages service")
        + "    content: |\n".len();
    compose[start..]
        .lines()
        .take_while(|l| l.starts_with("      ") || l.is_empty())
        .map(|l| l.strip_prefix("      ").unwrap_or(l))
        .collect::<Vec<_>>()
        .join("\n")
}

/// `block` with `from` replaced by `to`, which must occur in it.
fn adapt(block: String, from: &str, to: &str) -> String {
    assert!(
        block.contains(from),
        "the server block lacks {from:?}:\n{block}"
    );
    block.replace(from, to)
}

#[test]
fn the_compose_pages_service_serves_the_pages_and_passes_the_api_on() {
    let nginx_ok = Command::new("nginx")
        .arg("-v")
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    assert!(
        nginx_ok,
        "this test runs the compose file's nginx server block and needs nginx (`apt-get install nginx-light`)"
    );
    for example in EXAMPLES {
        let (dir, pages) = app_dir(example);
        let api = Server::start(dir.path());
        let compose = std::fs::read_to_string(dir.path().join("docker-compose.yml")).unwrap();
        // The block as compose runs it, on this machine's paths and ports:
        // the pages where nginx's image has them, the API where uvicorn is.
        let block = pages_server_block(&compose);
        let block = adapt(
            block,
            "root /usr/share/nginx/html;",
            &format!("root {};", dir.path().display()),
        );
        let block = adapt(
            block,
            "proxy_pass http://api:8000;",
            &format!("proxy_pass http://127.0.0.1:{};", api.port()),
        );
        let nginx_dir = tempfile::tempdir().unwrap();
        let prefix = nginx_dir.path().display().to_string();
        let pages_server = Server::listen(nginx_dir.path(), "nginx", |port| {
            let block = block.replace("listen 80;", &format!("listen 127.0.0.1:{port};"));
            let conf = format!(
                "daemon off;\nmaster_process off;\nuser root;\npid {prefix}/nginx.pid;\n\
                 error_log stderr;\nevents {{}}\nhttp {{\n  access_log off;\n  \
                 types {{ text/html html; }}\n  client_body_temp_path {prefix}/body;\n  \
                 proxy_temp_path {prefix}/proxy;\n  fastcgi_temp_path {prefix}/fastcgi;\n  \
                 uwsgi_temp_path {prefix}/uwsgi;\n  scgi_temp_path {prefix}/scgi;\n{block}\n}}\n"
            );
            let path = nginx_dir.path().join(format!("nginx-{port}.conf"));
            std::fs::write(&path, conf).unwrap();
            let mut command = Command::new("nginx");
            command
                .arg("-p")
                .arg(nginx_dir.path())
                .args(["-e", "stderr", "-c"])
                .arg(&path);
            command
        });
        let client = Client::new(&pages_server);

        assert_serves_the_pages(&client, example, &pages);
        // And every script they load.
        let scripts: std::collections::BTreeSet<String> = pages
            .values()
            .flat_map(|p| attribute_values(p, "src"))
            .collect();
        assert!(scripts.contains("htmx.min.js"), "{scripts:?}");
        for script in scripts {
            let answer = client.get(&format!("/{script}"));
            assert_eq!(answer.status, 200, "{example}: {script} {answer:?}");
        }
        // Nothing else in the directory is served.
        for other in [
            "app.py",
            "requirements.txt",
            "docker-compose.yml",
            "schema.sql",
            "README.md",
            "app.py.trace.json",
        ] {
            assert_eq!(
                client.get(&format!("/{other}")).status,
                404,
                "{example}: {other}"
            );
        }
        // The API answers through the pages service.
        let list = pages
            .values()
            .flat_map(|p| attribute_values(p, "hx-get"))
            .find(|r| r.starts_with("/api/lists/"))
            .unwrap();
        let through = client.get(&list);
        assert_eq!(through.status, 200, "{example}: {list} {through:?}");
        assert_eq!(through.body, Client::new(&api).get(&list).body);
        // A form that needs no record chosen yet.
        let (form, values) = pages
            .values()
            .flat_map(|p| elements(p, "form"))
            .find_map(|f| Some((f, fill(&client, f)?)))
            .unwrap();
        let route = attribute(form, "hx-post").unwrap();
        let saved = client.post(&route, &values);
        assert_eq!(saved.status, 200, "{example}: {route} {saved:?}");
        assert!(saved.body.starts_with("Saved "), "{saved:?}");
        drop(pages_server);
        drop(api);
    }
}

#[test]
fn each_compose_file_follows_the_compose_specification() {
    // check-jsonschema (tests/run installs it beside the app's Python)
    // carries the compose specification's schema; Docker, where it is
    // installed, checks the file as it would run it.
    let checker = python().with_file_name("check-jsonschema");
    assert!(
        checker.exists(),
        "this test needs check-jsonschema beside {}; tests/run installs it",
        python().display()
    );
    let docker = Command::new("docker")
        .args(["compose", "version"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    for example in EXAMPLES {
        let (dir, _) = app_dir(example);
        let compose = dir.path().join("docker-compose.yml");
        let checked = check_compose(&checker, &compose);
        assert!(
            checked.status.success(),
            "{example}: {}{}",
            String::from_utf8_lossy(&checked.stdout),
            String::from_utf8_lossy(&checked.stderr)
        );
        if docker {
            let config = Command::new("docker")
                .args(["compose", "-f"])
                .arg(&compose)
                .args(["config", "--quiet"])
                .output()
                .unwrap();
            assert!(
                config.status.success(),
                "{example}: {}",
                String::from_utf8_lossy(&config.stderr)
            );
        }
    }
    // The schema is no formality: a misspelt key fails it.
    let (dir, _) = app_dir("chat");
    let compose = dir.path().join("docker-compose.yml");
    let text = std::fs::read_to_string(&compose).unwrap();
    std::fs::write(&compose, text.replacen("working_dir:", "workdir:", 1)).unwrap();
    let checked = check_compose(&checker, &compose);
    assert!(!checked.status.success(), "a misspelt key passed");
}

/// `compose` checked against the compose specification's schema.
fn check_compose(checker: &Path, compose: &Path) -> std::process::Output {
    Command::new(checker)
        .args(["--builtin-schema", "vendor.compose-spec"])
        .arg(compose)
        .output()
        .unwrap()
}
