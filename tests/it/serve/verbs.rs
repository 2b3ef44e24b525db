//! Each verb of the API on every store: the answer's shape and status, and what the store holds
//! afterwards. A case is `async fn case(store: &TestStore)`; `store_tests!` expands it into
//! `serve::verbs::<store>::<case>`.

use jobq::job::{JobSpec, JobStatus};
use jobq::time::UnixMillis;
use reqwest::StatusCode;
use serde_json::{Value, json};

use super::{Api, error_code, strings};
use crate::support::jobs::{get, id, make};
use crate::support::{TestStore, store_tests};

store_tests! {
    run |case, fixture| case(&fixture().await).await;
    stores {
        sqlite => support::sqlite_store,
        postgres => support::postgres_store,
        mysql => support::mysql_store,
        redis => support::redis_store,
    }
    cases {
        enqueue_then_list_and_show,
        a_bad_job_refuses_the_batch_and_writes_nothing,
        a_job_waits_for_the_jobs_it_names_in_after,
        a_flow_is_enqueued_whole_or_refused_whole,
        a_job_s_graph_reaches_every_job_joined_to_it,
        a_batch_is_enqueued_and_shown,
        cancel_by_id_and_by_filter,
        replay_dead_previews_with_dry_run_then_moves,
        delete_by_id_refuses_a_running_job_unless_forced,
        delete_by_filter_counts,
        retry_puts_a_finished_job_back,
        resolve_finishes_a_waiting_job_once,
        cleanup_counts_then_deletes,
        queues_pause_and_resume,
        stats_metrics_and_health,
        metrics_tell_each_queue_s_desired_workers_when_configured,
        metrics_count_each_bridge_s_messages,
        schedules_list_trigger_pause_and_resume,
        throughput_counts_the_jobs_finished_per_minute,
        doctor_answers_what_jobq_doctor_finds,
    }
}

/// A job JSON to enqueue.
fn job(job_type: &str, queue: &str, payload: Value) -> Value {
    json!({"jobType": job_type, "queue": queue, "payload": payload})
}

/// `spec` brought to `status` now, in `queue`.
async fn made(store: &TestStore, queue: &str, status: JobStatus) -> String {
    let spec = JobSpec::new("made", json!({})).queue(queue);
    make(store.store(), spec, status, UnixMillis::now())
        .await
        .id
        .to_string()
}

async fn status_of(store: &TestStore, job: &str) -> JobStatus {
    get(store.store(), &id(job)).await.status
}

async fn enqueue_then_list_and_show(store: &TestStore) {
    let api = Api::start(store).await;
    let (status, one) = api
        .post("/api/v1/jobs", job("mail.send", "api", json!({"to": "a@example.com"})))
        .await;
    assert_eq!(status, StatusCode::OK, "{one}");
    assert_eq!(one["outcome"], "created");
    let first = one["id"].as_str().unwrap().to_string();
    let batch = json!([
        job("report.build", "api", json!(1)),
        {"jobType": "mail.send", "queue": "api", "payload": {"to": "b"}, "uniqueKey": "k", "priority": -3, "meta": {"tenantId": "42"}},
        {"jobType": "mail.send", "queue": "api", "uniqueKey": "k"},
    ]);
    let (status, many) = api.post("/api/v1/jobs", batch).await;
    assert_eq!(status, StatusCode::OK, "{many}");
    let outcomes: Vec<&str> = many
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["outcome"].as_str().unwrap())
        .collect();
    assert_eq!(outcomes, ["created", "created", "coalesced"]);
    assert_eq!(many[2]["id"], many[1]["id"], "a live unique key coalesces");

    let (status, listed) = api.get("/api/v1/jobs?queue=api").await;
    assert_eq!(status, StatusCode::OK);
    let mut ids = strings(&listed, "jobId");
    ids.sort();
    let mut expected = vec![
        first.clone(),
        many[0]["id"].as_str().unwrap().into(),
        many[1]["id"].as_str().unwrap().into(),
    ];
    expected.sort();
    assert_eq!(ids, expected);
    let (_, mail) = api
        .get("/api/v1/jobs?queue=api&type=mail.send&status=pending,running")
        .await;
    assert_eq!(mail.as_array().unwrap().len(), 2);
    let (_, page) = api.get("/api/v1/jobs?queue=api&limit=1&offset=2").await;
    assert_eq!(page.as_array().unwrap().len(), 1);
    let (_, none) = api.get("/api/v1/jobs?queue=api&status=dead").await;
    assert_eq!(none, json!([]));

    let (status, shown) = api.get(&format!("/api/v1/jobs/{first}")).await;
    assert_eq!(status, StatusCode::OK);
    let mut stored = serde_json::to_value(get(store.store(), &id(&first)).await).unwrap();
    stored["dependencies"] = json!([]);
    stored["dependents"] = json!([]);
    assert_eq!(shown, stored, "the job JSON the CLI prints, with its edges");
    assert_eq!(shown["payload"], json!({"to": "a@example.com"}));

    let (status, missing) = api.get("/api/v1/jobs/no-such-job").await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(error_code(&missing), "not_found");
}

