//! Who may do what: the bearer token (when tokens are configured, every request needs one; a `read`
//! token may only read) and the cross-site checks (a request that changes something and comes from a
//! page of another origin is refused, whatever it carries). There is no cookie auth at all, so a
//! browser cannot act for a user by itself; the `Origin` check is the second wall.
//!
//! A server without tokens listens on loopback only, where any local page could reach it by a name
//! that resolves to 127.0.0.1 (DNS rebinding: the page's origin and the `Host` it sends then agree).
//! So without tokens a request must also be addressed to a loopback host by its `Host` header.

use axum::extract::{Request, State};
use axum::http::{HeaderMap, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::error::ApiError;
use super::state::AppState;
use super::tokens::Caller;
use crate::config::Role;

/// Lets a request through to its handler, with its [`Caller`] in the extensions, or answers 401
/// (no token, or an unknown one) or 403 (a read token acting, or another origin acting).
pub async fn guard(State(state): State<AppState>, mut req: Request, next: Next) -> Response {
    if state.tokens.is_empty()
        && let Err(e) = loopback_host(req.headers())
    {
        return e.into_response();
    }
    let acts = !matches!(*req.method(), Method::GET | Method::HEAD | Method::OPTIONS);
    if acts && let Err(e) = same_origin(req.headers()) {
        return e.into_response();
    }
    let caller = match caller(&state, req.headers()) {
        Ok(caller) => caller,
        Err(e) => return e.into_response(),
    };
    if acts && caller.role < Role::Admin {
        return ApiError::new(
            StatusCode::FORBIDDEN,
            "forbidden",
            format!(
                "token {:?} may only read (role read); acting needs a token with role admin",
                caller.shown()
            ),
        )
        .into_response();
    }
    req.extensions_mut().insert(caller);
    next.run(req).await
}

/// The caller a request's `Authorization: Bearer …` names, or an admin without a name on a server
/// without tokens.
fn caller(state: &AppState, headers: &HeaderMap) -> Result<Caller, ApiError> {
    if state.tokens.is_empty() {
        return Ok(Caller {
            name: None,
            role: Role::Admin,
        });
    }
    let unauthorized = |why: &str| ApiError::new(StatusCode::UNAUTHORIZED, "unauthorized", why.to_string());
    let value = headers
        .get(header::AUTHORIZATION)
        .ok_or_else(|| unauthorized("this server needs a token: send Authorization: Bearer TOKEN"))?;
    let presented = value
        .to_str()
        .ok()
        .and_then(|v| v.strip_prefix("Bearer ").or_else(|| v.strip_prefix("bearer ")))
        .map(str::trim)
        .ok_or_else(|| unauthorized("the Authorization header must be Bearer TOKEN"))?;
    state
        .tokens
        .caller(presented)
        .ok_or_else(|| unauthorized("the token is not one this server accepts"))
}

/// Refuses a request whose `Origin` is not this server's own host (a page elsewhere posting to it). A
/// request without `Origin` comes from a program, not a page, and passes.
fn same_origin(headers: &HeaderMap) -> Result<(), ApiError> {
    let Some(origin) = headers.get(header::ORIGIN) else {
        return Ok(());
    };
    let refuse = || {
        ApiError::new(
            StatusCode::FORBIDDEN,
            "cross_origin",
            "a request from a page of another origin may not change anything here",
        )
    };
    let origin = origin.to_str().map_err(|_| refuse())?;
    let host = headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .ok_or_else(refuse)?;
    let authority = origin
        .split_once("://")
        .map(|(_, rest)| rest.trim_end_matches('/'))
        .ok_or_else(refuse)?;
    if authority.eq_ignore_ascii_case(host) {
        Ok(())
    } else {
        Err(refuse())
    }
}

/// Refuses a request whose `Host` is not a loopback name or address (`localhost`, `127.0.0.1`,
/// `[::1]`, with any port).
fn loopback_host(headers: &HeaderMap) -> Result<(), ApiError> {
    let host = headers.get(header::HOST).and_then(|h| h.to_str().ok()).unwrap_or("");
    let name = match host.strip_prefix('[') {
        Some(rest) => rest.split(']').next().unwrap_or(""),
        None => host.rsplit_once(':').map_or(host, |(name, _)| name),
    };
    let loopback =
        name.eq_ignore_ascii_case("localhost") || name.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback());
    if loopback {
        Ok(())
    } else {
        Err(ApiError::new(
            StatusCode::FORBIDDEN,
            "host_not_allowed",
            format!(
                "this server has no tokens and answers only requests addressed to localhost, not {host:?}; configure [serve] tokens to serve other names"
            ),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(origin: Option<&str>, host: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(header::HOST, host.parse().unwrap());
        if let Some(o) = origin {
            h.insert(header::ORIGIN, o.parse().unwrap());
        }
        h
    }

    #[test]
    fn only_a_page_of_this_host_or_no_page_may_act() {
        assert!(same_origin(&headers(None, "127.0.0.1:8080")).is_ok());
        assert!(same_origin(&headers(Some("http://127.0.0.1:8080"), "127.0.0.1:8080")).is_ok());
        assert!(same_origin(&headers(Some("https://JOBS.example:8443"), "jobs.example:8443")).is_ok());
        assert!(same_origin(&headers(Some("http://evil.example"), "127.0.0.1:8080")).is_err());
        assert!(same_origin(&headers(Some("http://127.0.0.1:9090"), "127.0.0.1:8080")).is_err());
        assert!(same_origin(&headers(Some("null"), "127.0.0.1:8080")).is_err());
    }

    #[test]
    fn without_tokens_only_loopback_hosts_are_answered() {
        for host in ["127.0.0.1:8080", "localhost:1", "LOCALHOST", "[::1]:8080", "127.0.0.2"] {
            assert!(loopback_host(&headers(None, host)).is_ok(), "{host}");
        }
        for host in [
            "evil.example:8080",
            "evil.example",
            "10.0.0.1:80",
            "[fe80::1]:80",
            "localhost.evil.example",
        ] {
            assert!(loopback_host(&headers(None, host)).is_err(), "{host}");
        }
    }
}
