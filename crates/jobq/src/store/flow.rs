//! Flow control: what, besides its queue and its `run_at`, decides whether a ready job may start now.
//!
//! Three things, all kept in the store so that they hold across every worker on every machine:
//! - **pauses** an operator set (`jobq pause QUEUE [--type TYPE]`): the queue's (or that type's) jobs
//!   wait until resumed;
//! - **blocks** a handler's upstream asked for (an HTTP 429, an exec handler's `::rate-limited 30s`):
//!   a type, or one partition of it, starts nothing until the block runs out;
//! - **limits** from the workers' config ([`Limit`]): at most N of a type's or queue's jobs running at
//!   once, at most N started per window, each counted per partition (a field of the job) when the limit
//!   has one.
//!
//! Workers read pauses and blocks once per poll interval ([`crate::store::Store::flow_state`]) and pass
//! them with their limits in every claim ([`Flow`]). A claim that no limit, partial pause or partition
//! block touches is an ordinary claim with queues left out and types excluded
//! ([`Claim::plan`]); any other is a *limited claim*, which the store runs atomically with the
//! limits' state: the running jobs that hold slots, and each rate's bucket. [`Admission`] decides a
//! limited claim's candidates one by one in claim order, the same rules for every SQL store (the
//! Redis store's `claim_limited.lua` applies them in Lua).
//!
//! A slot is held by a running job's lease, so a finished, released, cancelled or rescued job frees
//! its slot at once, with no bookkeeping on those paths: the SQL stores count a limit's running jobs
//! (per partition, by the same JSON expression that reads the candidates' partitions); Redis records
//! (job, attempt) in a set per partition when it claims, and a member counts only while that job
//! still runs at that attempt. Rates are GCRA buckets (a "theoretical arrival time" per key): a bucket holds `count` starts
//! and refills evenly over the window, so after a quiet window up to `count` jobs may start at once,
//! and from then on one per `window / count`.

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::str::FromStr;

use serde::Serialize;

use super::Claim;
use crate::job::Job;
use crate::time::UnixMillis;

/// Whose jobs a limit counts.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Scope {
    /// Every job of one type, in whichever queue.
    Type(String),
    /// Every job of one queue.
    Queue(String),
}

impl Scope {
    /// The key the store records it under: `type:NAME` or `queue:NAME`.
    pub fn key(&self) -> String {
        match self {
            Scope::Type(t) => format!("type:{t}"),
            Scope::Queue(q) => format!("queue:{q}"),
        }
    }

    /// Reads a key written by [`Scope::key`].
    pub fn from_key(key: &str) -> Option<Scope> {
        if let Some(t) = key.strip_prefix("type:") {
            Some(Scope::Type(t.to_string()))
        } else {
            key.strip_prefix("queue:").map(|q| Scope::Queue(q.to_string()))
        }
    }

    /// Whether a job falls under it.
    pub fn covers(&self, job_type: &str, queue: &str) -> bool {
        match self {
            Scope::Type(t) => t == job_type,
            Scope::Queue(q) => q == queue,
        }
    }
}

impl fmt::Display for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Scope::Type(t) => write!(f, "type {t}"),
            Scope::Queue(q) => write!(f, "queue {q}"),
        }
    }
}

/// At most `count` jobs started per `per_ms`, across every worker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rate {
    /// Starts per window.
    pub count: u32,
    /// The window, in milliseconds.
    pub per_ms: u64,
}

impl Rate {
    /// The bucket's refill step: one start per this many microseconds.
    pub fn interval_us(&self) -> i64 {
        ((self.per_ms as i128 * 1000) / i128::from(self.count.max(1))).max(1) as i64
    }

    /// The window in microseconds.
    pub fn window_us(&self) -> i64 {
        (self.per_ms as i64).saturating_mul(1000)
    }

    /// Whether a start at `now_us` fits a bucket whose theoretical arrival time is `tat_us`; if so,
    /// the bucket's new time.
    pub fn admit(&self, tat_us: i64, now_us: i64) -> Option<i64> {
        let next = tat_us.max(now_us) + self.interval_us();
        (next - now_us <= self.window_us()).then_some(next)
    }

    /// How many starts a bucket at `tat_us` admits at `now_us`, one after another.
    pub fn starts_left(&self, tat_us: i64, now_us: i64) -> u32 {
        let used = tat_us.max(now_us) - now_us;
        let left = (self.window_us() - used) / self.interval_us();
        left.clamp(0, i64::from(u32::MAX)) as u32
    }
}

