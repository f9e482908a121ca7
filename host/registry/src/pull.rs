//! Pulls from a registry with every cap enforced while the bytes arrive.
//! oci-client reads whole answers (a manifest, a token service's answer)
//! before anyone can look at their size, so a registry streaming one that
//! never ends had the host hold hundreds of MiB before a cap refused it;
//! here each read stops at the first byte past its cap. Publishing stays
//! on oci-client: there seams sends, and reads only short answers.

use oci_client::errors::{OciEnvelope, OciError, OciErrorCode};
use oci_client::secrets::RegistryAuth;
use reqwest::StatusCode;
use seams_model::input_text::escape_line;

use crate::artifact::{Layer, MAX_MANIFEST_BYTES, digest_of};
use crate::error::root_cause;
use crate::{Reference, RegistryError};

/// How much of a refusal's body is read, to find the registry's error
/// codes and message in it.
const REFUSAL_BYTES: usize = 16 << 10;

/// How much of a token service's answer is read: its tokens are a few
/// KiB (JWTs).
const TOKEN_BYTES: usize = 64 << 10;

/// How a request proves who asks.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Credentials {
    /// Nothing: an anonymous pull.
    Anonymous,
    /// A token from the registry's token service (or the user's own).
    Bearer(String),
    /// A user name and password, for a registry that takes them as they
    /// are.
    Basic(String, String),
}

impl Credentials {
    /// The user's own credentials, sent as they are.
    fn of(auth: &RegistryAuth) -> Credentials {
        match auth {
            RegistryAuth::Bearer(token) => Credentials::Bearer(token.clone()),
            RegistryAuth::Basic(user, password) => {
                Credentials::Basic(user.clone(), password.clone())
            }
            RegistryAuth::Anonymous => Credentials::Anonymous,
        }
    }

    fn apply(&self, request: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
        match self {
            Credentials::Anonymous => request,
            Credentials::Bearer(token) => request.bearer_auth(token),
            Credentials::Basic(user, password) => request.basic_auth(user, Some(password)),
        }
    }
}

/// Where a registry sends a client for a token: the parameters of its
/// `Bearer` challenge.
#[derive(Debug, PartialEq, Eq)]
struct TokenService {
    realm: String,
    service: Option<String>,
}

/// The token service a `WWW-Authenticate` header names, if it asks for a
/// Bearer token; `None` for any other scheme (Basic) or a header that does
/// not parse.
fn token_service(header: &str) -> Option<TokenService> {
    let challenges = http_auth::parse_challenges(header).ok()?;
    let bearer = challenges
        .into_iter()
        .find(|c| c.scheme.eq_ignore_ascii_case("bearer"))?;
    let param = |name: &str| {
        bearer
            .params
            .iter()
            .find(|(key, _)| key.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.to_unescaped())
    };
    Some(TokenService {
        realm: param("realm")?,
        service: param("service"),
    })
}

/// Reads one repository of one registry, with the credentials its
/// handshake gave.
pub(crate) struct Session<'a> {
    http: &'a reqwest::Client,
    reference: &'a Reference,
    /// `scheme://registry/v2/repository`.
    base: String,
    credentials: Credentials,
}

/// The user's own credentials for a host other than the registry (a token
/// service elsewhere), as they configured them; anonymous otherwise.
pub(crate) type CredentialsFor<'f> =
    &'f (dyn Fn(&str) -> Result<RegistryAuth, RegistryError> + Sync);

/// Whether `url`'s host is this machine: a loopback address or
/// `localhost`.
fn loopback(url: &reqwest::Url) -> bool {
    match url.host() {
        Some(url::Host::Domain(name)) => name.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    }
}

/// `host[:port]` of `url`, as references write a registry.
fn authority(url: &reqwest::Url) -> String {
    let host = url.host_str().unwrap_or_default();
    match url.port() {
        Some(port) => format!("{host}:{port}"),
        None => host.to_owned(),
    }
}

/// Which credentials go to a token service at `realm` for a registry at
/// `registry` (`scheme://host[:port]/v2/`): the user's for that registry
/// when the realm is on the same host and port; else only what the user
/// configured for the realm's own host, and never over plain HTTP to
/// another machine. A registry reached over HTTPS whose realm is plain
/// HTTP is refused. Pure, so that every case is a row of a table.
fn realm_credentials(
    registry: &reqwest::Url,
    realm: &reqwest::Url,
    own: &RegistryAuth,
    elsewhere: CredentialsFor<'_>,
) -> Result<Credentials, String> {
    if registry.scheme() == "https" && realm.scheme() != "https" {
        return Err(format!(
            "is at {realm}, plain HTTP, though the registry is HTTPS; seams sends nothing there"
        ));
    }
    let same = realm.scheme() == registry.scheme() && authority(realm) == authority(registry);
    if same {
        return Ok(Credentials::of(own));
    }
    let theirs = elsewhere(&authority(realm)).map_err(|e| e.to_string())?;
    if realm.scheme() == "http" && !loopback(realm) {
        return Ok(Credentials::Anonymous);
    }
    Ok(Credentials::of(&theirs))
}

