//! The fixtures both crates' tests share (the library's store suite in `crates/jobq/tests/store`,
//! the application's in `tests/it`): a private, freshly migrated store for each test, the one way
//! tests wait ([`eventually`]), and the one macro that expands a list of cases once per store
//! ([`store_tests!`]). Each test crate reaches them as its module `support` (`pub use
//! jobq_test_support::*;`), which the macro's expansion names; the application's adds the brokers
//! and the `jobq` process its tests drive.
//!
//! Tests run in parallel inside one process, so every test gets its own corner of its backend and
//! nothing is shared between tests, not even within one run. A fixture is an `async fn() ->
//! TestStore`: it opens the store through [`jobq::store::connect`] (the same path the binary takes),
//! runs `migrate()`, and hands back the store together with a [`Sandbox`] that owns the corner and
//! removes it when the `TestStore` drops. Isolation per backend, each in its own module:
//!
//! - SQLite ([`sqlite_store`], `sqlite.rs`): a database file in a fresh temporary directory.
//! - PostgreSQL ([`postgres_store`], `postgres.rs`): a schema per test on the database of
//!   `JOBQ_TEST_POSTGRES_URL`.
//! - MySQL ([`mysql_store`], `mysql.rs`): a database per test on the server of `JOBQ_TEST_MYSQL_URL`.
//! - Redis ([`redis_store`], `redis.rs`): a key prefix per test on `JOBQ_TEST_REDIS_URL`;
//!   [`redis_cluster_store`] (`redis_cluster.rs`) on a cluster the test process starts for itself.
//!
//! `Drop` cannot be async: a server-backed sandbox does its clean-up on a short-lived thread with its
//! own current-thread runtime ([`ServerSandbox`]), because the test's runtime may already be shutting
//! down. A server that cannot be reached fails the test with the command that starts it; a test never
//! skips silently. `JOBQ_TEST_KEEP=1` keeps every sandbox and prints where it is, for a post-mortem (the
//! test harness shows the line for failing tests, and for all with `--nocapture`).
//!
//! Nothing here sleeps for a fixed time: a test that needs something to happen first waits for it with
//! [`eventually`], which fails with what it waited for and what it saw instead.

// The fixtures' traits are called by this workspace's tests only, whose futures need no `Send` bound.
#![allow(async_fn_in_trait)]

pub mod counting;
pub mod jobs;
pub mod mysql;
pub mod postgres;
pub mod private;
pub mod proxy;
pub mod redis;
pub mod redis_cluster;
pub mod server;
pub mod sqlite;

pub use mysql::{mysql_store, mysql_store_in};
pub use postgres::{postgres_store, postgres_store_in};
pub use redis::{redis_store, redis_store_in};
pub use redis_cluster::redis_cluster_store;
pub use sqlite::{sqlite_one_shot_store, sqlite_store};

use std::fmt::{self, Display};
use std::future::Future;
use std::ops::Deref;
use std::pin::Pin;
use std::sync::Arc;
use std::time::{Duration, Instant};

use jobq::store::{self, DynStore, StoreError, StoreKind, StoreUrl, Subscription, WakeOn};
use jobq::worker::{RunReport, WorkerHandle};
use tokio::sync::Notify;
use tokio::task::JoinHandle;

/// A store that belongs to one test, with the sandbox that isolates it.
pub struct TestStore {
    store: DynStore,
    /// The URL that opens this store (password included: pass it to `jobq`, never print it).
    url: String,
    sandbox: Option<Box<dyn Sandbox>>,
}

/// One test's private corner of a backend (a temp file, a schema, a database, a key prefix). Dropping it
/// removes the corner and everything in it.
pub trait Sandbox: Send + Sync {
    /// Where the data lives, for the `JOBQ_TEST_KEEP` message. Never includes a password.
    fn location(&self) -> String;

    /// Leaves the data in place instead of removing it.
    fn keep(self: Box<Self>);
}

impl TestStore {
    /// Pairs a migrated store, and the URL that opened it, with the sandbox it lives in.
    pub fn new(store: DynStore, url: impl Into<String>, sandbox: impl Sandbox + 'static) -> TestStore {
        TestStore {
            store,
            url: url.into(),
            sandbox: Some(Box::new(sandbox)),
        }
    }

    /// The store, as the rest of jobq sees it.
    pub fn store(&self) -> &DynStore {
        &self.store
    }

    /// The URL that opens this store, for `jobq --url` and config files.
    pub fn url(&self) -> &str {
        &self.url
    }
}

impl Deref for TestStore {
    type Target = DynStore;

    fn deref(&self) -> &DynStore {
        &self.store
    }
}

