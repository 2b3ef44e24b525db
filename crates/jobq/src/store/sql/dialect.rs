//! What differs between the SQL stores' spelling of one statement: a [`Dialect`] each store declares
//! once (see `SQLITE`, `POSTGRES`, `MYSQL` beside each store), which the statements written once in
//! this folder consult. Placeholders are not here: sqlx's `QueryBuilder` writes each database's own.
//! Differences of strategy (how a batch of rows reaches the server, whether an `UPDATE` can say what
//! it changed) stay in the stores.

use crate::store::StoreKind;

/// The spelling of one SQL store.
#[derive(Debug)]
pub(crate) struct Dialect {
    /// Which store.
    pub kind: StoreKind,
    /// Whether placeholders are numbered (`$1`, PostgreSQL) rather than `?`.
    pub numbered_placeholders: bool,
    /// Every column of `jobq_jobs AS j` in the order [`super::decode::job_from_row`] reads them, JSON
    /// columns as text.
    pub job_columns: &'static str,
    /// How a transaction that writes begins. SQLite takes its write lock up front, so that what the
    /// transaction reads first stays true until it writes.
    pub begin_write: &'static str,
    /// Appended to a `SELECT` whose rows the transaction then changes, to lock them ("" where the
    /// transaction holds the whole database).
    pub for_update: &'static str,
    /// Appended to a selection of rows to delete in bounded batches: rows another transaction holds
    /// are passed over, not waited for ("" where nothing can hold a row).
    pub skip_locked: &'static str,
    /// Appended to a selection of rows to take and change (waiting events): rows another transaction
    /// holds are passed over ("" where one writer holds the whole store).
    pub lock_skipping: &'static str,
    /// Whether an `INSERT` into `jobq_jobs` wakes the listeners by itself (PostgreSQL's statement
    /// trigger), so that writers of new jobs need not call `notify_ready`.
    pub inserts_notify: bool,
    /// Whether a data-modifying `WITH` lets one statement record an event and insert its jobs
    /// (PostgreSQL): one round trip and no `BEGIN`/`COMMIT` for the common emit of one event.
    pub writable_cte: bool,
    /// How a limited selection of rows is deleted.
    pub limited_delete: LimitedDelete,
    /// How a cancel by filter finds the live jobs it cancels and what each was.
    pub cancel_by_filter: FilterCancel,
    /// How an `INSERT` that finds its key taken updates the row instead.
    pub upsert: Upsert,
    /// The worker registry's `queues` column: how a JSON array of names is written into it and read
    /// out of it (PostgreSQL keeps a `text[]`, the others the JSON text).
    pub queues_in: (&'static str, &'static str),
    /// See `queues_in`.
    pub queues_out: &'static str,
    /// What a JSON column's bound text is wrapped in (PostgreSQL types a text parameter as text, which
    /// a `json` column refuses without a cast).
    pub json_in: (&'static str, &'static str),
    /// How a field of a JSON column is read as text (a limited claim leaves out the partitions that
    /// can take no job, by their field).
    pub json_text: JsonText,
    /// The function that picks the larger of two values (`MAX` in SQLite, `GREATEST` elsewhere).
    pub greatest: &'static str,
    /// `jobq_jobs AS j`'s error history as JSON text, for a search of its entries (`jobq doctor`'s
    /// often-rescued jobs).
    pub errors_text: &'static str,
    /// `jobq_jobs AS j`'s result as JSON text (a dependent's envelope carries its dependencies').
    pub result_text: &'static str,
    /// What a sum of integer columns is wrapped in to come back as a 64-bit integer (PostgreSQL and
    /// MySQL sum integers into a decimal type).
    pub int_sum: (&'static str, &'static str),
    /// Integer division of two integers: `/` truncates on SQLite and PostgreSQL, MySQL's `DIV` does.
    pub int_div: &'static str,
    /// The condition on `jobq_jobs` of a job that is live and holds the unique key bound after it,
    /// as the store's unique index of live keys reads it (MySQL's `live_key`, the partial index's
    /// own condition elsewhere).
    pub live_key_is: &'static str,
    /// The server's clock in Unix milliseconds, a 64-bit integer: what expiry is judged by, whatever
    /// the clocks of the workers.
    pub now_millis: &'static str,
    /// The condition on `jobq_jobs AS j` of a job that has not started and whose expiry is at or
    /// before the value bound after it: as the store's index of such jobs reads it.
    pub expiry_due: &'static str,
    /// A query that returns a row when jobq's tables exist (`jobq_migrations`).
    pub migrations_exist: &'static str,
    /// `jobq_migrations` as the store declares it (`IF NOT EXISTS`).
    pub migrations_table: &'static str,
    /// Whether the planner takes a row value `(a, b, c) > (?, ?, ?)` as the bound of a range of an
    /// index on those columns (SQLite, PostgreSQL). MariaDB's does not, and such a bound then makes
    /// it pick worse plans: a limited claim there pages by the spelled-out comparison, and bounds
    /// its window of candidates by a subquery of ids instead of a range.
    pub row_value_ranges: bool,
    /// Whether an `UPDATE` can hand back the rows it changed (`RETURNING`: SQLite, PostgreSQL), so
    /// that a limited claim leases and reads its jobs in one statement. MySQL reads them first.
    pub update_returning: bool,
    /// How a column is matched against the ids a locking, limited subquery selects (a wholesale
    /// limited lease, a batch of cleanup): `IN (…)`, except on PostgreSQL, whose planner may run such
    /// a subquery once per row of the outer statement, each run passing over the rows the statement
    /// already changed (an `UPDATE` then changes more rows than the limit), while `= ANY(ARRAY(…))`
    /// runs it once.
    pub in_selected: (&'static str, &'static str),
    /// Whether stats count the ready/scheduled split in the grouped count itself (PostgreSQL) rather
    /// than in a second pass over the pending jobs (see `SqlPool::stats_grouped`).
    pub stats_in_one_pass: bool,
    /// Whether a list by status restates the by-status index's own condition (`status <> 'pending'`),
    /// which is how SQLite knows that it may use a partial index.
    pub restates_partial_index: bool,
    /// Whether a driver error means the server cannot be reached (rather than refusing a request).
    pub is_unreachable: fn(&sqlx::Error) -> bool,
    /// Whether a driver error means the transaction lost a race for a row lock (a deadlock, a lock
    /// wait that timed out), so that running it again is the remedy.
    pub is_lock_conflict: fn(&sqlx::Error) -> bool,
    /// Whether a driver error means another process held the whole store's lock for longer than a
    /// statement waits for it (SQLite's `SQLITE_BUSY` after `busy_timeout`): reported as
    /// [`crate::store::StoreError::Locked`], not as a failed query.
    pub is_locked_out: fn(&sqlx::Error) -> bool,
    /// Whether a driver error is a unique key taken meanwhile (the live unique key of a job that a
    /// producer enqueued while a replay looked).
    pub is_unique_violation: fn(&sqlx::Error) -> bool,
    /// A statement that wakes the store's listeners for the queue it binds, run in the transaction
    /// that made jobs of that queue pending (PostgreSQL's NOTIFY; `None` where workers poll or watch).
    pub notify_ready: Option<&'static str>,
    /// What a kept connection (`kept.rs`) runs after the pool's own set-up: PostgreSQL's leaves the
    /// choice of plan to the planner again, so one job's statement runs its generic plan.
    pub kept_session: Option<&'static str>,
}

