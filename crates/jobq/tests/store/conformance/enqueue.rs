//! Enqueue: one answer per job in input order, ids that exist already, large batches, and coalescing
//! on a unique key while a job holding it is live.

use std::time::Duration;

use jobq::job::{JobSpec, JobStatus};
use jobq::store::{DynStore, Enqueued, Lease, StoreKind, Transition};
use serde_json::json;

use crate::support::jobs::*;

pub(super) async fn enqueue_returns_created_in_input_order(store: &DynStore) {
    let answers = enqueue(store, [spec("c"), spec("a"), spec("b")]).await;
    assert_eq!(answers, vec![created("c"), created("a"), created("b")]);
    for name in ["a", "b", "c"] {
        assert_eq!(get(store, &id(name)).await.status, JobStatus::Pending);
    }
}

pub(super) async fn enqueue_stores_every_field(store: &DynStore) {
    let full = JobSpec::new(
        "img.resize",
        json!({"w": 100, "tags": ["a", "b"], "nested": {"x": null}}),
    )
    .id("full")
    .queue("media")
    .priority(-3)
    .max_attempts(9)
    .unique_key("img:42")
    .timeout(Duration::from_millis(1500))
    .meta("tenantId", "t1")
    .meta("traceparent", "00-abc-def-01")
    .run_at(at(60_000));
    add(store, created_at(full, at(-5_000))).await;
    add(store, spec("bare")).await;

    let job = get(store, &id("full")).await;
    assert_eq!(job.id, id("full"));
    assert_eq!(job.queue, "media");
    assert_eq!(job.job_type, "img.resize");
    assert_eq!(
        value(&job.payload),
        json!({"w": 100, "tags": ["a", "b"], "nested": {"x": null}})
    );
    assert_eq!(job.meta.get("tenantId").map(String::as_str), Some("t1"));
    assert_eq!(job.meta.get("traceparent").map(String::as_str), Some("00-abc-def-01"));
    assert_eq!(job.meta.len(), 2);
    assert_eq!(job.priority, -3);
    assert_eq!(job.status, JobStatus::Pending);
    assert_eq!(job.attempt, 0);
    assert_eq!(job.max_attempts, 9);
    assert_eq!(job.run_at, at(60_000));
    assert_eq!(job.unique_key.as_deref(), Some("img:42"));
    assert_eq!(job.timeout_ms, Some(1500));
    assert_eq!(job.created_at, at(-5_000));
    assert!(job.progress.is_none() && job.result.is_none() && job.errors.is_empty());
    assert!(job.started_at.is_none() && job.finished_at.is_none() && job.heartbeat_at.is_none());
    assert!(job.worker_id.is_none());

    // Defaults come back as defaults, absent values as absent.
    let bare = get(store, &id("bare")).await;
    assert_eq!(bare.queue, "default");
    assert_eq!(value(&bare.payload), json!({"n": "bare"}));
    assert!(bare.meta.is_empty());
    assert_eq!(bare.priority, 0);
    assert_eq!(bare.max_attempts, jobq::job::DEFAULT_MAX_ATTEMPTS);
    assert_eq!((bare.run_at, bare.created_at), (T0, T0));
    assert!(bare.unique_key.is_none() && bare.timeout_ms.is_none());
}