/// `100/1m`, `20/1s`, `5/250ms`: a count, a slash, a duration (`1m` may be written `m`).
impl FromStr for Rate {
    type Err = String;

    fn from_str(s: &str) -> Result<Rate, String> {
        let bad = || format!("rate {s:?} is not COUNT/WINDOW, like \"100/1m\" or \"20/1s\"");
        let (count, window) = s.trim().split_once('/').ok_or_else(bad)?;
        let count: u32 = count.trim().parse().map_err(|_| bad())?;
        let window = window.trim();
        let window = if window.starts_with(|c: char| c.is_ascii_digit()) {
            window.to_string()
        } else {
            format!("1{window}")
        };
        let per = crate::time::parse_duration(&window).map_err(|_| bad())?;
        if count == 0 {
            return Err(format!(
                "rate {s:?} allows no job at all (the count must be at least 1)"
            ));
        }
        let per_ms = u64::try_from(per.as_millis()).map_err(|_| bad())?;
        if per_ms == 0 {
            return Err(format!("rate {s:?} has an empty window (at least 1ms)"));
        }
        Ok(Rate { count, per_ms })
    }
}

impl fmt::Display for Rate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let per = crate::time::format_duration(std::time::Duration::from_millis(self.per_ms));
        write!(f, "{}/{per}", self.count)
    }
}

/// Where a job's partition value is read: `meta.KEY` or `payload.KEY[.KEY…]`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum FieldPath {
    /// A key of the job's meta (a flat map of strings).
    Meta(String),
    /// A field of the payload, object keys from the top.
    Payload(Vec<String>),
}

impl FieldPath {
    /// The job's value at this path, as text: a string as it is, any other JSON value as its
    /// compact JSON; a missing field (or a payload that is not an object) is `""`, one partition of
    /// its own.
    pub fn value_of(&self, job: &Job) -> String {
        match self {
            FieldPath::Meta(key) => job.meta.get(key).cloned().unwrap_or_default(),
            FieldPath::Payload(keys) => {
                let Ok(value) = serde_json::from_str::<serde_json::Value>(job.payload.get()) else {
                    return String::new();
                };
                let mut at = &value;
                for key in keys {
                    match at.get(key) {
                        Some(v) => at = v,
                        None => return String::new(),
                    }
                }
                match at {
                    serde_json::Value::String(s) => s.clone(),
                    serde_json::Value::Null => String::new(),
                    other => other.to_string(),
                }
            }
        }
    }

    /// The keys under the top-level column, and which column.
    pub fn column_and_keys(&self) -> (&'static str, Vec<&str>) {
        match self {
            FieldPath::Meta(key) => ("meta", vec![key.as_str()]),
            FieldPath::Payload(keys) => ("payload", keys.iter().map(String::as_str).collect()),
        }
    }
}

impl FromStr for FieldPath {
    type Err = String;

    fn from_str(s: &str) -> Result<FieldPath, String> {
        let bad =
            |why: &str| format!("partition {s:?} {why} (expected meta.KEY or payload.KEY, like \"meta.tenantId\")");
        let (root, rest) = s.split_once('.').ok_or_else(|| bad("names no field"))?;
        let keys: Vec<String> = rest.split('.').map(str::to_string).collect();
        if keys
            .iter()
            .any(|k| k.is_empty() || !k.chars().all(|c| c.is_alphanumeric() || c == '_' || c == '-'))
        {
            return Err(bad(
                "has an empty key or one with characters other than letters, digits, _ and -",
            ));
        }
        match root {
            "meta" if keys.len() == 1 => Ok(FieldPath::Meta(keys.into_iter().next().unwrap_or_default())),
            "meta" => Err(bad("goes below a meta key (meta values are strings)")),
            "payload" => Ok(FieldPath::Payload(keys)),
            _ => Err(bad("does not start with meta. or payload.")),
        }
    }
}

impl fmt::Display for FieldPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FieldPath::Meta(key) => write!(f, "meta.{key}"),
            FieldPath::Payload(keys) => write!(f, "payload.{}", keys.join(".")),
        }
    }
}

