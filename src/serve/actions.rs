//! What an operator does to jobs: cancel, delete, retry, resolve, replay dead letters and clean up.
//! Each answers with the document `jobq <verb> -o json` prints (see `report/`); where the CLI would
//! exit non-zero after doing part of the work (some ids not found, some jobs in the way), the answer is
//! the matching error with that document in `error.details`. Each action writes one audit line.

use axum::extract::{Path, State};
use axum::{Extension, Json};
use serde::Deserialize;
use serde_json::Value;

use super::audit;
use super::body::{JsonBody, QueryPairs};
use super::error::{ApiError, ApiResult};
use super::jobs::{duration, statuses, to_json};
use super::state::AppState;
use super::tokens::Caller;
use crate::report::{self, Document as _};
use jobq::client::CleanupRequest;
use jobq::error::{Error, Input};
use jobq::job::{JobId, JobStatus};
use jobq::store::{JobFilter, ReplayDead, Resolution};

/// Jobs named by id, or picked by a filter: the body of the bulk actions.
#[derive(Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct Selection {
    /// These jobs.
    ids: Vec<String>,
    /// Or every job of these queues…
    queue: Vec<String>,
    /// …of these types…
    #[serde(rename = "type")]
    job_type: Vec<String>,
    /// …in these statuses.
    status: Vec<String>,
    /// (delete) created longer ago than this, e.g. `7d`.
    older_than: Option<String>,
    /// (delete) running and waiting jobs too.
    force: bool,
    /// (cancel by ids) the jobs that descend from them too.
    cascade: bool,
}

impl Selection {
    fn has_filter(&self) -> bool {
        !(self.queue.is_empty() && self.job_type.is_empty() && self.status.is_empty() && self.older_than.is_none())
    }

    /// The ids, or the filter; refuses both and neither, as the CLI's arguments do.
    fn split(&self) -> Result<Option<JobFilter>, ApiError> {
        match (self.ids.is_empty(), self.has_filter()) {
            (false, true) => Err(invalid(
                Input::JobId,
                "give ids or a filter (queue, type, status), not both",
            )),
            (true, false) => Err(invalid(
                Input::JobId,
                "give ids, or a filter (queue, type, status) to pick jobs by",
            )),
            (false, false) => Ok(None),
            (true, true) => Ok(Some(JobFilter {
                queues: self.queue.clone(),
                job_types: self.job_type.clone(),
                statuses: statuses(&self.status)?,
                ..Default::default()
            })),
        }
    }
}

fn invalid(input: Input, reason: &str) -> ApiError {
    jobq::error::InvalidInput::new(input, reason).into()
}

/// Answers `document`, or the refusal it amounts to carrying it.
fn answer(document: Value, refusal: Option<Error>) -> ApiResult<Json<Value>> {
    match refusal {
        None => Ok(Json(document)),
        Some(e) => Err(ApiError::from(e).with_details(document)),
    }
}

/// `POST /api/v1/jobs/{id}/cancel`, `?cascade=true` for the jobs that descend from it too.
pub async fn cancel_one(
    State(state): State<AppState>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
    query: QueryPairs,
) -> ApiResult<Json<Value>> {
    query.only(&["cascade"])?;
    cancel_ids(&state, &caller, std::slice::from_ref(&id), query.flag("cascade")?).await
}

/// `POST /api/v1/jobs/cancel` with `{"ids": […]}` or a filter `{"queue", "type", "status"}`.
pub async fn cancel(
    State(state): State<AppState>,
    Extension(caller): Extension<Caller>,
    JsonBody(body): JsonBody<Selection>,
) -> ApiResult<Json<Value>> {
    if body.older_than.is_some() || body.force {
        return Err(ApiError::bad_request("cancel takes ids, queue, type and status only"));
    }
    let Some(filter) = body.split()? else {
        return cancel_ids(&state, &caller, &body.ids, body.cascade).await;
    };
    if body.cascade {
        return Err(ApiError::bad_request("cascade goes with ids, not with a filter"));
    }
    let cancelled = state.client.cancel_matching(filter).await?;
    audit::record(&caller, "jobs.cancel", audit::ids(cancelled.iter().map(|c| &c.id)));
    Ok(Json(report::cancelled(&cancelled)))
}

