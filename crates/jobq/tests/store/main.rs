//! The library's store suite, one binary: the conformance cases, which run every store method on
//! every store (`conformance::<store>::<case>`), and enqueue and emit inside an application's own
//! transaction on each SQL store. The application's tests (the CLI, the worker end to end, serve,
//! the bridges) are in the top-level `tests/it`.

// `store_tests!` expands every case once per store, deeper than the default limit allows.
#![recursion_limit = "256"]

mod conformance;
mod edges;
mod in_transaction;

mod support {
    pub use jobq_test_support::*;
}
