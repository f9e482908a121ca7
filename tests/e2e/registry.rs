//! Generators through a real OCI registry (Debian's docker-registry on a
//! loopback port): `seams publish`, `seams add`, `[[generator]] oci`,
//! pinned in the lock, offline from the blob cache, refused when the cache
//! is tampered with, and every failure naming the reference and the reason
//! while the other generators carry on.

use std::path::{Path, PathBuf};
use std::process::Command;

use seams_registry::{Artifact, Reference, Registry, Settings};
use seams_tests::registry::{Answer, FakeRegistry, TestRegistry, cached_blob, digest};
use seams_tests::{OTHER_WORLD_WASM, Outcome, TempProject, chat_project, repo_root};

/// The blob cache and an empty Docker config, private to one test.
struct Env {
    blobs: tempfile::TempDir,
    docker: tempfile::TempDir,
}

impl Env {
    fn new() -> Env {
        Env {
            blobs: tempfile::tempdir().unwrap(),
            docker: tempfile::tempdir().unwrap(),
        }
    }

    /// `seams ARGS` as a process, with this environment and `extra`.
    fn seams(&self, args: &[&str], extra: &[(&str, &str)]) -> Outcome {
        let output = Command::new(env!("CARGO_BIN_EXE_seams"))
            .args(args)
            .env("NO_COLOR", "1")
            .env("SEAMS_BLOB_CACHE_DIR", self.blobs.path())
            .env("DOCKER_CONFIG", self.docker.path())
            .env_remove("SEAMS_REGISTRY_HOST")
            .env_remove("SEAMS_REGISTRY_USERNAME")
            .env_remove("SEAMS_REGISTRY_PASSWORD")
            .envs(extra.iter().copied())
            .output()
            .unwrap();
        Outcome {
            code: output.status.code().unwrap_or(-1) as u8,
            stdout: String::from_utf8(output.stdout).unwrap(),
            stderr: String::from_utf8(output.stderr).unwrap(),
        }
    }

    fn in_project(&self, p: &Path, args: &[&str]) -> Outcome {
        let mut all = args.to_vec();
        all.extend(["--project", p.to_str().unwrap()]);
        self.seams(&all, &[])
    }

    /// A registry client sharing nothing with seams's cache.
    fn client(&self) -> Registry {
        let mut settings = Settings::new(self.blobs.path().join("tests"));
        settings.docker_config = false;
        Registry::new(settings)
    }
}

/// Pushes `component` under `reference` as seams publish would.
fn push(env: &Env, reference: &str, component: &[u8]) -> String {
    let reference: Reference = reference.parse().unwrap();
    let pin = env
        .client()
        .publish(
            &reference,
            &Artifact {
                component: component.to_vec(),
                imports: Vec::new(),
                exports: Vec::new(),
                annotations: Default::default(),
            },
        )
        .unwrap();
    pin.manifest
}

/// `text` with the registry's port, temporary directories and digests
/// made stable for a snapshot.
fn redact(text: &str, registry: &TestRegistry, env: &Env, project: &Path) -> String {
    let mut text = text
        .replace(&registry.host(), "127.0.0.1:[PORT]")
        .replace(env.blobs.path().to_str().unwrap(), "[BLOBS]")
        .replace(project.to_str().unwrap(), "[PROJECT]");
    // Digests, and hex hashes in cache paths: the built component's bytes
    // depend on the toolchain.
    text = text.replace("sha256:", "");
    let hex = |b: &u8| b.is_ascii_hexdigit() && !b.is_ascii_uppercase();
    let mut at = 0;
    while at + 64 <= text.len() {
        if text.as_bytes()[at..at + 64].iter().all(hex) {
            text.replace_range(at..at + 64, "[DIGEST]");
        }
        at += 1;
    }
    text
}

/// The lock's `oci` pin of the generator whose source is `oci:REF`.
fn pinned(p: &Path, reference: &str) -> serde_json::Value {
    let lock: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(p.join("seams.lock")).unwrap()).unwrap();
    lock["generators"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["source"] == format!("oci:{reference}").as_str())
        .map(|g| g["oci"].clone())
        .unwrap_or_default()
}

fn read(p: &Path, file: &str) -> Option<Vec<u8>> {
    std::fs::read(p.join(file)).ok()
}

