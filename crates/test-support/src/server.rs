//! What the server-store suite (`tests/it/server_stores/`) asks of each server store, so that each of
//! its cases is written once: a store of the test's own, servers that cannot be reached, a worker URL
//! whose connections can be killed; and of the SQL stores, an application's own connection, the
//! dialect's few differences, an empty corner to migrate, and a private server to restart.
//!
//! Each store's module implements these for a unit struct (`support::postgres::Postgres`, …); the
//! traits only describe the store, they never decide what a test asserts.

use jobq::store::StoreKind;

use super::redis::fresh_prefix;
use super::{ServerSandbox, TestStore, fresh_name, mysql_store_in, postgres_store_in, redis_store_in};

/// A store on a server: PostgreSQL, MySQL, Redis.
pub trait ServerStore {
    /// Which store, as errors name it.
    const KIND: StoreKind;

    /// What kills the connections of a worker on the URL [`ServerStore::killable`] gives.
    type Killer: Killer;

    /// A fresh, migrated store of the test's own, and the name of its corner (schema, database, key
    /// prefix).
    async fn store(&self) -> (TestStore, String) {
        let corner = match Self::KIND {
            StoreKind::Redis => fresh_prefix(),
            _ => fresh_name(),
        };
        let store = match Self::KIND {
            StoreKind::Postgres => postgres_store_in(&corner).await,
            StoreKind::Mysql => mysql_store_in(&corner).await,
            StoreKind::Redis => redis_store_in(&corner).await,
            _ => unreachable!("SQLite needs no server"),
        };
        (store, corner)
    }

    /// A URL (password included: pass it to `jobq`, never print it) on the data of `store`, whose
    /// corner is `corner`, for a worker whose connections, and only those (or at most those of this
    /// test), the killer can kill.
    async fn killable(&self, store: &TestStore, corner: &str) -> (String, Self::Killer);
}

/// URLs of `kind`'s servers that cannot be reached, each with a password that must never be shown: one
/// where nothing listens (refused, which the store reports after a quarter second of its pool's
/// retries), and where the store has a connect time-out, a non-routable
/// address (which never answers: the time-out ends the wait).
pub fn unreachable(kind: StoreKind) -> &'static [&'static str] {
    match kind {
        StoreKind::Postgres => &[
            "postgres://user:s3cret@127.0.0.1:1/db",
            "postgres://user:s3cret@10.255.255.1:5432/db?connect_timeout=1",
        ],
        StoreKind::Mysql => &[
            "mysql://user:s3cret@127.0.0.1:1/db",
            "mysql://user:s3cret@10.255.255.1:3306/db?connect_timeout=1",
        ],
        StoreKind::Redis => &["redis://:secret@127.0.0.1:1/0?connect_timeout=2"],
        _ => &[],
    }
}

/// The connections a worker opens through one URL.
pub trait Killer {
    /// How many such connections are open now.
    async fn open(&mut self) -> usize;

    /// Kills every such connection open now; returns how many there were.
    async fn kill(&mut self) -> usize;
}

/// A SQL store: PostgreSQL, MySQL.
pub trait SqlStore: ServerStore {
    /// An application's own connection.
    type App: AppConnection;

    /// A private server.
    type Private: PrivateServer;

    /// The statement that creates the application's `orders (id int primary key)` table.
    const ORDERS_TABLE: &'static str;

    /// The guide's page for this store (`docs/src/…`), whose SQL the tests run as documented.
    const GUIDE: &'static str;

    /// Inserts a job with its type (`order.audit`) alone; returns the id the database generated where
    /// the dialect hands it back (`RETURNING`).
    async fn insert_type_only(app: &mut Self::App) -> Option<String>;

    /// An empty corner that no store has migrated yet: its URL, its name and the sandbox that removes
    /// it.
    async fn empty_corner(&self) -> (String, String, ServerSandbox);

    /// How many sessions the server at `url` (a private one: the count is the whole server's) has
    /// seen end without the client's goodbye: PostgreSQL's abandoned sessions, MySQL's aborted
    /// clients.
    async fn sessions_without_goodbye(url: &str) -> u64;

    /// Opens a session on the server at `url` and drops it without a goodbye, as a process that
    /// exits with its connection open does.
    async fn drop_a_session_without_goodbye(url: &str);
}

/// An application's connection, for statements the documented table must accept or refuse.
pub trait AppConnection: Sized {
    /// An application's own connection to the corner `corner` (its schema on the search path, or its
    /// database).
    async fn open(corner: &str) -> Self;

    /// Runs one statement.
    async fn run(&mut self, sql: &str) -> Result<(), sqlx::Error>;

    /// The first column, a 32-bit integer, of every row a query returns.
    async fn ints(&mut self, sql: &str) -> Vec<i32>;
}

/// The same for every sqlx connection, but for how it is opened (`open`, an async function of the
/// corner's name).
macro_rules! app_connection {
    ($($connection:ty => $open:path),*) => {
        $(
            impl AppConnection for $connection {
                async fn open(corner: &str) -> Self {
                    $open(corner).await
                }

                async fn run(&mut self, sql: &str) -> Result<(), sqlx::Error> {
                    sqlx::Executor::execute(self, sql).await.map(drop)
                }

                async fn ints(&mut self, sql: &str) -> Vec<i32> {
                    sqlx::query_scalar(sql)
                        .fetch_all(self)
                        .await
                        .unwrap_or_else(|e| panic!("{sql}: {e}"))
                }
            }
        )*
    };
}

app_connection!(
    sqlx::PgConnection => super::postgres::app_connection,
    sqlx::MySqlConnection => super::mysql::app_connection
);

/// A server of one test's own, on a free port, stopped (at the latest) when dropped.
pub trait PrivateServer {
    /// Starts a server of the test's own, which it may stop and start again without touching the
    /// shared one.
    async fn start() -> Self;

    /// The URL of a store on it (no password).
    fn url(&self) -> String;

    /// Stops the server cleanly and waits until it has.
    async fn stop(&mut self);

    /// Starts the stopped server again on the same port and data, and waits until it answers.
    async fn start_again(&mut self);
}
