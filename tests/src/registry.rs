//! A real OCI registry for the tests: Debian's `docker-registry` (the CNCF
//! distribution registry) on a loopback port, with its storage in a
//! temporary directory and, when asked, htpasswd authentication. Started
//! by the test, stopped when dropped (and startable again on the same port
//! and storage, to test what works offline).

use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::listener::{free_port, listens_on};

/// A running (or stopped) registry.
pub struct TestRegistry {
    dir: tempfile::TempDir,
    port: u16,
    child: Option<Child>,
}

impl TestRegistry {
    /// A registry without authentication.
    pub fn start() -> TestRegistry {
        TestRegistry::with_users(&[])
    }

    /// A registry that lets only `users` (name, password) in.
    pub fn with_users(users: &[(&str, &str)]) -> TestRegistry {
        let dir = tempfile::tempdir().unwrap();
        let mut auth = String::new();
        if !users.is_empty() {
            let htpasswd: String = users
                .iter()
                .map(|(user, password)| format!("{user}:{}\n", bcrypt::hash(password, 4).unwrap()))
                .collect();
            std::fs::write(dir.path().join("htpasswd"), htpasswd).unwrap();
            auth = format!(
                "auth:\n  htpasswd:\n    realm: seams-tests\n    path: {}\n",
                dir.path().join("htpasswd").display()
            );
        }
        let mut registry = TestRegistry {
            dir,
            port: 0,
            child: None,
        };
        // The port is free when picked; another test's server may take it
        // before the registry binds it, and then the registry exits.
        for _ in 0..3 {
            registry.port = free_port();
            let config = format!(
                "version: 0.1\nlog:\n  level: error\nstorage:\n  filesystem:\n    rootdirectory: {}\n  delete:\n    enabled: true\nhttp:\n  addr: 127.0.0.1:{}\n{auth}",
                registry.storage().display(),
                registry.port,
            );
            std::fs::write(registry.dir.path().join("config.yml"), config).unwrap();
            if registry.listen() {
                return registry;
            }
        }
        panic!("no free port for the registry after three tries");
    }

