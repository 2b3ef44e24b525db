//! A Rust program running jobq's worker in-process with its own handler: the library counterpart of
//! `jobq worker`. Run it with `cargo run --example embedded -- sqlite://jobs.db`, enqueue with
//! `jobq --url sqlite://jobs.db enqueue mail.send '{"to":"ana@example.com"}'`, stop it with Ctrl-C.

use jobq::store::StoreUrl;
use jobq::{Client, Outcome, Worker, handler::handler_fn};

#[tokio::main]
async fn main() -> jobq::Result<()> {
    let url = std::env::args().nth(1).unwrap_or_else(|| "sqlite://jobs.db".into());
    let client = Client::connect(&StoreUrl::parse(&url)?).await?;
    let worker = Worker::builder(client.store().clone())
        .queues(["default"])
        .concurrency(8)
        .handler(
            "mail.send",
            handler_fn(|job, _ctx| async move {
                match job.payload_as::<serde_json::Value>() {
                    Ok(payload) => {
                        println!("sending to {}", payload["to"]);
                        Outcome::success()
                    }
                    Err(e) => Outcome::fail(format!("bad payload: {e}")),
                }
            }),
        )
        .build()?;
    let report = worker.run().await?; // until SIGTERM or SIGINT
    println!("{report:?}");
    // The last call: the database server sees the connections end with a goodbye.
    client.close().await;
    Ok(())
}
