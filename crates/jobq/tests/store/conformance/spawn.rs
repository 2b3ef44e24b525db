//! Children spawned by a handler (`Finish::spawn`) and a job that awaits them
//! (`Transition::AwaitChildren`): written with the outcome, in its transaction or script, only when
//! its lease holds; an id taken is not written again; an await blocks the job until its children
//! have ended, with its attempt given back.

use jobq::job::{DependOn, JobSpec, JobStatus, NewJob};
use jobq::store::{DynStore, EdgeState, Finish, Lease, ReadEdges, Transition};
use jobq::time::UnixMillis;

use super::dependencies::end;
use crate::support::jobs::*;

/// Children are due after every claim of the cases, so that a child is never the next ready job
/// before its parent has been claimed (they share the parent's queue).
const LATER: UnixMillis = UnixMillis(T0.0 + 10_000);

fn child(name: &str) -> NewJob {
    new_job(spec(name).run_at(LATER))
}

async fn spawn(store: &DynStore, lease: &Lease, outcome: Transition, children: Vec<NewJob>, now: UnixMillis) -> bool {
    let answers = store
        .finish(
            &[Finish {
                lease: lease.clone(),
                outcome,
                progress: None,
                spawn: children,
            }],
            now,
        )
        .await
        .expect("finish with children");
    answers[0]
}

fn succeeded() -> Transition {
    Transition::Succeeded { result: None }
}

async fn exists(store: &DynStore, name: &str) -> bool {
    store.get(&id(name)).await.expect("get").is_some()
}

pub(super) async fn children_are_written_with_the_outcome_and_only_under_its_lease(store: &DynStore) {
    add(store, spec("p")).await;
    add(store, spec("q").after_on(id("p"), DependOn::Success).run_at(LATER)).await;
    let p = claim_one(store, jobq::job::DEFAULT_QUEUE, WORKER, at(1)).await;
    let mut c2 = child("p.2");
    c2.priority = 7;
    assert!(spawn(store, &Lease::of(&p), succeeded(), vec![child("p.a"), c2], at(2)).await);
    assert_eq!(get(store, &id("p")).await.status, JobStatus::Succeeded);
    // The job that waited for the parent is released in the same write.
    assert_eq!(get(store, &id("q")).await.status, JobStatus::Pending);
    let a = get(store, &id("p.a")).await;
    assert_eq!(
        (a.status, a.queue.as_str(), a.attempt),
        (JobStatus::Pending, "default", 0)
    );
    assert_eq!(get(store, &id("p.2")).await.priority, 7);
    // The same outcome written again (its lease is gone) writes no child.
    assert!(!spawn(store, &Lease::of(&p), succeeded(), vec![child("p.b")], at(3)).await);
    assert!(!exists(store, "p.b").await);
}

