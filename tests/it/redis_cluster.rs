//! Redis Cluster behaviour beyond the shared contract (which `conformance::redis_cluster` and
//! `worker::redis_cluster` run on the test cluster): queues spread over the nodes, an inbox pushed to
//! by a cluster-aware `redis-cli` and listed by `jobq inbox`, wake-ups for queues whose slots are
//! on different nodes, and the outbox that carries a dependency's end to another slot.

use std::process::Command;

use jobq::job::JobStatus;
use jobq::store::{Claim, Lease, Transition};
use serde_json::{Value, json};

use crate::support::jobs::*;
use crate::support::redis::{fresh_prefix, redis_cli_at, with_prefix};
use crate::support::redis_cluster::{redis_cluster_store_in, redis_cluster_url};
use crate::support::{TestStore, subscribe, woken};

/// A migrated store on the test cluster under a fresh prefix, and that prefix.
async fn fixture() -> (TestStore, String) {
    let prefix = fresh_prefix();
    (redis_cluster_store_in(&prefix).await, prefix)
}

/// The port of each node of the test cluster.
fn node_ports() -> Vec<u16> {
    let nodes = cli(&["cluster", "nodes"]);
    nodes
        .lines()
        .filter_map(|line| line.split_whitespace().nth(1))
        .filter_map(|addr| addr.split(['@', ':']).nth(1)?.parse().ok())
        .collect()
}

/// `redis-cli -c` against the test cluster.
fn cli(args: &[&str]) -> String {
    redis_cli_at(&redis_cluster_url(), args)
}

fn slot(key: &str) -> u16 {
    cli(&["cluster", "keyslot", key]).trim().parse().unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_queues_of_one_store_spread_over_the_nodes() {
    let (store, prefix) = fixture().await;
    let queues: Vec<String> = (0..12).map(|n| format!("q{n}")).collect();
    add_all(&store, queues.iter().map(|q| spec(&format!("in-{q}")).queue(q))).await;
    let holding = node_ports()
        .into_iter()
        .filter(|port| {
            let out = Command::new("redis-cli")
                .args(["-p", &port.to_string(), "--scan", "--pattern", &format!("{prefix}{{q*")])
                .output()
                .unwrap();
            !out.stdout.is_empty()
        })
        .count();
    assert!(holding >= 2, "the keys of 12 queues sit on {holding} node(s)");
    for q in &queues {
        assert_eq!(ids(&claim(&store, q, WORKER, 5, T0).await), [format!("in-{q}")]);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_inbox_on_a_cluster_wakes_its_worker_and_is_ingested_beside_another_slot() {
    let (store, prefix) = fixture().await;
    // Two queues in different slots: one subscription reads both, one claim serves both.
    let (mail, sms) = ("mail", "sms");
    assert_ne!(slot(mail), slot(sms));
    let (_subscription, notify) = subscribe(&store, &[mail, sms]);
    woken(&notify, "connecting").await;

    add(&store, spec("m").queue(mail).priority(5)).await;
    woken(&notify, "an enqueue").await;
    cli(&[
        "LPUSH",
        &format!("{prefix}inbox:{sms}"),
        r#"{"v":1,"jobId":"s","jobType":"t","priority":1}"#,
    ]);
    cli(&["LPUSH", &format!("{prefix}inbox:{sms}"), "not a job"]);
    woken(&notify, "an inbox push").await;

    let claim = Claim {
        queues: vec![mail.into(), sms.into()],
        exclude_types: Vec::new(),
        worker: WORKER.into(),
        limit: 10,
        now: T0,
        flow: Default::default(),
    };
    // The claim takes mail's job, ingests the inbox on the way, and takes its job too.
    assert_eq!(sorted(ids(&store.claim(&claim).await.unwrap())), ["m", "s"]);

    let url = with_prefix(&redis_cluster_url(), &prefix);
    let out = Command::new(env!("CARGO_BIN_EXE_jobq"))
        .args(["--url", &url, "inbox", "-o", "json"])
        .env_remove("JOBQ_URL")
        .env_remove("JOBQ_CONFIG")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let items: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(items.len(), 1, "{items:?}");
    assert_eq!(items[0]["item"], json!("not a job"));
    assert_eq!(items[0]["queue"], json!(sms));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_end_in_another_slot_goes_through_an_outbox_and_is_applied_once() {
    let (store, prefix) = fixture().await;
    let (mail, sms) = ("mail", "sms");
    assert_ne!(slot(mail), slot(sms));
    add(&store, spec("d").queue(mail)).await;
    add(&store, spec("j").queue(sms).after(id("d"))).await;
    let d = claim_one(&store, mail, WORKER, T0).await;
    assert!(finish(&store, &Lease::of(&d), Transition::Succeeded { result: None }, at(1)).await);

    // The end waits in mail's slot until a claim of sms applies it.
    let outbox = format!("{prefix}{{{mail}}}:outbox:{sms}");
    let entry = format!("j\nd\nsucceeded\n{}", at(1).0);
    assert_eq!(cli(&["LLEN", &outbox]).trim(), "1");
    assert_eq!(cli(&["LRANGE", &outbox, "0", "-1"]).trim_end(), entry);
    assert_eq!(get(&store, &id("j")).await.status, JobStatus::Blocked);
    // Delivered twice (a reader that died before it took the entry out), and beside entries for a
    // dependent not written yet: one recent, kept for its enqueue; one past the grace, dropped.
    let recent = format!("ghost\nd\nsucceeded\n{}", at(2).0);
    for pushed in [entry.as_str(), "gone\nd\nsucceeded\n1", recent.as_str()] {
        cli(&["RPUSH", &outbox, pushed]);
    }
    assert!(claim(&store, sms, WORKER, 0, at(3)).await.is_empty());
    let j = get(&store, &id("j")).await;
    assert_eq!((j.status, j.attempt, j.errors.len()), (JobStatus::Pending, 0, 0));
    assert_eq!(cli(&["LRANGE", &outbox, "0", "-1"]).trim_end(), recent);
    assert_eq!(ids(&claim(&store, sms, WORKER, 10, at(4)).await), ["j"]);
}