impl Drop for TestStore {
    fn drop(&mut self) {
        let Some(sandbox) = self.sandbox.take() else {
            return;
        };
        if keep_requested() {
            eprintln!("JOBQ_TEST_KEEP=1: kept {}", sandbox.location());
            sandbox.keep();
        }
        // Otherwise the sandbox drops here and takes its data with it.
    }
}

fn keep_requested() -> bool {
    std::env::var_os("JOBQ_TEST_KEEP").is_some_and(|v| v == "1")
}

/// What a server-backed sandbox's clean-up returns.
pub type CleanupResult = Result<(), Box<dyn std::error::Error + Send + Sync>>;

/// The clean-up of a server-backed sandbox: an async removal, run once on drop.
type Removal = Box<dyn FnOnce() -> Pin<Box<dyn Future<Output = CleanupResult> + Send>> + Send + Sync>;

/// A corner of a server (a schema, a database, a key prefix), removed by an async clean-up when the
/// sandbox drops, unless kept.
pub struct ServerSandbox {
    location: String,
    removal: Option<Removal>,
}

impl ServerSandbox {
    /// A sandbox at `location` (shown by `JOBQ_TEST_KEEP`, so never with a password) that `remove`
    /// clears away.
    pub fn new<F, Fut>(location: String, remove: F) -> ServerSandbox
    where
        F: FnOnce() -> Fut + Send + Sync + 'static,
        Fut: Future<Output = CleanupResult> + Send + 'static,
    {
        ServerSandbox {
            location,
            removal: Some(Box::new(move || Box::pin(remove()))),
        }
    }

    /// A sandbox whose data goes away by itself (with the server that holds it).
    pub fn left_to_the_server(location: String) -> ServerSandbox {
        ServerSandbox {
            location,
            removal: None,
        }
    }
}

impl Sandbox for ServerSandbox {
    fn location(&self) -> String {
        self.location.clone()
    }

    fn keep(self: Box<Self>) {
        let mut this = self;
        this.removal = None;
    }
}

impl Drop for ServerSandbox {
    fn drop(&mut self) {
        let Some(remove) = self.removal.take() else {
            return;
        };
        // The test's runtime may be shutting down: clean up from a thread with a runtime of its own, and
        // wait for it so the next test starts on a clean server.
        let removed = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
            runtime.block_on(remove())
        })
        .join();
        if let Ok(Err(e)) = removed {
            eprintln!("could not remove the {}: {e}", self.location);
        }
    }
}

/// A fresh name for one test's corner of a server: `jobq_test_` and 16 random hex digits.
pub fn fresh_name() -> String {
    format!("jobq_test_{:016x}", rand::random::<u64>())
}

/// `base` with the jobq URL option `key=value` added (`value` percent-encoded).
pub fn with_option(base: &str, key: &str, value: &str) -> String {
    let sep = if base.contains('?') { '&' } else { '?' };
    let encoded: String = url::form_urlencoded::byte_serialize(value.as_bytes()).collect();
    format!("{base}{sep}{key}={encoded}")
}

/// `url` as it may be shown: without its password.
pub fn shown(url: &str) -> String {
    StoreUrl::parse(url).map(|u| u.to_string()).unwrap_or_default()
}

/// A server store's test server: the store's name, the variable that points at another server, the
/// local server's URL, and how to start the local one.
fn test_server(kind: StoreKind) -> (&'static str, &'static str, &'static str, &'static str) {
    match kind {
        StoreKind::Postgres => (
            "PostgreSQL",
            "JOBQ_TEST_POSTGRES_URL",
            "postgres://postgres@127.0.0.1:5432/test",
            "start the local one with `pg_ctlcluster --skip-systemctl-redirect 15 main start`",
        ),
        StoreKind::Mysql => (
            "MySQL",
            "JOBQ_TEST_MYSQL_URL",
            "mysql://root@127.0.0.1:3306/test",
            "start the local MariaDB with `start-stop-daemon --start --oknodo --background --exec \
             /usr/sbin/mariadbd` (as .ci/run does)",
        ),
        StoreKind::Redis => (
            "Redis",
            "JOBQ_TEST_REDIS_URL",
            "redis://127.0.0.1:6379/0",
            "start the local one with `redis-server --daemonize yes`",
        ),
        _ => unreachable!("SQLite needs no server"),
    }
}

/// The URL of `kind`'s test server: its `JOBQ_TEST_*_URL`, else the local server.
pub fn server_url(kind: StoreKind) -> String {
    let (_, variable, local, _) = test_server(kind);
    std::env::var(variable).unwrap_or_else(|_| local.to_string())
}

