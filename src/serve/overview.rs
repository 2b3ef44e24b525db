//! What the dashboard reads beyond the CLI's documents: `GET /throughput` (the jobs finished per
//! minute, per queue, which the overview charts) and `GET /doctor` (the findings `jobq doctor -o json`
//! prints, which the stuck page lists), and `GET /me` (the caller's token name and role, so the page
//! hides what a read token may not do). All only read.

use std::time::Duration;

use axum::extract::State;
use axum::{Extension, Json};
use serde_json::{Value, json};

use super::body::QueryPairs;
use super::error::ApiResult;
use super::jobs::duration;
use super::state::AppState;
use super::tokens::Caller;
use crate::report;
use jobq::doctor::Report;

/// The overview's chart: the last hour…
const DEFAULT_WINDOW: Duration = Duration::from_secs(3600);

/// …by the minute.
const DEFAULT_BUCKET: Duration = Duration::from_secs(60);

/// `GET /api/v1/throughput?queue&window&bucket`: jobs finished per bucket (default a minute) over the
/// window (default an hour), the last bucket the one under way.
pub async fn throughput(State(state): State<AppState>, query: QueryPairs) -> ApiResult<Json<Value>> {
    query.only(&["queue", "window", "bucket"])?;
    let window = query
        .one("window")
        .map(|w| duration("window", w))
        .transpose()?
        .unwrap_or(DEFAULT_WINDOW);
    let bucket = query
        .one("bucket")
        .map(|b| duration("bucket", b))
        .transpose()?
        .unwrap_or(DEFAULT_BUCKET);
    let (params, counts) = state.client.throughput(&query.list("queue"), window, bucket).await?;
    Ok(Json(report::throughput(&params, &counts, state.client.now())))
}

/// `GET /api/v1/doctor`: what `jobq doctor` finds, with the server's config and the default
/// thresholds. A finding is no error: the answer is 200 with `healthy` false.
pub async fn doctor(State(state): State<AppState>) -> ApiResult<Json<Report>> {
    Ok(Json(state.client.doctor(&state.doctor).await?))
}

/// `GET /api/v1/me`: the name of the token the request carried (null on a server without tokens)
/// and its role.
pub async fn me(Extension(caller): Extension<Caller>) -> Json<Value> {
    Json(json!({ "token": caller.name, "role": caller.role.as_str() }))
}
