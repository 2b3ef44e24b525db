//! `[serve]`: where `jobq serve` listens and the bearer tokens it accepts. Only a token's name, its
//! role and the variable that holds it are read here; the value stays in the environment and is read
//! when the server starts (`serve::Tokens::from_env`), so no other command needs it and no config file
//! holds a secret.

use std::net::SocketAddr;
use std::time::Duration;

use serde::Deserialize;

use jobq::autoscale::Policy;
use jobq::time::parse_duration;

/// Where `jobq serve` listens unless told otherwise: loopback only.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:8080";

/// `[serve]` as written.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServeFile {
    /// `host:port` to listen on.
    pub listen: Option<String>,
    /// The tokens a request may carry.
    #[serde(default)]
    pub tokens: Vec<TokenFile>,
    /// The policy behind `/metrics`' `jobq_queue_desired_workers` (none: the gauge is left out).
    pub autoscale: Option<AutoscaleFile>,
}

/// `[serve.autoscale]`: what `jobq autoscale`'s flags say, for every queue `/metrics` reports.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AutoscaleFile {
    /// How long a ready job may wait before it starts, e.g. `30s` (required).
    pub target_latency: Option<String>,
    /// Fewest workers (default 1).
    pub min: Option<u32>,
    /// Most workers (default 20).
    pub max: Option<u32>,
    /// Jobs one worker runs at once (default 8).
    pub concurrency: Option<u32>,
    /// How far back arrivals and run times are measured (default `5m`).
    pub window: Option<String>,
}

/// One entry of `[serve] tokens`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TokenFile {
    /// Who carries it, for the audit log.
    pub name: String,
    /// The environment variable holding its value.
    pub token_env: String,
    /// `read` or `admin`.
    pub role: String,
}

/// What a token lets its bearer do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Role {
    /// Read only: `GET` requests.
    Read,
    /// Read and act: enqueue, cancel, replay, delete, pause…
    Admin,
}

impl Role {
    /// The word used in the config and the logs.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Read => "read",
            Role::Admin => "admin",
        }
    }
}

/// A configured token, its value not yet read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenSpec {
    /// Who carries it.
    pub name: String,
    /// The environment variable holding it.
    pub env: String,
    /// What it allows.
    pub role: Role,
}

/// `[serve]` resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServeSettings {
    /// Where to listen (`--listen` overrides it).
    pub listen: SocketAddr,
    /// The tokens, in the order written.
    pub tokens: Vec<TokenSpec>,
    /// The policy `/metrics` computes each queue's desired workers with, if any.
    pub autoscale: Option<Policy>,
}

impl Default for ServeSettings {
    fn default() -> Self {
        ServeSettings {
            listen: DEFAULT_LISTEN.parse().expect("a socket address"),
            tokens: Vec::new(),
            autoscale: None,
        }
    }
}

/// Checks `[serve]`; an error names the key and what is wrong.
pub(crate) fn serve_settings(f: &ServeFile) -> Result<ServeSettings, (String, String)> {
    let mut settings = ServeSettings::default();
    if let Some(listen) = &f.listen {
        settings.listen = parse_listen(listen).map_err(|e| ("[serve] listen".to_string(), e))?;
    }
    for (i, t) in f.tokens.iter().enumerate() {
        let key = format!("[serve] tokens[{i}]");
        let valid_name = !t.name.is_empty()
            && t.name.len() <= 64
            && t.name.chars().all(|c| c.is_ascii_alphanumeric() || "._-".contains(c));
        if !valid_name {
            return Err((
                key,
                format!("name {:?} must be 1 to 64 letters, digits, '.', '_' or '-'", t.name),
            ));
        }
        if settings.tokens.iter().any(|s| s.name == t.name) {
            return Err((key, format!("name {:?} is used by another token", t.name)));
        }
        let valid_env = t
            .token_env
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && t.token_env.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !valid_env {
            return Err((
                key,
                format!("token_env {:?} is not an environment variable name", t.token_env),
            ));
        }
        let role = match t.role.as_str() {
            "read" => Role::Read,
            "admin" => Role::Admin,
            other => return Err((key, format!("role {other:?} is unknown (expected read or admin)"))),
        };
        settings.tokens.push(TokenSpec {
            name: t.name.clone(),
            env: t.token_env.clone(),
            role,
        });
    }
    if let Some(a) = &f.autoscale {
        settings.autoscale = Some(autoscale_policy(a).map_err(|e| ("[serve.autoscale]".to_string(), e))?);
    }
    Ok(settings)
}