/// How to get `kind`'s test server, for failure messages.
pub fn server_hint(kind: StoreKind) -> String {
    let (name, variable, local, start) = test_server(kind);
    format!("the {name} tests need a server: {start}, or point {variable} at another (default {local})")
}

/// Opens the store `url` names on a test server, failing the test with how to start that server when
/// it cannot be reached, never skipping.
pub async fn connect(url: &str) -> DynStore {
    let parsed = StoreUrl::parse(url).unwrap_or_else(|e| panic!("a test store URL (see JOBQ_TEST_*_URL): {e}"));
    let hint = match parsed.kind() {
        StoreKind::Sqlite => String::new(),
        kind => server_hint(kind),
    };
    match store::connect(&parsed).await {
        Ok(store) => store,
        Err(e @ StoreError::Unavailable { .. }) => panic!("{:#}\n{hint}", anyhow::Error::from(e)),
        Err(e) => panic!(
            "opening the test store {}: {:#}",
            parsed.redacted(),
            anyhow::Error::from(e)
        ),
    }
}

/// Opens the store `url` names on a test server (failing with how to start the server), then puts the
/// corner it works in in the charge of the sandbox `take_charge` makes, and migrates it; `what` names the
/// store in failure messages.
pub async fn migrated_store<S: Sandbox + 'static>(
    url: String,
    take_charge: impl FnOnce() -> S,
    what: &str,
) -> TestStore {
    let store = connect(&url).await;
    let sandbox = take_charge();
    migrate(&store, what).await;
    TestStore::new(store, url, sandbox)
}

/// Runs `migrate()` on a test store, failing the test with `what` (which store) when it fails.
pub async fn migrate(store: &DynStore, what: &str) {
    store
        .migrate()
        .await
        .unwrap_or_else(|e| panic!("migrating the {what}: {:#}", anyhow::Error::from(e)));
}

/// How often [`eventually`] looks again.
const POLL: Duration = Duration::from_millis(20);

/// Waits until `condition` holds and returns what it found, looking again every 20 ms; after `timeout`
/// fails the test with `what` and what the last look saw instead.
///
/// The condition is an async closure (a synchronous check is an `async ||` around it) answering
/// - `bool`: whether it holds;
/// - `Option<T>`: `Some` once it holds, with what the wait returns;
/// - `Result<T, E>`: `Ok` once it holds; `Err` says what was seen instead. `E` is formatted only if the
///   wait fails, so it may carry costly context (worker logs, a job as JSON) through [`lazy`].
///
/// `timeout` bounds the wait; it is never a claim about how fast anything is.
pub async fn eventually<C: Look>(
    what: impl Display,
    timeout: Duration,
    mut condition: impl AsyncFnMut() -> C,
) -> C::Done {
    let started = Instant::now();
    loop {
        let seen = match condition().await.look() {
            Ok(done) => return done,
            Err(seen) => seen,
        };
        if started.elapsed() >= timeout {
            let seen = seen.to_string();
            if seen.is_empty() {
                panic!("timed out after {timeout:?} waiting for {what}");
            }
            panic!("timed out after {timeout:?} waiting for {what}; last seen: {seen}");
        }
        tokio::time::sleep(POLL).await;
    }
}

/// The answer of one look at an [`eventually`] condition.
pub trait Look {
    /// What the wait returns once the condition holds.
    type Done;
    /// What a look saw while the condition did not hold, for the failure message.
    type Seen: Display;

    /// `Ok` when the condition holds.
    fn look(self) -> Result<Self::Done, Self::Seen>;
}

impl Look for bool {
    type Done = ();
    type Seen = &'static str;

    fn look(self) -> Result<(), &'static str> {
        if self { Ok(()) } else { Err("") }
    }
}

impl<T> Look for Option<T> {
    type Done = T;
    type Seen = &'static str;

    fn look(self) -> Result<T, &'static str> {
        self.ok_or("")
    }
}

impl<T, E: Display> Look for Result<T, E> {
    type Done = T;
    type Seen = E;

    fn look(self) -> Result<T, E> {
        self
    }
}

/// Text made only when it is shown: context for a failure message that is costly to gather.
pub struct Lazy<F>(F);

/// Wraps `text` so that it runs only if the value is formatted.
pub fn lazy<F: Fn() -> String>(text: F) -> Lazy<F> {
    Lazy(text)
}

impl<F: Fn() -> String> Display for Lazy<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&(self.0)())
    }
}

