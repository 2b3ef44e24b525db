//! Flow control: pauses, blocks, recorded limits, and claims that respect them (cluster-wide
//! concurrency per partition, rate buckets), and the snooze that gives an attempt back.

use std::sync::Arc;

use futures_util::future::join_all;
use jobq::job::{Job, JobSpec, JobStatus};
use jobq::store::{
    Block, Claim, DynStore, FieldPath, Flow, FlowState, Lease, Limit, Pause, Rate, Rescue, Scope, Transition,
};
use jobq::time::UnixMillis;

use crate::support::jobs::*;

/// A job of `job_type` for tenant `tenant` (in its meta and its payload).
fn tenant_job(name: &str, job_type: &str, tenant: &str) -> JobSpec {
    JobSpec::new(job_type, serde_json::json!({ "account": { "id": tenant } }))
        .id(name)
        .meta("tenantId", tenant)
}

fn limit(scope: Scope, concurrency: Option<u32>, rate: Option<&str>, partition: Option<&str>) -> Limit {
    Limit {
        scope,
        global_concurrency: concurrency,
        rate: rate.map(|r| r.parse::<Rate>().expect("a valid rate")),
        partition: partition.map(|p| p.parse::<FieldPath>().expect("a valid partition")),
    }
}

/// A claim of `queues` by `worker` at `now` that respects `flow`.
fn limited(queues: &[&str], worker: &str, limit: u32, now: UnixMillis, flow: &Flow) -> Claim {
    Claim {
        flow: Arc::new(flow.clone()),
        ..claim_params(queues, worker, limit, now)
    }
}

async fn claim_with(store: &DynStore, claim: &Claim) -> Vec<Job> {
    store.claim(claim).await.expect("claim")
}

/// The flow a worker would claim with: `limits` and what the store says is paused and blocked.
async fn flow_at(store: &DynStore, limits: &[Limit], now: UnixMillis) -> Flow {
    let FlowState { pauses, blocks } = store.flow_state(now).await.expect("flow state");
    Flow {
        limits: limits.to_vec(),
        pauses,
        blocks,
    }
}

pub(super) async fn paused_queue_starts_nothing_until_resumed(store: &DynStore) {
    add_all(store, [spec("d1"), spec("m1").queue("mail")]).await;
    assert!(
        store
            .set_paused(&jobq::store::SetPaused {
                queue: "mail",
                job_type: None,
                paused: true,
                now: T0
            })
            .await
            .expect("pause")
    );
    assert!(
        !store
            .set_paused(&jobq::store::SetPaused {
                queue: "mail",
                job_type: None,
                paused: true,
                now: at(5)
            })
            .await
            .expect("pause again"),
        "pausing twice changes nothing"
    );
    let state = store.flow_state(at(10)).await.expect("flow state");
    assert_eq!(
        state.pauses,
        [Pause {
            queue: "mail".into(),
            job_type: None,
            since: T0,
        }]
    );
    let flow = flow_at(store, &[], at(10)).await;
    let got = claim_with(store, &limited(&["default", "mail"], WORKER, 10, at(10), &flow)).await;
    assert_eq!(ids(&got), ["d1"], "the paused queue's job stays pending");
    assert_eq!(get(store, &id("m1")).await.status, JobStatus::Pending);
    assert!(
        store
            .set_paused(&jobq::store::SetPaused {
                queue: "mail",
                job_type: None,
                paused: false,
                now: at(20)
            })
            .await
            .expect("resume")
    );
    assert!(
        !store
            .set_paused(&jobq::store::SetPaused {
                queue: "mail",
                job_type: None,
                paused: false,
                now: at(20)
            })
            .await
            .expect("resume again")
    );
    let flow = flow_at(store, &[], at(20)).await;
    assert!(flow.pauses.is_empty());
    let got = claim_with(store, &limited(&["default", "mail"], WORKER, 10, at(20), &flow)).await;
    assert_eq!(ids(&got), ["m1"]);
}

pub(super) async fn paused_type_holds_only_its_jobs_in_that_queue(store: &DynStore) {
    add_all(
        store,
        [
            JobSpec::new("crm.sync", serde_json::json!(1)).id("c1"),
            JobSpec::new("crm.sync", serde_json::json!(2)).id("c2").queue("other"),
            JobSpec::new("mail.send", serde_json::json!(3)).id("s1").priority(1),
        ],
    )
    .await;
    assert!(
        store
            .set_paused(&jobq::store::SetPaused {
                queue: "default",
                job_type: Some("crm.sync"),
                paused: true,
                now: T0
            })
            .await
            .expect("pause")
    );
    assert!(
        store
            .set_paused(&jobq::store::SetPaused {
                queue: "mail",
                job_type: None,
                paused: true,
                now: T0
            })
            .await
            .expect("pausing a queue with no jobs"),
        "a queue with no jobs may be paused"
    );
    let flow = flow_at(store, &[], T0).await;
    let got = claim_with(store, &limited(&["default", "other"], WORKER, 10, T0, &flow)).await;
    assert_eq!(ids(&got), ["c2", "s1"], "crm.sync waits in default only");
    assert_eq!(get(store, &id("c1")).await.status, JobStatus::Pending);
}

