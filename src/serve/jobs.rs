//! Reading and adding jobs: `GET /jobs` (the filters and paging of `jobq list`), `GET /jobs/{id}`
//! (`jobq show`) and `POST /jobs` (`jobq enqueue`: one job JSON, or an array of them enqueued all or
//! none). Every answer is the job JSON the CLI prints with `-o json`.

use axum::Extension;
use axum::Json;
use axum::extract::{Path, State};
use axum::http::{HeaderValue, Uri, header};
use axum::response::{IntoResponse, Response};
use serde_json::Value;

use super::audit;
use super::body::{JsonBody, QueryPairs};
use super::error::{ApiError, ApiResult};
use super::state::AppState;
use super::tokens::Caller;
use crate::report::ShownJob;
use jobq::client::GRAPH_LIMIT;
use jobq::error::{Input, InvalidInput};
use jobq::job::{Flow, FlowJob, JobId, JobSpec, JobStatus, ids_by_ref};
use jobq::store::{Enqueued, JobFilter, List, ListCursor};
use jobq::time::{UnixMillis, parse_duration, parse_instant_str};

/// `jobq list`'s default page.
const DEFAULT_LIMIT: u32 = 50;

/// The largest page: one request may not make the server read and send the whole store.
pub const MAX_LIMIT: u32 = 1_000;

/// `GET /api/v1/jobs?queue&type&status&since&until&limit&offset&after`: newest first. A full page
/// answers with a `Link: <…>; rel="next"` header, the same request with `after` set to its last job:
/// a keyset cursor, which costs the store the same however deep the page, where `offset` costs the
/// jobs it skips.
pub async fn list(State(state): State<AppState>, uri: Uri, query: QueryPairs) -> ApiResult<Response> {
    query.only(&["queue", "type", "status", "since", "until", "limit", "offset", "after"])?;
    let now = state.client.now();
    let filter = JobFilter {
        queues: query.list("queue"),
        job_types: query.list("type"),
        statuses: statuses(&query.list("status"))?,
        created_since: query.one("since").map(|v| when("since", v, now)).transpose()?,
        created_until: query.one("until").map(|v| when("until", v, now)).transpose()?,
    };
    let limit = query.number("limit")?.unwrap_or(DEFAULT_LIMIT);
    if limit > MAX_LIMIT {
        let reason = format!("limit {limit}: at most {MAX_LIMIT} jobs a page (page on with after)");
        return Err(InvalidInput::new(Input::Limit, reason).into());
    }
    let after = query.one("after").map(cursor).transpose()?;
    let jobs = state
        .client
        .list(&List {
            filter,
            limit,
            offset: query.number("offset")?.unwrap_or(0),
            after,
        })
        .await?;
    let next = match jobs.last() {
        Some(last) if jobs.len() == limit as usize => Some(next_page(&uri, &ListCursor::of(last))),
        _ => None,
    };
    let mut answer = Json(jobs).into_response();
    if let Some(link) = next.and_then(|l| HeaderValue::from_str(&l).ok()) {
        answer.headers_mut().insert(header::LINK, link);
    }
    Ok(answer)
}

/// A cursor as the API spells it: `<createdAt in Unix ms>.<id>` (an id may hold dots; the time never
/// does).
fn cursor(text: &str) -> Result<ListCursor, ApiError> {
    let unreadable = || {
        ApiError::bad_request(format!(
            "query parameter after={text:?} is not a cursor (take it from the Link header of the page before)"
        ))
    };
    let (at, id) = text.split_once('.').ok_or_else(unreadable)?;
    Ok(ListCursor {
        created_at: UnixMillis(at.parse().map_err(|_| unreadable())?),
        id: JobId::parse(id).map_err(|_| unreadable())?,
    })
}

/// `</api/v1/jobs?query>; rel="next"`: the request's own query without its offset and cursor, and the
/// cursor after `last`. (The `Uri` a nested route sees has lost the `/api/v1` it is nested under.)
fn next_page(uri: &Uri, last: &ListCursor) -> String {
    let query = uri.query().unwrap_or("");
    let mut next = url::form_urlencoded::Serializer::new(String::new());
    for (k, v) in url::form_urlencoded::parse(query.as_bytes()) {
        if k != "after" && k != "offset" {
            next.append_pair(&k, &v);
        }
    }
    next.append_pair("after", &format!("{}.{}", last.created_at.0, last.id.as_str()));
    format!("</api/v1/jobs?{}>; rel=\"next\"", next.finish())
}

/// `GET /api/v1/jobs/{id}`: the job with its edges.
pub async fn show(State(state): State<AppState>, Path(id): Path<String>) -> ApiResult<Response> {
    let job = state.client.get(&id).await?;
    let edges = state.client.edges(&job).await?;
    Ok(Json(ShownJob::new(&job, &edges)).into_response())
}

