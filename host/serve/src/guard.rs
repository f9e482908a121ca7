//! Which requests reach the project. The viewer runs on the user's machine
//! beside their browser, so a web page from anywhere could make that
//! browser send it requests: by name after rebinding a DNS name to the
//! loopback address (refused by the `Host` check), or by posting a form
//! across sites (refused by the `Origin` check, and by the per-run token
//! every write carries, which the handlers check).

/// Why a request is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    /// No `Host` header, or one the viewer does not serve.
    #[error(
        "refused: this viewer serves {served}, not {host:?}; open the URL `seams serve` printed"
    )]
    Host {
        /// The header as sent (empty when missing).
        host: String,
        /// The host names served, comma-separated.
        served: String,
    },
    /// An `Origin` that is not the viewer's own.
    #[error("refused: a request from {origin:?} is not from this viewer's own pages")]
    Origin {
        /// The header as sent.
        origin: String,
    },
    /// A write without an `Origin` (or with a cross-site fetch mark).
    #[error("refused: a request that writes must come from this viewer's own pages")]
    CrossSite,
}

/// What the guard knows of one request.
#[derive(Debug, Clone, Copy)]
pub struct Request<'a> {
    /// Whether the method may write (anything but GET and HEAD).
    pub writes: bool,
    /// The `Host` header.
    pub host: Option<&'a str>,
    /// The `Origin` header.
    pub origin: Option<&'a str>,
    /// The `Sec-Fetch-Site` header.
    pub fetch_site: Option<&'a str>,
}

/// Admits `request` when its host is one of `served` (`host:port`) and,
/// for a write, it comes from a page of that same origin.
pub fn admit(request: Request<'_>, served: &[String]) -> Result<(), Refusal> {
    let host = request.host.unwrap_or_default();
    if !served.iter().any(|s| s.eq_ignore_ascii_case(host)) {
        return Err(Refusal::Host {
            host: host.to_owned(),
            served: served.join(", "),
        });
    }
    if let Some(origin) = request.origin
        && !origin.eq_ignore_ascii_case(&format!("http://{host}"))
    {
        return Err(Refusal::Origin {
            origin: origin.to_owned(),
        });
    }
    if request.writes {
        let same_site = matches!(request.fetch_site, None | Some("same-origin" | "none"));
        if request.origin.is_none() || !same_site {
            return Err(Refusal::CrossSite);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn served() -> Vec<String> {
        vec!["127.0.0.1:8000".into(), "localhost:8000".into()]
    }

    /// (writes, host, origin, sec-fetch-site, admitted)
    type Case<'a> = (
        bool,
        Option<&'a str>,
        Option<&'a str>,
        Option<&'a str>,
        bool,
    );

    #[test]
    fn only_the_served_hosts_and_own_origin_writes_pass() {
        // (writes, host, origin, sec-fetch-site, admitted)
        let table: &[Case] = &[
            (false, Some("127.0.0.1:8000"), None, None, true),
            (false, Some("LOCALHOST:8000"), None, None, true),
            (false, Some("localhost:8000"), None, Some("none"), true),
            // DNS rebinding: the attacker's name resolved to 127.0.0.1.
            (false, Some("evil.example:8000"), None, None, false),
            (false, Some("127.0.0.1:8001"), None, None, false),
            (false, Some("127.0.0.1"), None, None, false),
            (false, None, None, None, false),
            // A page elsewhere reading with fetch.
            (
                false,
                Some("127.0.0.1:8000"),
                Some("http://evil.example"),
                None,
                false,
            ),
            (
                true,
                Some("127.0.0.1:8000"),
                Some("http://127.0.0.1:8000"),
                Some("same-origin"),
                true,
            ),
            (
                true,
                Some("127.0.0.1:8000"),
                Some("http://127.0.0.1:8000"),
                None,
                true,
            ),
            // A form posted from another site, or from the other name.
            (
                true,
                Some("127.0.0.1:8000"),
                Some("http://evil.example"),
                Some("cross-site"),
                false,
            ),
            (
                true,
                Some("127.0.0.1:8000"),
                Some("http://localhost:8000"),
                None,
                false,
            ),
            (true, Some("127.0.0.1:8000"), Some("null"), None, false),
            (true, Some("127.0.0.1:8000"), None, None, false),
            (
                true,
                Some("127.0.0.1:8000"),
                Some("http://127.0.0.1:8000"),
                Some("cross-site"),
                false,
            ),
        ];
        for &(writes, host, origin, fetch_site, admitted) in table {
            let request = Request {
                writes,
                host,
                origin,
                fetch_site,
            };
            assert_eq!(admit(request, &served()).is_ok(), admitted, "{request:?}");
        }
    }

    #[test]
    fn a_refused_host_names_what_is_served() {
        let request = Request {
            writes: false,
            host: Some("evil.example:8000"),
            origin: None,
            fetch_site: None,
        };
        let message = admit(request, &served()).unwrap_err().to_string();
        assert!(
            message.contains("127.0.0.1:8000, localhost:8000"),
            "{message}"
        );
        assert!(message.contains("evil.example:8000"), "{message}");
    }
}
