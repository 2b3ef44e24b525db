//! The dashboard in a real browser (`browser.rs`), on every store: the overview shows the queues,
//! the jobs page filters, a dead job's page replays it, a waiting job's page resolves it, the dead
//! letters page counts before it replays all, the schedules page shows the next runs, and pausing a queue on the queues page stops a running `jobq worker` from starting
//! its jobs until it is resumed; with tokens, the page asks for one once and hides from a read token
//! what it may not do. Each page is saved as a PNG under
//! `<target>/dashboard-screenshots/<store>/` (two of them are in the guide, from `docs/src/images/`).

use std::path::Path;

use jobq::job::{JobSpec, JobStatus};
use jobq::time::UnixMillis;
use reqwest::StatusCode;
use serde_json::json;

use super::browser::{Browser, PATIENCE};
use super::{Api, TOKENS};
use crate::support::jobs::{get, id, make};
use crate::support::process::{FAST, Process};
use crate::support::{TestStore, eventually, store_tests};

store_tests! {
    run |case, fixture| case(&fixture().await).await;
    stores {
        sqlite => support::sqlite_store,
        postgres => support::postgres_store,
        mysql => support::mysql_store,
        redis => support::redis_store,
    }
    cases {
        the_dashboard_shows_filters_replays_and_pauses_in_a_real_browser,
    }
}

/// The server's config: a schedule for the schedules page.
const SERVE_CONFIG: &str =
    "[schedules.nightly-report]\ncron = \"0 3 * * *\"\ntype = \"report.build\"\nqueue = \"reports\"\n";

/// The worker's: quick, and a handler that succeeds at once.
fn worker_config() -> String {
    format!("{FAST}\n[handlers.tick]\nbuiltin = \"noop\"\n")
}

async fn made(store: &TestStore, job_type: &str, queue: &str, status: JobStatus) -> String {
    let spec = JobSpec::new(job_type, json!({"to": "ops@example.com", "n": 1})).queue(queue);
    make(store.store(), spec, status, UnixMillis::now())
        .await
        .id
        .to_string()
}

async fn status_of(store: &TestStore, job: &str) -> JobStatus {
    get(store.store(), &id(job)).await.status
}