/// `[serve.autoscale]` checked the way `jobq autoscale` checks its flags, with the same defaults.
fn autoscale_policy(a: &AutoscaleFile) -> Result<Policy, String> {
    let duration = |key: &str, text: &str| parse_duration(text).map_err(|e| format!("{key}: {e}"));
    let target_latency = match &a.target_latency {
        Some(t) => duration("target_latency", t)?,
        None => return Err("target_latency is required, e.g. target_latency = \"30s\"".to_string()),
    };
    let policy = Policy {
        min: a.min.unwrap_or(1),
        max: a.max.unwrap_or(20),
        target_latency,
        concurrency: a.concurrency.unwrap_or(8),
        window: match &a.window {
            Some(w) => duration("window", w)?,
            None => Duration::from_secs(300),
        },
    };
    // The check speaks of the command's flags; here they are keys.
    policy.check().map_err(|e| {
        e.to_string()
            .replace("--target-latency", "target_latency")
            .replace("--", "")
    })?;
    Ok(policy)
}

/// `host:port` as `--listen` and `[serve] listen` take it (`localhost` is loopback).
pub fn parse_listen(text: &str) -> Result<SocketAddr, String> {
    let text = text.trim();
    if let Some(port) = text.strip_prefix("localhost:") {
        return format!("127.0.0.1:{port}")
            .parse()
            .map_err(|_| format!("{text:?} is not host:port, e.g. 127.0.0.1:8080"));
    }
    text.parse()
        .map_err(|_| format!("{text:?} is not host:port, e.g. 127.0.0.1:8080 or [::1]:8080"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(toml_text: &str) -> ServeFile {
        toml::from_str(toml_text).unwrap()
    }

    #[test]
    fn tokens_and_listen_are_read_with_roles() {
        let s = serve_settings(&file(
            "listen = \"0.0.0.0:9000\"\ntokens = [{ name = \"ops\", token_env = \"OPS\", role = \"admin\" }, { name = \"grafana\", token_env = \"G_1\", role = \"read\" }]",
        ))
        .unwrap();
        assert_eq!(s.listen, "0.0.0.0:9000".parse().unwrap());
        assert_eq!(s.tokens[0].role, Role::Admin);
        assert_eq!(s.tokens[1].env, "G_1");
    }

    #[test]
    fn bad_entries_name_the_key() {
        let cases = [
            ("listen = \"here\"", "[serve] listen"),
            (
                "tokens = [{ name = \"a b\", token_env = \"X\", role = \"read\" }]",
                "[serve] tokens[0]",
            ),
            (
                "tokens = [{ name = \"a\", token_env = \"1X\", role = \"read\" }]",
                "[serve] tokens[0]",
            ),
            (
                "tokens = [{ name = \"a\", token_env = \"X\", role = \"root\" }]",
                "[serve] tokens[0]",
            ),
            (
                "tokens = [{ name = \"a\", token_env = \"X\", role = \"read\" }, { name = \"a\", token_env = \"Y\", role = \"read\" }]",
                "[serve] tokens[1]",
            ),
        ];
        for (text, key) in cases {
            let (k, _) = serve_settings(&file(text)).unwrap_err();
            assert_eq!(k, key, "{text}");
        }
    }

    #[test]
    fn autoscale_takes_the_commands_defaults_and_checks() {
        let s = serve_settings(&file("[autoscale]\ntarget_latency = \"30s\"")).unwrap();
        let p = s.autoscale.unwrap();
        assert_eq!((p.min, p.max, p.concurrency), (1, 20, 8));
        assert_eq!(p.target_latency, Duration::from_secs(30));
        assert_eq!(p.window, Duration::from_secs(300));
        for text in [
            "[autoscale]\nmin = 1",
            "[autoscale]\ntarget_latency = \"soon\"",
            "[autoscale]\ntarget_latency = \"30s\"\nmin = 5\nmax = 2",
        ] {
            let (key, _) = serve_settings(&file(text)).unwrap_err();
            assert_eq!(key, "[serve.autoscale]", "{text}");
        }
    }

    #[test]
    fn localhost_is_loopback() {
        assert!(parse_listen("localhost:8080").unwrap().ip().is_loopback());
        assert_eq!(
            DEFAULT_LISTEN.parse::<SocketAddr>().unwrap(),
            ServeSettings::default().listen
        );
    }
}
