//! `POST /api/v1/batches` and `GET /api/v1/batches/{id}`: a batch of jobs with a callback (and an
//! on-failure job) in one call, as `jobq batch` enqueues it, and where a batch stands.

use axum::Extension;
use axum::Json;
use axum::extract::{Path, State};
use serde_json::Value;

use super::audit;
use super::body::JsonBody;
use super::error::ApiResult;
use super::jobs::spec;
use super::state::AppState;
use super::tokens::Caller;
use jobq::error::{Input, InvalidInput};

/// `POST /api/v1/batches`: `{"jobs": [job JSON…], "then": job JSON, "onFailure": job JSON}`
/// (`onFailure` optional); answers with the batch's id and each job's answer.
pub async fn enqueue(
    State(state): State<AppState>,
    Extension(caller): Extension<Caller>,
    JsonBody(body): JsonBody<Value>,
) -> ApiResult<Json<Value>> {
    let Value::Object(mut body) = body else {
        return Err(refused("a batch is an object: {\"jobs\": [...], \"then\": {...}, \"onFailure\": {...}}").into());
    };
    if let Some(unknown) = body
        .keys()
        .find(|k| !["jobs", "then", "onFailure"].contains(&k.as_str()))
    {
        return Err(refused(format!("a batch has no field {unknown:?} (jobs, then, onFailure)")).into());
    }
    let Some(Value::Array(items)) = body.remove("jobs") else {
        return Err(refused("a batch's jobs is a list of job JSON objects").into());
    };
    let members = items
        .into_iter()
        .enumerate()
        .map(|(i, item)| {
            let at = |e: InvalidInput| e.at(format_args!("job {}", i + 1));
            state.with_defaults(spec(item).map_err(at)?).map_err(at)
        })
        .collect::<Result<Vec<_>, InvalidInput>>()?;
    let then = body
        .remove("then")
        .ok_or_else(|| refused("a batch needs then: its callback job"))?;
    let then = state
        .with_defaults(spec(then).map_err(|e| e.at("then"))?)
        .map_err(|e| e.at("then"))?;
    let batch = match body.remove("onFailure") {
        None | Some(Value::Null) => state.client.batch(members, then).await?,
        Some(job) => {
            let on_failure = spec(job).map_err(|e| e.at("onFailure"))?;
            state.client.batch_on_failure(members, then, on_failure).await?
        }
    };
    let ids = batch
        .members
        .iter()
        .chain([&batch.then])
        .chain(&batch.on_failure)
        .map(|e| &e.id);
    audit::record(&caller, "batches.enqueue", audit::ids(ids));
    Ok(Json(serde_json::to_value(&batch).unwrap_or_default()))
}

/// `GET /api/v1/batches/{id}`: the batch's members counted by status, its callback's status and
/// its on-failure job's.
pub async fn show(State(state): State<AppState>, Path(id): Path<String>) -> ApiResult<Json<Value>> {
    let status = state.client.batch_status(&id).await?;
    Ok(Json(serde_json::to_value(&status).unwrap_or_default()))
}

fn refused(what: impl Into<String>) -> InvalidInput {
    InvalidInput::new(Input::JobsFile, what)
}
