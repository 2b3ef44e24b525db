//! Dependencies: a job enqueued after others is `blocked` until they end, then runs or is cancelled
//! by each edge's rule, resolved in the same write as the dependency's end.

use jobq::job::{DependOn, Job, JobSpec, JobStatus, Join, NO_DEPENDENCY_MET_ERROR};
use jobq::store::{Delete, DynStore, Edge, EdgeState, Import, Lease, OnConflict, ReadEdges, StoreError, Transition};

use crate::support::jobs::*;

fn after(spec: JobSpec, dependency: &str, on: DependOn) -> JobSpec {
    spec.after_on(id(dependency), on)
}

fn dead() -> Transition {
    Transition::Dead {
        error: "failed for good".into(),
    }
}

fn succeeded() -> Transition {
    Transition::Succeeded { result: None }
}

/// Claims the named job, the next ready one of the default queue, and applies `outcome` at `now`.
pub(super) async fn end(store: &DynStore, name: &str, outcome: Transition, now: jobq::time::UnixMillis) -> Job {
    let job = claim_one(store, jobq::job::DEFAULT_QUEUE, WORKER, now).await;
    assert_eq!(job.id.as_str(), name, "the next ready job");
    assert!(finish(store, &Lease::of(&job), outcome, now).await);
    job
}

/// When dependents are due: after every claim of the cases, so that a dependent released early is
/// never the next ready job of the queue it shares with its dependencies (a Redis Cluster keeps a
/// job's dependencies in its own queue's slot).
const LATER: jobq::time::UnixMillis = jobq::time::UnixMillis(T0.0 + 10_000);

async fn status(store: &DynStore, name: &str) -> JobStatus {
    get(store, &id(name)).await.status
}

/// Replays the dead job `name` at `now`, with its cascade: the jobs that came back, in order, each
/// with its status.
pub(super) async fn replay_with_cascade(
    store: &DynStore,
    name: &str,
    now: jobq::time::UnixMillis,
) -> Vec<(String, JobStatus)> {
    let replay = jobq::store::ReplayDead {
        ids: vec![id(name)],
        now,
        cascade: true,
        ..Default::default()
    };
    let back = store.replay_dead(&replay).await.expect("replay");
    back.iter().map(|j| (j.id.to_string(), j.status)).collect()
}

pub(super) async fn a_dependent_is_blocked_until_its_dependency_succeeds(store: &DynStore) {
    add(store, spec("d")).await;
    add(store, after(spec("j"), "d", DependOn::Success)).await;
    assert_eq!(status(store, "j").await, JobStatus::Blocked);
    assert_eq!(count(store, JobStatus::Blocked, T0).await, 1);
    assert_eq!(count(store, JobStatus::Pending, T0).await, 1);
    // Only the dependency can be claimed.
    let claimed = claim(store, jobq::job::DEFAULT_QUEUE, WORKER, 10, at(1)).await;
    assert_eq!(ids(&claimed), ["d"]);
    assert!(
        claim(store, jobq::job::DEFAULT_QUEUE, WORKER, 10, at(2))
            .await
            .is_empty()
    );
    assert!(finish(store, &Lease::of(&claimed[0]), succeeded(), at(3)).await);
    let j = get(store, &id("j")).await;
    assert_eq!((j.status, j.attempt, j.finished_at), (JobStatus::Pending, 0, None));
    assert_eq!(count(store, JobStatus::Blocked, at(3)).await, 0);
    assert_eq!(
        ids(&claim(store, jobq::job::DEFAULT_QUEUE, WORKER, 10, at(4)).await),
        ["j"]
    );
}

pub(super) async fn a_dependency_that_ends_against_the_rule_cancels_its_dependent(store: &DynStore) {
    add(store, spec("d")).await;
    add(store, after(spec("j"), "d", DependOn::Success)).await;
    end(store, "d", dead(), at(1)).await;
    let j = get(store, &id("j")).await;
    assert_eq!((j.status, j.finished_at), (JobStatus::Cancelled, Some(at(1))));
    let error = &j.errors.last().expect("the cancellation's error").error;
    assert!(error.contains("dependency d ended dead"), "{error}");
    assert!(
        claim(store, jobq::job::DEFAULT_QUEUE, WORKER, 10, at(2))
            .await
            .is_empty()
    );
}

pub(super) async fn each_rule_runs_its_dependent_on_the_ends_it_names(store: &DynStore) {
    // (dependency's end, rule, what the dependent becomes)
    let cases = [
        ("s1", succeeded(), DependOn::Success, JobStatus::Pending),
        ("s2", succeeded(), DependOn::Finish, JobStatus::Pending),
        ("s3", succeeded(), DependOn::Failure, JobStatus::Cancelled),
        ("d1", dead(), DependOn::Finish, JobStatus::Pending),
        ("d2", dead(), DependOn::Failure, JobStatus::Pending),
        (
            "x1",
            Transition::Discarded {
                reason: "not needed".into(),
            },
            DependOn::Failure,
            JobStatus::Pending,
        ),
        (
            "x2",
            Transition::Discarded {
                reason: "not needed".into(),
            },
            DependOn::Success,
            JobStatus::Cancelled,
        ),
    ];
    for (n, (name, _, on, _)) in cases.iter().enumerate() {
        add(store, spec(name).run_at(at(n as i64))).await;
        add(store, after(spec(&format!("{name}-then")).run_at(LATER), name, *on)).await;
    }
    for (n, (name, outcome, _, _)) in cases.iter().enumerate() {
        end(store, name, outcome.clone(), at(100 + n as i64)).await;
    }
    for (name, outcome, on, expected) in cases {
        assert_eq!(
            status(store, &format!("{name}-then")).await,
            expected,
            "after {name} ended by {outcome:?}, on {on}"
        );
    }
}