/// One scope's cluster-wide limits, as a worker's config gives them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limit {
    /// Whose jobs.
    pub scope: Scope,
    /// At most this many running at once.
    pub global_concurrency: Option<u32>,
    /// At most this many started per window.
    pub rate: Option<Rate>,
    /// Count the limits above per value of this field (and scope back-pressure to it).
    pub partition: Option<FieldPath>,
}

impl Limit {
    /// The partition a job of this scope counts in (`""` when the limit has none).
    pub fn partition_of(&self, job: &Job) -> String {
        self.partition.as_ref().map(|p| p.value_of(job)).unwrap_or_default()
    }

    /// `global_concurrency 5, rate 100/1m, partition meta.tenantId`, for logs and tables.
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        if let Some(n) = self.global_concurrency {
            parts.push(format!("global_concurrency {n}"));
        }
        if let Some(rate) = self.rate {
            parts.push(format!("rate {rate}"));
        }
        if let Some(p) = &self.partition {
            parts.push(format!("partition {p}"));
        }
        if parts.is_empty() {
            "no limits".into()
        } else {
            parts.join(", ")
        }
    }
}

/// What [`crate::store::Store::set_paused`] changes: a queue's pause, or one type's in it.
#[derive(Debug, Clone, Copy)]
pub struct SetPaused<'a> {
    /// The queue.
    pub queue: &'a str,
    /// Only this type in it; the whole queue when `None`.
    pub job_type: Option<&'a str>,
    /// Pause (true) or resume.
    pub paused: bool,
    /// The present, recorded as the pause's time.
    pub now: UnixMillis,
}

/// What [`crate::store::Store::record_limits`] records: the limits a worker's config sets.
#[derive(Debug, Clone, Copy)]
pub struct RecordLimits<'a> {
    /// The limits.
    pub limits: &'a [Limit],
    /// The worker recording them.
    pub worker: &'a str,
    /// The present, recorded with them.
    pub now: UnixMillis,
}

/// A limit as the store recorded it, with who recorded it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordedLimit {
    /// The limit.
    pub limit: Limit,
    /// The worker that recorded it last.
    pub recorded_by: String,
    /// When.
    pub recorded_at: UnixMillis,
}

/// An operator's pause of a queue, or of one type in it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Pause {
    /// The queue.
    pub queue: String,
    /// Only this type's jobs in it; the whole queue when `None`.
    pub job_type: Option<String>,
    /// When it was paused.
    pub since: UnixMillis,
}

/// Back-pressure: nothing of a type (or of one partition of it) starts before `until`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Block {
    /// The type.
    pub job_type: String,
    /// Only this partition of it (its limit's partition value); the whole type when `None`.
    pub partition: Option<String>,
    /// Until when.
    pub until: UnixMillis,
}

/// The pauses and the blocks in force, from [`crate::store::Store::flow_state`].
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct FlowState {
    /// Every pause, by queue then type.
    pub pauses: Vec<Pause>,
    /// The blocks that have not run out, by type then partition.
    pub blocks: Vec<Block>,
}

/// What a claim respects besides its queues and excluded types: the claiming worker's limits, and
/// the pauses and blocks it last read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Flow {
    /// The limits of the worker's config.
    pub limits: Vec<Limit>,
    /// Pauses in force.
    pub pauses: Vec<Pause>,
    /// Blocks in force (those that ran out by the claim's `now` are ignored).
    pub blocks: Vec<Block>,
}

impl Flow {
    /// True when it holds nothing back.
    pub fn is_empty(&self) -> bool {
        self.limits.is_empty() && self.pauses.is_empty() && self.blocks.is_empty()
    }

    /// The limit whose scope is `scope`, if any.
    pub fn limit(&self, scope: &Scope) -> Option<&Limit> {
        self.limits.iter().find(|l| &l.scope == scope)
    }
}

/// How a store runs a claim.
#[derive(Debug, Clone)]
pub enum ClaimPlan {
    /// Nothing can be claimed (every queue paused).
    Nothing,
    /// An ordinary claim: this one, with paused queues left out and blocked or wholly paused types
    /// excluded.
    Plain(Claim),
    /// A limited claim (see the module documentation): a limit, a pause of some types or a block of
    /// some partitions applies.
    Limited,
}

