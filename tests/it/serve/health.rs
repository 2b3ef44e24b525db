//! `/healthz` tells whether the store answers: 200 while it does, 503 in the error shape once the
//! connections to it are cut and no new one can be made.

use std::time::Duration;

use jobq::Client;
use jobq::store::{self, StoreUrl};
use jobq_cli::config::{Config, Overrides};
use jobq_cli::serve::{self, Options, Tokens};
use reqwest::StatusCode;
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinSet;

use super::{error_code, send};
use crate::support::{eventually, postgres_store};

/// Relays connections from a port of its own on 127.0.0.1 to a server; [`Relay::cut`] closes every
/// relayed connection and stops listening, as a server gone away would.
struct Relay {
    url: String,
    tasks: JoinSet<()>,
}

impl Relay {
    async fn to(url: &str) -> Relay {
        let mut through = url::Url::parse(url).unwrap();
        let server = format!(
            "{}:{}",
            through.host_str().unwrap(),
            through.port_or_known_default().unwrap()
        );
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        through.set_port(Some(listener.local_addr().unwrap().port())).unwrap();
        through.set_host(Some("127.0.0.1")).unwrap();
        let mut tasks = JoinSet::new();
        tasks.spawn(async move {
            let mut connections = JoinSet::new();
            while let Ok((mut client, _)) = listener.accept().await {
                let server = server.clone();
                connections.spawn(async move {
                    if let Ok(mut upstream) = TcpStream::connect(&server).await {
                        let _ = tokio::io::copy_bidirectional(&mut client, &mut upstream).await;
                    }
                });
            }
        });
        Relay {
            url: through.to_string(),
            tasks,
        }
    }

    /// Closes every connection and the listening port (dropping the accept task drops its
    /// connections' set, which aborts them).
    fn cut(&mut self) {
        self.tasks.abort_all();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn healthz_answers_503_while_the_store_cannot_be_reached() {
    let test_store = postgres_store().await;
    let mut relay = Relay::to(test_store.url()).await;
    let store = store::connect(&StoreUrl::parse(&relay.url).unwrap()).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("jobq.toml");
    std::fs::write(&file, "").unwrap();
    let overrides = Overrides {
        url: Some(relay.url.clone()),
        config: Some(file),
    };
    let config = Config::load_with(&overrides, |_| None).unwrap();
    let options = Options {
        listen: "127.0.0.1:0".parse().unwrap(),
        tls: None,
        request_timeout: Duration::from_secs(60),
    };
    let server = serve::start(Client::new(store), &config, Tokens::default(), options)
        .await
        .unwrap();
    let url = format!("http://{}/healthz", server.local_addr());
    let http = reqwest::Client::new();
    let (status, body) = send(http.get(&url)).await;
    assert_eq!(status, StatusCode::OK, "{body}");

    relay.cut();
    let body = eventually("/healthz to answer 503", Duration::from_secs(60), async || {
        let (status, body) = send(http.get(&url)).await;
        if status == StatusCode::SERVICE_UNAVAILABLE {
            Ok(body)
        } else {
            Err(format!("{status} {body}"))
        }
    })
    .await;
    assert_eq!(error_code(&body), "store_unavailable");
    assert!(!body.to_string().contains("password"), "{body}");
    server.shutdown();
}