/// How a store reads a field of a JSON column as text, given the keys from the top.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum JsonText {
    /// `CAST(json_extract(col, '$."a"."b"') AS TEXT)` (SQLite): a JSON path bound as one value.
    CastJsonExtract,
    /// `json_extract_path_text(col, 'a', 'b')` (PostgreSQL): each key bound.
    ExtractPathText,
    /// `JSON_UNQUOTE(JSON_EXTRACT(col, '$."a"."b"'))` (MySQL, MariaDB).
    UnquoteJsonExtract,
}

/// How a store deletes at most N rows that match.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LimitedDelete {
    /// `DELETE … WHERE id IN (SELECT id … LIMIT n)`.
    BySubquery,
    /// `DELETE … WHERE … LIMIT n` (MySQL refuses `LIMIT` inside an `IN` subquery).
    Inline,
}

/// How a store cancels the live jobs a filter selects and learns what each one was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FilterCancel {
    /// One `WITH … FOR UPDATE` selection that an `UPDATE … FROM … RETURNING` cancels (PostgreSQL).
    InOneStatement,
    /// Select, then update by the same filter: the transaction holds the whole database, so the
    /// second pass meets the same rows (SQLite).
    SameFilterTwice,
    /// Select and lock, then update the locked rows by id (MySQL, whose `UPDATE` returns no rows).
    LockedIds,
}

/// How a store spells "insert, or update these columns of the row whose key is taken".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Upsert {
    /// `ON CONFLICT (key) DO UPDATE SET c = excluded.c` (SQLite, PostgreSQL).
    OnConflict,
    /// `ON DUPLICATE KEY UPDATE c = VALUES(c)` (MySQL, MariaDB).
    OnDuplicateKey,
}

