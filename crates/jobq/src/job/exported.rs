//! The job JSON read back whole: what `jobq export` writes (the job JSON of DESIGN §1, its state
//! included) and `jobq import` restores exactly. Strict where [`super::JobSpec`] is lenient: every
//! field is taken as written (an import that guessed would not restore), a field this version does
//! not know is refused, and so is a line of a version this build does not know, by its number.
//! A job that waits (or waited) for others also carries its side of those edges (`after`, `join`):
//! an import writes them once every job is written ([`crate::store::Store::import_edges`]).

use std::collections::BTreeMap;

use serde::de::IgnoredAny;
use serde::ser::SerializeStruct;
use serde::{Deserialize, Serialize, Serializer};
use serde_json::value::RawValue;

use super::{
    DependOn, Edge, EdgeState, Job, JobError, JobId, JobStatus, Join, MAX_UNIQUE_KEY_BYTES, Progress, UniqueMode,
    validate_queue, validate_type,
};
use crate::input::{Input, InvalidInput};
use crate::time::UnixMillis;

/// The version of the job JSON this build writes and reads.
pub const JOB_JSON_VERSION: u64 = 1;

/// One line of an export, as serialized by `Job`'s `Serialize`.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Line {
    #[allow(dead_code)] // checked before: see `Version`
    v: IgnoredAny,
    job_id: String,
    job_type: String,
    queue: String,
    payload: Box<RawValue>,
    #[serde(deserialize_with = "meta_or_empty_array")]
    meta: BTreeMap<String, String>,
    priority: i32,
    attempt: u32,
    max_attempts: u32,
    run_at: UnixMillis,
    unique_key: Option<String>,
    /// The unique mode and its windows: absent for `coalesce` (and from exports of a jobq before
    /// unique modes).
    #[serde(default)]
    unique_mode: Option<String>,
    #[serde(default)]
    debounce_ms: Option<u64>,
    #[serde(default)]
    max_wait_ms: Option<u64>,
    #[serde(default)]
    throttle_ms: Option<u64>,
    #[serde(default)]
    unique_running: Option<String>,
    timeout_ms: Option<u64>,
    /// Absent from exports of a jobq before expiry.
    #[serde(default)]
    expires_at: Option<UnixMillis>,
    created_at: UnixMillis,
    status: JobStatus,
    progress: Option<Progress>,
    result: Option<Box<RawValue>>,
    errors: Vec<JobError>,
    started_at: Option<UnixMillis>,
    finished_at: Option<UnixMillis>,
    heartbeat_at: Option<UnixMillis>,
    worker_id: Option<String>,
    snoozes: u32,
    /// Present (possibly empty) for a job with dependencies.
    #[serde(default)]
    after: Option<Vec<ExportedEdge>>,
    #[serde(default)]
    join: Join,
}

/// One dependency of an exported job: the job waited for, its queue (null once it was deleted), the
/// rule and where the edge stood.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct ExportedEdge {
    id: String,
    queue: Option<String>,
    on: DependOn,
    state: EdgeState,
}

/// A job as `jobq export` writes it: the job JSON (`Job`'s `Serialize`), and for a job with
/// dependencies its side of their edges, read into [`Job::deps`] and [`Job::join`] by the export:
/// `"after": [{"id", "queue", "on", "state"}, …]` and `"join"` (`all` or `any`).
pub struct ExportLine<'a>(pub &'a Job);

impl Serialize for ExportLine<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let job = self.0;
        if !job.has_dependencies {
            return job.serialize(s);
        }
        let mut m = s.serialize_struct("Job", 25)?;
        super::write_job_fields(job, &mut m)?;
        let after: Vec<ExportedEdge> = job
            .deps
            .iter()
            .map(|e| ExportedEdge {
                id: e.job_id.to_string(),
                queue: e.queue.clone(),
                on: e.on,
                state: e.state,
            })
            .collect();
        m.serialize_field("after", &after)?;
        m.serialize_field("join", &job.join)?;
        m.end()
    }
}

/// `meta` as written, or `[]`: PHP's `json_encode` writes an empty map as an empty array, and a job
/// JSON line that passed through PHP carries it so.
fn meta_or_empty_array<'de, D: serde::Deserializer<'de>>(d: D) -> Result<BTreeMap<String, String>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Meta {
        Map(BTreeMap<String, String>),
        Empty([(); 0]),
    }
    match Meta::deserialize(d) {
        Ok(Meta::Map(map)) => Ok(map),
        Ok(Meta::Empty([])) => Ok(BTreeMap::new()),
        Err(_) => Err(serde::de::Error::custom(
            "meta must be an object of strings (or [] when empty)",
        )),
    }
}

impl ExportedEdge {
    /// The edge as [`Job::deps`] holds it: the other job's type, status and result are not carried.
    fn into_edge(self) -> Result<Edge, InvalidInput> {
        if let Some(q) = &self.queue {
            validate_queue(q)?;
        }
        Ok(Edge {
            job_id: JobId::parse(&self.id)?,
            job_type: None,
            queue: self.queue,
            status: None,
            on: self.on,
            state: self.state,
            result: None,
        })
    }
}

