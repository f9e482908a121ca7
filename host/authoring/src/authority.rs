//! Which provider drafting may use: authority comes from the user. A
//! provider command runs code and an API call spends a key, so each of
//! `provider`, `base_url` and `key_env` is taken from the command line,
//! else the user's own configuration (`~/.config/seams/config.toml`'s
//! `[propose]`), else the project's `[propose]` only when the user trusted
//! those exact settings with `seams trust`. An untrusted project that sets
//! one that would be used is refused, naming it. A key goes to the
//! vendor's documented host unless the user chose the base URL, and never
//! over plain HTTP to a host other than this machine.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use seams_core::{Authority, Project};

use crate::provider::Provider;

/// The user's configuration file: `$SEAMS_CONFIG`, else the user's
/// configuration directory's `seams/config.toml`.
pub fn config_path() -> Option<PathBuf> {
    match std::env::var_os("SEAMS_CONFIG") {
        Some(path) if !path.is_empty() => Some(PathBuf::from(path)),
        _ => dirs::config_dir().map(|d| d.join("seams").join("config.toml")),
    }
}

/// The user's configuration: only what carries authority, and the model.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct UserConfig {
    #[serde(default)]
    propose: UserPropose,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct UserPropose {
    provider: Option<String>,
    base_url: Option<String>,
    key_env: Option<String>,
    model: Option<String>,
}

/// The authority the user's configuration at `path` gives, and its LLM
/// model; nothing when there is no file.
///
/// # Errors
///
/// A file that is not the user's own (owned by another user, writable by
/// others, a link), or not valid TOML of the known keys.
fn read_config(path: &Path) -> Result<(Authority, Option<String>), String> {
    let shown = path.display();
    let meta = match std::fs::symlink_metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Default::default()),
        Err(e) => return Err(format!("{shown}: {e}")),
    };
    if !meta.is_file() || !seams_runtime::private(&meta) {
        return Err(format!(
            "{shown}: not a regular file of yours that nobody else may write; seams takes provider settings only from your own configuration (chmod go-w, or remove it)"
        ));
    }
    if meta.len() > 1 << 20 {
        return Err(format!(
            "{shown}: over 1 MiB; a configuration is a few lines"
        ));
    }
    let text = std::fs::read_to_string(path).map_err(|e| format!("{shown}: {e}"))?;
    let config: UserConfig =
        toml::from_str(&text).map_err(|e| format!("{shown}: {}", e.message()))?;
    let p = config.propose;
    Ok((
        Authority {
            provider: p.provider,
            base_url: p.base_url,
            key_env: p.key_env,
        },
        p.model,
    ))
}

/// Where each setting came from, which decides where a key may go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Source {
    /// The command line.
    CommandLine,
    /// The user's configuration file.
    UserConfig,
    /// The project's `[propose]`, which the user trusted.
    TrustedProject,
}

/// A setting and where it came from.
type Chosen = Option<(String, Source)>;

/// The settings chosen from the command line, the user's configuration and
/// the project (`trusted` or not), in that order: pure, so that every
/// combination is tested as a table.
///
/// # Errors
///
/// The project sets a setting that would be used and is not trusted.
pub(crate) fn choose(
    command_line: &Authority,
    user: &Authority,
    project: &Authority,
    trusted: bool,
) -> Result<[Chosen; 3], Vec<&'static str>> {
    let mut untrusted = Vec::new();
    let mut pick =
        |key: &'static str, get: fn(&Authority) -> &Option<String>, used: bool| -> Chosen {
            if let Some(v) = get(command_line) {
                return Some((v.clone(), Source::CommandLine));
            }
            if let Some(v) = get(user) {
                return Some((v.clone(), Source::UserConfig));
            }
            let v = get(project).as_ref()?;
            if trusted {
                Some((v.clone(), Source::TrustedProject))
            } else {
                if used {
                    untrusted.push(key);
                }
                None
            }
        };
    let provider = pick("provider", |a| &a.provider, true);
    // An API's settings matter only for an API provider (or none yet).
    let api = provider
        .as_ref()
        .is_none_or(|(spec, _)| spec.starts_with("api:"));
    let base_url = pick("base_url", |a| &a.base_url, api);
    let key_env = pick("key_env", |a| &a.key_env, api);
    if untrusted.is_empty() {
        Ok([provider, base_url, key_env])
    } else {
        Err(untrusted)
    }
}

/// Whether a key may be sent to `base_url`: over HTTPS anywhere, over
/// plain HTTP only to this machine (a loopback address or `localhost`).
pub(crate) fn may_carry_a_key(base_url: &str) -> Result<(), String> {
    let Ok(url) = reqwest::Url::parse(base_url) else {
        return Err(format!("base_url {base_url:?} is not a URL"));
    };
    match url.scheme() {
        "https" => Ok(()),
        "http" => {
            let loopback = match url.host() {
                Some(url::Host::Domain(name)) => name.eq_ignore_ascii_case("localhost"),
                Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
                Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
                None => false,
            };
            if loopback {
                Ok(())
            } else {
                Err(format!(
                    "base_url {base_url:?} is plain HTTP to another machine: an API key would cross the network readable by anyone on the way; use https://, or a server on this machine (127.0.0.1, localhost)"
                ))
            }
        }
        other => Err(format!(
            "base_url {base_url:?} is not an http:// or https:// URL ({other})"
        )),
    }
}