impl<'a> Session<'a> {
    /// Finds out how the registry wants pulls of `target`'s repository
    /// proved: the user's token as it is; else, when `/v2/` answers with a
    /// Bearer challenge, a token from the service it names (asked with the
    /// user's password if there is one); else the user's credentials, if
    /// any, as they are.
    pub(crate) async fn open(
        http: &'a reqwest::Client,
        scheme: &str,
        reference: &'a Reference,
        target: &oci_client::Reference,
        auth: &RegistryAuth,
        elsewhere: CredentialsFor<'_>,
    ) -> Result<Session<'a>, RegistryError> {
        let registry = format!("{scheme}://{}/v2/", target.resolve_registry());
        let mut session = Session {
            http,
            reference,
            base: format!("{registry}{}", target.repository()),
            credentials: Credentials::of(auth),
        };
        if matches!(auth, RegistryAuth::Bearer(_)) {
            return Ok(session);
        }
        // Only the headers are read: the body is dropped unread.
        let probe = http
            .get(&registry)
            .send()
            .await
            .map_err(|e| network_error(reference, &e))?;
        let service = (probe.status() == StatusCode::UNAUTHORIZED)
            .then(|| probe.headers().get(reqwest::header::WWW_AUTHENTICATE))
            .flatten()
            .and_then(|h| h.to_str().ok())
            .and_then(token_service);
        if let Some(service) = service {
            let token = session
                .token(&service, &registry, auth, elsewhere, target.repository())
                .await?;
            session.credentials = Credentials::Bearer(token);
        }
        Ok(session)
    }

    /// A pull token for `repository` from the registry's token service.
    async fn token(
        &self,
        service: &TokenService,
        registry: &str,
        own: &RegistryAuth,
        elsewhere: CredentialsFor<'_>,
        repository: &str,
    ) -> Result<String, RegistryError> {
        let failed = |why: String| RegistryError::Registry {
            registry: self.reference.registry().to_owned(),
            reason: escape_line(&format!("its token service {why}"), 300).into_owned(),
        };
        let mut url = reqwest::Url::parse(&service.realm)
            .ok()
            .filter(|u| matches!(u.scheme(), "http" | "https"))
            .ok_or_else(|| failed(format!("is not an HTTP URL: {}", service.realm)))?;
        url.query_pairs_mut()
            .append_pair("scope", &format!("repository:{repository}:pull"));
        if let Some(name) = &service.service {
            url.query_pairs_mut().append_pair("service", name);
        }
        let registry = reqwest::Url::parse(registry).map_err(|e| {
            failed(format!(
                "cannot be checked against the registry's address: {e}"
            ))
        })?;
        let credentials = realm_credentials(&registry, &url, own, elsewhere).map_err(failed)?;
        let (body, more) = self
            .read_with(&credentials, self.http.get(url), TOKEN_BYTES as u64)
            .await?;
        if more {
            return Err(failed(format!("answered more than {TOKEN_BYTES} bytes")));
        }
        #[derive(serde::Deserialize)]
        struct Answer {
            token: Option<String>,
            access_token: Option<String>,
        }
        serde_json::from_slice::<Answer>(&body)
            .ok()
            .and_then(|a| a.token.or(a.access_token))
            .filter(|t| reqwest::header::HeaderValue::from_str(t).is_ok())
            .ok_or_else(|| failed("answered without a token".to_owned()))
    }

    /// The manifest at `at` (a tag or digest), as bytes, refused as soon
    /// as it passes [`MAX_MANIFEST_BYTES`].
    pub(crate) async fn manifest(&self, at: &str, accept: &str) -> Result<Vec<u8>, RegistryError> {
        let too_big = || RegistryError::NotAComponent {
            reference: self.reference.to_string(),
            why: format!("its manifest is more than {MAX_MANIFEST_BYTES} bytes"),
        };
        let request = self
            .http
            .get(format!("{}/manifests/{at}", self.base))
            .header(reqwest::header::ACCEPT, accept);
        match self.read(request, MAX_MANIFEST_BYTES as u64).await? {
            (body, false) => Ok(body),
            (_, true) => Err(too_big()),
        }
    }

    /// The layer's bytes, at most its declared size, checked against its
    /// digest.
    pub(crate) async fn blob(&self, layer: &Layer) -> Result<Vec<u8>, RegistryError> {
        let mismatch = |actual: String| RegistryError::Mismatch {
            reference: self.reference.to_string(),
            what: "component",
            expected: layer.digest.clone(),
            actual,
        };
        let request = self
            .http
            .get(format!("{}/blobs/{}", self.base, layer.digest));
        let (bytes, more) = self.read(request, layer.size).await?;
        if more {
            return Err(mismatch(format!(
                "more than the {} bytes its manifest gives",
                layer.size
            )));
        }
        let actual = digest_of(&bytes);
        if actual != layer.digest {
            return Err(mismatch(actual));
        }
        Ok(bytes)
    }

    /// The answer to `request` with the session's credentials: up to `cap`
    /// bytes of its body and whether more came (a `Content-Length` past
    /// the cap counts as more, unread), or what its refusal means.
    async fn read(
        &self,
        request: reqwest::RequestBuilder,
        cap: u64,
    ) -> Result<(Vec<u8>, bool), RegistryError> {
        self.read_with(&self.credentials, request, cap).await
    }

    /// [`Session::read`] with `credentials`.
    async fn read_with(
        &self,
        credentials: &Credentials,
        request: reqwest::RequestBuilder,
        cap: u64,
    ) -> Result<(Vec<u8>, bool), RegistryError> {
        let failed = |e: reqwest::Error| network_error(self.reference, &e);
        let mut response = credentials.apply(request).send().await.map_err(failed)?;
        let status = response.status();
        if !status.is_success() {
            let (body, _) = read_capped(&mut response, REFUSAL_BYTES)
                .await
                .unwrap_or_default();
            return Err(refusal(self.reference, status, &body));
        }
        if response.content_length().is_some_and(|n| n > cap) {
            return Ok((Vec::new(), true));
        }
        let cap = usize::try_from(cap).unwrap_or(usize::MAX);
        read_capped(&mut response, cap).await.map_err(failed)
    }
}