/// The version alone, read first so that a line of another version is refused for what it is
/// rather than for the first field that differs.
#[derive(Deserialize)]
struct Version {
    v: Option<serde_json::Value>,
}

impl Job {
    /// A job from one line of `jobq export`, exactly as it was: id, status, attempts, error history,
    /// result, progress, times, worker and unique key. Refuses a line that is not the job JSON of
    /// version [`JOB_JSON_VERSION`], or whose id, queue, type or key a store would not hold.
    pub fn from_exported(line: &str) -> Result<Job, InvalidInput> {
        let refuse = |input: Input, reason: String| Err(InvalidInput::new(input, reason));
        let version = match serde_json::from_str::<Version>(line) {
            Ok(Version { v }) => v,
            Err(e) => return refuse(Input::Envelope, format!("not a job JSON object: {e}")),
        };
        match version {
            Some(v) if v.as_u64() == Some(JOB_JSON_VERSION) => {}
            Some(v) => {
                return refuse(
                    Input::Envelope,
                    format!(
                        "job JSON version {v} is not one this jobq reads (it reads version {JOB_JSON_VERSION}); import it with a newer jobq"
                    ),
                );
            }
            None => return refuse(Input::Envelope, "not an exported job: it has no \"v\"".into()),
        }
        let l: Line = match serde_json::from_str(line) {
            Ok(l) => l,
            Err(e) => return refuse(Input::Envelope, format!("not an exported job: {e}")),
        };
        let id = JobId::parse(&l.job_id)?;
        validate_queue(&l.queue)?;
        validate_type(&l.job_type)?;
        if let Some(key) = &l.unique_key
            && (key.is_empty() || key.len() > MAX_UNIQUE_KEY_BYTES)
        {
            return refuse(
                Input::UniqueKey,
                format!("unique key must be 1 to {MAX_UNIQUE_KEY_BYTES} bytes"),
            );
        }
        if l.max_attempts == 0 {
            return refuse(Input::MaxAttempts, "maxAttempts must be at least 1".into());
        }
        if l.progress.as_ref().is_some_and(|p| p.percent > 100) {
            return refuse(Input::Envelope, "progress percent must be 0 to 100".into());
        }
        let ms = |ms: Option<u64>| ms.map(std::time::Duration::from_millis);
        let unique_mode = UniqueMode::from_parts(super::UniqueModeParts {
            name: l.unique_mode.as_deref(),
            debounce: ms(l.debounce_ms),
            max_wait: ms(l.max_wait_ms),
            throttle: ms(l.throttle_ms),
            running: l.unique_running.as_deref(),
        })?;
        Ok(Job {
            id,
            queue: l.queue,
            job_type: l.job_type,
            payload: l.payload,
            meta: l.meta,
            priority: l.priority,
            status: l.status,
            attempt: l.attempt,
            max_attempts: l.max_attempts,
            run_at: l.run_at,
            unique_key: l.unique_key,
            unique_mode,
            timeout_ms: l.timeout_ms,
            expires_at: l.expires_at,
            progress: l.progress,
            result: l.result,
            errors: l.errors,
            created_at: l.created_at,
            started_at: l.started_at,
            finished_at: l.finished_at,
            heartbeat_at: l.heartbeat_at,
            worker_id: l.worker_id,
            snoozes: l.snoozes,
            has_dependencies: l.after.is_some(),
            join: l.join,
            deps: l
                .after
                .unwrap_or_default()
                .into_iter()
                .map(ExportedEdge::into_edge)
                .collect::<Result<_, _>>()?,
        })
    }