async fn cancel_ids(state: &AppState, caller: &Caller, ids: &[String], cascade: bool) -> ApiResult<Json<Value>> {
    let report = state.client.cancel_ids(ids, cascade).await?;
    audit::record(
        caller,
        "jobs.cancel",
        audit::ids(report.cancelled.iter().chain(&report.descendants).map(|c| &c.id)),
    );
    answer(report.document(), report.refusal())
}

/// `DELETE /api/v1/jobs/{id}?force=true`.
pub async fn delete_one(
    State(state): State<AppState>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
    query: QueryPairs,
) -> ApiResult<Json<Value>> {
    query.only(&["force"])?;
    delete_ids(&state, &caller, std::slice::from_ref(&id), query.flag("force")?).await
}

/// `POST /api/v1/jobs/delete` with `{"ids": […]}` or a filter `{"queue", "type", "status",
/// "olderThan"}`, and `"force"` for running and waiting jobs.
pub async fn delete(
    State(state): State<AppState>,
    Extension(caller): Extension<Caller>,
    JsonBody(body): JsonBody<Selection>,
) -> ApiResult<Json<Value>> {
    if body.cascade {
        return Err(ApiError::bad_request("cascade goes with a cancel, not a delete"));
    }
    let Some(mut filter) = body.split()? else {
        return delete_ids(&state, &caller, &body.ids, body.force).await;
    };
    if let Some(text) = &body.older_than {
        filter.created_until = Some(state.client.now().minus(duration("olderThan", text)?));
    }
    let n = state.client.delete_matching(filter, body.force).await?;
    audit::record(
        &caller,
        "jobs.delete",
        format!("{} by filter", report::jobs(n.deleted, "")),
    );
    answer(to_json(n), report::delete_matching_refusal(&n))
}

async fn delete_ids(state: &AppState, caller: &Caller, ids: &[String], force: bool) -> ApiResult<Json<Value>> {
    let report = state.client.delete(ids, force).await?;
    audit::record(
        caller,
        "jobs.delete",
        audit::ids(report.deleted.iter().map(|(id, _)| id)),
    );
    answer(report.document(), report.refusal())
}

/// `POST /api/v1/jobs/{id}/retry`.
pub async fn retry_one(
    State(state): State<AppState>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
) -> ApiResult<Json<Value>> {
    retry_ids(&state, &caller, std::slice::from_ref(&id)).await
}

/// The body of `POST /api/v1/jobs/retry`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Ids {
    ids: Vec<String>,
}

/// `POST /api/v1/jobs/retry` with `{"ids": […]}`.
pub async fn retry(
    State(state): State<AppState>,
    Extension(caller): Extension<Caller>,
    JsonBody(body): JsonBody<Ids>,
) -> ApiResult<Json<Value>> {
    if body.ids.is_empty() {
        return Err(invalid(Input::JobId, "give the ids of the jobs to retry"));
    }
    retry_ids(&state, &caller, &body.ids).await
}

async fn retry_ids(state: &AppState, caller: &Caller, ids: &[String]) -> ApiResult<Json<Value>> {
    let report = state.client.retry(ids).await?;
    audit::record(caller, "jobs.retry", audit::ids(report.retried.iter().map(|j| &j.id)));
    answer(report.document(), report.refusal())
}

/// The body of `POST /api/v1/jobs/{id}/resolve`.
#[derive(Debug, Deserialize)]
#[serde(tag = "action", rename_all = "lowercase", deny_unknown_fields)]
pub enum ResolveBody {
    /// The job succeeded, with an optional result.
    Succeed {
        #[serde(default)]
        result: Option<Value>,
    },
    /// The job failed for good (dead).
    Fail { error: String },
    /// Run it again, not before `delay` from now.
    Retry {
        #[serde(default)]
        delay: Option<String>,
    },
    /// Drop it (discarded).
    Discard {
        #[serde(default)]
        reason: Option<String>,
    },
}

