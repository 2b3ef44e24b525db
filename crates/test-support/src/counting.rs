//! A TCP relay between a test's `jobq` process and a server, which counts the connections it relays.
//! The servers' own counters (`pg_stat_database.sessions`, MySQL's `Connections`, Redis's
//! `total_connections_received`) count every client of the shared test server, other tests' included;
//! the relay counts only the connections made through its own port.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;

/// Relays connections from a port of its own on 127.0.0.1 to the server a URL names. Stops relaying
/// when dropped.
pub struct CountingRelay {
    url: String,
    accepted: Arc<AtomicUsize>,
    task: JoinHandle<()>,
}

impl CountingRelay {
    /// Starts relaying to the host and port of `url`; [`CountingRelay::url`] is `url` through the relay.
    pub async fn to(url: &str) -> CountingRelay {
        let mut through = url::Url::parse(url).unwrap_or_else(|e| panic!("{url}: {e}"));
        let server = format!(
            "{}:{}",
            through.host_str().expect("a URL with a host"),
            through.port_or_known_default().expect("a URL with a port")
        );
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("binding the relay");
        let port = listener.local_addr().expect("the relay's address").port();
        through.set_host(Some("127.0.0.1")).expect("a host");
        through.set_port(Some(port)).expect("a port");
        let accepted = Arc::new(AtomicUsize::new(0));
        let counter = accepted.clone();
        let task = tokio::spawn(async move {
            while let Ok((mut client, _)) = listener.accept().await {
                counter.fetch_add(1, Ordering::SeqCst);
                let server = server.clone();
                tokio::spawn(async move {
                    if let Ok(mut upstream) = TcpStream::connect(&server).await {
                        let _ = tokio::io::copy_bidirectional(&mut client, &mut upstream).await;
                    }
                });
            }
        });
        CountingRelay {
            url: through.to_string(),
            accepted,
            task,
        }
    }

    /// The URL, through the relay.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Connections relayed so far, and the count set back to zero.
    pub fn take(&self) -> usize {
        self.accepted.swap(0, Ordering::SeqCst)
    }
}

impl Drop for CountingRelay {
    fn drop(&mut self) {
        self.task.abort();
    }
}
