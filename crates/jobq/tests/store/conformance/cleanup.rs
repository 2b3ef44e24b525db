//! Cleanup: deletes terminal jobs that finished before a cut-off, by status and queue, in bounded
//! batches; live jobs are never deleted; a dry run only counts.

use jobq::job::{JobSpec, JobStatus};
use jobq::store::{Cleanup, DynStore, JobFilter};
use jobq::time::UnixMillis;

use crate::support::jobs::*;

async fn cleanup(store: &DynStore, cleanup: Cleanup) -> u64 {
    store.cleanup(&cleanup).await.expect("cleanup")
}

/// `base` for the jobs that finished before `cutoff` only.
fn finished_before(base: &Cleanup, cutoff: UnixMillis) -> Cleanup {
    Cleanup {
        finished_before: Some(cutoff),
        ..base.clone()
    }
}

/// `base` for the jobs in `statuses` only.
fn in_statuses(base: &Cleanup, statuses: &[JobStatus]) -> Cleanup {
    Cleanup {
        filter: JobFilter {
            statuses: statuses.to_vec(),
            ..base.filter.clone()
        },
        ..base.clone()
    }
}

async fn exists(store: &DynStore, name: &str) -> bool {
    store.get(&id(name)).await.expect("get").is_some()
}

/// One job in every status but `expired`, finished (or claimed) at `at(1_000)`, in `queue`; names
/// are the statuses. (An expired job's finish time is the store's clock, not one a test picks:
/// `expired_jobs_are_cleaned_up_by_their_status` has its own.)
async fn one_of_each(store: &DynStore, queue: &str) {
    let made = |s: &JobStatus| *s != JobStatus::Pending && *s != JobStatus::Expired;
    for status in JobStatus::ALL.into_iter().filter(made) {
        make(
            store,
            spec(&format!("{queue}-{status}")).queue(queue),
            status,
            at(1_000),
        )
        .await;
    }
    make(
        store,
        spec(&format!("{queue}-pending")).queue(queue),
        JobStatus::Pending,
        at(1_000),
    )
    .await;
}

pub(super) async fn cleanup_touches_only_terminal_jobs_older_than_cutoff(store: &DynStore) {
    one_of_each(store, "q").await;
    make(store, spec("recent").queue("r"), JobStatus::Succeeded, at(5_000)).await;
    let all = Cleanup {
        limit: 100,
        ..Default::default()
    };

    // Finished *before* the cut-off: a job that finished at the cut-off stays.
    assert_eq!(cleanup(store, finished_before(&all, at(1_000))).await, 0);
    assert_eq!(cleanup(store, finished_before(&all, at(1_001))).await, 4);
    for status in JobStatus::ALL {
        assert_eq!(
            exists(store, &format!("q-{status}")).await,
            !status.is_terminal(),
            "{status}"
        );
    }
    assert!(exists(store, "recent").await);

    // Live jobs stay even with no cut-off, and even when asked for by status.
    let live = [JobStatus::Pending, JobStatus::Running, JobStatus::Waiting];
    assert_eq!(cleanup(store, in_statuses(&all, &live)).await, 0);
    assert_eq!(cleanup(store, all.clone()).await, 1);
    assert!(!exists(store, "recent").await);
    for name in ["q-pending", "q-running", "q-waiting"] {
        assert!(exists(store, name).await, "{name}");
    }
}