pub(super) async fn blocks_hold_a_type_or_one_partition_until_they_run_out(store: &DynStore) {
    add_all(
        store,
        [
            tenant_job("a1", "crm.sync", "a"),
            tenant_job("b1", "crm.sync", "b"),
            tenant_job("x1", "mail.send", "a"),
        ],
    )
    .await;
    let partitioned = [limit(Scope::Type("crm.sync".into()), None, None, Some("meta.tenantId"))];
    let a_blocked = Block {
        job_type: "crm.sync".into(),
        partition: Some("a".into()),
        until: at(1000),
    };
    store.block(&a_blocked, T0).await.expect("block");
    // An earlier block does not shorten a later one.
    store
        .block(
            &Block {
                until: at(500),
                ..a_blocked.clone()
            },
            T0,
        )
        .await
        .expect("block");
    assert_eq!(store.flow_state(at(10)).await.expect("flow state").blocks, [a_blocked]);
    let flow = flow_at(store, &partitioned, at(10)).await;
    let got = claim_with(store, &limited(&["default"], WORKER, 10, at(10), &flow)).await;
    assert_eq!(sorted(ids(&got)), ["b1", "x1"], "only tenant a of crm.sync waits");

    let whole = Block {
        job_type: "mail.send".into(),
        partition: None,
        until: at(2000),
    };
    store.block(&whole, at(20)).await.expect("block");
    add(store, tenant_job("x2", "mail.send", "c")).await;
    let flow = flow_at(store, &partitioned, at(1500)).await;
    assert_eq!(flow.blocks, [whole], "the block on tenant a ran out");
    let got = claim_with(store, &limited(&["default"], WORKER, 10, at(1500), &flow)).await;
    assert_eq!(ids(&got), ["a1"]);
    assert!(store.flow_state(at(2000)).await.expect("flow state").blocks.is_empty());
}

pub(super) async fn global_concurrency_counts_running_jobs_across_workers(store: &DynStore) {
    add_all(store, (1..=6).map(|n| spec(&format!("j{n}")))).await;
    let limits = [limit(Scope::Type(JOB_TYPE.into()), Some(2), None, None)];
    let flow = flow_at(store, &limits, T0).await;
    let first = claim_with(store, &limited(&["default"], "w1", 10, T0, &flow)).await;
    assert_eq!(ids(&first), ["j1", "j2"]);
    assert!(
        claim_with(store, &limited(&["default"], "w2", 10, T0, &flow))
            .await
            .is_empty()
    );
    // A finished job frees its slot at once; a released one too.
    assert!(
        finish(
            store,
            &Lease::of(&first[0]),
            Transition::Succeeded { result: None },
            at(1)
        )
        .await
    );
    let second = claim_with(store, &limited(&["default"], "w2", 10, at(2), &flow)).await;
    assert_eq!(ids(&second), ["j3"]);
    assert!(release(store, &Lease::of(&second[0])).await);
    let third = claim_with(store, &limited(&["default"], "w3", 10, at(3), &flow)).await;
    assert_eq!(
        ids(&third),
        ["j3"],
        "the released job comes back first, in the freed slot"
    );
    assert_eq!(third[0].attempt, 1);
    // A worker that dies holds its slots until its jobs are rescued.
    assert!(
        claim_with(store, &limited(&["default"], "w4", 10, at(4), &flow))
            .await
            .is_empty()
    );
    let rescue = Rescue {
        stale_before: at(100),
        now: at(100),
        limit: 10,
    };
    assert_eq!(store.rescue(&rescue).await.expect("rescue").len(), 2);
    let fourth = claim_with(store, &limited(&["default"], "w4", 10, at(101), &flow)).await;
    assert_eq!(fourth.len(), 2);
}

