use std::collections::HashMap;
use std::sync::Arc;

use serde_json::value::RawValue;

use super::*;
use crate::job::{JobId, JobStatus};

fn job(id: &str, job_type: &str, queue: &str, tenant: &str) -> Job {
    Job {
        id: JobId::from_stored(id.into()),
        queue: queue.into(),
        job_type: job_type.into(),
        payload: RawValue::from_string(format!(r#"{{"account":{{"id":{tenant}}}}}"#)).unwrap(),
        meta: [("tenantId".to_string(), tenant.to_string())].into(),
        priority: 0,
        status: JobStatus::Pending,
        attempt: 0,
        max_attempts: 5,
        run_at: UnixMillis(0),
        unique_key: None,
        unique_mode: crate::job::UniqueMode::Coalesce,
        timeout_ms: None,
        expires_at: None,
        progress: None,
        result: None,
        errors: Vec::new(),
        created_at: UnixMillis(0),
        started_at: None,
        finished_at: None,
        heartbeat_at: None,
        worker_id: None,
        snoozes: 0,
        has_dependencies: false,
        join: crate::job::Join::All,
        deps: Vec::new(),
    }
}

fn claim(flow: Flow, limit: u32) -> Claim {
    Claim {
        queues: vec!["default".into(), "mail".into()],
        exclude_types: Vec::new(),
        worker: "w".into(),
        limit,
        now: UnixMillis(1_000_000),
        flow: Arc::new(flow),
    }
}

fn limit(scope: Scope, concurrency: Option<u32>, rate: Option<&str>, partition: Option<&str>) -> Limit {
    Limit {
        scope,
        global_concurrency: concurrency,
        rate: rate.map(|r| r.parse().unwrap()),
        partition: partition.map(|p| p.parse().unwrap()),
    }
}

#[test]
fn rates_read_count_and_window() {
    assert_eq!(
        "100/1m".parse::<Rate>(),
        Ok(Rate {
            count: 100,
            per_ms: 60_000
        })
    );
    assert_eq!(
        "20/s".parse::<Rate>(),
        Ok(Rate {
            count: 20,
            per_ms: 1000
        })
    );
    assert_eq!("5 / 250ms".parse::<Rate>(), Ok(Rate { count: 5, per_ms: 250 }));
    for bad in ["ten per minute", "10", "0/1s", "10/0s", "-1/1s", "10/fortnight"] {
        assert!(bad.parse::<Rate>().is_err(), "{bad} should be refused");
    }
    assert_eq!("100/1m".parse::<Rate>().unwrap().to_string(), "100/1m");
}

#[test]
fn a_bucket_lets_count_start_at_once_then_one_per_interval() {
    let rate: Rate = "4/1s".parse().unwrap();
    let now = 10_000_000;
    let mut tat = 0;
    for _ in 0..4 {
        tat = rate.admit(tat, now).expect("within the burst");
    }
    assert_eq!(rate.admit(tat, now), None);
    assert_eq!(rate.admit(tat, now + 249_999), None);
    assert!(rate.admit(tat, now + 250_000).is_some());
}

#[test]
fn partitions_read_meta_and_payload_fields() {
    let j = job("a", "t", "default", "7");
    assert_eq!("meta.tenantId".parse::<FieldPath>().unwrap().value_of(&j), "7");
    assert_eq!("payload.account.id".parse::<FieldPath>().unwrap().value_of(&j), "7");
    assert_eq!("payload.nothing".parse::<FieldPath>().unwrap().value_of(&j), "");
    for bad in [
        "tenantId",
        "meta.",
        "meta.a.b",
        "body.x",
        "payload.a..b",
        "payload.a\"b",
    ] {
        assert!(bad.parse::<FieldPath>().is_err(), "{bad} should be refused");
    }
}

#[test]
fn a_claim_without_flow_is_plain() {
    let c = claim(Flow::default(), 5);
    assert!(matches!(c.plan(), ClaimPlan::Plain(p) if p.queues == c.queues));
}

#[test]
fn paused_queues_and_blocked_types_make_a_plain_claim_narrower() {
    let flow = Flow {
        pauses: vec![Pause {
            queue: "mail".into(),
            job_type: None,
            since: UnixMillis(0),
        }],
        blocks: vec![
            Block {
                job_type: "crm.sync".into(),
                partition: None,
                until: UnixMillis(2_000_000),
            },
            Block {
                job_type: "old".into(),
                partition: None,
                until: UnixMillis(10),
            },
        ],
        limits: Vec::new(),
    };
    let ClaimPlan::Plain(plain) = claim(flow, 5).plan() else {
        panic!("expected a plain claim")
    };
    assert_eq!(plain.queues, ["default"]);
    assert_eq!(plain.exclude_types, ["crm.sync"]);
}

#[test]
fn every_queue_paused_claims_nothing_and_limits_make_a_limited_claim() {
    let pause = |q: &str| Pause {
        queue: q.into(),
        job_type: None,
        since: UnixMillis(0),
    };
    let flow = Flow {
        pauses: vec![pause("default"), pause("mail")],
        ..Flow::default()
    };
    assert!(matches!(claim(flow, 5).plan(), ClaimPlan::Nothing));
    let flow = Flow {
        limits: vec![limit(Scope::Type("t".into()), Some(1), None, None)],
        ..Flow::default()
    };
    assert!(matches!(claim(flow, 5).plan(), ClaimPlan::Limited));
}

#[test]
fn admission_keeps_concurrency_per_partition_and_lets_others_through() {
    let flow = Flow {
        limits: vec![limit(Scope::Type("t".into()), Some(1), None, Some("meta.tenantId"))],
        ..Flow::default()
    };
    let c = claim(flow, 10);
    let running = HashMap::from([(("type:t".to_string(), "1".to_string()), 1)]);
    let mut a = Admission::new(&c, running, HashMap::new());
    assert!(!a.admit(&job("a", "t", "default", "1")), "tenant 1 is full");
    assert!(a.admit(&job("b", "t", "default", "2")));
    assert!(!a.admit(&job("c", "t", "default", "2")), "tenant 2 took its one slot");
    assert!(
        a.admit(&job("d", "other", "default", "2")),
        "another type is not limited"
    );
    assert_eq!(
        a.taken_slots(),
        [("type:t".to_string(), "2".to_string(), "b".to_string(), 1)]
    );
    assert_eq!(a.closed_keys().len(), 2);
}

#[test]
fn admission_takes_the_smallest_of_a_queue_and_a_type_limit() {
    let flow = Flow {
        limits: vec![
            limit(Scope::Type("t".into()), Some(5), None, None),
            limit(Scope::Queue("default".into()), None, Some("2/1m"), None),
        ],
        ..Flow::default()
    };
    let c = claim(flow, 10);
    let mut a = Admission::new(&c, HashMap::new(), HashMap::new());
    let taken = (0..5)
        .filter(|i| a.admit(&job(&format!("j{i}"), "t", "default", "1")))
        .count();
    assert_eq!(taken, 2, "the queue's rate allows two");
    assert!(a.admit(&job("m", "t", "mail", "1")), "the other queue has no rate");
    assert_eq!(a.rate_updates().len(), 1);
}

#[test]
fn admission_respects_type_pauses_and_partition_blocks() {
    let flow = Flow {
        pauses: vec![Pause {
            queue: "mail".into(),
            job_type: Some("t".into()),
            since: UnixMillis(0),
        }],
        blocks: vec![Block {
            job_type: "t".into(),
            partition: Some("1".into()),
            until: UnixMillis(2_000_000),
        }],
        limits: vec![limit(Scope::Type("t".into()), None, None, Some("meta.tenantId"))],
    };
    let c = claim(flow, 10);
    assert!(matches!(c.plan(), ClaimPlan::Limited));
    let mut a = Admission::new(&c, HashMap::new(), HashMap::new());
    assert!(!a.admit(&job("a", "t", "mail", "2")), "paused in mail");
    assert!(!a.admit(&job("b", "t", "default", "1")), "tenant 1 is blocked");
    assert!(a.admit(&job("c", "t", "default", "2")));
}

#[test]
fn a_bucket_counts_the_starts_it_has_left() {
    let rate: Rate = "4/1s".parse().unwrap();
    let now = 10_000_000;
    let mut tat = 0;
    for used in 0..=4 {
        assert_eq!(rate.starts_left(tat, now), 4 - used);
        if let Some(next) = rate.admit(tat, now) {
            tat = next;
        }
    }
    assert_eq!(rate.starts_left(tat, now + 250_000), 1, "one start refilled");
}

#[test]
fn headroom_is_what_the_limits_are_sure_to_admit() {
    let no_limits = claim(Flow::default(), 10);
    assert_eq!(
        Admission::new(&no_limits, HashMap::new(), HashMap::new())
            .headroom()
            .jobs,
        u32::MAX
    );

    let flow = Flow {
        limits: vec![limit(Scope::Type("t".into()), Some(50), Some("20/1s"), None)],
        ..Flow::default()
    };
    let c = claim(flow, 100);
    let running = HashMap::from([(("type:t".to_string(), String::new()), 45)]);
    let a = Admission::new(&c, running, HashMap::new());
    assert_eq!(
        a.headroom(),
        Headroom {
            jobs: 5,
            bounded_by_partition: false
        },
        "five slots left, twenty starts"
    );

    // A full limit without partitions is left out by the selection (its type excluded): it bounds
    // nothing, so the next page reads as many as the claim wants.
    let running = HashMap::from([(("type:t".to_string(), String::new()), 50)]);
    let a = Admission::new(&c, running, HashMap::new());
    assert_eq!(a.headroom().jobs, 20, "the rate's twenty starts remain");
    let spent = HashMap::from([(("type:t".to_string(), String::new()), 1_000_000_000 + 1_000_000)]);
    let a = Admission::new(&c, HashMap::new(), spent);
    assert_eq!(a.headroom().jobs, 50, "an empty bucket is left out too");

    // A full partition is left out by the selection; the fullest of the others bounds it.
    let flow = Flow {
        limits: vec![limit(Scope::Type("t".into()), Some(3), None, Some("meta.tenantId"))],
        ..Flow::default()
    };
    let c = claim(flow, 100);
    let running = HashMap::from([
        (("type:t".to_string(), "1".to_string()), 3),
        (("type:t".to_string(), "2".to_string()), 1),
    ]);
    let mut a = Admission::new(&c, running, HashMap::new());
    assert_eq!(
        a.headroom(),
        Headroom {
            jobs: 2,
            bounded_by_partition: true
        }
    );
    assert!(a.admit(&job("a", "t", "default", "2")));
    assert_eq!(a.headroom().jobs, 1, "tenant 2 now holds two");
}
