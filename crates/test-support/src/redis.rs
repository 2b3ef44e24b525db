//! Redis test stores: a key prefix per test (`jobq_test_<random>:`) on `JOBQ_TEST_REDIS_URL` (default
//! `redis://127.0.0.1:6379/0`), named in the store URL with `?prefix=`; the sandbox deletes the prefix's
//! keys (SCAN + UNLINK). Also `redis-cli` for tests that play a client knowing nothing of jobq, what the
//! server-store suite needs of Redis ([`Redis`]), a private server to kill ([`PrivateRedis`]), and
//! the commands clients send it, as `MONITOR` shows them ([`Monitor`]).

use std::collections::HashSet;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use jobq::store::StoreKind;

use super::server::{Killer, ServerStore};
use super::{ServerSandbox, TestStore, eventually, fresh_name, server_url, shown, with_option};

/// The base URL of the test Redis server (no `prefix=` option).
pub fn redis_url() -> String {
    server_url(StoreKind::Redis)
}

/// `base` with the jobq option `prefix=PREFIX` added.
pub fn with_prefix(base: &str, prefix: &str) -> String {
    with_option(base, "prefix", prefix)
}

/// A fresh key prefix, `jobq_test_`, 16 random hex digits and a colon.
pub fn fresh_prefix() -> String {
    format!("{}:", fresh_name())
}

/// A fresh Redis store under a key prefix of its own, migrated.
pub async fn redis_store() -> TestStore {
    redis_store_in(&fresh_prefix()).await
}

/// A Redis store under `prefix`, migrated; the prefix's keys are deleted with the store.
pub async fn redis_store_in(prefix: &str) -> TestStore {
    let base = redis_url();
    let what = format!("Redis test store (prefix {prefix})");
    super::migrated_store(with_prefix(&base, prefix), || sandbox(&base, prefix), &what).await
}

/// Takes charge of the keys under `prefix` on the server `url` names: deleted when the sandbox drops.
fn sandbox(url: &str, prefix: &str) -> ServerSandbox {
    let location = format!("Redis keys {prefix}* on {}", shown(url));
    let (url, prefix) = (url.to_string(), prefix.to_string());
    ServerSandbox::new(location, move || async move {
        let client = redis::Client::open(url.as_str())?;
        let mut conn = client.get_multiplexed_async_connection().await?;
        // Test prefixes are letters, digits, `_` and `:`: nothing for MATCH to expand. The inbox's side
        // keys start with the inbox key as a hash tag: `{<prefix>inbox:…}`.
        for pattern in [format!("{prefix}*"), format!("{{{prefix}*")] {
            let mut cursor: u64 = 0;
            loop {
                let (next, keys): (u64, Vec<String>) = redis::cmd("SCAN")
                    .arg(cursor)
                    .arg("MATCH")
                    .arg(&pattern)
                    .arg("COUNT")
                    .arg(1000)
                    .query_async(&mut conn)
                    .await?;
                if !keys.is_empty() {
                    redis::cmd("UNLINK").arg(&keys).query_async::<()>(&mut conn).await?;
                }
                if next == 0 {
                    break;
                }
                cursor = next;
            }
        }
        Ok(())
    })
}

/// Runs `redis-cli` against the test server with `args`; returns its output, failing on an error.
pub fn redis_cli(args: &[&str]) -> String {
    redis_cli_at(&redis_url(), args)
}

/// Runs `redis-cli -c` (which follows a cluster's redirections) against `url` with `args`; returns its
/// output, failing on an error.
pub fn redis_cli_at(url: &str, args: &[&str]) -> String {
    let out = Command::new("redis-cli")
        .args(["-c", "-u", url])
        .args(args)
        .output()
        .expect("running redis-cli (the Redis tests need it on PATH)");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success() && !text.starts_with("ERR"),
        "redis-cli {args:?}: {text} {}",
        String::from_utf8_lossy(&out.stderr)
    );
    text
}

/// Redis, for the server-store suite.
pub struct Redis;

impl ServerStore for Redis {
    const KIND: StoreKind = StoreKind::Redis;
    type Killer = AclUser;

    async fn killable(&self, _store: &TestStore, prefix: &str) -> (String, AclUser) {
        let user = AclUser::new();
        (user.url(prefix), user)
    }
}

/// A Redis user of one test's own, so that `CLIENT KILL USER` reaches that test's connections only;
/// deleted when dropped.
pub struct AclUser {
    name: String,
}

impl AclUser {
    /// A new user that may do anything. Not `Default`: making one writes to the server.
    #[allow(clippy::new_without_default)]
    pub fn new() -> AclUser {
        let name = fresh_name();
        redis_cli(&["ACL", "SETUSER", &name, "on", &format!(">{name}"), "~*", "&*", "+@all"]);
        AclUser { name }
    }

    /// The test server's URL under `prefix`, logging in as this user.
    pub fn url(&self, prefix: &str) -> String {
        let mut url = url::Url::parse(&redis_url()).expect("JOBQ_TEST_REDIS_URL");
        url.set_username(&self.name).expect("a URL that takes a user");
        url.set_password(Some(&self.name)).expect("a URL that takes a password");
        with_prefix(url.as_str(), prefix)
    }
}