async fn a_job_waits_for_the_jobs_it_names_in_after(store: &TestStore) {
    let api = Api::start(store).await;
    let (_, first) = api.post("/api/v1/jobs", job("report.build", "after", json!({}))).await;
    let first = first["id"].as_str().unwrap().to_string();
    let then = json!({"jobType": "report.mail", "queue": "after", "after": [{"id": first, "on": "finish"}]});
    let (status, body) = api.post("/api/v1/jobs", then).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let second = body["id"].as_str().unwrap().to_string();
    assert_eq!(status_of(store, &second).await, JobStatus::Blocked);
    let (_, blocked) = api.get("/api/v1/jobs?queue=after&status=blocked").await;
    assert_eq!(strings(&blocked, "jobId"), [second]);

    let unknown = json!({"jobType": "report.mail", "queue": "after", "after": ["no-such-job"]});
    let (status, body) = api.post("/api/v1/jobs", unknown).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    assert_eq!(error_code(&body), "not_found");
    assert_eq!(body["error"]["ids"], json!(["no-such-job"]));
    let (_, listed) = api.get("/api/v1/jobs?queue=after").await;
    assert_eq!(listed.as_array().unwrap().len(), 2, "nothing more was enqueued");
}

async fn a_flow_is_enqueued_whole_or_refused_whole(store: &TestStore) {
    let api = Api::start(store).await;
    let flow = json!({"jobs": [
        {"ref": "build", "type": "report.build", "queue": "flows"},
        {"ref": "mail", "type": "report.mail", "queue": "flows", "after": ["build"]},
    ]});
    let (status, ids) = api.post("/api/v1/flows", flow).await;
    assert_eq!(status, StatusCode::OK, "{ids}");
    let (mail, build) = (ids["mail"].as_str().unwrap(), ids["build"].as_str().unwrap());
    assert_eq!(status_of(store, mail).await, JobStatus::Blocked);
    // A job's page names its edges, both ways.
    let (_, shown) = api.get(&format!("/api/v1/jobs/{build}")).await;
    assert_eq!(
        shown["dependents"],
        json!([{"jobId": mail, "jobType": "report.mail", "queue": "flows", "status": "blocked", "on": "success", "state": "open"}])
    );
    let (_, shown) = api.get(&format!("/api/v1/jobs/{mail}")).await;
    assert_eq!(strings(&shown["dependencies"], "jobId"), [build]);
    let cycle = json!({"jobs": [
        {"ref": "a", "type": "t", "queue": "flows", "after": ["b"]},
        {"ref": "b", "type": "t", "queue": "flows", "after": ["a"]},
    ]});
    let (status, body) = api.post("/api/v1/flows", cycle).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert_eq!(body["error"]["input"], "flow");
    let (_, listed) = api.get("/api/v1/jobs?queue=flows").await;
    assert_eq!(listed.as_array().unwrap().len(), 2);

    // A cancel with cascade takes the jobs downstream along.
    let (status, body) = api
        .post(&format!("/api/v1/jobs/{build}/cancel?cascade=true"), json!({}))
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["descendants"], json!([{"id": mail, "previous": "blocked"}]));
    assert_eq!(status_of(store, mail).await, JobStatus::Cancelled);
}

