//! Who may do what, and what the server refuses before any handler runs: tokens and roles, requests
//! from another origin, bodies over the cap, slow requests, starts that would expose the store, and
//! the error shapes of requests it cannot read.

use std::time::Duration;

use jobq::Client;
use jobq_cli::config::{Config, Overrides};
use jobq_cli::serve::{self, Options, Tls, Tokens};
use reqwest::{Method, StatusCode, header};
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::{Api, TOKENS, error_code, send};
use crate::support::{sqlite_store, within};

const ADMIN: &str = "admin-secret-0123456789";
const READER: &str = "read-secret-0123456789";

async fn with_tokens(store: &crate::support::TestStore) -> Api {
    Api::start_with(store, TOKENS, &[("TEST_OPS_TOKEN", ADMIN), ("TEST_READ_TOKEN", READER)]).await
}

#[tokio::test]
async fn with_tokens_every_request_needs_one_and_a_read_token_only_reads() {
    let store = sqlite_store().await;
    let mut api = with_tokens(&store).await;
    let enqueue = json!({"jobType": "t", "payload": {}});

    for (token, what) in [(None, "no token"), (Some("admin-secret-012345678"), "a wrong token")] {
        api.set_token(token);
        let response = api.request(Method::GET, "/api/v1/jobs").send().await.unwrap();
        assert_eq!(response.status(), StatusCode::UNAUTHORIZED, "{what}");
        assert_eq!(response.headers()[header::WWW_AUTHENTICATE], "Bearer");
        let (status, body) = api.post("/api/v1/jobs", enqueue.clone()).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{what}");
        assert_eq!(error_code(&body), "unauthorized");
        assert_eq!(api.get("/healthz").await.0, StatusCode::UNAUTHORIZED, "{what}");
    }

    api.set_token(Some(READER));
    assert_eq!(api.get("/api/v1/jobs").await.0, StatusCode::OK);
    assert_eq!(
        api.get("/api/v1/me").await,
        (StatusCode::OK, json!({"token": "grafana", "role": "read"})),
        "the dashboard learns what the token may do"
    );
    assert_eq!(api.text("/metrics").await.0, StatusCode::OK);
    let (status, body) = api.post("/api/v1/jobs", enqueue.clone()).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    assert_eq!(error_code(&body), "forbidden");
    assert_eq!(api.delete("/api/v1/jobs/x").await.0, StatusCode::FORBIDDEN);
    assert_eq!(api.get("/api/v1/jobs").await.1, json!([]), "nothing was enqueued");

    api.set_token(Some(ADMIN));
    assert_eq!(api.get("/api/v1/me").await.1, json!({"token": "ops", "role": "admin"}));
    let (status, body) = api.post("/api/v1/jobs", enqueue).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(api.get("/api/v1/jobs").await.1.as_array().unwrap().len(), 1);
}

#[tokio::test]
async fn the_dashboard_s_files_need_no_token_and_hold_no_data() {
    let store = sqlite_store().await;
    let api = with_tokens(&store).await;
    for path in ["/", "/ui/app.js", "/ui/pages/overview.js", "/ui/app.css"] {
        let response = api.request(Method::GET, path).send().await.unwrap();
        assert_eq!(response.status(), StatusCode::OK, "{path}");
        let csp = response.headers()[header::CONTENT_SECURITY_POLICY].to_str().unwrap();
        assert!(
            csp.contains("script-src 'self'") && csp.contains("frame-ancestors 'none'"),
            "{csp}"
        );
    }
    let (status, body) = api.get("/ui/secrets.js").await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    assert_eq!(
        api.get("/api/v1/stats").await.0,
        StatusCode::UNAUTHORIZED,
        "the data still needs a token"
    );
}

#[tokio::test]
async fn a_page_of_another_origin_cannot_act_but_this_one_can() {
    let store = sqlite_store().await;
    let api = with_tokens(&store).await.with_token(ADMIN);
    let own = format!("http://{}", api.addr());
    let post = |origin: &str| {
        api.request(Method::POST, "/api/v1/queues/q/pause")
            .header(header::ORIGIN, origin)
            .json(&json!({}))
    };
    let (status, body) = send(post("http://evil.example")).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    assert_eq!(error_code(&body), "cross_origin");
    let (status, body) = send(post("null")).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    assert_eq!(send(post(&own)).await.0, StatusCode::OK);
    let read = api
        .request(Method::GET, "/api/v1/queues")
        .header(header::ORIGIN, "http://evil.example");
    assert_eq!(send(read).await.0, StatusCode::OK, "reading is not acting");
}

#[tokio::test]
async fn a_body_over_the_cap_is_refused_with_413() {
    let store = sqlite_store().await;
    let api = Api::start_with(&store, "max_payload_bytes = 1000\n", &[]).await;
    let huge = "x".repeat(1000 + jobq_cli::serve::BODY_HEADROOM + 1);
    let (status, body) = api.post("/api/v1/jobs", json!({"jobType": "t", "payload": huge})).await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE, "{body}");
    assert_eq!(error_code(&body), "payload_too_large");
    // Under the cap but over the payload limit: the job is refused as `jobq enqueue` refuses it.
    let (status, body) = api
        .post("/api/v1/jobs", json!({"jobType": "t", "payload": "x".repeat(2000)}))
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert_eq!(body["error"]["input"], "payload");
}