impl Killer for AclUser {
    async fn open(&mut self) -> usize {
        let user = format!(" user={} ", self.name);
        redis_cli(&["CLIENT", "LIST"])
            .lines()
            .filter(|l| l.contains(&user))
            .count()
    }

    async fn kill(&mut self) -> usize {
        redis_cli(&["CLIENT", "KILL", "USER", &self.name])
            .trim()
            .parse()
            .unwrap_or(0)
    }
}

impl Drop for AclUser {
    fn drop(&mut self) {
        let _ = Command::new("redis-cli")
            .arg("-u")
            .arg(redis_url())
            .args(["ACL", "DELUSER", &self.name])
            .output();
    }
}

/// A Redis server of one test's own, on a free port, without persistence: it can be killed and started
/// again, empty, without disturbing the shared one.
pub struct PrivateRedis {
    port: u16,
    child: Child,
}

impl PrivateRedis {
    /// Starts a server on `port` and waits until it listens.
    pub async fn start(port: u16) -> PrivateRedis {
        let child = Command::new("redis-server")
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no"])
            .stdout(Stdio::null())
            .spawn()
            .expect("starting redis-server (the Redis tests need it on PATH)");
        let server = PrivateRedis { port, child };
        eventually(
            format!("redis-server on port {port} to listen"),
            Duration::from_secs(10),
            async || tokio::net::TcpStream::connect(("127.0.0.1", port)).await,
        )
        .await;
        server
    }

    /// The URL of a store on it.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/0", self.port)
    }

    /// Runs one command with `redis-cli` on it; panics if it fails.
    pub fn cli(&self, args: &[&str]) {
        let out = Command::new("redis-cli")
            .args(["-p", &self.port.to_string()])
            .args(args)
            .output()
            .expect("running redis-cli");
        assert!(
            out.status.success(),
            "redis-cli {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// Kills the server (SIGKILL: it loses everything) and waits until it is gone.
    pub fn kill(&mut self) {
        self.child.kill().expect("killing the private redis-server");
        self.child.wait().expect("waiting for the private redis-server");
    }
}

impl Drop for PrivateRedis {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The commands clients send a server, as `MONITOR` shows them (a `redis-cli` process): on a private
/// server nothing but the test sends any, so the count is exact.
pub struct Monitor {
    port: u16,
    child: Child,
    lines: Arc<Mutex<Vec<String>>>,
    seen: usize,
    marks: u32,
}

impl Monitor {
    /// Starts monitoring the private server and waits until the monitor is on.
    pub async fn start(server: &PrivateRedis) -> Monitor {
        let mut child = Command::new("redis-cli")
            .args(["-p", &server.port.to_string(), "monitor"])
            .stdout(Stdio::piped())
            .spawn()
            .expect("running redis-cli monitor");
        let lines = Arc::new(Mutex::new(Vec::new()));
        let out = BufReader::new(child.stdout.take().unwrap());
        let sink = lines.clone();
        std::thread::spawn(move || {
            for line in out.lines().map_while(Result::ok) {
                sink.lock().unwrap().push(line);
            }
        });
        let mut monitor = Monitor {
            port: server.port,
            child,
            lines,
            seen: 0,
            marks: 0,
        };
        monitor.commands().await;
        monitor
    }

    /// The names of the commands clients sent since the last call (not those scripts ran), in order:
    /// a marker sent by another client ends the span, and that client's commands are left out.
    pub async fn commands(&mut self) -> Vec<String> {
        self.marks += 1;
        let mark = format!("jobq-test-mark-{}", self.marks);
        let port = self.port.to_string();
        let lines = self.lines.clone();
        eventually(
            format!("the monitor to show {mark}"),
            Duration::from_secs(10),
            async || {
                let _ = Command::new("redis-cli").args(["-p", &port, "echo", &mark]).output();
                lines.lock().unwrap().iter().any(|l| l.contains(&mark))
            },
        )
        .await;
        let lines = self.lines.lock().unwrap();
        let end = lines.iter().position(|l| l.contains(&mark)).unwrap();
        // `<time> [<db> <client address>] "COMMAND" …`; scripts' commands show `lua` as their client.
        let client = |line: &str| {
            line.split_once('[')
                .and_then(|(_, r)| r.split_once(']'))
                .map(|(c, _)| c.to_string())
        };
        // Every `redis-cli` that sent a marker (a retried one may show up in the next span).
        let markers: HashSet<String> = lines
            .iter()
            .filter(|l| l.contains("jobq-test-mark-"))
            .filter_map(|l| client(l))
            .collect();
        let commands = lines[self.seen..end]
            .iter()
            .filter_map(|l| Some((client(l)?, l.split('"').nth(1)?.to_uppercase())))
            .filter(|(c, _)| !markers.contains(c) && !c.ends_with(" lua"))
            .map(|(_, command)| command)
            .collect();
        // The marker's client sent every later line up to and including its marker.
        self.seen = end + 1;
        commands
    }
}

impl Drop for Monitor {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
