//! A RabbitMQ queue of one test's own on the server of `JOBQ_TEST_AMQP_URL` (default
//! `amqp://guest:guest@127.0.0.1:5672/%2f`), with a dead-letter queue beside it; both are deleted when
//! the test drops them. Messages go in with publisher confirms, so a publish that returned is on the
//! broker.

use std::time::Duration;

use lapin::options::{
    BasicAckOptions, BasicGetOptions, BasicPublishOptions, ConfirmSelectOptions, QueueDeclareOptions,
    QueueDeleteOptions,
};
use lapin::types::{AMQPValue, FieldTable, ShortString};
use lapin::{BasicProperties, Channel, Connection, ConnectionProperties};

/// The test server's URL.
pub fn amqp_url() -> String {
    std::env::var("JOBQ_TEST_AMQP_URL").unwrap_or_else(|_| "amqp://guest:guest@127.0.0.1:5672/%2f".into())
}

/// A test's queue and its dead-letter queue.
pub struct TestQueue {
    /// The queue the bridge consumes.
    pub name: String,
    /// Where the broker puts what the bridge rejects.
    pub dead: String,
    connection: Connection,
    channel: Channel,
    removed: bool,
}

impl TestQueue {
    /// Declares a fresh queue whose rejected messages go to a fresh dead-letter queue.
    pub async fn new() -> TestQueue {
        let url = amqp_url();
        let connection = match Connection::connect(&url, ConnectionProperties::default()).await {
            Ok(c) => c,
            Err(e) => panic!(
                "cannot reach RabbitMQ at {} ({e}); start it with `rabbitmq-server -detached`, or set JOBQ_TEST_AMQP_URL",
                jobq::store::RedactedUrl::new(&url)
            ),
        };
        let channel = connection.create_channel().await.expect("an AMQP channel");
        channel
            .confirm_select(ConfirmSelectOptions::default())
            .await
            .expect("publisher confirms");
        let name = format!("jobq-test-{}", uuid::Uuid::now_v7().simple());
        let dead = format!("{name}.dead");
        let durable = QueueDeclareOptions {
            durable: true,
            ..QueueDeclareOptions::default()
        };
        channel
            .queue_declare(dead.as_str().into(), durable, FieldTable::default())
            .await
            .expect("declaring the dead-letter queue");
        let mut args = FieldTable::default();
        args.insert("x-dead-letter-exchange".into(), AMQPValue::LongString("".into()));
        args.insert(
            "x-dead-letter-routing-key".into(),
            AMQPValue::LongString(dead.as_str().into()),
        );
        channel
            .queue_declare(name.as_str().into(), durable, args)
            .await
            .expect("declaring the test queue");
        TestQueue {
            name,
            dead,
            connection,
            channel,
            removed: false,
        }
    }

    /// Publishes each body (persistent, with its message id if given) and waits for every confirm.
    pub async fn publish(&self, messages: &[(Vec<u8>, Option<String>)]) {
        self.publish_as(messages, true).await;
    }

    /// As [`TestQueue::publish`], the messages persistent (delivery mode 2) or transient (1).
    pub async fn publish_as(&self, messages: &[(Vec<u8>, Option<String>)], persistent: bool) {
        let mut confirms = Vec::with_capacity(messages.len());
        for (body, id) in messages {
            let mut properties = BasicProperties::default().with_delivery_mode(if persistent { 2 } else { 1 });
            if let Some(id) = id {
                properties = properties.with_message_id(ShortString::from(id.as_str()));
            }
            let confirm = self
                .channel
                .basic_publish(
                    "".into(),
                    self.name.as_str().into(),
                    BasicPublishOptions::default(),
                    body,
                    properties,
                )
                .await
                .expect("publishing a test message");
            confirms.push(confirm);
        }
        for confirm in confirms {
            assert!(
                confirm.await.expect("a publisher confirm").is_ack(),
                "the broker refused a message"
            );
        }
    }

    /// Messages ready in `queue` (not delivered, or delivered and put back).
    pub async fn ready(&self, queue: &str) -> u32 {
        let passive = QueueDeclareOptions {
            passive: true,
            ..QueueDeclareOptions::default()
        };
        self.channel
            .queue_declare(queue.into(), passive, FieldTable::default())
            .await
            .map(|q| q.message_count())
            .expect("looking at a test queue")
    }
}

impl TestQueue {
    /// Opens a new connection to the same queues, after the broker restarted.
    pub async fn reconnect(&mut self) {
        let connection = Connection::connect(&amqp_url(), ConnectionProperties::default())
            .await
            .expect("reconnecting to RabbitMQ");
        self.channel = connection.create_channel().await.expect("an AMQP channel");
        self.channel
            .confirm_select(ConfirmSelectOptions::default())
            .await
            .expect("publisher confirms");
        self.connection = connection;
    }

    /// Takes every message ready in the test queue: each body with its message id.
    pub async fn take_all(&self) -> Vec<(Vec<u8>, Option<String>)> {
        let mut taken = Vec::new();
        while let Some(message) = self
            .channel
            .basic_get(self.name.as_str().into(), BasicGetOptions::default())
            .await
            .expect("reading the test queue")
        {
            let id = message.delivery.properties.message_id().as_ref().map(|m| m.to_string());
            message
                .delivery
                .acker
                .ack(BasicAckOptions::default())
                .await
                .expect("an ack");
            taken.push((message.delivery.data, id));
        }
        taken
    }

    /// Deletes the test's queues; a test calls it last, and `Drop` does it for one that fails first.
    pub async fn remove(mut self) {
        for q in [self.name.clone(), self.dead.clone()] {
            let _ = self
                .channel
                .queue_delete(q.as_str().into(), QueueDeleteOptions::default())
                .await;
        }
        let _ = self.connection.close(200, "".into()).await;
        self.removed = true;
    }
}

impl Drop for TestQueue {
    fn drop(&mut self) {
        if self.removed {
            return;
        }
        // A test that failed early: its connection's I/O may have gone with its runtime, so the
        // queues are deleted over a connection of a thread of their own.
        let queues = [self.name.clone(), self.dead.clone()];
        let _ = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            runtime.block_on(async move {
                let _ = tokio::time::timeout(Duration::from_secs(5), async {
                    let connection = Connection::connect(&amqp_url(), ConnectionProperties::default()).await?;
                    let channel = connection.create_channel().await?;
                    for q in queues {
                        let _ = channel
                            .queue_delete(q.as_str().into(), QueueDeleteOptions::default())
                            .await;
                    }
                    connection.close(200, "".into()).await
                })
                .await;
            });
        })
        .join();
    }
}
