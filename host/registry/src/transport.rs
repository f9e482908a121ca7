//! The connection to a registry: plain HTTP or HTTPS, and how long it may
//! take.

use std::time::Duration;

use oci_client::client::ClientProtocol;

use crate::Reference;

/// How long a connection may take to open, and a read to bring bytes.
pub(crate) const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
pub(crate) const READ_TIMEOUT: Duration = Duration::from_secs(30);

/// The URL scheme [`protocol`] chooses.
pub(crate) fn scheme(reference: &Reference, insecure: &[String]) -> &'static str {
    match protocol(reference, insecure) {
        ClientProtocol::Http => "http",
        _ => "https",
    }
}

/// Plain HTTP for a registry on a loopback address (as Docker does) or one
/// the user names as insecure; HTTPS for every other.
pub(crate) fn protocol(reference: &Reference, insecure: &[String]) -> ClientProtocol {
    if reference.is_loopback() || insecure.iter().any(|r| r == reference.registry()) {
        ClientProtocol::Http
    } else {
        ClientProtocol::Https
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_loopback_and_named_registries_go_without_tls() {
        let insecure = vec!["registry.lan:5000".to_owned()];
        for (reference, expected) in [
            ("127.0.0.1:5000/a:1", ClientProtocol::Http),
            ("localhost:5000/a:1", ClientProtocol::Http),
            ("registry.lan:5000/a:1", ClientProtocol::Http),
            ("registry.lan/a:1", ClientProtocol::Https),
            ("ghcr.io/a/b:1", ClientProtocol::Https),
            ("10.0.0.1:5000/a:1", ClientProtocol::Https),
        ] {
            let reference: Reference = reference.parse().unwrap();
            assert_eq!(protocol(&reference, &insecure), expected, "{reference}");
        }
    }
}