/// `POST /api/v1/jobs/{id}/resolve`: finish a waiting job; resolving it the same way twice is no
/// error, as with `jobq resolve`.
pub async fn resolve(
    State(state): State<AppState>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
    JsonBody(body): JsonBody<ResolveBody>,
) -> ApiResult<Json<Value>> {
    let job_id = JobId::parse(&id)?;
    let action = match body {
        ResolveBody::Succeed { result } => Resolution::Succeed {
            result: result
                .map(|r| serde_json::value::to_raw_value(&r))
                .transpose()
                .map_err(|e| invalid(Input::Resolution, &format!("result: {e}")))?,
        },
        ResolveBody::Fail { error } => Resolution::Fail { error },
        ResolveBody::Retry { delay } => Resolution::Retry {
            run_at: state
                .client
                .now()
                .plus(delay.map(|d| duration("delay", &d)).transpose()?.unwrap_or_default()),
            error: None,
        },
        ResolveBody::Discard { reason } => Resolution::Discard {
            reason: reason.unwrap_or_else(|| "discarded by an operator".to_string()),
        },
    };
    let leads_to = action.status();
    let answer_ = state.client.resolve(job_id.as_str(), action).await?;
    audit::record(&caller, "jobs.resolve", format!("job {job_id} to {leads_to}"));
    answer(
        report::resolved(&job_id, answer_),
        report::resolve_refusal(&job_id, answer_, leads_to),
    )
}

/// The body of `POST /api/v1/dead/replay`.
#[derive(Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct ReplayBody {
    ids: Vec<String>,
    queue: Vec<String>,
    #[serde(rename = "type")]
    job_type: Vec<String>,
    limit: Option<u32>,
    dry_run: bool,
    cascade: bool,
}

/// `POST /api/v1/dead/replay`: dead jobs back to pending (by ids, or all matching the filter, oldest
/// death first, at most `limit`); with `dryRun`, the jobs that would move.
pub async fn replay(
    State(state): State<AppState>,
    Extension(caller): Extension<Caller>,
    JsonBody(body): JsonBody<ReplayBody>,
) -> ApiResult<Json<Value>> {
    if body.limit == Some(0) {
        return Err(invalid(Input::Limit, "limit 0 replays nothing; give at least 1"));
    }
    let ids = body
        .ids
        .iter()
        .map(|i| JobId::parse(i))
        .collect::<Result<Vec<_>, _>>()?;
    let request = ReplayDead {
        filter: JobFilter {
            queues: body.queue,
            job_types: body.job_type,
            ..Default::default()
        },
        ids,
        limit: body.limit,
        dry_run: body.dry_run,
        // A dry run names the dead jobs a replay would move, not what its cascade would bring back.
        cascade: body.cascade && !body.dry_run,
        ..Default::default()
    };
    let mut jobs = state.client.replay_dead(request).await?;
    if body.dry_run {
        return Ok(Json(to_json(report::ReplayDryRun {
            dry_run: true,
            would_replay: &jobs,
        })));
    }
    jobs.sort_by(|a, b| a.id.cmp(&b.id));
    audit::record(&caller, "dead.replay", audit::ids(jobs.iter().map(|j| &j.id)));
    Ok(Json(report::replayed(&jobs)))
}

/// The body of `POST /api/v1/cleanup`.
#[derive(Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct CleanupBody {
    older_than: Option<String>,
    status: Vec<String>,
    queue: Vec<String>,
    #[serde(rename = "type")]
    job_type: Vec<String>,
    keep_last: Option<u32>,
    dry_run: bool,
}

/// `POST /api/v1/cleanup`: delete finished jobs (older than `olderThan`, of these statuses, queues
/// and types, past the newest `keepLast` of each queue and status); with `dryRun`, count them.
pub async fn cleanup(
    State(state): State<AppState>,
    Extension(caller): Extension<Caller>,
    JsonBody(body): JsonBody<CleanupBody>,
) -> ApiResult<Json<Value>> {
    let statuses = statuses(&body.status)?;
    if let Some(s) = statuses.iter().find(|s: &&JobStatus| !s.is_terminal()) {
        return Err(invalid(
            Input::Status,
            &format!("status {s}: cleanup deletes only terminal jobs (succeeded, dead, cancelled, discarded, expired)"),
        ));
    }
    let request = CleanupRequest {
        older_than: body
            .older_than
            .as_deref()
            .map(|t| duration("olderThan", t))
            .transpose()?,
        statuses,
        queues: body.queue,
        job_types: body.job_type,
        keep_last: body.keep_last,
        dry_run: body.dry_run,
    };
    let n = state.client.cleanup(&request).await?;
    if !body.dry_run {
        audit::record(&caller, "jobs.cleanup", report::jobs(n, "finished"));
    }
    Ok(Json(report::cleanup(n, body.dry_run)))
}