pub(super) async fn a_dependent_waits_for_every_dependency(store: &DynStore) {
    add(store, spec("d1")).await;
    add(store, spec("d2").run_at(at(1))).await;
    add(
        store,
        after(
            after(spec("j").run_at(LATER), "d1", DependOn::Success),
            "d2",
            DependOn::Finish,
        ),
    )
    .await;
    end(store, "d1", succeeded(), at(10)).await;
    assert_eq!(status(store, "j").await, JobStatus::Blocked);
    end(store, "d2", dead(), at(11)).await;
    assert_eq!(status(store, "j").await, JobStatus::Pending);
}

pub(super) async fn a_dependency_on_an_unknown_job_refuses_the_whole_batch(store: &DynStore) {
    let jobs = vec![
        new_job(spec("a")),
        new_job(after(spec("j"), "nobody", DependOn::Success)),
    ];
    let err = store.enqueue(&jobs).await.expect_err("a dependency that names no job");
    match err {
        StoreError::UnknownDependency { ids } => assert_eq!(ids, ["nobody"]),
        other => panic!("expected UnknownDependency, got {other}"),
    }
    assert!(store.get(&id("a")).await.expect("get").is_none());
    assert!(store.get(&id("j")).await.expect("get").is_none());
}

pub(super) async fn a_dependency_that_has_ended_is_resolved_at_once(store: &DynStore) {
    make(store, spec("ok"), JobStatus::Succeeded, T0).await;
    make(store, spec("bad"), JobStatus::Dead, T0).await;
    add(store, after(spec("runs"), "ok", DependOn::Success)).await;
    add(store, after(spec("compensates"), "bad", DependOn::Failure)).await;
    add(store, after(spec("never"), "bad", DependOn::Success)).await;
    assert_eq!(status(store, "runs").await, JobStatus::Pending);
    assert_eq!(status(store, "compensates").await, JobStatus::Pending);
    let never = get(store, &id("never")).await;
    assert_eq!((never.status, never.finished_at), (JobStatus::Cancelled, Some(T0)));
    assert!(never.errors[0].error.contains("dependency bad ended dead"));
}

pub(super) async fn dependencies_may_name_jobs_of_the_same_batch(store: &DynStore) {
    add_all(
        store,
        [
            after(spec("second").run_at(LATER), "first", DependOn::Success),
            spec("first"),
        ],
    )
    .await;
    assert_eq!(status(store, "second").await, JobStatus::Blocked);
    end(store, "first", succeeded(), at(1)).await;
    assert_eq!(status(store, "second").await, JobStatus::Pending);
}

pub(super) async fn a_broken_dependency_cancels_down_the_chain(store: &DynStore) {
    add(store, spec("a")).await;
    add(store, after(spec("b").run_at(LATER), "a", DependOn::Success)).await;
    add(store, after(spec("c").run_at(LATER), "b", DependOn::Success)).await;
    add(store, after(spec("d").run_at(LATER), "b", DependOn::Finish)).await;
    end(store, "a", dead(), at(1)).await;
    assert_eq!(status(store, "b").await, JobStatus::Cancelled);
    let c = get(store, &id("c")).await;
    assert_eq!(c.status, JobStatus::Cancelled);
    assert!(
        c.errors[0].error.contains("dependency b ended cancelled"),
        "{:?}",
        c.errors
    );
    // Cancelled is an end: a rule of `finish` is met by it.
    assert_eq!(status(store, "d").await, JobStatus::Pending);
}

pub(super) async fn an_outcome_written_twice_resolves_its_edges_once(store: &DynStore) {
    add(store, spec("d1")).await;
    add(store, spec("d2").run_at(at(1))).await;
    add(
        store,
        after(
            after(spec("j").run_at(LATER), "d1", DependOn::Success),
            "d2",
            DependOn::Success,
        ),
    )
    .await;
    let d1 = end(store, "d1", succeeded(), at(10)).await;
    // The same acknowledgement again (a retry after a lost answer): stale, and changes nothing.
    assert!(!finish(store, &Lease::of(&d1), succeeded(), at(11)).await);
    assert_eq!(status(store, "j").await, JobStatus::Blocked);
    end(store, "d2", succeeded(), at(12)).await;
    assert_eq!(status(store, "j").await, JobStatus::Pending);
}