    /// This running job as the import of a store whose workers are gone finds it: pending, as if
    /// its worker had released it (the attempt it was running is given back, its lease and progress
    /// dropped), runnable at once if it was due. Jobs of other statuses are unchanged.
    pub fn released_for_import(mut self) -> Job {
        if self.status == JobStatus::Running {
            self.status = JobStatus::Pending;
            self.attempt = self.attempt.saturating_sub(1);
            self.worker_id = None;
            self.heartbeat_at = None;
            self.progress = None;
        }
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job() -> Job {
        Job {
            id: JobId::parse("j-1").unwrap(),
            queue: "mail".into(),
            job_type: "mail.send".into(),
            payload: RawValue::from_string(r#"{"to":"ana@example.com","note":"héllo ✓"}"#.into()).unwrap(),
            meta: [("tenantId".to_string(), "7".to_string())].into(),
            priority: -3,
            status: JobStatus::Running,
            attempt: 2,
            max_attempts: 9,
            run_at: UnixMillis(1_700_000_000_123),
            unique_key: Some("k".into()),
            unique_mode: crate::job::UniqueMode::Coalesce,
            timeout_ms: Some(30_000),
            expires_at: None,
            progress: Some(Progress {
                percent: 40,
                message: Some("half".into()),
            }),
            result: Some(RawValue::from_string("[1, 2]".into()).unwrap()),
            errors: vec![JobError {
                attempt: 1,
                at: UnixMillis(1_700_000_000_500),
                error: "boom".into(),
            }],
            created_at: UnixMillis(1_700_000_000_000),
            started_at: Some(UnixMillis(1_700_000_001_000)),
            finished_at: None,
            heartbeat_at: Some(UnixMillis(1_700_000_002_000)),
            worker_id: Some("w-1".into()),
            snoozes: 3,
            has_dependencies: false,
            join: Join::All,
            deps: Vec::new(),
        }
    }

    #[test]
    fn an_exported_job_reads_back_exactly() {
        let line = serde_json::to_string(&job()).unwrap();
        let back = Job::from_exported(&line).unwrap();
        assert_eq!(serde_json::to_string(&back).unwrap(), line);
    }

    #[test]
    fn a_job_without_dependencies_exports_as_its_job_json() {
        let job = job();
        assert_eq!(
            serde_json::to_string(&ExportLine(&job)).unwrap(),
            serde_json::to_string(&job).unwrap()
        );
        assert!(
            !Job::from_exported(&serde_json::to_string(&job).unwrap())
                .unwrap()
                .has_dependencies
        );
    }

    #[test]
    fn a_job_with_dependencies_exports_its_edges_and_reads_them_back() {
        let mut job = job();
        job.status = JobStatus::Blocked;
        job.has_dependencies = true;
        job.join = Join::Any;
        let edge = |id: &str, queue: Option<&str>, on, state| Edge {
            job_id: JobId::parse(id).unwrap(),
            job_type: Some("ignored".into()),
            queue: queue.map(str::to_string),
            status: Some(JobStatus::Succeeded),
            on,
            state,
            result: None,
        };
        job.deps = vec![
            edge("a", Some("mail"), DependOn::Success, EdgeState::Met),
            edge("b", None, DependOn::Finish, EdgeState::Broken),
            edge("c", Some("other"), DependOn::Failure, EdgeState::Open),
        ];
        let line = serde_json::to_string(&ExportLine(&job)).unwrap();
        assert!(
            line.ends_with(
                r#""after":[{"id":"a","queue":"mail","on":"success","state":"met"},{"id":"b","queue":null,"on":"finish","state":"broken"},{"id":"c","queue":"other","on":"failure","state":"open"}],"join":"any"}"#
            ),
            "{line}"
        );
        let back = Job::from_exported(&line).unwrap();
        assert_eq!((back.has_dependencies, back.join), (true, Join::Any));
        let edges: Vec<_> = back
            .deps
            .iter()
            .map(|e| (e.job_id.to_string(), e.queue.clone(), e.on, e.state))
            .collect();
        assert_eq!(
            edges,
            [
                (
                    "a".to_string(),
                    Some("mail".to_string()),
                    DependOn::Success,
                    EdgeState::Met
                ),
                ("b".to_string(), None, DependOn::Finish, EdgeState::Broken),
                (
                    "c".to_string(),
                    Some("other".to_string()),
                    DependOn::Failure,
                    EdgeState::Open
                ),
            ]
        );
        assert_eq!(serde_json::to_string(&ExportLine(&back)).unwrap(), line);
        let bad = line.replacen(r#""state":"met""#, r#""state":"done""#, 1);
        assert!(Job::from_exported(&bad).is_err());
    }

    #[test]
    fn another_version_is_refused_by_its_number() {
        let line = serde_json::to_string(&job()).unwrap().replacen("\"v\":1", "\"v\":2", 1);
        let e = Job::from_exported(&line).unwrap_err().to_string();
        assert!(e.contains("version 2"), "{e}");
    }

    #[test]
    fn an_envelope_without_state_is_not_an_export() {
        let e = Job::from_exported(r#"{"v":1,"jobType":"a","payload":{}}"#)
            .unwrap_err()
            .to_string();
        assert!(e.contains("not an exported job"), "{e}");
        assert!(Job::from_exported("[1]").is_err());
    }

    #[test]
    fn meta_written_as_an_empty_array_reads_as_empty_and_a_full_array_is_refused() {
        let line = serde_json::to_string(&job()).unwrap();
        let empty = line.replacen(r#""meta":{"tenantId":"7"}"#, r#""meta":[]"#, 1);
        assert_ne!(empty, line);
        assert!(Job::from_exported(&empty).unwrap().meta.is_empty());
        let full = line.replacen(r#""meta":{"tenantId":"7"}"#, r#""meta":["7"]"#, 1);
        let e = Job::from_exported(&full).unwrap_err().to_string();
        assert!(e.contains("meta must be an object"), "{e}");
    }

    #[test]
    fn a_running_job_is_imported_as_released() {
        let j = job().released_for_import();
        assert_eq!(
            (j.status, j.attempt, j.worker_id, j.heartbeat_at),
            (JobStatus::Pending, 1, None, None)
        );
        assert_eq!(j.started_at, Some(UnixMillis(1_700_000_001_000)));
    }
}
