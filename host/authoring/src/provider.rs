//! Where a draft's answer comes from (ADR-0012: bring your own key):
//!
//! - a **command**, split like a shell would (shlex) and run with no
//!   shell: the prompt on stdin, the answer on stdout, the LLM model in
//!   `SEAMS_LLM_MODEL`;
//! - `api:openai`: the OpenAI-compatible chat completions API (OpenAI,
//!   Ollama, vLLM, llama.cpp's server, LM Studio), `POST
//!   {base}/chat/completions` with `Authorization: Bearer KEY`;
//! - `api:anthropic`: Anthropic's messages API, `POST {base}/messages`
//!   with `x-api-key: KEY`.
//!
//! An API key is read from the environment variable `[propose] key_env`
//! names when the call is made, sent only in its header, and scrubbed from
//! anything the server says back: it never reaches the cache, the prompt,
//! an error or a file. A failure is never passed to another provider;
//! one that cannot be fixed by asking again (the command cannot be
//! started, no key, a refused key) stops drafting at once.

use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};

use crate::child::{Bounded, Bounds, Ended};

/// The most bytes read of an answer: a provider is not trusted either.
pub(crate) const ANSWER_CAP: usize = 4 << 20;

/// Which HTTP API.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Api {
    /// OpenAI-compatible chat completions.
    OpenAi,
    /// Anthropic messages.
    Anthropic,
}

impl Api {
    fn name(self) -> &'static str {
        match self {
            Api::OpenAi => "api:openai",
            Api::Anthropic => "api:anthropic",
        }
    }

    fn default_base_url(self) -> &'static str {
        match self {
            Api::OpenAi => "https://api.openai.com/v1",
            Api::Anthropic => "https://api.anthropic.com/v1",
        }
    }

    fn default_key_env(self) -> &'static str {
        match self {
            Api::OpenAi => "OPENAI_API_KEY",
            Api::Anthropic => "ANTHROPIC_API_KEY",
        }
    }
}

/// A provider, as `--provider` and `[propose]` name it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Provider {
    /// A command line, split into words.
    Command {
        /// The words.
        argv: Vec<String>,
        /// As written, for messages.
        line: String,
    },
    /// An HTTP API.
    Api {
        /// Which.
        api: Api,
        /// Its base URL, without a trailing slash.
        base_url: String,
        /// The environment variable holding the key.
        key_env: String,
    },
}

/// Why a provider gave no answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// What happened, naming the provider; never the key.
    pub message: String,
    /// Whether asking again cannot help: drafting stops at once.
    pub fatal: bool,
}

impl Failure {
    fn fatal(message: String) -> Failure {
        Failure {
            message,
            fatal: true,
        }
    }

    fn transient(message: String) -> Failure {
        Failure {
            message,
            fatal: false,
        }
    }
}

impl Provider {
    /// The provider `spec` names: `api:openai`, `api:anthropic`, else a
    /// command line.
    ///
    /// # Errors
    ///
    /// A command line that does not split into words, an unknown `api:`
    /// name, or a base URL that is not http(s).
    pub fn parse(
        spec: &str,
        base_url: Option<&str>,
        key_env: Option<&str>,
    ) -> Result<Provider, String> {
        let api = match spec {
            "api:openai" => Api::OpenAi,
            "api:anthropic" => Api::Anthropic,
            other if other.starts_with("api:") => {
                return Err(format!(
                    "unknown provider API {other:?}: use api:openai (chat completions, also Ollama, vLLM, llama.cpp, LM Studio) or api:anthropic"
                ));
            }
            line => {
                let argv = shlex::split(line)
                    .filter(|a| !a.is_empty())
                    .ok_or_else(|| {
                        format!(
                            "the provider command {line:?} cannot be split into words (unbalanced quotes?)"
                        )
                    })?;
                return Ok(Provider::Command {
                    argv,
                    line: line.to_owned(),
                });
            }
        };
        let base_url = base_url
            .unwrap_or(api.default_base_url())
            .trim_end_matches('/')
            .to_owned();
        if !(base_url.starts_with("http://") || base_url.starts_with("https://")) {
            return Err(format!(
                "[propose] base_url {base_url:?} is not an http:// or https:// URL"
            ));
        }
        Ok(Provider::Api {
            api,
            base_url,
            key_env: key_env.unwrap_or(api.default_key_env()).to_owned(),
        })
    }

