//! Children a handler spawns while it runs: an exec program's `::spawn {json}` lines, the `spawn`
//! list of a persistent program's reply or of an http endpoint's, or [`crate::handler::JobContext::spawn`]
//! in Rust. The worker writes them with the attempt's outcome, and only with a success or an
//! await of its children; a child's id comes from its parent's and its key (or its place among the
//! attempt's spawns), so an attempt that runs again names the same children and writes none twice.
//! A child may wait for its siblings (`after`, by their keys): a small flow, written with the outcome.

use std::collections::{HashMap, HashSet};

use serde_json::Value;

use super::graph::{first_cycle, spec_of_object};
use super::{DependOn, Dependency, JobId, JobSpec, Limits, NewJob, UniqueMode};
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
    /// The siblings it waits for, by their keys (spawned by the same attempt), with the rule.
    pub after: Vec<(String, DependOn)>,
}

impl Spawn {
    /// A child named by its place among the attempt's spawns.
    pub fn new(spec: JobSpec) -> Spawn {
        Spawn {
            key: None,
            spec,
            after: Vec::new(),
        }
    }

    /// A child named by `key`.
    pub fn keyed(key: impl Into<String>, spec: JobSpec) -> Spawn {
        Spawn {
            key: Some(key.into()),
            spec,
            after: Vec::new(),
        }
    }

    /// Waits for the sibling named `key` (spawned by the same attempt), by `on`.
    pub fn after(mut self, key: impl Into<String>, on: DependOn) -> Spawn {
        self.after.push((key.into(), on));
        self
    }

    /// Reads a child as a handler writes it: the job JSON (`type` or `jobType`, `payload` and any
    /// enqueue option) with an optional `key`, and `after`: the keys of siblings it waits for, each a
    /// key or `{"key", "on"}`; no `jobId` (the id is derived).
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
        let whose = match &key {
            Some(key) => format!("the spawned child {key:?}"),
            None => "a spawned child".to_string(),
        };
        let after = match map.remove("after") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(list)) => list
                .into_iter()
                .map(|entry| sibling_of(entry).map_err(|why| refused(format!("{whose}: {why}"))))
                .collect::<Result<_, _>>()?,
            Some(other) => {
                return Err(refused(format!(
                    "{whose}: \"after\" is a list of its siblings' keys, got {other}"
                )));
            }
        };
        let spec = spec_of_object(map, &whose)?;
        // Children are written with their parent's outcome, where no holder is looked up or changed.
        if spec.unique_mode.is_some_and(|mode| mode != UniqueMode::Coalesce) {
            return Err(InvalidInput::new(
                Input::UniqueMode,
                format!(
                    "{whose} takes no uniqueMode: a child is written with its parent's outcome (coalescing by its uniqueKey); enqueue it through the API to replace, debounce or throttle"
                ),
            ));
        }
        Ok(Spawn { key, spec, after })
    }
}

/// One entry of a spawned child's `after`: a sibling's key, or `{"key", "on"}`.
fn sibling_of(entry: Value) -> Result<(String, DependOn), String> {
    match entry {
        Value::String(key) => Ok((key, DependOn::default())),
        Value::Number(n) => Ok((n.to_string(), DependOn::default())),
        Value::Object(mut map) => {
            let key = match map.remove("key") {
                Some(Value::String(key)) => key,
                Some(Value::Number(n)) => n.to_string(),
                _ => return Err("each of \"after\" names a sibling by its \"key\"".into()),
            };
            let on = DependOn::of_entry(map.remove("on"))?;
            if let Some(field) = map.keys().next() {
                return Err(format!(
                    "an entry of \"after\" has no {field:?} (a child waits for its siblings only)"
                ));
            }
            Ok((key, on))
        }
        other => Err(format!("each of \"after\" is a sibling's key, got {other}")),
    }
}

