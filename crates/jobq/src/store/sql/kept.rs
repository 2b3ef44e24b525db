//! Connections kept apart from the pool for the calls of one statement about one job that
//! applications make one after another: the plain enqueue of one job and `get`. A web request's
//! enqueue is the call jobq is measured by, and two costs of going through sqlx's pool fell on it:
//!
//! * The pool pings every connection it takes back (a round trip in a task of its own, in sqlx's
//!   release, which no option turns off): the server answers it and this host's CPU pays for it, a
//!   round trip for every call.
//! * The pool's sessions are set up for batches. PostgreSQL's plan every execution of a prepared
//!   statement for its parameters (`plan_cache_mode = force_custom_plan`, because the batch statements
//!   join arrays whose size only the parameters tell), so one job's `INSERT` was planned again on
//!   every call. A kept connection's session leaves the planner to choose (`Dialect::kept_session`):
//!   after five executions it runs the statement's one generic plan.
//!
//! A few connections are kept (the URL's `max_connections` is for the pool; these come on top, at
//! most [`KEPT`]). A call that finds them all in use takes the pool's way, so concurrent producers
//! are never queued behind one connection. A connection whose call failed other than by the server
//! refusing the statement, or whose call was abandoned half-way (its future dropped, a time-out),
//! is closed instead of kept; one that sat unused for a while is pinged before its next call, as
//! the pool's are. A one-shot command keeps none: its one connection stays the pool's.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use futures_util::future::BoxFuture;
use sqlx::pool::PoolConnectionMetadata;
use sqlx::{Connection, Database, Executor, Pool};
use tokio::sync::{Semaphore, SemaphorePermit};

use super::Dialect;

/// Connections kept at most, besides the pool's.
pub(crate) const KEPT: usize = 4;

/// How long a connection may sit unused before it is pinged ahead of its next use (as the pools do:
/// an application enqueuing now and then survives a server's restart unnoticed).
const PING_WHEN_IDLE_FOR: Duration = Duration::from_secs(1);

/// The pools' check before a connection's use (`before_acquire`): a ping costs a round trip, so only a
/// connection idle for [`PING_WHEN_IDLE_FOR`] gets one, while a busy worker's connections, used moments
/// ago, go straight to work. One that died since is found by the call that fails on it, which the
/// worker retries with back-off.
pub(crate) fn ping_if_idle<DB: Database>(
    connection: &mut DB::Connection,
    meta: PoolConnectionMetadata,
) -> BoxFuture<'_, Result<bool, sqlx::Error>> {
    Box::pin(async move {
        if meta.idle_for < PING_WHEN_IDLE_FOR {
            return Ok(true);
        }
        Ok(connection.ping().await.is_ok())
    })
}

/// The kept connections of one store (shared by its clones).
pub(crate) struct KeptConnections<DB: Database> {
    /// The connections not in use, most recently used last.
    idle: Mutex<Vec<Idle<DB>>>,
    /// One permit per call under way; none left means "take the pool's way". Only a call brings a
    /// connection into `idle`, so there are never more than this many kept connections either.
    permits: Semaphore,
    /// How many permits there are.
    most: usize,
    /// Its store's dialect: what a new connection runs after the pool's own set-up
    /// (`kept_session`, see the module's doc), and which server errors mean the connection is gone.
    dialect: &'static Dialect,
}

/// A kept connection between calls, and since when.
struct Idle<DB: Database> {
    connection: DB::Connection,
    since: Instant,
}

impl<DB: Database> std::fmt::Debug for KeptConnections<DB> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KeptConnections")
            .field("free", &self.permits.available_permits())
            .finish_non_exhaustive()
    }
}

impl<DB: Database> KeptConnections<DB> {
    /// Keeps up to `most` connections (none for a one-shot use) to a server of `dialect`.
    pub fn new(most: usize, dialect: &'static Dialect) -> KeptConnections<DB> {
        KeptConnections {
            idle: Mutex::new(Vec::new()),
            permits: Semaphore::new(most),
            most,
            dialect,
        }
    }

    /// Waits for the calls under way, then closes every kept connection with the server's goodbye;
    /// later calls take the pool's way (see [`super::Sql::close`]).
    pub async fn close(&self) {
        if let Ok(all) = self.permits.acquire_many(self.most as u32).await {
            all.forget();
        }
        self.permits.close();
        let idle = std::mem::take(&mut *self.idle.lock().expect("kept connections' lock"));
        for idle in idle {
            let _ = idle.connection.close().await;
        }
    }