pub(super) async fn enqueue_duplicate_id_is_left_alone(store: &DynStore) {
    add(store, spec("a").priority(1)).await;
    let resend = JobSpec::new("other.type", json!(2)).id("a").priority(9);
    assert_eq!(enqueue(store, [resend.clone()]).await, vec![duplicate("a")]);
    // Ids are unique across queues, except on Redis, which keeps each queue in its own hash slot and
    // so checks an id within its queue only (documented with the Redis key layout).
    let elsewhere = enqueue(store, [resend.queue("elsewhere")]).await;
    if store.kind() == StoreKind::Redis {
        // A lookup by id alone finds the queue that comes first by name: "default".
        assert_eq!(elsewhere, vec![created("a")]);
    } else {
        assert_eq!(elsewhere, vec![duplicate("a")]);
    }
    let job = get(store, &id("a")).await;
    assert_eq!(
        (job.queue.as_str(), job.job_type.as_str(), job.priority),
        ("default", JOB_TYPE, 1)
    );
    assert_eq!(value(&job.payload), json!({"n": "a"}));

    // A finished job is not brought back by sending its id again.
    let running = claim_one(store, "default", WORKER, T0).await;
    assert!(
        finish(
            store,
            &Lease::of(&running),
            Transition::Succeeded { result: None },
            at(10)
        )
        .await
    );
    assert_eq!(enqueue(store, [spec("a")]).await, vec![duplicate("a")]);
    assert_eq!(get(store, &id("a")).await.status, JobStatus::Succeeded);

    // Within one batch, the first occurrence of an id wins.
    assert_eq!(
        enqueue(store, [spec("b"), spec("b").priority(5)]).await,
        vec![created("b"), duplicate("b")]
    );
    assert_eq!(get(store, &id("b")).await.priority, 0);

    // Batches of like jobs (a store may check their ids in one go): a taken id among new ones, and an
    // id twice in the batch.
    assert_eq!(
        enqueue(store, [spec("c"), spec("a"), spec("d")]).await,
        vec![created("c"), duplicate("a"), created("d")]
    );
    assert_eq!(get(store, &id("a")).await.status, JobStatus::Succeeded);
    assert_eq!(
        enqueue(store, [spec("e"), spec("f"), spec("e")]).await,
        vec![created("e"), created("f"), duplicate("e")]
    );
    for name in ["c", "d", "e", "f"] {
        assert_eq!(get(store, &id(name)).await.status, JobStatus::Pending);
    }
}

pub(super) async fn enqueue_large_batch(store: &DynStore) {
    const JOBS: usize = 5_000;
    let names: Vec<String> = (0..JOBS).map(|i| format!("bulk-{i:04}")).collect();
    // A store may send a large batch in parts; the answers stay in input order, and an id or a unique
    // key met at the start of the batch still wins over its repeat at the end.
    let specs = std::iter::once(spec("keyed-early").queue("bulk").unique_key("k"))
        .chain(names.iter().map(|n| spec(n).queue("bulk")))
        .chain([
            spec("bulk-0003").queue("bulk").priority(9),
            spec("keyed-late").queue("bulk").unique_key("k"),
        ]);
    let answers = enqueue(store, specs).await;
    let expected: Vec<_> = std::iter::once(created("keyed-early"))
        .chain(names.iter().map(|n| created(n)))
        .chain([duplicate("bulk-0003"), coalesced("keyed-early")])
        .collect();
    assert_eq!(answers, expected);
    assert_eq!(get(store, &id("bulk-0003")).await.priority, 0);
    assert!(store.get(&id("keyed-late")).await.expect("get").is_none());

    let queues = stats(store, &[], T0).await;
    assert_eq!(queues.len(), 1);
    assert_eq!(queues[0].queue, "bulk");
    assert_eq!(queues[0].ready, JOBS as u64 + 1);
    assert_eq!(queues[0].total(), JOBS as u64 + 1);
    assert_eq!(get(store, &id("bulk-4999")).await.status, JobStatus::Pending);
}

pub(super) async fn concurrent_producers_get_the_answers_of_their_own_jobs(store: &DynStore) {
    const PRODUCERS: usize = 24;
    const EACH: usize = 12;
    add(store, spec("taken")).await;
    // Each producer sends its own new jobs one at a time, an id that exists, and an id that one other
    // producer sends at the same moment; a store may write the calls of producers that wait together
    // in one commit, but every call gets the answer its jobs alone would get.
    let producers: Vec<_> = (0..PRODUCERS)
        .map(|p| {
            let store = store.clone();
            tokio::spawn(async move {
                let mut answers = Vec::new();
                for i in 0..EACH {
                    let mine = format!("p{p:02}-{i:02}");
                    answers.push((mine.clone(), enqueue(&store, [spec(&mine)]).await));
                    if i % 4 == 0 {
                        answers.push(("taken".to_string(), enqueue(&store, [spec("taken")]).await));
                        let raced = format!("race-{:02}-{i:02}", p / 2);
                        answers.push((raced.clone(), enqueue(&store, [spec(&raced)]).await));
                    }
                }
                answers
            })
        })
        .collect();
    let mut raced: std::collections::BTreeMap<String, Vec<Enqueued>> = Default::default();
    for producer in producers {
        for (name, answer) in producer.await.expect("a producer task") {
            assert_eq!(answer.len(), 1, "one answer for {name}");
            match name.as_str() {
                "taken" => assert_eq!(answer, vec![duplicate("taken")]),
                n if n.starts_with("race-") => raced.entry(name).or_default().extend(answer),
                _ => assert_eq!(answer, vec![created(&name)]),
            }
        }
    }
    for (name, answers) in raced {
        assert_eq!(
            sorted(answers.iter().map(|a| format!("{:?}", a.outcome)).collect()),
            vec!["Created".to_string(), "Duplicate".to_string()],
            "{name}, sent by two producers at once, is created once"
        );
        assert_eq!(get(store, &id(&name)).await.status, JobStatus::Pending);
    }
    let queues = stats(store, &[], T0).await;
    let races = PRODUCERS / 2 * EACH.div_ceil(4);
    assert_eq!(queues[0].ready, (PRODUCERS * EACH + races + 1) as u64);
}