/// The jobs `spawns` ask for, as children of the job `parent` of `queue`, created `now`: each with its
/// derived id (`<parent>.<key>`, or `<parent>.<n>` for the n-th spawn without a key), its parent's
/// queue unless it names one, its siblings' ids in `after`, and the limits every enqueue is checked
/// against. A refusal names the child: one that waits for no sibling of that name, for itself, or
/// (through others) in a circle.
pub fn children(
    parent: &JobId,
    queue: &str,
    spawns: Vec<Spawn>,
    now: UnixMillis,
    limits: &Limits,
) -> Result<Vec<NewJob>, InvalidInput> {
    let names: Vec<String> = spawns
        .iter()
        .enumerate()
        .map(|(i, s)| s.key.clone().unwrap_or_else(|| (i + 1).to_string()))
        .collect();
    let place: HashMap<&str, usize> = names.iter().enumerate().map(|(i, n)| (n.as_str(), i)).collect();
    waits_in_no_circle(&spawns, &names, &place)?;
    let mut ids = HashSet::with_capacity(spawns.len());
    let mut jobs = Vec::with_capacity(spawns.len());
    for (i, Spawn { key, mut spec, after }) in spawns.into_iter().enumerate() {
        let name = names[i].clone();
        if let Some(key) = &key {
            check_key(key)?;
        }
        let whose = format!("the spawned child {name:?}");
        if spec.id.is_some() || !spec.after.is_empty() {
            return Err(InvalidInput::new(
                Input::Envelope,
                format!(
                    "{whose} names an id or dependencies in its spec; a child's id is derived from its key, and it waits for its siblings by their keys (`after`)"
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
        spec.after = after
            .iter()
            .map(|(sibling, on)| {
                let id = JobId::parse(&format!("{parent}.{sibling}"))?;
                Ok(Dependency::new(id, *on))
            })
            .collect::<Result<_, InvalidInput>>()?;
        spec.queue.get_or_insert_with(|| queue.to_string());
        spec.created_at = None;
        jobs.push(NewJob::check(spec, now, limits).map_err(|e| e.at(&whose))?);
    }
    Ok(jobs)
}

/// Refuses a child that waits for a sibling the attempt does not spawn, for itself, or in a circle.
fn waits_in_no_circle(spawns: &[Spawn], names: &[String], place: &HashMap<&str, usize>) -> Result<(), InvalidInput> {
    let refused = |what: String| Err(InvalidInput::new(Input::Envelope, what));
    let mut edges: Vec<Vec<usize>> = Vec::with_capacity(spawns.len());
    for (i, spawn) in spawns.iter().enumerate() {
        let mut to = Vec::with_capacity(spawn.after.len());
        for (sibling, _) in &spawn.after {
            match place.get(sibling.as_str()) {
                None => {
                    return refused(format!(
                        "the spawned child {:?} waits for {sibling:?}, which this attempt does not spawn",
                        names[i]
                    ));
                }
                Some(&j) if j == i => {
                    return refused(format!("the spawned child {:?} cannot wait for itself", names[i]));
                }
                Some(&j) => to.push(j),
            }
        }
        edges.push(to);
    }
    // Checked as a flow is (`job::graph`), without recursion: a chain of children may be long.
    if let Some(cycle) = first_cycle(&edges) {
        let names: Vec<&str> = cycle.iter().map(|&i| names[i].as_str()).collect();
        return refused(format!(
            "the spawned children wait for each other in a circle: {}",
            names.join(" → ")
        ));
    }
    Ok(())
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
    fn a_child_with_a_unique_mode_is_refused_naming_it() {
        let refused = Spawn::from_json(json!({"type": "t", "uniqueKey": "k", "uniqueMode": "replace"})).unwrap_err();
        assert_eq!(refused.input, Input::UniqueMode, "{refused}");
        assert!(Spawn::from_json(json!({"type": "t", "uniqueKey": "k", "uniqueMode": "coalesce"})).is_ok());
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
    fn a_child_and_a_flow_job_may_carry_an_expiry() {
        let spawns = vec![Spawn::from_json(json!({"type": "code.send", "expiresAt": 60})).unwrap()];
        let jobs = children(&parent(), "q", spawns, UnixMillis(5), &Limits::default()).unwrap();
        // 60 reads as Unix seconds, as every time of the job JSON does.
        assert_eq!(jobs[0].expires_at, Some(UnixMillis(60_000)));
        let late = vec![Spawn::from_json(json!({"type": "code.send", "expiresAt": 0})).unwrap()];
        let refused = children(&parent(), "q", late, UnixMillis(5), &Limits::default()).unwrap_err();
        assert_eq!(refused.input, Input::Expiry, "{refused}");
    }

    #[test]
    fn a_child_with_an_id_after_or_a_bad_key_is_refused_by_name() {
        let e = Spawn::from_json(json!({"type": "t", "jobId": "x"})).unwrap_err();
        assert!(e.to_string().contains("has no jobId"), "{e}");
        let e = Spawn::from_json(json!({"type": "t", "after": "x"})).unwrap_err();
        assert!(e.to_string().contains("list of its siblings' keys"), "{e}");
        let e = Spawn::from_json(json!({"type": "t", "after": [{"id": "x"}]})).unwrap_err();
        assert!(e.to_string().contains("by its \"key\""), "{e}");
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

    #[test]
    fn a_child_waits_for_its_siblings_by_key() {
        let spawns = vec![
            Spawn::from_json(
                json!({"type": "t", "key": "load", "after": ["extract", {"key": "audit", "on": "finish"}]}),
            )
            .unwrap(),
            Spawn::from_json(json!({"type": "t", "key": "extract"})).unwrap(),
            Spawn::keyed("audit", JobSpec::new("t", json!(null))).after("extract", DependOn::Failure),
        ];
        let jobs = children(&parent(), "q", spawns, UnixMillis(1), &Limits::default()).unwrap();
        let after =
            |i: usize| -> Vec<(String, DependOn)> { jobs[i].after.iter().map(|d| (d.id.to_string(), d.on)).collect() };
        assert_eq!(
            after(0),
            [
                ("p1.extract".to_string(), DependOn::Success),
                ("p1.audit".to_string(), DependOn::Finish)
            ]
        );
        assert!(after(1).is_empty());
        assert_eq!(after(2), [("p1.extract".to_string(), DependOn::Failure)]);
    }

    #[test]
    fn a_child_after_an_unknown_sibling_itself_or_in_a_circle_is_refused() {
        let t = || JobSpec::new("t", json!(null));
        let refused = |spawns: Vec<Spawn>| {
            children(&parent(), "q", spawns, UnixMillis(1), &Limits::default())
                .unwrap_err()
                .to_string()
        };
        let e = refused(vec![Spawn::keyed("a", t()).after("b", DependOn::Success)]);
        assert!(e.contains("waits for \"b\", which this attempt does not spawn"), "{e}");
        let e = refused(vec![Spawn::keyed("a", t()).after("a", DependOn::Success)]);
        assert!(e.contains("cannot wait for itself"), "{e}");
        let e = refused(vec![
            Spawn::keyed("a", t()).after("b", DependOn::Success),
            Spawn::keyed("b", t()).after("c", DependOn::Success),
            Spawn::keyed("c", t()).after("a", DependOn::Success),
        ]);
        assert!(e.contains("in a circle"), "{e}");
    }
}
