//! The http handler: POSTs each job's envelope to a URL (DESIGN §3).
//!
//! 202 Accepted hands the job to the endpoint, which finishes it later (`jobq resolve`, or
//! `Client::resolve`): the job waits. Any other 2xx is success (a JSON body becomes the result); 408,
//! 5xx, connection errors and time-outs are retries that honour `Retry-After` (seconds or an HTTP
//! date); 429 is upstream back-pressure (the type, or the job's partition, pauses on every worker for
//! the `Retry-After` delay, and the job snoozes without spending an attempt); any other status fails
//! the job.
//! Redirects are not followed: a POST bounced elsewhere would lose its body or its signature, so a
//! 3xx fails with a hint to configure the final URL. Every request carries `Idempotency-Key` (the
//! job's key, stable across attempts) and, when a secret is configured, `X-Jobq-Signature:
//! sha256=<hex>`, the HMAC-SHA256 of the exact body bytes. TLS is rustls; no OpenSSL.
//!
//! A 2xx answer with the header `X-Jobq-Reply: 1` says more than a result: its body is a reply
//! object, `{"result": …, "spawn": [child, …], "awaitChildren": true}` (each field optional), which
//! spawns children with the outcome and may make the job await them.

use std::time::{Duration, SystemTime};

use async_trait::async_trait;
use hmac::{Hmac, Mac};
use reqwest::StatusCode;
use reqwest::header::{CONTENT_TYPE, HeaderMap, HeaderValue, RETRY_AFTER};
use sha2::Sha256;

use super::{Handler, JobContext, Outcome};
use crate::job::Job;

/// Header carrying the body's HMAC-SHA256 signature.
pub const SIGNATURE_HEADER: &str = "X-Jobq-Signature";

/// The response header that makes a 2xx body a reply object rather than the result alone.
pub const REPLY_HEADER: &str = "X-Jobq-Reply";

/// Largest response body read: a result beyond this is not kept.
const MAX_BODY_BYTES: usize = 1 << 20;
/// How much of an error response's body goes into the error text.
const ERROR_BODY_BYTES: usize = 512;

/// POSTs envelopes to one endpoint, reusing connections across jobs.
#[derive(Debug, Clone)]
pub struct HttpHandler {
    client: reqwest::Client,
    url: reqwest::Url,
    secret: Option<Vec<u8>>,
}

impl HttpHandler {
    /// A handler for `url`, signing bodies with `secret` when given.
    pub fn new(url: &str, secret: Option<Vec<u8>>) -> Result<HttpHandler, String> {
        let url = reqwest::Url::parse(url).map_err(|e| format!("{url:?}: {e}"))?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(format!("{url}: expected an http:// or https:// URL"));
        }
        let client = reqwest::Client::builder()
            .user_agent(concat!("jobq/", env!("CARGO_PKG_VERSION")))
            .redirect(reqwest::redirect::Policy::none())
            .connect_timeout(Duration::from_secs(10))
            .tcp_keepalive(Duration::from_secs(60))
            .build()
            .map_err(|e| format!("cannot build the HTTP client: {e}"))?;
        Ok(HttpHandler { client, url, secret })
    }

    /// The endpoint.
    pub fn url(&self) -> &str {
        self.url.as_str()
    }

    async fn post(&self, job: &Job, cx: &JobContext) -> Outcome {
        let body = match serde_json::to_vec(&job.envelope()) {
            Ok(b) => b,
            Err(e) => return Outcome::retry(format!("cannot encode the envelope: {e}")),
        };
        let mut request = self
            .client
            .post(self.url.clone())
            .header(CONTENT_TYPE, "application/json")
            .header("Idempotency-Key", job.idempotency_key())
            .header("X-Jobq-Job-Id", job.id.as_str())
            .header("X-Jobq-Attempt", job.attempt.to_string());
        if let Some(secret) = &self.secret {
            request = request.header(SIGNATURE_HEADER, signature(secret, &body));
        }
        let response = match request.body(body).send().await {
            Ok(r) => r,
            Err(e) => return Outcome::retry(format!("POST {}: {}", self.url, error_chain(&e))),
        };
        let status = response.status();
        let retry_after = retry_after(response.headers(), SystemTime::now());
        let is_reply = response
            .headers()
            .get(REPLY_HEADER)
            .is_some_and(|v| v.as_bytes() == b"1");
        let body = match read_body(response).await {
            Ok(b) => b,
            Err(e) => return Outcome::retry(format!("POST {}: reading the response: {}", self.url, error_chain(&e))),
        };
        if is_reply && status.is_success() && status != StatusCode::ACCEPTED {
            return reply_outcome(&body, cx);
        }
        outcome_of(status, &body, retry_after)
    }
}