    /// `127.0.0.1:PORT`.
    pub fn host(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    /// Stops the registry; its storage stays.
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Starts it again on the same port and storage, and waits until it
    /// answers.
    pub fn resume(&mut self) {
        assert!(
            self.listen(),
            "the registry could not listen on {} again",
            self.port
        );
    }

    /// Starts the registry and waits until it holds its port: false when
    /// it exited first (the port was taken).
    fn listen(&mut self) -> bool {
        assert!(self.child.is_none(), "the registry runs already");
        let mut child = Command::new("docker-registry")
            .arg("serve")
            .arg(self.dir.path().join("config.yml"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("docker-registry runs (tests/run installs Debian's docker-registry)");
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if child.try_wait().unwrap().is_some() {
                return false;
            }
            if TcpStream::connect(("127.0.0.1", self.port)).is_ok()
                && listens_on(child.id(), self.port)
            {
                self.child = Some(child);
                return true;
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                let _ = child.wait();
                panic!("the registry did not listen on {}", self.port);
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The registry's storage directory.
    pub fn storage(&self) -> PathBuf {
        self.dir.path().join("storage")
    }

    /// Puts `manifest` (with its config and layer blobs) under
    /// `repository:tag` over the distribution API itself, so that the
    /// tests can serve artifacts seams would never publish.
    pub fn put_raw(
        &self,
        repository: &str,
        tag: &str,
        blobs: &[&[u8]],
        manifest: &str,
        media_type: &str,
    ) {
        let base = format!("http://{}/v2/{repository}", self.host());
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .http_status_as_error(true)
            .build()
            .into();
        for blob in blobs {
            let started = agent
                .post(&format!("{base}/blobs/uploads/"))
                .send_empty()
                .unwrap();
            let location = started.headers()["location"].to_str().unwrap();
            let location = if location.starts_with('/') {
                format!("http://{}{location}", self.host())
            } else {
                location.to_owned()
            };
            let separator = if location.contains('?') { '&' } else { '?' };
            agent
                .put(&format!("{location}{separator}digest={}", digest(blob)))
                .header("Content-Type", "application/octet-stream")
                .send(*blob)
                .unwrap();
        }
        agent
            .put(&format!("{base}/manifests/{tag}"))
            .header("Content-Type", media_type)
            .send(manifest.as_bytes())
            .unwrap();
    }
}

impl Drop for TestRegistry {
    fn drop(&mut self) {
        self.stop();
    }
}

/// `sha256:HEX` of `bytes`.
pub fn digest(bytes: &[u8]) -> String {
    use sha2::Digest;
    let hash = sha2::Sha256::digest(bytes);
    format!(
        "sha256:{}",
        hash.iter().map(|b| format!("{b:02x}")).collect::<String>()
    )
}

/// The blob cache file of `digest` under `cache`.
pub fn cached_blob(cache: &Path, digest: &str) -> PathBuf {
    cache
        .join("sha256")
        .join(digest.strip_prefix("sha256:").unwrap())
}

/// A registry played by a function of each request, for what a real one
/// would not do: a token service of its own, answers that never end.
/// Serves on a loopback port until dropped.
pub struct FakeRegistry {
    host: String,
    stopped: std::sync::Arc<std::sync::atomic::AtomicBool>,
    seen: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
}

/// A request as the fake registry read it.
pub struct Request {
    /// The request target: path and query.
    pub target: String,
    /// The `Authorization` header, if any.
    pub authorization: Option<String>,
    /// The fake registry's own `127.0.0.1:PORT`, for the URLs it hands out.
    pub host: String,
}

/// What the fake registry answers.
pub enum Answer {
    /// A whole answer: status, headers, body.
    Whole(u16, Vec<(&'static str, String)>, Vec<u8>),
    /// A 200 of this content type whose body never ends.
    Endless(&'static str),
}

impl FakeRegistry {
    /// Starts serving `answer` to every request.
    pub fn start(answer: impl Fn(&Request) -> Answer + Send + Sync + 'static) -> FakeRegistry {
        use std::io::{BufRead, BufReader, Write};
        use std::sync::atomic::Ordering;
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let host = listener.local_addr().unwrap().to_string();
        let fake = FakeRegistry {
            host: host.clone(),
            stopped: Default::default(),
            seen: Default::default(),
        };
        let (stopped, seen) = (fake.stopped.clone(), fake.seen.clone());
        let answer = std::sync::Arc::new(answer);
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                if stopped.load(Ordering::SeqCst) {
                    return;
                }
                let Ok(mut stream) = stream else { continue };
                let (answer, stopped, seen, host) =
                    (answer.clone(), stopped.clone(), seen.clone(), host.clone());
                std::thread::spawn(move || {
                    let mut reader = BufReader::new(stream.try_clone().unwrap());
                    let mut head = Vec::new();
                    let mut line = String::new();
                    while reader.read_line(&mut line).is_ok_and(|n| n > 2) {
                        head.push(std::mem::take(&mut line));
                    }
                    let Some(target) = head.first().and_then(|l| l.split(' ').nth(1)) else {
                        return;
                    };
                    let authorization = head.iter().find_map(|l| {
                        let (name, value) = l.split_once(':')?;
                        name.eq_ignore_ascii_case("authorization")
                            .then(|| value.trim().to_owned())
                    });
                    seen.lock().unwrap().push(target.to_owned());
                    let request = Request {
                        target: target.to_owned(),
                        authorization,
                        host,
                    };
                    match answer(&request) {
                        Answer::Whole(status, headers, body) => {
                            let mut text = format!(
                                "HTTP/1.1 {status} X\r\nContent-Length: {}\r\nConnection: close\r\n",
                                body.len()
                            );
                            for (name, value) in headers {
                                text.push_str(&format!("{name}: {value}\r\n"));
                            }
                            text.push_str("\r\n");
                            let _ = stream.write_all(text.as_bytes());
                            let _ = stream.write_all(&body);
                        }
                        Answer::Endless(content_type) => {
                            let _ = stream.write_all(
                                format!("HTTP/1.1 200 OK\r\nContent-Type: {content_type}\r\nConnection: close\r\n\r\n")
                                    .as_bytes(),
                            );
                            let chunk = vec![b' '; 1 << 20];
                            while !stopped.load(Ordering::SeqCst)
                                && stream.write_all(&chunk).is_ok()
                            {}
                        }
                    }
                });
            }
        });
        fake
    }

    /// `127.0.0.1:PORT`.
    pub fn host(&self) -> &str {
        &self.host
    }

    /// The targets (path and query) of the requests it has read, in order.
    pub fn seen(&self) -> Vec<String> {
        self.seen.lock().unwrap().clone()
    }
}

impl Drop for FakeRegistry {
    fn drop(&mut self) {
        self.stopped
            .store(true, std::sync::atomic::Ordering::SeqCst);
        // Wakes the accepting thread so that it sees the flag and ends.
        let _ = TcpStream::connect(&self.host);
    }
}
