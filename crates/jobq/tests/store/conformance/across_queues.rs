//! Dependencies between queues: on one server or a SQL store a dependent is resolved in the write that
//! ends its dependency; on a Redis Cluster, where each queue is a hash slot of its own, through an
//! outbox in the dependency's slot that the next claim of the dependent's queue applies. Each case
//! claims none (`deliver`) of the dependent's queue before it looks, so it holds on every store.

use jobq::job::{DependOn, JobSpec, JobStatus};
use jobq::store::{DynStore, EdgeState, Lease, ReadEdges, Transition};
use jobq::time::UnixMillis;

use crate::support::jobs::*;

const ELSEWHERE: &str = "elsewhere";

fn after(spec: JobSpec, dependency: &str, on: DependOn) -> JobSpec {
    spec.after_on(id(dependency), on)
}

/// A claim of none from `queue`: on a cluster it applies what other slots hold for it.
async fn deliver(store: &DynStore, queue: &str, now: UnixMillis) {
    assert!(claim(store, queue, WORKER, 0, now).await.is_empty());
}

/// Claims the named job, the next ready one of `queue`, and applies `outcome` at `now`.
async fn end(store: &DynStore, queue: &str, name: &str, outcome: Transition, now: UnixMillis) {
    let job = claim_one(store, queue, WORKER, now).await;
    assert_eq!(job.id.as_str(), name, "the next ready job of {queue}");
    assert!(finish(store, &Lease::of(&job), outcome, now).await);
}

async fn status(store: &DynStore, name: &str) -> JobStatus {
    get(store, &id(name)).await.status
}

fn succeeded() -> Transition {
    Transition::Succeeded { result: None }
}

pub(super) async fn a_dependency_in_another_queue_releases_its_dependent(store: &DynStore) {
    add(store, spec("d")).await;
    add(store, after(spec("j").queue(ELSEWHERE), "d", DependOn::Success)).await;
    assert_eq!(status(store, "j").await, JobStatus::Blocked);
    deliver(store, ELSEWHERE, at(1)).await;
    assert_eq!(status(store, "j").await, JobStatus::Blocked, "nothing to deliver yet");
    // Each side names the other, in its queue.
    let read = ReadEdges {
        ids: vec![id("j"), id("d")],
        dependents: true,
        results: true,
        queue: None,
    };
    let edges = store.edges(&read).await.expect("edges");
    let to_d = &edges[0].dependencies[0];
    assert_eq!(
        (to_d.job_id.as_str(), to_d.queue.as_deref(), to_d.status, to_d.state),
        (
            "d",
            Some(jobq::job::DEFAULT_QUEUE),
            Some(JobStatus::Pending),
            EdgeState::Open
        )
    );
    let to_j = &edges[1].dependents[0];
    assert_eq!(
        (to_j.job_id.as_str(), to_j.queue.as_deref(), to_j.status, to_j.state),
        ("j", Some(ELSEWHERE), Some(JobStatus::Blocked), EdgeState::Open)
    );

    let result = serde_json::value::RawValue::from_string("{\"rows\":3}".into()).unwrap();
    end(
        store,
        jobq::job::DEFAULT_QUEUE,
        "d",
        Transition::Succeeded { result: Some(result) },
        at(2),
    )
    .await;
    deliver(store, ELSEWHERE, at(3)).await;
    assert_eq!(status(store, "j").await, JobStatus::Pending);
    // Delivered once: a second claim changes nothing, and the job runs once.
    deliver(store, ELSEWHERE, at(4)).await;
    assert_eq!(ids(&claim(store, ELSEWHERE, WORKER, 10, at(5)).await), ["j"]);
    let edges = store.edges(&read).await.expect("edges");
    let to_d = &edges[0].dependencies[0];
    assert_eq!((to_d.status, to_d.state), (Some(JobStatus::Succeeded), EdgeState::Met));
    assert_eq!(to_d.result.as_ref().map(|r| r.get()), Some("{\"rows\":3}"));
}

/// A chain d ← j ← k that crosses to another queue and back, d dead at 1: its end delivered to j's
/// queue at 2.
async fn a_chain_across_queues_whose_head_dies(store: &DynStore) {
    add(store, spec("d")).await;
    add(store, after(spec("j").queue(ELSEWHERE), "d", DependOn::Success)).await;
    add(store, after(spec("k"), "j", DependOn::Success)).await;
    let dead = Transition::Dead {
        error: "failed for good".into(),
    };
    end(store, jobq::job::DEFAULT_QUEUE, "d", dead, at(1)).await;
    deliver(store, ELSEWHERE, at(2)).await;
}

pub(super) async fn a_dependency_in_another_queue_that_fails_cancels_down_the_chain(store: &DynStore) {
    // Back to the first queue: the cancel of j crosses again.
    a_chain_across_queues_whose_head_dies(store).await;
    let j = get(store, &id("j")).await;
    assert_eq!(j.status, JobStatus::Cancelled);
    assert!(
        j.errors
            .last()
            .is_some_and(|e| e.error.contains("dependency d ended dead")),
        "{:?}",
        j.errors
    );
    deliver(store, jobq::job::DEFAULT_QUEUE, at(3)).await;
    assert_eq!(status(store, "k").await, JobStatus::Cancelled);
}

