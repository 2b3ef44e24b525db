//! Expiry: a job not started by its expiry is never started. The claim judges it by the store's
//! clock, whatever the worker's says; the sweep (`expire`) ends such jobs `expired` and resolves the
//! jobs that wait for them as any end does.

use std::sync::Arc;

use jobq::job::{DependOn, JobStatus};
use jobq::store::{Claim, DynStore, Expire, FieldPath, Flow, FlowState, Limit, Scope};
use jobq::time::UnixMillis;

use crate::support::jobs::*;

/// A century after `T0`: an expiry no test reaches.
fn far() -> UnixMillis {
    at(100 * 365 * 24 * 3_600_000)
}

async fn expire(store: &DynStore, limit: u32) -> u64 {
    let expire = Expire {
        queues: Vec::new(),
        limit,
    };
    store.expire(&expire).await.expect("expire")
}

/// The worker's clock says `T0` (years behind the store's): by it, the job `late` has a minute left.
/// By the store's clock its expiry has long passed, so the claim leaves it, and it ends `expired`
/// with its expiry kept, whichever of the claim and the sweep ends it.
pub(super) async fn a_claim_never_starts_a_job_past_its_expiry_by_the_store_clock(store: &DynStore) {
    add_all(
        store,
        [
            spec("late").expires_at(at(60_000)),
            spec("in-time").expires_at(far()),
            spec("no-expiry"),
        ],
    )
    .await;
    assert_eq!(get(store, &id("late")).await.expires_at, Some(at(60_000)));
    let claimed = claim(store, "default", WORKER, 10, T0).await;
    assert_eq!(sorted(ids(&claimed)), ["in-time", "no-expiry"]);
    assert_eq!(
        claimed.iter().find(|j| j.id == id("in-time")).unwrap().expires_at,
        Some(far())
    );
    assert!(claim(store, "default", WORKER, 10, T0).await.is_empty());

    expire(store, 100).await;
    let late = get(store, &id("late")).await;
    assert_eq!(late.status, JobStatus::Expired);
    assert_eq!((late.attempt, late.started_at), (0, None), "it never started");
    assert!(late.finished_at.is_some_and(|f| f > at(60_000)), "{late:?}");
    assert_eq!(late.expires_at, Some(at(60_000)));
}

/// The sweep ends the jobs that have not started, pending or blocked, whose expiry has passed, a
/// bounded number a call; it leaves the others. An expired job frees its unique key, meets the
/// `finish` edges that wait for it and breaks the others.
pub(super) async fn expire_ends_unstarted_jobs_past_their_expiry_and_resolves_their_dependents(store: &DynStore) {
    // A dependency nothing runs for a century keeps `blocked-late` blocked.
    add(store, spec("never").run_at(far())).await;
    add_all(
        store,
        [
            spec("late").expires_at(at(1_000)).unique_key("k"),
            spec("blocked-late").expires_at(at(2_000)).after(id("never")),
            spec("in-time").expires_at(far()),
            spec("on-success").after(id("late")),
            spec("on-finish").after_on(id("late"), DependOn::Finish),
            spec("on-failure").after_on(id("late"), DependOn::Failure),
        ],
    )
    .await;

    assert_eq!(expire(store, 1).await, 1, "one a call at most");
    assert_eq!(expire(store, 100).await, 1);
    assert_eq!(expire(store, 100).await, 0, "nothing left to end");

    let status = |name: &'static str| async move { get(store, &id(name)).await.status };
    assert_eq!(status("late").await, JobStatus::Expired);
    assert_eq!(status("blocked-late").await, JobStatus::Expired);
    assert_eq!(status("in-time").await, JobStatus::Pending);
    assert_eq!(status("never").await, JobStatus::Pending);
    assert_eq!(status("on-finish").await, JobStatus::Pending);
    assert_eq!(status("on-success").await, JobStatus::Cancelled);
    assert_eq!(status("on-failure").await, JobStatus::Cancelled);
    assert_eq!(count(store, JobStatus::Expired, T0).await, 2);

    // Its unique key is free again.
    assert_eq!(
        enqueue(store, [spec("late-again").unique_key("k")]).await,
        [created("late-again")]
    );
}

