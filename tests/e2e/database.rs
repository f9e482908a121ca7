//! The generated app keeps its records in a database: a real PostgreSQL
//! (Debian's `postgresql`, installed by `tests/run`; a cluster this test
//! makes in a temporary directory, on a loopback port, run as the
//! `postgres` user when the tests run as root, and stopped when dropped),
//! and SQLite. Records survive a restart, a status change raced by two
//! requests has one winner, a model change that adds migrates a database
//! that holds records, and one that would lose records is refused at
//! start with nothing lost.

use std::collections::BTreeMap;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use seams_tests::html::attribute_values;
use seams_tests::{EXAMPLES, TempProject, repo_root, seams_in};

use crate::app::{Client, Server, app_command, app_dir, form, post_every_form, python};

/// A PostgreSQL cluster of this test's own, stopped when dropped.
pub(crate) struct Postgres {
    // Dropped first: the server stops before its directory goes.
    server: Server,
    bin: PathBuf,
    _dir: tempfile::TempDir,
}

/// The newest PostgreSQL Debian installed.
fn postgres_bin() -> PathBuf {
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| Some((e.file_name().to_str()?.parse().ok()?, e.path().join("bin"))))
        .filter(|(_, bin): &(u32, PathBuf)| bin.join("postgres").exists())
        .collect();
    versions.sort();
    versions
        .pop()
        .map(|(_, bin)| bin)
        .expect("these tests need PostgreSQL: `apt-get install postgresql` (tests/run does)")
}

/// The `postgres` account's uid and gid, to run the server as when the
/// tests run as root (PostgreSQL refuses to run as root).
fn postgres_account() -> Option<(u32, u32)> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return None;
    }
    let passwd = std::fs::read_to_string("/etc/passwd").unwrap();
    let line = passwd
        .lines()
        .find(|l| l.starts_with("postgres:"))
        .expect("Debian's postgresql package makes the postgres account");
    let fields: Vec<&str> = line.split(':').collect();
    Some((fields[2].parse().unwrap(), fields[3].parse().unwrap()))
}

impl Postgres {
    /// Makes a cluster in a temporary directory and starts it on a free
    /// loopback port, with a superuser `seams` that needs no password.
    pub(crate) fn start() -> Postgres {
        let bin = postgres_bin();
        let account = postgres_account();
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("data");
        let run = dir.path().join("run");
        for d in [&data, &run] {
            std::fs::create_dir(d).unwrap();
        }
        if let Some((uid, gid)) = account {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
            for d in [&data, &run] {
                std::os::unix::fs::chown(d, Some(uid), Some(gid)).unwrap();
            }
        }
        let as_postgres = |program: &str| {
            let mut command = Command::new(bin.join(program));
            if let Some((uid, gid)) = account {
                command.uid(uid).gid(gid);
            }
            command
        };
        let init = as_postgres("initdb")
            .arg("-D")
            .arg(&data)
            .args(["-U", "seams", "--auth=trust", "--no-sync", "-E", "UTF8"])
            .args(["--locale=C.UTF-8"])
            .output()
            .unwrap();
        assert!(
            init.status.success(),
            "initdb: {}",
            String::from_utf8_lossy(&init.stderr)
        );
        let server = Server::listen(dir.path(), "postgres", |port| {
            let mut command = as_postgres("postgres");
            command
                .arg("-D")
                .arg(&data)
                .args(["-p", &port.to_string(), "-c", "listen_addresses=127.0.0.1"])
                .arg("-k")
                .arg(&run)
                // A test cluster: durability is not what is tested here.
                .args(["-c", "fsync=off", "-c", "full_page_writes=off"]);
            command
        });
        Postgres {
            server,
            bin,
            _dir: dir,
        }
    }

    fn port(&self) -> &str {
        self.server.base.rsplit(':').next().unwrap()
    }

    /// Makes database `name` and returns its URL.
    pub(crate) fn database(&self, name: &str) -> String {
        self.psql("postgres", &format!("CREATE DATABASE {name}"));
        format!("postgresql://seams@127.0.0.1:{}/{name}", self.port())
    }

    /// Runs `sql` in database `name`; returns what it prints, unaligned.
    pub(crate) fn psql(&self, name: &str, sql: &str) -> String {
        let output = Command::new(self.bin.join("psql"))
            .args([
                "-h",
                "127.0.0.1",
                "-p",
                self.port(),
                "-U",
                "seams",
                "-d",
                name,
            ])
            .args(["-v", "ON_ERROR_STOP=1", "-X", "-q", "-A", "-t", "-c", sql])
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "psql {sql}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8(output.stdout).unwrap()
    }
}

