//! The counts `GET /api/v1/stats` and `GET /metrics` answer while many clients ask at once and jobs
//! keep arriving, on every store: requests that ask together share counts (`serve/flight.rs`), and
//! every answer must still be one counted after its request was sent — it holds every job whose
//! enqueue was answered before the request left, and no job whose enqueue had not yet been sent when
//! the answer came back.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use reqwest::StatusCode;
use serde_json::{Value, json};

use super::Api;
use crate::support::{TestStore, store_tests};

store_tests! {
    run |case, fixture| case(&fixture().await).await;
    stores {
        sqlite => support::sqlite_store,
        postgres => support::postgres_store,
        mysql => support::mysql_store,
        redis => support::redis_store,
    }
    cases {
        counts_asked_for_at_once_hold_every_job_enqueued_before_the_request,
    }
}

/// Jobs the writer enqueues, one request at a time.
const JOBS: u64 = 60;

/// Clients asking for counts meanwhile.
const READERS: usize = 12;

/// Every job of a `/api/v1/stats` answer.
fn stats_total(answer: &Value) -> u64 {
    let totals = answer["totals"]
        .as_object()
        .unwrap_or_else(|| panic!("totals in {answer}"));
    [
        "ready",
        "scheduled",
        "running",
        "waiting",
        "succeeded",
        "dead",
        "cancelled",
        "discarded",
    ]
    .iter()
    .map(|k| totals[*k].as_u64().unwrap_or_else(|| panic!("{k} in {answer}")))
    .sum()
}

/// Every job of a `/metrics` answer (its `jobq_jobs` gauge).
fn metrics_total(text: &str) -> u64 {
    text.lines()
        .filter(|l| l.starts_with("jobq_jobs{"))
        .map(|l| l.rsplit(' ').next().unwrap().parse::<u64>().unwrap())
        .sum()
}

async fn counts_asked_for_at_once_hold_every_job_enqueued_before_the_request(store: &TestStore) {
    let api = Arc::new(Api::start(store).await);
    // Enqueues answered, and enqueues sent: an answer counted after its request left holds at least
    // the first as it was then, and at most the second as it is when the answer is back.
    let answered = Arc::new(AtomicU64::new(0));
    let sent = Arc::new(AtomicU64::new(0));
    let done = Arc::new(AtomicBool::new(false));

    let writer = {
        let (api, answered, sent, done) = (api.clone(), answered.clone(), sent.clone(), done.clone());
        tokio::spawn(async move {
            for n in 0..JOBS {
                let queue = ["mail", "reports", "default"][n as usize % 3];
                sent.fetch_add(1, Ordering::SeqCst);
                let (status, answer) = api
                    .post(
                        "/api/v1/jobs",
                        json!({"jobType": "tick", "queue": queue, "payload": {"n": n}}),
                    )
                    .await;
                assert_eq!(status, StatusCode::OK, "{answer}");
                answered.fetch_add(1, Ordering::SeqCst);
            }
            done.store(true, Ordering::SeqCst);
        })
    };
    let readers: Vec<_> = (0..READERS)
        .map(|r| {
            let (api, answered, sent, done) = (api.clone(), answered.clone(), sent.clone(), done.clone());
            tokio::spawn(async move {
                let mut asked = 0;
                // Until the writer is done, and a few more once all jobs are in.
                while !done.load(Ordering::SeqCst) || asked < 3 {
                    asked += 1;
                    let at_least = answered.load(Ordering::SeqCst);
                    let (what, total) = if (r + asked) % 2 == 0 {
                        let (status, answer) = api.get("/api/v1/stats").await;
                        assert_eq!(status, StatusCode::OK, "{answer}");
                        ("/api/v1/stats", stats_total(&answer))
                    } else {
                        let (status, text) = api.text("/metrics").await;
                        assert_eq!(status, StatusCode::OK, "{text}");
                        ("/metrics", metrics_total(&text))
                    };
                    let at_most = sent.load(Ordering::SeqCst);
                    assert!(
                        at_least <= total && total <= at_most,
                        "{what} counted {total} jobs, when {at_least} were in before it was asked and \
                         {at_most} had been sent by the time it answered"
                    );
                }
                asked
            })
        })
        .collect();
    writer.await.expect("the writer");
    let mut asked = 0;
    for reader in readers {
        asked += reader.await.expect("a reader");
    }
    assert!(asked >= READERS * 3);
    // Once all is in, every answer holds every job.
    let (_, answer) = api.get("/api/v1/stats").await;
    assert_eq!(stats_total(&answer), JOBS);
}