/// Enqueues a `tick` job in `queue` through the API; its id.
async fn enqueue(api: &Api, queue: &str) -> String {
    let (status, answer) = api
        .post(
            "/api/v1/jobs",
            json!({"jobType": "tick", "queue": queue, "payload": {}}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    answer["id"].as_str().unwrap().to_string()
}

async fn the_dashboard_shows_filters_replays_and_pauses_in_a_real_browser(store: &TestStore) {
    let api = Api::start_with(store, SERVE_CONFIG, &[]).await;
    let base = api.base.clone();
    for _ in 0..3 {
        made(store, "mail.send", "mail", JobStatus::Succeeded).await;
    }
    made(store, "report.build", "reports", JobStatus::Succeeded).await;
    let dead = made(store, "mail.send", "mail", JobStatus::Dead).await;
    let other_dead = made(store, "mail.send", "mail", JobStatus::Dead).await;
    // Last: `made` claims the queue's next ready job to bring one to its status.
    made(store, "mail.send", "mail", JobStatus::Pending).await;

    let dir = tempfile::tempdir().unwrap();
    let worker = Process::worker(dir.path(), store.url(), &worker_config(), &["--queue", "work,other"]);
    let warm_up = enqueue(&api, "work").await;
    eventually("the worker to run a job", PATIENCE, async || {
        worker.assert_running();
        status_of(store, &warm_up).await == JobStatus::Succeeded
    })
    .await;

    let shots = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .expect("the target directory")
        .join("dashboard-screenshots")
        .join(store.store().kind().to_string());
    let browser = Browser::start(shots).await;

    // The overview: a row per queue, with its counts.
    browser.open(&format!("{base}/")).await;
    let mail = "#queues-table tr[data-queue=\"mail\"]";
    browser
        .until(
            "the overview to count the mail queue's dead jobs",
            &format!("return document.querySelector('{mail} a[href^=\"#/dead\"]')?.textContent === '2'"),
            &format!("return document.querySelector('{mail}')?.textContent ?? document.body.textContent"),
        )
        .await;
    browser.find("#main svg.chart rect.bar").await;
    browser.screenshot("overview").await;

    // The jobs page, filtered to the mail queue's dead jobs.
    browser.click("#nav a[data-page=\"jobs\"]").await;
    browser.type_into("#jobs-filter input[name=\"queue\"]", "mail").await;
    browser
        .click("#jobs-filter select[name=\"status\"] option[value=\"dead\"]")
        .await;
    browser.click("#jobs-apply").await;
    let rows = "document.querySelectorAll('#jobs-table tbody tr')";
    browser
        .until(
            "the jobs page to list the two dead mail jobs only",
            &format!(
                "const rows = [...{rows}]; return location.hash.includes('status=dead') && rows.length === 2 && rows.every(r => r.dataset.status === 'dead')"
            ),
            &format!("return [location.hash, ...[...{rows}].map(r => r.dataset.status)]"),
        )
        .await;
    browser.screenshot("jobs").await;

    // A dead job's page: replay it, and see it pending (no worker serves the mail queue).
    browser.click(&format!("#jobs-table a[data-job-id=\"{dead}\"]")).await;
    browser.find("#job [data-status=\"dead\"]").await;
    browser.screenshot("job").await;
    browser.click("#job-replay").await;
    browser.find("#job [data-status=\"pending\"]").await;
    assert_eq!(status_of(store, &dead).await, JobStatus::Pending);

    // Dead letters: replay all matching, after the count is shown and confirmed.
    browser.click("#nav a[data-page=\"dead\"]").await;
    browser
        .find(&format!("#dead-table tr[data-job-id=\"{other_dead}\"]"))
        .await;
    browser.screenshot("dead").await;
    browser.click("#dead-replay-all").await;
    let question = browser.find("#confirm-dialog[open] #confirm-text").await;
    assert_eq!(
        question.text().await.unwrap(),
        "Replay 1 dead job(s) of every queue? They run again from now."
    );
    browser.click("#confirm-yes").await;
    browser
        .until(
            "the dead letters page to be empty",
            "return document.querySelector('#main p.muted')?.textContent === 'No dead jobs.'",
            "return document.querySelector('#main')?.textContent",
        )
        .await;
    assert_eq!(status_of(store, &other_dead).await, JobStatus::Pending);

    // A waiting job's page: resolve it as failed, with the operator's reason, and see it dead.
    let waiting = made(store, "hook.wait", "hooks", JobStatus::Waiting).await;
    browser.open(&format!("{base}/#/jobs/{waiting}")).await;
    browser.find("#job [data-status=\"waiting\"]").await;
    browser.find("#job-resolve-box:not([hidden])").await;
    browser.click("#job-resolve-action option[value=\"fail\"]").await;
    browser.type_into("#job-resolve-value", "refused by the operator").await;
    browser.screenshot("job-waiting").await;
    browser.click("#job-resolve").await;
    let question = browser.find("#confirm-dialog[open] #confirm-text").await;
    assert_eq!(question.text().await.unwrap(), format!("Fail waiting job {waiting}?"));
    browser.click("#confirm-yes").await;
    browser.find("#job [data-status=\"dead\"]").await;
    browser.find("#job-resolve-box[hidden]").await;
    let resolved = get(store.store(), &id(&waiting)).await;
    assert_eq!(resolved.status, JobStatus::Dead);
    assert_eq!(
        resolved.errors.last().map(|e| e.error.as_str()),
        Some("refused by the operator")
    );

    // An expired job's page: its status and its expiry, and the list filters by that status.
    let expired = made(store, "code.send", "codes", JobStatus::Expired).await;
    browser.open(&format!("{base}/#/jobs/{expired}")).await;
    browser.find("#job [data-status=\"expired\"]").await;
    let expiry = browser.find("#job-expires").await;
    assert!(
        expiry.text().await.unwrap().ends_with("(not started by then)"),
        "{}",
        expiry.text().await.unwrap()
    );
    browser.open(&format!("{base}/#/jobs?status=expired")).await;
    browser
        .find("#jobs-filter select[name=\"status\"] option[value=\"expired\"]:checked")
        .await;
    browser.find("#main [data-status=\"expired\"]").await;

    // A job's page shows its unique key and mode; a second enqueue of the key debounces it.
    let digest = json!({"jobType": "digest.send", "queue": "digests", "uniqueKey": "digest:7",
        "uniqueMode": "debounce", "debounceMs": 30_000, "maxWaitMs": 300_000});
    let (status, first) = api.post("/api/v1/jobs", digest.clone()).await;
    assert_eq!(
        (status, first["outcome"].as_str()),
        (StatusCode::OK, Some("created")),
        "{first}"
    );
    let (_, second) = api.post("/api/v1/jobs", digest).await;
    assert_eq!(
        (second["outcome"].as_str(), &second["id"]),
        (Some("debounced"), &first["id"]),
        "{second}"
    );
    browser
        .open(&format!("{base}/#/jobs/{}", first["id"].as_str().unwrap()))
        .await;
    let unique = browser.find("#job-unique").await;
    assert_eq!(unique.text().await.unwrap(), "digest:7 (debounce 30s, max wait 5m)");

    // A job's page lists the jobs it waits for and those that wait for it, each with its status.
    let build = enqueue(&api, "flows").await;
    let then = json!({"jobType": "tick", "queue": "flows", "after": [{"id": build, "on": "finish"}]});
    let (status, answer) = api.post("/api/v1/jobs", then).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    let mail = answer["id"].as_str().unwrap().to_string();
    browser.open(&format!("{base}/#/jobs/{build}")).await;
    browser
        .find(&format!(
            "#job-dependents tr[data-job-id=\"{mail}\"][data-edge=\"open\"] [data-status=\"blocked\"]"
        ))
        .await;
    browser.open(&format!("{base}/#/jobs/{mail}")).await;
    browser
        .find(&format!(
            "#job-dependencies tr[data-job-id=\"{build}\"] [data-status=\"pending\"]"
        ))
        .await;
    browser.screenshot("job-edges").await;

    // A batch's callback: its members' progress, and the whole flow drawn, each job a link.
    let batch = json!({
        "jobs": [{"jobType": "resize", "queue": "flows"}, {"jobType": "resize", "queue": "flows"}],
        "then": {"jobType": "publish", "queue": "flows", "jobId": "album"},
        "onFailure": {"jobType": "alert", "queue": "flows"},
    });
    let (status, answer) = api.post("/api/v1/batches", batch).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    let first = answer["members"][0]["id"].as_str().unwrap().to_string();
    browser.open(&format!("{base}/#/jobs/album")).await;
    browser.find("#job-batch[data-members=\"2\"][data-ended=\"0\"]").await;
    browser
        .find("#job-flow svg a.node[data-job-id=\"album.on-failure\"][data-status=\"blocked\"]")
        .await;
    browser
        .find(&format!(
            "#job-flow svg path.edge-open[data-dependency=\"{first}\"][data-dependent=\"album\"]"
        ))
        .await;
    let nodes = browser
        .eval("return document.querySelectorAll('#job-flow svg a.node').length")
        .await;
    assert_eq!(nodes, 4, "two members, the callback and the on-failure job");
    browser
        .eval("document.querySelector('#job-batch').scrollIntoView(); return true")
        .await;
    browser.screenshot("job-flow").await;
    browser
        .click(&format!("#job-flow svg a.node[data-job-id=\"{first}\"]"))
        .await;
    browser
        .find(&format!("#job-flow svg a.node[data-job-id=\"{first}\"] rect.this"))
        .await;

    // The pages that only show.
    for page in ["workers", "schedules", "stuck"] {
        browser.click(&format!("#nav a[data-page=\"{page}\"]")).await;
        let ready = match page {
            "workers" => "#workers-table tbody tr",
            // The next run and the four after it.
            "schedules" => "#schedules-table tr[data-schedule=\"nightly-report\"] .next-runs .later li:nth-child(4)",
            _ => "#stuck-table, #stuck-healthy",
        };
        browser.find(ready).await;
        browser.screenshot(page).await;
    }

    // Pause the worker's queue: a job enqueued then stays pending while the worker runs others.
    browser.click("#nav a[data-page=\"queues\"]").await;
    browser.find("#pause-work").await;
    browser.screenshot("queues").await;
    browser.click("#pause-work").await;
    browser
        .find("#queues-list tr[data-queue=\"work\"][data-paused=\"yes\"]")
        .await;
    worker.wait_log("paused: queue work", PATIENCE).await;
    let held = enqueue(&api, "work").await;
    let other = enqueue(&api, "other").await;
    eventually("the worker to run the other queue's job", PATIENCE, async || {
        worker.assert_running();
        status_of(store, &other).await == JobStatus::Succeeded
    })
    .await;
    assert_eq!(
        status_of(store, &held).await,
        JobStatus::Pending,
        "the paused queue's job was not started"
    );
    browser.open(&format!("{base}/#/jobs/{held}")).await;
    browser.find("#job [data-status=\"pending\"]").await;

    // Resumed, the worker runs it; the job's page follows it live.
    browser.click("#nav a[data-page=\"queues\"]").await;
    browser.click("#resume-work").await;
    browser.open(&format!("{base}/#/jobs/{held}")).await;
    browser.find("#job [data-status=\"succeeded\"]").await;
    browser.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_page_asks_for_a_token_once_and_a_read_token_sees_no_actions() {
    let store = crate::support::sqlite_store().await;
    let env = [
        ("TEST_OPS_TOKEN", "dash-admin-0123456789"),
        ("TEST_READ_TOKEN", "dash-read-0123456789"),
    ];
    let api = Api::start_with(&store, TOKENS, &env).await;
    let dead = made(&store, "mail.send", "mail", JobStatus::Dead).await;
    let shots = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .expect("the target directory")
        .join("dashboard-screenshots")
        .join("tokens");
    let browser = Browser::start(shots).await;

    browser.open(&format!("{}/", api.base)).await;
    browser.find("#token-dialog[open]").await;
    browser.screenshot("token").await;
    browser.type_into("#token-input", "dash-read-0123456789").await;
    browser.click("#token-save").await;
    browser.find("#queues-table tr[data-queue=\"mail\"]").await;
    browser
        .until(
            "the page to know the token may only read",
            "return document.body.classList.contains('read-only') && document.querySelector('#who').textContent === 'grafana (read)'",
            "return [document.body.className, document.querySelector('#who').textContent]",
        )
        .await;

    // A new load of the page, in the same tab.
    browser.open("about:blank").await;
    browser.open(&format!("{}/#/jobs/{dead}", api.base)).await;
    browser.find("#job [data-status=\"dead\"]").await;
    assert_eq!(
        browser
            .eval("return getComputedStyle(document.querySelector('#job-replay')).display")
            .await,
        "none",
        "a read token is shown no replay button"
    );
    assert!(
        browser
            .eval("return document.querySelector('#token-dialog').open")
            .await
            == false,
        "the token is kept in the tab: no second prompt"
    );
    browser.close().await;
}