    /// The provider as messages and the draft cache name it: no key.
    pub fn describe(&self) -> String {
        match self {
            Provider::Command { line, .. } => format!("provider `{line}`"),
            Provider::Api { api, base_url, .. } => format!("{} at {base_url}", api.name()),
        }
    }

    /// Asks for an answer to `prompt`; a command also gets the evaluation
    /// case, when there is one, as `SEAMS_EVAL_CASE`.
    ///
    /// # Errors
    ///
    /// [`Failure`], fatal when asking again cannot help.
    pub fn ask(
        &self,
        prompt: &str,
        llm_model: Option<&str>,
        timeout: Duration,
        eval_case: Option<&str>,
    ) -> Result<String, Failure> {
        match self {
            Provider::Command { argv, .. } => run_command(
                argv,
                &self.describe(),
                prompt,
                llm_model,
                timeout,
                eval_case,
            ),
            Provider::Api {
                api,
                base_url,
                key_env,
            } => {
                let model = llm_model.ok_or_else(|| {
                    Failure::fatal(format!(
                        "{} needs a model: pass --llm-model M or set model in [propose]",
                        api.name()
                    ))
                })?;
                let key = std::env::var(key_env)
                    .ok()
                    .filter(|k| !k.trim().is_empty())
                    .ok_or_else(|| {
                        Failure::fatal(format!(
                            "{}: the environment variable {key_env} holds no key; export your key there (seams never stores it)",
                            api.name()
                        ))
                    })?;
                call_api(*api, base_url, &key, key_env, model, prompt, timeout)
            }
        }
    }
}

/// The request body and headers of `api`, and where it goes.
fn request(api: Api, base_url: &str, model: &str, prompt: &str) -> (String, Value) {
    match api {
        Api::OpenAi => (
            format!("{base_url}/chat/completions"),
            json!({
                "model": model,
                "temperature": 0,
                "messages": [{"role": "user", "content": prompt}],
            }),
        ),
        Api::Anthropic => (
            format!("{base_url}/messages"),
            json!({
                "model": model,
                "max_tokens": 16384,
                "temperature": 0,
                "messages": [{"role": "user", "content": prompt}],
            }),
        ),
    }
}

/// The answer's text in an API's response body.
pub(crate) fn answer_text(api: Api, body: &Value) -> Option<String> {
    match api {
        Api::OpenAi => body["choices"][0]["message"]["content"]
            .as_str()
            .map(str::to_owned),
        Api::Anthropic => {
            let blocks = body["content"].as_array()?;
            let text: String = blocks
                .iter()
                .filter(|b| b["type"] == "text")
                .filter_map(|b| b["text"].as_str())
                .collect();
            (!text.is_empty()).then_some(text)
        }
    }
}