/// A running job is never expired: it started in time. Retried, it keeps its expiry.
pub(super) async fn a_started_job_is_not_expired_and_its_retry_keeps_the_expiry(store: &DynStore) {
    // Claimed by a worker whose clock is right, the job started before its expiry…
    let expires_at = UnixMillis(UnixMillis::now().0 + 3_600_000);
    add(store, spec("job").expires_at(expires_at)).await;
    let job = claim_one(store, "default", WORKER, T0).await;
    assert_eq!(expire(store, 100).await, 0);
    assert_eq!(get(store, &id("job")).await.status, JobStatus::Running);
    // …and its retry, due after its expiry, keeps it: no claim takes the job again.
    let lease = jobq::store::Lease::of(&job);
    assert!(finish(store, &lease, retry("failed", UnixMillis(expires_at.0 + 1)), T0).await);
    assert_eq!(get(store, &id("job")).await.expires_at, Some(expires_at));
}

/// A claim under limits refuses an expired job as a plain claim does, and the job takes no slot:
/// whether the limits have room for the whole claim or each job is admitted by its partition.
pub(super) async fn a_limited_claim_never_starts_a_job_past_its_expiry(store: &DynStore) {
    let tenant = |name: &str, tenant: &str| spec(name).meta("tenantId", tenant);
    add_all(
        store,
        [
            tenant("late-1", "t1").expires_at(at(60_000)),
            tenant("in-time-1", "t0"),
            tenant("late-2", "t1").expires_at(at(60_000)),
            tenant("in-time-2", "t1").expires_at(far()),
        ],
    )
    .await;
    let roomy = [Limit {
        scope: Scope::Type(JOB_TYPE.into()),
        global_concurrency: Some(10),
        rate: None,
        partition: None,
    }];
    let claimed = limited_claim(store, &roomy, 1).await;
    assert_eq!(ids(&claimed), ["in-time-1"]);

    let per_tenant = [Limit {
        scope: Scope::Type(JOB_TYPE.into()),
        global_concurrency: Some(1),
        rate: None,
        partition: Some("meta.tenantId".parse::<FieldPath>().expect("a valid partition")),
    }];
    let claimed = limited_claim(store, &per_tenant, 10).await;
    assert_eq!(
        ids(&claimed),
        ["in-time-2"],
        "the tenant's one slot went to no expired job"
    );
    expire(store, 100).await;
    for late in ["late-1", "late-2"] {
        assert_eq!(get(store, &id(late)).await.status, JobStatus::Expired, "{late}");
    }
}

/// A claim of the default queue at `T0` that respects `limits`.
async fn limited_claim(store: &DynStore, limits: &[Limit], limit: u32) -> Vec<jobq::job::Job> {
    let FlowState { pauses, blocks } = store.flow_state(T0).await.expect("flow state");
    let claim = Claim {
        flow: Arc::new(Flow {
            limits: limits.to_vec(),
            pauses,
            blocks,
        }),
        ..claim_params(&["default"], WORKER, limit, T0)
    };
    store.claim(&claim).await.expect("claim")
}

/// A retry keeps the job's expiry, unless it brings one of its own (its type's
/// `expires_per_attempt`): then that one is the job's, and the claim and the sweep judge by it.
pub(super) async fn a_retry_keeps_the_expiry_unless_it_brings_its_own(store: &DynStore) {
    add_all(
        store,
        [
            spec("keep").expires_at(far()),
            spec("renew").expires_at(far()),
            spec("cut").expires_at(far()),
        ],
    )
    .await;
    let renewed = at(200 * 365 * 24 * 3_600_000);
    for job in claim(store, "default", WORKER, 3, T0).await {
        let expires_at = match job.id.as_str() {
            "keep" => None,
            "renew" => Some(renewed),
            // Long past by the store's clock: this attempt may never start.
            _ => Some(at(60_000)),
        };
        let outcome = jobq::store::Transition::Retry {
            error: "try again".into(),
            run_at: at(1_000),
            expires_at,
        };
        assert!(finish(store, &jobq::store::Lease::of(&job), outcome, at(10)).await);
    }
    assert_eq!(get(store, &id("keep")).await.expires_at, Some(far()));
    assert_eq!(get(store, &id("renew")).await.expires_at, Some(renewed));
    assert_eq!(get(store, &id("cut")).await.expires_at, Some(at(60_000)));

    let claimed = claim(store, "default", WORKER, 10, at(1_000)).await;
    assert_eq!(sorted(ids(&claimed)), ["keep", "renew"]);
    expire(store, 100).await;
    let cut = get(store, &id("cut")).await;
    assert_eq!((cut.status, cut.attempt), (JobStatus::Expired, 1));
}