#[async_trait]
impl Handler for HttpHandler {
    async fn run(&self, job: &Job, cx: &JobContext) -> Outcome {
        tokio::select! {
            biased;
            outcome = self.post(job, cx) => outcome,
            // Dropping the request future closes the connection; the worker supplies the outcome.
            _ = cx.cancelled() => Outcome::retry(format!("POST {}: stopped", self.url)),
        }
    }
}

/// Reads at most [`MAX_BODY_BYTES`] of a body; the rest is dropped with the connection.
async fn read_body(mut response: reqwest::Response) -> reqwest::Result<Vec<u8>> {
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await? {
        let room = MAX_BODY_BYTES.saturating_sub(body.len());
        body.extend_from_slice(&chunk[..chunk.len().min(room)]);
        if body.len() >= MAX_BODY_BYTES {
            break;
        }
    }
    Ok(body)
}

/// `sha256=<hex>`: the HMAC-SHA256 of `body` under `secret`.
pub fn signature(secret: &[u8], body: &[u8]) -> String {
    // HMAC accepts keys of any length, so this never fails.
    let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(secret).expect("HMAC takes keys of any length");
    mac.update(body);
    format!("sha256={}", hex::encode(mac.finalize().into_bytes()))
}

/// Maps a response to an outcome.
pub(crate) fn outcome_of(status: StatusCode, body: &[u8], retry_after: Option<Duration>) -> Outcome {
    // The endpoint took the work on and will resolve the job itself; its body is not a result.
    if status == StatusCode::ACCEPTED {
        return Outcome::Wait;
    }
    if status.is_success() {
        let result = if body.iter().all(u8::is_ascii_whitespace) {
            None
        } else {
            serde_json::from_slice(body).ok()
        };
        return Outcome::Success { result };
    }
    let error = error_text(status, body);
    let code = status.as_u16();
    if code == 429 {
        return Outcome::RateLimited { delay: retry_after };
    }
    if code == 408 || status.is_server_error() {
        Outcome::Retry { error, retry_after }
    } else if status.is_redirection() {
        Outcome::fail(format!("{error} (redirects are not followed: configure the final URL)"))
    } else {
        Outcome::fail(error)
    }
}

/// The fields of a reply object ([`REPLY_HEADER`]).
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct ReplyBody {
    #[serde(default)]
    result: Option<serde_json::Value>,
    #[serde(default)]
    spawn: Vec<serde_json::Value>,
    #[serde(default, rename = "awaitChildren")]
    await_children: bool,
}

/// A success whose body is a reply object: its children handed to `cx`, then its result or its
/// await. A body that is no reply object fails the attempt, to be retried: the endpoint said it
/// would send one.
fn reply_outcome(body: &[u8], cx: &JobContext) -> Outcome {
    let reply: ReplyBody = match serde_json::from_slice(body) {
        Ok(reply) => reply,
        Err(e) => return Outcome::retry(format!("a {REPLY_HEADER} body that is not a reply object: {e}")),
    };
    for child in reply.spawn {
        cx.spawn_json(Ok(child));
    }
    if reply.await_children {
        Outcome::AwaitChildren
    } else {
        Outcome::Success {
            result: reply.result.filter(|r| !r.is_null()),
        }
    }
}

fn error_text(status: StatusCode, body: &[u8]) -> String {
    let head = format!("HTTP {status}");
    let text = String::from_utf8_lossy(&body[..body.len().min(ERROR_BODY_BYTES)]);
    let text = text.trim();
    if text.is_empty() {
        head
    } else if body.len() > ERROR_BODY_BYTES {
        format!("{head}: {text}…")
    } else {
        format!("{head}: {text}")
    }
}

/// The delay a `Retry-After` header asks for.
fn retry_after(headers: &HeaderMap, now: SystemTime) -> Option<Duration> {
    headers
        .get(RETRY_AFTER)
        .and_then(|v: &HeaderValue| v.to_str().ok())
        .and_then(|v| parse_retry_after(v, now))
}

/// Reads a `Retry-After` value: delay-seconds, or an HTTP date (RFC 9110 IMF-fixdate; a date in the
/// past means now).
pub fn parse_retry_after(value: &str, now: SystemTime) -> Option<Duration> {
    let value = value.trim();
    if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) {
        return value.parse::<u64>().ok().map(Duration::from_secs);
    }
    let at = chrono::DateTime::parse_from_rfc2822(value).ok()?;
    let at = SystemTime::UNIX_EPOCH + Duration::from_millis(u64::try_from(at.timestamp_millis()).ok()?);
    Some(at.duration_since(now).unwrap_or(Duration::ZERO))
}

