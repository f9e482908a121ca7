//! Who seams is at a registry: a login from the environment for the one
//! registry it names, else what Docker's config file gives (`auths`,
//! `credHelpers`, `credsStore`), else anonymous. Never `seams.toml`.

use oci_client::secrets::RegistryAuth;

use crate::RegistryError;

/// A user name and password for one registry, from the environment
/// (`SEAMS_REGISTRY_HOST`, `SEAMS_REGISTRY_USERNAME`,
/// `SEAMS_REGISTRY_PASSWORD`). Scoped to that registry so that a
/// `seams.toml` naming another one never receives it.
#[derive(Clone, PartialEq, Eq)]
pub struct Login {
    /// The registry it is for (host and port, as references write it).
    pub registry: String,
    /// The user name.
    pub username: String,
    /// The password or token.
    pub password: String,
}

impl std::fmt::Debug for Login {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Login")
            .field("registry", &self.registry)
            .field("username", &self.username)
            .finish_non_exhaustive()
    }
}

impl Login {
    /// The login the environment gives, if it gives all three variables.
    pub fn from_env() -> Option<Login> {
        let var = |name| std::env::var(name).ok().filter(|v| !v.is_empty());
        Some(Login {
            registry: var("SEAMS_REGISTRY_HOST")?,
            username: var("SEAMS_REGISTRY_USERNAME")?,
            password: var("SEAMS_REGISTRY_PASSWORD")?,
        })
    }
}

/// The credentials for `registry`.
pub(crate) fn auth(
    registry: &str,
    login: Option<&Login>,
    docker_config: bool,
) -> Result<RegistryAuth, RegistryError> {
    if let Some(login) = login.filter(|l| l.registry == registry) {
        return Ok(RegistryAuth::Basic(
            login.username.clone(),
            login.password.clone(),
        ));
    }
    if !docker_config {
        return Ok(RegistryAuth::Anonymous);
    }
    use docker_credential::{CredentialRetrievalError as E, DockerCredential};
    match docker_credential::get_credential(registry) {
        Ok(DockerCredential::UsernamePassword(user, password)) => {
            Ok(RegistryAuth::Basic(user, password))
        }
        Ok(DockerCredential::IdentityToken(token)) => Ok(RegistryAuth::Bearer(token)),
        Err(E::ConfigNotFound | E::NoCredentialConfigured | E::ConfigReadError) => {
            Ok(RegistryAuth::Anonymous)
        }
        Err(e) => Err(RegistryError::Credentials {
            registry: registry.to_owned(),
            // The helper's own words may carry secrets or escapes: only
            // the kind of failure is shown.
            why: match e {
                E::HelperCommunicationError => "its credential helper could not be run".into(),
                E::HelperFailure { .. } => "its credential helper failed".into(),
                E::MalformedHelperResponse => {
                    "its credential helper gave an answer seams cannot read".into()
                }
                E::CredentialDecodingError => {
                    "its entry in Docker's config file is not base64 user:password".into()
                }
                _ => "Docker's config file could not be read".into(),
            },
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_login_goes_only_to_its_registry() {
        let login = Login {
            registry: "127.0.0.1:5000".into(),
            username: "me".into(),
            password: "secret".into(),
        };
        assert!(matches!(
            auth("127.0.0.1:5000", Some(&login), false).unwrap(),
            RegistryAuth::Basic(u, p) if u == "me" && p == "secret"
        ));
        assert!(matches!(
            auth("evil.example:5000", Some(&login), false).unwrap(),
            RegistryAuth::Anonymous
        ));
        assert!(!format!("{login:?}").contains("secret"));
    }
}
