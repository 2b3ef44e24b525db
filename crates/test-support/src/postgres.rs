//! PostgreSQL test stores: a schema per test (`jobq_test_<random>`) on the database of
//! `JOBQ_TEST_POSTGRES_URL` (default `postgres://postgres@127.0.0.1:5432/test`). The store URL names it
//! with `?schema=`, `migrate()` creates it, and the sandbox drops it with `CASCADE` through a connection
//! of its own. Also what the server-store suite needs of PostgreSQL ([`Postgres`]), and a private
//! cluster for the test that restarts its server ([`PrivatePostgres`]).

use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use jobq::store::StoreKind;
use sqlx::{Connection, Executor, PgConnection};
use tempfile::TempDir;

use super::server::{Killer, PrivateServer, ServerStore, SqlStore};
use super::{ServerSandbox, TestStore, eventually, fresh_name, private, server_url, shown, with_option};

/// The base URL of the test PostgreSQL database (no `schema=` option).
pub fn postgres_url() -> String {
    server_url(StoreKind::Postgres)
}

/// `base` with the jobq option `schema=NAME` added.
pub fn with_schema(base: &str, schema: &str) -> String {
    with_option(base, "schema", schema)
}

/// A fresh PostgreSQL store in a schema of its own, migrated.
pub async fn postgres_store() -> TestStore {
    postgres_store_in(&fresh_name()).await
}

/// A PostgreSQL store in `schema` (created by the migration), migrated; the schema is dropped with
/// the store.
pub async fn postgres_store_in(schema: &str) -> TestStore {
    let base = postgres_url();
    // The sandbox exists before the schema does, so a failed migration still cleans up after itself.
    let what = format!("PostgreSQL test store (schema {schema})");
    super::migrated_store(with_schema(&base, schema), || sandbox(&base, schema), &what).await
}

/// Takes charge of `schema` (which may not exist yet) on the database `url` names: dropped with
/// everything in it when the sandbox drops.
pub fn sandbox(url: &str, schema: &str) -> ServerSandbox {
    let location = format!("PostgreSQL schema {schema} on {}", shown(url));
    let (url, schema) = (url.to_string(), schema.to_string());
    ServerSandbox::new(location, move || async move {
        let mut conn = PgConnection::connect(&url).await?;
        let sql = format!("DROP SCHEMA IF EXISTS \"{}\" CASCADE", schema.replace('"', "\"\""));
        conn.execute(sql.as_str()).await?;
        conn.close().await?;
        Ok(())
    })
}

/// A connection to the test database outside any store's schema, as an operator opens one.
pub async fn admin() -> PgConnection {
    let url = postgres_url();
    PgConnection::connect(&url)
        .await
        .unwrap_or_else(|e| panic!("connecting to {}: {e}", shown(&url)))
}

/// A connection of an application's own, with `schema` on its search path.
pub async fn app_connection(schema: &str) -> PgConnection {
    let mut conn = admin().await;
    conn.execute(format!("SET search_path TO \"{schema}\"").as_str())
        .await
        .expect("setting the search path");
    conn
}

/// PostgreSQL, for the server-store suite.
pub struct Postgres;

impl ServerStore for Postgres {
    const KIND: StoreKind = StoreKind::Postgres;
    type Killer = Sessions;

    async fn killable(&self, store: &TestStore, schema: &str) -> (String, Sessions) {
        // The sessions (pool and listener) of a store opened with this name carry it, and only they are
        // terminated: other tests share the server.
        let name = format!("jobq-kill-{schema}");
        let url = with_option(store.url(), "application_name", &name);
        (
            url,
            Sessions {
                name,
                admin: admin().await,
            },
        )
    }
}

/// The sessions whose `application_name` starts with one test's own name.
pub struct Sessions {
    name: String,
    admin: PgConnection,
}

impl Killer for Sessions {
    async fn open(&mut self) -> usize {
        let open: i64 =
            sqlx::query_scalar("SELECT count(*) FROM pg_stat_activity WHERE application_name LIKE $1 || '%'")
                .bind(&self.name)
                .fetch_one(&mut self.admin)
                .await
                .expect("pg_stat_activity");
        open as usize
    }

