//! The web dashboard: one HTML page, its styles and its script modules, embedded in the binary with
//! `include_str!` (no build step, nothing fetched from the network at build or run time), served at
//! `/` and `/ui/…`. The assets hold no data and are served without a token: every figure the page
//! shows it reads from `/api/v1/…` itself, with the token the user types in (`dashboard/api.js`
//! keeps it in `sessionStorage` and sends it as `Authorization: Bearer`), so the guard and the API's
//! roles apply to the page exactly as to any other client. There is no cookie, so no request a page
//! elsewhere makes can carry the user's authority.
//!
//! The page never builds HTML from data (job payloads and error texts are anyone's input): it makes
//! DOM nodes and sets their text, and the content security policy allows scripts and styles from
//! this server only.

use axum::Router;
use axum::extract::Path;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;

use super::error::ApiError;
use super::state::AppState;

/// A file of the dashboard.
struct Asset {
    /// Its path under `/ui/`.
    path: &'static str,
    /// Its text.
    body: &'static str,
}

/// Embeds `dashboard/<path>` under its path.
macro_rules! assets {
    ($($path:literal),+ $(,)?) => {
        &[$(Asset { path: $path, body: include_str!(concat!("dashboard/", $path)) }),+]
    };
}

/// Every file the page loads; `index.html` is also the answer at `/`.
const ASSETS: &[Asset] = assets!(
    "index.html",
    "app.css",
    "app.js",
    "api.js",
    "ui.js",
    "chart.js",
    "graph.js",
    "pages/overview.js",
    "pages/jobs.js",
    "pages/job.js",
    "pages/dead.js",
    "pages/workers.js",
    "pages/queues.js",
    "pages/schedules.js",
    "pages/stuck.js",
);

/// Scripts, styles and API calls from this server only; no frames around it (clickjacking); inline
/// SVG is part of the document and needs nothing more.
const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; \
                   base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/// The dashboard's routes, outside the token guard (see the module text).
pub fn routes() -> Router<AppState> {
    Router::new().route("/", get(index)).route("/ui/{*path}", get(asset))
}

async fn index() -> Response {
    serve("index.html").unwrap_or_else(|| StatusCode::INTERNAL_SERVER_ERROR.into_response())
}

async fn asset(Path(path): Path<String>) -> Response {
    serve(&path).unwrap_or_else(|| {
        ApiError::new(
            StatusCode::NOT_FOUND,
            "no_such_route",
            format!("no such dashboard file: /ui/{path}"),
        )
        .into_response()
    })
}

fn serve(path: &str) -> Option<Response> {
    let asset = ASSETS.iter().find(|a| a.path == path)?;
    let content_type = match path.rsplit_once('.').map(|(_, ext)| ext) {
        Some("html") => "text/html; charset=utf-8",
        Some("css") => "text/css; charset=utf-8",
        _ => "text/javascript; charset=utf-8",
    };
    let mut response = asset.body.into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    // Revalidated on every load, so a new binary's page never runs with an old binary's scripts.
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    headers.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(CSP));
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    headers.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    Some(response)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_module_the_scripts_import_is_embedded() {
        for asset in ASSETS {
            for line in asset.body.lines() {
                let Some(rest) = line.trim().strip_prefix("import ") else {
                    continue;
                };
                let Some(from) = rest.split(" from ").nth(1) else {
                    continue;
                };
                let target = from.trim().trim_end_matches(';').trim_matches(['\'', '"']);
                let base = asset.path.rsplit_once('/').map_or("", |(dir, _)| dir);
                let resolved = resolve(base, target);
                assert!(
                    ASSETS.iter().any(|a| a.path == resolved),
                    "{} imports {target} ({resolved}), which is not embedded",
                    asset.path
                );
            }
        }
    }

    fn resolve(base: &str, target: &str) -> String {
        let mut parts: Vec<&str> = base.split('/').filter(|p| !p.is_empty()).collect();
        for piece in target.split('/') {
            match piece {
                "." => {}
                ".." => {
                    parts.pop();
                }
                p => parts.push(p),
            }
        }
        parts.join("/")
    }
}