/// The example's outputs, as the built-in wrote them.
fn example_output(file: &str) -> Vec<u8> {
    std::fs::read(repo_root().join("examples/chat/out").join(file)).unwrap()
}

#[test]
fn published_generators_are_pinned_work_offline_and_move_only_on_update() {
    let env = Env::new();
    let mut registry = TestRegistry::start();
    let host = registry.host();
    let htmx_ref = format!("{host}/seams/htmx:0.1.0");
    let title_ref = format!("{host}/seams/chat-title:1");

    // Publish the htmx built-in's package, tested on an htmx-only copy of
    // the expense example against its goldens (the chat goldens keep a
    // known tracing gap, see builtins.rs), and a package scaffolded by
    // new-generator.
    let publisher = seams_tests::example_project_with_outputs("expense");
    std::fs::write(
        publisher.path().join("seams.toml"),
        "[model]\nfiles = [\"model.ttl\"]\n\n[[generator]]\nbuiltin = \"htmx\"\n",
    )
    .unwrap();
    let published = env.in_project(
        publisher.path(),
        &[
            "publish",
            repo_root().join("generators/htmx").to_str().unwrap(),
            "--to",
            &htmx_ref,
            "--goldens",
            repo_root()
                .join("generators/htmx/tests/golden/expense")
                .to_str()
                .unwrap(),
        ],
    );
    assert_eq!(published.code, 0, "{published:?}");
    let htmx_digest = published
        .stdout
        .lines()
        .find_map(|l| l.strip_prefix("digest: "))
        .unwrap()
        .to_owned();
    assert!(published.stdout.starts_with("published htmx 0.1.0 ("));
    std::fs::write(publisher.path().join("title.html"), "<h1>Chat</h1>\n").unwrap();
    let package = publisher.path().join("seams-chat-title");
    let scaffolded = env.seams(
        &[
            "new-generator",
            "chat-title",
            "--reference",
            publisher.path().join("title.html").to_str().unwrap(),
            "--out",
            package.to_str().unwrap(),
        ],
        &[],
    );
    assert_eq!(scaffolded.code, 0, "{scaffolded:?}");
    let published = env.in_project(
        publisher.path(),
        &["publish", package.to_str().unwrap(), "--to", &title_ref],
    );
    assert_eq!(published.code, 0, "{published:?}");
    // A Python and a JavaScript package publish the same way, and what is
    // pulled is what was tested.
    for language in ["python", "js"] {
        let package = publisher.path().join(format!("seams-title-{language}"));
        let scaffolded = env.seams(
            &[
                "new-generator",
                &format!("title-{language}"),
                "--reference",
                publisher.path().join("title.html").to_str().unwrap(),
                "--out",
                package.to_str().unwrap(),
                "--language",
                language,
            ],
            &[],
        );
        assert_eq!(scaffolded.code, 0, "{scaffolded:?}");
        let reference = format!("{host}/seams/title-{language}:1");
        let published = env.in_project(
            publisher.path(),
            &["publish", package.to_str().unwrap(), "--to", &reference],
        );
        assert_eq!(published.code, 0, "{language}: {published:?}");
        assert!(
            published
                .stdout
                .starts_with(&format!("published title-{language} 0.1.0 (")),
            "{}",
            published.stdout
        );
        let inspected = env.seams(&["inspect", &reference], &[]);
        assert!(
            inspected
                .stdout
                .contains(&format!("name:        title-{language}")),
            "{}",
            inspected.stdout
        );
    }

    // The inspect of a reference shows the annotations publish wrote.
    let inspected = env.seams(&["inspect", &htmx_ref], &[]);
    assert_eq!(inspected.code, 0, "{inspected:?}");
    for expected in [
        "name:        htmx",
        "annotation:  dev.seams.protocol = seams:generator@0.2.0",
        "annotation:  org.opencontainers.image.title = htmx",
        &format!("manifest:    {htmx_digest}"),
    ] {
        assert!(inspected.stdout.contains(expected), "{}", inspected.stdout);
    }

    // A copy of the example takes both from the registry, in place of the
    // htmx built-in; add keeps seams.toml's comments and formatting.
    let p = chat_project();
    let manifest = "# chat, pulling its pages from a registry\n[model]\nfiles = [\"model.ttl\"]  # the model\n\n[[generator]]\nbuiltin = \"fastapi\"\n";
    std::fs::write(p.path().join("seams.toml"), manifest).unwrap();
    for reference in [&htmx_ref, &title_ref] {
        let added = env.in_project(p.path(), &["add", reference]);
        assert_eq!(added.code, 0, "{added:?}");
    }
    assert_eq!(
        std::fs::read_to_string(p.path().join("seams.toml")).unwrap(),
        format!(
            "{manifest}\n[[generator]]\noci = \"{htmx_ref}\"\n\n[[generator]]\noci = \"{title_ref}\"\n"
        )
    );
    let again = env.in_project(p.path(), &["add", &htmx_ref]);
    assert_eq!(again.code, 1, "{again:?}");
    assert!(
        again.stderr.contains("already has [[generator]] oci"),
        "{again:?}"
    );

    // What add checked is what the next generate takes: from the cache,
    // with the registry down.
    registry.stop();
    let generated = env.in_project(p.path(), &["generate"]);
    assert_eq!(generated.code, 0, "{generated:?}");
    registry.resume();
    for file in ["conversations.html", "thread.html", "app.js"] {
        assert_eq!(
            read(p.path(), &format!("out/{file}")).unwrap(),
            example_output(file),
            "{file}"
        );
    }
    assert!(p.path().join("out/title.html").is_file());
    let pin = pinned(p.path(), &htmx_ref);
    assert_eq!(pin["manifest_digest"], htmx_digest.as_str());
    let layer = pin["layer_digest"].as_str().unwrap().to_owned();

    // Offline: the registry stops, and the pinned blobs come from the cache.
    registry.stop();
    std::fs::remove_file(p.path().join("out/conversations.html")).unwrap();
    let offline = env.in_project(p.path(), &["generate"]);
    assert_eq!(offline.code, 0, "{offline:?}");
    assert_eq!(
        read(p.path(), "out/conversations.html").unwrap(),
        example_output("conversations.html")
    );
    assert_eq!(env.in_project(p.path(), &["check"]).code, 0);

    // A cached blob changed on disk is refused, and only that generator
    // fails: its files and lock entries stay.
    let blob = cached_blob(env.blobs.path(), &layer);
    let mut bytes = std::fs::read(&blob).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 1;
    std::fs::write(&blob, &bytes).unwrap();
    std::fs::remove_file(p.path().join("out/conversations.html")).unwrap();
    let tampered = env.in_project(p.path(), &["generate"]);
    assert_eq!(tampered.code, 1, "{tampered:?}");
    insta::assert_snapshot!(
        "registry_tampered_cache",
        redact(&tampered.stderr, &registry, &env, p.path())
    );
    assert!(read(p.path(), "out/conversations.html").is_none());
    assert_eq!(pinned(p.path(), &htmx_ref)["layer_digest"], layer.as_str());
    assert!(
        std::fs::read_to_string(p.path().join("seams.lock"))
            .unwrap()
            .contains("\"incomplete\": true")
    );

    // Without the blob and without the registry: unreachable, said so.
    std::fs::remove_file(&blob).unwrap();
    let unreachable = env.in_project(p.path(), &["generate"]);
    assert_eq!(unreachable.code, 1, "{unreachable:?}");
    insta::assert_snapshot!(
        "registry_unreachable",
        redact(&unreachable.stderr, &registry, &env, p.path())
    );

    // Back online, the pinned digest is pulled again.
    registry.resume();
    let online = env.in_project(p.path(), &["generate"]);
    assert_eq!(online.code, 0, "{online:?}");
    assert_eq!(
        read(p.path(), "out/conversations.html").unwrap(),
        example_output("conversations.html")
    );

    // The tag moves to another component (the compose built-in's): the
    // lock's digest is still used until --update.
    let moved = push(
        &env,
        &htmx_ref,
        seams_core::builtin::component("compose").unwrap(),
    );
    std::fs::remove_file(p.path().join("out/conversations.html")).unwrap();
    let pinned_run = env.in_project(p.path(), &["generate"]);
    assert_eq!(pinned_run.code, 0, "{pinned_run:?}");
    assert_eq!(
        pinned(p.path(), &htmx_ref)["manifest_digest"],
        htmx_digest.as_str()
    );
    assert!(p.path().join("out/conversations.html").is_file());
    let updated = env.in_project(p.path(), &["generate", "--update"]);
    assert_eq!(updated.code, 0, "{updated:?}");
    assert_eq!(
        pinned(p.path(), &htmx_ref)["manifest_digest"],
        moved.as_str()
    );
    assert!(!p.path().join("out/conversations.html").exists());
    assert!(
        p.path().join("out/docker-compose.yml").is_file(),
        "{updated:?}"
    );
}