impl Claim {
    /// How this claim is to be run (see [`ClaimPlan`]).
    pub fn plan(&self) -> ClaimPlan {
        let flow = &self.flow;
        if flow.is_empty() {
            return ClaimPlan::Plain(self.clone());
        }
        let paused_queue = |q: &str| flow.pauses.iter().any(|p| p.queue == q && p.job_type.is_none());
        let queues: Vec<String> = self.queues.iter().filter(|q| !paused_queue(q)).cloned().collect();
        if queues.is_empty() {
            return ClaimPlan::Nothing;
        }
        let mut exclude: Vec<String> = self.exclude_types.clone();
        let excluded = |t: &str, exclude: &[String]| exclude.iter().any(|e| e == t);
        for b in flow.blocks.iter().filter(|b| b.until > self.now) {
            if b.partition.is_none() && !excluded(&b.job_type, &exclude) {
                exclude.push(b.job_type.clone());
            }
        }
        // A type paused in every queue claimed is excluded; paused in only some, a limited claim.
        let mut partial = false;
        for p in &flow.pauses {
            let Some(t) = &p.job_type else { continue };
            if !queues.contains(&p.queue) || excluded(t, &exclude) {
                continue;
            }
            let everywhere = queues.iter().all(|q| {
                flow.pauses
                    .iter()
                    .any(|o| &o.queue == q && o.job_type.as_ref() == Some(t))
            });
            if everywhere {
                exclude.push(t.clone());
            } else {
                partial = true;
            }
        }
        let limited = flow.limits.iter().any(|l| match &l.scope {
            Scope::Type(t) => !excluded(t, &exclude),
            Scope::Queue(q) => queues.contains(q),
        });
        let partition_blocked = flow
            .blocks
            .iter()
            .any(|b| b.until > self.now && b.partition.is_some() && !excluded(&b.job_type, &exclude));
        if partial || limited || partition_blocked {
            return ClaimPlan::Limited;
        }
        ClaimPlan::Plain(Claim {
            queues,
            exclude_types: exclude,
            flow: Default::default(),
            ..self.clone()
        })
    }
}

/// See [`Admission::headroom`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Headroom {
    /// Candidates sure to be admitted.
    pub jobs: u32,
    /// Whether a partitioned limit sets it.
    pub bounded_by_partition: bool,
}

/// One slot a limited claim takes: the limit's scope key and the partition.
pub type SlotKey = (String, String);

/// What admission reads of a candidate: a store may select just these (and the candidate's
/// partitions) and read the whole job only of those admitted.
#[derive(Debug, Clone, Copy)]
pub struct Candidate<'a> {
    /// The job's id.
    pub id: &'a str,
    /// Its type.
    pub job_type: &'a str,
    /// Its queue.
    pub queue: &'a str,
    /// Attempts it has used.
    pub attempt: u32,
}

