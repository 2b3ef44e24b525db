//! What the server-store suite (`tests/it/server_stores/`) asks of each server store, so that each of
//! its cases is written once: a store of the test's own, servers that cannot be reached, a worker URL
//! whose connections can be killed; and of the SQL stores, an application's own connection, the
//! dialect's few differences, an empty corner to migrate, and a private server to restart.
//!
//! Each store's module implements these for a unit struct (`support::postgres::Postgres`, …); the
//! traits only describe the store, they never decide what a test asserts.

use jobq::store::{DynStore, StoreKind};

use super::{ServerSandbox, TestStore};

/// A store on a server: PostgreSQL, MySQL, Redis.
pub trait ServerStore {
    /// Which store, as errors name it.
    const KIND: StoreKind;

    /// URLs of servers that cannot be reached, each with a password that must never be shown: one
    /// where nothing listens, and where the store has a connect time-out, a non-routable address.
    const UNREACHABLE: &'static [&'static str];

    /// Whose connections [`ServerStore::killable`] kills.
    type Killable: Killable;

    /// Opens the store `url` names, failing the test with how to start the server when it cannot be
    /// reached.
    async fn connect(url: &str) -> DynStore;

    /// A fresh, migrated store of the test's own, and the name of its corner (schema, database, key
    /// prefix).
    async fn store(&self) -> (TestStore, String);

    /// A URL on the data of `store` (whose corner is `corner`) for a worker whose connections, and only
    /// those (or at most those of this test), the answer can kill.
    async fn killable(&self, store: &TestStore, corner: &str) -> Self::Killable;
}

/// The connections a worker opens through one URL.
pub trait Killable {
    /// The URL that opens them (password included: pass it to `jobq`, never print it).
    fn url(&self) -> &str;

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

    /// An application's own connection to the corner `corner` (its schema on the search path, or its
    /// database).
    async fn app(&self, corner: &str) -> Self::App;

    /// Inserts a job with its type (`order.audit`) alone; returns the id the database generated where
    /// the dialect hands it back (`RETURNING`).
    async fn insert_type_only(app: &mut Self::App) -> Option<String>;

    /// An empty corner that no store has migrated yet: its URL, its name and the sandbox that removes
    /// it.
    async fn empty_corner(&self) -> (String, String, ServerSandbox);

    /// Starts a server of the test's own, which it may stop and start again without touching the
    /// shared one.
    async fn private_server(&self) -> Self::Private;
}

/// An application's connection, for statements the documented table must accept or refuse.
pub trait AppConnection {
    /// Runs one statement.
    async fn run(&mut self, sql: &str) -> Result<(), sqlx::Error>;

    /// The first column, a 32-bit integer, of every row a query returns.
    async fn ints(&mut self, sql: &str) -> Vec<i32>;
}

/// A server of one test's own, on a free port, stopped (at the latest) when dropped.
pub trait PrivateServer {
    /// The URL of a store on it (no password).
    fn url(&self) -> String;

    /// Stops the server cleanly and waits until it has.
    async fn stop(&mut self);

    /// Starts the stopped server again on the same port and data, and waits until it answers.
    async fn start_again(&mut self);
}
