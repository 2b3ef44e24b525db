//! A web handler that writes the application's row and enqueues its job in one transaction: the
//! order and its confirmation e-mail exist together or not at all. The application's own sqlx pool
//! and jobq's store share one SQLite file here (PostgreSQL and MySQL work the same way, with the
//! transaction on the store's database).
//!
//! Run it with `cargo run --example axum_transactional -- shop.db`, then
//! `curl -X POST localhost:3000/orders -H 'content-type: application/json' -d '{"email":"ana@example.com","total_cents":1999}'`
//! and watch the worker in the same process send the e-mail. An order for a total of 0 is refused
//! after its row was written: the transaction rolls back, and no e-mail goes out.

use std::sync::Arc;

use axum::extract::{Json, State};
use axum::http::StatusCode;
use axum::routing::post;
use jobq::store::StoreUrl;
use jobq::{Client, JobType, Outcome, Worker};
use serde::{Deserialize, Serialize};
use sqlx::SqlitePool;

/// The job: e-mail the confirmation of an order.
#[derive(Debug, Serialize, Deserialize)]
struct ConfirmOrder {
    order_id: i64,
    email: String,
}

impl JobType for ConfirmOrder {
    const NAME: &'static str = "order.confirm";
}

#[derive(Deserialize)]
struct NewOrder {
    email: String,
    total_cents: i64,
}

struct App {
    db: SqlitePool,
    jobs: Client,
}

async fn create_order(
    State(app): State<Arc<App>>,
    Json(order): Json<NewOrder>,
) -> Result<Json<serde_json::Value>, (StatusCode, String)> {
    let failed = |e: &dyn std::fmt::Display| (StatusCode::INTERNAL_SERVER_ERROR, e.to_string());
    let mut tx = app.db.begin().await.map_err(|e| failed(&e))?;
    let order_id: i64 = sqlx::query_scalar("INSERT INTO orders (email, total_cents) VALUES (?, ?) RETURNING id")
        .bind(&order.email)
        .bind(order.total_cents)
        .fetch_one(&mut *tx)
        .await
        .map_err(|e| failed(&e))?;
    let job = ConfirmOrder {
        order_id,
        email: order.email,
    };
    let enqueued = app.jobs.enqueue_in(&mut tx, job).await.map_err(|e| failed(&e))?;
    if order.total_cents <= 0 {
        // Dropping the transaction rolls it back: neither the order nor its job remains.
        return Err((StatusCode::UNPROCESSABLE_ENTITY, "an order must cost something".into()));
    }
    tx.commit().await.map_err(|e| failed(&e))?;
    Ok(Json(serde_json::json!({"order": order_id, "job": enqueued.id})))
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let file = std::env::args().nth(1).unwrap_or_else(|| "shop.db".into());
    let jobs = Client::connect(&StoreUrl::parse(&format!("sqlite://{file}"))?).await?;
    let db = SqlitePool::connect(&format!("sqlite://{file}")).await?;
    sqlx::query(
        "CREATE TABLE IF NOT EXISTS orders (id INTEGER PRIMARY KEY, email TEXT NOT NULL, total_cents INTEGER NOT NULL)",
    )
    .execute(&db)
    .await?;

    let worker = Worker::builder(jobs.store().clone())
        .handle(|job: ConfirmOrder, _cx| async move {
            println!("confirming order {} to {}", job.order_id, job.email);
            Outcome::success()
        })
        .build()?;
    let working = tokio::spawn(worker.run_until(async {
        let _ = tokio::signal::ctrl_c().await;
    }));

    let app = axum::Router::new()
        .route("/orders", post(create_order))
        .with_state(Arc::new(App { db, jobs: jobs.clone() }));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:3000").await?;
    println!("listening on http://127.0.0.1:3000 (Ctrl-C stops the server and the worker)");
    axum::serve(listener, app)
        .with_graceful_shutdown(async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await?;
    working.await??;
    jobs.close().await;
    Ok(())
}