#[test]
fn each_registry_failure_fails_its_generator_naming_the_reference() {
    let env = Env::new();
    let registry = TestRegistry::start();
    let host = registry.host();

    // An image that is not Wasm: an OCI image config and a tar layer.
    let config = br#"{"architecture":"amd64","os":"linux"}"#;
    let layer = b"not a tar, not wasm";
    let image_manifest = format!(
        r#"{{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"{}","size":{}}},"layers":[{{"mediaType":"application/vnd.oci.image.layer.v1.tar","digest":"{}","size":{}}}]}}"#,
        digest(config),
        config.len(),
        digest(layer),
        layer.len()
    );
    registry.put_raw(
        "seams/image",
        "1",
        &[config, layer],
        &image_manifest,
        "application/vnd.oci.image.manifest.v1+json",
    );
    // A component of another world (a WASI command).
    push(
        &env,
        &format!("{host}/seams/command:1"),
        &std::fs::read(OTHER_WORLD_WASM).unwrap(),
    );

    let cases = [
        (
            "registry_missing_artifact",
            format!("{host}/seams/nothing:1"),
        ),
        ("registry_not_wasm", format!("{host}/seams/image:1")),
        (
            "registry_not_a_generator",
            format!("{host}/seams/command:1"),
        ),
    ];
    for (snapshot, reference) in cases {
        let p = TempProject::new(
            &std::fs::read_to_string(repo_root().join("examples/chat/model.ttl")).unwrap(),
            &format!(
                "[[generator]]\nbuiltin = \"fastapi\"\n\n[[generator]]\noci = \"{reference}\"\n"
            ),
        );
        let run = env.in_project(p.path(), &["generate"]);
        assert_eq!(run.code, 1, "{snapshot}: {run:?}");
        assert!(run.stderr.contains(&reference), "{snapshot}: {run:?}");
        // The other generator carried on.
        assert!(p.path().join("out/app.py").is_file(), "{snapshot}");
        insta::assert_snapshot!(snapshot, redact(&run.stderr, &registry, &env, p.path()));
        let added = env.in_project(p.path(), &["add", &reference]);
        assert_eq!(added.code, 1, "{snapshot}: {added:?}");
    }

    // A reference by digest pins itself; then a lock whose layer digest is
    // not that manifest's layer.
    let manifest = push(
        &env,
        &format!("{host}/seams/htmx:1"),
        seams_core::builtin::component("htmx").unwrap(),
    );
    let reference = format!("{host}/seams/htmx@{manifest}");
    let p = TempProject::new(
        &std::fs::read_to_string(repo_root().join("examples/chat/model.ttl")).unwrap(),
        &format!("[[generator]]\noci = \"{reference}\"\n"),
    );
    assert_eq!(env.in_project(p.path(), &["generate"]).code, 0);
    assert_eq!(
        pinned(p.path(), &reference)["manifest_digest"],
        manifest.as_str()
    );
    let layer = pinned(p.path(), &reference)["layer_digest"]
        .as_str()
        .unwrap()
        .to_owned();
    let other = digest(b"another component");
    let lock = std::fs::read_to_string(p.path().join("seams.lock")).unwrap();
    std::fs::write(p.path().join("seams.lock"), lock.replace(&layer, &other)).unwrap();
    let run = env.in_project(p.path(), &["generate"]);
    assert_eq!(run.code, 1, "{run:?}");
    insta::assert_snapshot!(
        "registry_digest_mismatch",
        redact(&run.stderr, &registry, &env, p.path())
    );

    // References that name no registry, tag or digest are usage errors.
    for bad in ["seams/htmx:1", &format!("{host}/seams/htmx")] {
        let run = env.seams(&["inspect", bad], &[]);
        assert_ne!(run.code, 0, "{bad}");
        let run = env.in_project(p.path(), &["add", bad]);
        assert_eq!(run.code, 2, "{bad}: {run:?}");
    }
}

