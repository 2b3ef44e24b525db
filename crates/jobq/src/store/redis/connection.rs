//! One connection type for a single Redis server and for a Redis Cluster, so that the store and its
//! wake-up listener send commands the same way to either.
//!
//! A URL names one server. On connecting, jobq asks it (`INFO cluster`) whether it is a cluster node;
//! if so it connects to the whole cluster through that node, and every command is routed by its
//! first key to the node that owns the key's slot.

use std::time::Duration;

use redis::aio::{ConnectionLike, ConnectionManager, ConnectionManagerConfig, MultiplexedConnection};
use redis::cluster::ClusterClient;
use redis::cluster_async::ClusterConnection;
use redis::{AsyncConnectionConfig, Client, Cmd, Pipeline, RedisFuture, RedisResult, Value};

/// A connection to a single server or to a cluster; cheap to clone, each clone multiplexed over the
/// same socket(s).
#[derive(Clone)]
pub(super) enum Conn {
    /// The store's own: reconnects by itself after a drop.
    Managed(ConnectionManager),
    /// A listener's, which reconnects itself.
    Plain(MultiplexedConnection),
    /// A cluster connection: follows slot moves and reconnects to nodes by itself.
    Cluster(ClusterConnection),
}

impl ConnectionLike for Conn {
    fn req_packed_command<'a>(&'a mut self, cmd: &'a Cmd) -> RedisFuture<'a, Value> {
        match self {
            Conn::Managed(c) => c.req_packed_command(cmd),
            Conn::Plain(c) => c.req_packed_command(cmd),
            Conn::Cluster(c) => c.req_packed_command(cmd),
        }
    }

    fn req_packed_commands<'a>(
        &'a mut self,
        cmd: &'a Pipeline,
        offset: usize,
        count: usize,
    ) -> RedisFuture<'a, Vec<Value>> {
        match self {
            Conn::Managed(c) => c.req_packed_commands(cmd, offset, count),
            Conn::Plain(c) => c.req_packed_commands(cmd, offset, count),
            Conn::Cluster(c) => c.req_packed_commands(cmd, offset, count),
        }
    }

    fn get_db(&self) -> i64 {
        match self {
            Conn::Managed(c) => c.get_db(),
            Conn::Plain(c) => c.get_db(),
            Conn::Cluster(c) => c.get_db(),
        }
    }
}

/// Makes connections to what a URL named: a server or a cluster.
#[derive(Clone)]
pub(super) enum Connector {
    Server(Client),
    Cluster(ClusterClient),
}

impl Connector {
    /// Connects to the server a URL names, and through it to its cluster when it is a cluster node;
    /// returns the store's connection and the means to make more.
    pub(super) async fn open(
        driver_url: &str,
        connect_timeout: Duration,
        response_timeout: Duration,
    ) -> RedisResult<(Conn, Connector)> {
        let client = Client::open(driver_url)?;
        let config = ConnectionManagerConfig::new()
            .set_connection_timeout(Some(connect_timeout))
            .set_response_timeout(Some(response_timeout))
            .set_number_of_retries(2)
            .set_min_delay(Duration::from_millis(50))
            .set_max_delay(Duration::from_secs(2));
        let mut manager = ConnectionManager::new_with_config(client.clone(), config).await?;
        let info: String = redis::cmd("INFO").arg("cluster").query_async(&mut manager).await?;
        if !info.lines().any(|l| l.trim() == "cluster_enabled:1") {
            return Ok((Conn::Managed(manager), Connector::Server(client)));
        }
        let cluster = ClusterClient::builder(vec![driver_url])
            .connection_timeout(connect_timeout)
            .response_timeout(response_timeout)
            .retries(3)
            .build()?;
        let conn = cluster.get_async_connection().await?;
        Ok((Conn::Cluster(conn), Connector::Cluster(cluster)))
    }

    /// A connection of its own (a listener's blocking reads must not hold up the store's commands).
    pub(super) async fn connect(&self, connect_timeout: Duration, response_timeout: Duration) -> RedisResult<Conn> {
        match self {
            Connector::Server(client) => {
                let config = AsyncConnectionConfig::new()
                    .set_connection_timeout(Some(connect_timeout))
                    .set_response_timeout(Some(response_timeout));
                Ok(Conn::Plain(
                    client.get_multiplexed_async_connection_with_config(&config).await?,
                ))
            }
            Connector::Cluster(client) => Ok(Conn::Cluster(client.get_async_connection().await?)),
        }
    }

    pub(super) fn is_cluster(&self) -> bool {
        matches!(self, Connector::Cluster(_))
    }
}

/// The hash slot of a key: CRC16 of its hash tag (the text inside the first non-empty `{…}`), or of
/// the whole key when it has none, modulo 16384.
pub(super) fn slot(key: &str) -> u16 {
    let bytes = key.as_bytes();
    let tagged = key.find('{').and_then(|open| {
        let close = key[open + 1..].find('}')?;
        (close > 0).then(|| &bytes[open + 1..open + 1 + close])
    });
    crc16::State::<crc16::XMODEM>::calculate(tagged.unwrap_or(bytes)) % 16384
}

#[cfg(test)]
mod tests {
    use super::slot;

    #[test]
    fn slots_follow_the_hash_tag() {
        // Values from the Redis Cluster specification's examples and `CLUSTER KEYSLOT`.
        assert_eq!(slot("foo"), 12182);
        assert_eq!(slot("{foo}:bar"), 12182);
        assert_eq!(slot("jobq:{foo}:job:1"), slot("foo"));
        assert_eq!(slot("{}foo"), slot("{}foo"));
        assert_ne!(slot("{}foo"), slot("foo"));
        assert_eq!(slot("jobq:{jobq:inbox:q}:processing"), slot("jobq:inbox:q"));
    }
}
