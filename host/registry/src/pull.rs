//! Reads a manifest from a registry with its cap enforced while the bytes
//! arrive. oci-client reads a whole answer before anyone can look at its
//! size, so a registry streaming a manifest that never ends had the host
//! hold hundreds of MiB before the 1 MiB cap refused it; here the read
//! stops at the first byte past the cap.

use oci_client::errors::OciEnvelope;
use oci_client::secrets::RegistryAuth;
use reqwest::StatusCode;
use seams_model::input_text::escape_line;

use crate::artifact::MAX_MANIFEST_BYTES;
use crate::{Reference, RegistryError, root_cause};

/// How much of a refusal's body is read, to find the registry's error
/// codes and message in it.
const REFUSAL_BYTES: usize = 16 << 10;

/// How a request proves who asks.
pub(crate) enum Credentials {
    /// Nothing: an anonymous pull.
    Anonymous,
    /// A token from the registry's token service (or the user's own).
    Bearer(String),
    /// A user name and password, for a registry that takes them as they
    /// are.
    Basic(String, String),
}

impl Credentials {
    /// The credentials for a request, from the token oci-client's
    /// handshake got (if the registry asked for one) and the user's.
    pub(crate) fn of(token: Option<String>, auth: &RegistryAuth) -> Credentials {
        match (token, auth) {
            (Some(token), _) => Credentials::Bearer(token),
            (None, RegistryAuth::Bearer(token)) => Credentials::Bearer(token.clone()),
            (None, RegistryAuth::Basic(user, password)) => {
                Credentials::Basic(user.clone(), password.clone())
            }
            (None, RegistryAuth::Anonymous) => Credentials::Anonymous,
        }
    }
}

/// The manifest `target` names, as bytes, refused as soon as it passes
/// [`MAX_MANIFEST_BYTES`].
pub(crate) async fn manifest(
    http: &reqwest::Client,
    scheme: &str,
    reference: &Reference,
    target: &oci_client::Reference,
    credentials: &Credentials,
    accept: &str,
) -> Result<Vec<u8>, RegistryError> {
    let at = target
        .digest()
        .or(target.tag())
        .unwrap_or("latest")
        .to_owned();
    let url = format!(
        "{scheme}://{}/v2/{}/manifests/{at}",
        target.resolve_registry(),
        target.repository()
    );
    let request = http.get(&url).header(reqwest::header::ACCEPT, accept);
    let request = match credentials {
        Credentials::Anonymous => request,
        Credentials::Bearer(token) => request.bearer_auth(token),
        Credentials::Basic(user, password) => request.basic_auth(user, Some(password)),
    };
    let failed = |e: reqwest::Error| network_error(reference, &e);
    let mut response = request.send().await.map_err(failed)?;
    let status = response.status();
    if !status.is_success() {
        let (body, _) = read_capped(&mut response, REFUSAL_BYTES)
            .await
            .unwrap_or_default();
        return Err(refusal(reference, status, &body));
    }
    let too_big = || RegistryError::NotAComponent {
        reference: reference.to_string(),
        why: format!("its manifest is more than {MAX_MANIFEST_BYTES} bytes"),
    };
    if response
        .content_length()
        .is_some_and(|n| n > MAX_MANIFEST_BYTES as u64)
    {
        return Err(too_big());
    }
    match read_capped(&mut response, MAX_MANIFEST_BYTES)
        .await
        .map_err(failed)?
    {
        (body, false) => Ok(body),
        (_, true) => Err(too_big()),
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
    let registry = reference.registry().to_owned();
    let envelope: Option<OciEnvelope> = serde_json::from_slice(body).ok();
    let codes: Vec<String> = envelope
        .iter()
        .flat_map(|e| &e.errors)
        .map(|e| format!("{:?}", e.code))
        .collect();
    let named = |wanted: &[&str]| codes.iter().any(|c| wanted.contains(&c.as_str()));
    if status == StatusCode::NOT_FOUND
        || named(&["ManifestUnknown", "NameUnknown", "NotFound", "BlobUnknown"])
    {
        return RegistryError::NotFound {
            reference: reference.to_string(),
        };
    }
    if matches!(status, StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN)
        || named(&["Unauthorized", "Denied"])
    {
        return RegistryError::Unauthorized { registry };
    }
    let message = envelope
        .and_then(|e| e.errors.into_iter().next())
        .map(|e| e.message)
        .unwrap_or_else(|| String::from_utf8_lossy(body).into_owned());
    RegistryError::Registry {
        registry,
        reason: escape_line(&format!("HTTP {}: {message}", status.as_u16()), 300).into_owned(),
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
}