fn call_api(
    api: Api,
    base_url: &str,
    key: &str,
    key_env: &str,
    model: &str,
    prompt: &str,
    timeout: Duration,
) -> Result<String, Failure> {
    let name = api.name();
    // What the server says goes into messages: never with the key.
    let scrub = |text: &str| text.replace(key, "<key>");
    let (url, body) = request(api, base_url, model, prompt);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Failure::fatal(format!("{name}: cannot start an HTTP client: {e}")))?;
    let sent = runtime.block_on(async {
        // No redirects: reqwest drops `Authorization` on a redirect to
        // another host, but not Anthropic's `x-api-key`; a provider's API
        // answers where it is asked.
        let client = reqwest::Client::builder()
            .timeout(timeout)
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| Failure::fatal(format!("{name}: cannot start an HTTP client: {e}")))?;
        let mut call = client.post(&url).json(&body);
        call = match api {
            Api::OpenAi => call.bearer_auth(key),
            Api::Anthropic => call
                .header("x-api-key", key)
                .header("anthropic-version", "2023-06-01"),
        };
        let mut response = call.send().await.map_err(|e| {
            if e.is_timeout() {
                Failure::transient(format!(
                    "{name} at {url} did not answer within {} s; raise --timeout or [propose] timeout",
                    timeout.as_secs()
                ))
            } else {
                Failure::transient(format!("{name}: cannot reach {url}: {}", scrub(&e.to_string())))
            }
        })?;
        let status = response.status();
        let mut bytes = Vec::new();
        loop {
            match response.chunk().await {
                Ok(Some(chunk)) => {
                    if bytes.len() + chunk.len() > ANSWER_CAP {
                        return Err(Failure::transient(format!(
                            "{name} answered more than {ANSWER_CAP} bytes; seams reads no more"
                        )));
                    }
                    bytes.extend_from_slice(&chunk);
                }
                Ok(None) => break,
                Err(e) if e.is_timeout() => {
                    return Err(Failure::transient(format!(
                        "{name} at {url} did not finish its answer within {} s; raise --timeout or [propose] timeout",
                        timeout.as_secs()
                    )));
                }
                Err(e) => {
                    return Err(Failure::transient(format!(
                        "{name}: the answer broke off: {}",
                        scrub(&e.to_string())
                    )));
                }
            }
        }
        Ok((status, bytes))
    });
    let (status, bytes) = sent?;
    let text = scrub(&String::from_utf8_lossy(&bytes));
    let said = text.chars().take(300).collect::<String>();
    if status == reqwest::StatusCode::UNAUTHORIZED || status == reqwest::StatusCode::FORBIDDEN {
        return Err(Failure::fatal(format!(
            "{name} refused the key in {key_env} (HTTP {status}): {said}"
        )));
    }
    if !status.is_success() {
        return Err(Failure {
            message: format!("{name} at {url} failed with HTTP {status}: {said}"),
            // A server error may pass; a wrong URL or model will not.
            fatal: status.is_client_error() && status != reqwest::StatusCode::TOO_MANY_REQUESTS,
        });
    }
    let body: Value = serde_json::from_slice(&bytes).map_err(|e| {
        Failure::transient(format!(
            "{name} answered HTTP {status} with a body that is not JSON ({e}): {said}"
        ))
    })?;
    answer_text(api, &body).ok_or_else(|| {
        Failure::transient(format!(
            "{name} answered JSON without the answer's text (expected {}): {said}",
            match api {
                Api::OpenAi => "choices[0].message.content",
                Api::Anthropic => "content[].text",
            }
        ))
    })
}

