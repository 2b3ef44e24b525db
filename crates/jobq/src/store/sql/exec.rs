//! [`Exec`]: a [`Stmt`] run on one connection of any of the three SQL databases, behind one
//! object-safe trait, so code written once takes `&mut dyn Exec` rather than a generic database with
//! its page of bounds. It runs statements on connections the store does not own (an application's
//! transaction, see `in_transaction.rs`); a dyn call costs nothing beside a round trip.

use async_trait::async_trait;
use sqlx::{ColumnIndex, Database, Decode, Encode, Executor, IntoArguments, Row, Type};

use super::{Bind, RowsAffected, Stmt};

/// Runs statements on one connection (or transaction) of a SQL database.
#[async_trait]
pub(crate) trait Exec: Send {
    /// Runs `stmt`; the rows it changed.
    async fn execute(&mut self, stmt: &Stmt) -> Result<u64, sqlx::Error>;

    /// Runs `stmt`; the first column of its first row, as text, if it returned one.
    async fn first_text(&mut self, stmt: &Stmt) -> Result<Option<String>, sqlx::Error>;
}

/// A connection of `DB` as an [`Exec`].
pub(crate) struct On<'c, DB: Database>(pub &'c mut DB::Connection);

/// The statement as sqlx runs it on `DB`, its values encoded now (the one place a [`Bind`] becomes
/// a sqlx argument, for the pools' statements and for an application's connection alike).
pub(crate) fn bound<DB>(stmt: &Stmt) -> Result<sqlx::query::Query<'_, DB, DB::Arguments<'_>>, sqlx::Error>
where
    DB: Database,
    for<'q> DB::Arguments<'q>: IntoArguments<'q, DB>,
    for<'q> String: Encode<'q, DB> + Type<DB>,
    for<'q> Option<String>: Encode<'q, DB> + Type<DB>,
    for<'q> i64: Encode<'q, DB> + Type<DB>,
    for<'q> Option<i64>: Encode<'q, DB> + Type<DB>,
    for<'q> i32: Encode<'q, DB> + Type<DB>,
{
    use sqlx::Arguments as _;
    let mut args = DB::Arguments::default();
    for bind in stmt.binds() {
        match bind {
            Bind::Text(v) => args.add(v.clone()),
            Bind::Int(v) => args.add(*v),
            Bind::Int32(v) => args.add(*v),
            Bind::OptText(v) => args.add(v.clone()),
            Bind::OptInt(v) => args.add(*v),
        }
        .map_err(sqlx::Error::Encode)?;
    }
    Ok(sqlx::query_with(stmt.sql(), args))
}

#[async_trait]
impl<DB> Exec for On<'_, DB>
where
    DB: Database,
    DB::Connection: Send,
    for<'c> &'c mut DB::Connection: Executor<'c, Database = DB>,
    for<'q> DB::Arguments<'q>: IntoArguments<'q, DB> + Send,
    for<'q> String: Encode<'q, DB> + Type<DB>,
    for<'q> Option<String>: Encode<'q, DB> + Type<DB>,
    for<'q> i64: Encode<'q, DB> + Type<DB>,
    for<'q> Option<i64>: Encode<'q, DB> + Type<DB>,
    for<'q> i32: Encode<'q, DB> + Type<DB>,
    for<'r> String: Decode<'r, DB>,
    DB::QueryResult: RowsAffected,
    usize: ColumnIndex<DB::Row>,
{
    async fn execute(&mut self, stmt: &Stmt) -> Result<u64, sqlx::Error> {
        Ok(bound::<DB>(stmt)?.execute(&mut *self.0).await?.affected())
    }

    async fn first_text(&mut self, stmt: &Stmt) -> Result<Option<String>, sqlx::Error> {
        let row = bound::<DB>(stmt)?.fetch_optional(&mut *self.0).await?;
        // Unchecked: MySQL describes a text column with a binary collation (jobq's ids) as VARBINARY.
        row.map(|r| r.try_get_unchecked::<String, _>(0)).transpose()
    }
}

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

macro_rules! app_database {
    ($feature:literal, $db:ty, $kind:ident) => {
        #[cfg(feature = $feature)]
        impl sealed::Sealed for $db {
            const KIND: crate::store::StoreKind = crate::store::StoreKind::$kind;

            fn connection(connection: &mut Self::Connection) -> AppConnection<'_> {
                AppConnection(Box::new(On::<$db>(connection)))
            }
        }

        #[cfg(feature = $feature)]
        impl AppDatabase for $db {}
    };
}

app_database!("postgres", sqlx::Postgres, Postgres);
app_database!("mysql", sqlx::MySql, Mysql);
app_database!("sqlite", sqlx::Sqlite, Sqlite);
