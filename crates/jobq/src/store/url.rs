//! Store URLs: which backend a URL names, its parts, and its redacted form for every message.
//!
//! A password in a URL is never printed: [`RedactedUrl`] is what Display, Debug, logs and prompts get.

use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Serialize;

use super::StoreError;

/// The four backends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum StoreKind {
    /// Embedded SQLite file.
    Sqlite,
    /// PostgreSQL server.
    Postgres,
    /// MySQL 8 or MariaDB 10.6+ server.
    Mysql,
    /// Redis server.
    Redis,
}

impl StoreKind {
    /// Lowercase name.
    pub fn as_str(self) -> &'static str {
        match self {
            StoreKind::Sqlite => "sqlite",
            StoreKind::Postgres => "postgres",
            StoreKind::Mysql => "mysql",
            StoreKind::Redis => "redis",
        }
    }
}

impl fmt::Display for StoreKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A URL with any password replaced by `***`: the only form of a store URL that is ever shown.
#[derive(Clone, PartialEq, Eq)]
pub struct RedactedUrl(String);

impl RedactedUrl {
    /// Redacts any `scheme://user:password@host` text, even text that does not parse as a URL.
    pub fn new(url: &str) -> Self {
        RedactedUrl(redact(url))
    }

    /// The redacted text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for RedactedUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Debug for RedactedUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "RedactedUrl({:?})", self.0)
    }
}

fn redact(url: &str) -> String {
    // Between "://" (or the start, for text with no scheme such as `user:pw@host`) and the last "@"
    // before the path lies "user:password"; keep the user only.
    let start = url.find("://").map(|i| i + 3).unwrap_or(0);
    let rest = &url[start..];
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let authority = &rest[..authority_end];
    let Some(at) = authority.rfind('@') else {
        return url.to_string();
    };
    let userinfo = &authority[..at];
    match userinfo.find(':') {
        Some(colon) => format!("{}{}:***{}", &url[..start], &userinfo[..colon], &url[start + at..]),
        None => url.to_string(),
    }
}

/// A parsed store URL. Its Debug and Display never show the password.
#[derive(Clone, PartialEq, Eq)]
pub struct StoreUrl {
    raw: String,
    kind: StoreKind,
}

const SCHEMES: &str = "sqlite, postgres, mysql, redis, rediss";

impl StoreUrl {
    /// Reads a URL: `sqlite://PATH` (`sqlite:///abs/path` or `sqlite://relative/path`),
    /// `postgres://…` (`postgresql://` too), `mysql://…` (`mariadb://` too), `redis://…`, `rediss://…`.
    pub fn parse(url: &str) -> Result<StoreUrl, StoreError> {
        let invalid = |reason: String| StoreError::InvalidUrl {
            url: redact(url),
            reason,
        };
        let Some((scheme, rest)) = url.split_once(':') else {
            return Err(invalid(format!(
                "no scheme (expected one of {SCHEMES}, e.g. sqlite://jobs.db)"
            )));
        };
        let kind = match scheme.to_ascii_lowercase().as_str() {
            "sqlite" => StoreKind::Sqlite,
            "postgres" | "postgresql" => StoreKind::Postgres,
            "mysql" | "mariadb" => StoreKind::Mysql,
            "redis" | "rediss" => StoreKind::Redis,
            other => {
                return Err(StoreError::InvalidUrl {
                    url: redact(url),
                    reason: format!("unknown store scheme {other:?} (expected {SCHEMES})"),
                });
            }
        };
        let parsed = StoreUrl {
            raw: url.to_string(),
            kind,
        };
        if kind == StoreKind::Sqlite {
            if parsed.sqlite_path().as_os_str().is_empty() {
                return Err(invalid(
                    "no file path (e.g. sqlite://jobs.db or sqlite:///var/lib/jobq/jobs.db)".into(),
                ));
            }
        } else {
            let _ = rest;
            url::Url::parse(url).map_err(|e| invalid(e.to_string()))?;
        }
        Ok(parsed)
    }

    /// The SQLite URL of a file.
    pub fn sqlite_file(path: &Path) -> StoreUrl {
        StoreUrl {
            raw: format!("sqlite://{}", path.display()),
            kind: StoreKind::Sqlite,
        }
    }

