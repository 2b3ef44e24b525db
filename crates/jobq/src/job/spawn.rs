//! Children a handler spawns while it runs: an exec program's `::spawn {json}` lines, the `spawn`
//! list of a persistent program's reply or of an http endpoint's, or [`crate::handler::JobContext::spawn`]
//! in Rust. The worker writes them with the attempt's outcome, and only with a success or an
//! await of its children; a child's id comes from its parent's and its key (or its place among the
//! attempt's spawns), so an attempt that runs again names the same children and writes none twice.

use std::collections::HashSet;

use serde_json::Value;

use super::graph::spec_of_object;
use super::{JobId, JobSpec, Limits, NewJob};
use crate::input::{Input, InvalidInput};
use crate::time::UnixMillis;

/// Longest key a child may have.
pub const MAX_SPAWN_KEY_BYTES: usize = 64;

/// One child a handler asked for.
#[derive(Debug, Clone, PartialEq)]
pub struct Spawn {
    /// Its name among its parent's children: letters, digits, `-` and `_`. Without one, its place
    /// among the attempt's spawns (1 for the first) names it.
    pub key: Option<String>,
    /// The job, without an id (derived) and dependencies; its queue is its parent's unless given.
    pub spec: JobSpec,
}

impl Spawn {
    /// A child named by its place among the attempt's spawns.
    pub fn new(spec: JobSpec) -> Spawn {
        Spawn { key: None, spec }
    }

    /// A child named by `key`.
    pub fn keyed(key: impl Into<String>, spec: JobSpec) -> Spawn {
        Spawn {
            key: Some(key.into()),
            spec,
        }
    }

    /// Reads a child as a handler writes it: the job JSON (`type` or `jobType`, `payload` and any
    /// enqueue option) with an optional `key`; no `jobId` (the id is derived) and no `after`.
    pub fn from_json(value: Value) -> Result<Spawn, InvalidInput> {
        let refused = |what: String| InvalidInput::new(Input::Envelope, what);
        let Value::Object(mut map) = value else {
            return Err(refused(format!("a spawned child is a JSON object, got {value}")));
        };
        let key = match map.remove("key") {
            None | Some(Value::Null) => None,
            Some(Value::String(key)) => Some(key),
            Some(Value::Number(n)) => Some(n.to_string()),
            Some(other) => return Err(refused(format!("a spawned child's key must be a string, got {other}"))),
        };
        if map.contains_key("jobId") || map.contains_key("id") {
            return Err(refused(
                "a spawned child has no jobId: its id is its parent's and its key; give a \"key\"".into(),
            ));
        }
        if map.contains_key("after") {
            return Err(refused(
                "a spawned child cannot wait for other jobs (\"after\"); its parent can await it".into(),
            ));
        }
        let whose = match &key {
            Some(key) => format!("the spawned child {key:?}"),
            None => "a spawned child".to_string(),
        };
        let spec = spec_of_object(map, &whose)?;
        Ok(Spawn { key, spec })
    }
}

/// The jobs `spawns` ask for, as children of the job `parent` of `queue`, created `now`: each with its
/// derived id (`<parent>.<key>`, or `<parent>.<n>` for the n-th spawn without a key), its parent's
/// queue unless it names one, and the limits every enqueue is checked against. A refusal names the
/// child.
pub fn children(
    parent: &JobId,
    queue: &str,
    spawns: Vec<Spawn>,
    now: UnixMillis,
    limits: &Limits,
) -> Result<Vec<NewJob>, InvalidInput> {
    let mut ids = HashSet::with_capacity(spawns.len());
    let mut jobs = Vec::with_capacity(spawns.len());
    for (i, Spawn { key, mut spec }) in spawns.into_iter().enumerate() {
        let name = match &key {
            Some(key) => {
                check_key(key)?;
                key.clone()
            }
            None => (i + 1).to_string(),
        };
        let whose = format!("the spawned child {name:?}");
        if spec.id.is_some() || !spec.after.is_empty() {
            return Err(InvalidInput::new(
                Input::Envelope,
                format!(
                    "{whose} names an id or dependencies; a child's id is derived from its key, and its parent awaits it"
                ),
            ));
        }
        let id = format!("{parent}.{name}");
        if !ids.insert(id.clone()) {
            return Err(InvalidInput::new(
                Input::Envelope,
                format!("two spawned children are named {name:?}"),
            ));
        }
        spec.id = Some(id);
        spec.queue.get_or_insert_with(|| queue.to_string());
        spec.created_at = None;
        jobs.push(NewJob::check(spec, now, limits).map_err(|e| e.at(&whose))?);
    }
    Ok(jobs)
}

fn check_key(key: &str) -> Result<(), InvalidInput> {
    let fits = !key.is_empty()
        && key.len() <= MAX_SPAWN_KEY_BYTES
        && key.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    if fits {
        Ok(())
    } else {
        Err(InvalidInput::new(
            Input::Envelope,
            format!("a spawned child's key is 1 to {MAX_SPAWN_KEY_BYTES} letters, digits, '-' or '_', got {key:?}"),
        ))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn parent() -> JobId {
        JobId::parse("p1").unwrap()
    }

    #[test]
    fn children_take_derived_ids_and_their_parent_s_queue() {
        let spawns = vec![
            Spawn::from_json(json!({"type": "resize", "payload": {"n": 1}, "key": "small"})).unwrap(),
            Spawn::from_json(json!({"jobType": "resize", "payload": {"n": 2}, "queue": "media"})).unwrap(),
        ];
        let jobs = children(&parent(), "images", spawns, UnixMillis(5), &Limits::default()).unwrap();
        assert_eq!(jobs[0].id.as_str(), "p1.small");
        assert_eq!(jobs[0].queue, "images");
        assert_eq!(jobs[1].id.as_str(), "p1.2");
        assert_eq!(jobs[1].queue, "media");
        assert_eq!(jobs[1].created_at, UnixMillis(5));
        assert_eq!(jobs[1].payload.get(), r#"{"n":2}"#);
    }

    #[test]
    fn a_child_with_an_id_after_or_a_bad_key_is_refused_by_name() {
        let e = Spawn::from_json(json!({"type": "t", "jobId": "x"})).unwrap_err();
        assert!(e.to_string().contains("has no jobId"), "{e}");
        let e = Spawn::from_json(json!({"type": "t", "after": ["x"]})).unwrap_err();
        assert!(e.to_string().contains("cannot wait"), "{e}");
        let e = Spawn::from_json(json!({"payload": 1, "key": "k"})).unwrap_err();
        assert!(e.to_string().contains("\"k\" has no type"), "{e}");
        let bad = vec![Spawn::keyed("a.b", JobSpec::new("t", json!(null)))];
        let e = children(&parent(), "q", bad, UnixMillis(1), &Limits::default()).unwrap_err();
        assert!(e.to_string().contains("got \"a.b\""), "{e}");
        let twice = vec![
            Spawn::keyed("2", JobSpec::new("t", json!(null))),
            Spawn::new(JobSpec::new("t", json!(null))),
        ];
        let e = children(&parent(), "q", twice, UnixMillis(1), &Limits::default()).unwrap_err();
        assert!(e.to_string().contains("two spawned children are named \"2\""), "{e}");
    }
}
