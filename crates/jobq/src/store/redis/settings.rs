//! What a `redis://` URL says: `redis://[user:password@]host[:port][/db]` or `rediss://…` (TLS), plus
//! jobq's own options, removed before the driver sees the URL: `prefix=TEXT` (default `jobq:`),
//! `connect_timeout=SECS` (default 5) and `inbox_default_type=TYPE` (what a non-envelope inbox item
//! becomes).

use std::time::Duration;

use crate::store::url::UrlOptions;
use crate::store::{StoreError, StoreUrl};

/// The key prefix unless the URL says otherwise.
pub const DEFAULT_PREFIX: &str = "jobq:";

/// How long connecting may take unless the URL says otherwise (`connect_timeout`).
const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// What a `redis://` URL says, jobq's own options taken out.
#[derive(Debug, Clone)]
pub(super) struct Settings {
    /// The URL for the driver, password included.
    pub driver_url: String,
    pub prefix: String,
    pub connect_timeout: Duration,
    pub inbox_default_type: Option<String>,
}

impl Settings {
    pub fn parse(url: &StoreUrl) -> Result<Settings, StoreError> {
        let ours = UrlOptions::split(url, &["prefix", "connect_timeout", "inbox_default_type"])?;
        let prefix = ours.parsed("prefix", |value| {
            if value.is_empty() || value.len() > 64 || value.contains(['{', '}']) || value.contains(char::is_whitespace)
            {
                return Err(format!(
                    "prefix={value:?} (expected 1 to 64 characters without spaces or braces)"
                ));
            }
            Ok(value.to_string())
        })?;
        let inbox_default_type = ours.parsed("inbox_default_type", |value| {
            crate::job::validate_type(value).map_err(|e| format!("inbox_default_type: {e}"))?;
            Ok(value.to_string())
        })?;
        Ok(Settings {
            driver_url: ours.driver_url().to_string(),
            prefix: prefix.unwrap_or_else(|| DEFAULT_PREFIX.to_string()),
            connect_timeout: ours.duration("connect_timeout", DEFAULT_CONNECT_TIMEOUT)?,
            inbox_default_type,
        })
    }
}