#[test]
fn credentials_come_from_the_environment_or_dockers_config_and_are_never_written() {
    let env = Env::new();
    let password = "s3cret-Pa55word";
    let registry = TestRegistry::with_users(&[("seams", password)]);
    let host = registry.host();
    let reference = format!("{host}/seams/htmx:1");
    let login = [
        ("SEAMS_REGISTRY_HOST", host.as_str()),
        ("SEAMS_REGISTRY_USERNAME", "seams"),
        ("SEAMS_REGISTRY_PASSWORD", password),
    ];

    // Pushing anonymously is refused, naming what to do.
    let mut client = Settings::new(env.blobs.path().join("tests"));
    client.docker_config = false;
    let artifact = Artifact {
        component: seams_core::builtin::component("htmx").unwrap().to_vec(),
        imports: Vec::new(),
        exports: Vec::new(),
        annotations: Default::default(),
    };
    let parsed: Reference = reference.parse().unwrap();
    let refused = Registry::new(client.clone())
        .publish(&parsed, &artifact)
        .unwrap_err()
        .to_string();
    insta::assert_snapshot!(
        "registry_unauthorized",
        refused.replace(&host, "127.0.0.1:[PORT]")
    );
    client.login = Some(seams_registry::Login {
        registry: host.clone(),
        username: "seams".into(),
        password: password.into(),
    });
    Registry::new(client).publish(&parsed, &artifact).unwrap();

    // add with the login from the environment; a login for another host
    // is not sent.
    let p = TempProject::new(
        &std::fs::read_to_string(repo_root().join("examples/chat/model.ttl")).unwrap(),
        "[[generator]]\nbuiltin = \"fastapi\"\n",
    );
    let project = p.path().to_str().unwrap();
    let elsewhere = env.seams(
        &["add", &reference, "--project", project],
        &[
            ("SEAMS_REGISTRY_HOST", "registry.example:5000"),
            ("SEAMS_REGISTRY_USERNAME", "seams"),
            ("SEAMS_REGISTRY_PASSWORD", password),
        ],
    );
    assert_eq!(elsewhere.code, 1, "{elsewhere:?}");
    assert!(elsewhere.stderr.contains("refused access"), "{elsewhere:?}");
    let added = env.seams(&["add", &reference, "--project", project], &login);
    assert_eq!(added.code, 0, "{added:?}");

    // generate with Docker's config file instead (a fresh cache, so that
    // it pulls).
    std::fs::remove_dir_all(env.blobs.path()).unwrap();
    let auth = base64(&format!("seams:{password}"));
    std::fs::write(
        env.docker.path().join("config.json"),
        format!(r#"{{"auths": {{"{host}": {{"auth": "{auth}"}}}}}}"#),
    )
    .unwrap();
    let generated = env.in_project(p.path(), &["generate"]);
    assert_eq!(generated.code, 0, "{generated:?}");
    assert!(p.path().join("out/conversations.html").is_file());

    // And with a credential helper Docker's config names for the host.
    std::fs::remove_dir_all(env.blobs.path()).unwrap();
    std::fs::remove_file(p.path().join("out/conversations.html")).unwrap();
    let helpers = tempfile::tempdir().unwrap();
    let helper = helpers.path().join("docker-credential-seams-test");
    std::fs::write(
        &helper,
        format!(
            "#!/bin/sh\n[ \"$1\" = get ] || exit 1\nread server\nprintf '{{\"ServerURL\": \"%s\", \"Username\": \"seams\", \"Secret\": \"{password}\"}}' \"$server\"\n"
        ),
    )
    .unwrap();
    std::fs::set_permissions(&helper, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    std::fs::write(
        env.docker.path().join("config.json"),
        format!(r#"{{"credHelpers": {{"{host}": "seams-test"}}}}"#),
    )
    .unwrap();
    let path = format!(
        "{}:{}",
        helpers.path().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let helped = env.seams(&["generate", "--project", project], &[("PATH", &path)]);
    assert_eq!(helped.code, 0, "{helped:?}");
    assert!(p.path().join("out/conversations.html").is_file());

    // The password is in no file seams wrote.
    let mut files = Vec::new();
    collect(p.path(), &mut files);
    collect(env.blobs.path(), &mut files);
    assert!(files.len() > 5);
    for file in files {
        let bytes = std::fs::read(&file).unwrap();
        assert!(
            !bytes
                .windows(password.len())
                .any(|w| w == password.as_bytes())
                && !bytes.windows(auth.len()).any(|w| w == auth.as_bytes()),
            "{} holds the password",
            file.display()
        );
    }
}

fn collect(dir: &Path, files: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            collect(&path, files);
        } else {
            files.push(path);
        }
    }
}

/// Standard base64, as Docker's config file writes `auth`.
fn base64(text: &str) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(text)
}

/// `seams inspect REFERENCE` run as a process of its own, so that its peak
/// memory is its own: refused with `message`, the process staying near
/// its size at rest (a whole endless answer reached 550 MB).
fn refused_within_memory(reference: &str, message: &str) {
    let env = Env::new();
    let run = env.seams(&["inspect", reference], &[]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(run.stderr.contains(message), "{run:?}");
    let measured = seams_tests::run_measured(
        Path::new(env!("CARGO_BIN_EXE_seams")),
        &["inspect", reference],
    );
    assert_eq!(measured.code, Some(1), "{}", measured.stderr);
    assert!(
        measured.peak_rss_kib < 128 * 1024,
        "peak {} KiB reading an endless answer",
        measured.peak_rss_kib
    );
}

#[test]
fn a_registry_sending_an_endless_manifest_is_cut_off_at_the_manifest_cap() {
    // It answers /v2/, then streams a manifest that never ends, faster
    // than any size check after the fact could help.
    let fake = FakeRegistry::start(|request| {
        if request.target.contains("/manifests/") {
            Answer::Endless("application/vnd.oci.image.manifest.v1+json")
        } else {
            Answer::Whole(200, Vec::new(), b"{}".to_vec())
        }
    });
    let reference = format!("{}/evil/endless:1", fake.host());
    refused_within_memory(
        &reference,
        &format!("{reference} is not a seams generator: its manifest is more than 1048576 bytes"),
    );
}

/// A registry that wants a Bearer token from its own token service (as
/// Docker Hub, GHCR and most hosted registries do), and `token` its
/// service's answer.
fn token_registry(
    files: std::collections::BTreeMap<String, Vec<u8>>,
    token: impl Fn() -> Answer + Send + Sync + 'static,
) -> FakeRegistry {
    FakeRegistry::start(move |request| {
        let path = request.target.split('?').next().unwrap_or_default();
        if path == "/token" {
            let query = request.target.split_once('?').map_or("", |(_, q)| q);
            return if query.contains("scope=repository%3Aseams%2Fhtmx%3Apull")
                && query.contains("service=fake-registry")
            {
                token()
            } else {
                Answer::Whole(400, Vec::new(), b"wrong scope".to_vec())
            };
        }
        let challenge = || {
            Answer::Whole(
                401,
                vec![(
                    "WWW-Authenticate",
                    format!(
                        r#"Bearer realm="http://{}/token",service="fake-registry""#,
                        request.host
                    ),
                )],
                Vec::new(),
            )
        };
        if request.authorization.as_deref() != Some("Bearer t0k3n") {
            return challenge();
        }
        match files.get(path) {
            Some(bytes) => Answer::Whole(200, Vec::new(), bytes.clone()),
            None => Answer::Whole(404, Vec::new(), Vec::new()),
        }
    })
}

#[test]
fn a_token_service_is_asked_for_the_repositorys_pull_and_its_token_used() {
    // The htmx generator as a real registry serves it, then served again
    // from behind a token service.
    let env = Env::new();
    let registry = TestRegistry::start();
    push(
        &env,
        &format!("{}/seams/htmx:1", registry.host()),
        seams_core::builtin::component("htmx").unwrap(),
    );
    let get = |path: &str| {
        ureq::get(&format!("http://{}/v2/seams/htmx/{path}", registry.host()))
            .header("Accept", seams_registry::MANIFEST_MEDIA_TYPE)
            .call()
            .unwrap()
            .body_mut()
            .read_to_vec()
            .unwrap()
    };
    let manifest = get("manifests/1");
    let layer =
        serde_json::from_slice::<serde_json::Value>(&manifest).unwrap()["layers"][0]["digest"]
            .as_str()
            .unwrap()
            .to_owned();
    let files = [
        ("/v2/seams/htmx/manifests/1".to_owned(), manifest),
        (
            format!("/v2/seams/htmx/blobs/{layer}"),
            get(&format!("blobs/{layer}")),
        ),
    ]
    .into();
    let fake = token_registry(files, || {
        Answer::Whole(
            200,
            Vec::new(),
            br#"{"token":"t0k3n","expires_in":300}"#.to_vec(),
        )
    });
    let run = env.seams(&["inspect", &format!("{}/seams/htmx:1", fake.host())], &[]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stdout.contains("htmx"), "{run:?}");
    let seen = fake.seen();
    assert!(
        seen.iter().any(|t| t.starts_with("/token?")),
        "the token service was not asked: {seen:?}"
    );
}

#[test]
fn a_token_service_sending_an_endless_answer_is_cut_off() {
    let fake = token_registry(Default::default(), || Answer::Endless("application/json"));
    let reference = format!("{}/seams/htmx:1", fake.host());
    refused_within_memory(
        &reference,
        "its token service answered more than 65536 bytes",
    );
}

#[test]
fn what_a_registry_says_reaches_the_terminal_escaped() {
    let env = Env::new();
    let registry = TestRegistry::start();
    let reference: Reference = format!("{}/seams/htmx:loud", registry.host())
        .parse()
        .unwrap();
    let hostile = "\u{1b}]0;pwned\u{7}\u{1b}[31mred\u{202e}";
    env.client()
        .publish(
            &reference,
            &Artifact {
                component: seams_core::builtin::component("htmx").unwrap().to_vec(),
                imports: Vec::new(),
                exports: Vec::new(),
                annotations: [(format!("x.{hostile}"), hostile.to_owned())].into(),
            },
        )
        .unwrap();
    let run = env.seams(&["inspect", &reference.to_string()], &[]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        !run.stdout.contains('\u{1b}') && !run.stdout.contains('\u{202e}'),
        "{run:?}"
    );
    assert!(run.stdout.contains("annotation:  x."), "{run:?}");
    let json = env.seams(
        &["inspect", &reference.to_string(), "--format", "json"],
        &[],
    );
    assert!(!json.stdout.contains('\u{1b}'), "{json:?}");
}

/// A registry whose `Bearer` challenge names a token service on another
/// host (here another port: another service) gets the user's login sent
/// nowhere but to itself: the token service is asked without it.
#[test]
fn a_token_realm_on_another_host_gets_no_password() {
    let env = Env::new();
    let password = "hunter2-do-not-send";
    let asked = std::sync::Arc::new(std::sync::Mutex::new(Vec::<Option<String>>::new()));
    let kept = asked.clone();
    let realm = FakeRegistry::start(move |request| {
        kept.lock().unwrap().push(request.authorization.clone());
        Answer::Whole(200, Vec::new(), br#"{"token":"t0k3n"}"#.to_vec())
    });
    let realm_host = realm.host().to_owned();
    let registry = FakeRegistry::start(move |request| {
        if request.authorization.as_deref() == Some("Bearer t0k3n") {
            return Answer::Whole(404, Vec::new(), Vec::new());
        }
        Answer::Whole(
            401,
            vec![(
                "WWW-Authenticate",
                format!(r#"Bearer realm="http://{realm_host}/token",service="elsewhere""#),
            )],
            Vec::new(),
        )
    });
    let host = registry.host().to_owned();
    let run = env.seams(
        &["inspect", &format!("{host}/seams/htmx:1")],
        &[
            ("SEAMS_REGISTRY_HOST", host.as_str()),
            ("SEAMS_REGISTRY_USERNAME", "seams"),
            ("SEAMS_REGISTRY_PASSWORD", password),
        ],
    );
    assert_eq!(run.code, 1, "{run:?}");
    let asked = asked.lock().unwrap().clone();
    assert!(!asked.is_empty(), "the token service was not asked");
    assert!(
        asked.iter().all(Option::is_none),
        "the token service on another host got credentials: {asked:?}"
    );
}
