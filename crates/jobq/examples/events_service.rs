//! A web application's service layer that says what happened and lets subscriptions decide what
//! follows: creating a post emits `post.created` in the post's own transaction, and the worker's
//! subscriptions fan it out into three jobs (index the post, call the webhooks, warm the cache), each
//! retried on its own. The service knows nothing of the jobs; adding a fourth is a subscription.
//!
//! Run it with `cargo run --example events_service -- blog.db`: it creates two posts, runs a worker
//! until the six jobs they caused are done, and prints each job.

use std::collections::BTreeMap;

use jobq::client::EventSpec;
use jobq::events::{Subscriber, Subscriptions};
use jobq::handler::handler_fn;
use jobq::store::{JobFilter, List, StoreUrl};
use jobq::{Client, JobStatus, Outcome, Worker};
use serde_json::json;
use sqlx::SqlitePool;

/// The service: it writes its rows and says what happened, in one transaction.
struct Posts {
    db: SqlitePool,
    jobs: Client,
}

impl Posts {
    async fn create(&self, title: &str, body: &str) -> Result<i64, Box<dyn std::error::Error>> {
        let mut tx = self.db.begin().await?;
        let id: i64 = sqlx::query_scalar("INSERT INTO posts (title, body) VALUES (?, ?) RETURNING id")
            .bind(title)
            .bind(body)
            .fetch_one(&mut *tx)
            .await?;
        let event = EventSpec {
            name: "post.created".into(),
            payload: json!({"post": id, "title": title}),
            // The post's id names the event: a retried request emits it once.
            id: Some(format!("post-{id}")),
            meta: BTreeMap::new(),
            allow_none: false,
        };
        self.jobs.emit_in(&mut tx, event).await?;
        tx.commit().await?;
        Ok(id)
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let file = std::env::args().nth(1).unwrap_or_else(|| "blog.db".into());
    let jobs = Client::connect(&StoreUrl::parse(&format!("sqlite://{file}"))?).await?;
    let db = SqlitePool::connect(&format!("sqlite://{file}")).await?;
    sqlx::query("CREATE TABLE IF NOT EXISTS posts (id INTEGER PRIMARY KEY, title TEXT NOT NULL, body TEXT NOT NULL)")
        .execute(&db)
        .await?;

    let posts = Posts { db, jobs: jobs.clone() };
    posts.create("Hello", "The first post.").await?;
    posts.create("Again", "The second post.").await?;

    // What follows a post, as a config's [events."post.created"] would say it.
    let followers = ["search.index", "webhooks.call", "cache.warm"];
    let subscriptions = Subscriptions(BTreeMap::from([(
        "post.created".to_string(),
        followers.iter().map(|t| Subscriber::new(*t)).collect(),
    )]));
    let mut worker = Worker::builder(jobs.store().clone()).events(subscriptions);
    for job_type in followers {
        worker = worker.handler(
            job_type,
            handler_fn(move |job, _cx| async move {
                println!("{job_type}: post {}", job.payload.get());
                Outcome::success()
            }),
        );
    }
    let worker = worker.build()?;
    let handle = worker.handle();
    let working = tokio::spawn(worker.run());

    // The worker expands the stored events, then runs their jobs.
    let all = List {
        filter: JobFilter::default(),
        limit: 100,
        ..List::default()
    };
    let done = loop {
        let listed = jobs.list(&all).await?;
        if listed.len() == 6 && listed.iter().all(|j| j.status == JobStatus::Succeeded) {
            break listed;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    };
    handle.shutdown();
    working.await??;
    for job in done {
        println!("{} {} {:?}", job.id, job.job_type, job.status);
    }
    jobs.close().await;
    Ok(())
}