    /// The backend.
    pub fn kind(&self) -> StoreKind {
        self.kind
    }

    /// The full URL, password included: for drivers only, never for display.
    pub fn expose(&self) -> &str {
        &self.raw
    }

    /// The URL with the password replaced.
    pub fn redacted(&self) -> RedactedUrl {
        RedactedUrl::new(&self.raw)
    }

    /// For `sqlite:` URLs, the file path (without query).
    pub fn sqlite_path(&self) -> PathBuf {
        let rest = self.raw.split_once(':').map(|(_, r)| r).unwrap_or("");
        let rest = rest.strip_prefix("//").unwrap_or(rest);
        let path = rest.split('?').next().unwrap_or("");
        PathBuf::from(path)
    }

    /// Query parameters (`?a=b&c=d`), decoded.
    pub fn query_pairs(&self) -> Vec<(String, String)> {
        match self.raw.split_once('?') {
            Some((_, q)) => url::form_urlencoded::parse(q.as_bytes()).into_owned().collect(),
            None => Vec::new(),
        }
    }

    /// Whether the store keeps an inbox that any client pushes raw items to (`jobq inbox`): Redis
    /// only; the SQL stores take jobs through their tables.
    pub fn has_inbox(&self) -> bool {
        self.kind == StoreKind::Redis
    }

    /// The URL carrying the config's `inbox_default_type` (the job type of an inbox item that is not
    /// an envelope) as a URL option, unless the URL sets one: for a store with an inbox; any other
    /// URL is returned as it is, since the setting means nothing there.
    pub fn with_inbox_default_type(self, job_type: &str) -> StoreUrl {
        if self.has_inbox() {
            self.with_default_option("inbox_default_type", job_type)
        } else {
            self
        }
    }

    /// The URL with the query option `key=value` added, unless its query sets `key` already: how
    /// settings from a config file reach a store that reads them from its URL.
    pub fn with_default_option(self, key: &str, value: &str) -> StoreUrl {
        if self.query_pairs().iter().any(|(k, _)| k == key) {
            return self;
        }
        let sep = if self.raw.contains('?') { '&' } else { '?' };
        let encoded: String = url::form_urlencoded::byte_serialize(value.as_bytes()).collect();
        StoreUrl {
            raw: format!("{}{sep}{key}={encoded}", self.raw),
            kind: self.kind,
        }
    }

    /// A relative SQLite path made relative to `base` (the folder of the config file that named it).
    pub fn resolved_against(self, base: &Path) -> StoreUrl {
        if self.kind != StoreKind::Sqlite {
            return self;
        }
        let path = self.sqlite_path();
        if path.is_absolute() {
            return self;
        }
        let query = self
            .raw
            .split_once('?')
            .map(|(_, q)| format!("?{q}"))
            .unwrap_or_default();
        StoreUrl {
            raw: format!("sqlite://{}{query}", base.join(path).display()),
            kind: StoreKind::Sqlite,
        }
    }
}

impl fmt::Display for StoreUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&redact(&self.raw))
    }
}

impl fmt::Debug for StoreUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "StoreUrl({:?})", redact(&self.raw))
    }
}

/// jobq's own options of a store URL (`schema=`, `prefix=`, `connect_timeout=`, …), taken out of its
/// query, with typed getters; what is left of the query belongs to the driver and stays in
/// [`UrlOptions::driver_url`]. Every getter's error is [`StoreError::InvalidUrl`] with the redacted
/// URL, so no store builds one by hand. A key given twice counts with its last value.
pub(crate) struct UrlOptions {
    url: RedactedUrl,
    ours: Vec<(String, String)>,
    /// The URL without jobq's options, password included: for the driver only.
    driver_url: String,
}

