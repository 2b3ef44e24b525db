//! A whole graph of jobs enqueued at once (`jobq flow`, `POST /api/v1/flows`, [`crate::Client::flow`]):
//! jobs named by a `ref` of the caller's, each waiting for others of the graph by ref or for jobs
//! already stored by id. [`Flow::from_json`] reads the document and checks it whole — duplicate refs,
//! refs that name no job of it, a job after itself, cycles — before any id is made; [`Flow::specs`]
//! then gives each job its id and its dependencies as ids, in the graph's order.

use std::collections::{BTreeMap, HashMap};

use serde_json::Value;

use super::{DependOn, Dependency, JobId, JobSpec};
use crate::input::{Input, InvalidInput};

/// A checked graph of jobs.
#[derive(Debug, Clone, Default)]
pub struct Flow {
    jobs: Vec<FlowJob>,
}

/// One job of a [`Flow`].
#[derive(Debug, Clone)]
pub struct FlowJob {
    /// The caller's name for it, unique in the flow.
    pub name: String,
    /// The job, without its dependencies on the flow's jobs.
    pub spec: JobSpec,
    /// What it waits for.
    pub after: Vec<FlowDependency>,
}

/// What a job of a flow waits for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FlowDependency {
    /// A job of the same flow, by its ref.
    Ref(String, DependOn),
    /// A job already stored, by id.
    Id(JobId, DependOn),
}

impl Flow {
    /// A flow of `jobs`, checked as [`Flow::from_json`] checks one.
    pub fn new(jobs: Vec<FlowJob>) -> Result<Flow, InvalidInput> {
        let flow = Flow { jobs };
        flow.check()?;
        Ok(flow)
    }

    /// Reads `{"jobs": [{"ref": "a", "type": …, "payload": …, "after": ["b", {"ref": "c", "on":
    /// "finish"}, {"id": "…"}], …}]}`: each job as the job JSON has it (`type` or `jobType`, and any
    /// enqueue option), with a `ref` and an `after` of refs of the flow (strings or `{"ref", "on"}`)
    /// and ids of stored jobs (`{"id", "on"}`).
    pub fn from_json(value: Value) -> Result<Flow, InvalidInput> {
        let refused = |what: String| InvalidInput::new(Input::Flow, what);
        let Value::Object(mut doc) = value else {
            return Err(refused("a flow is a JSON object with a \"jobs\" list".into()));
        };
        let Some(Value::Array(items)) = doc.remove("jobs") else {
            return Err(refused("a flow needs a \"jobs\" list".into()));
        };
        let mut jobs = Vec::with_capacity(items.len());
        for (i, item) in items.into_iter().enumerate() {
            let at = |e: InvalidInput| e.at(format_args!("job {}", i + 1));
            jobs.push(job_from_json(item).map_err(at)?);
        }
        Flow::new(jobs)
    }

    /// The jobs, in the order given.
    pub fn jobs(&self) -> &[FlowJob] {
        &self.jobs
    }

    /// Each job's ref and its spec, with an id (the one it names, or a new UUIDv7) and its
    /// dependencies as ids: what one enqueue call writes.
    pub fn specs(&self) -> Result<Vec<(String, JobSpec)>, InvalidInput> {
        let mut ids: HashMap<&str, String> = HashMap::with_capacity(self.jobs.len());
        for job in &self.jobs {
            let id = match &job.spec.id {
                Some(id) => id.clone(),
                None => JobId::generate().to_string(),
            };
            ids.insert(job.name.as_str(), id);
        }
        self.jobs
            .iter()
            .map(|job| {
                let mut spec = job.spec.clone();
                spec.id = Some(ids[job.name.as_str()].clone());
                for dependency in &job.after {
                    spec.after.push(match dependency {
                        FlowDependency::Ref(name, on) => Dependency::new(JobId::parse(&ids[name.as_str()])?, *on),
                        FlowDependency::Id(id, on) => Dependency::new(id.clone(), *on),
                    });
                }
                Ok((job.name.clone(), spec))
            })
            .collect()
    }