/// Up to `cap` bytes of the body, and whether more came.
async fn read_capped(
    response: &mut reqwest::Response,
    cap: usize,
) -> Result<(Vec<u8>, bool), reqwest::Error> {
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await? {
        let room = cap - body.len();
        if chunk.len() > room {
            body.extend_from_slice(&chunk[..room]);
            return Ok((body, true));
        }
        body.extend_from_slice(&chunk);
    }
    Ok((body, false))
}

/// What a refused request means for the user, from its status and the
/// error codes of the OCI envelope in its body.
fn refusal(reference: &Reference, status: StatusCode, body: &[u8]) -> RegistryError {
    let errors = serde_json::from_slice::<OciEnvelope>(body)
        .map(|e| e.errors)
        .unwrap_or_default();
    refused(
        reference,
        Some(status.as_u16()),
        &errors,
        &String::from_utf8_lossy(body),
    )
}

/// What a registry's refusal means for the user: its HTTP status (if
/// known), the OCI errors it gave, and what it said otherwise.
pub(crate) fn refused(
    reference: &Reference,
    status: Option<u16>,
    errors: &[OciError],
    said: &str,
) -> RegistryError {
    let registry = reference.registry().to_owned();
    let coded = |wanted: &[OciErrorCode]| errors.iter().any(|e| wanted.contains(&e.code));
    if status == Some(404)
        || coded(&[
            OciErrorCode::ManifestUnknown,
            OciErrorCode::NameUnknown,
            OciErrorCode::NotFound,
            OciErrorCode::BlobUnknown,
        ])
    {
        return RegistryError::NotFound {
            reference: reference.to_string(),
        };
    }
    if matches!(status, Some(401 | 403))
        || coded(&[OciErrorCode::Unauthorized, OciErrorCode::Denied])
    {
        return RegistryError::Unauthorized { registry };
    }
    let message = errors.first().map_or(said, |e| &e.message);
    let reason = match status {
        Some(code) => format!("HTTP {code}: {message}"),
        None => message.to_owned(),
    };
    RegistryError::Registry {
        registry,
        reason: escape_line(&reason, 300).into_owned(),
    }
}