/// Subscribes to `store`'s wake-ups for `queues` (every queue when empty): the subscription, to keep for
/// as long as it is wanted, and what it signals.
pub fn subscribe(store: &DynStore, queues: &[&str]) -> (Subscription, Arc<Notify>) {
    let notify = Arc::new(Notify::new());
    let queues: Vec<String> = queues.iter().map(|q| q.to_string()).collect();
    let subscription = store
        .subscribe(&WakeOn::Ready(queues), notify.clone())
        .unwrap_or_else(|| panic!("the {} store pushes no wake-ups", store.kind()));
    (subscription, notify)
}

/// Waits until `notify` is signalled, failing the test with `what` (what should have signalled) after
/// 10 s.
pub async fn woken(notify: &Notify, what: &str) {
    within(
        format!("a wake-up by {what}"),
        Duration::from_secs(10),
        notify.notified(),
    )
    .await
}

/// Asks a library worker to stop and returns its report, failing the test if it does not stop within
/// 20 s or stops with an error.
pub async fn stop_worker(handle: &WorkerHandle, run: JoinHandle<jobq::Result<RunReport>>) -> RunReport {
    handle.shutdown();
    within("the worker's stop", Duration::from_secs(20), run)
        .await
        .expect("the worker's task")
        .expect("the worker's run")
}

/// Awaits `future`, failing the test with `what` if it has not finished after `timeout` (a hang turned
/// into a failure, not a claim about speed).
pub async fn within<T>(what: impl Display, timeout: Duration, future: impl Future<Output = T>) -> T {
    tokio::time::timeout(timeout, future)
        .await
        .unwrap_or_else(|_| panic!("{what} did not finish within {timeout:?}"))
}

/// Expands a list of cases into one module of `#[tokio::test]`s per store: the conformance suite
/// (`conformance::sqlite::claim_is_exclusive`), the worker tests (`worker::postgres::…`) and the
/// server-store suite (`server_stores::redis::…`), so `cargo test postgres::` runs one store's slice
/// of all of them.
///
/// ```text
/// store_tests! {
///     run |case, fixture| case(fixture().await.store()).await;
///     stores { sqlite => support::sqlite_store, postgres => support::postgres_store }
///     cases { claim::claim_is_exclusive, rescue_returns_stale_jobs }
/// }
/// ```
///
/// `stores every_store` stands for the list of every store: SQLite, PostgreSQL, MySQL, Redis and
/// Redis Cluster, each with its fixture above.
///
/// Each test binds `case` to the case function (`super::claim::claim_is_exclusive`, or
/// `super::rescue_returns_stale_jobs` for a case of the calling module itself) and `fixture` to the
/// store's entry, then runs the expression after them. A case missing from the list is unused code, which `clippy -D
/// warnings` refuses, so a list cannot fall behind its cases.
// `crate::support` in the expansion is the calling test crate's `support` module, on purpose: each
// test crate names its fixtures there (this crate's, and what only it adds).
#[allow(clippy::crate_in_macro_def)]
#[macro_export]
macro_rules! store_tests {
    (
        run |$case:ident, $fixture:ident| $body:expr;
        stores every_store
        cases $cases:tt
    ) => {
        $crate::store_tests! {
            run |$case, $fixture| $body;
            stores {
                sqlite => support::sqlite_store,
                postgres => support::postgres_store,
                mysql => support::mysql_store,
                redis => support::redis_store,
                redis_cluster => support::redis_cluster_store,
            }
            cases $cases
        }
    };
    (
        run |$case:ident, $fixture:ident| $body:expr;
        stores { $($store:ident => $open:expr),+ $(,)? }
        cases $cases:tt
    ) => {
        $(
            mod $store {
                #[allow(unused_imports)]
                use crate::support;

                $crate::store_tests!(@cases (|$case, $fixture| $body, $open) $cases);
            }
        )+
    };
    (@cases $run:tt { $($cases:tt)* }) => {
        $crate::store_tests!(@case $run $($cases)*);
    };
    (@case $run:tt) => {};
    (@case $run:tt $area:ident :: $name:ident $(, $($rest:tt)*)?) => {
        $crate::store_tests!(@test $run [super::$area::$name] $name);
        $crate::store_tests!(@case $run $($($rest)*)?);
    };
    (@case $run:tt $name:ident $(, $($rest:tt)*)?) => {
        $crate::store_tests!(@test $run [super::$name] $name);
        $crate::store_tests!(@case $run $($($rest)*)?);
    };
    (@test (|$case:ident, $fixture:ident| $body:expr, $open:expr) [$($path:tt)*] $name:ident) => {
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn $name() {
            let $case = $($path)*;
            let $fixture = $open;
            $body;
        }
    };
}
