//! A reference to a generator in a registry, as a user writes it:
//! `REGISTRY/NAME:TAG` or `REGISTRY/NAME@sha256:DIGEST`.

use std::fmt;
use std::str::FromStr;

use seams_model::input_text::echo;

/// A parsed, checked registry reference. Unlike Docker, seams never fills
/// in a registry (`docker.io`) or a tag (`latest`): what is pulled is
/// always what the user wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reference {
    text: String,
    inner: oci_client::Reference,
}

/// Why a reference was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{reference} is not a registry reference: {why}")]
pub struct ReferenceError {
    /// The reference as given, quoted and escaped.
    pub reference: String,
    /// What is wrong and how it should look.
    pub why: String,
}

/// Longer references are refused before they are parsed.
const MAX_LEN: usize = 512;

impl FromStr for Reference {
    type Err = ReferenceError;

    fn from_str(text: &str) -> Result<Reference, ReferenceError> {
        let refuse = |why: &str| ReferenceError {
            reference: echo(text),
            why: why.to_owned(),
        };
        if text.is_empty() || text.len() > MAX_LEN {
            return Err(refuse(&format!(
                "expected 1 to {MAX_LEN} characters, e.g. ghcr.io/OWNER/NAME:TAG"
            )));
        }
        if text.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return Err(refuse("it contains spaces or control characters"));
        }
        let Some((host, rest)) = text.split_once('/') else {
            return Err(refuse(
                "name the registry and the repository, e.g. ghcr.io/OWNER/NAME:TAG",
            ));
        };
        if !(host.contains('.') || host.contains(':') || host == "localhost") {
            return Err(refuse(&format!(
                "it starts with {}, which is not a registry host; name the registry, e.g. ghcr.io/{text} (seams never assumes docker.io)",
                echo(host)
            )));
        }
        let last = rest.rsplit('/').next().unwrap_or(rest);
        if !text.contains('@') && !last.contains(':') {
            return Err(refuse(&format!(
                "it names no tag or digest; add one, e.g. {text}:1.0.0 or {text}@sha256:DIGEST (seams never assumes latest)"
            )));
        }
        let inner = oci_client::Reference::from_str(text).map_err(|e| refuse(&e.to_string()))?;
        if let Some(digest) = inner.digest()
            && !is_sha256_digest(digest)
        {
            return Err(refuse(
                "its digest must be sha256: followed by 64 lowercase hex digits",
            ));
        }
        Ok(Reference {
            text: text.to_owned(),
            inner,
        })
    }
}

impl fmt::Display for Reference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl Reference {
    /// The registry's host (and port).
    pub fn registry(&self) -> &str {
        self.inner.registry()
    }

    /// The repository in the registry.
    pub fn repository(&self) -> &str {
        self.inner.repository()
    }

    /// The digest the reference names, if it names one.
    pub fn digest(&self) -> Option<&str> {
        self.inner.digest()
    }

    /// The same repository at `digest`.
    pub(crate) fn at(&self, digest: &str) -> oci_client::Reference {
        oci_client::Reference::with_digest(
            self.inner.registry().to_owned(),
            self.inner.repository().to_owned(),
            digest.to_owned(),
        )
    }

    pub(crate) fn oci(&self) -> &oci_client::Reference {
        &self.inner
    }

    /// Whether the registry is on this machine: spoken to over plain
    /// HTTP, as Docker does.
    pub fn is_loopback(&self) -> bool {
        is_loopback_host(self.registry())
    }
}

/// `sha256:` and 64 lowercase hex digits.
pub(crate) fn is_sha256_digest(digest: &str) -> bool {
    digest.strip_prefix("sha256:").is_some_and(|hex| {
        hex.len() == 64 && hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
    })
}

/// `localhost`, `127.x.y.z` or `[::1]`, with or without a port.
fn is_loopback_host(registry: &str) -> bool {
    let host = if let Some(rest) = registry.strip_prefix('[') {
        rest.split(']').next().unwrap_or(rest)
    } else {
        registry.rsplit_once(':').map_or(registry, |(h, _)| h)
    };
    if host.eq_ignore_ascii_case("localhost") {
        return true;
    }
    host.parse::<std::net::IpAddr>()
        .is_ok_and(|ip| ip.is_loopback())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The registry and repository a reference names, or a fragment of
    /// why it is refused.
    type Expected = Result<(&'static str, &'static str), &'static str>;

    #[test]
    fn references_are_taken_only_as_written() {
        let digest = format!("sha256:{}", "a".repeat(64));
        let cases: &[(&str, Expected)] = &[
            ("ghcr.io/me/htmx:1.0.0", Ok(("ghcr.io", "me/htmx"))),
            (
                "127.0.0.1:5000/seams/htmx:1",
                Ok(("127.0.0.1:5000", "seams/htmx")),
            ),
            ("localhost/htmx:dev", Ok(("localhost", "htmx"))),
            ("me/htmx:1", Err("not a registry host")),
            ("htmx:1", Err("name the registry")),
            ("ghcr.io/me/htmx", Err("names no tag or digest")),
            ("localhost:5000/htmx", Err("names no tag or digest")),
            ("ghcr.io/me/htmx@sha256:abc", Err("")),
            ("ghcr.io/me/ht mx:1", Err("spaces or control")),
            ("", Err("1 to 512 characters")),
        ];
        for (text, expected) in cases {
            let parsed = text.parse::<Reference>();
            match (expected, parsed) {
                (Ok((registry, repository)), Ok(r)) => {
                    assert_eq!(r.registry(), *registry, "{text}");
                    assert_eq!(r.repository(), *repository, "{text}");
                    assert_eq!(r.to_string(), *text);
                }
                (Err(why), Err(e)) => assert!(e.to_string().contains(why), "{text}: {e}"),
                (expected, got) => panic!("{text}: expected {expected:?}, got {got:?}"),
            }
        }
        let pinned: Reference = format!("ghcr.io/me/htmx@{digest}").parse().unwrap();
        assert_eq!(pinned.digest(), Some(digest.as_str()));
    }

    #[test]
    fn only_loopback_registries_are_loopback() {
        for (registry, loopback) in [
            ("localhost:5000", true),
            ("127.0.0.1:5000", true),
            ("127.8.9.10", true),
            ("[::1]:5000", true),
            ("ghcr.io", false),
            ("10.0.0.1:5000", false),
            ("localhost.evil.com", false),
        ] {
            assert_eq!(is_loopback_host(registry), loopback, "{registry}");
        }
    }
}
