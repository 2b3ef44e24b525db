//! awa 0.6.9 peer benchmark (PostgreSQL): W1 (enqueue), W2 (drain), W3 (latency).
//! Command protocol: see ../common/harness.py.
//!
//! Usage: awa-bench <command> [args]
//!   reset                      drop the awa schema, run awa's migrations, start and stop one worker
//!                              (a fresh 0.6 install is promoted to the queue-storage engine by the
//!                              first worker start, `awa.storage_auto_finalize_if_fresh`, as the awa
//!                              docs describe; otherwise a prefill would land in the canonical tables)
//!   w1-single N                enqueue N jobs, one awaited `awa::insert_with` each (autocommit INSERT
//!                              through awa.insert_job_compat, the transactional-enqueue path)
//!   w1-bulk N                  enqueue N jobs with one `QueueStorage::enqueue_params_copy` call (COPY;
//!                              the bulk producer path awa's configuration guide recommends on queue storage)
//!   prefill N                  as w1-bulk (untimed set-up for W2)
//!   drain N                    start the worker, time until N handlers ran and awa's terminal counters
//!                              show N durable completions (see terminal_count)
//!   w3-worker M OUT            start the worker, print READY, write "i t_start" lines to OUT
//!   w3-produce M GAP_MS OUT    enqueue M jobs GAP_MS apart (insert_with), write "i t_enqueue" lines to OUT
//!   count                      diagnostic: awa's queue_counts (and its time) beside terminal_count
//!
//! Job payload is {"i": n} (kind "bench_job", queue "bench"); the handler does nothing with it (it
//! bumps a counter and, in W3, notes the time it started). W3 times are CLOCK_REALTIME nanoseconds
//! in both processes.
//!
//! Worker setup: 1 process (the DB shares the 2 cores), tokio multi-thread runtime (2 threads),
//! one awa `Client` on queue "bench" with the no-op throughput shape of awa's configuration guide
//! ("Queue storage tuning": size max_workers for durable completion latency, not handler CPU; its
//! no-op reference uses max_workers 1024, one claimer, claim_batch_size 512, completion batch 512,
//! 1 ms completion flush, and >= 512 workers selects 4 completion shards): max_workers 1024, other
//! QueueConfig fields and the queue-storage engine at their defaults (claimers 1, claim_batch_size
//! 512, poll_interval 200 ms, deadline 5 min). sqlx pool of 20 connections (deployment guide:
//! >= claimers + 5 plus headroom; the 4 completion flushers, claims and the producer share it).
//! AWA_BENCH_MAX_WORKERS=50 runs the library default instead (one W2 trial here: 2,122 jobs/s with
//! 50, 6,173 with 1024).
//! Wake-up: the dispatcher LISTENs on `awa:bench`; an insert commits a pg_notify that wakes it,
//! with the 200 ms poll as fallback. Durability: every enqueue and every completion is a committed
//! PostgreSQL transaction (synchronous_commit as the server has it); completions are batched by
//! awa's completion flushers (AWA_COMPLETION_* defaults: batch 512, 1 ms flush).
//! Heartbeats (30 s) and deadline rescue keep their defaults.
use std::{
    sync::{
        atomic::{AtomicUsize, Ordering},
        Arc, Mutex,
    },
    time::{Duration, Instant, SystemTime, UNIX_EPOCH},
};

use awa::{Client, InsertOpts, JobArgs, JobResult, QueueConfig, QueueStorage, QueueStorageConfig};
use serde::{Deserialize, Serialize};
use sqlx::{postgres::PgPoolOptions, PgPool};
use tokio::sync::Notify;

const PG_URL: &str = "postgres://postgres@127.0.0.1:5432/bench";
const QUEUE: &str = "bench";

#[derive(Debug, Clone, Serialize, Deserialize, JobArgs)]
#[awa(kind = "bench_job")]
struct BenchJob {
    i: u64,
}

struct State {
    target: usize,
    count: AtomicUsize,
    record: bool,
    starts: Mutex<Vec<(u64, u128)>>,
    done: Notify,
}

fn now_ns() -> u128 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_nanos()
}

fn opts() -> InsertOpts {
    InsertOpts {
        queue: QUEUE.into(),
        ..Default::default()
    }
}