    async fn kill(&mut self) -> usize {
        let killed: i64 = sqlx::query_scalar(
            "SELECT count(*) FROM (SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
             WHERE application_name LIKE $1 || '%') AS t",
        )
        .bind(&self.name)
        .fetch_one(&mut self.admin)
        .await
        .expect("pg_terminate_backend");
        killed as usize
    }
}

impl SqlStore for Postgres {
    type App = PgConnection;
    type Private = PrivatePostgres;
    const ORDERS_TABLE: &'static str = "CREATE TABLE orders (id int PRIMARY KEY)";
    const GUIDE: &'static str = "postgresql.md";

    async fn insert_type_only(app: &mut PgConnection) -> Option<String> {
        let id = sqlx::query_scalar("INSERT INTO jobq_jobs (job_type) VALUES ('order.audit') RETURNING id")
            .fetch_one(app)
            .await
            .expect("an insert with the type alone");
        Some(id)
    }

    async fn sessions_without_goodbye(url: &str) -> u64 {
        let mut conn = PgConnection::connect(url)
            .await
            .expect("connecting to the private server");
        // Counted per database as each session ends (PostgreSQL 14 and later).
        let abandoned: i64 =
            sqlx::query_scalar("SELECT COALESCE(sum(sessions_abandoned), 0)::bigint FROM pg_stat_database")
                .fetch_one(&mut conn)
                .await
                .expect("pg_stat_database.sessions_abandoned");
        conn.close().await.expect("closing");
        abandoned as u64
    }

    async fn drop_a_session_without_goodbye(url: &str) {
        let conn = PgConnection::connect(url)
            .await
            .expect("connecting to the private server");
        // sqlx's drop closes the socket without PostgreSQL's Terminate message.
        drop(conn);
    }

    async fn empty_corner(&self) -> (String, String, ServerSandbox) {
        // The schema does not exist until a migration creates it.
        let schema = fresh_name();
        let base = postgres_url();
        (with_schema(&base, &schema), schema.clone(), sandbox(&base, &schema))
    }
}

/// A PostgreSQL cluster of the test's own in a temp dir, listening on 127.0.0.1 at a free port, with
/// trust authentication. Stopped (immediately) when dropped.
pub struct PrivatePostgres {
    dir: TempDir,
    port: u16,
}

impl PrivatePostgres {
    fn data(&self) -> String {
        self.dir.path().join("data").display().to_string()
    }

    /// One of PostgreSQL's own programs, run as `postgres` when we are root.
    fn pg_command(program: &str) -> Command {
        let bin = pg_bindir().join(program);
        if private::running_as_root() {
            let mut cmd = Command::new("runuser");
            cmd.args(["-u", "postgres", "--"]).arg(&bin);
            cmd
        } else {
            Command::new(&bin)
        }
    }

    /// Runs one of PostgreSQL's own programs, failing the test with how to install them when they are
    /// missing.
    async fn pg(&self, program: &str, args: &[&str]) {
        let mut cmd = tokio::process::Command::from(Self::pg_command(program));
        let out = cmd
            .args(args)
            .current_dir(self.dir.path())
            .output()
            .await
            .unwrap_or_else(|e| {
                panic!(
                    "running {program} for a private PostgreSQL cluster: {e}; the restart test needs PostgreSQL's \
                     server programs (Debian: apt install postgresql)"
                )
            });
        if !out.status.success() {
            let log = std::fs::read_to_string(self.dir.path().join("server.log")).unwrap_or_default();
            let tail: Vec<&str> = log.lines().rev().take(10).collect();
            panic!(
                "{program} {args:?} failed: {}{}\nthe server's log ends:\n{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr),
                tail.into_iter().rev().collect::<Vec<_>>().join("\n")
            );
        }
    }