async fn a_job_s_graph_reaches_every_job_joined_to_it(store: &TestStore) {
    let api = Api::start(store).await;
    // a → b → d, a → c → d (by finish), and e alone; read from c.
    let flow = json!({"jobs": [
        {"ref": "a", "type": "split", "queue": "graph"},
        {"ref": "b", "type": "left", "queue": "graph", "after": ["a"]},
        {"ref": "c", "type": "right", "queue": "graph", "after": ["a"]},
        {"ref": "d", "type": "join", "queue": "graph", "after": ["b", {"ref": "c", "on": "finish"}]},
        {"ref": "e", "type": "alone", "queue": "graph"},
    ]});
    let (status, ids) = api.post("/api/v1/flows", flow).await;
    assert_eq!(status, StatusCode::OK, "{ids}");
    let of = |r: &str| ids[r].as_str().unwrap().to_string();
    let (status, graph) = api.get(&format!("/api/v1/jobs/{}/graph", of("c"))).await;
    assert_eq!(status, StatusCode::OK, "{graph}");
    assert_eq!(graph["id"], of("c"));
    assert_eq!(graph["truncated"], false);
    let mut jobs: Vec<(String, String)> = graph["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| {
            (
                j["jobType"].as_str().unwrap().to_string(),
                j["status"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    jobs.sort();
    let expected = [
        ("join", "blocked"),
        ("left", "blocked"),
        ("right", "blocked"),
        ("split", "pending"),
    ];
    assert_eq!(jobs, expected.map(|(t, s)| (t.to_string(), s.to_string())));
    let mut edges: Vec<(String, String, String)> = graph["edges"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            let s = |k: &str| e[k].as_str().unwrap().to_string();
            (s("dependency"), s("dependent"), s("on"))
        })
        .collect();
    edges.sort();
    let mut expected = vec![
        (of("a"), of("b"), "success".to_string()),
        (of("a"), of("c"), "success".to_string()),
        (of("b"), of("d"), "success".to_string()),
        (of("c"), of("d"), "finish".to_string()),
    ];
    expected.sort();
    assert_eq!(edges, expected);
    // A limit stops the read; a job without edges is a graph of one.
    let (_, cut) = api.get(&format!("/api/v1/jobs/{}/graph?limit=2", of("a"))).await;
    assert_eq!(
        (cut["jobs"].as_array().unwrap().len(), &cut["truncated"]),
        (2, &json!(true))
    );
    let (_, alone) = api.get(&format!("/api/v1/jobs/{}/graph", of("e"))).await;
    assert_eq!(
        (
            alone["jobs"].as_array().unwrap().len(),
            alone["edges"].as_array().unwrap().len()
        ),
        (1, 0)
    );
    let (status, body) = api.get(&format!("/api/v1/jobs/{}/graph?limit=0", of("a"))).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    let (status, body) = api.get("/api/v1/jobs/no-such-job/graph").await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
}

async fn a_batch_is_enqueued_and_shown(store: &TestStore) {
    let api = Api::start(store).await;
    let batch = json!({
        "jobs": [job("image.resize", "batch", json!({"n": 1})), job("image.resize", "batch", json!({"n": 2}))],
        "then": {"jobType": "album.publish", "queue": "batch", "jobId": "album"},
        "onFailure": {"jobType": "album.alert", "queue": "batch"},
    });
    let (status, made) = api.post("/api/v1/batches", batch).await;
    assert_eq!(status, StatusCode::OK, "{made}");
    assert_eq!(made["batch"], "album");
    assert_eq!(
        made["onFailure"],
        json!({"id": "album.on-failure", "outcome": "created"})
    );
    let members = strings(&made["members"], "id");
    assert_eq!(status_of(store, "album").await, JobStatus::Blocked);
    let (status, shown) = api.get("/api/v1/batches/album").await;
    assert_eq!(status, StatusCode::OK, "{shown}");
    assert_eq!((shown["members"].clone(), shown["ended"].clone()), (json!(2), json!(0)));
    assert_eq!(shown["counts"]["pending"], 2);
    assert_eq!(
        shown["onFailure"],
        json!({"id": "album.on-failure", "jobType": "album.alert", "status": "blocked"})
    );
    // The callback's graph holds the members, the callback and the on-failure job.
    let (_, graph) = api.get("/api/v1/jobs/album/graph").await;
    assert_eq!(graph["jobs"].as_array().unwrap().len(), 4, "{graph}");
    assert_eq!(members.len(), 2);
    // Refused whole: a bad member, an unknown field, no callback, an on-failure job with an id.
    let bad = [
        json!({"jobs": [{"queue": "batch"}], "then": {"jobType": "t"}}),
        json!({"jobs": [job("t", "batch", json!({}))], "then": {"jobType": "t"}, "also": 1}),
        json!({"jobs": [job("t", "batch", json!({}))]}),
        json!({"jobs": [job("t", "batch", json!({}))], "then": {"jobType": "t"}, "onFailure": {"jobType": "t", "jobId": "x"}}),
        json!({"jobs": [], "then": {"jobType": "t"}}),
    ];
    for body in bad {
        let (status, answer) = api.post("/api/v1/batches", body.clone()).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}: {answer}");
    }
    let (_, listed) = api.get("/api/v1/jobs?queue=batch").await;
    assert_eq!(listed.as_array().unwrap().len(), 4);
    let (status, _) = api.get("/api/v1/batches/no-such-batch").await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}

async fn a_bad_job_refuses_the_batch_and_writes_nothing(store: &TestStore) {
    let api = Api::start(store).await;
    let batch = json!([job("ok", "bad", json!({})), job("ok", "no spaces allowed", json!({}))]);
    let (status, body) = api.post("/api/v1/jobs", batch).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert_eq!(error_code(&body), "invalid_input");
    assert_eq!(body["error"]["input"], "queue");
    assert!(
        body["error"]["message"].as_str().unwrap().starts_with("job 2: "),
        "{body}"
    );
    let (_, listed) = api.get("/api/v1/jobs?queue=bad").await;
    assert_eq!(listed, json!([]));
    let (status, body) = api.post("/api/v1/jobs", json!({"payload": 1})).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert_eq!(body["error"]["input"], "envelope");
}

async fn cancel_by_id_and_by_filter(store: &TestStore) {
    let api = Api::start(store).await;
    let (_, jobs) = api
        .post(
            "/api/v1/jobs",
            json!([
                job("t", "c", json!(1)),
                job("t", "c", json!(2)),
                job("u", "c", json!(3))
            ]),
        )
        .await;
    let ids = strings(&jobs, "id");
    let (status, body) = api.post(&format!("/api/v1/jobs/{}/cancel", ids[0]), json!({})).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["cancelled"], json!([{"id": ids[0], "previous": "pending"}]));
    assert_eq!(status_of(store, &ids[0]).await, JobStatus::Cancelled);
    let (status, again) = api.post(&format!("/api/v1/jobs/{}/cancel", ids[0]), json!({})).await;
    assert_eq!(status, StatusCode::OK, "{again}");
    assert_eq!(again["alreadyTerminal"], json!([{"id": ids[0], "status": "cancelled"}]));

    let (status, body) = api
        .post("/api/v1/jobs/cancel", json!({"queue": ["c"], "type": ["t"]}))
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(strings(&body["cancelled"], "id"), [ids[1].clone()]);
    assert_eq!(
        status_of(store, &ids[2]).await,
        JobStatus::Pending,
        "another type is left"
    );

    let (status, body) = api.post("/api/v1/jobs/cancel", json!({"ids": [ids[2], "nope"]})).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    assert_eq!(body["error"]["ids"], json!(["nope"]));
    assert_eq!(
        body["error"]["details"]["cancelled"][0]["id"], ids[2],
        "what was done is told"
    );
    let (status, body) = api.post("/api/v1/jobs/cancel", json!({})).await;
    assert_eq!(
        status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "an empty filter cancels nothing: {body}"
    );
}