pub(super) async fn cleanup_by_status_and_queue(store: &DynStore) {
    one_of_each(store, "a").await;
    one_of_each(store, "b").await;
    let all = Cleanup {
        limit: 100,
        ..Default::default()
    };

    let a_succeeded = Cleanup {
        filter: JobFilter {
            statuses: vec![JobStatus::Succeeded],
            queues: vec!["a".into()],
            ..Default::default()
        },
        ..all.clone()
    };
    assert_eq!(cleanup(store, a_succeeded).await, 1);
    assert!(!exists(store, "a-succeeded").await && exists(store, "b-succeeded").await);

    let dead_or_cancelled = Cleanup {
        filter: JobFilter {
            statuses: vec![JobStatus::Dead, JobStatus::Cancelled],
            ..Default::default()
        },
        ..all.clone()
    };
    assert_eq!(cleanup(store, dead_or_cancelled).await, 4);
    assert!(!exists(store, "a-dead").await && !exists(store, "b-cancelled").await);

    // A live status in the list is ignored, not an error.
    let mixed = Cleanup {
        filter: JobFilter {
            statuses: vec![JobStatus::Pending, JobStatus::Succeeded],
            ..Default::default()
        },
        ..all.clone()
    };
    assert_eq!(cleanup(store, mixed).await, 1);
    assert!(!exists(store, "b-succeeded").await && exists(store, "b-pending").await);

    let b = Cleanup {
        filter: JobFilter {
            queues: vec!["b".into()],
            ..Default::default()
        },
        ..all.clone()
    };
    assert_eq!(cleanup(store, b).await, 1);
    assert!(!exists(store, "b-discarded").await && exists(store, "a-discarded").await);
}

pub(super) async fn cleanup_dry_run_counts_without_deleting(store: &DynStore) {
    one_of_each(store, "q").await;
    let dry = Cleanup {
        limit: 100,
        dry_run: true,
        ..Default::default()
    };
    assert_eq!(cleanup(store, dry.clone()).await, 4);
    assert_eq!(cleanup(store, finished_before(&dry, at(1_000))).await, 0);
    assert_eq!(cleanup(store, in_statuses(&dry, &[JobStatus::Dead])).await, 1);
    assert_eq!(
        cleanup(
            store,
            Cleanup {
                limit: 3,
                ..dry.clone()
            }
        )
        .await,
        3,
        "a dry run counts up to the limit"
    );
    for status in JobStatus::ALL.into_iter().filter(|s| *s != JobStatus::Expired) {
        assert!(exists(store, &format!("q-{status}")).await, "{status}");
    }
    assert_eq!(cleanup(store, Cleanup { dry_run: false, ..dry }).await, 4);
}

pub(super) async fn cleanup_limit_bounds_one_call(store: &DynStore) {
    for n in 0..7 {
        let job = JobSpec::new("t", serde_json::json!(n)).id(format!("s{n}"));
        make(store, job, JobStatus::Succeeded, at(n)).await;
    }
    let batch = Cleanup {
        limit: 3,
        ..Default::default()
    };
    for expected in [3, 3, 1, 0] {
        assert_eq!(cleanup(store, batch.clone()).await, expected);
    }
}

pub(super) async fn a_queue_cleanup_emptied_is_found_again_after_its_next_enqueue(store: &DynStore) {
    make(store, spec("first").queue("q"), JobStatus::Succeeded, at(1_000)).await;
    let all = Cleanup {
        limit: 100,
        ..Default::default()
    };
    assert_eq!(cleanup(store, all).await, 1);
    assert!(
        stats(store, &[], at(2_000)).await.is_empty(),
        "the emptied queue is gone"
    );
    // (On Redis the queue's registration is written again: by the enqueue script on one server, and
    // on a cluster after it, because cleanup's script deleted the queue's marker.)
    add(store, spec("second").queue("q")).await;
    assert_eq!(get(store, &id("second")).await.queue, "q");
    let queues: Vec<String> = stats(store, &[], at(2_000))
        .await
        .into_iter()
        .map(|s| s.queue)
        .collect();
    assert_eq!(queues, ["q"]);
}

/// An expired job is a finished one: cleaned up by its status, with the others or alone.
pub(super) async fn expired_jobs_are_cleaned_up_by_their_status(store: &DynStore) {
    make(store, spec("late"), JobStatus::Expired, T0).await;
    make(store, spec("done"), JobStatus::Succeeded, T0).await;
    let expired = Cleanup {
        filter: JobFilter {
            statuses: vec![JobStatus::Expired],
            ..Default::default()
        },
        limit: 100,
        dry_run: true,
        ..Default::default()
    };
    assert_eq!(cleanup(store, expired.clone()).await, 1);
    let expired = Cleanup {
        dry_run: false,
        ..expired
    };
    assert_eq!(cleanup(store, expired).await, 1);
    assert!(!exists(store, "late").await && exists(store, "done").await);
}
