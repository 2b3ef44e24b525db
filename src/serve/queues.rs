//! The store at a glance and its switches: `GET /stats` (`jobq stats -o json`), `GET /workers`,
//! `GET /queues` with `POST /queues/{name}/pause|resume` (`jobq pause|resume`), and the configured
//! schedules with trigger, pause and resume (`jobq schedules`).

use axum::extract::{Path, State};
use axum::{Extension, Json};
use serde_json::{Value, json};

use super::audit;
use super::body::QueryPairs;
use super::error::{ApiError, ApiResult};
use super::state::AppState;
use super::tokens::Caller;
use crate::report::{self, ScheduleRow};
use jobq::client::QueuesReport;
use jobq::schedule::Schedule;
use jobq::store::{Enqueued, WorkerInfo};

/// `GET /api/v1/stats?queue=…`.
pub async fn stats(State(state): State<AppState>, query: QueryPairs) -> ApiResult<Json<Value>> {
    query.only(&["queue"])?;
    let queues = query.list("queue");
    let (stats, flow) = tokio::try_join!(state.stats(&queues), async {
        state.client.flow_state().await.map_err(ApiError::from)
    })?;
    Ok(Json(report::stats(&state.store, &stats, &flow.pauses)))
}

/// `GET /api/v1/workers`: the workers seen recently.
pub async fn workers(State(state): State<AppState>) -> ApiResult<Json<Vec<WorkerInfo>>> {
    Ok(Json(state.client.workers(state.workers_within).await?))
}

/// `GET /api/v1/queues`: [`jobq::Client::queues`]'s report, its counts shared with the stats and
/// `/metrics` requests asking meanwhile.
pub async fn queues(State(state): State<AppState>) -> ApiResult<Json<QueuesReport>> {
    let (stats, flow, limits) = tokio::try_join!(
        state.stats(&[]),
        async { state.client.flow_state().await.map_err(ApiError::from) },
        async { state.client.limits().await.map_err(ApiError::from) },
    )?;
    Ok(Json(QueuesReport::new(stats, &flow, &limits)))
}

/// `POST /api/v1/queues/{name}/pause?type=…`.
pub async fn pause(
    State(state): State<AppState>,
    Extension(caller): Extension<Caller>,
    Path(queue): Path<String>,
    query: QueryPairs,
) -> ApiResult<Json<Value>> {
    set_paused(&state, &caller, &queue, &query, true).await
}

/// `POST /api/v1/queues/{name}/resume?type=…`.
pub async fn resume(
    State(state): State<AppState>,
    Extension(caller): Extension<Caller>,
    Path(queue): Path<String>,
    query: QueryPairs,
) -> ApiResult<Json<Value>> {
    set_paused(&state, &caller, &queue, &query, false).await
}

async fn set_paused(
    state: &AppState,
    caller: &Caller,
    queue: &str,
    query: &QueryPairs,
    paused: bool,
) -> ApiResult<Json<Value>> {
    query.only(&["type"])?;
    let job_type = query.one("type");
    let changed = if paused {
        state.client.pause(queue, job_type).await?
    } else {
        state.client.resume(queue, job_type).await?
    };
    let what = match job_type {
        Some(t) => format!("type {t} in queue {queue}"),
        None => format!("queue {queue}"),
    };
    let action = if paused { "queues.pause" } else { "queues.resume" };
    audit::record(caller, action, what);
    Ok(Json(report::paused(queue, job_type, paused, changed)))
}

/// `GET /api/v1/schedules`.
pub async fn schedules(State(state): State<AppState>) -> ApiResult<Json<Vec<ScheduleRow>>> {
    let states = state.client.schedule_states(&state.schedules).await?;
    Ok(Json(report::schedule_rows(
        &state.schedules,
        states,
        state.client.now(),
    )))
}

/// `POST /api/v1/schedules/{name}/trigger`: one run now, outside the tick sequence.
pub async fn trigger(
    State(state): State<AppState>,
    Extension(caller): Extension<Caller>,
    Path(name): Path<String>,
) -> ApiResult<Json<Enqueued>> {
    let schedule = find(&state, &name)?;
    let enqueued = state.client.trigger_schedule(schedule).await?;
    audit::record(
        &caller,
        "schedules.trigger",
        format!("schedule {name}: job {}", enqueued.id),
    );
    Ok(Json(enqueued))
}

/// `POST /api/v1/schedules/{name}/pause`.
pub async fn pause_schedule(
    State(state): State<AppState>,
    Extension(caller): Extension<Caller>,
    Path(name): Path<String>,
) -> ApiResult<Json<Value>> {
    schedule_paused(&state, &caller, &name, true, false).await
}

/// `POST /api/v1/schedules/{name}/resume?catchUp=true`.
pub async fn resume_schedule(
    State(state): State<AppState>,
    Extension(caller): Extension<Caller>,
    Path(name): Path<String>,
    query: QueryPairs,
) -> ApiResult<Json<Value>> {
    query.only(&["catchUp"])?;
    schedule_paused(&state, &caller, &name, false, query.flag("catchUp")?).await
}

async fn schedule_paused(
    state: &AppState,
    caller: &Caller,
    name: &str,
    paused: bool,
    catch_up: bool,
) -> ApiResult<Json<Value>> {
    let schedule = find(state, name)?;
    state.client.set_schedule_paused(schedule, paused, catch_up).await?;
    let action = if paused { "schedules.pause" } else { "schedules.resume" };
    audit::record(caller, action, format!("schedule {name}"));
    Ok(Json(json!({
        "schedule": name,
        "paused": paused,
        // A schedule its config pauses stays paused whatever the store says.
        "pausedByConfig": schedule.paused,
    })))
}

fn find<'a>(state: &'a AppState, name: &str) -> Result<&'a Schedule, jobq::Error> {
    state
        .schedules
        .iter()
        .find(|s| s.name == name)
        .ok_or_else(|| jobq::Error::no_such_schedule(name))
}