/// Where a test keeps the app's records.
#[derive(Clone, Copy, Debug)]
enum Engine {
    Sqlite,
    Postgres,
}

const ENGINES: [Engine; 2] = [Engine::Sqlite, Engine::Postgres];

/// A database for `name` on `engine`: SQLite in a file of `dir`'s,
/// PostgreSQL in `postgres`.
fn database_url(engine: Engine, postgres: &Postgres, dir: &Path, name: &str) -> String {
    match engine {
        Engine::Sqlite => format!("sqlite:///{}", dir.join(format!("{name}.db")).display()),
        Engine::Postgres => postgres.database(name),
    }
}

/// Every list the pages load, and what it shows.
fn lists(client: &Client, pages: &BTreeMap<String, String>) -> BTreeMap<String, String> {
    pages
        .values()
        .flat_map(|p| attribute_values(p, "hx-get"))
        .filter(|r| r.starts_with("/api/lists/"))
        .map(|route| {
            let answer = client.get(&route);
            assert_eq!(answer.status, 200, "{route}: {answer:?}");
            (route, answer.body)
        })
        .collect()
}

#[test]
fn records_survive_a_restart_of_the_app_on_sqlite_and_postgresql() {
    let postgres = Postgres::start();
    for engine in ENGINES {
        for example in EXAMPLES {
            let (dir, pages) = app_dir(example);
            let url = database_url(engine, &postgres, dir.path(), example);
            let server = Server::start_on(dir.path(), Some(&url));
            let client = Client::new(&server);
            let empty = lists(&client, &pages);
            post_every_form(&client, example, &pages);
            let full = lists(&client, &pages);
            assert_ne!(empty, full, "{engine:?} {example}");
            drop(server);

            let server = Server::start_on(dir.path(), Some(&url));
            let again = lists(&Client::new(&server), &pages);
            assert_eq!(
                again, full,
                "{engine:?} {example}: the records did not survive a restart"
            );
        }
    }
    // With no DATABASE_URL the records are in app.db beside the app.
    let (dir, pages) = app_dir("chat");
    let server = Server::start(dir.path());
    post_every_form(&Client::new(&server), "chat", &pages);
    drop(server);
    assert!(dir.path().join("app.db").is_file());
    let server = Server::start(dir.path());
    let list = lists(&Client::new(&server), &pages);
    assert!(list.values().any(|l| l.contains("Sample ")), "{list:?}");
}

#[test]
fn two_requests_racing_a_status_change_have_one_winner_and_one_409() {
    let postgres = Postgres::start();
    for engine in ENGINES {
        let (dir, _) = app_dir("expense");
        let url = database_url(engine, &postgres, dir.path(), "race");
        let server = Server::start_on(dir.path(), Some(&url));
        let client = Client::new(&server);
        let reports = 12;
        for i in 1..=reports {
            let title = format!("Trip {i}");
            let made = client.post(
                "/api/forms/new_report_form",
                &form(&[("title", &title), ("submitter", "a@example.org")]),
            );
            assert_eq!(made.status, 200, "{made:?}");
            let moved = client.post(
                "/api/forms/approval_form",
                &form(&[("id", &i.to_string()), ("decision", "submitted")]),
            );
            assert_eq!(moved.status, 200, "{moved:?}");
        }
        // Two reviewers decide each report at once, one approving and one
        // rejecting: whichever comes second finds the report decided.
        let base = server.base.clone();
        for i in 1..=reports {
            let barrier = Arc::new(Barrier::new(2));
            let racers: Vec<_> = ["approved", "rejected"]
                .into_iter()
                .map(|decision| {
                    let barrier = barrier.clone();
                    let base = base.clone();
                    std::thread::spawn(move || {
                        let client = Client::at(&base);
                        let values = form(&[("id", &i.to_string()), ("decision", decision)]);
                        barrier.wait();
                        (decision, client.post("/api/forms/approval_form", &values))
                    })
                })
                .collect();
            let answers: Vec<_> = racers.into_iter().map(|r| r.join().unwrap()).collect();
            let won: Vec<_> = answers.iter().filter(|(_, a)| a.status == 200).collect();
            let lost: Vec<_> = answers.iter().filter(|(_, a)| a.status == 409).collect();
            assert_eq!(
                (won.len(), lost.len()),
                (1, 1),
                "{engine:?} report {i}: {answers:?}"
            );
            // The report is in the winner's state.
            let list = client.get("/api/lists/report_list").body;
            let item = list
                .lines()
                .find(|l| l.contains(&format!("#{i} Trip {i} ")))
                .unwrap_or_else(|| panic!("report {i} in {list}"));
            let winner = if won[0].0 == "approved" {
                "Approved"
            } else {
                "Rejected"
            };
            assert!(item.contains(winner), "{engine:?} {item}");
        }
    }
}

