//! The Lua scripts, each with the shared prelude, and the argument and reply shapes of the ones whose
//! encoding is more than a few lines.

use std::collections::HashSet;
use std::sync::LazyLock;

use redis::{Cmd, Script, Value};

use super::codec::run_key;
use super::{KIND, StoreError};
use crate::job::{JobId, NewJob};
use crate::store::{EnqueueOutcome, Enqueued, WorkerInfo};

/// One script: its source and the SHA-1 the server knows it by.
pub(crate) struct Lua {
    script: Script,
    source: &'static str,
}

impl Lua {
    fn new(source: &'static str) -> Lua {
        Lua {
            script: Script::new(source),
            source,
        }
    }

    pub(crate) fn sha(&self) -> &str {
        self.script.get_hash()
    }

    /// `cmd`, an `EVALSHA` of this script, as an `EVAL` of its full text: for a server (or a cluster
    /// node) that does not have the script yet, and keeps it once it has run it.
    pub(crate) fn as_eval(&self, cmd: &Cmd) -> Cmd {
        let mut eval = redis::cmd("EVAL");
        eval.arg(self.source);
        for arg in cmd.args_iter().skip(2) {
            if let redis::Arg::Simple(bytes) = arg {
                eval.arg(bytes);
            }
        }
        eval
    }

    pub(crate) async fn load(&self, conn: &mut impl redis::aio::ConnectionLike) -> redis::RedisResult<()> {
        self.script.load_async(conn).await.map(|_| ())
    }
}

macro_rules! lua {
    ($name:ident) => {
        // The shebang makes Redis 7 check every key a script touches against its declared slot.
        lua!($name, "#!lua\n")
    };
    ($name:ident, $shebang:literal) => {
        Lua::new(concat!(
            $shebang,
            include_str!("lua/common.lua"),
            include_str!(concat!("lua/", stringify!($name), ".lua"))
        ))
    };
}

/// A script made of two others, each the very file run as a function of its own keys and
/// arguments (`finish_script`, `claim_limited_script`, …: `KEYS` and `ARGV` are its parameters),
/// followed by the file that calls them.
macro_rules! joined {
    ($name:ident = $first:ident + $second:ident) => {
        Lua::new(concat!(
            "#!lua\n",
            include_str!("lua/common.lua"),
            "local function ",
            stringify!($first),
            "_script(KEYS, ARGV)\n",
            include_str!(concat!("lua/", stringify!($first), ".lua")),
            "\nend\nlocal function ",
            stringify!($second),
            "_script(KEYS, ARGV)\n",
            include_str!(concat!("lua/", stringify!($second), ".lua")),
            "\nend\n",
            include_str!(concat!("lua/", stringify!($name), ".lua"))
        ))
    };
}

/// Declares the store's scripts once: a field of [`Scripts`] for each, named as its file in `lua/`,
/// the list [`Scripts::all`] loads, and [`SCRIPTS`], read from the files at build time. A script
/// marked `single_server` is refused by a cluster (it touches keys it cannot declare) and is not
/// loaded there. A `joined` script is two of them in one call (see [`joined!`]).
macro_rules! scripts {
    (
        $($name:ident),+ ;
        joined: $($joined:ident = $first:ident + $second:ident),+ ;
        single_server: $($single:ident),+ $(,)?
    ) => {
        /// Every script of the store.
        pub(crate) struct Scripts {
            $(pub $name: Lua,)+
            $(pub $joined: Lua,)+
            $(pub $single: Lua,)+
        }

        impl Scripts {
            /// The scripts a server runs: on a cluster, those not marked `single_server`.
            pub(crate) fn all(&self, cluster: bool) -> Vec<&Lua> {
                let mut all = vec![$(&self.$name,)+ $(&self.$joined),+];
                if !cluster {
                    all.extend([$(&self.$single),+]);
                }
                all
            }
        }

        pub(crate) static SCRIPTS: LazyLock<Scripts> = LazyLock::new(|| Scripts {
            $($name: lua!($name),)+
            $($joined: joined!($joined = $first + $second),)+
            $($single: lua!($single, "#!lua flags=no-cluster\n"),)+
        });
    };
}

scripts!(
    enqueue, enqueue_after, claim, heartbeat, finish, release, rescue, cancel, replay, cleanup, list, stats,
    inbox_take, inbox_done, schedules, tick, schedule_pause, emit, claim_limited, block, resolve, delete, retry,
    queue_load, often_rescued, throughput, reindex, import, schedule_restore, stranded, edges, link, outbox_apply, outbox_done, import_edges,
    reopen_far, expire;
    joined: finish_and_claim = finish + claim_limited, finish_spawning = finish + enqueue_after;
    single_server: get,
);

