//! jobq: a durable background-job queue for the shell and for Rust programs.
//!
//! Producers put jobs in with [`Client`]; workers ([`worker::Worker`]) claim them, run a handler, and
//! retry with back-off, park what keeps failing as dead letters, and let operators see, cancel, replay and
//! clean up. Four stores sit behind one [`store::Store`] trait: SQLite (the embedded default),
//! PostgreSQL, MySQL/MariaDB and Redis.
//!
//! ```no_run
//! # async fn demo() -> jobq::Result<()> {
//! use jobq::{Client, JobSpec, store::StoreUrl};
//! let client = Client::connect(&StoreUrl::parse("sqlite://jobs.db")?).await?;
//! client.enqueue(JobSpec::new("mail.send", serde_json::json!({"to": "a@example.com"}))).await?;
//! client.close().await; // the program's last call: its connections end with the server's goodbye
//! # Ok(()) }
//! ```
#![deny(missing_docs)]

pub mod autoscale;
pub mod client;
pub mod doctor;
pub mod error;
pub mod events;
pub mod handler;
mod input;
pub mod job;
pub mod memory;
pub mod retry;
pub mod schedule;
// With only some stores built, what the others share has callers in none of them: the full build
// (CI's) keeps these lints.
#[cfg_attr(
    not(all(feature = "sqlite", feature = "postgres", feature = "mysql", feature = "redis")),
    allow(dead_code, unused_imports, unused_macros)
)]
pub mod store;
pub mod time;
pub mod worker;

pub use client::Client;
pub use error::{Error, Result};
pub use handler::{Handler, Outcome};
pub use job::{IntoJobSpec, Job, JobId, JobSpec, JobStatus, JobType};
pub use time::UnixMillis;
pub use worker::Worker;
