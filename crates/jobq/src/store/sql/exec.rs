//! The SQL stores' executor: a [`Stmt`] run on a connection, a transaction or a pool of any of the
//! three sqlx databases behind object-safe traits, so that the statements the stores share are
//! written once as plain code over `&mut dyn Exec` and [`Connections`], with no generic database and
//! its page of bounds: what is particular to each database is [`Driver`], made once for the three
//! by `driver!` on concrete types.
//!
//! A dyn call per statement costs nothing beside the round trip it makes (BENCHMARKS.md, issue 44's
//! A/B). Rows come back as [`SqlRow`], the three drivers' own rows in one enum: nothing is copied.

use std::marker::PhantomData;
use std::ops::DerefMut;
use std::sync::Arc;

use async_trait::async_trait;
use futures_util::future::BoxFuture;
use sqlx::{Database, Executor, Pool, Row};

use super::kept::KeptConnections;
use super::{Bind, Dialect, Stmt};
use crate::job::Job;

/// One row of any of the three databases.
pub(crate) enum SqlRow {
    #[cfg(feature = "sqlite")]
    Sqlite(sqlx::sqlite::SqliteRow),
    #[cfg(feature = "postgres")]
    Postgres(sqlx::postgres::PgRow),
    #[cfg(feature = "mysql")]
    MySql(sqlx::mysql::MySqlRow),
}