impl UrlOptions {
    /// Splits `url`'s query into the options named in `ours` and the rest, which stays in the driver's
    /// URL. A SQLite URL (a path, not a network URL) has no driver options: an option not in `ours`
    /// is refused, naming the ones it takes.
    pub(crate) fn split(url: &StoreUrl, ours: &[&str]) -> Result<UrlOptions, StoreError> {
        let mut options = UrlOptions {
            url: url.redacted(),
            ours: Vec::new(),
            driver_url: String::new(),
        };
        let mut parsed = None;
        let pairs: Vec<(String, String)> = if url.kind() == StoreKind::Sqlite {
            url.query_pairs()
        } else {
            let network = url::Url::parse(url.expose()).map_err(|e| options.invalid(e.to_string()))?;
            let pairs = network.query_pairs().into_owned().collect();
            parsed = Some(network);
            pairs
        };
        let mut passed_on = Vec::new();
        for (key, value) in pairs {
            if ours.contains(&key.as_str()) {
                options.ours.push((key, value));
            } else if url.kind() == StoreKind::Sqlite {
                return Err(options.invalid(format!("unknown option {key:?} (expected {})", ours.join(" or "))));
            } else {
                passed_on.push((key, value));
            }
        }
        options.driver_url = match parsed {
            None => url.expose().split('?').next().unwrap_or_default().to_string(),
            Some(mut network) => {
                if passed_on.is_empty() {
                    network.set_query(None);
                } else {
                    network.query_pairs_mut().clear().extend_pairs(&passed_on);
                }
                network.to_string()
            }
        };
        Ok(options)
    }

    /// The URL for the driver: jobq's options taken out, everything else (password included) kept.
    pub(crate) fn driver_url(&self) -> &str {
        &self.driver_url
    }

    /// The error for this URL: `reason` says what is wrong and what is expected.
    pub(crate) fn invalid(&self, reason: impl Into<String>) -> StoreError {
        StoreError::InvalidUrl {
            url: self.url.to_string(),
            reason: reason.into(),
        }
    }

    /// The text of option `key`, if given.
    pub(crate) fn text(&self, key: &str) -> Option<&str> {
        self.ours.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
    }

    /// Option `key` read by `parse`, whose error is the reason to show after the URL; `None` when
    /// the option is not given.
    pub(crate) fn parsed<T>(
        &self,
        key: &str,
        parse: impl FnOnce(&str) -> Result<T, String>,
    ) -> Result<Option<T>, StoreError> {
        self.text(key)
            .map(parse)
            .transpose()
            .map_err(|reason| self.invalid(reason))
    }

    /// A time option (`connect_timeout=5`, `wake_poll=10ms`): whole seconds, as libpq counts them, or
    /// a duration; never zero.
    pub(crate) fn duration(&self, key: &str, default: Duration) -> Result<Duration, StoreError> {
        let parsed = self.parsed(key, |value| {
            let d = match value.parse::<u64>() {
                Ok(secs) => Duration::from_secs(secs),
                Err(_) => crate::time::parse_duration(value).map_err(|reason| format!("{key}: {reason}"))?,
            };
            if d.is_zero() {
                return Err(format!("{key} must be greater than zero"));
            }
            Ok(d)
        })?;
        Ok(parsed.unwrap_or(default))
    }

    /// A count option (`max_connections=10`): a positive whole number.
    pub(crate) fn count(&self, key: &str, default: u32) -> Result<u32, StoreError> {
        let parsed = self.parsed(key, |value| {
            value
                .parse()
                .ok()
                .filter(|n| *n > 0)
                .ok_or_else(|| format!("{key}={value:?} (expected a positive whole number)"))
        })?;
        Ok(parsed.unwrap_or(default))
    }
}

/// For the stores' URL tests: what `read` makes of the URL `text`.
#[cfg(test)]
pub(crate) fn read_url<T>(text: &str, read: impl Fn(&StoreUrl) -> Result<T, StoreError>) -> Result<T, StoreError> {
    read(&StoreUrl::parse(text).expect("a test URL that parses"))
}