async fn replay_dead_previews_with_dry_run_then_moves(store: &TestStore) {
    let api = Api::start(store).await;
    let first = made(store, "d", JobStatus::Dead).await;
    let second = made(store, "d", JobStatus::Dead).await;
    let (status, preview) = api
        .post("/api/v1/dead/replay", json!({"queue": ["d"], "dryRun": true}))
        .await;
    assert_eq!(status, StatusCode::OK, "{preview}");
    assert_eq!(preview["dryRun"], true);
    let mut would = strings(&preview["wouldReplay"], "jobId");
    would.sort();
    let mut both = vec![first.clone(), second.clone()];
    both.sort();
    assert_eq!(would, both);
    assert_eq!(
        status_of(store, &first).await,
        JobStatus::Dead,
        "a dry run changes nothing"
    );

    let (status, body) = api.post("/api/v1/dead/replay", json!({"ids": [first]})).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body, json!({"replayed": [first], "reopened": []}));
    assert_eq!(status_of(store, &first).await, JobStatus::Pending);
    assert_eq!(status_of(store, &second).await, JobStatus::Dead);
    let (status, body) = api.post("/api/v1/dead/replay", json!({"limit": 0})).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert_eq!(body["error"]["input"], "limit");
}

async fn delete_by_id_refuses_a_running_job_unless_forced(store: &TestStore) {
    let api = Api::start(store).await;
    let running = made(store, "del", JobStatus::Running).await;
    let (_, done) = api.post("/api/v1/jobs", job("t", "del", json!({}))).await;
    let done = done["id"].as_str().unwrap().to_string();
    let (status, body) = api.delete(&format!("/api/v1/jobs/{done}")).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["deleted"], json!([{"id": done, "previous": "pending"}]));
    assert_eq!(api.get(&format!("/api/v1/jobs/{done}")).await.0, StatusCode::NOT_FOUND);

    let (status, body) = api.delete(&format!("/api/v1/jobs/{running}")).await;
    assert_eq!(status, StatusCode::CONFLICT, "{body}");
    assert_eq!(error_code(&body), "conflict");
    assert_eq!(body["error"]["ids"], json!([running]));
    assert_eq!(status_of(store, &running).await, JobStatus::Running);
    let (status, body) = api.delete(&format!("/api/v1/jobs/{running}?force=true")).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["deleted"], json!([{"id": running, "previous": "running"}]));
    let (status, body) = api.delete(&format!("/api/v1/jobs/{running}")).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
}