/// The connection under an [`Exec`], as its own database's: for a store's own statements (typed
/// arrays, a `QueryBuilder`) run in a transaction that the shared statements opened, such as
/// outcomes written in a limited claim's transaction (`Store::finish_and_claim`).
pub(crate) enum RawConnection<'c> {
    #[cfg(feature = "sqlite")]
    Sqlite(&'c mut sqlx::SqliteConnection),
    #[cfg(feature = "postgres")]
    Postgres(&'c mut sqlx::PgConnection),
    #[cfg(feature = "mysql")]
    MySql(&'c mut sqlx::MySqlConnection),
}

macro_rules! raw_as {
    ($feature:literal, $name:ident, $variant:ident, $conn:ty, $db:literal) => {
        #[cfg(feature = $feature)]
        impl<'c> RawConnection<'c> {
            #[doc = concat!("The connection of a ", $db, " store (any other is a bug of the caller's).")]
            pub fn $name(self) -> &'c mut $conn {
                match self {
                    RawConnection::$variant(conn) => conn,
                    #[allow(unreachable_patterns)]
                    _ => unreachable!(concat!("a ", $db, " store's transactions are ", $db, "'s")),
                }
            }
        }
    };
}

raw_as!("sqlite", sqlite, Sqlite, sqlx::SqliteConnection, "SQLite");
raw_as!("postgres", postgres, Postgres, sqlx::PgConnection, "PostgreSQL");
raw_as!("mysql", mysql, MySql, sqlx::MySqlConnection, "MySQL");

/// A value a cell of a [`SqlRow`] is read as: the handful of types jobq's columns hold.
pub(crate) trait Cell: Sized {
    /// The cell at `i`, with sqlx's type check (`checked`) or without it.
    fn read(row: &SqlRow, i: usize, checked: bool) -> Result<Self, sqlx::Error>;
}

macro_rules! cell {
    ($($t:ty),*) => {$(
        impl Cell for $t {
            fn read(row: &SqlRow, i: usize, checked: bool) -> Result<Self, sqlx::Error> {
                match row {
                    #[cfg(feature = "sqlite")]
                    SqlRow::Sqlite(r) => if checked { r.try_get(i) } else { r.try_get_unchecked(i) },
                    #[cfg(feature = "postgres")]
                    SqlRow::Postgres(r) => if checked { r.try_get(i) } else { r.try_get_unchecked(i) },
                    #[cfg(feature = "mysql")]
                    SqlRow::MySql(r) => if checked { r.try_get(i) } else { r.try_get_unchecked(i) },
                }
            }
        }
    )*};
}

cell!(String, Option<String>, i64, Option<i64>, i32, Option<i32>);

impl SqlRow {
    /// How many columns the row has.
    pub fn columns(&self) -> usize {
        match self {
            #[cfg(feature = "sqlite")]
            SqlRow::Sqlite(r) => r.len(),
            #[cfg(feature = "postgres")]
            SqlRow::Postgres(r) => r.len(),
            #[cfg(feature = "mysql")]
            SqlRow::MySql(r) => r.len(),
        }
    }

    /// The cell at `i`, type-checked: integers.
    pub fn try_get<T: Cell>(&self, i: usize) -> Result<T, sqlx::Error> {
        T::read(self, i, true)
    }

    /// The cell at `i`, unchecked: text, which MySQL describes as binary in jobq's byte-order
    /// collation.
    pub fn try_get_unchecked<T: Cell>(&self, i: usize) -> Result<T, sqlx::Error> {
        T::read(self, i, false)
    }
}

/// Runs statements on one connection, or in one transaction, of a SQL database.
#[async_trait]
pub(crate) trait Exec: Send {
    /// Runs `stmt`; the rows it changed.
    async fn execute(&mut self, stmt: &Stmt) -> Result<u64, sqlx::Error>;

    /// Runs `stmt`; its rows.
    async fn fetch_all(&mut self, stmt: &Stmt) -> Result<Vec<SqlRow>, sqlx::Error>;

    /// Runs `stmt`; its first row, if it returned one.
    async fn fetch_optional(&mut self, stmt: &Stmt) -> Result<Option<SqlRow>, sqlx::Error>;

    /// Runs a text without parameters, which may hold several statements (a migration's script, over
    /// PostgreSQL's simple protocol).
    async fn run_script(&mut self, sql: &str) -> Result<(), sqlx::Error>;

    /// Inserts whole jobs (at most [`super::ROWS_PER_INSERT`]) the cheapest way the database has
    /// ([`InsertWhole`]): an import's rows.
    async fn insert_whole(&mut self, dialect: &'static Dialect, jobs: &[&Job]) -> Result<(), sqlx::Error>;

    /// The connection itself, as its database's.
    fn raw(&mut self) -> RawConnection<'_>;
}

/// A boxed executor (a transaction or a connection the pool lent) passed on as `&mut dyn Exec`.
#[async_trait]
impl<T: Exec + ?Sized> Exec for Box<T> {
    async fn execute(&mut self, stmt: &Stmt) -> Result<u64, sqlx::Error> {
        (**self).execute(stmt).await
    }

    async fn fetch_all(&mut self, stmt: &Stmt) -> Result<Vec<SqlRow>, sqlx::Error> {
        (**self).fetch_all(stmt).await
    }

    async fn fetch_optional(&mut self, stmt: &Stmt) -> Result<Option<SqlRow>, sqlx::Error> {
        (**self).fetch_optional(stmt).await
    }

    async fn run_script(&mut self, sql: &str) -> Result<(), sqlx::Error> {
        (**self).run_script(sql).await
    }

    async fn insert_whole(&mut self, dialect: &'static Dialect, jobs: &[&Job]) -> Result<(), sqlx::Error> {
        (**self).insert_whole(dialect, jobs).await
    }

    fn raw(&mut self) -> RawConnection<'_> {
        (**self).raw()
    }
}

/// An open transaction, which ends committed or rolled back (dropped: rolled back).
pub(crate) trait Transaction: Exec {
    /// Commits it.
    fn commit(self: Box<Self>) -> BoxFuture<'static, Result<(), sqlx::Error>>;

    /// Rolls it back.
    fn rollback(self: Box<Self>) -> BoxFuture<'static, Result<(), sqlx::Error>>;
}

/// A SQL store's connections: its pool, and the connections it keeps apart for calls about one job
/// (`kept.rs`).
#[async_trait]
pub(crate) trait Connections: Send + Sync + std::fmt::Debug {
    /// Runs `stmt` on a connection of the pool; the rows it changed.
    async fn execute(&self, stmt: &Stmt) -> Result<u64, sqlx::Error>;

    /// Runs `stmt` on a connection of the pool; its rows.
    async fn fetch_all(&self, stmt: &Stmt) -> Result<Vec<SqlRow>, sqlx::Error>;

    /// Runs `stmt`, about one job, on a kept connection when one is free (the pool's otherwise); its
    /// rows.
    async fn fetch_all_kept(&self, stmt: &Stmt) -> Result<Vec<SqlRow>, sqlx::Error>;

    /// A connection of the pool, held until dropped.
    async fn acquire(&self) -> Result<Box<dyn Exec>, sqlx::Error>;

    /// A transaction opened with `begin` (the dialect's `BEGIN` for what it will do).
    async fn begin(&self, begin: &'static str) -> Result<Box<dyn Transaction>, sqlx::Error>;

    /// Closes the kept connections and the pool's (see `Sql::close`).
    async fn close(&self);
}

/// What jobq does with one sqlx database, written once in [`driver!`] and made for each of the three:
/// statements run on a connection, rows handed back as [`SqlRow`]. Concrete per database, so no
/// code over it carries sqlx's bounds.
pub(crate) trait Driver: Database + InsertWhole {
    /// Runs `stmt` on `conn`; the rows it changed.
    fn execute<'c>(conn: &'c mut Self::Connection, stmt: &'c Stmt) -> BoxFuture<'c, Result<u64, sqlx::Error>>;

    /// Runs `stmt` on `conn`; its rows.
    fn fetch_all<'c>(conn: &'c mut Self::Connection, stmt: &'c Stmt)
    -> BoxFuture<'c, Result<Vec<SqlRow>, sqlx::Error>>;

    /// Runs `stmt` on `conn`; its first row.
    fn fetch_optional<'c>(
        conn: &'c mut Self::Connection,
        stmt: &'c Stmt,
    ) -> BoxFuture<'c, Result<Option<SqlRow>, sqlx::Error>>;

    /// Runs a text without parameters on `conn` (see [`Exec::run_script`]).
    fn run_script<'c>(conn: &'c mut Self::Connection, sql: &'c str) -> BoxFuture<'c, Result<(), sqlx::Error>>;

    /// `conn` as itself (see [`Exec::raw`]).
    fn raw(conn: &mut Self::Connection) -> RawConnection<'_>;
}

/// A connection of `DB` held as `C` (borrowed, taken from the pool, or in a transaction), as an
/// [`Exec`].
pub(crate) struct Held<DB, C>(C, PhantomData<fn() -> DB>);

impl<DB, C> Held<DB, C> {
    /// `connection` as an [`Exec`].
    pub fn new(connection: C) -> Held<DB, C> {
        Held(connection, PhantomData)
    }
}

/// A connection (or transaction) borrowed: the application's (see `in_transaction.rs`), or one
/// holding a store's migration lock.
pub(crate) type On<'c, DB> = Held<DB, &'c mut <DB as Database>::Connection>;

#[async_trait]
impl<DB, C> Exec for Held<DB, C>
where
    DB: Driver,
    C: DerefMut<Target = DB::Connection> + Send,
{
    async fn execute(&mut self, stmt: &Stmt) -> Result<u64, sqlx::Error> {
        DB::execute(&mut self.0, stmt).await
    }

    async fn fetch_all(&mut self, stmt: &Stmt) -> Result<Vec<SqlRow>, sqlx::Error> {
        DB::fetch_all(&mut self.0, stmt).await
    }

    async fn fetch_optional(&mut self, stmt: &Stmt) -> Result<Option<SqlRow>, sqlx::Error> {
        DB::fetch_optional(&mut self.0, stmt).await
    }

    async fn run_script(&mut self, sql: &str) -> Result<(), sqlx::Error> {
        DB::run_script(&mut self.0, sql).await
    }

    async fn insert_whole(&mut self, dialect: &'static Dialect, jobs: &[&Job]) -> Result<(), sqlx::Error> {
        DB::insert_whole(&mut self.0, dialect, jobs).await
    }

    fn raw(&mut self) -> RawConnection<'_> {
        DB::raw(&mut self.0)
    }
}