/// The planner settings of a limited claim's transaction on PostgreSQL, for its `BEGIN`s to share
/// (see [`Dialect::begin_claim`]; a macro, so that `concat!` makes each a single literal).
macro_rules! pg_claim_scans {
    () => {
        "SET LOCAL enable_bitmapscan = off; SET LOCAL enable_seqscan = off"
    };
}

impl Dialect {
    /// The spelling the stores share unless they say otherwise: `?` placeholders, a plain `BEGIN`,
    /// row locks, `ON CONFLICT` upserts, deletes by subquery, the registry's queues as JSON text, no
    /// listeners to notify, and errors that mean nothing in particular. Each store's dialect is this
    /// with what differs changed.
    pub const fn of(kind: StoreKind) -> Dialect {
        Dialect {
            kind,
            numbered_placeholders: false,
            job_columns: "",
            begin_write: "BEGIN",
            for_update: " FOR UPDATE",
            skip_locked: "",
            lock_skipping: " FOR UPDATE SKIP LOCKED",
            inserts_notify: false,
            writable_cte: false,
            limited_delete: LimitedDelete::BySubquery,
            cancel_by_filter: FilterCancel::LockedIds,
            upsert: Upsert::OnConflict,
            queues_in: ("", ""),
            queues_out: "queues",
            json_in: ("", ""),
            json_text: match kind {
                StoreKind::Sqlite => JsonText::CastJsonExtract,
                StoreKind::Postgres => JsonText::ExtractPathText,
                _ => JsonText::UnquoteJsonExtract,
            },
            live_key_is: match kind {
                StoreKind::Mysql => "live_key = ",
                _ => "status IN ('blocked', 'pending', 'running', 'waiting') AND unique_key = ",
            },
            greatest: match kind {
                StoreKind::Sqlite => "MAX",
                _ => "GREATEST",
            },
            errors_text: match kind {
                StoreKind::Postgres => "j.errors::text",
                StoreKind::Mysql => "CAST(j.errors AS CHAR)",
                _ => "j.errors",
            },
            result_text: match kind {
                StoreKind::Postgres => "j.result::text",
                _ => "j.result",
            },
            int_sum: match kind {
                StoreKind::Postgres => ("CAST(COALESCE(SUM(", "), 0) AS BIGINT)"),
                StoreKind::Mysql => ("CAST(COALESCE(SUM(", "), 0) AS SIGNED)"),
                _ => ("COALESCE(SUM(", "), 0)"),
            },
            row_value_ranges: !matches!(kind, StoreKind::Mysql),
            update_returning: !matches!(kind, StoreKind::Mysql),
            in_selected: match kind {
                StoreKind::Postgres => (" = ANY(ARRAY(", "))"),
                _ => (" IN (", ")"),
            },
            stats_in_one_pass: matches!(kind, StoreKind::Postgres),
            int_div: match kind {
                StoreKind::Mysql => " DIV ",
                _ => " / ",
            },
            now_millis: "",
            expiry_due: "",
            migrations_exist: "",
            migrations_table: "",
            restates_partial_index: false,
            is_unreachable: never,
            is_lock_conflict: never,
            is_locked_out: never,
            is_unique_violation: never,
            notify_ready: None,
            kept_session: None,
        }
    }

    /// Whether transactions lock the rows they change (`for_update` is spelled), rather than one
    /// writer holding the whole database (SQLite).
    pub fn locks_rows(&self) -> bool {
        !self.for_update.is_empty()
    }

