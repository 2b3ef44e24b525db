//! `jobq serve`: the HTTP admin API. A thin layer over [`Client`], as the CLI is: the same verbs,
//! the same validation, the same JSON documents (`report/`), and errors whose status matches the CLI's
//! exit code. `GET /metrics` and `GET /healthz` beside `/api/v1/…`, and the web dashboard at `/`
//! (`dashboard.rs`), which reads and acts through the same API.
//!
//! Safe by default: it listens on loopback unless told otherwise, and refuses to listen anywhere else
//! without tokens; with tokens every request carries one (`guard.rs`, `tokens.rs`); requests that
//! act from a page of another origin are refused; bodies are capped at the payload limit plus
//! headroom; a request's headers and its whole life are bounded in time; TLS through rustls (ring, the
//! provider jobq already uses) when given a certificate and key.
//!
//! This module never prints and never exits: `cli/serve.rs` reads flags and signals and calls
//! [`start`].

mod actions;
mod audit;
mod batches;
mod body;
mod dashboard;
mod error;
mod flight;
mod guard;
mod jobs;
mod metrics;
mod overview;
mod queues;
mod router;
mod state;
mod tokens;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use axum_server::Handle;
use tokio::task::JoinHandle;

use crate::config::Config;
use jobq::client::Client;
use jobq::error::{Error, Result};

pub use audit::TARGET as AUDIT_TARGET;
pub use error::ApiError;
pub use router::OPENAPI;
pub use state::{AppState, BODY_HEADROOM};
pub use tokens::{Caller, Tokens};

/// How long a client may take to send a request's headers.
const HEADER_TIMEOUT: Duration = Duration::from_secs(10);

/// How long running requests get to finish after a shutdown is asked for.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(10);

/// How to serve.
#[derive(Debug, Clone)]
pub struct Options {
    /// Where to listen; port 0 picks a free one ([`Server::local_addr`] tells which).
    pub listen: SocketAddr,
    /// Serve HTTPS with this certificate chain and key (PEM files).
    pub tls: Option<Tls>,
    /// A request's whole life, its body included, is bounded by this.
    pub request_timeout: Duration,
}

/// PEM files for HTTPS.
#[derive(Debug, Clone)]
pub struct Tls {
    /// The certificate chain.
    pub cert: PathBuf,
    /// The private key.
    pub key: PathBuf,
}

/// A running server.
#[derive(Debug)]
pub struct Server {
    addr: SocketAddr,
    handle: Handle<SocketAddr>,
    task: JoinHandle<std::io::Result<()>>,
}

impl Server {
    /// Where it listens.
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// Stops taking connections and lets running requests finish (for a while); see
    /// [`Server::stopped`].
    pub fn shutdown(&self) {
        self.handle.graceful_shutdown(Some(SHUTDOWN_GRACE));
    }

    /// Waits until the server has stopped.
    pub async fn stopped(self) -> Result<()> {
        match self.task.await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => Err(listen_error(self.addr, "the server stopped", e)),
            Err(e) => Err(listen_error(self.addr, "the server stopped", std::io::Error::other(e))),
        }
    }
}

/// Refuses to listen beyond loopback without tokens: anyone who reached the server could act on
/// every job.
pub fn check(tokens: &Tokens, options: &Options) -> Result<()> {
    if tokens.is_empty() && !options.listen.ip().is_loopback() {
        return Err(Error::config(format!(
            "refusing to listen on {} without tokens: add [serve] tokens to the config, or listen on 127.0.0.1",
            options.listen
        )));
    }
    Ok(())
}

/// Starts serving `client`'s store: [`check`]s, binds, and serves on the runtime until
/// [`Server::shutdown`].
pub async fn start(client: Client, config: &Config, tokens: Tokens, options: Options) -> Result<Server> {
    check(&tokens, &options)?;
    let listener = std::net::TcpListener::bind(options.listen)
        .and_then(|l| l.set_nonblocking(true).map(|()| l))
        .map_err(|e| listen_error(options.listen, "cannot listen", e))?;
    let addr = listener
        .local_addr()
        .map_err(|e| listen_error(options.listen, "cannot listen", e))?;
    let app = router::router(AppState::new(client, config, tokens), options.request_timeout)
        .into_make_service_with_connect_info::<SocketAddr>();
    let handle = Handle::new();
    let task = match &options.tls {
        None => {
            let mut server = axum_server::from_tcp(listener)
                .map_err(|e| listen_error(addr, "cannot listen", e))?
                .handle(handle.clone());
            server.http_builder().http1().header_read_timeout(Some(HEADER_TIMEOUT));
            tokio::spawn(server.serve(app))
        }
        Some(tls) => {
            let rustls = axum_server::tls_rustls::RustlsConfig::from_pem_file(&tls.cert, &tls.key)
                .await
                .map_err(|e| {
                    Error::config_at(
                        None,
                        Some("--tls-cert".into()),
                        format!(
                            "cannot use the TLS certificate {} and key {}",
                            tls.cert.display(),
                            tls.key.display()
                        ),
                        Some(Box::new(e)),
                    )
                })?;
            let mut server = axum_server::from_tcp_rustls(listener, rustls)
                .map_err(|e| listen_error(addr, "cannot listen", e))?
                .handle(handle.clone());
            server.http_builder().http1().header_read_timeout(Some(HEADER_TIMEOUT));
            tokio::spawn(server.serve(app))
        }
    };
    Ok(Server { addr, handle, task })
}

fn listen_error(addr: SocketAddr, what: &str, e: std::io::Error) -> Error {
    Error::config_at(
        None,
        Some("--listen".into()),
        format!("{what} on {addr}"),
        Some(Box::new(e)),
    )
}