async fn delete_by_filter_counts(store: &TestStore) {
    let api = Api::start(store).await;
    made(store, "df", JobStatus::Running).await;
    api.post(
        "/api/v1/jobs",
        json!([job("t", "df", json!(1)), job("t", "df", json!(2))]),
    )
    .await;
    let (status, body) = api.post("/api/v1/jobs/delete", json!({"queue": ["df"]})).await;
    assert_eq!(status, StatusCode::CONFLICT, "the running job is left: {body}");
    assert_eq!(body["error"]["details"], json!({"deleted": 2, "refused": 1}));
    let (status, body) = api
        .post("/api/v1/jobs/delete", json!({"queue": ["df"], "force": true}))
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body, json!({"deleted": 1, "refused": 0}));
    let (status, body) = api
        .post("/api/v1/jobs/delete", json!({"ids": ["a"], "queue": ["df"]}))
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "ids and a filter: {body}");
}

async fn retry_puts_a_finished_job_back(store: &TestStore) {
    let api = Api::start(store).await;
    let finished = made(store, "r", JobStatus::Succeeded).await;
    let (_, pending) = api.post("/api/v1/jobs", job("t", "r", json!({}))).await;
    let pending = pending["id"].as_str().unwrap().to_string();
    let (status, body) = api.post(&format!("/api/v1/jobs/{finished}/retry"), json!({})).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["retried"], json!([finished]));
    assert_eq!(status_of(store, &finished).await, JobStatus::Pending);
    let (status, body) = api.post("/api/v1/jobs/retry", json!({"ids": [pending]})).await;
    assert_eq!(status, StatusCode::CONFLICT, "{body}");
    assert_eq!(
        body["error"]["details"]["notTerminal"],
        json!([{"id": pending, "status": "pending"}])
    );
}