    /// A call on a kept connection, or `None` when every one is in use (or none is kept): the caller
    /// then takes the pool's way. The call is one statement about one job that may run twice without
    /// harm: a read, or an insert of a job whose id is its key (if the first one did commit before
    /// its connection broke, the second finds the id taken, as an enqueue of that id would). It runs
    /// as a loop, so that the statement is written once:
    ///
    /// ```ignore
    /// if let Some(mut call) = kept.call(&pool) {
    ///     loop {
    ///         let result = statement.execute(call.connection().await?).await;
    ///         if let Some(result) = call.answer(result) {
    ///             return result;
    ///         }
    ///     }
    /// }
    /// ```
    pub fn call<'a>(&'a self, pool: &'a Pool<DB>) -> Option<KeptCall<'a, DB>> {
        let permit = self.permits.try_acquire().ok()?;
        Some(KeptCall {
            owner: self,
            pool,
            connection: None,
            broke_once: false,
            _permit: permit,
        })
    }

    /// The most recently used idle connection (pinged first if it sat unused for a while), or a new one.
    async fn idle_or_new(&self, pool: &Pool<DB>) -> Result<DB::Connection, sqlx::Error>
    where
        for<'c> &'c mut DB::Connection: Executor<'c, Database = DB>,
    {
        loop {
            let idle = self.idle.lock().expect("kept connections' lock").pop();
            let Some(mut idle) = idle else { break };
            if idle.since.elapsed() < PING_WHEN_IDLE_FOR || idle.connection.ping().await.is_ok() {
                return Ok(idle.connection);
            }
            // Dead while idle: dropped; try the next one.
        }
        self.answering(pool).await
    }

    /// A connection out of `pool` (its connect options and set-up), taken out of it and set up as a
    /// kept one; the set-up's round trip (or a ping) shows that it answers. The pool may hand out
    /// connections a server dropped since their last use; each is closed and the next one tried,
    /// until the pool opens a new one.
    async fn answering(&self, pool: &Pool<DB>) -> Result<DB::Connection, sqlx::Error>
    where
        for<'c> &'c mut DB::Connection: Executor<'c, Database = DB>,
    {
        let mut tries = pool.options().get_max_connections() + 1;
        loop {
            let mut connection = pool.acquire().await?.detach();
            let answered = match self.dialect.kept_session {
                Some(session) => connection.execute(session).await.map(drop),
                None => connection.ping().await,
            };
            tries -= 1;
            match answered {
                Ok(()) => return Ok(connection),
                Err(e) if tries == 0 || !self.is_broken(&e) => return Err(e),
                Err(_) => {}
            }
        }
    }

    /// Whether a failure was the connection's (I/O, protocol, a time-out, the server ending the
    /// session), after which nobody knows the connection's state, rather than the server refusing the
    /// statement (a unique key, say).
    fn is_broken(&self, e: &sqlx::Error) -> bool {
        !matches!(e, sqlx::Error::Database(_)) || (self.dialect.is_unreachable)(e)
    }

    fn keep(&self, connection: DB::Connection) {
        let idle = Idle {
            connection,
            since: Instant::now(),
        };
        self.idle.lock().expect("kept connections' lock").push(idle);
    }
}

/// One call on a kept connection (see [`KeptConnections::call`]). Dropped before its answer (the
/// caller's future abandoned half-way, a time-out), it closes the connection, whose state nobody
/// knows.
pub(crate) struct KeptCall<'a, DB: Database> {
    owner: &'a KeptConnections<DB>,
    pool: &'a Pool<DB>,
    /// The connection of the try under way.
    connection: Option<DB::Connection>,
    /// Whether a try's connection broke already: the next answer is final.
    broke_once: bool,
    _permit: SemaphorePermit<'a>,
}

impl<DB: Database> KeptCall<'_, DB> {
    /// The connection for this try. Fails when no connection can be had.
    pub async fn connection(&mut self) -> Result<&mut DB::Connection, sqlx::Error>
    where
        for<'c> &'c mut DB::Connection: Executor<'c, Database = DB>,
    {
        if self.connection.is_none() {
            let connection = if self.broke_once {
                self.owner.answering(self.pool).await?
            } else {
                self.owner.idle_or_new(self.pool).await?
            };
            self.connection = Some(connection);
        }
        Ok(self.connection.as_mut().expect("just set"))
    }

    /// The try's result as the call's answer, the connection kept for the next call; or `None` when
    /// the connection broke on the first try, which closes it with every idle one (a server that
    /// dropped one has likely dropped them all): the caller tries once more, on a connection that
    /// answers.
    pub fn answer<T>(&mut self, result: Result<T, sqlx::Error>) -> Option<Result<T, sqlx::Error>> {
        let connection = self.connection.take();
        match &result {
            Err(e) if self.owner.is_broken(e) => {
                if self.broke_once {
                    return Some(result);
                }
                self.broke_once = true;
                self.owner.idle.lock().expect("kept connections' lock").clear();
                None
            }
            _ => {
                if let Some(connection) = connection {
                    self.owner.keep(connection);
                }
                Some(result)
            }
        }
    }
}