pub(super) async fn concurrency_per_partition_is_a_lane_per_key(store: &DynStore) {
    // Tenant a's backlog comes first; tenant b's job behind it still starts. Once by meta, once by
    // payload, each in a queue of its own.
    for (queue, partition) in [("q-meta", "meta.tenantId"), ("q-payload", "payload.account.id")] {
        let mut specs: Vec<JobSpec> = (1..=5)
            .map(|n| tenant_job(&format!("{queue}-a{n}"), "crm.sync", "a").queue(queue))
            .collect();
        specs.push(tenant_job(&format!("{queue}-b1"), "crm.sync", "b").queue(queue));
        specs.push(tenant_job(&format!("{queue}-b2"), "crm.sync", "b").queue(queue));
        add_all(store, specs).await;
        let limits = [limit(Scope::Type("crm.sync".into()), Some(1), None, Some(partition))];
        let flow = flow_at(store, &limits, T0).await;
        let got = claim_with(store, &limited(&[queue], "w1", 3, T0, &flow)).await;
        let names = |jobs: &[Job]| -> Vec<String> {
            ids(jobs)
                .iter()
                .map(|i| i.trim_start_matches(&format!("{queue}-")).to_string())
                .collect()
        };
        assert_eq!(names(&got), ["a1", "b1"], "one job per tenant ({partition})");
        assert!(
            claim_with(store, &limited(&[queue], "w2", 3, T0, &flow))
                .await
                .is_empty()
        );
        for job in &got {
            assert!(finish(store, &Lease::of(job), Transition::Succeeded { result: None }, at(1)).await);
        }
        let next = claim_with(store, &limited(&[queue], "w2", 3, at(2), &flow)).await;
        assert_eq!(names(&next), ["a2", "b2"]);
        for job in &next {
            assert!(finish(store, &Lease::of(job), Transition::Succeeded { result: None }, at(3)).await);
        }
    }
}

pub(super) async fn rate_bucket_allows_a_burst_then_spreads_starts(store: &DynStore) {
    add_all(store, (1..=10).map(|n| spec(&format!("j{n:02}")))).await;
    let limits = [limit(Scope::Queue("default".into()), None, Some("4/1s"), None)];
    let flow = flow_at(store, &limits, T0).await;
    assert_eq!(
        claim_with(store, &limited(&["default"], "w1", 10, T0, &flow))
            .await
            .len(),
        4
    );
    assert!(
        claim_with(store, &limited(&["default"], "w2", 10, at(200), &flow))
            .await
            .is_empty()
    );
    let later = claim_with(store, &limited(&["default"], "w2", 10, at(250), &flow)).await;
    assert_eq!(ids(&later), ["j05"], "one start per 250 ms after the burst");
    let much_later = claim_with(store, &limited(&["default"], "w1", 10, at(5000), &flow)).await;
    assert_eq!(much_later.len(), 4, "a quiet window refills the bucket, no more");
}

/// A claim the limits have room for takes its jobs in claim order and counts them against the limits
/// as a claim decided job by job would: the next claims see its slots and its starts.
pub(super) async fn claims_within_the_limits_count_against_them(store: &DynStore) {
    let mut specs: Vec<JobSpec> = (1..=12).map(|n| spec(&format!("j{n:02}"))).collect();
    specs.push(spec("urgent").priority(-5));
    add_all(store, specs).await;
    let limits = [limit(Scope::Type(JOB_TYPE.into()), Some(8), None, None)];
    let flow = flow_at(store, &limits, T0).await;
    let first = claim_with(store, &limited(&["default"], "w1", 5, T0, &flow)).await;
    assert_eq!(ids(&first), ["urgent", "j01", "j02", "j03", "j04"], "claim order");
    assert!(first.iter().all(|j| j.status == JobStatus::Running && j.attempt == 1));
    let second = claim_with(store, &limited(&["default"], "w2", 5, T0, &flow)).await;
    assert_eq!(ids(&second), ["j05", "j06", "j07"], "three of eight slots were left");
    assert!(
        claim_with(store, &limited(&["default"], "w3", 5, T0, &flow))
            .await
            .is_empty()
    );

    let rated = [limit(Scope::Queue("mail".into()), None, Some("6/1s"), None)];
    add_all(store, (1..=10).map(|n| spec(&format!("m{n:02}")).queue("mail"))).await;
    let flow = flow_at(store, &rated, T0).await;
    let first = claim_with(store, &limited(&["mail"], "w1", 4, T0, &flow)).await;
    assert_eq!(ids(&first), ["m01", "m02", "m03", "m04"]);
    let second = claim_with(store, &limited(&["mail"], "w2", 4, T0, &flow)).await;
    assert_eq!(ids(&second), ["m05", "m06"], "the first claim's starts were counted");

    // Claims at once, while the limit has room for some of them but not all.
    add_all(store, (1..=60).map(|n| spec(&format!("b{n:02}")).queue("bulk"))).await;
    let room = [limit(Scope::Queue("bulk".into()), Some(20), None, None)];
    let flow = flow_at(store, &room, T0).await;
    let first = claim_with(store, &limited(&["bulk"], "w0", 5, T0, &flow)).await;
    assert_eq!(ids(&first), ["b01", "b02", "b03", "b04", "b05"]);
    let claims: Vec<Claim> = (1..=8)
        .map(|w| limited(&["bulk"], &format!("w{w}"), 5, T0, &flow))
        .collect();
    let got: usize = join_all(claims.iter().map(|c| store.claim(c)))
        .await
        .into_iter()
        .map(|r| r.expect("claim").len())
        .sum();
    assert_eq!(got, 15, "three of eight claims fit under the limit");
    assert!(
        claim_with(store, &limited(&["bulk"], "w9", 5, T0, &flow))
            .await
            .is_empty()
    );
}