    /// Refs unique and known, no job after itself, no cycle.
    fn check(&self) -> Result<(), InvalidInput> {
        let refused = |what: String| InvalidInput::new(Input::Flow, what);
        let mut index: HashMap<&str, usize> = HashMap::with_capacity(self.jobs.len());
        for (i, job) in self.jobs.iter().enumerate() {
            if job.name.is_empty() {
                return Err(refused(format!("job {}: ref must not be empty", i + 1)));
            }
            if index.insert(job.name.as_str(), i).is_some() {
                return Err(refused(format!("ref {:?} names two jobs", job.name)));
            }
        }
        let mut edges: Vec<Vec<usize>> = vec![Vec::new(); self.jobs.len()];
        for (i, job) in self.jobs.iter().enumerate() {
            for dependency in &job.after {
                let FlowDependency::Ref(name, _) = dependency else {
                    continue;
                };
                let Some(&j) = index.get(name.as_str()) else {
                    return Err(refused(format!(
                        "job {:?} waits for ref {name:?}, which no job has",
                        job.name
                    )));
                };
                if j == i {
                    return Err(refused(format!("job {:?} waits for itself", job.name)));
                }
                edges[i].push(j);
            }
        }
        if let Some(cycle) = first_cycle(&edges) {
            let names: Vec<&str> = cycle.iter().map(|&i| self.jobs[i].name.as_str()).collect();
            return Err(refused(format!(
                "the jobs wait for each other in a cycle: {}",
                names.join(" → ")
            )));
        }
        Ok(())
    }
}

/// A cycle of `edges` (job → the jobs it waits for), as the jobs along it with the first repeated at
/// the end; the one found first from the lowest index.
pub(super) fn first_cycle(edges: &[Vec<usize>]) -> Option<Vec<usize>> {
    #[derive(Clone, Copy, PartialEq)]
    enum Seen {
        No,
        OnPath,
        Done,
    }
    let mut seen = vec![Seen::No; edges.len()];
    for start in 0..edges.len() {
        if seen[start] != Seen::No {
            continue;
        }
        // An explicit stack of (job, next edge to follow), so deep graphs do not overflow.
        let mut path: Vec<(usize, usize)> = vec![(start, 0)];
        seen[start] = Seen::OnPath;
        while let Some(&mut (node, ref mut next)) = path.last_mut() {
            if let Some(&to) = edges[node].get(*next) {
                *next += 1;
                match seen[to] {
                    Seen::No => {
                        seen[to] = Seen::OnPath;
                        path.push((to, 0));
                    }
                    Seen::OnPath => {
                        let from = path.iter().position(|&(n, _)| n == to).unwrap_or(0);
                        let mut cycle: Vec<usize> = path[from..].iter().map(|&(n, _)| n).collect();
                        cycle.push(to);
                        return Some(cycle);
                    }
                    Seen::Done => {}
                }
            } else {
                seen[node] = Seen::Done;
                path.pop();
            }
        }
    }
    None
}

fn job_from_json(item: Value) -> Result<FlowJob, InvalidInput> {
    let refused = |what: String| InvalidInput::new(Input::Flow, what);
    let Value::Object(mut map) = item else {
        return Err(refused(format!("a flow's job is a JSON object, got {item}")));
    };
    let name = match map.remove("ref") {
        Some(Value::String(name)) => name,
        Some(other) => return Err(refused(format!("ref must be a string, got {other}"))),
        None => return Err(refused("every job of a flow needs a ref".into())),
    };
    let after = match map.remove("after") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(items)) => items.into_iter().map(dependency_from_json).collect::<Result<_, _>>()?,
        Some(other) => return Err(refused(format!("after must be a list, got {other}"))),
    };
    let spec = spec_of_object(map, &format!("job {name:?}"))?;
    Ok(FlowJob { name, spec, after })
}

/// The job an object of a flow or a `::spawn` line describes: the job JSON's fields, with its type as
/// `type` or `jobType`. `whose` names it in a refusal.
pub(super) fn spec_of_object(mut map: serde_json::Map<String, Value>, whose: &str) -> Result<JobSpec, InvalidInput> {
    if let Some(job_type) = map.remove("type") {
        if map.contains_key("jobType") {
            return Err(InvalidInput::new(
                Input::JobType,
                format!("{whose} gives both type and jobType; give one"),
            ));
        }
        map.insert("jobType".into(), job_type);
    }
    map.entry("v").or_insert(Value::from(1));
    if !map.contains_key("jobType") {
        return Err(InvalidInput::new(Input::JobType, format!("{whose} has no type")));
    }
    JobSpec::from_value(Value::Object(map), None).map_err(|e| e.at(format_args!("{whose}")))
}

