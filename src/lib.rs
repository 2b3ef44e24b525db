//! jobq, the application: the `jobq` command line, its TOML/environment/flags configuration,
//! `jobq serve` with its dashboard, the AMQP and Kafka bridges and `publish` handlers, the reports and
//! `jobq bench`. Everything here stands on the `jobq` library, which knows nothing of it; this crate
//! is a library too only so that its tests and benches can reach the CLI's parts.

// Built without a broker's client (the `amqp`, `kafka` features, as the demo builds jobq), its URLs
// are refused when read and the code past that refusal is never reached: the full build keeps these
// lints.
#[cfg_attr(
    not(all(feature = "amqp", feature = "kafka")),
    allow(unused_imports, unused_variables, unreachable_code, dead_code)
)]
pub mod bridge;
pub mod cli;
pub mod config;
pub mod report;
#[cfg(feature = "serve")]
pub mod serve;

// The bench harness behind `jobq bench`: measured through the public API, used only by the CLI.
mod bench;