pub(super) async fn a_dependency_in_another_queue_that_has_ended_is_resolved_at_once(store: &DynStore) {
    add(store, spec("d")).await;
    end(store, jobq::job::DEFAULT_QUEUE, "d", succeeded(), at(1)).await;
    add(
        store,
        after(spec("on-success").queue(ELSEWHERE), "d", DependOn::Success),
    )
    .await;
    add(
        store,
        after(spec("on-failure").queue(ELSEWHERE), "d", DependOn::Failure),
    )
    .await;
    assert_eq!(status(store, "on-success").await, JobStatus::Pending);
    assert_eq!(status(store, "on-failure").await, JobStatus::Cancelled);
}

pub(super) async fn a_batch_may_wait_back_and_forth_between_queues(store: &DynStore) {
    add_all(
        store,
        [
            spec("a"),
            after(spec("b").queue(ELSEWHERE), "a", DependOn::Success),
            after(spec("c"), "b", DependOn::Success),
        ],
    )
    .await;
    assert_eq!(status(store, "b").await, JobStatus::Blocked);
    assert_eq!(status(store, "c").await, JobStatus::Blocked);
    end(store, jobq::job::DEFAULT_QUEUE, "a", succeeded(), at(1)).await;
    deliver(store, ELSEWHERE, at(2)).await;
    end(store, ELSEWHERE, "b", succeeded(), at(3)).await;
    deliver(store, jobq::job::DEFAULT_QUEUE, at(4)).await;
    assert_eq!(status(store, "c").await, JobStatus::Pending);
}

pub(super) async fn cleanup_keeps_a_dependency_until_its_dependent_in_another_queue_has_ended(store: &DynStore) {
    add(store, spec("d")).await;
    add(store, after(spec("j").queue(ELSEWHERE), "d", DependOn::Finish)).await;
    end(store, jobq::job::DEFAULT_QUEUE, "d", succeeded(), at(1)).await;
    assert_eq!(clean_finished(store, true).await, 0);
    assert_eq!(clean_finished(store, false).await, 0);
    deliver(store, ELSEWHERE, at(2)).await;
    assert_eq!(
        clean_finished(store, false).await,
        0,
        "j has not run: d stays for its envelope"
    );
    end(store, ELSEWHERE, "j", succeeded(), at(3)).await;
    assert_eq!(clean_finished(store, true).await, 2);
    assert_eq!(clean_finished(store, false).await, 2);
    assert!(store.get(&id("d")).await.unwrap().is_none());
}

pub(super) async fn jobs_written_again_under_the_same_ids_do_not_take_their_former_selves_ends(store: &DynStore) {
    add(store, spec("d")).await;
    add(store, after(spec("j").queue(ELSEWHERE), "d", DependOn::Success)).await;
    // The dependent goes, then its dependency: on a cluster the dependency's end (as cancelled)
    // waits in the outbox for a dependent that is not there.
    for name in ["j", "d"] {
        let delete = jobq::store::Delete {
            ids: vec![id(name)],
            force: true,
        };
        store.delete(&delete).await.expect("delete");
    }
    // Both again, under the same ids (an import back, or a producer's own ids).
    add(store, spec("d")).await;
    add(store, after(spec("j").queue(ELSEWHERE), "d", DependOn::Success)).await;
    deliver(store, ELSEWHERE, at(1)).await;
    assert_eq!(
        status(store, "j").await,
        JobStatus::Blocked,
        "the former d's end left j alone"
    );
    end(store, jobq::job::DEFAULT_QUEUE, "d", succeeded(), at(2)).await;
    deliver(store, ELSEWHERE, at(3)).await;
    assert_eq!(status(store, "j").await, JobStatus::Pending);
}

pub(super) async fn a_replay_with_cascade_brings_back_what_the_failure_cancelled_in_other_queues(store: &DynStore) {
    // The cancel, and the replay's cascade, cross twice.
    a_chain_across_queues_whose_head_dies(store).await;
    deliver(store, jobq::job::DEFAULT_QUEUE, at(3)).await;
    assert_eq!(status(store, "k").await, JobStatus::Cancelled);

    let moved = super::dependencies::replay_with_cascade(store, "d", at(4)).await;
    assert_eq!(
        moved,
        [
            ("d".to_string(), JobStatus::Pending),
            ("j".to_string(), JobStatus::Blocked),
            ("k".to_string(), JobStatus::Blocked)
        ]
    );
    // They wait for d again, each edge once, and run in turn.
    end(store, jobq::job::DEFAULT_QUEUE, "d", succeeded(), at(5)).await;
    deliver(store, ELSEWHERE, at(6)).await;
    assert_eq!(status(store, "k").await, JobStatus::Blocked);
    end(store, ELSEWHERE, "j", succeeded(), at(7)).await;
    deliver(store, jobq::job::DEFAULT_QUEUE, at(8)).await;
    end(store, jobq::job::DEFAULT_QUEUE, "k", succeeded(), at(9)).await;
    assert!(store.stranded(10).await.expect("stranded").is_empty());
}
