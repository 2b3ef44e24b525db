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

/// A cleanup of some types deletes only theirs; one that excludes types leaves theirs.
pub(super) async fn cleanup_by_type_and_excluding_types(store: &DynStore) {
    for (name, job_type) in [("r1", "report"), ("r2", "report"), ("m1", "mail"), ("a1", "audit")] {
        let job = JobSpec::new(job_type, serde_json::json!({})).id(name);
        make(store, job, JobStatus::Succeeded, at(1_000)).await;
    }
    let all = Cleanup {
        limit: 100,
        ..Default::default()
    };
    let reports = Cleanup {
        filter: JobFilter {
            job_types: vec!["report".into()],
            ..Default::default()
        },
        ..all.clone()
    };
    assert_eq!(
        cleanup(
            store,
            Cleanup {
                dry_run: true,
                ..reports.clone()
            }
        )
        .await,
        2
    );
    assert_eq!(cleanup(store, reports).await, 2);
    assert!(!exists(store, "r1").await && !exists(store, "r2").await && exists(store, "m1").await);
    let but_audit = Cleanup {
        exclude_types: vec!["audit".into()],
        ..all
    };
    assert_eq!(cleanup(store, but_audit).await, 1);
    assert!(!exists(store, "m1").await && exists(store, "a1").await);
}

/// Keep last: of each queue and status, the newest jobs (by finish time, then id) stay, counted
/// among the jobs the other conditions select; a dry run counts what would go.
pub(super) async fn cleanup_keeps_the_newest_of_each_queue_and_status(store: &DynStore) {
    // Queue a: five succeeded (s0 oldest) and two dead; queue b: two succeeded. Two of queue a's
    // succeeded jobs finished at the same time: the id decides.
    let finished = [0, 1, 2, 2, 4];
    for (n, t) in finished.iter().enumerate() {
        make(
            store,
            spec(&format!("a-s{n}")).queue("a"),
            JobStatus::Succeeded,
            at(1_000 + t),
        )
        .await;
    }
    for n in 0..2 {
        make(
            store,
            spec(&format!("a-d{n}")).queue("a"),
            JobStatus::Dead,
            at(1_000 + n),
        )
        .await;
        make(
            store,
            spec(&format!("b-s{n}")).queue("b"),
            JobStatus::Succeeded,
            at(1_000 + n),
        )
        .await;
    }
    let keep = |n: u32| Cleanup {
        keep_last: Some(n),
        limit: 100,
        ..Default::default()
    };
    assert_eq!(
        cleanup(
            store,
            Cleanup {
                dry_run: true,
                ..keep(2)
            }
        )
        .await,
        3
    );
    assert_eq!(cleanup(store, keep(2)).await, 3);
    for (name, kept) in [
        ("a-s0", false),
        ("a-s1", false),
        ("a-s2", false),
        ("a-s3", true),
        ("a-s4", true),
        ("a-d0", true),
        ("a-d1", true),
        ("b-s0", true),
        ("b-s1", true),
    ] {
        assert_eq!(exists(store, name).await, kept, "{name}");
    }
    // With a cut-off too, both must hold; with a limit, a call deletes no more.
    let dead = Cleanup {
        filter: JobFilter {
            statuses: vec![JobStatus::Dead],
            ..Default::default()
        },
        finished_before: Some(at(1_000)),
        ..keep(1)
    };
    assert_eq!(
        cleanup(store, dead).await,
        0,
        "the older dead job finished at the cut-off"
    );
    assert_eq!(cleanup(store, Cleanup { limit: 1, ..keep(1) }).await, 1);
    assert_eq!(cleanup(store, keep(1)).await, 2);
    assert!(exists(store, "a-s4").await && exists(store, "a-d1").await && exists(store, "b-s1").await);
}