impl<'a> Candidate<'a> {
    /// The candidate a whole job makes.
    pub fn of(job: &'a Job) -> Candidate<'a> {
        Candidate {
            id: job.id.as_str(),
            job_type: &job.job_type,
            queue: &job.queue,
            attempt: job.attempt,
        }
    }

    /// The candidate a job was before the lease that returned it (which counted an attempt).
    pub fn leased(job: &'a Job) -> Candidate<'a> {
        Candidate {
            attempt: job.attempt.saturating_sub(1),
            ..Candidate::of(job)
        }
    }
}

/// The limits' state a limited claim read, and its decisions so far (see the module documentation).
/// The store reads the live slots and the active rate buckets of `limited_scopes()`, feeds the
/// candidates in claim order to [`Admission::admit`], and writes what [`Admission::taken_slots`] and
/// [`Admission::rate_updates`] say.
#[derive(Debug)]
pub struct Admission<'a> {
    claim: &'a Claim,
    /// Running jobs holding a slot, per (scope key, partition).
    running: HashMap<SlotKey, u32>,
    /// Rate buckets' theoretical arrival times in microseconds, per (scope key, partition).
    buckets: HashMap<SlotKey, i64>,
    changed_buckets: HashSet<SlotKey>,
    taken: Vec<(String, u32, Vec<SlotKey>)>,
    admitted: u32,
}

impl<'a> Admission<'a> {
    /// A limited claim's decisions, given the live slots (`running`: per scope key and partition, how
    /// many running jobs hold one) and the rate buckets it read.
    pub fn new(claim: &'a Claim, running: HashMap<SlotKey, u32>, buckets: HashMap<SlotKey, i64>) -> Admission<'a> {
        Admission {
            claim,
            running,
            buckets,
            changed_buckets: HashSet::new(),
            taken: Vec::new(),
            admitted: 0,
        }
    }

    /// The scope keys of the limits that could apply to this claim, sorted (the order stores lock
    /// them in).
    pub fn limited_scopes(claim: &Claim) -> Vec<String> {
        let mut keys: Vec<String> = claim
            .flow
            .limits
            .iter()
            .filter(|l| match &l.scope {
                Scope::Type(t) => !claim.exclude_types.contains(t),
                Scope::Queue(q) => claim.queues.contains(q),
            })
            .map(|l| l.scope.key())
            .collect();
        keys.sort();
        keys.dedup();
        keys
    }

    /// The claim's present in microseconds, the unit of the rate buckets.
    pub fn now_us(&self) -> i64 {
        self.claim.now.0.saturating_mul(1000)
    }

    /// How many candidates it has admitted.
    pub fn admitted(&self) -> u32 {
        self.admitted
    }

    /// Whether the claim is full.
    pub fn is_full(&self) -> bool {
        self.admitted >= self.claim.limit
    }

    /// Decides one candidate (taken in claim order): `true` when it may start, in which case its slots
    /// and rate starts are counted for the candidates after it.
    pub fn admit(&mut self, job: &Job) -> bool {
        let parts: Vec<String> = self
            .claim
            .flow
            .limits
            .iter()
            .filter_map(|l| l.partition.as_ref())
            .map(|p| p.value_of(job))
            .collect();
        self.admit_with(Candidate::of(job), &parts)
    }

    /// [`Admission::admit`] with the job's partitions already read (by a store that reads them in
    /// its statement, the way it counts the running jobs): one per limit of the claim's flow that has
    /// a partition, in the flow's order.
    pub fn admit_with(&mut self, job: Candidate<'_>, partitions: &[String]) -> bool {
        if self.is_full() {
            return false;
        }
        let claim = self.claim;
        let flow = &claim.flow;
        if claim.exclude_types.iter().any(|t| t == job.job_type) {
            return false;
        }
        if flow
            .pauses
            .iter()
            .any(|p| p.queue == job.queue && p.job_type.as_ref().is_none_or(|t| t == job.job_type))
        {
            return false;
        }
        // Each applicable limit with the job's partition under it.
        let mut partitions = partitions.iter();
        let applicable: Vec<(&Limit, String)> = flow
            .limits
            .iter()
            .map(|l| {
                let part = match l.partition {
                    Some(_) => partitions.next().cloned().unwrap_or_default(),
                    None => String::new(),
                };
                (l, part)
            })
            .filter(|(l, _)| l.scope.covers(job.job_type, job.queue))
            .collect();
        // The type's partition, for partition blocks: its own limit's partition field.
        let type_partition = applicable
            .iter()
            .find(|(l, _)| matches!(l.scope, Scope::Type(_)) && l.partition.is_some())
            .map(|(_, part)| part.clone());
        let blocked = flow.blocks.iter().any(|b| {
            b.until > claim.now
                && b.job_type == job.job_type
                && match &b.partition {
                    None => true,
                    Some(p) => type_partition.as_ref() == Some(p),
                }
        });
        if blocked {
            return false;
        }
        let now_us = self.now_us();
        let mut slots = Vec::new();
        let mut starts = Vec::new();
        for (limit, part) in &applicable {
            let key = (limit.scope.key(), part.clone());
            if let Some(max) = limit.global_concurrency {
                if self.running.get(&key).copied().unwrap_or(0) >= max {
                    return false;
                }
                slots.push(key.clone());
            }
            if let Some(rate) = limit.rate {
                let tat = self.buckets.get(&key).copied().unwrap_or(now_us);
                match rate.admit(tat, now_us) {
                    Some(next) => starts.push((key, next)),
                    None => return false,
                }
            }
        }
        for key in &slots {
            *self.running.entry(key.clone()).or_insert(0) += 1;
        }
        for (key, next) in starts {
            self.changed_buckets.insert(key.clone());
            self.buckets.insert(key, next);
        }
        self.taken.push((job.id.to_string(), job.attempt + 1, slots));
        self.admitted += 1;
        true
    }

    /// The slots the admitted jobs take: (scope key, partition, job id, the attempt it runs).
    pub fn taken_slots(&self) -> Vec<(String, String, String, u32)> {
        self.taken
            .iter()
            .flat_map(|(id, attempt, slots)| {
                slots
                    .iter()
                    .map(move |(scope, part)| (scope.clone(), part.clone(), id.clone(), *attempt))
            })
            .collect()
    }

    /// The rate buckets the admitted jobs moved: (scope key, partition, new time in µs).
    pub fn rate_updates(&self) -> Vec<(String, String, i64)> {
        let mut out: Vec<(String, String, i64)> = self
            .changed_buckets
            .iter()
            .map(|k| (k.0.clone(), k.1.clone(), self.buckets[k]))
            .collect();
        out.sort();
        out
    }

    /// How many more candidates the limits are sure to admit, whatever their types and partitions,
    /// given that the candidates' selection leaves out the [`Admission::closed_keys`]; `u32::MAX`
    /// when no limit applies. A store reads just as many candidates as it wants jobs while this is at
    /// least that many (no candidate can be turned away, so none is read in vain), and otherwise a
    /// few more than this and then, if the limit that filled up turned some away, the next page
    /// without it. `bounded_by_partition` says whether a partitioned limit (where any partition
    /// may fill up after one more job) is what bounds it.
    pub fn headroom(&self) -> Headroom {
        let now_us = self.now_us();
        let claim = self.claim;
        let mut least = Headroom {
            jobs: u32::MAX,
            bounded_by_partition: false,
        };
        let mut bound = |jobs: u32, partitioned: bool| {
            if jobs < least.jobs {
                least = Headroom {
                    jobs,
                    bounded_by_partition: partitioned,
                };
            }
        };
        // A block of one partition turns away that partition's candidates, which the selection reads.
        if claim
            .flow
            .blocks
            .iter()
            .any(|b| b.until > claim.now && b.partition.is_some())
        {
            bound(0, true);
        }
        let scopes = Admission::limited_scopes(claim);
        for limit in claim.flow.limits.iter().filter(|l| scopes.contains(&l.scope.key())) {
            let scope = limit.scope.key();
            let partitioned = limit.partition.is_some();
            // A full slot or an empty bucket is left out by the selection, so it bounds nothing;
            // of the others the tightest does, and a partition never seen is empty.
            if let Some(max) = limit.global_concurrency {
                let held = self
                    .running
                    .iter()
                    .filter(|(k, n)| k.0 == scope && **n < max)
                    .map(|(_, n)| *n);
                let unseen_held = (partitioned || !self.running.keys().any(|k| k.0 == scope)).then_some(0);
                if let Some(fullest) = held.chain(unseen_held).max() {
                    bound(max - fullest, partitioned);
                }
            }
            if let Some(rate) = limit.rate {
                let open = self
                    .buckets
                    .iter()
                    .filter(|(k, tat)| k.0 == scope && rate.admit(**tat, now_us).is_some())
                    .map(|(_, tat)| *tat);
                let fresh = (partitioned || !self.buckets.keys().any(|k| k.0 == scope)).then_some(now_us);
                if let Some(starts) = open.chain(fresh).map(|tat| rate.starts_left(tat, now_us)).min() {
                    bound(starts, partitioned);
                }
            }
        }
        least
    }

    /// What the candidates' selection may leave out before any is decided: the (scope key,
    /// partition) pairs that can take no job now (full, or their bucket empty), for a store that
    /// filters them in its statement so that one busy partition's backlog does not crowd the
    /// candidates of the others.
    pub fn closed_keys(&self) -> Vec<SlotKey> {
        let now_us = self.now_us();
        let mut out = Vec::new();
        for limit in &self.claim.flow.limits {
            let scope = limit.scope.key();
            if let Some(max) = limit.global_concurrency {
                out.extend(
                    self.running
                        .iter()
                        .filter(|(k, n)| k.0 == scope && **n >= max)
                        .map(|(k, _)| k.clone()),
                );
            }
            if let Some(rate) = limit.rate {
                out.extend(
                    self.buckets
                        .iter()
                        .filter(|(k, tat)| k.0 == scope && rate.admit(**tat, now_us).is_none())
                        .map(|(k, _)| k.clone()),
                );
            }
        }
        out.sort();
        out.dedup();
        out
    }
}

#[cfg(test)]
mod tests;