/// Runs a provider command once.
fn run_command(
    argv: &[String],
    shown: &str,
    prompt: &str,
    llm_model: Option<&str>,
    timeout: Duration,
    eval_case: Option<&str>,
) -> Result<String, Failure> {
    let fail = |what: String| Failure::transient(format!("{shown} {what}"));
    let mut command = Command::new(&argv[0]);
    command
        .args(&argv[1..])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(model) = llm_model {
        command.env("SEAMS_LLM_MODEL", model);
    }
    if let Some(case) = eval_case {
        command.env("SEAMS_EVAL_CASE", case);
    }
    let bounds = Bounds {
        time: Some(timeout),
        // The user's own tool, which may hold a model in memory.
        ..Bounds::NONE
    };
    let mut running = Bounded::spawn(&mut command, bounds).map_err(|e| {
        Failure::fatal(format!(
            "{shown} could not be started: {e}; check --provider or provider in [propose]"
        ))
    })?;
    let child = running.child();
    let mut stdin = child.stdin.take().expect("piped");
    let prompt = prompt.to_owned();
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(prompt.as_bytes());
    });
    let read = |pipe: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            // Bounded: a provider that floods stdout is cut.
            let _ = pipe.take(ANSWER_CAP as u64 + 1).read_to_end(&mut buf);
            buf
        })
    };
    let stdout = read(Box::new(child.stdout.take().expect("piped")));
    let stderr = read(Box::new(child.stderr.take().expect("piped")));
    let status = match running.wait().map_err(|e| fail(e.to_string()))? {
        Ended::Exited(status) => status,
        Ended::TimedOut => {
            return Err(fail(format!(
                "did not answer within {} s and was stopped; raise --timeout or [propose] timeout",
                timeout.as_secs()
            )));
        }
    };
    let _ = writer.join();
    let out = stdout.join().unwrap_or_default();
    let err = String::from_utf8_lossy(&stderr.join().unwrap_or_default())
        .trim()
        .chars()
        .take(2000)
        .collect::<String>();
    if !status.success() {
        return Err(fail(format!(
            "failed ({status}){}",
            if err.is_empty() {
                String::new()
            } else {
                format!(": {err}")
            }
        )));
    }
    if out.len() > ANSWER_CAP {
        return Err(fail(format!(
            "answered more than {ANSWER_CAP} bytes; seams reads no more"
        )));
    }
    let out =
        String::from_utf8(out).map_err(|_| fail("answered with text that is not UTF-8".into()))?;
    if out.trim().is_empty() {
        return Err(fail("answered with nothing".into()));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_spec_names_an_api_or_a_command() {
        assert_eq!(
            Provider::parse("api:openai", None, None).unwrap(),
            Provider::Api {
                api: Api::OpenAi,
                base_url: "https://api.openai.com/v1".into(),
                key_env: "OPENAI_API_KEY".into()
            }
        );
        assert_eq!(
            Provider::parse(
                "api:anthropic",
                Some("http://127.0.0.1:9/v1/"),
                Some("MY_KEY")
            )
            .unwrap()
            .describe(),
            "api:anthropic at http://127.0.0.1:9/v1"
        );
        assert!(
            Provider::parse("api:gemini", None, None)
                .unwrap_err()
                .contains("unknown provider API")
        );
        assert!(
            Provider::parse("api:openai", Some("ftp://x"), None)
                .unwrap_err()
                .contains("not an http")
        );
        assert_eq!(
            Provider::parse("my-llm --json 'a b'", None, None).unwrap(),
            Provider::Command {
                argv: vec!["my-llm".into(), "--json".into(), "a b".into()],
                line: "my-llm --json 'a b'".into()
            }
        );
        assert!(Provider::parse("my-llm 'open", None, None).is_err());
    }

    #[test]
    fn each_api_is_asked_and_answered_in_its_own_shape() {
        let (url, body) = request(Api::OpenAi, "http://h/v1", "m", "P");
        assert_eq!(url, "http://h/v1/chat/completions");
        assert_eq!(body["messages"][0]["content"], "P");
        let (url, body) = request(Api::Anthropic, "http://h/v1", "m", "P");
        assert_eq!(url, "http://h/v1/messages");
        assert_eq!(body["model"], "m");
        assert_eq!(
            answer_text(
                Api::OpenAi,
                &json!({"choices": [{"message": {"content": "A"}}]})
            ),
            Some("A".into())
        );
        assert_eq!(
            answer_text(
                Api::Anthropic,
                &json!({"content": [{"type": "text", "text": "A"}, {"type": "thinking"}, {"type": "text", "text": "B"}]})
            ),
            Some("AB".into())
        );
        assert_eq!(answer_text(Api::Anthropic, &json!({"content": []})), None);
    }

    #[test]
    fn a_command_that_cannot_start_is_fatal() {
        let p = Provider::parse("/nonexistent/seams-provider", None, None).unwrap();
        let failure = p.ask("x", None, Duration::from_secs(5), None).unwrap_err();
        assert!(failure.fatal);
        assert!(
            failure.message.contains("could not be started"),
            "{}",
            failure.message
        );
    }
}