/// An error with its causes, which reqwest keeps apart (`error sending request` → `connection refused`).
fn error_chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        let s_text = s.to_string();
        if !text.contains(&s_text) {
            text.push_str(": ");
            text.push_str(&s_text);
        }
        source = s.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_reply_object_spawns_and_awaits_or_succeeds() {
        let cx = JobContext::detached();
        let body = br#"{"spawn":[{"type":"t","key":"a"}],"awaitChildren":true}"#;
        assert_eq!(reply_outcome(body, &cx), Outcome::AwaitChildren);
        let spawned = cx.take_spawned().unwrap();
        assert_eq!(
            spawned.iter().map(|c| c.key.as_deref()).collect::<Vec<_>>(),
            [Some("a")]
        );
        assert_eq!(
            reply_outcome(br#"{"result":{"n":1}}"#, &cx),
            Outcome::success_with(serde_json::json!({"n": 1}))
        );
        let refused = reply_outcome(br#"{"result":1,"spawned":[]}"#, &cx);
        assert!(
            matches!(&refused, Outcome::Retry { error, .. } if error.contains("unknown field")),
            "{refused:?}"
        );
        // A child that cannot be read fails the attempt later, naming it.
        reply_outcome(br#"{"spawn":[{"payload":1}]}"#, &cx);
        assert!(cx.take_spawned().unwrap_err().contains("has no type"));
    }

    #[test]
    fn statuses_map_to_outcomes() {
        let s = |c: u16| StatusCode::from_u16(c).unwrap();
        assert_eq!(
            outcome_of(s(200), br#"{"id":7}"#, None),
            Outcome::success_with(json!({"id": 7}))
        );
        assert_eq!(outcome_of(s(204), b"", None), Outcome::success());
        assert_eq!(outcome_of(s(202), br#"{"queued":true}"#, None), Outcome::Wait);
        assert_eq!(outcome_of(s(202), b"", None), Outcome::Wait);
        assert_eq!(outcome_of(s(200), b"OK, thanks", None), Outcome::success());
        let later = Some(Duration::from_secs(9));
        for code in [408, 500, 502, 503] {
            match outcome_of(s(code), b"busy", later) {
                Outcome::Retry { error, retry_after } => {
                    assert!(error.starts_with(&format!("HTTP {code}")), "{error}");
                    assert!(error.ends_with(": busy"), "{error}");
                    assert_eq!(retry_after, later);
                }
                other => panic!("{code}: {other:?}"),
            }
        }
        for code in [400, 401, 403, 404, 409, 422] {
            assert!(
                matches!(outcome_of(s(code), b"", later), Outcome::Fail { .. }),
                "{code}"
            );
        }
        assert_eq!(outcome_of(s(404), b"", None), Outcome::fail("HTTP 404 Not Found"));
        assert_eq!(outcome_of(s(429), b"slow down", later), Outcome::rate_limited(later));
        assert_eq!(outcome_of(s(429), b"", None), Outcome::rate_limited(None));
        match outcome_of(s(301), b"", None) {
            Outcome::Fail { error } => assert!(error.contains("redirects are not followed"), "{error}"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn long_error_bodies_are_cut() {
        let body = vec![b'e'; 5000];
        let Outcome::Fail { error } = outcome_of(StatusCode::BAD_REQUEST, &body, None) else {
            panic!()
        };
        assert!(error.len() < 600 && error.ends_with('…'), "{}", error.len());
    }

    #[test]
    fn retry_after_reads_seconds_and_dates() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_445_412_480); // 2015-10-21T07:28:00Z
        assert_eq!(parse_retry_after("120", now), Some(Duration::from_secs(120)));
        assert_eq!(parse_retry_after(" 0 ", now), Some(Duration::ZERO));
        assert_eq!(
            parse_retry_after("Wed, 21 Oct 2015 07:28:30 GMT", now),
            Some(Duration::from_secs(30))
        );
        assert_eq!(
            parse_retry_after("Wed, 21 Oct 2015 07:00:00 GMT", now),
            Some(Duration::ZERO)
        );
        assert_eq!(parse_retry_after("soon", now), None);
        assert_eq!(parse_retry_after("-5", now), None);
        assert_eq!(parse_retry_after("", now), None);
    }

    #[test]
    fn signatures_are_hmac_sha256_of_the_body() {
        // RFC 4231, test case 2.
        assert_eq!(
            signature(b"Jefe", b"what do ya want for nothing?"),
            "sha256=5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
    }

    #[test]
    fn only_http_urls_are_accepted() {
        assert!(HttpHandler::new("ftp://example.com/x", None).is_err());
        assert!(HttpHandler::new("not a url", None).is_err());
        assert!(HttpHandler::new("https://example.com/jobs", None).is_ok());
    }
}