/// A request that did not get an answer.
fn network_error(reference: &Reference, error: &reqwest::Error) -> RegistryError {
    let registry = reference.registry().to_owned();
    let reason = escape_line(&root_cause(error), 300).into_owned();
    if error.is_connect() || error.is_timeout() {
        RegistryError::Unreachable { registry, reason }
    } else {
        RegistryError::Registry { registry, reason }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refusal_is_read_for_what_it_means() {
        let reference: Reference = "127.0.0.1:5000/a/b:1".parse().unwrap();
        let envelope = |code: &str| {
            format!(r#"{{"errors":[{{"code":"{code}","message":"m \u001b[31m"}}]}}"#).into_bytes()
        };
        for (status, body, expected) in [
            (404, Vec::new(), "does not exist"),
            (400, envelope("MANIFEST_UNKNOWN"), "does not exist"),
            (401, Vec::new(), "refused access"),
            (400, envelope("DENIED"), "refused access"),
            (
                500,
                b"down \x1b[2J".to_vec(),
                "failed: HTTP 500: down \\u{1b}[2J",
            ),
            (
                400,
                envelope("UNSUPPORTED"),
                "failed: HTTP 400: m \\u{1b}[31m",
            ),
        ] {
            let error = refusal(&reference, StatusCode::from_u16(status).unwrap(), &body);
            assert!(error.to_string().contains(expected), "{status}: {error}");
        }
    }

    #[test]
    fn a_bearer_challenge_names_the_token_service() {
        let service = |realm: &str, name: Option<&str>| {
            Some(TokenService {
                realm: realm.to_owned(),
                service: name.map(str::to_owned),
            })
        };
        for (header, expected) in [
            (
                r#"Bearer realm="https://auth.docker.io/token",service="registry.docker.io",scope="repository:a/b:pull""#,
                service("https://auth.docker.io/token", Some("registry.docker.io")),
            ),
            (
                r#"bearer REALM="http://127.0.0.1:1/t""#,
                service("http://127.0.0.1:1/t", None),
            ),
            (
                r#"Basic realm="x", Bearer realm="https://a/\"q\"""#,
                service(r#"https://a/"q""#, None),
            ),
            (r#"Basic realm="seams-tests""#, None),
            (r#"Bearer service="no-realm""#, None),
            ("Bearer realm=", None),
            ("", None),
        ] {
            assert_eq!(token_service(header), expected, "{header}");
        }
    }

    #[test]
    fn a_password_goes_only_to_the_registry_or_where_the_user_sent_one() {
        let url = |u: &str| reqwest::Url::parse(u).unwrap();
        let own = RegistryAuth::Basic("me".into(), "secret".into());
        // The user configured credentials for auth.example only.
        let elsewhere = |host: &str| {
            Ok(if host == "auth.example" {
                RegistryAuth::Basic("me".into(), "their-secret".into())
            } else {
                RegistryAuth::Anonymous
            })
        };
        let mine = Credentials::Basic("me".into(), "secret".into());
        let theirs = Credentials::Basic("me".into(), "their-secret".into());
        let table: [(&str, &str, Result<Credentials, ()>); 9] = [
            (
                "https://reg.example/v2/",
                "https://reg.example/token",
                Ok(mine.clone()),
            ),
            (
                "http://127.0.0.1:5000/v2/",
                "http://127.0.0.1:5000/token",
                Ok(mine.clone()),
            ),
            // Another port of the same host is another service.
            (
                "http://127.0.0.1:5000/v2/",
                "http://127.0.0.1:6000/token",
                Ok(Credentials::Anonymous),
            ),
            (
                "https://reg.example/v2/",
                "https://evil.example/token",
                Ok(Credentials::Anonymous),
            ),
            (
                "https://reg.example/v2/",
                "https://auth.example/token",
                Ok(theirs),
            ),
            // An HTTPS registry's realm must be HTTPS.
            (
                "https://reg.example/v2/",
                "http://reg.example/token",
                Err(()),
            ),
            ("https://reg.example/v2/", "http://127.0.0.1/token", Err(())),
            // Plain HTTP to another machine gets no password, even one
            // the user gave for it.
            (
                "http://reg.lan:5000/v2/",
                "http://auth.example/token",
                Ok(Credentials::Anonymous),
            ),
            (
                "http://reg.lan:5000/v2/",
                "http://reg.lan:5000/token",
                Ok(mine),
            ),
        ];
        for (registry, realm, want) in table {
            let got = realm_credentials(&url(registry), &url(realm), &own, &elsewhere);
            assert_eq!(got.map_err(|_| ()), want, "{registry} {realm}");
        }
    }
}