async fn resolve_finishes_a_waiting_job_once(store: &TestStore) {
    let api = Api::start(store).await;
    let waiting = made(store, "w", JobStatus::Waiting).await;
    let path = format!("/api/v1/jobs/{waiting}/resolve");
    let (status, body) = api
        .post(&path, json!({"action": "succeed", "result": {"paid": true}}))
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(
        body,
        json!({"id": waiting, "outcome": "resolved", "status": "succeeded"})
    );
    let job = get(store.store(), &id(&waiting)).await;
    assert_eq!(
        job.result.map(|r| r.get().to_string()).as_deref(),
        Some(r#"{"paid":true}"#)
    );
    let (status, body) = api.post(&path, json!({"action": "succeed"})).await;
    assert_eq!(status, StatusCode::OK, "the same way twice is no error: {body}");
    let (status, body) = api.post(&path, json!({"action": "fail", "error": "declined"})).await;
    assert_eq!(status, StatusCode::CONFLICT, "{body}");
    let (status, body) = api.post(&path, json!({"action": "explode"})).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert_eq!(error_code(&body), "bad_request");
}

async fn cleanup_counts_then_deletes(store: &TestStore) {
    let api = Api::start(store).await;
    let done = made(store, "cl", JobStatus::Succeeded).await;
    let (status, body) = api
        .post("/api/v1/cleanup", json!({"queue": ["cl"], "dryRun": true}))
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body, json!({"wouldDelete": 1, "dryRun": true}));
    let (status, body) = api
        .post("/api/v1/cleanup", json!({"queue": ["cl"], "status": ["succeeded"]}))
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body, json!({"deleted": 1, "dryRun": false}));
    assert_eq!(api.get(&format!("/api/v1/jobs/{done}")).await.0, StatusCode::NOT_FOUND);
    let (status, body) = api.post("/api/v1/cleanup", json!({"status": ["pending"]})).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
}

async fn queues_pause_and_resume(store: &TestStore) {
    let api = Api::start(store).await;
    let (status, body) = api.post("/api/v1/queues/mail/pause", json!({})).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(
        body,
        json!({"queue": "mail", "jobType": null, "paused": true, "changed": true})
    );
    assert_eq!(
        api.post("/api/v1/queues/mail/pause", json!({})).await.1["changed"],
        false
    );
    let mail = queue_named(&api, "mail").await;
    assert!(mail["pausedSince"].is_i64(), "{mail}");
    let (_, typed) = api.post("/api/v1/queues/mail/pause?type=mail.send", json!({})).await;
    assert_eq!(typed["jobType"], "mail.send");
    let (status, body) = api.post("/api/v1/queues/mail/resume", json!({})).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["changed"], true);
    let mail = queue_named(&api, "mail").await;
    assert_eq!(mail["pausedSince"], Value::Null);
    assert_eq!(mail["pausedTypes"], json!(["mail.send"]));
    let (status, body) = api.post("/api/v1/queues/no%20spaces/pause", json!({})).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
}

/// One queue of `GET /api/v1/queues`.
async fn queue_named(api: &Api, name: &str) -> Value {
    let (_, queues) = api.get("/api/v1/queues").await;
    queues["queues"]
        .as_array()
        .unwrap()
        .iter()
        .find(|q| q["queue"] == name)
        .cloned()
        .unwrap_or_else(|| panic!("no queue {name} in {queues}"))
}

async fn stats_metrics_and_health(store: &TestStore) {
    let api = Api::start(store).await;
    api.post(
        "/api/v1/jobs",
        json!([job("t", "s", json!(1)), job("t", "s", json!(2))]),
    )
    .await;
    let (status, stats) = api.get("/api/v1/stats?queue=s").await;
    assert_eq!(status, StatusCode::OK, "{stats}");
    assert_eq!(stats["queues"][0]["queue"], "s");
    assert_eq!(stats["queues"][0]["ready"], 2);
    assert_eq!(stats["totals"]["ready"], 2);
    assert!(!stats["store"].as_str().unwrap().contains("password"));
    let (status, text) = api.text("/metrics").await;
    assert_eq!(status, StatusCode::OK);
    assert!(text.contains("jobq_jobs{queue=\"s\",status=\"pending\"} 2"), "{text}");
    assert!(
        text.contains("jobq_http_requests_total{method=\"GET\",route=\"/api/v1/stats\",status=\"200\"} 1"),
        "{text}"
    );
    assert!(
        !text.contains("jobq_queue_desired_workers"),
        "no [serve.autoscale], no gauge: {text}"
    );
    let (status, health) = api.get("/healthz").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(health["status"], "ok");
    let (status, workers) = api.get("/api/v1/workers").await;
    assert_eq!((status, workers), (StatusCode::OK, json!([])));
}