    /// How a limited claim's transaction begins: as any that writes, and on PostgreSQL with bitmap
    /// scans and sequential scans off for its statements, sent in the same round trip.
    ///
    /// A claim counts the running jobs of its limits through the partial index of running jobs, and
    /// a finished job's entry stays in that index, dead, until a vacuum. A plain index scan marks
    /// each dead entry it meets, so later scans pass over it without reading the table; a bitmap
    /// scan, which the planner prefers for a count, never does. So while nothing but bitmap scans
    /// read that index, every claim read every job that ran since the last vacuum: measured, a count
    /// grew from 0.3 to 1.1 ms over 20,000 jobs, and the outcomes' `UPDATE`, which intersects that
    /// index with its ids, grew with it.
    ///
    /// A page of candidates that leaves out a type at its limit reads the ready index past the jobs
    /// it holds back. When that type is nearly every job and the table is small, or has no
    /// statistics yet (a new schema before its first analyze), the planner expects the page to find
    /// one row and reads the whole table and sorts it instead: 3 ms on 20,000 jobs against 1.3 ms by
    /// the index (`EXPLAIN ANALYZE`), on every claim while the limit is full. Every statement of a
    /// claim has an index to walk in order or rows to look up by key, so neither kind of scan is
    /// ever the better one here.
    ///
    /// On PostgreSQL the claim also commits without waiting for its WAL flush, as a plain claim does
    /// (`LAX_COMMIT` in `store/postgres/lease.rs` says why that loses nothing acknowledged): under
    /// binding limits, claims and outcomes follow one another, and each flush is on that path.
    pub fn begin_claim(&self) -> &'static str {
        match self.kind {
            StoreKind::Postgres => concat!("BEGIN; SET LOCAL synchronous_commit = off; ", pg_claim_scans!()),
            _ => self.begin_write,
        }
    }

    /// How the transaction of outcomes and a limited claim begins (`Store::finish_and_claim`): as
    /// a limited claim's, but on PostgreSQL committed as any write is, waiting for the flush, since
    /// it holds outcomes.
    pub fn begin_outcomes_and_claim(&self) -> &'static str {
        match self.kind {
            StoreKind::Postgres => concat!("BEGIN; ", pg_claim_scans!()),
            _ => self.begin_write,
        }
    }

    /// How the look before a limited claim (which only reads) begins, where it needs a transaction
    /// of its own: on PostgreSQL, to read with a claim's planner settings ([`Dialect::begin_claim`]),
    /// as it reads the same pages of candidates. `None`: it reads outside any transaction (SQLite's
    /// would be a write transaction, holding the file the look exists not to hold).
    pub fn begin_look(&self) -> Option<&'static str> {
        match self.kind {
            StoreKind::Postgres => Some(concat!("BEGIN READ ONLY; ", pg_claim_scans!())),
            _ => None,
        }
    }

    /// [`Dialect::job_columns`] without the `j.` alias, as a `RETURNING` clause names the columns of
    /// the table it changes.
    /// `AND …`: the job has no expiry or one still ahead by the server's clock, the condition every
    /// claim adds, so that no job starts after its expiry. `alias` prefixes the columns (`"j."`, or
    /// `""` for none).
    pub fn unexpired(&self, alias: &str) -> String {
        format!(
            " AND ({alias}expires_at IS NULL OR {alias}expires_at > {})",
            self.now_millis
        )
    }

    pub fn returned_job_columns(&self) -> String {
        self.job_columns.replace("j.", "")
    }

    /// The clause that makes an `INSERT` on a table keyed by `key` update `columns` instead.
    pub fn upsert(&self, key: &str, columns: &[&str]) -> String {
        match self.upsert {
            Upsert::OnConflict => {
                let sets: Vec<String> = columns.iter().map(|c| format!("{c} = excluded.{c}")).collect();
                format!(" ON CONFLICT ({key}) DO UPDATE SET {}", sets.join(", "))
            }
            Upsert::OnDuplicateKey => {
                let sets: Vec<String> = columns.iter().map(|c| format!("{c} = VALUES({c})")).collect();
                format!(" ON DUPLICATE KEY UPDATE {}", sets.join(", "))
            }
        }
    }
}

/// Never unreachable: a store that opens a file, where every failure is a refusal.
impl Dialect {
    /// The tail of an `INSERT` that leaves an existing row with the same `key` as it is.
    pub fn insert_ignoring(&self, key: &str) -> String {
        match self.upsert {
            Upsert::OnConflict => format!(" ON CONFLICT ({key}) DO NOTHING"),
            Upsert::OnDuplicateKey => format!(" ON DUPLICATE KEY UPDATE {key} = {key}"),
        }
    }
}

pub(crate) fn never(_: &sqlx::Error) -> bool {
    false
}

/// True for the driver errors that mean no server answered: network and TLS failures, and a pool that
/// timed out or closed. Each server store adds the error codes of its own server.
pub(crate) fn is_network_error(e: &sqlx::Error) -> bool {
    matches!(
        e,
        sqlx::Error::Io(_)
            | sqlx::Error::Tls(_)
            | sqlx::Error::PoolTimedOut
            | sqlx::Error::PoolClosed
            | sqlx::Error::WorkerCrashed
    )
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A dialect for unit tests of statement text.
    pub(crate) fn dialect() -> Dialect {
        Dialect::of(StoreKind::Sqlite)
    }

    #[test]
    fn upserts_are_spelled_per_dialect() {
        let mut d = dialect();
        assert_eq!(
            d.upsert("id", &["a", "b"]),
            " ON CONFLICT (id) DO UPDATE SET a = excluded.a, b = excluded.b"
        );
        d.upsert = Upsert::OnDuplicateKey;
        assert_eq!(d.upsert("id", &["a"]), " ON DUPLICATE KEY UPDATE a = VALUES(a)");
    }
}
