//! jobq's one integration-test binary: the conformance suite, the server-store suite, each store's own
//! behaviour, worker end-to-end tests, CLI snapshots, the deployment examples and the generated-files
//! check.

mod autoscale;
mod bridge;
mod cli;
mod conformance;
mod crates;
mod deploy;
mod docs;
mod doctor;
mod generated;
mod in_transaction;
mod mysql;
mod postgres;
mod redis;
mod redis_cluster;
mod serve;
mod server_stores;
mod sqlite;
mod support;
mod worker;
