//! Outcomes and the claim of their replacements in one call (`Store::finish_and_claim`): what it
//! writes is what `finish` writes, what it claims sees those outcomes, and under cluster-wide limits
//! the slots the outcomes free go to it without a limit ever being exceeded.

use std::sync::Arc;

use futures_util::future::join_all;
use jobq::job::{Job, JobSpec, JobStatus};
use jobq::store::{Claim, DynStore, FieldPath, Finish, Flow, Lease, Limit, Scope, Transition};
use jobq::time::UnixMillis;

use crate::support::jobs::*;

fn success(job: &Job) -> Finish {
    outcome(&Lease::of(job), Transition::Succeeded { result: None })
}

fn outcome(lease: &Lease, outcome: Transition) -> Finish {
    Finish {
        lease: lease.clone(),
        outcome,
        progress: None,
        spawn: Vec::new(),
    }
}

fn concurrency(scope: Scope, most: u32, partition: Option<&str>) -> Limit {
    Limit {
        scope,
        global_concurrency: Some(most),
        rate: None,
        partition: partition.map(|p| p.parse::<FieldPath>().expect("a valid partition")),
    }
}

/// A claim of the default queue by `worker` under `limits`.
fn under(limits: &[Limit], worker: &str, limit: u32, now: UnixMillis) -> Claim {
    Claim {
        flow: Arc::new(Flow {
            limits: limits.to_vec(),
            ..Flow::default()
        }),
        ..claim_params(&["default"], worker, limit, now)
    }
}

/// What applied and what was claimed.
async fn finish_and_claim(store: &DynStore, finishes: &[Finish], claim: &Claim) -> (Vec<bool>, Vec<Job>) {
    let done = store.finish_and_claim(finishes, claim).await.expect("finish and claim");
    (done.applied, done.claimed.expect("the claim"))
}

pub(super) async fn finish_and_claim_writes_the_outcomes_then_claims(store: &DynStore) {
    add_all(store, (1..=5).map(|n| spec(&format!("j{n}")))).await;
    let held = claim(store, "default", WORKER, 2, T0).await;
    assert_eq!(ids(&held), ["j1", "j2"]);
    let stale = Lease {
        attempt: 7,
        ..Lease::of(&held[1])
    };
    let finishes = [
        success(&held[0]),
        outcome(&stale, Transition::Succeeded { result: None }),
        outcome(&Lease::of(&held[1]), retry("flaky", at(60_000))),
    ];
    let (applied, got) = finish_and_claim(store, &finishes, &claim_params(&["default"], WORKER, 2, at(5))).await;
    assert_eq!(
        applied,
        [true, false, true],
        "each outcome answered as finish answers it"
    );
    assert_eq!(ids(&got), ["j3", "j4"]);
    assert!(
        got.iter()
            .all(|j| j.status == JobStatus::Running && j.started_at == Some(at(5)))
    );
    let j1 = get(store, &id("j1")).await;
    assert_eq!((j1.status, j1.finished_at), (JobStatus::Succeeded, Some(at(5))));
    let j2 = get(store, &id("j2")).await;
    assert_eq!(j2.status, JobStatus::Pending, "the retry is written");
    assert_eq!(j2.errors.len(), 1);
}

/// Under a full limit, the slots a worker's outcomes free are its claim's, and no one else's.
pub(super) async fn finish_and_claim_takes_the_slots_its_outcomes_free(store: &DynStore) {
    add_all(store, (1..=6).map(|n| spec(&format!("j{n}")))).await;
    let limits = [concurrency(Scope::Type(JOB_TYPE.into()), 2, None)];
    let held = store.claim(&under(&limits, "w1", 10, T0)).await.expect("claim");
    assert_eq!(ids(&held), ["j1", "j2"]);
    let (applied, got) = finish_and_claim(store, &[success(&held[0])], &under(&limits, "w1", 10, at(1))).await;
    assert_eq!(applied, [true]);
    assert_eq!(ids(&got), ["j3"], "one outcome, one slot, one replacement");
    assert!(
        store
            .claim(&under(&limits, "w2", 10, at(2)))
            .await
            .expect("claim")
            .is_empty(),
        "the limit is as full as before"
    );
    // An outcome that does not apply frees nothing.
    let (applied, got) = finish_and_claim(store, &[success(&held[0])], &under(&limits, "w1", 10, at(3))).await;
    assert_eq!(applied, [false]);
    assert!(got.is_empty());
    assert_eq!(count(store, JobStatus::Running, at(3)).await, 2);
    // Any outcome that leaves `running` frees its slot: a death too.
    let dead = outcome(&Lease::of(&held[1]), Transition::Dead { error: "no".into() });
    let (_, got) = finish_and_claim(store, &[dead], &under(&limits, "w1", 10, at(4))).await;
    assert_eq!(ids(&got), ["j4"]);
    assert_eq!(count(store, JobStatus::Running, at(4)).await, 2);
}

