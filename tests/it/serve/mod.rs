//! Tests of `jobq serve`: real HTTP over TCP with `reqwest`, against servers started in this process
//! on an ephemeral loopback port through the library (`jobq_cli::serve::start`), and against the real
//! `jobq serve` binary.
//!
//! - [`verbs`]: each API verb on every store (`serve::<store>::<case>`), checked against what the
//!   store then holds;
//! - [`security`]: tokens and roles, the origin check, the body cap, refused starts, error shapes;
//! - [`health`]: `/healthz` while the store is there and once it is not;
//! - [`counts`]: `/api/v1/stats` and `/metrics` asked for at once while jobs arrive, on every store;
//! - [`binary`]: the `jobq serve` process: start, serve, audit log, stop on SIGTERM;
//! - [`openapi`]: schemathesis exercising a running server against `/api/v1/openapi.json`;
//! - [`dashboard`]: the web dashboard in a real Chromium ([`browser`]), on every store.

mod binary;
mod browser;
mod counts;
mod dashboard;
mod health;
mod openapi;
mod security;
mod verbs;

use std::net::SocketAddr;
use std::time::Duration;

use jobq::Client;
use jobq_cli::config::{Config, Overrides};
use jobq_cli::serve::{self, Options, Server, Tokens};
use reqwest::StatusCode;
use serde_json::Value;
use tempfile::TempDir;

use crate::support::TestStore;

/// A request time-out long enough for a loaded test machine.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(60);

/// A server in this process over one test's store, and an HTTP client for it.
pub struct Api {
    base: String,
    http: reqwest::Client,
    /// Sent as `Authorization: Bearer …` when set.
    token: Option<String>,
    server: Option<Server>,
    _dir: TempDir,
}

impl Api {
    /// Serves `store` without tokens, on loopback.
    pub async fn start(store: &TestStore) -> Api {
        Api::start_with(store, "", &[]).await
    }

    /// Serves `store` with `config` (TOML) and the token values `env` gives their variables.
    pub async fn start_with(store: &TestStore, config: &str, env: &[(&str, &str)]) -> Api {
        Api::start_timed(store, config, env, REQUEST_TIMEOUT).await
    }

    /// As [`Api::start_with`], each request bounded by `request_timeout`.
    pub async fn start_timed(store: &TestStore, config: &str, env: &[(&str, &str)], request_timeout: Duration) -> Api {
        let options = Options {
            listen: "127.0.0.1:0".parse().unwrap(),
            tls: None,
            request_timeout,
        };
        Api::start_opts(store, config, env, options)
            .await
            .expect("starting the server")
    }

    /// Serves `store` with `config`, the token values of `env` and `options`; HTTPS when they say.
    pub async fn start_opts(
        store: &TestStore,
        config: &str,
        env: &[(&str, &str)],
        options: Options,
    ) -> jobq::Result<Api> {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("jobq.toml");
        std::fs::write(&file, config).unwrap();
        let overrides = Overrides {
            url: Some(store.url().to_string()),
            config: Some(file),
        };
        let config = Config::load_with(&overrides, |_| None).expect("the test config");
        let tokens = Tokens::from_env(&config.serve.tokens, |name| {
            env.iter().find(|(k, _)| *k == name).map(|(_, v)| v.to_string())
        })
        .expect("the test tokens");
        let client = Client::new(store.store().clone()).with_limits(config.limits);
        let scheme = if options.tls.is_some() { "https" } else { "http" };
        let server = serve::start(client, &config, tokens, options).await?;
        Ok(Api {
            base: format!("{scheme}://{}", server.local_addr()),
            http: reqwest::Client::new(),
            token: None,
            server: Some(server),
            _dir: dir,
        })
    }

    /// The same server, reached through `http` (a client that trusts a test certificate).
    pub fn with_client(mut self, http: reqwest::Client) -> Api {
        self.http = http;
        self
    }

    /// Where it listens.
    pub fn addr(&self) -> SocketAddr {
        self.server.as_ref().expect("running").local_addr()
    }

    /// The same server, its requests carrying `token`.
    pub fn with_token(mut self, token: &str) -> Api {
        self.token = Some(token.to_string());
        self
    }

    /// Sends requests carrying `token` from now on (`None`: none).
    pub fn set_token(&mut self, token: Option<&str>) {
        self.token = token.map(str::to_string);
    }

    /// A request to `path` (under the server's root), with the token if one is set.
    pub fn request(&self, method: reqwest::Method, path: &str) -> reqwest::RequestBuilder {
        let req = self.http.request(method, format!("{}{path}", self.base));
        match &self.token {
            Some(t) => req.bearer_auth(t),
            None => req,
        }
    }

    /// `GET path`: the status and the JSON body.
    pub async fn get(&self, path: &str) -> (StatusCode, Value) {
        send(self.request(reqwest::Method::GET, path)).await
    }

    /// `POST path` with a JSON body.
    pub async fn post(&self, path: &str, body: Value) -> (StatusCode, Value) {
        send(self.request(reqwest::Method::POST, path).json(&body)).await
    }

    /// `DELETE path`.
    pub async fn delete(&self, path: &str) -> (StatusCode, Value) {
        send(self.request(reqwest::Method::DELETE, path)).await
    }

    /// `GET path` as text (for `/metrics`).
    pub async fn text(&self, path: &str) -> (StatusCode, String) {
        let response = self
            .request(reqwest::Method::GET, path)
            .send()
            .await
            .expect("the request");
        let status = response.status();
        (status, response.text().await.expect("the body"))
    }
}

impl Drop for Api {
    fn drop(&mut self) {
        if let Some(server) = self.server.take() {
            server.shutdown();
        }
    }
}

/// A `[serve]` config with an admin token ("ops", from `TEST_OPS_TOKEN`) and a read token
/// ("grafana", from `TEST_READ_TOKEN`).
pub const TOKENS: &str = r#"
[serve]
tokens = [
  { name = "ops", token_env = "TEST_OPS_TOKEN", role = "admin" },
  { name = "grafana", token_env = "TEST_READ_TOKEN", role = "read" },
]
"#;

/// Sends a request and reads its answer as JSON, failing the test on a body that is not.
pub async fn send(req: reqwest::RequestBuilder) -> (StatusCode, Value) {
    let response = req.send().await.expect("the request");
    let status = response.status();
    let text = response.text().await.expect("the body");
    let value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("a JSON answer ({status}): {e}: {text}"));
    (status, value)
}

/// The error code of an error answer, checking its shape: `{"error": {"code", "message"}}` with a
/// one-line message.
pub fn error_code(body: &Value) -> &str {
    let error = &body["error"];
    let message = error["message"]
        .as_str()
        .unwrap_or_else(|| panic!("an error message in {body}"));
    assert!(!message.is_empty() && !message.contains('\n'), "one line: {message:?}");
    error["code"]
        .as_str()
        .unwrap_or_else(|| panic!("an error code in {body}"))
}

/// The string values of `key` in each object of an array.
pub fn strings(array: &Value, key: &str) -> Vec<String> {
    array
        .as_array()
        .unwrap_or_else(|| panic!("an array: {array}"))
        .iter()
        .map(|v| v[key].as_str().unwrap_or_else(|| panic!("{key} in {v}")).to_string())
        .collect()
}