/// The arguments of `enqueue.lua` for jobs of one queue: the shape, the count, then the fields the
/// jobs share once and id, payload, run and creation times per job (shape `S`), or every field per job
/// (shape `E`).
pub(crate) fn enqueue_args(cmd: &mut Cmd, jobs: &[&NewJob]) {
    let meta = meta_arg;
    let timeout = |job: &NewJob| job.timeout_ms.map(|t| t.to_string()).unwrap_or_default();
    // Run and creation times are left out: validated one by one, the jobs of a batch differ by a
    // millisecond or two.
    let shared = |a: &NewJob, b: &NewJob| {
        (&a.job_type, &a.meta, a.priority, a.max_attempts, a.timeout_ms)
            == (&b.job_type, &b.meta, b.priority, b.max_attempts, b.timeout_ms)
    };
    // Shape `S` checks the batch's ids against the store in one go, so it needs ids that differ
    // within the batch; a batch that repeats one goes job by job, where the second finds the first.
    let distinct_ids = || {
        let mut seen = HashSet::with_capacity(jobs.len());
        jobs.iter().all(|j| seen.insert(j.id.as_str()))
    };
    match jobs {
        [first, ..]
            if jobs
                .iter()
                .all(|j| j.unique_key.is_none() && j.expires_at.is_none() && shared(first, j))
                // (A job without a unique key has no unique mode.)
                && distinct_ids() =>
        {
            cmd.arg("S")
                .arg(jobs.len())
                .arg(&first.job_type)
                .arg(meta(first))
                .arg(first.priority)
                .arg(first.max_attempts)
                .arg(timeout(first));
            for job in jobs {
                cmd.arg(job.id.as_str())
                    .arg(job.payload.get())
                    .arg(run_key(job.run_at))
                    .arg(job.created_at.0);
            }
        }
        _ => {
            cmd.arg("E").arg(jobs.len());
            for job in jobs {
                every_field(cmd, job);
                cmd.arg(job.unique_mode.stored().unwrap_or_default());
            }
        }
    }
}

/// One job's fields in `enqueue.lua`'s shape `E` (which `enqueue_after.lua` takes too): id, type,
/// payload, meta, priority, max attempts, run time, unique key, time-out, creation time, expiry.
pub(crate) fn every_field(cmd: &mut Cmd, job: &NewJob) {
    cmd.arg(job.id.as_str())
        .arg(&job.job_type)
        .arg(job.payload.get())
        .arg(meta_arg(job))
        .arg(job.priority)
        .arg(job.max_attempts)
        .arg(run_key(job.run_at))
        .arg(job.unique_key.as_deref().unwrap_or(""))
        .arg(job.timeout_ms.map(|t| t.to_string()).unwrap_or_default())
        .arg(job.created_at.0)
        .arg(job.expires_at.map(|at| at.0.to_string()).unwrap_or_default());
}

/// A job's meta as a script argument: `''` at its default (empty), else its JSON.
pub(crate) fn meta_arg(job: &NewJob) -> String {
    if job.meta.is_empty() {
        String::new()
    } else {
        serde_json::to_string(&job.meta).unwrap_or_default()
    }
}

/// The fields of a new job without a unique key or time-out, as `tick.lua` and `emit.lua` read them:
/// id, type, payload, meta, priority, max_attempts, run_at key, created_at.
pub(crate) fn new_job_args(cmd: &mut Cmd, job: &NewJob) {
    cmd.arg(job.id.as_str())
        .arg(&job.job_type)
        .arg(job.payload.get())
        .arg(meta_arg(job))
        .arg(job.priority)
        .arg(job.max_attempts)
        .arg(run_key(job.run_at))
        .arg(job.created_at.0);
}

/// The answers of `enqueue.lua`, one per job (`C`, `D`, or `K` and the id coalesced into; shape `S`
/// answers with one string of letters), and whether the caller must register the queue itself.
pub(crate) fn enqueued(jobs: &[&NewJob], reply: Value) -> Result<(Vec<Enqueued>, bool), StoreError> {
    let bad = |why: String| StoreError::query(KIND, "enqueue", why);
    let (register, outcomes) = match reply {
        Value::Array(mut pair) if pair.len() == 2 => {
            let outcomes = pair.pop().unwrap_or(Value::Nil);
            (matches!(pair.pop(), Some(Value::Int(1))), outcomes)
        }
        other => return Err(bad(format!("unexpected reply {other:?}"))),
    };
    let answers: Vec<String> = match outcomes {
        Value::BulkString(letters) => letters.into_iter().map(|l| char::from(l).to_string()).collect(),
        other => redis::from_redis_value(other).map_err(|e| bad(e.to_string()))?,
    };
    if answers.len() != jobs.len() {
        return Err(bad(format!("{} answers for {} jobs", answers.len(), jobs.len())));
    }
    jobs.iter()
        .zip(answers)
        .map(|(job, answer)| {
            let (outcome, id) = match answer.split_at_checked(1) {
                Some(("C", _)) => (EnqueueOutcome::Created, job.id.clone()),
                Some(("D", _)) => (EnqueueOutcome::Duplicate, job.id.clone()),
                Some(("Q", _)) => (EnqueueOutcome::QueuedBehind, job.id.clone()),
                Some(("P", _)) => (EnqueueOutcome::CancelledPrevious, job.id.clone()),
                Some(("K", holder)) => (EnqueueOutcome::Coalesced, JobId::from_stored(holder.to_string())),
                Some(("R", holder)) => (EnqueueOutcome::Replaced, JobId::from_stored(holder.to_string())),
                Some(("B", holder)) => (EnqueueOutcome::Debounced, JobId::from_stored(holder.to_string())),
                Some(("T", holder)) => (EnqueueOutcome::Throttled, JobId::from_stored(holder.to_string())),
                _ => return Err(bad(format!("unexpected outcome {answer:?}"))),
            };
            Ok(Enqueued { id, outcome })
        })
        .collect::<Result<_, _>>()
        .map(|answers| (answers, register))
}

/// A worker record as `register_worker` stored it.
pub(crate) fn worker_from_json(text: &str) -> serde_json::Result<WorkerInfo> {
    serde_json::from_str(text)
}