pub(super) async fn blocked_jobs_are_listed_by_status(store: &DynStore) {
    add(store, spec("d")).await;
    add(store, after(spec("j"), "d", DependOn::Success)).await;
    let list = jobq::store::List {
        filter: jobq::store::JobFilter {
            statuses: vec![JobStatus::Blocked],
            ..Default::default()
        },
        limit: 10,
        offset: 0,
        after: None,
    };
    assert_eq!(ids(&store.list(&list).await.expect("list")), ["j"]);
    let queue = &stats(store, &[jobq::job::DEFAULT_QUEUE], T0).await[0];
    assert_eq!((queue.blocked, queue.ready, queue.total()), (1, 1, 2));
}

// Every other way a job ends resolves what waits for it. These keep each dependency and its
// dependents in one queue, the same hash slot on a Redis Cluster.

pub(super) async fn a_cancelled_dependency_cancels_or_runs_its_dependents_by_rule(store: &DynStore) {
    add(store, spec("d")).await;
    add(store, after(spec("needs-success"), "d", DependOn::Success)).await;
    add(store, after(spec("needs-an-end"), "d", DependOn::Finish)).await;
    let target = jobq::store::CancelTarget::Ids(vec![id("d")]);
    store
        .cancel(&jobq::store::Cancel { target, now: at(5) })
        .await
        .expect("cancel");
    let cancelled = get(store, &id("needs-success")).await;
    assert_eq!(
        (cancelled.status, cancelled.finished_at),
        (JobStatus::Cancelled, Some(at(5)))
    );
    assert!(cancelled.errors[0].error.contains("dependency d ended cancelled"));
    assert_eq!(status(store, "needs-an-end").await, JobStatus::Pending);
}

pub(super) async fn a_blocked_job_cancelled_resolves_its_own_dependents(store: &DynStore) {
    add(store, spec("d")).await;
    add(store, after(spec("j"), "d", DependOn::Success)).await;
    add(store, after(spec("k"), "j", DependOn::Success)).await;
    let target = jobq::store::CancelTarget::Ids(vec![id("j")]);
    store
        .cancel(&jobq::store::Cancel { target, now: at(5) })
        .await
        .expect("cancel");
    assert_eq!(status(store, "k").await, JobStatus::Cancelled);
    // The dependency ending later leaves the cancelled job as it is.
    end(store, "d", succeeded(), at(6)).await;
    assert_eq!(status(store, "j").await, JobStatus::Cancelled);
    assert!(
        claim(store, jobq::job::DEFAULT_QUEUE, WORKER, 10, at(7))
            .await
            .is_empty()
    );
}

pub(super) async fn a_deleted_dependency_counts_as_cancelled(store: &DynStore) {
    add(store, spec("d1")).await;
    add(store, spec("d2")).await;
    add(store, after(spec("runs"), "d1", DependOn::Finish)).await;
    add(store, after(spec("never"), "d2", DependOn::Success)).await;
    let delete = jobq::store::Delete {
        ids: vec![id("d1"), id("d2")],
        force: false,
    };
    store.delete(&delete).await.expect("delete");
    assert_eq!(status(store, "runs").await, JobStatus::Pending);
    let never = get(store, &id("never")).await;
    assert_eq!(never.status, JobStatus::Cancelled);
    assert!(never.errors[0].error.contains("dependency d2 ended cancelled"));
}

pub(super) async fn a_resolved_dependency_releases_its_dependents(store: &DynStore) {
    make(store, spec("d"), JobStatus::Waiting, T0).await;
    add(store, after(spec("j"), "d", DependOn::Success)).await;
    assert_eq!(status(store, "j").await, JobStatus::Blocked);
    let resolve = jobq::store::Resolve {
        id: id("d"),
        attempt: None,
        action: jobq::store::Resolution::Succeed { result: None },
    };
    store.resolve(&[resolve], at(10)).await.expect("resolve");
    assert_eq!(status(store, "j").await, JobStatus::Pending);
}

pub(super) async fn a_retried_dependency_keeps_its_dependents_waiting(store: &DynStore) {
    add(store, spec("d")).await;
    add(store, after(spec("j"), "d", DependOn::Success)).await;
    end(store, "d", retry("try again", at(10)), at(1)).await;
    assert_eq!(status(store, "j").await, JobStatus::Blocked);
    end(store, "d", succeeded(), at(20)).await;
    assert_eq!(status(store, "j").await, JobStatus::Pending);
}

