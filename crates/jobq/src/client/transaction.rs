//! `Client`'s calls inside the application's own transaction: [`Client::enqueue_in`] and
//! [`Client::emit_in`] write on the application's sqlx transaction, so the job or the event exists if
//! and only if the application commits (River's transactional enqueue; what a plain `INSERT` gives
//! PHP and Python producers). The store only says where its tables are ([`Store::sql_tables`]); the
//! statements are the shared SQL layer's (`store/sql/in_transaction.rs`).
//!
//! [`Store::sql_tables`]: crate::store::Store::sql_tables

use super::{Client, EventSpec};
use crate::error::{Error, Result};
use crate::job::IntoJobSpec;
use crate::store::sql::in_transaction::{self, EventRow, SqlTables};
use crate::store::{AppDatabase, EmitOutcome, Enqueued, StoreError};

/// What [`Client::emit_in`] did: the event's id, and whether it is new.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct EmittedIn {
    /// The event's id.
    pub event_id: String,
    /// `Emitted` when recorded (its jobs are made when a worker expands it), `Duplicate` when an
    /// event with this id exists.
    pub outcome: EmitOutcome,
}

impl Client {
    /// Enqueues a job inside the application's own transaction on the store's database
    /// (PostgreSQL, MySQL or SQLite): the job exists if and only if the transaction commits, and
    /// workers see it from then on (PostgreSQL's workers are woken at the commit). The answer is
    /// [`Client::enqueue`]'s: an id that exists is a `Duplicate`, a unique key a live job of the
    /// queue holds coalesces into that job. The transaction must be on the store's own database
    /// (on PostgreSQL, on the server and database of the store's URL; the URL's `schema` is named in
    /// the statement).
    ///
    /// ```no_run
    /// # async fn demo(client: jobq::Client, pool: sqlx::PgPool) -> Result<(), Box<dyn std::error::Error>> {
    /// let mut tx = pool.begin().await?;
    /// sqlx::query("UPDATE orders SET status = 'paid' WHERE id = 42").execute(&mut *tx).await?;
    /// client.enqueue_in(&mut tx, jobq::JobSpec::new("order.paid", serde_json::json!({"order": 42}))).await?;
    /// tx.commit().await?; // the job and the order's new status, or neither
    /// # Ok(()) }
    /// ```
    pub async fn enqueue_in<DB: AppDatabase>(
        &self,
        tx: &mut sqlx::Transaction<'_, DB>,
        job: impl IntoJobSpec,
    ) -> Result<Enqueued> {
        let job = self.validate(job.into_job_spec()?)?;
        let tables = self.tables_for::<DB>()?;
        let mut connection = DB::connection(&mut *tx);
        Ok(in_transaction::enqueue(&mut *connection.0, &tables, &job).await?)
    }

    /// Records an event inside the application's own transaction: it exists if and only if the
    /// transaction commits, and a worker then turns it into the jobs its config subscribes to it
    /// (as for an event an application inserts into `jobq_events` itself). Checked as
    /// [`Client::emit`] checks it, but for its subscriptions, which are the workers'.
    pub async fn emit_in<DB: AppDatabase>(
        &self,
        tx: &mut sqlx::Transaction<'_, DB>,
        event: EventSpec,
    ) -> Result<EmittedIn> {
        let event = self.checked_event(event, None)?;
        let tables = self.tables_for::<DB>()?;
        let meta = serde_json::to_string(&event.meta).expect("a map of strings is JSON");
        let row = EventRow {
            id: &event.id,
            name: &event.name,
            payload: event.payload.get(),
            meta: &meta,
            created_at: self.now().0,
        };
        let mut connection = DB::connection(&mut *tx);
        let new = in_transaction::emit(&mut *connection.0, &tables, &row)
            .await
            .map_err(|e| StoreError::query(DB::KIND, "emit in the application's transaction", e.to_string()))?;
        Ok(EmittedIn {
            event_id: event.id,
            outcome: if new {
                EmitOutcome::Emitted
            } else {
                EmitOutcome::Duplicate
            },
        })
    }

    /// The store's tables, for a transaction of `DB`: refused when the store keeps none or keeps
    /// them in another kind of database.
    fn tables_for<DB: AppDatabase>(&self) -> Result<SqlTables> {
        let store = self.store.kind();
        let Some(tables) = self.store.sql_tables() else {
            return Err(Error::Store(StoreError::Unsupported {
                store,
                operation: "writing inside an application's SQL transaction",
            }));
        };
        if store != DB::KIND {
            return Err(Error::config(format!(
                "the transaction is on a {} database, and the store's tables are in a {store} one",
                DB::KIND
            )));
        }
        Ok(tables)
    }
}
