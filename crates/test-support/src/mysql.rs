//! MySQL test stores: a database per test (`jobq_test_<random>`) on the server of `JOBQ_TEST_MYSQL_URL`
//! (default `mysql://root@127.0.0.1:3306/test`), created by the fixture through a connection of its
//! own; the store URL names it, and the sandbox drops it. Also what the server-store suite needs of
//! MySQL ([`Mysql`]), and a private MariaDB for the test that restarts its server ([`PrivateMariadb`]).

use std::process::Stdio;
use std::time::Duration;

use jobq::store::StoreKind;
use sqlx::{Connection, Executor, MySqlConnection};
use tokio::process::Command;

use super::server::{Killer, PrivateServer, ServerStore, SqlStore};
use super::{ServerSandbox, TestStore, eventually, fresh_name, private, server_hint, server_url, shown};

/// The URL of the test MySQL server's base database.
pub fn mysql_url() -> String {
    server_url(StoreKind::Mysql)
}

/// `base` with its database replaced by `database` (query options kept).
pub fn with_database(base: &str, database: &str) -> String {
    let mut url = url::Url::parse(base).unwrap_or_else(|e| panic!("JOBQ_TEST_MYSQL_URL: {e}"));
    url.set_path(&format!("/{database}"));
    url.to_string()
}

/// A connection to the test server's base database, for creating and dropping test databases and for
/// tests that play an application or an operator.
pub async fn mysql_admin() -> MySqlConnection {
    let url = mysql_url();
    MySqlConnection::connect(&url)
        .await
        .unwrap_or_else(|e| panic!("connecting to {}: {e}\n{}", shown(&url), server_hint(StoreKind::Mysql)))
}

/// A connection of an application's own to `database`.
pub async fn app_connection(database: &str) -> MySqlConnection {
    MySqlConnection::connect(&with_database(&mysql_url(), database))
        .await
        .expect("connecting as the application")
}

/// A fresh MySQL store in a database of its own, migrated.
pub async fn mysql_store() -> TestStore {
    mysql_store_in(&fresh_name()).await
}

/// A MySQL store in a new database `database`, migrated; the database is dropped with the store.
pub async fn mysql_store_in(database: &str) -> TestStore {
    // The store connects to the database, so it must exist first.
    let sandbox = create_database(database).await;
    let what = format!("MySQL test store (database {database})");
    super::migrated_store(with_database(&mysql_url(), database), || sandbox, &what).await
}

/// Creates `database` (utf8mb4) on the test server and takes charge of it: dropped with everything in
/// it when the sandbox drops.
pub async fn create_database(database: &str) -> ServerSandbox {
    let mut admin = mysql_admin().await;
    let sql = format!(
        "CREATE DATABASE `{}` CHARACTER SET utf8mb4 COLLATE utf8mb4_bin",
        database.replace('`', "``")
    );
    admin
        .execute(sql.as_str())
        .await
        .unwrap_or_else(|e| panic!("creating the test database {database}: {e}"));
    let location = format!("MySQL database {database} on {}", shown(&mysql_url()));
    let database = database.to_string();
    ServerSandbox::new(location, move || async move {
        let mut conn = MySqlConnection::connect(&mysql_url()).await?;
        let sql = format!("DROP DATABASE IF EXISTS `{}`", database.replace('`', "``"));
        conn.execute(sql.as_str()).await?;
        conn.close().await?;
        Ok(())
    })
}

/// The connections to `database` but the caller's.
async fn connections(admin: &mut MySqlConnection, database: &str) -> Vec<i64> {
    sqlx::query_scalar(
        "SELECT CAST(id AS SIGNED) FROM information_schema.processlist WHERE db = ? AND id <> CONNECTION_ID()",
    )
    .bind(database)
    .fetch_all(&mut *admin)
    .await
    .expect("processlist")
}

/// Kills every connection to `database` but the caller's; returns how many.
pub async fn kill_connections(admin: &mut MySqlConnection, database: &str) -> usize {
    let ids = connections(admin, database).await;
    for id in &ids {
        // The connection may have gone by itself meanwhile.
        let _ = admin.execute(format!("KILL CONNECTION {id}").as_str()).await;
    }
    ids.len()
}

/// MySQL, for the server-store suite.
pub struct Mysql;

impl ServerStore for Mysql {
    const KIND: StoreKind = StoreKind::Mysql;
    type Killer = DatabaseConnections;

    async fn killable(&self, store: &TestStore, database: &str) -> (String, DatabaseConnections) {
        // Connections are told apart by their database, which is this test's own: the kills reach the
        // test's own store too, which must ride them out as well.
        let connections = DatabaseConnections {
            database: database.to_string(),
            admin: mysql_admin().await,
        };
        (store.url().to_string(), connections)
    }
}

/// Every connection to one test's database.
pub struct DatabaseConnections {
    database: String,
    admin: MySqlConnection,
}

impl Killer for DatabaseConnections {
    async fn open(&mut self) -> usize {
        connections(&mut self.admin, &self.database).await.len()
    }

    async fn kill(&mut self) -> usize {
        kill_connections(&mut self.admin, &self.database).await
    }
}

