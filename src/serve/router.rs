//! The routes and the layers every request goes through, outermost first: compression (for clients
//! that accept gzip), counting and the access log (so refusals are counted too), the request
//! time-out, the token and origin guard, the body cap. The dashboard's files are outside the guard:
//! they hold no data, and a browser must load the page before it can ask for a token.

use std::time::{Duration, Instant};

use axum::Router;
use axum::extract::{DefaultBodyLimit, MatchedPath, Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use tower_http::compression::CompressionLayer;

use super::error::ApiError;
use super::state::AppState;
use super::{actions, batches, dashboard, guard, jobs, metrics, overview, queues};

/// The OpenAPI 3.1 description of `/api/v1`, kept true by `tests/it/serve/openapi.rs`.
pub const OPENAPI: &str = include_str!("openapi.json");

/// Every route, under its layers.
pub fn router(state: AppState, request_timeout: Duration) -> Router {
    let api = Router::new()
        .route("/jobs", get(jobs::list).post(jobs::enqueue))
        .route("/flows", post(jobs::flow))
        .route("/batches", post(batches::enqueue))
        .route("/batches/{id}", get(batches::show))
        .route("/jobs/cancel", post(actions::cancel))
        .route("/jobs/delete", post(actions::delete))
        .route("/jobs/retry", post(actions::retry))
        .route("/jobs/{id}", get(jobs::show).delete(actions::delete_one))
        .route("/jobs/{id}/graph", get(jobs::graph))
        .route("/jobs/{id}/cancel", post(actions::cancel_one))
        .route("/jobs/{id}/retry", post(actions::retry_one))
        .route("/jobs/{id}/resolve", post(actions::resolve))
        .route("/dead/replay", post(actions::replay))
        .route("/cleanup", post(actions::cleanup))
        .route("/stats", get(queues::stats))
        .route("/workers", get(queues::workers))
        .route("/queues", get(queues::queues))
        .route("/queues/{name}/pause", post(queues::pause))
        .route("/queues/{name}/resume", post(queues::resume))
        .route("/schedules", get(queues::schedules))
        .route("/schedules/{name}/trigger", post(queues::trigger))
        .route("/schedules/{name}/pause", post(queues::pause_schedule))
        .route("/schedules/{name}/resume", post(queues::resume_schedule))
        .route("/throughput", get(overview::throughput))
        .route("/doctor", get(overview::doctor))
        .route("/me", get(overview::me))
        .route("/openapi.json", get(openapi));
    let max_body = state.max_body;
    let guarded = Router::new()
        .nest("/api/v1", api)
        .route("/metrics", get(metrics::metrics))
        .route("/healthz", get(metrics::healthz))
        .fallback(no_route)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(DefaultBodyLimit::max(max_body))
        .layer(middleware::from_fn_with_state(state.clone(), guard::guard));
    guarded
        .merge(dashboard::routes())
        .layer(middleware::from_fn(move |req: Request, next: Next| {
            time_limit(request_timeout, req, next)
        }))
        .layer(middleware::from_fn_with_state(state.clone(), observe))
        .layer(CompressionLayer::new())
        .with_state(state)
}

async fn openapi() -> Response {
    ([(header::CONTENT_TYPE, "application/json")], OPENAPI).into_response()
}

async fn no_route(req: Request) -> ApiError {
    ApiError::new(
        StatusCode::NOT_FOUND,
        "no_such_route",
        format!("no such route: {} (see /api/v1/openapi.json)", req.uri().path()),
    )
}

async fn method_not_allowed(req: Request) -> ApiError {
    ApiError::new(
        StatusCode::METHOD_NOT_ALLOWED,
        "method_not_allowed",
        format!("{} is not allowed on {}", req.method(), req.uri().path()),
    )
}

/// Bounds a request's whole life, reading its body included, so a client that trickles a body in
/// cannot hold a connection and a task for ever.
async fn time_limit(limit: Duration, req: Request, next: Next) -> Response {
    match tokio::time::timeout(limit, next.run(req)).await {
        Ok(response) => response,
        Err(_) => ApiError::new(
            StatusCode::REQUEST_TIMEOUT,
            "request_timeout",
            format!("the request took longer than {}s", limit.as_secs_f64()),
        )
        .into_response(),
    }
}

/// Counts the answer by route and status, and logs one line per request at `-v` (the path only: a
/// query string or a header could hold what should not be logged).
async fn observe(State(state): State<AppState>, req: Request, next: Next) -> Response {
    let started = Instant::now();
    let method = req.method().clone();
    let path = req.uri().path().to_string();
    let route = req
        .extensions()
        .get::<MatchedPath>()
        .map_or("unmatched", |m| m.as_str())
        .to_string();
    let response = next.run(req).await;
    let status = response.status().as_u16();
    state.counters.count(method.as_str(), &route, status);
    tracing::debug!(
        target: "jobq::serve",
        %method,
        path,
        status,
        ms = started.elapsed().as_millis() as u64,
        "request"
    );
    response
}
