//! What the store benches share: the run count, medians, and the tests' own stores (each run in a
//! corner of its own), with a check that a server is there before measuring it. A bench that uses
//! this declares `mod support;` (the tests' support module) beside `mod common;`.

use std::future::Future;
use std::pin::Pin;

use crate::support::{self, TestStore};

/// Runs per measurement: `JOBQ_BENCH_RUNS`, 3 unless set.
pub fn runs() -> usize {
    env_number("JOBQ_BENCH_RUNS").unwrap_or(3)
}

/// A whole number from the environment.
pub fn env_number(name: &str) -> Option<usize> {
    std::env::var(name).ok().and_then(|v| v.parse().ok())
}

/// The median (the upper one of an even count).
pub fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

/// Whether something listens at the host and port of a server's `url`.
pub fn reachable(url: &str) -> bool {
    let Ok(parsed) = url::Url::parse(url) else {
        return false;
    };
    let port = parsed.port().unwrap_or(match parsed.scheme() {
        "mysql" => 3306,
        "redis" => 6379,
        _ => 5432,
    });
    std::net::TcpStream::connect((parsed.host_str().unwrap_or("127.0.0.1"), port)).is_ok()
}

/// Opens a fresh store of one kind.
pub type Open = fn() -> Pin<Box<dyn Future<Output = TestStore>>>;

/// Whether `name` is among the comma-separated names of the environment variable `var` (everything
/// is, when it is unset): `JOBQ_BENCH_STORES=sqlite,redis` measures those stores only.
pub fn chosen(var: &str, name: &str) -> bool {
    std::env::var(var).map_or(true, |list| list.split(',').any(|n| n.trim() == name))
}

/// Every store chosen by `JOBQ_BENCH_STORES` (all unless set): its name, its server's URL (none for
/// SQLite) and how to open a fresh one.
pub fn stores() -> Vec<(&'static str, Option<String>, Open)> {
    let all: Vec<(&'static str, Option<String>, Open)> = vec![
        ("sqlite", None, || Box::pin(support::sqlite_store())),
        ("postgres", Some(support::postgres::postgres_url()), || {
            Box::pin(support::postgres_store())
        }),
        ("mysql", Some(support::mysql::mysql_url()), || {
            Box::pin(support::mysql_store())
        }),
        ("redis", Some(support::redis::redis_url()), || {
            Box::pin(support::redis_store())
        }),
    ];
    all.into_iter()
        .filter(|(name, _, _)| chosen("JOBQ_BENCH_STORES", name))
        .collect()
}