impl SqlStore for Mysql {
    type App = MySqlConnection;
    type Private = PrivateMariadb;
    const ORDERS_TABLE: &'static str = "CREATE TABLE orders (id INT PRIMARY KEY) ENGINE = InnoDB";
    const GUIDE: &'static str = "mysql.md";

    async fn insert_type_only(app: &mut MySqlConnection) -> Option<String> {
        app.execute("INSERT INTO jobq_jobs (job_type) VALUES ('order.audit')")
            .await
            .expect("an insert with the type alone");
        // MySQL has no `RETURNING`.
        None
    }

    async fn sessions_without_goodbye(url: &str) -> u64 {
        let mut conn = MySqlConnection::connect(url)
            .await
            .expect("connecting to the private server");
        let (_, aborted): (String, String) = sqlx::query_as("SHOW GLOBAL STATUS LIKE 'Aborted_clients'")
            .fetch_one(&mut conn)
            .await
            .expect("the Aborted_clients status");
        conn.close().await.expect("closing");
        aborted.parse().expect("a count")
    }

    async fn drop_a_session_without_goodbye(url: &str) {
        let conn = MySqlConnection::connect(url)
            .await
            .expect("connecting to the private server");
        // sqlx's drop closes the socket without MySQL's COM_QUIT.
        drop(conn);
    }

    async fn empty_corner(&self) -> (String, String, ServerSandbox) {
        let database = fresh_name();
        let sandbox = create_database(&database).await;
        (with_database(&mysql_url(), &database), database, sandbox)
    }
}

/// A MariaDB server of the test's own in a temp dir, on 127.0.0.1 at a free port, without grant
/// tables (root needs no password). Killed when dropped.
pub struct PrivateMariadb {
    dir: tempfile::TempDir,
    port: u16,
    server: Option<std::process::Child>,
}

impl PrivateMariadb {
    /// One of MariaDB's client programs, talking to this server as root.
    fn client(&self, program: &str) -> Command {
        let mut cmd = Command::new(program);
        cmd.args(["-h", "127.0.0.1", "-P", &self.port.to_string(), "-u", "root"]);
        cmd
    }
}

impl PrivateServer for PrivateMariadb {
    /// `mariadb-install-db` into a fresh folder, start, and create the database `jobq`.
    async fn start() -> PrivateMariadb {
        let dir = private::server_dir("jobq-mariadb-", "mysql");
        let port = private::free_port();
        let mut install = Command::new("mariadb-install-db");
        install
            .arg("--no-defaults")
            .arg(format!("--datadir={}", dir.path().join("data").display()))
            .arg("--skip-test-db")
            .arg("--auth-root-authentication-method=normal");
        if private::running_as_root() {
            install.arg("--user=mysql");
        }
        let out = install.output().await.unwrap_or_else(|e| {
            panic!("running mariadb-install-db: {e}; the restart test needs MariaDB's server programs (Debian: apt install mariadb-server)")
        });
        assert!(
            out.status.success(),
            "mariadb-install-db failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let mut server = PrivateMariadb {
            dir,
            port,
            server: None,
        };
        server.start_again().await;
        let created = server
            .client("mariadb")
            .args(["-e", "CREATE DATABASE jobq"])
            .status()
            .await
            .unwrap();
        assert!(created.success(), "creating the private server's database failed");
        server
    }

    fn url(&self) -> String {
        format!("mysql://root@127.0.0.1:{}/jobq", self.port)
    }

    async fn stop(&mut self) {
        let _ = self.client("mariadb-admin").arg("shutdown").output().await;
        if let Some(mut server) = self.server.take() {
            let _ = tokio::task::spawn_blocking(move || server.wait()).await;
        }
    }

    async fn start_again(&mut self) {
        let mut cmd = std::process::Command::new("mariadbd");
        cmd.arg("--no-defaults")
            .arg(format!("--datadir={}", self.dir.path().join("data").display()))
            .arg(format!("--port={}", self.port))
            .arg("--bind-address=127.0.0.1")
            .arg(format!("--socket={}", self.dir.path().join("sock").display()))
            .arg("--skip-grant-tables")
            .arg("--innodb-buffer-pool-size=32M")
            .arg(format!("--log-error={}", self.dir.path().join("error.log").display()))
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        if private::running_as_root() {
            cmd.arg("--user=mysql");
        }
        self.server = Some(cmd.spawn().unwrap_or_else(|e| panic!("starting mariadbd: {e}")));
        let error_log = self.dir.path().join("error.log");
        eventually(
            "the private MariaDB to answer a ping",
            Duration::from_secs(30),
            async || {
                let pinged = self.client("mariadb-admin").arg("ping").output().await;
                match pinged {
                    Ok(out) if out.status.success() => Ok(()),
                    _ => Err(std::fs::read_to_string(&error_log).unwrap_or_default()),
                }
            },
        )
        .await;
    }
}

impl Drop for PrivateMariadb {
    fn drop(&mut self) {
        if let Some(mut server) = self.server.take() {
            let _ = server.kill();
            let _ = server.wait();
        }
    }
}
