//! jobq's one integration-test binary: conformance suite, worker end-to-end tests, CLI snapshots and
//! the generated-files check.

mod cli;
mod conformance;
mod generated;
mod mysql;
mod postgres;
mod postgres_faults;
mod redis;
mod redis_cluster;
mod support;
mod worker;