/// The provider drafting uses for `project`: `--provider`, `--base-url`
/// and `--key-env` (`command_line`), else the user's configuration, else
/// the project's `[propose]` if the user trusted it; and the LLM model
/// the user's configuration names, if any. `None` when nothing names a
/// provider.
///
/// # Errors
///
/// An unreadable user configuration, a project whose untrusted settings
/// would be used, a provider that does not parse, or a base URL a key
/// may not go to.
pub(crate) fn provider_for(
    project: &Project,
    command_line: &Authority,
) -> Result<(Option<Provider>, Option<String>), String> {
    let (user, user_model) = match config_path() {
        Some(path) => read_config(&path)?,
        None => Default::default(),
    };
    let from_project = Authority::of(&project.propose);
    let trusted = !from_project.is_empty()
        && seams_core::trusted(project).map_err(|e| format!("the trust record: {e}"))?;
    let [provider, base_url, key_env] =
        choose(command_line, &user, &from_project, trusted).map_err(|keys| {
            format!(
                "seams.toml's [propose] sets {}, which would run a command or send a key, and seams takes those only from you: pass --provider (--base-url, --key-env), put them in {}, or, if you wrote this project's settings or read them, run `seams trust` in it",
                keys.join(", "),
                config_path().map_or("your configuration".into(), |p| p.display().to_string())
            )
        })?;
    let Some((spec, _)) = provider else {
        return Ok((None, user_model));
    };
    let provider = Provider::parse(
        &spec,
        base_url.as_ref().map(|(v, _)| v.as_str()),
        key_env.as_ref().map(|(v, _)| v.as_str()),
    )?;
    if let Provider::Api { base_url: url, .. } = &provider {
        may_carry_a_key(url)?;
    }
    Ok((Some(provider), user_model))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(provider: Option<&str>, base_url: Option<&str>, key_env: Option<&str>) -> Authority {
        Authority {
            provider: provider.map(str::to_owned),
            base_url: base_url.map(str::to_owned),
            key_env: key_env.map(str::to_owned),
        }
    }

    #[test]
    fn a_project_gives_authority_only_when_trusted() {
        use Source::*;
        let none = Authority::default();
        let evil = set(
            Some("sh -c 'curl evil'"),
            Some("http://evil/v1"),
            Some("AWS_SECRET"),
        );
        let url_only = set(None, Some("https://evil/v1"), None);
        let cli_api = set(Some("api:openai"), None, None);
        let cli_cmd = set(Some("./fake"), None, None);
        let user = set(Some("api:anthropic"), Some("https://llm.local/v1"), None);
        type Row<'a> = (
            &'a Authority,
            &'a Authority,
            &'a Authority,
            bool,
            Result<[Option<Source>; 3], Vec<&'static str>>,
        );
        let table: Vec<Row> = vec![
            // Untrusted: every setting that would be used is refused.
            (
                &none,
                &none,
                &evil,
                false,
                Err(vec!["provider", "base_url", "key_env"]),
            ),
            (
                &cli_api,
                &none,
                &evil,
                false,
                Err(vec!["base_url", "key_env"]),
            ),
            (&cli_api, &none, &url_only, false, Err(vec!["base_url"])),
            // A command from the user makes the API settings moot.
            (
                &cli_cmd,
                &none,
                &evil,
                false,
                Ok([Some(CommandLine), None, None]),
            ),
            // The user's configuration wins over the project's.
            (&none, &user, &evil, false, Err(vec!["key_env"])),
            (
                &none,
                &user,
                &url_only,
                false,
                Ok([Some(UserConfig), Some(UserConfig), None]),
            ),
            // Trusted: used where the user did not say.
            (&none, &none, &evil, true, Ok([Some(TrustedProject); 3])),
            (
                &cli_api,
                &user,
                &evil,
                true,
                Ok([Some(CommandLine), Some(UserConfig), Some(TrustedProject)]),
            ),
            (&none, &none, &none, false, Ok([None, None, None])),
        ];
        for (cli, user, project, trusted, want) in table {
            let got = choose(cli, user, project, trusted)
                .map(|chosen| chosen.map(|c| c.map(|(_, source)| source)));
            assert_eq!(got, want, "{cli:?} {user:?} {project:?} {trusted}");
        }
    }

    #[test]
    fn a_key_crosses_the_network_only_over_https() {
        for ok in [
            "https://api.openai.com/v1",
            "https://10.0.0.1:8443/v1",
            "http://127.0.0.1:11434/v1",
            "http://127.8.9.10/v1",
            "http://localhost:8080/v1",
            "http://[::1]:8080/v1",
        ] {
            assert_eq!(may_carry_a_key(ok), Ok(()), "{ok}");
        }
        for refused in [
            "http://evil.example/v1",
            "http://10.0.0.1/v1",
            "http://localhost.evil.example/v1",
            "http://127.0.0.1.nip.io/v1",
            "ftp://127.0.0.1/v1",
            "not a url",
        ] {
            assert!(may_carry_a_key(refused).is_err(), "{refused}");
        }
    }

    #[test]
    fn a_configuration_anyone_could_write_is_refused() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        assert_eq!(read_config(&path).unwrap().0, Authority::default());
        std::fs::write(
            &path,
            "[propose]\nprovider = \"api:openai\"\nmodel = \"m\"\n",
        )
        .unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        let (authority, model) = read_config(&path).unwrap();
        assert_eq!(authority.provider.as_deref(), Some("api:openai"));
        assert_eq!(model.as_deref(), Some("m"));
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o666)).unwrap();
        assert!(
            read_config(&path)
                .unwrap_err()
                .contains("nobody else may write")
        );
        std::fs::write(dir.path().join("bad.toml"), "[propose]\nretries = 3\n").unwrap();
        assert!(read_config(&dir.path().join("bad.toml")).is_err());
    }
}
