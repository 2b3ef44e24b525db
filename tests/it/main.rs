//! jobq's one integration-test binary: conformance suite, worker end-to-end tests, CLI snapshots and
//! the generated-files check.

mod support;
mod conformance;
mod generated;
mod cli;
mod worker;
mod postgres;