pub(super) async fn a_child_whose_id_is_taken_is_not_written_again(store: &DynStore) {
    add(store, spec("p")).await;
    // What an earlier attempt spawned.
    add(
        store,
        JobSpec::new(JOB_TYPE, serde_json::json!("first"))
            .id("p.a")
            .run_at(LATER),
    )
    .await;
    let p = claim_one(store, jobq::job::DEFAULT_QUEUE, WORKER, at(1)).await;
    assert!(
        spawn(
            store,
            &Lease::of(&p),
            succeeded(),
            vec![child("p.a"), child("p.b")],
            at(2)
        )
        .await
    );
    assert_eq!(get(store, &id("p.a")).await.payload.get(), r#""first""#);
    assert!(exists(store, "p.b").await);
    assert_eq!(count(store, JobStatus::Pending, at(3)).await, 2);
}

pub(super) async fn an_await_blocks_the_job_until_its_children_have_ended(store: &DynStore) {
    add(store, spec("p")).await;
    let p = claim_one(store, jobq::job::DEFAULT_QUEUE, WORKER, at(1)).await;
    assert_eq!(p.attempt, 1);
    let children = vec![child("p.a"), child("p.b")];
    assert!(spawn(store, &Lease::of(&p), Transition::AwaitChildren, children, at(2)).await);
    let waiting = get(store, &id("p")).await;
    assert_eq!(
        (
            waiting.status,
            waiting.attempt,
            waiting.finished_at,
            waiting.worker_id.as_deref()
        ),
        (JobStatus::Blocked, 0, None, None)
    );
    assert!(waiting.has_dependencies);
    let a = claim_one(store, jobq::job::DEFAULT_QUEUE, WORKER, LATER).await;
    assert_eq!(a.id.as_str(), "p.a");
    let dead = Transition::Dead { error: "broke".into() };
    assert!(finish(store, &Lease::of(&a), dead, at(10_001)).await);
    // However a child ends, the parent waits for the others.
    assert_eq!(get(store, &id("p")).await.status, JobStatus::Blocked);
    let b = claim_one(store, jobq::job::DEFAULT_QUEUE, WORKER, at(10_002)).await;
    assert_eq!(b.id.as_str(), "p.b");
    assert!(finish(store, &Lease::of(&b), succeeded(), at(10_003)).await);
    let again = claim_one(store, jobq::job::DEFAULT_QUEUE, WORKER, at(10_004)).await;
    assert_eq!((again.id.as_str(), again.attempt), ("p", 1));
    let read = ReadEdges {
        ids: vec![id("p")],
        queue: None,
        dependents: false,
        results: true,
    };
    let edges = store.edges(&read).await.expect("edges").pop().expect("p's edges");
    let mut seen: Vec<(String, Option<JobStatus>, DependOn, EdgeState)> = edges
        .dependencies
        .iter()
        .map(|e| (e.job_id.to_string(), e.status, e.on, e.state))
        .collect();
    seen.sort_by(|x, y| x.0.cmp(&y.0));
    assert_eq!(
        seen,
        [
            (
                "p.a".to_string(),
                Some(JobStatus::Dead),
                DependOn::Finish,
                EdgeState::Met
            ),
            (
                "p.b".to_string(),
                Some(JobStatus::Succeeded),
                DependOn::Finish,
                EdgeState::Met
            ),
        ]
    );
}

pub(super) async fn an_await_of_children_that_have_ended_runs_the_job_again_at_once(store: &DynStore) {
    add(store, spec("p.a")).await;
    let a = claim_one(store, jobq::job::DEFAULT_QUEUE, WORKER, at(1)).await;
    assert!(finish(store, &Lease::of(&a), succeeded(), at(2)).await);
    add(store, spec("p")).await;
    let p = claim_one(store, jobq::job::DEFAULT_QUEUE, WORKER, at(3)).await;
    assert!(
        spawn(
            store,
            &Lease::of(&p),
            Transition::AwaitChildren,
            vec![child("p.a")],
            at(4)
        )
        .await
    );
    // Another worker takes it (the attempt given back, the same worker would hold the same lease).
    let again = claim_one(store, jobq::job::DEFAULT_QUEUE, "worker-2", at(5)).await;
    assert_eq!((again.id.as_str(), again.attempt), ("p", 1));
    assert!(again.has_dependencies);
    // An await written again under a lease that is gone changes nothing.
    assert!(
        !spawn(
            store,
            &Lease::of(&p),
            Transition::AwaitChildren,
            vec![child("p.c")],
            at(6)
        )
        .await
    );
    assert!(!exists(store, "p.c").await);
    assert_eq!(get(store, &id("p")).await.status, JobStatus::Running);
}

pub(super) async fn a_child_may_go_to_another_queue_where_the_store_allows_it(store: &DynStore) {
    add(store, spec("p")).await;
    let p = claim_one(store, jobq::job::DEFAULT_QUEUE, WORKER, at(1)).await;
    if !store.spawns_across_queues() {
        // A Redis Cluster: the worker refuses such a child before it reaches the store.
        let own = child("p.a");
        assert!(spawn(store, &Lease::of(&p), Transition::AwaitChildren, vec![own], at(2)).await);
        assert_eq!(get(store, &id("p")).await.status, JobStatus::Blocked);
        return;
    }
    let elsewhere = new_job(spec("p.a").queue("media").run_at(LATER));
    assert!(spawn(store, &Lease::of(&p), Transition::AwaitChildren, vec![elsewhere], at(2)).await);
    assert_eq!(get(store, &id("p")).await.status, JobStatus::Blocked);
    let a = claim_one(store, "media", WORKER, LATER).await;
    assert_eq!(a.id.as_str(), "p.a");
    assert!(finish(store, &Lease::of(&a), succeeded(), at(10_001)).await);
    assert_eq!(get(store, &id("p")).await.status, JobStatus::Pending);
}

pub(super) async fn a_stale_outcome_beside_the_current_one_writes_no_child(store: &DynStore) {
    add(store, spec("p")).await;
    let first = claim_one(store, jobq::job::DEFAULT_QUEUE, WORKER, at(1)).await;
    assert_eq!(rescue_stale(store, at(2), at(3), 10).await.len(), 1);
    let second = claim_one(store, jobq::job::DEFAULT_QUEUE, WORKER, at(4)).await;
    assert_eq!(second.attempt, 2);
    // The first attempt's outcome, late, in the same batch as the second's.
    let answers = store
        .finish(
            &[
                Finish {
                    lease: Lease::of(&first),
                    outcome: succeeded(),
                    progress: None,
                    spawn: vec![child("p.old")],
                },
                Finish {
                    lease: Lease::of(&second),
                    outcome: succeeded(),
                    progress: None,
                    spawn: vec![child("p.new")],
                },
            ],
            at(5),
        )
        .await
        .expect("finish");
    assert_eq!(answers, [false, true]);
    assert!(!exists(store, "p.old").await);
    assert!(exists(store, "p.new").await);
}

pub(super) async fn children_may_wait_for_their_siblings_and_the_parent_awaits_them_all(store: &DynStore) {
    add(store, spec("p")).await;
    let p = claim_one(store, jobq::job::DEFAULT_QUEUE, WORKER, at(1)).await;
    // extract ← load (success), extract ← alert (failure), as `job::children` derives them.
    let extract = new_job(spec("p.extract"));
    let load = new_job(spec("p.load").after_on(id("p.extract"), DependOn::Success));
    let alert = new_job(spec("p.alert").after_on(id("p.extract"), DependOn::Failure));
    let children = vec![load, extract, alert];
    assert!(spawn(store, &Lease::of(&p), Transition::AwaitChildren, children, at(2)).await);
    assert_eq!(get(store, &id("p.load")).await.status, JobStatus::Blocked);
    assert_eq!(get(store, &id("p.alert")).await.status, JobStatus::Blocked);
    assert_eq!(get(store, &id("p")).await.status, JobStatus::Blocked);

    end(store, "p.extract", succeeded(), at(4)).await;
    // Its end releases load and cancels alert in the same write; the parent still waits for load.
    assert_eq!(get(store, &id("p.load")).await.status, JobStatus::Pending);
    assert_eq!(get(store, &id("p.alert")).await.status, JobStatus::Cancelled);
    assert_eq!(get(store, &id("p")).await.status, JobStatus::Blocked);
    end(store, "p.load", succeeded(), at(6)).await;
    let again = claim_one(store, jobq::job::DEFAULT_QUEUE, WORKER, at(7)).await;
    assert_eq!(
        again.id.as_str(),
        "p",
        "the parent runs again once every child has ended"
    );
}
