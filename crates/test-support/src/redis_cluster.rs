//! A Redis Cluster of three primaries, started once per test process on free ports, for the tests
//! that run the store against a cluster: each script must then stay in one hash slot (the scripts'
//! shebang makes the cluster refuse one that strays), and each command must reach the node that owns
//! its key.
//!
//! The servers are children of a thread that lives as long as the test process and are started with
//! `PR_SET_PDEATHSIG`, so they die with the process however it ends. Each test works under a key
//! prefix of its own; the cluster keeps no data on disk and goes away with its keys.

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::sync::mpsc;
use std::time::Duration;

use super::private::free_port;
use super::redis::{fresh_prefix, with_prefix};
use super::{ServerSandbox, TestStore, eventually};

const NODES: usize = 3;

static SEED_URL: OnceLock<String> = OnceLock::new();

/// The URL of one node of the test cluster, starting the cluster on first use.
pub fn redis_cluster_url() -> String {
    SEED_URL.get_or_init(start).clone()
}

/// A fresh store on the test cluster under a key prefix of its own, migrated.
pub async fn redis_cluster_store() -> TestStore {
    redis_cluster_store_in(&fresh_prefix()).await
}

/// A store on the test cluster under `prefix`, migrated.
pub async fn redis_cluster_store_in(prefix: &str) -> TestStore {
    let url = with_prefix(&redis_cluster_url(), prefix);
    // The keys of one test go away with the cluster.
    let location = format!("Redis keys {prefix}* on the test process's own cluster");
    super::migrated_store(
        url,
        || ServerSandbox::left_to_the_server(location),
        "Redis Cluster test store",
    )
    .await
}

fn start() -> String {
    let (started, seed) = mpsc::channel();
    std::thread::Builder::new()
        .name("redis-cluster".into())
        .spawn(move || {
            // This thread belongs to no test, and so to no test's runtime: it waits on one of its own.
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            let wait_for = |what: String, ready: &dyn Fn() -> bool| {
                runtime.block_on(eventually(what, Duration::from_secs(20), async || ready()))
            };
            let ports: Vec<u16> = (0..NODES).map(|_| free_port()).collect();
            let dir = cluster_dir();
            let _servers: Vec<_> = ports.iter().map(|&port| spawn_node(&dir, port)).collect();
            for &port in &ports {
                wait_for(format!("redis-server on port {port} to listen"), &|| {
                    std::net::TcpStream::connect(("127.0.0.1", port)).is_ok()
                });
            }
            let nodes: Vec<String> = ports.iter().map(|p| format!("127.0.0.1:{p}")).collect();
            let out = Command::new("redis-cli")
                .args(["--cluster", "create"])
                .args(&nodes)
                .args(["--cluster-replicas", "0", "--cluster-yes"])
                .output()
                .expect("running redis-cli (the Redis Cluster tests need it on PATH)");
            assert!(
                out.status.success(),
                "creating the test cluster: {}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            for &port in &ports {
                wait_for(format!("the cluster node on port {port} to be ready"), &|| {
                    let info = Command::new("redis-cli")
                        .args(["-p", &port.to_string(), "cluster", "info"])
                        .output()
                        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
                        .unwrap_or_default();
                    info.contains("cluster_state:ok")
                });
            }
            started.send(format!("redis://127.0.0.1:{}/", ports[0])).unwrap();
            // The servers die when this thread does, which is when the process ends.
            loop {
                std::thread::park();
            }
        })
        .unwrap();
    seed.recv().expect("the Redis Cluster test servers did not start")
}

/// A folder for the nodes' cluster files, and the removal of those of earlier test runs.
fn cluster_dir() -> PathBuf {
    let base = std::env::temp_dir();
    if let Ok(entries) = std::fs::read_dir(&base) {
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let Some(pid) = name.strip_prefix("jobq-test-cluster-") else {
                continue;
            };
            if !Path::new(&format!("/proc/{pid}")).exists() {
                let _ = std::fs::remove_dir_all(entry.path());
            }
        }
    }
    let dir = base.join(format!("jobq-test-cluster-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn spawn_node(dir: &Path, port: u16) -> std::process::Child {
    let mut cmd = Command::new("redis-server");
    cmd.args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
        .args(["--cluster-enabled", "yes", "--cluster-config-file"])
        .arg(dir.join(format!("nodes-{port}.conf")))
        .args(["--save", "", "--appendonly", "no"])
        .stdout(Stdio::null());
    // SAFETY: prctl is async-signal-safe and touches only the child's own state.
    unsafe {
        cmd.pre_exec(|| {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    cmd.spawn()
        .expect("starting redis-server (the Redis Cluster tests need it on PATH)")
}