    /// Crashes the server's processes: SIGKILL to the postmaster and every process it started, at
    /// once, with no checkpoint and no flush of what sits in shared memory (WAL not yet written out
    /// is gone; what was written survives in the OS, as it would a crash of the server but not of the
    /// machine). Returns once none of them is left, so that [`PrivateServer::start_again`] can start
    /// it, which then recovers from the WAL.
    pub async fn crash(&mut self) {
        let pid_file = self.dir.path().join("data").join("postmaster.pid");
        let text = std::fs::read_to_string(&pid_file).unwrap_or_else(|e| panic!("reading {}: {e}", pid_file.display()));
        let postmaster: i32 = text
            .lines()
            .next()
            .and_then(|l| l.trim().parse().ok())
            .expect("the postmaster's pid");
        let mut family = children_of(postmaster);
        family.push(postmaster);
        for &pid in &family {
            // SAFETY: kill has no memory-safety preconditions; these are the private cluster's processes.
            unsafe {
                libc::kill(pid, libc::SIGKILL);
            }
        }
        eventually(
            "the crashed cluster's processes to exit",
            Duration::from_secs(30),
            async || !family.iter().any(|&pid| alive(pid)),
        )
        .await;
        // The killed postmaster may stay a zombie, never reaped (its parent, pg_ctl, is gone, and the
        // container's first process may not reap orphans); PostgreSQL would take its pid for a server
        // still running in the directory, or on its socket. No process of the cluster is left: both
        // lock files are stale.
        let socket_lock = self.dir.path().join(format!(".s.PGSQL.{}.lock", self.port));
        for lock in [&pid_file, &socket_lock] {
            std::fs::remove_file(lock).unwrap_or_else(|e| panic!("removing {}: {e}", lock.display()));
        }
    }
}

/// The processes whose parent is `parent` (from /proc).
fn children_of(parent: i32) -> Vec<i32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/status")).is_ok_and(|status| {
                status
                    .lines()
                    .any(|l| l.strip_prefix("PPid:").is_some_and(|p| p.trim() == parent.to_string()))
            })
        })
        .collect()
}

/// True while `pid` runs (a zombie waiting to be reaped has ended).
fn alive(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        stat.rsplit_once(')')
            .is_some_and(|(_, rest)| !rest.trim_start().starts_with('Z'))
    })
}

impl PrivateServer for PrivatePostgres {
    /// `initdb` into a fresh folder, then start.
    async fn start() -> PrivatePostgres {
        let mut server = PrivatePostgres {
            dir: private::server_dir("jobq-pg-", "postgres"),
            port: private::free_port(),
        };
        let data = server.data();
        server
            .pg(
                "initdb",
                &["-D", &data, "-A", "trust", "-U", "postgres", "--no-sync", "-E", "UTF8"],
            )
            .await;
        server.start_again().await;
        server
    }

    fn url(&self) -> String {
        format!("postgres://postgres@127.0.0.1:{}/postgres", self.port)
    }

    async fn stop(&mut self) {
        self.pg("pg_ctl", &["-D", &self.data(), "-m", "fast", "-w", "stop"])
            .await;
    }

    async fn start_again(&mut self) {
        let options = format!(
            "-p {} -k {} -c listen_addresses=127.0.0.1 -c fsync=off",
            self.port,
            self.dir.path().display()
        );
        let log = self.dir.path().join("server.log").display().to_string();
        // `-w` waits until the server accepts connections.
        self.pg(
            "pg_ctl",
            &["-D", &self.data(), "-l", &log, "-o", &options, "-w", "start"],
        )
        .await;
    }
}

impl Drop for PrivatePostgres {
    fn drop(&mut self) {
        let _ = Self::pg_command("pg_ctl")
            .args(["-D", &self.data(), "-m", "immediate", "-w", "stop"])
            .output();
    }
}

/// Where PostgreSQL's server programs are: `pg_config --bindir`, else the newest Debian install.
fn pg_bindir() -> PathBuf {
    if let Ok(out) = Command::new("pg_config").arg("--bindir").output()
        && out.status.success()
    {
        return PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    }
    PathBuf::from("/usr/lib/postgresql/15/bin")
}