#[tokio::test]
async fn a_request_that_never_finishes_its_body_is_cut_off() {
    let store = sqlite_store().await;
    let api = Api::start_timed(&store, "", &[], Duration::from_millis(300)).await;
    let mut stream = tokio::net::TcpStream::connect(api.addr()).await.unwrap();
    let head = format!(
        "POST /api/v1/jobs HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{{\"jobType\"",
        api.addr()
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    let mut answer = Vec::new();
    within(
        "the server's answer to a stalled body",
        Duration::from_secs(30),
        async {
            let mut buf = [0u8; 1024];
            while !String::from_utf8_lossy(&answer).contains("request_timeout") {
                let n = stream.read(&mut buf).await.unwrap();
                assert!(n > 0, "closed without an answer: {}", String::from_utf8_lossy(&answer));
                answer.extend_from_slice(&buf[..n]);
            }
        },
    )
    .await;
    assert!(String::from_utf8_lossy(&answer).starts_with("HTTP/1.1 408"));
}

#[tokio::test]
async fn requests_it_cannot_read_answer_in_the_error_shape() {
    let store = sqlite_store().await;
    let api = Api::start(&store).await;
    let cases = [
        (
            Method::GET,
            "/api/v1/nothing",
            None,
            StatusCode::NOT_FOUND,
            "no_such_route",
        ),
        (
            Method::PUT,
            "/api/v1/jobs",
            None,
            StatusCode::METHOD_NOT_ALLOWED,
            "method_not_allowed",
        ),
        (
            Method::POST,
            "/api/v1/jobs",
            Some("{not json"),
            StatusCode::BAD_REQUEST,
            "bad_request",
        ),
        (
            Method::POST,
            "/api/v1/jobs/cancel",
            Some(r#"{"bogus": 1}"#),
            StatusCode::BAD_REQUEST,
            "bad_request",
        ),
        (
            Method::GET,
            "/api/v1/jobs?limit=many",
            None,
            StatusCode::BAD_REQUEST,
            "bad_request",
        ),
        (
            Method::GET,
            "/api/v1/jobs?limit=1001",
            None,
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_input",
        ),
        (
            Method::GET,
            "/api/v1/jobs?stauts=dead",
            None,
            StatusCode::BAD_REQUEST,
            "bad_request",
        ),
        (
            Method::GET,
            "/api/v1/jobs?status=finished",
            None,
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_input",
        ),
        (
            Method::GET,
            "/api/v1/jobs?since=yesterday",
            None,
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_input",
        ),
        (
            Method::POST,
            "/api/v1/schedules/nightly/trigger",
            None,
            StatusCode::NOT_FOUND,
            "no_such_schedule",
        ),
    ];
    for (method, path, body, status, code) in cases {
        let mut req = api.request(method.clone(), path);
        if let Some(b) = body {
            req = req.header(header::CONTENT_TYPE, "application/json").body(b);
        }
        let (got, answer) = send(req).await;
        assert_eq!((got, error_code(&answer)), (status, code), "{method} {path}: {answer}");
    }
}

#[tokio::test]
async fn listening_beyond_loopback_without_tokens_is_refused() {
    let store = sqlite_store().await;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("jobq.toml");
    std::fs::write(&file, "").unwrap();
    let overrides = Overrides {
        url: Some(store.url().to_string()),
        config: Some(file),
    };
    let config = Config::load_with(&overrides, |_| None).unwrap();
    let options = Options {
        listen: "0.0.0.0:0".parse().unwrap(),
        tls: None,
        request_timeout: Duration::from_secs(5),
    };
    let client = Client::new(store.store().clone());
    let err = serve::start(client, &config, Tokens::default(), options)
        .await
        .unwrap_err();
    assert!(matches!(err, jobq::Error::Config { .. }), "{err:?}");
    assert!(err.to_string().contains("without tokens"), "{err}");
}

/// A self-signed certificate for 127.0.0.1 and localhost (100 years, made with `openssl req -x509`
/// for these tests only) and its key.
fn test_certificate() -> Tls {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it/serve/tls");
    Tls {
        cert: dir.join("cert.pem"),
        key: dir.join("key.pem"),
    }
}

#[tokio::test]
async fn with_a_certificate_and_key_it_serves_https_only() {
    let store = sqlite_store().await;
    let tls = test_certificate();
    let options = Options {
        listen: "127.0.0.1:0".parse().unwrap(),
        tls: Some(tls.clone()),
        request_timeout: Duration::from_secs(60),
    };
    let pem = std::fs::read(&tls.cert).unwrap();
    let trusting = reqwest::Client::builder()
        .add_root_certificate(reqwest::Certificate::from_pem(&pem).unwrap())
        .build()
        .unwrap();
    let api = Api::start_opts(&store, "", &[], options)
        .await
        .unwrap()
        .with_client(trusting);
    let (status, health) = api.get("/healthz").await;
    assert_eq!((status, health["status"].as_str()), (StatusCode::OK, Some("ok")));
    let (status, body) = api.post("/api/v1/jobs", json!({"jobType": "t"})).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let plain = reqwest::get(format!("http://{}/healthz", api.addr())).await;
    assert!(plain.is_err(), "plain HTTP is not served: {plain:?}");

    let missing = Options {
        listen: "127.0.0.1:0".parse().unwrap(),
        tls: Some(Tls {
            cert: "no-such-cert.pem".into(),
            key: "no-such-key.pem".into(),
        }),
        request_timeout: Duration::from_secs(60),
    };
    let err = Api::start_opts(&store, "", &[], missing).await.err().expect("refused");
    assert!(err.to_string().contains("no-such-cert.pem"), "{err}");
}

#[tokio::test]
async fn without_tokens_a_request_for_another_host_is_refused() {
    // A page whose name was made to resolve to 127.0.0.1 (DNS rebinding) sends its own name as Host.
    let store = sqlite_store().await;
    let api = Api::start(&store).await;
    let rebound = api
        .request(Method::GET, "/api/v1/jobs")
        .header(header::HOST, "evil.example:8080");
    let (status, body) = send(rebound).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    assert_eq!(error_code(&body), "host_not_allowed");
    let local = api
        .request(Method::GET, "/api/v1/jobs")
        .header(header::HOST, "localhost");
    assert_eq!(send(local).await.0, StatusCode::OK);
}

#[tokio::test]
async fn an_expiry_that_could_never_be_met_is_refused_with_422_naming_it() {
    let store = sqlite_store().await;
    let api = Api::start_with(&store, "", &[]).await;
    for expires_at in [json!("2001-01-01T00:00:00Z"), json!("soon")] {
        let (status, body) = api
            .post("/api/v1/jobs", json!({"jobType": "t", "expiresAt": expires_at}))
            .await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
        assert_eq!(body["error"]["input"], "expiresAt", "{body}");
    }
    let (status, body) = api
        .post(
            "/api/v1/jobs",
            json!({"jobType": "t", "expiresAt": "2100-01-01T00:00:00Z"}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (_, jobs) = api.get("/api/v1/jobs").await;
    assert_eq!(
        jobs.as_array().map(Vec::len),
        Some(1),
        "only the job that can start: {jobs}"
    );
}

#[tokio::test]
async fn a_bad_unique_mode_is_refused_with_422_naming_it_and_a_good_one_answers_with_the_holder() {
    let store = sqlite_store().await;
    let api = Api::start_with(&store, "", &[]).await;
    for bad in [
        json!({"jobType": "t", "uniqueKey": "k", "uniqueMode": "sometimes"}),
        json!({"jobType": "t", "uniqueMode": "replace"}),
        json!({"jobType": "t", "uniqueKey": "k", "debounceMs": -5}),
        json!({"jobType": "t", "uniqueKey": "k", "uniqueMode": "throttle"}),
        json!({"jobType": "t", "uniqueKey": "k", "uniqueMode": "replace", "uniqueRunning": "later"}),
        json!({"jobType": "t", "uniqueKey": "k", "uniqueMode": "keep-last", "uniqueRunning": "coalesce"}),
    ] {
        let (status, body) = api.post("/api/v1/jobs", bad.clone()).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{bad}: {body}");
        assert_eq!(body["error"]["input"], "uniqueMode", "{bad}: {body}");
    }
    let (_, jobs) = api.get("/api/v1/jobs").await;
    assert_eq!(jobs.as_array().map(Vec::len), Some(0), "nothing enqueued: {jobs}");
    let throttled = json!({"jobType": "t", "uniqueKey": "k", "throttleMs": 3_600_000});
    let (status, first) = api.post("/api/v1/jobs", throttled.clone()).await;
    assert_eq!(
        (status, first["outcome"].as_str()),
        (StatusCode::OK, Some("created")),
        "{first}"
    );
    let (status, again) = api.post("/api/v1/jobs", throttled).await;
    assert_eq!(status, StatusCode::OK, "{again}");
    assert_eq!(
        (again["outcome"].as_str(), &again["id"]),
        (Some("throttled"), &first["id"]),
        "{again}"
    );
}

#[tokio::test]
async fn a_types_unique_key_template_applies_to_jobs_the_api_enqueues() {
    let store = sqlite_store().await;
    let config = "[handlers.\"order.sync\"]\nbuiltin = \"noop\"\nunique = \"{payload.order.id}\"\n";
    let api = Api::start_with(&store, config, &[]).await;
    let job = json!({"jobType": "order.sync", "payload": {"order": {"id": 7}}});
    let (status, first) = api.post("/api/v1/jobs", job.clone()).await;
    assert_eq!(status, StatusCode::OK, "{first}");
    let (_, again) = api.post("/api/v1/jobs", job).await;
    assert_eq!(
        (&again["id"], again["outcome"].as_str()),
        (&first["id"], Some("coalesced"))
    );
    let (status, body) = api
        .post("/api/v1/jobs", json!({"jobType": "order.sync", "payload": {}}))
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert_eq!(body["error"]["input"], "uniqueKey", "{body}");
}