pub(super) async fn limited_jobs_are_passed_over_in_priority_order(store: &DynStore) {
    add_all(
        store,
        [
            JobSpec::new("crm.sync", serde_json::json!(1)).id("c1"),
            JobSpec::new("crm.sync", serde_json::json!(2)).id("c2"),
            JobSpec::new("mail.send", serde_json::json!(3)).id("m1").priority(5),
            JobSpec::new("mail.send", serde_json::json!(4)).id("m2").priority(6),
        ],
    )
    .await;
    let limits = [limit(Scope::Type("crm.sync".into()), Some(1), None, None)];
    let flow = flow_at(store, &limits, T0).await;
    let got = claim_with(store, &limited(&["default"], WORKER, 3, T0, &flow)).await;
    assert_eq!(ids(&got), ["c1", "m1", "m2"]);
}

pub(super) async fn concurrent_limited_claims_never_exceed_the_limit(store: &DynStore) {
    add_all(store, (1..=40).map(|n| spec(&format!("j{n:02}")))).await;
    let limits = [limit(Scope::Type(JOB_TYPE.into()), Some(3), Some("10/1s"), None)];
    let flow = flow_at(store, &limits, T0).await;
    let claims: Vec<Claim> = (0..8)
        .map(|w| limited(&["default"], &format!("w{w}"), 5, T0, &flow))
        .collect();
    let got: Vec<Vec<Job>> = join_all(claims.iter().map(|c| store.claim(c)))
        .await
        .into_iter()
        .map(|r| r.expect("claim"))
        .collect();
    assert_eq!(got.iter().map(Vec::len).sum::<usize>(), 3);
    assert_eq!(count(store, JobStatus::Running, T0).await, 3);
}

pub(super) async fn recorded_limits_read_back_as_written(store: &DynStore) {
    assert!(store.limits().await.expect("limits").is_empty());
    let limits = [
        limit(
            Scope::Type("crm.sync".into()),
            Some(5),
            Some("100/1m"),
            Some("meta.tenantId"),
        ),
        limit(Scope::Queue("mail".into()), None, Some("20/1s"), None),
    ];
    store
        .record_limits(&jobq::store::RecordLimits {
            limits: &limits,
            worker: "w1",
            now: T0,
        })
        .await
        .expect("record");
    let changed = limit(Scope::Queue("mail".into()), Some(2), None, Some("payload.account.id"));
    store
        .record_limits(&jobq::store::RecordLimits {
            limits: std::slice::from_ref(&changed),
            worker: "w2",
            now: at(10),
        })
        .await
        .expect("record");
    let recorded = store.limits().await.expect("limits");
    let got: Vec<(&Limit, &str, UnixMillis)> = recorded
        .iter()
        .map(|r| (&r.limit, r.recorded_by.as_str(), r.recorded_at))
        .collect();
    assert_eq!(got, [(&changed, "w2", at(10)), (&limits[0], "w1", T0)]);
}

pub(super) async fn snooze_gives_the_attempt_back_and_counts(store: &DynStore) {
    add(store, spec("j").max_attempts(1)).await;
    let job = claim_one(store, "default", WORKER, T0).await;
    assert_eq!(job.attempt, 1);
    assert!(
        finish(
            store,
            &Lease::of(&job),
            Transition::Snooze { run_at: at(30_000) },
            at(10)
        )
        .await
    );
    let snoozed = get(store, &id("j")).await;
    assert_eq!(
        (snoozed.status, snoozed.attempt, snoozed.snoozes, snoozed.run_at),
        (JobStatus::Pending, 0, 1, at(30_000))
    );
    assert!(snoozed.errors.is_empty() && snoozed.finished_at.is_none() && snoozed.worker_id.is_none());
    assert!(claim(store, "default", WORKER, 10, at(29_999)).await.is_empty());
    let again = claim_one(store, "default", WORKER, at(30_000)).await;
    assert_eq!((again.attempt, again.snoozes), (1, 1), "the same attempt runs again");
}