/// For the stores' URL tests: `parsed` (of a URL with user `u` and password `secret` on host `h`) was
/// refused, its reason says `expected`, and the URL it names has its password replaced.
#[cfg(test)]
pub(crate) fn assert_refused_without_password<T>(url: &str, parsed: Result<T, StoreError>, expected: &str) {
    let Err(err) = parsed else { panic!("{url} was accepted") };
    let err = err.to_string();
    assert!(err.contains(expected), "{err}");
    assert!(!err.contains("secret") && err.contains("u:***@h"), "{err}");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_password_is_never_rendered() {
        for raw in [
            "postgres://u:secret@h/db",
            "postgres://u:secret@h:5432/db?sslmode=require",
            "mysql://root:secret@127.0.0.1/test",
            "redis://:secret@localhost:6379/0",
            "rediss://default:secret@cache.example:6380",
        ] {
            let url = StoreUrl::parse(raw).unwrap();
            for shown in [
                url.to_string(),
                format!("{url:?}"),
                url.redacted().to_string(),
                format!("{:?}", url.redacted()),
            ] {
                assert!(!shown.contains("secret"), "{shown}");
                assert!(shown.contains("***"), "{shown}");
            }
        }
        assert_eq!(
            RedactedUrl::new("postgres://u:secret@h/db").as_str(),
            "postgres://u:***@h/db"
        );
        assert_eq!(RedactedUrl::new("postgres://u@h/db").as_str(), "postgres://u@h/db");
        assert_eq!(
            RedactedUrl::new("user:secret@db.example").as_str(),
            "user:***@db.example"
        );
        assert_eq!(RedactedUrl::new("sqlite:jobs.db").as_str(), "sqlite:jobs.db");
        let err = StoreUrl::parse("user:secret@db.example/x").unwrap_err().to_string();
        assert!(!err.contains("secret"), "{err}");
    }

    #[test]
    fn an_unparseable_url_is_still_redacted_in_its_error() {
        let err = StoreUrl::parse("postgress://u:secret@h/db").unwrap_err().to_string();
        assert!(!err.contains("secret"), "{err}");
        assert!(err.contains(r#"unknown store scheme "postgress""#), "{err}");
        assert!(err.contains("expected sqlite, postgres, mysql, redis, rediss"), "{err}");
    }

    #[test]
    fn schemes_pick_the_backend() {
        let kind = |u: &str| StoreUrl::parse(u).unwrap().kind();
        assert_eq!(kind("sqlite://jobs.db"), StoreKind::Sqlite);
        assert_eq!(kind("postgresql://h/db"), StoreKind::Postgres);
        assert_eq!(kind("mariadb://h/db"), StoreKind::Mysql);
        assert_eq!(kind("rediss://h"), StoreKind::Redis);
        assert!(StoreUrl::parse("jobs.db").is_err());
        assert!(StoreUrl::parse("sqlite://").is_err());
    }

    #[test]
    fn only_a_store_with_an_inbox_takes_the_inbox_default_type() {
        let redis = StoreUrl::parse("redis://h/0")
            .unwrap()
            .with_inbox_default_type("legacy.mail");
        assert_eq!(redis.expose(), "redis://h/0?inbox_default_type=legacy.mail");
        let sqlite = StoreUrl::parse("sqlite:///tmp/jobs.db").unwrap();
        assert!(!sqlite.has_inbox());
        assert_eq!(
            sqlite.with_inbox_default_type("legacy.mail").expose(),
            "sqlite:///tmp/jobs.db"
        );
    }

    #[test]
    fn a_default_option_never_overrides_the_url() {
        let url = StoreUrl::parse("redis://h/0").unwrap();
        let with = url.with_default_option("inbox_default_type", "legacy mail");
        assert_eq!(with.expose(), "redis://h/0?inbox_default_type=legacy+mail");
        let kept = StoreUrl::parse("redis://h/0?prefix=a:&inbox_default_type=x")
            .unwrap()
            .with_default_option("inbox_default_type", "y");
        assert_eq!(kept.expose(), "redis://h/0?prefix=a:&inbox_default_type=x");
    }

    #[test]
    fn sqlite_paths_and_queries() {
        let abs = StoreUrl::parse("sqlite:///var/lib/jobq/jobs.db?synchronous=full").unwrap();
        assert_eq!(abs.sqlite_path(), PathBuf::from("/var/lib/jobq/jobs.db"));
        assert_eq!(abs.query_pairs(), vec![("synchronous".to_string(), "full".to_string())]);
        let rel = StoreUrl::parse("sqlite://data/jobs.db?synchronous=full").unwrap();
        assert_eq!(rel.sqlite_path(), PathBuf::from("data/jobs.db"));
        let resolved = rel.resolved_against(Path::new("/etc/jobq"));
        assert_eq!(resolved.expose(), "sqlite:///etc/jobq/data/jobs.db?synchronous=full");
        assert_eq!(
            StoreUrl::parse("sqlite:jobs.db").unwrap().sqlite_path(),
            PathBuf::from("jobs.db")
        );
    }
}
