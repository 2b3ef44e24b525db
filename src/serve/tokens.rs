//! The bearer tokens `jobq serve` accepts: read from the variables `[serve] tokens` names when the
//! server starts, kept only as SHA-256 digests, and compared in constant time. A token's value is never
//! logged, shown or kept in clear.

use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use crate::config::{Role, TokenSpec};
use jobq::error::{Error, Result};

/// A token the server accepts.
#[derive(Clone)]
struct Token {
    name: String,
    role: Role,
    digest: [u8; 32],
}

/// The tokens the server accepts; none means every request is let in (which only a loopback address
/// allows, see [`super::Options`]).
#[derive(Clone, Default)]
pub struct Tokens(Vec<Token>);

/// Who made a request: the name of the token it carried (none when no tokens are configured) and
/// what that token allows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caller {
    /// The token's name, `None` on a server without tokens.
    pub name: Option<String>,
    /// What it may do.
    pub role: Role,
}

impl Caller {
    /// The name the audit log shows.
    pub fn shown(&self) -> &str {
        self.name.as_deref().unwrap_or("anonymous")
    }
}

impl Tokens {
    /// Reads each token's value from its variable through `env`. An unset or empty variable refuses
    /// the start, naming the variable (never a value).
    pub fn from_env(specs: &[TokenSpec], env: impl Fn(&str) -> Option<String>) -> Result<Tokens> {
        let mut tokens = Vec::with_capacity(specs.len());
        for spec in specs {
            let value = env(&spec.env).unwrap_or_default();
            if value.trim().is_empty() {
                return Err(Error::config_at(
                    None,
                    Some(spec.env.clone()),
                    format!(
                        "token {:?} of [serve] tokens: environment variable {} is not set (set it to the token's value)",
                        spec.name, spec.env
                    ),
                    None,
                ));
            }
            tokens.push(Token {
                name: spec.name.clone(),
                role: spec.role,
                digest: digest(value.trim()),
            });
        }
        Ok(Tokens(tokens))
    }

    /// True when no token is configured.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The caller a presented token stands for, if it is one of ours. Every configured token is
    /// compared, each in constant time over equal-length digests, so neither the time taken nor an
    /// early exit tells how much of a guess was right.
    pub fn caller(&self, presented: &str) -> Option<Caller> {
        let presented = digest(presented);
        let mut found = None;
        for token in &self.0 {
            if bool::from(token.digest.ct_eq(&presented)) && found.is_none() {
                found = Some(Caller {
                    name: Some(token.name.clone()),
                    role: token.role,
                });
            }
        }
        found
    }
}

/// Tokens show their names and roles only.
impl std::fmt::Debug for Tokens {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(self.0.iter().map(|t| (t.name.as_str(), t.role.as_str())))
            .finish()
    }
}

fn digest(value: &str) -> [u8; 32] {
    Sha256::digest(value.as_bytes()).into()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn specs() -> Vec<TokenSpec> {
        vec![
            TokenSpec {
                name: "ops".into(),
                env: "OPS".into(),
                role: Role::Admin,
            },
            TokenSpec {
                name: "grafana".into(),
                env: "GRAFANA".into(),
                role: Role::Read,
            },
        ]
    }

    #[test]
    fn a_presented_token_names_its_caller_and_role() {
        let tokens = Tokens::from_env(&specs(), |v| Some(format!("secret-{v}"))).unwrap();
        assert_eq!(tokens.caller("secret-OPS").map(|c| c.role), Some(Role::Admin));
        assert_eq!(tokens.caller("secret-GRAFANA").map(|c| c.role), Some(Role::Read));
        assert_eq!(tokens.caller("secret-OP"), None);
        assert_eq!(tokens.caller(""), None);
    }

    #[test]
    fn an_unset_variable_is_named_and_no_value_is_shown() {
        let err = Tokens::from_env(&specs(), |v| (v == "OPS").then(|| "s3cr3t".to_string())).unwrap_err();
        let text = err.to_string();
        assert!(text.contains("GRAFANA"), "{text}");
        let tokens = Tokens::from_env(&specs(), |_| Some("s3cr3t".to_string())).unwrap();
        assert!(!format!("{tokens:?}").contains("s3cr3t"));
    }
}