impl<DB: Driver> Transaction for Held<DB, sqlx::Transaction<'static, DB>> {
    fn commit(self: Box<Self>) -> BoxFuture<'static, Result<(), sqlx::Error>> {
        Box::pin(self.0.commit())
    }

    fn rollback(self: Box<Self>) -> BoxFuture<'static, Result<(), sqlx::Error>> {
        Box::pin(self.0.rollback())
    }
}

/// A store's pool with its kept connections, as [`Connections`].
pub(crate) struct PoolOf<DB: Database> {
    pub pool: Pool<DB>,
    pub kept: Arc<KeptConnections<DB>>,
}

impl<DB: Database> std::fmt::Debug for PoolOf<DB> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PoolOf")
            .field("kept", &self.kept)
            .finish_non_exhaustive()
    }
}

#[async_trait]
impl<DB: Driver> Connections for PoolOf<DB>
where
    for<'c> &'c mut DB::Connection: Executor<'c, Database = DB>,
{
    async fn execute(&self, stmt: &Stmt) -> Result<u64, sqlx::Error> {
        Held::<DB, _>::new(self.pool.acquire().await?).execute(stmt).await
    }

    async fn fetch_all(&self, stmt: &Stmt) -> Result<Vec<SqlRow>, sqlx::Error> {
        Held::<DB, _>::new(self.pool.acquire().await?).fetch_all(stmt).await
    }

    async fn fetch_all_kept(&self, stmt: &Stmt) -> Result<Vec<SqlRow>, sqlx::Error> {
        let Some(mut call) = self.kept.call(&self.pool) else {
            return self.fetch_all(stmt).await;
        };
        loop {
            let connection = call.connection().await?;
            let rows = Held::<DB, _>::new(connection).fetch_all(stmt).await;
            if let Some(rows) = call.answer(rows) {
                return rows;
            }
        }
    }

    async fn acquire(&self) -> Result<Box<dyn Exec>, sqlx::Error> {
        Ok(Box::new(Held::<DB, _>::new(self.pool.acquire().await?)))
    }

    async fn begin(&self, begin: &'static str) -> Result<Box<dyn Transaction>, sqlx::Error> {
        Ok(Box::new(Held::<DB, _>::new(self.pool.begin_with(begin).await?)))
    }

    async fn close(&self) {
        self.kept.close().await;
        // A connection whose `PoolConnection` was just dropped goes back to the pool in a task of
        // its own, after a ping, and sqlx 0.8's `Pool::close` may return before it is back: it
        // would stay open, to be torn off at the process's exit. So `close` waits until every
        // connection is back. That is a ping's round trip, well under a millisecond on a network
        // close by, so the wait yields at first rather than sleeps (a timer's whole millisecond,
        // twice, made a one-shot command's exit take 2 ms longer).
        let yield_until = std::time::Instant::now() + std::time::Duration::from_millis(5);
        while self.pool.num_idle() < self.pool.size() as usize {
            if std::time::Instant::now() < yield_until {
                tokio::task::yield_now().await;
            } else {
                tokio::time::sleep(std::time::Duration::from_millis(1)).await;
            }
        }
        self.pool.close().await;
    }
}