/// An edge its dependency's end met stays met whatever becomes of that dependency afterwards: deleted
/// while its dependent still waits for another job, retried, or replayed and ended again the other
/// way. The dependent is neither cancelled nor released twice, and waits for its other edges as
/// before.
pub(super) async fn an_edge_met_stays_met_whatever_becomes_of_its_dependency(store: &DynStore) {
    add(store, spec("gone")).await;
    add(store, spec("retried")).await;
    add(store, spec("replayed").max_attempts(1)).await;
    add(store, spec("last").run_at(LATER)).await;
    let waits = after(
        after(
            after(
                after(spec("j").run_at(LATER), "gone", DependOn::Success),
                "retried",
                DependOn::Finish,
            ),
            "replayed",
            DependOn::Failure,
        ),
        "last",
        DependOn::Success,
    );
    add(store, waits).await;
    // In claim order: by id.
    end(store, "gone", succeeded(), at(1)).await;
    end(store, "replayed", dead(), at(2)).await;
    end(store, "retried", succeeded(), at(3)).await;
    assert_eq!(status(store, "j").await, JobStatus::Blocked);

    let delete = Delete {
        ids: vec![id("gone")],
        force: true,
    };
    store.delete(&delete).await.expect("delete");
    let retry = jobq::store::Retry {
        ids: vec![id("retried")],
        now: at(4),
    };
    store.retry(&retry).await.expect("retry");
    assert_eq!(replay_with_cascade(store, "replayed", at(5)).await.len(), 1);
    let read = store.edges(&edges_of(&["j"], false, false)).await.expect("edges");
    let mut states: Vec<(String, EdgeState)> = read[0]
        .dependencies
        .iter()
        .map(|e| (e.job_id.to_string(), e.state))
        .collect();
    states.sort_by(|a, b| a.0.cmp(&b.0));
    let expected = [
        ("gone", EdgeState::Met),
        ("last", EdgeState::Open),
        ("replayed", EdgeState::Met),
        ("retried", EdgeState::Met),
    ];
    let mut expected: Vec<(String, EdgeState)> = expected.iter().map(|(n, s)| (id(n).to_string(), *s)).collect();
    expected.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(states, expected);

    // The two come back and end again, the other way each: j still waits, for `last` alone.
    end(store, "retried", dead(), at(6)).await;
    end(store, "replayed", succeeded(), at(7)).await;
    assert_eq!(status(store, "j").await, JobStatus::Blocked);
    end(store, "last", succeeded(), LATER).await;
    let j = get(store, &id("j")).await;
    assert_eq!((j.status, j.errors.len()), (JobStatus::Pending, 0));
}

/// A job that a replay brings back keeps, for the jobs that waited for it, what its cancel met: one
/// that ran on its end by `finish` does not wait for it again, nor is it cancelled when it ends.
pub(super) async fn a_job_a_replay_brings_back_keeps_what_its_cancel_met(store: &DynStore) {
    add(store, spec("d").max_attempts(1)).await;
    add(store, after(spec("c"), "d", DependOn::Success)).await;
    add(store, after(spec("e").run_at(LATER), "c", DependOn::Finish)).await;
    end(store, "d", dead(), at(1)).await;
    assert_eq!(status(store, "c").await, JobStatus::Cancelled);
    assert_eq!(status(store, "e").await, JobStatus::Pending);
    replay_with_cascade(store, "d", at(2)).await;
    assert_eq!(status(store, "c").await, JobStatus::Blocked);
    let read = store.edges(&edges_of(&["e"], false, false)).await.expect("edges");
    assert_eq!(read[0].dependencies[0].state, EdgeState::Met);
    end(store, "d", succeeded(), at(3)).await;
    end(store, "c", dead(), at(4)).await;
    let e = get(store, &id("e")).await;
    assert_eq!((e.status, e.errors.len()), (JobStatus::Pending, 0));
}

pub(super) async fn a_dependency_rescued_dead_cancels_its_dependents(store: &DynStore) {
    add(store, spec("once").max_attempts(1)).await;
    add(store, spec("twice").max_attempts(2).run_at(at(1))).await;
    add(store, after(spec("after-once"), "once", DependOn::Success)).await;
    add(store, after(spec("after-twice"), "twice", DependOn::Success)).await;
    let claimed = claim(store, jobq::job::DEFAULT_QUEUE, WORKER, 2, at(2)).await;
    assert_eq!(ids(&claimed), ["once", "twice"]);
    let rescued = rescue_stale(store, at(1_000), at(2_000), 100).await;
    assert_eq!(rescued.len(), 2);
    assert_eq!(status(store, "once").await, JobStatus::Dead);
    assert_eq!(status(store, "after-once").await, JobStatus::Cancelled);
    // Rescued to run again: what waits for it still waits.
    assert_eq!(status(store, "twice").await, JobStatus::Pending);
    assert_eq!(status(store, "after-twice").await, JobStatus::Blocked);
}

pub(super) async fn an_import_that_replaces_a_dependency_hands_its_dependents_over(store: &DynStore) {
    add(store, spec("live")).await;
    add(store, spec("ended").run_at(at(1))).await;
    add(
        store,
        after(spec("after-live").run_at(LATER), "live", DependOn::Success),
    )
    .await;
    add(
        store,
        after(spec("after-ended").run_at(LATER), "ended", DependOn::Success),
    )
    .await;
    let live = get(store, &id("live")).await;
    let mut ended = get(store, &id("ended")).await;
    ended.status = JobStatus::Succeeded;
    ended.finished_at = Some(at(5));
    let import = jobq::store::Import {
        jobs: vec![live, ended],
        on_conflict: jobq::store::OnConflict::Replace,
        dry_run: false,
    };
    store.import(&import).await.expect("import");
    // Replaced by a finished job: resolved by how it ended. By a live one: still waiting, until it
    // ends.
    assert_eq!(status(store, "after-ended").await, JobStatus::Pending);
    assert_eq!(status(store, "after-live").await, JobStatus::Blocked);
    end(store, "live", succeeded(), at(6)).await;
    assert_eq!(status(store, "after-live").await, JobStatus::Pending);
}

