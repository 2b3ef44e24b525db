//! `GET /metrics`: the store's gauges (the text `jobq stats -o prometheus` prints) and the server's
//! own request counters; `GET /healthz`: whether the store answers.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::Mutex;
use std::time::Duration;

use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::json;

use super::error::{ApiError, ApiResult};
use super::state::AppState;
use crate::report::{self, label};

/// How long `/healthz` waits for the store before it calls it unreachable.
const HEALTH_TIMEOUT: Duration = Duration::from_secs(5);

/// Requests answered, by method, route template (not the path, so ids do not make new series) and
/// status.
#[derive(Debug, Default)]
pub struct Counters(Mutex<BTreeMap<(String, String, u16), u64>>);

impl Counters {
    /// Counts one answered request.
    pub fn count(&self, method: &str, route: &str, status: u16) {
        let mut map = self.0.lock().unwrap_or_else(|p| p.into_inner());
        *map.entry((method.to_string(), route.to_string(), status)).or_default() += 1;
    }

    /// The counters in the Prometheus text format.
    pub fn render(&self) -> String {
        let map = self.0.lock().unwrap_or_else(|p| p.into_inner());
        let mut out = String::from(
            "# HELP jobq_http_requests_total Requests answered by jobq serve, by method, route and status.\n# TYPE jobq_http_requests_total counter\n",
        );
        for ((method, route, status), n) in map.iter() {
            let _ = writeln!(
                out,
                "jobq_http_requests_total{{method=\"{}\",route=\"{}\",status=\"{status}\"}} {n}",
                label(method),
                label(route)
            );
        }
        out
    }
}

/// `GET /metrics`.
pub async fn metrics(State(state): State<AppState>) -> ApiResult<Response> {
    let stats = state.stats(&[]).await?;
    let mut text = report::prometheus(&stats, state.client.now());
    if let Some(policy) = &state.autoscale {
        text.push_str(
            "# HELP jobq_queue_desired_workers Workers the queue needs under [serve.autoscale] (jobq autoscale's formula).\n# TYPE jobq_queue_desired_workers gauge\n",
        );
        for q in &stats.queues {
            let estimate = state.client.desired_workers(&q.queue, policy).await?;
            let _ = writeln!(
                text,
                "jobq_queue_desired_workers{{queue=\"{}\"}} {}",
                label(&q.queue),
                estimate.workers
            );
        }
    }
    text.push_str(&bridges(&state.client.workers(state.workers_within).await?));
    text.push_str(&state.counters.render());
    Ok((
        [(header::CONTENT_TYPE, "text/plain; version=0.0.4; charset=utf-8")],
        text,
    )
        .into_response())
}

/// The bridges' counts (`jobq bridge`, which registers beside the workers): messages by what became
/// of them, per bridge seen recently.
fn bridges(workers: &[jobq::store::WorkerInfo]) -> String {
    let mut out = String::from(
        "# HELP jobq_bridge_messages_total Messages a bridge consumed, by what became of them (enqueued, duplicate: its job was there already, rejected).\n# TYPE jobq_bridge_messages_total counter\n",
    );
    for w in workers {
        let Some(b) = &w.bridge else { continue };
        for (outcome, n) in [
            ("enqueued", w.jobs_done),
            ("duplicate", b.duplicates),
            ("rejected", b.rejected),
        ] {
            let _ = writeln!(
                out,
                "jobq_bridge_messages_total{{bridge=\"{}\",source=\"{}\",outcome=\"{outcome}\"}} {n}",
                label(&w.id),
                label(&b.source)
            );
        }
    }
    out
}

/// `GET /healthz`: 200 when the store answers, 503 with the error otherwise.
pub async fn healthz(State(state): State<AppState>) -> ApiResult<Response> {
    match tokio::time::timeout(HEALTH_TIMEOUT, state.client.store().info()).await {
        Ok(Ok(info)) => Ok(axum::Json(json!({"status": "ok", "store": info.kind.to_string()})).into_response()),
        Ok(Err(e)) => Err(ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "store_unavailable",
            jobq::Error::from(e).to_string(),
        )),
        Err(_) => Err(ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "store_unavailable",
            format!("the store did not answer within {}s", HEALTH_TIMEOUT.as_secs()),
        )),
    }
}