/// `GET /api/v1/jobs/{id}/graph?limit=N`: every job joined to the job by edges, either way, and the
/// edges between them, to at most `limit` jobs (200 by default, at most 1000).
pub async fn graph(State(state): State<AppState>, Path(id): Path<String>, query: QueryPairs) -> ApiResult<Json<Value>> {
    query.only(&["limit"])?;
    let limit = query.number::<usize>("limit")?.unwrap_or(GRAPH_LIMIT);
    if !(1..=MAX_GRAPH_LIMIT).contains(&limit) {
        let reason = format!("limit {limit}: a graph is read to 1 to {MAX_GRAPH_LIMIT} jobs");
        return Err(InvalidInput::new(Input::Limit, reason).into());
    }
    let graph = state.client.graph(&id, limit).await?;
    Ok(Json(to_json(&graph)))
}

/// The most jobs a graph read through the API may ask for.
const MAX_GRAPH_LIMIT: usize = 1000;

/// `POST /api/v1/jobs`: a job JSON object answers with its `Enqueued`; an array answers with one per
/// job, in order. Every job is checked before any is written.
pub async fn enqueue(
    State(state): State<AppState>,
    Extension(caller): Extension<Caller>,
    JsonBody(body): JsonBody<Value>,
) -> ApiResult<Json<Value>> {
    let (items, many) = match body {
        Value::Array(items) => (items, true),
        one => (vec![one], false),
    };
    let specs = items
        .into_iter()
        .enumerate()
        .map(|(i, item)| {
            let at = |e: InvalidInput| if many { e.at(format_args!("job {}", i + 1)) } else { e };
            state.with_defaults(spec(item).map_err(at)?).map_err(at)
        })
        .collect::<Result<Vec<_>, InvalidInput>>()?;
    let enqueued: Vec<Enqueued> = if many {
        state.client.enqueue_many(specs).await?
    } else {
        let spec = specs.into_iter().next().expect("one job");
        vec![state.client.enqueue(spec).await?]
    };
    audit::record(&caller, "jobs.enqueue", audit::ids(enqueued.iter().map(|e| &e.id)));
    Ok(Json(if many {
        to_json(&enqueued)
    } else {
        to_json(&enqueued[0])
    }))
}

/// `POST /api/v1/flows`: a flow document, as `jobq flow` reads it, checked whole and then written in
/// one call; answers with each ref's job id.
pub async fn flow(
    State(state): State<AppState>,
    Extension(caller): Extension<Caller>,
    JsonBody(body): JsonBody<Value>,
) -> ApiResult<Json<Value>> {
    let read = Flow::from_json(body)?;
    let jobs: Vec<FlowJob> = read
        .jobs()
        .iter()
        .cloned()
        .map(|mut job| {
            job.spec = state.with_defaults(job.spec)?;
            Ok(job)
        })
        .collect::<Result<_, InvalidInput>>()?;
    let flow = Flow::new(jobs)?;
    let enqueued = state.client.flow(&flow).await?;
    audit::record(
        &caller,
        "flows.enqueue",
        audit::ids(enqueued.iter().map(|(_, e)| &e.id)),
    );
    let ids = ids_by_ref(enqueued.iter().map(|(name, e)| (name.as_str(), &e.id)));
    Ok(Json(serde_json::to_value(ids).unwrap_or_default()))
}

/// One job of a request: the job JSON (an envelope), where an object with `jobType` needs neither
/// `jobId` nor `v`, since a request to this API is meant as a job; the rest is read as `jobq enqueue
/// --file` reads a line.
pub(super) fn spec(item: Value) -> Result<JobSpec, InvalidInput> {
    match item {
        Value::Object(mut map) if map.contains_key("jobType") && !map.contains_key("jobId") => {
            map.entry("v").or_insert(Value::from(1));
            JobSpec::from_value(Value::Object(map), None)
        }
        Value::Object(map) if map.contains_key("jobType") => JobSpec::from_value(Value::Object(map), None),
        _ => Err(InvalidInput::new(
            Input::Envelope,
            "a job is a JSON object with at least jobType (and payload, queue, priority, runAt, …)",
        )),
    }
}

/// Statuses from `status=a,b&status=c`.
pub fn statuses(values: &[String]) -> Result<Vec<JobStatus>, ApiError> {
    let mut out = Vec::new();
    for v in values {
        let status: JobStatus = v
            .parse()
            .map_err(|e: String| InvalidInput::new(Input::Status, format!("status: {e}")))?;
        if !out.contains(&status) {
            out.push(status);
        }
    }
    Ok(out)
}

/// A point in time given as a duration ago (`30m`, `7d`) or a time (RFC 3339, Unix seconds), as
/// `jobq list --since` takes it.
pub fn when(name: &str, text: &str, now: UnixMillis) -> Result<UnixMillis, ApiError> {
    if let Ok(d) = parse_duration(text) {
        return Ok(now.minus(d));
    }
    parse_instant_str(text).map_err(|_| {
        InvalidInput::new(
            Input::Time,
            format!("{name} {text:?}: expected a duration ago (30m, 7d) or a time (2026-01-31T09:00:00Z)"),
        )
        .into()
    })
}

/// A duration such as `7d` or `10m`, named by the field it came in.
pub fn duration(name: &str, text: &str) -> Result<std::time::Duration, ApiError> {
    parse_duration(text).map_err(|e| InvalidInput::new(Input::Duration, format!("{name}: {e}")).into())
}

/// Serialises an answer (a document built from jobq's own types cannot fail to).
pub fn to_json(value: impl serde::Serialize) -> Value {
    serde_json::to_value(value).unwrap_or(Value::Null)
}
