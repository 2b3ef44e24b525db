//! A TCP proxy in front of a server, whose connections a test can cut: a killed connection between
//! a jobq process and its broker, made on demand and for that one test only.

use std::sync::{Arc, Mutex};

use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;

/// Forwards every connection made to [`Proxy::port`] to the target, until cut or dropped.
pub struct Proxy {
    port: u16,
    links: Arc<Mutex<Vec<JoinHandle<()>>>>,
    accept: JoinHandle<()>,
}

impl Proxy {
    /// Starts forwarding 127.0.0.1:(a free port) to `target` (`host:port`).
    pub async fn start(target: &str) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("a port for the proxy");
        let port = listener.local_addr().unwrap().port();
        let links: Arc<Mutex<Vec<JoinHandle<()>>>> = Arc::default();
        let target = target.to_string();
        let accept = tokio::spawn({
            let links = links.clone();
            async move {
                while let Ok((mut inbound, _)) = listener.accept().await {
                    let target = target.clone();
                    let link = tokio::spawn(async move {
                        if let Ok(mut outbound) = TcpStream::connect(&target).await {
                            let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
                        }
                    });
                    links.lock().unwrap().push(link);
                }
            }
        });
        Proxy { port, links, accept }
    }

    /// The port that leads to the target.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Cuts every connection made so far (both sockets close); new ones are forwarded as before.
    /// Returns how many were open.
    pub fn cut(&self) -> usize {
        let links: Vec<_> = self.links.lock().unwrap().drain(..).collect();
        let open = links.iter().filter(|l| !l.is_finished()).count();
        for link in links {
            link.abort();
        }
        open
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.accept.abort();
        self.cut();
    }
}