/// The expense example's model with `edit` applied (`from` → `to`).
fn expense_model(edits: &[(&str, &str)]) -> String {
    let mut model =
        std::fs::read_to_string(repo_root().join("examples/expense/model.ttl")).unwrap();
    for (from, to) in edits {
        assert!(model.contains(from), "the expense model lacks {from:?}");
        model = model.replacen(from, to, 1);
    }
    model
}

/// The outputs seams generates for `model` (with the expense example's
/// seams.toml), copied over the app in `dir`.
fn generate_into(dir: &Path, model: &str) {
    let manifest =
        std::fs::read_to_string(repo_root().join("examples/expense/seams.toml")).unwrap();
    let rest = &manifest[manifest.find("[output]").unwrap()..];
    let project = TempProject::new(model, rest);
    let outcome = seams_in(project.path(), &["generate"]);
    assert_eq!(outcome.code, 0, "{}", outcome.stderr);
    for entry in std::fs::read_dir(project.path().join("out")).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name().into_string().unwrap();
        if !name.ends_with(".trace.json") {
            std::fs::copy(entry.path(), dir.join(&name)).unwrap();
        }
    }
}

/// Starts the app in `dir` and waits for it to exit: its status and log.
fn refused_start(dir: &Path, url: &str) -> (std::process::ExitStatus, String) {
    let log = dir.join("refused.log");
    let mut child = app_command(
        &python(),
        dir,
        Some(url),
        seams_tests::listener::free_port(),
    )
    .stdin(Stdio::null())
    .stdout(std::fs::File::create(&log).unwrap())
    .stderr(std::fs::File::options().append(true).open(&log).unwrap())
    .spawn()
    .unwrap();
    let started = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return (status, std::fs::read_to_string(&log).unwrap());
        }
        if started.elapsed() > Duration::from_secs(30) {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "the app started though the change loses records:\n{}",
                std::fs::read_to_string(&log).unwrap()
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The additions: an attribute (with a field to set it), a state
/// reachable from `submitted`, an entity, and a relation to it from a
/// table that holds records.
const ADDITIONS: &[(&str, &str)] = &[
    (
        "exp:status, exp:reviewer_note .",
        "exp:status, exp:reviewer_note, exp:cost_centre .",
    ),
    (
        "ui:field exp:title_field, exp:submitter_field .",
        "ui:field exp:title_field, exp:submitter_field, exp:cost_centre_field .",
    ),
    (
        "ui:state exp:draft, exp:submitted, exp:approved, exp:rejected .",
        "ui:state exp:draft, exp:submitted, exp:approved, exp:rejected, exp:on_hold .",
    ),
    (
        "ui:next exp:approved, exp:rejected .",
        "ui:next exp:approved, exp:rejected, exp:on_hold .",
    ),
    (
        "ui:relation exp:item_report .",
        "ui:relation exp:item_report, exp:item_receipt .",
    ),
    (
        "exp:draft a ui:State",
        "exp:cost_centre a ui:Attribute ;\n    rdfs:label \"Cost centre\" ;\n    \
         ui:name \"cost_centre\" ;\n    ui:datatype xsd:string ;\n    ui:order 5 .\n\n\
         exp:cost_centre_field a ui:Field ;\n    rdfs:label \"Cost centre\" ;\n    \
         ui:name \"cost_centre\" ;\n    ui:order 3 ;\n    ui:binds exp:cost_centre .\n\n\
         exp:on_hold a ui:State ;\n    rdfs:label \"On hold\" ;\n    ui:name \"on_hold\" ;\n    \
         ui:order 5 ;\n    ui:next exp:submitted .\n\n\
         exp:Receipt a ui:Entity ;\n    rdfs:label \"Receipt\" ;\n    ui:name \"Receipt\" ;\n    \
         ui:order 3 ;\n    ui:attribute exp:receipt_file .\n\n\
         exp:receipt_file a ui:Attribute ;\n    rdfs:label \"File\" ;\n    ui:name \"file_name\" ;\n    \
         ui:datatype xsd:string ;\n    ui:required true ;\n    ui:order 1 .\n\n\
         exp:item_receipt a ui:Relation ;\n    rdfs:label \"Receipt\" ;\n    ui:name \"receipt\" ;\n    \
         ui:relatedEntity exp:Receipt .\n\n\
         exp:draft a ui:State",
    ),
];

/// The expense app on a database `name` of `engine`'s, with a record made
/// by every form and report #1 moved by `moves` (form, field, value):
/// its directory, pages, database URL and lists, the app stopped.
fn expense_with_records(
    engine: Engine,
    postgres: &Postgres,
    name: &str,
    moves: &[(&str, &str, &str)],
) -> (
    tempfile::TempDir,
    BTreeMap<String, String>,
    String,
    BTreeMap<String, String>,
) {
    let (dir, pages) = app_dir("expense");
    let url = database_url(engine, postgres, dir.path(), name);
    let server = Server::start_on(dir.path(), Some(&url));
    let client = Client::new(&server);
    post_every_form(&client, "expense", &pages);
    for (form_name, field, value) in moves {
        let moved = client.post(
            &format!("/api/forms/{form_name}"),
            &form(&[("id", "1"), (field, value), ("note", "Receipts missing")]),
        );
        assert_eq!(moved.status, 200, "{moved:?}");
    }
    let before = lists(&client, &pages);
    drop(server);
    (dir, pages, url, before)
}

#[test]
fn a_model_change_that_adds_migrates_a_database_that_holds_records() {
    let postgres = Postgres::start();
    for engine in ENGINES {
        let (dir, pages, url, before) = expense_with_records(
            engine,
            &postgres,
            "grows",
            &[("submit_form", "status", "submitted")],
        );

        generate_into(dir.path(), &expense_model(ADDITIONS));
        let server = Server::start_on(dir.path(), Some(&url));
        let log = std::fs::read_to_string(&server.log).unwrap();
        assert!(log.contains("brought the database to the model"), "{log}");
        let client = Client::new(&server);
        // Every record is still there, as it was.
        assert_eq!(lists(&client, &pages), before, "{engine:?}");
        // The new column takes values, and the new state is reachable
        // from a record made before it existed.
        let made = client.post(
            "/api/forms/new_report_form",
            &form(&[
                ("title", "After"),
                ("submitter", "b@example.org"),
                ("cost_centre", "CC-42"),
            ]),
        );
        assert_eq!(made.status, 200, "{engine:?} {made:?}");
        let held = client.post(
            "/api/forms/approval_form",
            &form(&[("id", "1"), ("decision", "on_hold")]),
        );
        assert_eq!(held.status, 200, "{engine:?} {held:?}");
        let list = client.get("/api/lists/report_list").body;
        assert!(list.contains("CC-42"), "{engine:?} {list}");
        assert!(list.contains("On hold"), "{engine:?} {list}");
        drop(server);

        // Started again on the migrated database, it has nothing to change.
        let server = Server::start_on(dir.path(), Some(&url));
        let log = std::fs::read_to_string(&server.log).unwrap();
        assert!(!log.contains("brought the database"), "{log}");
    }
}

#[test]
fn a_model_change_that_would_lose_records_is_refused_at_start_and_nothing_is_lost() {
    let postgres = Postgres::start();
    for engine in ENGINES {
        let (dir, pages, url, before) = expense_with_records(
            engine,
            &postgres,
            "shrinks",
            &[
                ("submit_form", "status", "submitted"),
                ("approval_form", "decision", "rejected"),
            ],
        );

        for (edits, named) in [
            // A removed attribute: its column holds the reviewer's note.
            (
                &[
                    ("exp:status, exp:reviewer_note .", "exp:status ."),
                    (
                        "ui:field exp:decision_field, exp:note_field .",
                        "ui:field exp:decision_field .",
                    ),
                ][..],
                "column expense_report.reviewer_note is in the database, but not in the model",
            ),
            // A retyped attribute: amounts become whole numbers.
            (
                &[("ui:datatype xsd:decimal ;", "ui:datatype xsd:integer ;")][..],
                "column line_item.amount holds",
            ),
            // A removed state that a report is in.
            (
                &[
                    (
                        "ui:state exp:draft, exp:submitted, exp:approved, exp:rejected .",
                        "ui:state exp:draft, exp:submitted, exp:approved .",
                    ),
                    (
                        "ui:next exp:approved, exp:rejected .",
                        "ui:next exp:approved .",
                    ),
                ][..],
                "state 'rejected' of expense_report.status is no longer in the model, but 1 of its records are in it",
            ),
        ] {
            generate_into(dir.path(), &expense_model(edits));
            let (status, log) = refused_start(dir.path(), &url);
            assert!(!status.success(), "{log}");
            assert!(log.contains(named), "{engine:?}: {log}");
            assert!(log.contains("Put these back in the model"), "{log}");
        }

        // The original app starts on the same database with every record.
        generate_into(dir.path(), &expense_model(&[]));
        let server = Server::start_on(dir.path(), Some(&url));
        assert_eq!(lists(&Client::new(&server), &pages), before, "{engine:?}");
    }
}

#[test]
fn schema_sql_makes_the_tables_the_app_makes() {
    let postgres = Postgres::start();
    for example in EXAMPLES {
        let (dir, pages) = app_dir(example);
        let schema = std::fs::read_to_string(dir.path().join("schema.sql")).unwrap();
        let by_hand = postgres.database(&format!("{example}_by_hand"));
        postgres.psql(&format!("{example}_by_hand"), &schema);
        // The app finds nothing to change in tables schema.sql made, and
        // works on them.
        let server = Server::start_on(dir.path(), Some(&by_hand));
        let log = std::fs::read_to_string(&server.log).unwrap();
        assert!(!log.contains("brought the database"), "{example}: {log}");
        post_every_form(&Client::new(&server), example, &pages);
        drop(server);
        // And the columns are those the app makes itself.
        let by_app = postgres.database(&format!("{example}_by_app"));
        drop(Server::start_on(dir.path(), Some(&by_app)));
        let columns = "SELECT table_name, column_name, data_type, is_nullable, column_default \
                       FROM information_schema.columns WHERE table_schema = 'public' \
                       ORDER BY 1, 2";
        let keys = "SELECT tc.table_name, kcu.column_name, ccu.table_name, ccu.column_name \
                    FROM information_schema.table_constraints tc \
                    JOIN information_schema.key_column_usage kcu USING (constraint_name) \
                    JOIN information_schema.constraint_column_usage ccu USING (constraint_name) \
                    WHERE tc.constraint_type = 'FOREIGN KEY' ORDER BY 1, 2";
        for query in [columns, keys] {
            assert_eq!(
                postgres.psql(&format!("{example}_by_hand"), query),
                postgres.psql(&format!("{example}_by_app"), query),
                "{example}: {query}"
            );
        }
    }
}

#[test]
fn a_label_with_a_line_break_adds_no_statement_to_schema_sql_or_markdown_to_the_readme() {
    // A cloned model's labels are text an attacker chose; schema.sql is
    // meant for `psql -f`, so none of it may reach a line of its own.
    let dir = tempfile::tempdir().unwrap();
    let hostile = "\\nDROP TABLE line_item; --\\n# Injected";
    generate_into(
        dir.path(),
        &expense_model(&[
            (
                "rdfs:label \"Expenses\" ;",
                &format!("rdfs:label \"Expenses{hostile}\" ;"),
            ),
            (
                "rdfs:label \"Line item\" ;",
                &format!("rdfs:label \"Line item{hostile}\" ;"),
            ),
        ]),
    );
    let schema = std::fs::read_to_string(dir.path().join("schema.sql")).unwrap();
    assert!(!schema.contains("DROP"), "{schema}");
    for line in schema.lines() {
        let statement = ["--", "CREATE ", "INSERT ", "ALTER ", "    ", ");"]
            .iter()
            .any(|start| line.starts_with(start));
        assert!(line.is_empty() || statement, "schema.sql: {line:?}");
    }
    let readme = std::fs::read_to_string(dir.path().join("README.md")).unwrap();
    assert!(
        readme.starts_with("# Expenses DROP TABLE line_item; -- # Injected\n"),
        "{readme}"
    );
    assert!(!readme.contains("\n# Injected"), "{readme}");
}
