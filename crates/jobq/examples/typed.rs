//! Typed jobs: a payload struct names its job type, the producer enqueues the value itself, and the
//! handler receives it decoded. Run it with `cargo run --example typed -- sqlite://typed.db`: it
//! enqueues three e-mails, drains them with a burst worker and prints what each job returned.

use jobq::store::StoreUrl;
use jobq::{Client, JobSpec, JobStatus, JobType, Outcome, Worker};
use serde::{Deserialize, Serialize};

/// The payload of a `mail.send` job, as any producer writes it: `{"to": …, "subject": …}`.
#[derive(Debug, Serialize, Deserialize)]
struct SendEmail {
    to: String,
    subject: String,
}

impl JobType for SendEmail {
    const NAME: &'static str = "mail.send";
}

#[tokio::main]
async fn main() -> jobq::Result<()> {
    let url = std::env::args().nth(1).unwrap_or_else(|| "sqlite://typed.db".into());
    let client = Client::connect(&StoreUrl::parse(&url)?).await?;

    let mut ids = Vec::new();
    for to in ["ana@example.com", "bo@example.com"] {
        let mail = SendEmail {
            to: to.into(),
            subject: "Welcome".into(),
        };
        ids.push(client.enqueue(mail).await?.id);
    }
    // With options: the spec of a typed value, then the same builder as any job.
    let reminder = SendEmail {
        to: "cy@example.com".into(),
        subject: "Your trial ends soon".into(),
    };
    ids.push(
        client
            .enqueue(JobSpec::of(&reminder)?.priority(-1).max_attempts(3))
            .await?
            .id,
    );

    let worker = Worker::builder(client.store().clone())
        .burst(true) // stop once the queue is empty
        .handle(|mail: SendEmail, _cx| async move {
            // A real handler would call the mail service here.
            Outcome::success_with(serde_json::json!(format!("sent {:?} to {}", mail.subject, mail.to)))
        })
        .build()?;
    worker.run().await?;

    for id in &ids {
        let job = client.get(id.as_str()).await?;
        let result = job.result.as_ref().map_or("-", |r| r.get());
        println!("{id} {:?} {result}", job.status);
        assert_eq!(job.status, JobStatus::Succeeded);
    }
    client.close().await;
    Ok(())
}