fn dependency_from_json(item: Value) -> Result<FlowDependency, InvalidInput> {
    let refused = |what: String| InvalidInput::new(Input::After, what);
    match item {
        Value::String(name) => Ok(FlowDependency::Ref(name, DependOn::Success)),
        Value::Object(mut o) => {
            let on = DependOn::of_entry(o.remove("on")).map_err(refused)?;
            match (o.remove("ref"), o.remove("id")) {
                (Some(Value::String(name)), None) => Ok(FlowDependency::Ref(name, on)),
                (None, Some(Value::String(id))) => Ok(FlowDependency::Id(JobId::parse(&id)?, on)),
                _ => Err(refused(
                    "each of after is a ref, or an object with a \"ref\" or an \"id\" (and an optional \"on\")".into(),
                )),
            }
        }
        other => Err(refused(format!("after lists refs or objects, got {other}"))),
    }
}

/// The ref → id map of a flow enqueued, for output.
pub fn ids_by_ref<'a>(pairs: impl Iterator<Item = (&'a str, &'a JobId)>) -> BTreeMap<String, String> {
    pairs.map(|(name, id)| (name.to_string(), id.to_string())).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn refused(doc: Value) -> String {
        Flow::from_json(doc).unwrap_err().to_string()
    }

    #[test]
    fn a_flow_reads_refs_rules_and_stored_ids() {
        let flow = Flow::from_json(json!({"jobs": [
            {"ref": "a", "type": "report.build", "payload": {"m": 11}},
            {"ref": "b", "jobType": "report.mail", "after": ["a", {"id": "stored-1", "on": "finish"}], "queue": "mail"},
        ]}))
        .unwrap();
        let specs = flow.specs().unwrap();
        assert_eq!(specs[1].1.queue.as_deref(), Some("mail"));
        let a_id = specs[0].1.id.clone().unwrap();
        let after: Vec<(String, DependOn)> = specs[1].1.after.iter().map(|d| (d.id.to_string(), d.on)).collect();
        assert_eq!(
            after,
            [(a_id, DependOn::Success), ("stored-1".into(), DependOn::Finish)]
        );
    }

    #[test]
    fn a_flow_is_refused_whole_naming_what_is_wrong() {
        let two = refused(json!({"jobs": [{"ref": "a", "type": "t"}, {"ref": "a", "type": "t"}]}));
        assert!(two.contains("ref \"a\" names two jobs"), "{two}");
        let unknown = refused(json!({"jobs": [{"ref": "a", "type": "t", "after": ["z"]}]}));
        assert!(unknown.contains("waits for ref \"z\", which no job has"), "{unknown}");
        let itself = refused(json!({"jobs": [{"ref": "a", "type": "t", "after": ["a"]}]}));
        assert!(itself.contains("waits for itself"), "{itself}");
        let cycle = refused(json!({"jobs": [
            {"ref": "a", "type": "t", "after": ["c"]},
            {"ref": "b", "type": "t", "after": ["a"]},
            {"ref": "c", "type": "t", "after": ["b"]},
        ]}));
        assert!(cycle.ends_with("a cycle: a → c → b → a"), "{cycle}");
        assert!(refused(json!({"jobs": [{"ref": "a"}]})).contains("has no type"));
        assert!(refused(json!([])).contains("\"jobs\" list"));
    }

    #[test]
    fn a_long_chain_is_checked_without_deep_recursion() {
        let jobs: Vec<Value> = (0..100_000)
            .map(|i| json!({"ref": i.to_string(), "type": "t", "after": if i == 0 { json!([]) } else { json!([(i - 1).to_string()]) }}))
            .collect();
        assert_eq!(Flow::from_json(json!({"jobs": jobs})).unwrap().jobs().len(), 100_000);
    }
}