/// A bridge's registry entry (as `jobq bridge` keeps it) becomes its message counters in `/metrics`
/// and its entry in `/api/v1/workers`.
async fn metrics_count_each_bridge_s_messages(store: &TestStore) {
    let now = UnixMillis::now();
    let entry = jobq::store::WorkerInfo {
        id: "orders-bridge@h:1:abc".into(),
        name: "orders-bridge".into(),
        host: "h".into(),
        pid: 1,
        queues: Vec::new(),
        started_at: now,
        last_seen_at: now,
        jobs_done: 120,
        bridge: Some(jobq::store::BridgeInfo {
            source: "amqp://app:***@mq:5672/%2f queue orders".into(),
            duplicates: 3,
            rejected: 2,
        }),
    };
    store.register_worker(&entry).await.expect("register the bridge");
    let api = Api::start(store).await;
    let (status, text) = api.text("/metrics").await;
    assert_eq!(status, StatusCode::OK);
    for (outcome, n) in [("enqueued", 120), ("duplicate", 3), ("rejected", 2)] {
        let line = format!(
            "jobq_bridge_messages_total{{bridge=\"orders-bridge@h:1:abc\",source=\"amqp://app:***@mq:5672/%2f queue orders\",outcome=\"{outcome}\"}} {n}"
        );
        assert!(text.contains(&line), "{line}\n{text}");
    }
    let (status, workers) = api.get("/api/v1/workers").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(workers[0]["bridge"]["rejected"], 2, "{workers}");
}

async fn metrics_tell_each_queue_s_desired_workers_when_configured(store: &TestStore) {
    let config = "[serve.autoscale]\ntarget_latency = \"30s\"\nmin = 2\nmax = 5\n";
    let api = Api::start_with(store, config, &[]).await;
    api.post(
        "/api/v1/jobs",
        json!([job("t", "s", json!(1)), job("t", "s", json!(2))]),
    )
    .await;
    let (status, text) = api.text("/metrics").await;
    assert_eq!(status, StatusCode::OK);
    // No run has finished yet, so the run time is unknown: a backlog asks for one worker, and the
    // policy's floor makes it two.
    assert!(text.contains("jobq_queue_desired_workers{queue=\"s\"} 2"), "{text}");
}

async fn schedules_list_trigger_pause_and_resume(store: &TestStore) {
    let config = "[schedules.nightly]\nevery = \"1h\"\ntype = \"report.build\"\nqueue = \"reports\"\n";
    let api = Api::start_with(store, config, &[]).await;
    let (status, rows) = api.get("/api/v1/schedules").await;
    assert_eq!(status, StatusCode::OK, "{rows}");
    assert_eq!(strings(&rows, "name"), ["nightly"]);
    assert_eq!(
        (rows[0]["type"].as_str(), rows[0]["paused"].as_bool()),
        (Some("report.build"), Some(false))
    );
    // The next five hours, the first of them `nextRun`.
    let runs: Vec<i64> = rows[0]["nextRuns"]
        .as_array()
        .unwrap_or_else(|| panic!("nextRuns in {rows}"))
        .iter()
        .map(|t| t.as_i64().unwrap())
        .collect();
    assert_eq!(runs.len(), 5, "{rows}");
    assert_eq!(Some(runs[0]), rows[0]["nextRun"].as_i64());
    assert!(runs.windows(2).all(|w| w[1] - w[0] == 3_600_000), "{runs:?}");

    let (status, triggered) = api.post("/api/v1/schedules/nightly/trigger", json!({})).await;
    assert_eq!(status, StatusCode::OK, "{triggered}");
    assert_eq!(triggered["outcome"], "created");
    let job = get(store.store(), &id(triggered["id"].as_str().unwrap())).await;
    assert_eq!((job.job_type.as_str(), job.queue.as_str()), ("report.build", "reports"));
    assert_eq!(job.meta.get("trigger").map(String::as_str), Some("manual"));

    let (status, body) = api.post("/api/v1/schedules/nightly/pause", json!({})).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(
        body,
        json!({"schedule": "nightly", "paused": true, "pausedByConfig": false})
    );
    assert_eq!(api.get("/api/v1/schedules").await.1[0]["paused"], true);
    let (status, body) = api
        .post("/api/v1/schedules/nightly/resume?catchUp=false", json!({}))
        .await;
    assert_eq!((status, &body["paused"]), (StatusCode::OK, &json!(false)), "{body}");
    assert_eq!(api.get("/api/v1/schedules").await.1[0]["paused"], false);
    let (status, body) = api.post("/api/v1/schedules/weekly/pause", json!({})).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    assert_eq!(error_code(&body), "no_such_schedule");
}