pub(super) async fn unique_key_coalesces_while_live(store: &DynStore) {
    add(store, spec("u1").unique_key("k").priority(1)).await;

    // Pending: a second job with the key is not created, and changes nothing on the first.
    let second = JobSpec::new("other.type", json!("x"))
        .id("u2")
        .unique_key("k")
        .priority(7);
    assert_eq!(enqueue(store, [second]).await, vec![coalesced("u1")]);
    assert!(store.get(&id("u2")).await.expect("get").is_none());
    assert_eq!(get(store, &id("u1")).await.priority, 1);

    // Sending the holder itself again answers with the holder, whether read as coalesced or duplicate.
    let resent = enqueue(store, [spec("u1").unique_key("k")]).await;
    assert_eq!(resent[0].id, id("u1"));
    assert_ne!(resent[0].outcome, jobq::store::EnqueueOutcome::Created);

    // Running.
    let job = claim_one(store, "default", WORKER, T0).await;
    assert_eq!(job.id, id("u1"));
    assert_eq!(
        enqueue(store, [spec("u3").unique_key("k")]).await,
        vec![coalesced("u1")]
    );

    // Waiting.
    assert!(finish(store, &Lease::of(&job), Transition::Waiting, at(10)).await);
    assert_eq!(
        enqueue(store, [spec("u4").unique_key("k")]).await,
        vec![coalesced("u1")]
    );

    assert_eq!(stats(store, &[], at(10)).await[0].total(), 1);
}

pub(super) async fn unique_key_frees_once_terminal(store: &DynStore) {
    for (n, terminal) in JobStatus::TERMINAL.into_iter().enumerate() {
        let name = format!("k{n}");
        // `make` asserts that the job is created despite the key's earlier, now terminal, holders.
        let job = make(store, spec(&name).unique_key("k"), terminal, at(n as i64)).await;
        assert_eq!(job.status, terminal);
    }
    assert_eq!(
        enqueue(store, [spec("fresh").unique_key("k")]).await,
        vec![created("fresh")]
    );
    assert_eq!(
        enqueue(store, [spec("late").unique_key("k")]).await,
        vec![coalesced("fresh")]
    );
}

pub(super) async fn unique_keys_are_per_queue(store: &DynStore) {
    let answers = enqueue(
        store,
        [
            spec("a").queue("q1").unique_key("k"),
            spec("b").queue("q2").unique_key("k"),
            spec("c"),
            spec("d"),
        ],
    )
    .await;
    assert_eq!(answers, vec![created("a"), created("b"), created("c"), created("d")]);
    assert_eq!(
        enqueue(store, [spec("e").queue("q2").unique_key("k")]).await,
        vec![coalesced("b")]
    );
}

pub(super) async fn unique_key_coalesces_within_one_batch(store: &DynStore) {
    let answers = enqueue(
        store,
        [
            spec("x").unique_key("k"),
            spec("y").unique_key("k"),
            spec("z").unique_key("other"),
            spec("w"),
        ],
    )
    .await;
    assert_eq!(answers, vec![created("x"), coalesced("x"), created("z"), created("w")]);
    assert!(store.get(&id("y")).await.expect("get").is_none());
}