/// A limit lowered while jobs run binds the claims that follow their outcomes.
pub(super) async fn finish_and_claim_keeps_a_lowered_limit(store: &DynStore) {
    add_all(store, (1..=6).map(|n| spec(&format!("j{n}")))).await;
    let three = [concurrency(Scope::Queue("default".into()), 3, None)];
    let held = store.claim(&under(&three, "w1", 10, T0)).await.expect("claim");
    assert_eq!(held.len(), 3);
    let two = [concurrency(Scope::Queue("default".into()), 2, None)];
    let (_, got) = finish_and_claim(store, &[success(&held[0])], &under(&two, "w1", 10, at(1))).await;
    assert!(got.is_empty(), "two still run, as many as the lowered limit allows");
    let (_, got) = finish_and_claim(store, &[success(&held[1])], &under(&two, "w1", 10, at(2))).await;
    assert_eq!(ids(&got), ["j4"]);
    assert_eq!(count(store, JobStatus::Running, at(2)).await, 2);
}

/// Under a partitioned limit the replacement comes from a lane with room, as a claim takes it.
pub(super) async fn finish_and_claim_respects_partitioned_lanes(store: &DynStore) {
    let job = |name: &str, tenant: &str| {
        JobSpec::new(JOB_TYPE, serde_json::json!({ "n": name }))
            .id(name)
            .meta("tenantId", tenant)
    };
    add_all(
        store,
        [
            job("a1", "a"),
            job("a2", "a"),
            job("b1", "b"),
            job("a3", "a"),
            job("b2", "b"),
        ],
    )
    .await;
    let lanes = [concurrency(Scope::Type(JOB_TYPE.into()), 1, Some("meta.tenantId"))];
    let held = store.claim(&under(&lanes, "w1", 10, T0)).await.expect("claim");
    assert_eq!(ids(&held), ["a1", "b1"], "one per tenant");
    let (_, got) = finish_and_claim(store, &[success(&held[1])], &under(&lanes, "w1", 10, at(1))).await;
    assert_eq!(ids(&got), ["b2"], "tenant a's lane is still full");
}

/// Workers that each write outcomes and claim their replacements at once, beside a worker that only
/// claims, never run more jobs than the limit.
pub(super) async fn concurrent_finish_and_claims_never_exceed_the_limit(store: &DynStore) {
    add_all(store, (1..=60).map(|n| spec(&format!("j{n:02}")))).await;
    let limits = [concurrency(Scope::Type(JOB_TYPE.into()), 4, None)];
    let mut held: Vec<Vec<Job>> = Vec::new();
    for w in 0..4 {
        held.push(
            store
                .claim(&under(&limits, &format!("w{w}"), 1, T0))
                .await
                .expect("claim"),
        );
    }
    assert_eq!(count(store, JobStatus::Running, T0).await, 4);
    for round in 1..=5 {
        let now = at(round);
        let claims: Vec<Claim> = (0..4).map(|w| under(&limits, &format!("w{w}"), 5, now)).collect();
        let finishes: Vec<Vec<Finish>> = held.iter().map(|jobs| jobs.iter().map(success).collect()).collect();
        let outsider = under(&limits, "outsider", 5, now);
        let (answers, outsider_got) = tokio::join!(
            join_all(claims.iter().zip(&finishes).map(|(c, f)| store.finish_and_claim(f, c))),
            store.claim(&outsider),
        );
        held = answers
            .into_iter()
            .map(|a| a.expect("finish and claim").claimed.expect("the claim"))
            .collect();
        let outsider_got = outsider_got.expect("claim");
        let running = count(store, JobStatus::Running, now).await;
        assert!(running <= 4, "round {round}: {running} running under a limit of 4");
        assert_eq!(
            held.iter().map(Vec::len).sum::<usize>() + outsider_got.len(),
            running as usize
        );
        // The outsider's jobs finish at once, so that its slots go back to the workers.
        let theirs: Vec<Finish> = outsider_got.iter().map(success).collect();
        store.finish(&theirs, now).await.expect("finish");
    }
}