/// How a database inserts whole jobs in an import: `INSERT … VALUES` rows (see
/// [`super::insert_whole`]) unless it has a cheaper way (PostgreSQL's arrays, `postgres/import.rs`).
pub(crate) trait InsertWhole: Database {
    /// Inserts `jobs` (at most [`super::ROWS_PER_INSERT`]) whole on `conn`.
    fn insert_whole<'c>(
        conn: &'c mut Self::Connection,
        dialect: &'static Dialect,
        jobs: &'c [&'c Job],
    ) -> BoxFuture<'c, Result<(), sqlx::Error>>;
}

/// [`Driver`] for one sqlx database, and what makes it an [`AppDatabase`]: each [`Bind`] becomes a
/// sqlx argument here, the one place it does. Statements whose text varies with their input are
/// not kept prepared.
macro_rules! driver {
    ($feature:literal, $db:ty, $variant:ident, $kind:ident) => {
        #[cfg(feature = $feature)]
        const _: () = {
            type Db = $db;
            type Query<'q> = sqlx::query::Query<'q, Db, <Db as Database>::Arguments<'q>>;

            fn bound(stmt: &Stmt) -> Result<Query<'_>, sqlx::Error> {
                use sqlx::Arguments as _;
                let mut args = <Db as Database>::Arguments::default();
                for bind in stmt.binds() {
                    match bind {
                        Bind::Text(v) => args.add(v.as_str()),
                        Bind::Int(v) => args.add(*v),
                        Bind::Int32(v) => args.add(*v),
                        Bind::OptText(v) => args.add(v.as_deref()),
                        Bind::OptInt(v) => args.add(*v),
                    }
                    .map_err(sqlx::Error::Encode)?;
                }
                Ok(sqlx::query_with(stmt.sql(), args).persistent(stmt.kept))
            }

            impl Driver for Db {
                fn execute<'c>(
                    conn: &'c mut Self::Connection,
                    stmt: &'c Stmt,
                ) -> BoxFuture<'c, Result<u64, sqlx::Error>> {
                    Box::pin(async move { Ok(bound(stmt)?.execute(conn).await?.rows_affected()) })
                }

                fn fetch_all<'c>(
                    conn: &'c mut Self::Connection,
                    stmt: &'c Stmt,
                ) -> BoxFuture<'c, Result<Vec<SqlRow>, sqlx::Error>> {
                    Box::pin(async move {
                        Ok(bound(stmt)?
                            .fetch_all(conn)
                            .await?
                            .into_iter()
                            .map(SqlRow::$variant)
                            .collect())
                    })
                }

                fn fetch_optional<'c>(
                    conn: &'c mut Self::Connection,
                    stmt: &'c Stmt,
                ) -> BoxFuture<'c, Result<Option<SqlRow>, sqlx::Error>> {
                    Box::pin(async move { Ok(bound(stmt)?.fetch_optional(conn).await?.map(SqlRow::$variant)) })
                }

                fn run_script<'c>(
                    conn: &'c mut Self::Connection,
                    sql: &'c str,
                ) -> BoxFuture<'c, Result<(), sqlx::Error>> {
                    Box::pin(async move { conn.execute(sql).await.map(drop) })
                }

                fn raw(conn: &mut Self::Connection) -> RawConnection<'_> {
                    RawConnection::$variant(conn)
                }
            }

            impl sealed::Sealed for Db {
                const KIND: crate::store::StoreKind = crate::store::StoreKind::$kind;

                fn connection(connection: &mut Self::Connection) -> AppConnection<'_> {
                    AppConnection(Box::new(On::<Db>::new(connection)))
                }
            }

            impl AppDatabase for Db {}
        };
    };
}