fn edges_of(names: &[&str], dependents: bool, results: bool) -> ReadEdges {
    ReadEdges {
        ids: names.iter().map(|n| id(n)).collect(),
        dependents,
        results,
        queue: None,
    }
}

/// (id, status, rule, state) of each edge, as the comparisons below read them.
fn seen(edges: &[Edge]) -> Vec<(String, Option<JobStatus>, DependOn, EdgeState)> {
    edges
        .iter()
        .map(|e| (e.job_id.to_string(), e.status, e.on, e.state))
        .collect()
}

pub(super) async fn edges_name_both_sides_with_their_states_and_results(store: &DynStore) {
    add(store, spec("d1")).await;
    add(store, spec("d2")).await;
    add(store, spec("free")).await;
    add(
        store,
        after(
            after(spec("j").run_at(LATER), "d1", DependOn::Success),
            "d2",
            DependOn::Finish,
        ),
    )
    .await;
    assert!(get(store, &id("j")).await.has_dependencies);
    assert!(!get(store, &id("d1")).await.has_dependencies);
    let d1 = claim_one(store, jobq::job::DEFAULT_QUEUE, WORKER, at(1)).await;
    let result = serde_json::value::RawValue::from_string(r#"{"rows":3}"#.into()).unwrap();
    let done = Transition::Succeeded { result: Some(result) };
    assert!(finish(store, &Lease::of(&d1), done, at(2)).await);

    let read = store
        .edges(&edges_of(&["j", "d1", "free", "nothing"], true, true))
        .await
        .expect("edges");
    assert_eq!(read.len(), 4, "one answer per id");
    assert_eq!(
        seen(&read[0].dependencies),
        [
            (
                "d1".into(),
                Some(JobStatus::Succeeded),
                DependOn::Success,
                EdgeState::Met
            ),
            ("d2".into(), Some(JobStatus::Pending), DependOn::Finish, EdgeState::Open),
        ]
    );
    let d1_edge = &read[0].dependencies[0];
    assert_eq!(d1_edge.result.as_ref().map(|r| r.get()), Some(r#"{"rows":3}"#));
    assert_eq!(
        (d1_edge.job_type.as_deref(), d1_edge.queue.as_deref()),
        (Some(JOB_TYPE), Some("default"))
    );
    assert!(read[0].dependents.is_empty());
    // The dependency's side lists the job that waited, after its own end.
    assert_eq!(
        seen(&read[1].dependents),
        [("j".into(), Some(JobStatus::Blocked), DependOn::Success, EdgeState::Met)]
    );
    assert!(read[1].dependencies.is_empty());
    assert!(read[2].dependencies.is_empty() && read[2].dependents.is_empty());
    assert!(read[3].dependencies.is_empty() && read[3].dependents.is_empty());
    // Without results, none is read.
    let plain = store.edges(&edges_of(&["j"], false, false)).await.expect("edges");
    assert!(plain[0].dependencies.iter().all(|e| e.result.is_none()));
    // A caller that knows the queue (a worker) reads the same.
    let hinted = ReadEdges {
        queue: Some(jobq::job::DEFAULT_QUEUE.into()),
        ..edges_of(&["j"], false, true)
    };
    let hinted = store.edges(&hinted).await.expect("edges");
    assert_eq!(seen(&hinted[0].dependencies), seen(&read[0].dependencies));

    // A dependency deleted before it ended breaks no `finish` edge, and is named with no fields.
    let delete = Delete {
        ids: vec![id("d2")],
        force: true,
    };
    store.delete(&delete).await.expect("delete");
    let read = store.edges(&edges_of(&["j"], true, false)).await.expect("edges");
    assert_eq!(
        seen(&read[0].dependencies),
        [
            (
                "d1".into(),
                Some(JobStatus::Succeeded),
                DependOn::Success,
                EdgeState::Met
            ),
            ("d2".into(), None, DependOn::Finish, EdgeState::Met),
        ]
    );
    assert_eq!(read[0].dependencies[1].job_type, None);
    assert_eq!(status(store, "j").await, JobStatus::Pending);
}

/// A job after many others (more than Redis reads in its one script) has every end read, with its
/// result.
pub(super) async fn edges_of_a_job_after_many_others_read_every_end(store: &DynStore) {
    let names: Vec<String> = (0..70).map(|n| format!("d{n:02}")).collect();
    let mut j = spec("j").run_at(LATER);
    for name in &names {
        add(store, spec(name)).await;
        j = after(j, name, DependOn::Finish);
    }
    add(store, j).await;
    let d00 = claim_one(store, jobq::job::DEFAULT_QUEUE, WORKER, at(1)).await;
    let result = serde_json::value::RawValue::from_string(r#"{"rows":3}"#.into()).unwrap();
    assert!(
        finish(
            store,
            &Lease::of(&d00),
            Transition::Succeeded { result: Some(result) },
            at(2)
        )
        .await
    );
    let read = store.edges(&edges_of(&["j"], false, true)).await.expect("edges");
    let dependencies = &read[0].dependencies;
    assert_eq!(
        dependencies.iter().map(|e| e.job_id.to_string()).collect::<Vec<_>>(),
        names
    );
    assert_eq!(
        (
            dependencies[0].status,
            dependencies[0].state,
            dependencies[0].result.as_ref().map(|r| r.get())
        ),
        (Some(JobStatus::Succeeded), EdgeState::Met, Some(r#"{"rows":3}"#))
    );
    assert!(
        dependencies[1..]
            .iter()
            .all(|e| (e.status, e.state, e.job_type.as_deref())
                == (Some(JobStatus::Pending), EdgeState::Open, Some(JOB_TYPE))),
        "{dependencies:?}"
    );
}

pub(super) async fn a_deleted_dependent_leaves_its_dependencies_edges(store: &DynStore) {
    add(store, spec("d")).await;
    add(store, after(spec("a").run_at(LATER), "d", DependOn::Success)).await;
    add(store, after(spec("b").run_at(LATER), "d", DependOn::Finish)).await;
    let delete = Delete {
        ids: vec![id("a")],
        force: false,
    };
    store.delete(&delete).await.expect("delete");
    let read = store.edges(&edges_of(&["d", "a"], true, false)).await.expect("edges");
    assert_eq!(
        seen(&read[0].dependents),
        [("b".into(), Some(JobStatus::Blocked), DependOn::Finish, EdgeState::Open)]
    );
    assert!(read[1].dependencies.is_empty(), "a deleted job has no edges left");
    // Once the dependency ended, its side still lists the job that waited, and the deleted one not.
    end(store, "d", dead(), at(1)).await;
    let read = store.edges(&edges_of(&["d"], true, false)).await.expect("edges");
    assert_eq!(
        seen(&read[0].dependents),
        [("b".into(), Some(JobStatus::Pending), DependOn::Finish, EdgeState::Met)]
    );
}

/// The jobs that wait for a dependency change while it runs (one deleted, another enqueued after it,
/// a third beside it): its end releases those that wait then, and only those. (Redis keeps the one
/// job that waits for a dependency in the dependency's own hash while it is the only one; this walks
/// it through one, two, none, one again, and two with one left.)
pub(super) async fn a_dependency_releases_whichever_jobs_wait_for_it_when_it_ends(store: &DynStore) {
    let delete = |name: &str| Delete {
        ids: vec![id(name)],
        force: false,
    };
    add(store, spec("f")).await;
    add(store, after(spec("p").run_at(LATER), "f", DependOn::Success)).await;
    add(store, after(spec("q").run_at(LATER), "f", DependOn::Success)).await;
    end(store, "f", succeeded(), at(1)).await;
    assert_eq!(
        (status(store, "p").await, status(store, "q").await),
        (JobStatus::Pending, JobStatus::Pending)
    );
    add(store, spec("d").run_at(at(1))).await;
    add(store, after(spec("a").run_at(LATER), "d", DependOn::Success)).await;
    store.delete(&delete("a")).await.expect("delete");
    add(store, after(spec("b").run_at(LATER), "d", DependOn::Success)).await;
    add(store, after(spec("c").run_at(LATER), "d", DependOn::Finish)).await;
    store.delete(&delete("b")).await.expect("delete");
    add(store, spec("e").run_at(at(2))).await;
    add(store, after(spec("x").run_at(LATER), "e", DependOn::Success)).await;
    store.delete(&delete("x")).await.expect("delete");
    add(store, after(spec("y").run_at(LATER), "e", DependOn::Success)).await;
    end(store, "d", succeeded(), at(3)).await;
    assert_eq!(status(store, "c").await, JobStatus::Pending);
    assert_eq!(status(store, "y").await, JobStatus::Blocked);
    end(store, "e", succeeded(), at(4)).await;
    assert_eq!(status(store, "y").await, JobStatus::Pending);
    let read = store.edges(&edges_of(&["d", "e"], true, false)).await.expect("edges");
    assert_eq!(
        seen(&read[0].dependents),
        [("c".into(), Some(JobStatus::Pending), DependOn::Finish, EdgeState::Met)]
    );
    assert_eq!(
        seen(&read[1].dependents),
        [("y".into(), Some(JobStatus::Pending), DependOn::Success, EdgeState::Met)]
    );
}

pub(super) async fn cleanup_keeps_a_finished_job_until_the_jobs_that_wait_for_it_have_ended(store: &DynStore) {
    add(store, spec("d1")).await;
    add(store, spec("d2")).await;
    add(store, spec("old")).await;
    let j = after(
        after(spec("j").run_at(LATER), "d1", DependOn::Success),
        "d2",
        DependOn::Finish,
    );
    add(store, j).await;
    end(store, "d1", succeeded(), at(1)).await;
    end(store, "d2", dead(), at(2)).await;
    end(store, "old", succeeded(), at(3)).await;
    // j has not run: its dependencies stay for its envelope, the job nobody waits for goes.
    assert_eq!(status(store, "j").await, JobStatus::Pending);
    assert_eq!(clean_finished(store, true).await, 1);
    assert_eq!(clean_finished(store, false).await, 1);
    for kept in ["d1", "d2"] {
        assert!(store.get(&id(kept)).await.unwrap().is_some(), "{kept} is kept");
    }
    assert!(store.get(&id("old")).await.unwrap().is_none());
    // Once it has ended, all three go.
    end(store, "j", succeeded(), LATER).await;
    assert_eq!(clean_finished(store, true).await, 3);
    assert_eq!(clean_finished(store, false).await, 3);
    assert_eq!(clean_finished(store, false).await, 0);
}

pub(super) async fn a_blocked_job_that_waits_for_nothing_alive_is_found_stranded(store: &DynStore) {
    // Waiting for a live job: not stranded.
    let blocked = make(store, spec("j"), JobStatus::Blocked, T0).await;
    add(store, spec("d")).await;
    add(store, after(spec("k").run_at(LATER), "d", DependOn::Success)).await;
    assert_eq!(
        store.stranded(10).await.expect("stranded"),
        Vec::<jobq::job::JobId>::new()
    );
    // A blocked job imported without its edges waits for nothing: a release will never come.
    let mut copy = blocked.clone();
    copy.id = id("copy");
    let import = Import {
        jobs: vec![copy],
        on_conflict: OnConflict::Skip,
        dry_run: false,
    };
    store.import(&import).await.expect("import");
    assert_eq!(status(store, "copy").await, JobStatus::Blocked);
    assert_eq!(store.stranded(10).await.expect("stranded"), [id("copy")]);
    // Ending the dependency releases its dependent: still only the copy.
    end(store, "d", succeeded(), at(1)).await;
    assert_eq!(status(store, "k").await, JobStatus::Pending);
    assert_eq!(store.stranded(10).await.expect("stranded"), [id("copy")]);
    assert!(
        store.stranded(0).await.expect("stranded").is_empty(),
        "at most the limit"
    );
}

pub(super) async fn a_replay_with_cascade_brings_back_what_the_failure_cancelled(store: &DynStore) {
    add(store, spec("b")).await;
    add(store, spec("d")).await;
    let later = |name: &str| spec(name).run_at(LATER);
    add(store, after(later("x"), "d", DependOn::Success)).await;
    add(store, after(later("y"), "x", DependOn::Success)).await;
    add(store, after(later("z"), "x", DependOn::Finish)).await;
    add(store, after(later("w"), "d", DependOn::Success)).await;
    add(
        store,
        after(after(later("v"), "b", DependOn::Success), "d", DependOn::Success),
    )
    .await;
    // An operator cancels w before d dies; b's death cancels v first.
    let cancel = jobq::store::Cancel {
        target: jobq::store::CancelTarget::Ids(vec![id("w")]),
        now: at(1),
    };
    store.cancel(&cancel).await.expect("cancel");
    end(store, "b", dead(), at(2)).await;
    end(store, "d", dead(), at(3)).await;
    for name in ["x", "y", "w", "v"] {
        assert_eq!(status(store, name).await, JobStatus::Cancelled, "{name}");
    }
    assert_eq!(status(store, "z").await, JobStatus::Pending);

    let moved = replay_with_cascade(store, "d", at(4)).await;
    assert_eq!(
        moved,
        [
            ("d".to_string(), JobStatus::Pending),
            ("x".to_string(), JobStatus::Blocked),
            ("y".to_string(), JobStatus::Blocked),
        ]
    );
    let x = get(store, &id("x")).await;
    assert_eq!((x.status, x.finished_at), (JobStatus::Blocked, None));
    assert_eq!(x.errors.len(), 1, "its history is kept");
    // The operator's cancel stands, and so does the job that another failure cancelled.
    assert_eq!(status(store, "w").await, JobStatus::Cancelled);
    assert_eq!(status(store, "v").await, JobStatus::Cancelled);
    assert_eq!(status(store, "z").await, JobStatus::Pending);
    let read = store.edges(&edges_of(&["x", "y"], false, false)).await.expect("edges");
    assert_eq!(
        seen(&read[0].dependencies),
        [("d".into(), Some(JobStatus::Pending), DependOn::Success, EdgeState::Open)]
    );
    assert_eq!(
        seen(&read[1].dependencies),
        [("x".into(), Some(JobStatus::Blocked), DependOn::Success, EdgeState::Open)]
    );
    assert!(store.stranded(10).await.expect("stranded").is_empty());
    // The edges count again: d's success releases x, and x's success y.
    end(store, "d", succeeded(), at(5)).await;
    assert_eq!(status(store, "x").await, JobStatus::Pending);
    let x = claim_one(store, jobq::job::DEFAULT_QUEUE, WORKER, LATER).await;
    let x = if x.id.as_str() == "x" {
        x
    } else {
        // z was due as well; it goes first or second by id order.
        assert!(finish(store, &Lease::of(&x), succeeded(), LATER).await);
        claim_one(store, jobq::job::DEFAULT_QUEUE, WORKER, LATER).await
    };
    assert_eq!(x.id.as_str(), "x");
    assert!(finish(store, &Lease::of(&x), succeeded(), LATER).await);
    assert_eq!(status(store, "y").await, JobStatus::Pending);
}

/// A job after each of `dependencies` by `on`, run at the first met ([`Join::Any`]).
fn after_any(name: &str, dependencies: &[&str], on: DependOn) -> JobSpec {
    dependencies
        .iter()
        .fold(spec(name).run_at(LATER).join(Join::Any), |s, d| after(s, d, on))
}

pub(super) async fn a_job_that_waits_for_any_runs_at_the_first_met_edge(store: &DynStore) {
    for (n, name) in ["m1", "m2", "m3"].iter().enumerate() {
        add(store, spec(name).run_at(at(n as i64))).await;
    }
    add(store, after_any("alert", &["m1", "m2", "m3"], DependOn::Failure)).await;
    add(
        store,
        after(spec("after-alert").run_at(LATER), "alert", DependOn::Success),
    )
    .await;
    assert_eq!(status(store, "alert").await, JobStatus::Blocked);
    end(store, "m1", succeeded(), at(10)).await;
    assert_eq!(
        status(store, "alert").await,
        JobStatus::Blocked,
        "a broken edge of three"
    );
    end(store, "m2", dead(), at(11)).await;
    // Pending while m3 has not ended; m3's end changes nothing.
    assert_eq!(status(store, "alert").await, JobStatus::Pending);
    end(store, "m3", dead(), at(12)).await;
    let alert = get(store, &id("alert")).await;
    assert_eq!(
        (alert.status, alert.attempt, alert.finished_at),
        (JobStatus::Pending, 0, None)
    );
    assert!(alert.errors.is_empty(), "{:?}", alert.errors);
    let read = ReadEdges {
        ids: vec![id("alert")],
        ..Default::default()
    };
    let edges = store.edges(&read).await.expect("edges").pop().expect("alert's edges");
    assert_eq!(
        seen(&edges.dependencies)
            .into_iter()
            .map(|(id, _, _, state)| (id, state))
            .collect::<Vec<_>>(),
        [
            ("m1".to_string(), EdgeState::Broken),
            ("m2".to_string(), EdgeState::Met),
            ("m3".to_string(), EdgeState::Met),
        ]
    );
    assert_eq!(edges.join, Join::All, "not read without the dependents");
    // A listing of both sides says how its edges combine.
    let both = store
        .edges(&edges_of(&["alert", "after-alert"], true, false))
        .await
        .expect("edges");
    assert_eq!((both[0].join, both[1].join), (Join::Any, Join::All));
    end(store, "alert", succeeded(), LATER).await;
    assert_eq!(status(store, "after-alert").await, JobStatus::Pending);
}

pub(super) async fn a_job_that_waits_for_any_is_cancelled_once_every_edge_broke(store: &DynStore) {
    add(store, spec("m1")).await;
    add(store, spec("m2").run_at(at(1))).await;
    add(store, after_any("alert", &["m1", "m2"], DependOn::Failure)).await;
    add(
        store,
        after(spec("after-alert").run_at(LATER), "alert", DependOn::Success),
    )
    .await;
    end(store, "m1", succeeded(), at(10)).await;
    assert_eq!(status(store, "alert").await, JobStatus::Blocked);
    end(store, "m2", succeeded(), at(11)).await;
    let alert = get(store, &id("alert")).await;
    assert_eq!((alert.status, alert.finished_at), (JobStatus::Cancelled, Some(at(11))));
    assert_eq!(alert.errors.len(), 1, "{:?}", alert.errors);
    assert_eq!(alert.errors[0].error, NO_DEPENDENCY_MET_ERROR);
    // Its own dependents are resolved in turn.
    let then = get(store, &id("after-alert")).await;
    assert_eq!(then.status, JobStatus::Cancelled);
    assert!(
        then.errors[0].error.contains("dependency alert ended cancelled"),
        "{:?}",
        then.errors
    );
}

pub(super) async fn a_job_that_waits_for_any_resolves_ended_dependencies_at_enqueue(store: &DynStore) {
    make(store, spec("ok"), JobStatus::Succeeded, T0).await;
    make(store, spec("bad"), JobStatus::Dead, T0).await;
    add(store, spec("live")).await;
    // One met at enqueue: pending at once, though another has not ended.
    add(store, after_any("met", &["ok", "bad", "live"], DependOn::Failure)).await;
    // Broken and open: waits for the open one.
    add(store, after_any("waits", &["ok", "live"], DependOn::Failure)).await;
    // Every edge broken at enqueue: cancelled as it is made.
    add(store, after_any("never", &["ok"], DependOn::Failure)).await;
    assert_eq!(status(store, "met").await, JobStatus::Pending);
    assert_eq!(status(store, "waits").await, JobStatus::Blocked);
    let never = get(store, &id("never")).await;
    assert_eq!((never.status, never.finished_at), (JobStatus::Cancelled, Some(T0)));
    assert_eq!(never.errors[0].error, NO_DEPENDENCY_MET_ERROR);
    // In one batch with its dependencies, as a batch's `--on-failure` job goes in.
    add_all(
        store,
        [
            spec("b1").run_at(at(1)),
            spec("b2").run_at(at(2)),
            after_any("b-alert", &["b1", "b2"], DependOn::Failure),
        ],
    )
    .await;
    assert_eq!(status(store, "b-alert").await, JobStatus::Blocked);
    end(store, "live", dead(), at(10)).await;
    assert_eq!(status(store, "waits").await, JobStatus::Pending);
    end(store, "b1", dead(), at(11)).await;
    assert_eq!(status(store, "b-alert").await, JobStatus::Pending);
}
