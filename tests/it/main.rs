//! The application's integration tests, one binary: the server-store suite, each store's own
//! behaviour, worker end-to-end tests, CLI snapshots, serve and the dashboard, the bridges, the
//! deployment examples and the generated-files check. The library's store suite (the conformance
//! cases, enqueue in an application's transaction) is `crates/jobq/tests/store`.

mod autoscale;
mod bridge;
mod cli;
mod crates;
mod deploy;
mod docs;
mod doctor;
mod generated;
mod mysql;
mod postgres;
mod redis;
mod redis_cluster;
mod serve;
mod server_stores;
mod sqlite;
mod support;
mod worker;
