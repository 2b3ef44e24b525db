//! The application's test fixtures: the store fixtures both crates' tests share
//! (`crates/test-support`), and what only the application's tests drive: the brokers of the bridges
//! (RabbitMQ, Kafka) and the `jobq` process.

pub use jobq_test_support::*;

pub mod kafka;
pub mod process;
pub mod rabbitmq;