fn max_workers() -> u32 {
    std::env::var("AWA_BENCH_MAX_WORKERS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1024)
}

fn write_pairs(path: &str, pairs: &[(u64, u128)]) {
    let mut s = String::new();
    for (i, t) in pairs {
        s.push_str(&format!("{i} {t}\n"));
    }
    std::fs::write(path, s).unwrap();
}

fn build_client(pool: &PgPool, state: Arc<State>) -> Client {
    Client::builder(pool.clone())
        .queue(
            QUEUE,
            QueueConfig {
                max_workers: max_workers(),
                ..Default::default()
            },
        )
        .register::<BenchJob, _, _>(move |job, _ctx| {
            let state = state.clone();
            async move {
                if state.record {
                    let t = now_ns();
                    state.starts.lock().unwrap().push((job.i, t));
                }
                let n = state.count.fetch_add(1, Ordering::SeqCst) + 1;
                if n == state.target {
                    state.done.notify_one();
                }
                Ok(JobResult::Completed)
            }
        })
        .build()
        .expect("build awa client")
}

/// Jobs of queue "bench" in a terminal state, durable in PostgreSQL. This is the terminal part of
/// awa's own `QueueStorage::queue_counts` (exact) on its counter-trusted path: pruned rollups +
/// folded live counts + pending deltas + retained compact receipt completions - tombstones. The
/// library call itself also counts available/running jobs with scans that took 0.9-6 s here (the
/// `count` command shows both), too slow to poll for the end of a drain; this takes a few ms.
async fn terminal_count(pool: &PgPool) -> i64 {
    sqlx::query_scalar(
        r#"
        SELECT (
            COALESCE((
                SELECT sum(GREATEST(COALESCE(l.pruned_completed_count, 0),
                                    COALESCE(r.pruned_completed_count, 0)))
                     + sum(COALESCE(r.pruned_failed_count, 0))
                FROM (SELECT queue, priority, pruned_completed_count
                      FROM awa.queue_lanes WHERE queue = $1) AS l
                FULL OUTER JOIN (SELECT queue, priority, pruned_completed_count, pruned_failed_count
                                 FROM awa.queue_terminal_rollups WHERE queue = $1) AS r
                USING (queue, priority)
            ), 0)
            + COALESCE((SELECT sum(live_terminal_count) FROM awa.queue_terminal_live_counts
                        WHERE queue = $1), 0)
            + COALESCE((SELECT sum(terminal_delta) FROM awa.queue_terminal_count_deltas
                        WHERE queue = $1), 0)
            + COALESCE((SELECT sum(completed_count) FROM awa.receipt_completion_batches
                        WHERE queue = $1), 0)
            - COALESCE((SELECT count(*) FROM awa.receipt_completion_tombstones
                        WHERE queue = $1), 0)
        )::bigint
        "#,
    )
    .bind(QUEUE)
    .fetch_one(pool)
    .await
    .unwrap()
}

fn print_rate(n: usize, s: f64) {
    println!("{{\"n\": {n}, \"elapsed_s\": {s}, \"jobs_per_s\": {}}}", n as f64 / s);
}

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().collect();
    let cmd = args[1].as_str();
    let rest: Vec<String> = args[2..].to_vec();

    let pool = PgPoolOptions::new()
        .max_connections(20)
        .connect(PG_URL)
        .await
        .expect("connect");

    let (target, record) = match cmd {
        "drain" => (rest[0].parse::<usize>().unwrap(), false),
        "w3-worker" => (rest[0].parse::<usize>().unwrap(), true),
        _ => (0, false),
    };
    let state = Arc::new(State {
        target,
        count: AtomicUsize::new(0),
        record,
        starts: Mutex::new(Vec::new()),
        done: Notify::new(),
    });

    match cmd {
        "reset" => {
            sqlx::query("DROP SCHEMA IF EXISTS awa CASCADE")
                .execute(&pool)
                .await
                .unwrap();
            awa::migrations::run(&pool).await.unwrap();
            // first worker start on a fresh database: installs queue storage and promotes it
            let client = build_client(&pool, state.clone());
            client.start().await.unwrap();
            client.shutdown(Duration::from_secs(5)).await;
            let st = awa::storage::status(&pool).await.unwrap();
            println!(
                "{{\"reset\": \"postgres\", \"awa_schema_version\": {}, \"storage_state\": \"{}\", \"active_engine\": \"{}\"}}",
                awa::migrations::current_version(&pool).await.unwrap(),
                st.state,
                st.active_engine
            );
        }
        "w1-single" => {
            let n: usize = rest[0].parse().unwrap();
            let t0 = Instant::now();
            for i in 0..n as u64 {
                awa::insert_with(&pool, &BenchJob { i }, opts()).await.unwrap();
            }
            print_rate(n, t0.elapsed().as_secs_f64());
        }
        "w1-bulk" | "prefill" => {
            let n: usize = rest[0].parse().unwrap();
            // same QueueStorageConfig as the worker (the builder's default)
            let store = QueueStorage::new(QueueStorageConfig::default()).unwrap();
            let t0 = Instant::now();
            let params: Vec<_> = (0..n as u64)
                .map(|i| awa::insert::params_with(&BenchJob { i }, opts()).unwrap())
                .collect();
            let k = store.enqueue_params_copy(&pool, &params).await.unwrap();
            assert_eq!(k, n);
            print_rate(n, t0.elapsed().as_secs_f64());
        }
        "w3-produce" => {
            let m: usize = rest[0].parse().unwrap();
            let gap: u64 = rest[1].parse().unwrap();
            let mut pairs = Vec::with_capacity(m);
            let start = Instant::now();
            for i in 0..m as u64 {
                let due = start + Duration::from_millis(gap * i);
                tokio::time::sleep_until(due.into()).await;
                let t = now_ns();
                awa::insert_with(&pool, &BenchJob { i }, opts()).await.unwrap();
                pairs.push((i, t));
            }
            write_pairs(&rest[2], &pairs);
            println!("{{\"produced\": {m}}}");
        }
        "drain" => {
            let n = target;
            let store = QueueStorage::new(QueueStorageConfig::default()).unwrap();
            // terminal_count() reads awa's counters; awa itself only trusts them when this is set
            assert!(store.terminal_counter_trusted(&pool).await.unwrap());
            let t0 = Instant::now();
            let t0_ns = now_ns();
            let client = build_client(&pool, state.clone());
            client.start().await.unwrap();
            // wait until the N-th handler has run, then until awa counts N terminal jobs
            state.done.notified().await;
            let t_handlers = t0.elapsed().as_secs_f64();
            loop {
                if terminal_count(&pool).await as usize >= n {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(2)).await;
            }
            let s = t0.elapsed().as_secs_f64();
            println!(
                "{{\"n\": {n}, \"elapsed_s\": {s}, \"handlers_done_s\": {t_handlers}, \"jobs_per_s\": {}, \"worker_start_ns\": {t0_ns}, \"setup\": \"1 process (tokio, 2 threads) x max_workers {}\"}}",
                n as f64 / s,
                max_workers()
            );
            std::process::exit(0);
        }
        "w3-worker" => {
            let client = build_client(&pool, state.clone());
            client.start().await.unwrap();
            // give the dispatcher time to LISTEN and reach its idle state
            tokio::time::sleep(Duration::from_millis(1000)).await;
            println!("READY");
            let wait = state.done.notified();
            tokio::select! {
                _ = wait => {}
                _ = tokio::time::sleep(Duration::from_secs(60)) => { eprintln!("timeout"); }
            }
            let pairs = state.starts.lock().unwrap().clone();
            write_pairs(&rest[1], &pairs);
            println!("{{\"received\": {}}}", pairs.len());
            std::process::exit(0);
        }
        "count" => {
            // diagnostic: awa's exact queue counts and how long the query takes
            let store = QueueStorage::new(QueueStorageConfig::default()).unwrap();
            let t0 = Instant::now();
            let c = store.queue_counts(&pool, QUEUE).await.unwrap();
            let exact_ms = t0.elapsed().as_secs_f64() * 1e3;
            let t1 = Instant::now();
            let fast = terminal_count(&pool).await;
            println!(
                "{{\"available\": {}, \"running\": {}, \"terminal\": {}, \"queue_counts_ms\": {exact_ms}, \"terminal_count\": {fast}, \"terminal_count_ms\": {}, \"counter_trusted\": {}}}",
                c.available,
                c.running,
                c.terminal,
                t1.elapsed().as_secs_f64() * 1e3,
                store.terminal_counter_trusted(&pool).await.unwrap()
            );
        }
        _ => panic!("unknown command {cmd}"),
    }
}
