//! A real OCI registry for the tests: Debian's `docker-registry` (the CNCF
//! distribution registry) on a loopback port, with its storage in a
//! temporary directory and, when asked, htpasswd authentication. Started
//! by the test, stopped when dropped (and startable again on the same port
//! and storage, to test what works offline).

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

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
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let mut config = format!(
            "version: 0.1\nlog:\n  level: error\nstorage:\n  filesystem:\n    rootdirectory: {}\n  delete:\n    enabled: true\nhttp:\n  addr: 127.0.0.1:{port}\n",
            dir.path().join("storage").display()
        );
        if !users.is_empty() {
            let htpasswd: String = users
                .iter()
                .map(|(user, password)| format!("{user}:{}\n", bcrypt::hash(password, 4).unwrap()))
                .collect();
            std::fs::write(dir.path().join("htpasswd"), htpasswd).unwrap();
            config.push_str(&format!(
                "auth:\n  htpasswd:\n    realm: seams-tests\n    path: {}\n",
                dir.path().join("htpasswd").display()
            ));
        }
        std::fs::write(dir.path().join("config.yml"), config).unwrap();
        let mut registry = TestRegistry {
            dir,
            port,
            child: None,
        };
        registry.resume();
        registry
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
        assert!(self.child.is_none(), "the registry runs already");
        let child = Command::new("docker-registry")
            .arg("serve")
            .arg(self.dir.path().join("config.yml"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("docker-registry runs (tests/run installs Debian's docker-registry)");
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(20);
        while std::net::TcpStream::connect(("127.0.0.1", self.port)).is_err() {
            assert!(
                Instant::now() < deadline,
                "the registry did not listen on {}",
                self.port
            );
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