async fn throughput_counts_the_jobs_finished_per_minute(store: &TestStore) {
    let api = Api::start(store).await;
    for _ in 0..3 {
        made(store, "busy", JobStatus::Succeeded).await;
    }
    made(store, "busy", JobStatus::Dead).await;
    made(store, "busy", JobStatus::Pending).await;
    made(store, "idle", JobStatus::Pending).await;

    let (status, doc) = api.get("/api/v1/throughput").await;
    assert_eq!(status, StatusCode::OK, "{doc}");
    assert_eq!(
        (doc["bucketMs"].as_i64(), doc["buckets"].as_u64()),
        (Some(60_000), Some(60))
    );
    let since = doc["since"].as_i64().unwrap();
    assert_eq!(since % 60_000, 0, "buckets fall on whole minutes");
    assert!(
        since + 60 * 60_000 > doc["now"].as_i64().unwrap(),
        "the last bucket is under way"
    );
    assert_eq!(
        strings(&doc["queues"], "queue"),
        ["busy"],
        "queues that finished nothing are left out"
    );
    let busy = &doc["queues"][0];
    assert_eq!(busy["total"], 4);
    let finished: Vec<u64> = serde_json::from_value(busy["finished"].clone()).unwrap();
    assert_eq!((finished.len(), finished.iter().sum::<u64>()), (60, 4));
    let dead: Vec<u64> = serde_json::from_value(busy["byStatus"]["dead"].clone()).unwrap();
    assert_eq!(dead.iter().sum::<u64>(), 1);

    let (status, doc) = api.get("/api/v1/throughput?queue=idle,busy&window=10m&bucket=5m").await;
    assert_eq!(status, StatusCode::OK, "{doc}");
    assert_eq!(doc["buckets"], 2);
    assert_eq!(
        strings(&doc["queues"], "queue"),
        ["busy", "idle"],
        "queues asked for are listed"
    );
    assert_eq!(doc["queues"][1]["finished"], json!([0, 0]));

    for bad in [
        "window=1d&bucket=1s",
        "bucket=10ms",
        "window=soon",
        "queue=no%20spaces",
        "minutes=5",
    ] {
        let (status, body) = api.get(&format!("/api/v1/throughput?{bad}")).await;
        assert!(status.is_client_error(), "{bad}: {status} {body}");
        error_code(&body);
    }
}

async fn doctor_answers_what_jobq_doctor_finds(store: &TestStore) {
    let api = Api::start(store).await;
    made(store, "q", JobStatus::Dead).await;
    let (status, doc) = api.get("/api/v1/doctor").await;
    assert_eq!(status, StatusCode::OK, "{doc}");
    assert_eq!(doc["store"], store.store().kind().to_string());
    assert!(doc["checkedAt"].is_i64(), "{doc}");
    let findings = doc["findings"].as_array().expect("findings");
    assert_eq!(doc["healthy"], findings.is_empty());
    for f in findings {
        for key in ["code", "severity", "message", "advice"] {
            assert!(f[key].as_str().is_some_and(|v| !v.is_empty()), "{key} in {f}");
        }
    }
    let (status, me) = api.get("/api/v1/me").await;
    assert_eq!((status, me), (StatusCode::OK, json!({"token": null, "role": "admin"})));
}