driver!("sqlite", sqlx::Sqlite, Sqlite, Sqlite);
driver!("mysql", sqlx::MySql, MySql, Mysql);
driver!("postgres", sqlx::Postgres, Postgres, Postgres);

/// [`InsertWhole`] by `INSERT … VALUES` rows.
macro_rules! insert_values {
    ($feature:literal, $db:ty) => {
        #[cfg(feature = $feature)]
        impl InsertWhole for $db {
            fn insert_whole<'c>(
                conn: &'c mut Self::Connection,
                dialect: &'static Dialect,
                jobs: &'c [&'c Job],
            ) -> BoxFuture<'c, Result<(), sqlx::Error>> {
                Box::pin(async move {
                    Self::execute(conn, &super::insert_whole(dialect, jobs))
                        .await
                        .map(drop)
                })
            }
        }
    };
}

insert_values!("sqlite", sqlx::Sqlite);
insert_values!("mysql", sqlx::MySql);

/// A database in whose transactions [`crate::Client::enqueue_in`] and [`crate::Client::emit_in`]
/// write: sqlx's PostgreSQL, MySQL and SQLite, each with its store's feature. Sealed: jobq writes its
/// rows only through databases it knows.
pub trait AppDatabase: sealed::Sealed {}

pub(crate) mod sealed {
    use super::{AppConnection, Database};
    use crate::store::StoreKind;

    /// What jobq needs of an application's database.
    pub trait Sealed: Database {
        /// The store kind whose tables this database holds.
        const KIND: StoreKind;

        /// The connection as jobq runs its statements on it.
        fn connection(connection: &mut Self::Connection) -> AppConnection<'_>;
    }
}

/// A connection of the application's, as jobq runs its statements on it.
pub struct AppConnection<'c>(pub(crate) Box<dyn Exec + 'c>);
