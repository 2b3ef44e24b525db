//! Import: jobs written back exactly as another store held them, each in its status's place; held ids
//! skipped or replaced; live unique keys respected; a dry run writes nothing.

use std::collections::BTreeMap;

use jobq::job::{Job, JobError, JobStatus, Progress};
use jobq::store::{
    DynStore, EnqueueOutcome, Import, ImportAnswer, JobFilter, List, OnConflict, Resolution, Resolve, ResolveAnswer,
};

use crate::support::jobs::*;

/// A job with every field set, as an export of a store that ran it would hold it.
fn whole(name: &str, status: JobStatus) -> Job {
    let live = !status.is_terminal();
    let ran = status != JobStatus::Pending;
    Job {
        id: id(name),
        queue: "imported".into(),
        job_type: "import.test".into(),
        payload: raw(&format!(r#"{{"n":"{name}","text":"zażółć ✓ 日本"}}"#)),
        meta: BTreeMap::from([("tenantId".to_string(), "7".to_string())]),
        priority: -2,
        status,
        attempt: if ran { 2 } else { 1 },
        max_attempts: 7,
        run_at: at(100),
        unique_key: Some(format!("key-{name}")),
        unique_mode: jobq::job::UniqueMode::Debounce {
            queue_behind: false,
            window_ms: 30_000,
            max_wait_ms: Some(300_000),
        },
        timeout_ms: Some(30_000),
        // A century ahead: carried over, never reached by a test.
        expires_at: Some(at(100 * 365 * 24 * 3_600_000)),
        progress: (status == JobStatus::Running).then(|| Progress {
            percent: 40,
            message: Some("half way".into()),
        }),
        result: (status == JobStatus::Succeeded).then(|| raw(r#"{"ok":true}"#)),
        errors: vec![JobError {
            attempt: 1,
            at: at(50),
            error: "the first try failed".into(),
        }],
        created_at: at(10),
        started_at: ran.then(|| at(200)),
        finished_at: (ran && status != JobStatus::Running).then(|| at(300)),
        // A claim records its start as the first heartbeat.
        heartbeat_at: ran.then(|| if status == JobStatus::Running { at(250) } else { at(200) }),
        worker_id: (status == JobStatus::Running).then(|| "gone-worker".to_string()),
        snoozes: if live { 1 } else { 0 },
        has_dependencies: false,
        join: jobq::job::Join::All,
        deps: Vec::new(),
    }
}

async fn import(store: &DynStore, jobs: Vec<Job>, on_conflict: OnConflict, dry_run: bool) -> Vec<ImportAnswer> {
    let import = Import {
        jobs,
        on_conflict,
        dry_run,
    };
    store.import(&import).await.expect("import")
}

fn json(job: &Job) -> serde_json::Value {
    serde_json::to_value(job).expect("job JSON")
}

const EVERY_STATUS: [JobStatus; 7] = [
    JobStatus::Pending,
    JobStatus::Running,
    JobStatus::Waiting,
    JobStatus::Succeeded,
    JobStatus::Dead,
    JobStatus::Cancelled,
    JobStatus::Discarded,
];

pub(super) async fn import_writes_every_status_exactly_and_in_its_place(store: &DynStore) {
    let jobs: Vec<Job> = EVERY_STATUS.iter().map(|s| whole(s.as_str(), *s)).collect();
    let answers = import(store, jobs.clone(), OnConflict::Skip, false).await;
    assert_eq!(answers, vec![ImportAnswer::Imported; jobs.len()]);
    for job in &jobs {
        assert_eq!(json(&get(store, &job.id).await), json(job), "job {} read back", job.id);
    }
    // Each is where its status puts it: listed by status ...
    for job in &jobs {
        let list = List {
            filter: JobFilter {
                statuses: vec![job.status],
                ..Default::default()
            },
            limit: 10,
            offset: 0,
            after: None,
        };
        assert_eq!(ids(&store.list(&list).await.expect("list")), [job.id.to_string()]);
    }
    // ... the pending one claimable as its next attempt ...
    let claimed = claim_one(store, "imported", WORKER, at(1_000)).await;
    assert_eq!((claimed.id.as_str(), claimed.attempt), ("pending", 2));
    // ... the running one rescued once its heartbeat is stale ...
    let rescued = rescue_stale(store, at(500), at(5_000), 10).await;
    assert_eq!(
        rescued.iter().map(|r| r.id.to_string()).collect::<Vec<_>>(),
        ["running"]
    );
    // ... the waiting one resolvable ...
    let resolve = Resolve {
        id: id("waiting"),
        attempt: None,
        action: Resolution::Succeed { result: None },
    };
    let resolved = store.resolve(&[resolve], at(6_000)).await.expect("resolve");
    assert_eq!(
        resolved,
        [ResolveAnswer::Resolved {
            status: JobStatus::Succeeded
        }]
    );
    // ... and the live ones hold their unique keys, the finished ones none.
    let mut again = spec("again-dead").queue("imported");
    again.unique_key = Some("key-dead".into());
    assert_eq!(enqueue(store, [again]).await[0].outcome, EnqueueOutcome::Created);
    let mut again = spec("again-pending").queue("imported");
    again.unique_key = Some("key-pending".into());
    let answer = &enqueue(store, [again]).await[0];
    assert_eq!(
        (answer.outcome, answer.id.as_str()),
        (EnqueueOutcome::Coalesced, "pending")
    );
}

pub(super) async fn import_skips_or_replaces_held_ids_and_a_dry_run_writes_nothing(store: &DynStore) {
    add(store, spec("held")).await;
    let before = json(&get(store, &id("held")).await);
    let mut other = whole("held", JobStatus::Dead);
    other.queue = "default".into();
    for (on_conflict, dry_run, answer) in [
        (OnConflict::Skip, false, ImportAnswer::Skipped),
        (OnConflict::Replace, true, ImportAnswer::Replaced),
    ] {
        assert_eq!(import(store, vec![other.clone()], on_conflict, dry_run).await, [answer]);
        assert_eq!(json(&get(store, &id("held")).await), before);
    }
    assert_eq!(
        import(store, vec![whole("fresh", JobStatus::Pending)], OnConflict::Skip, true).await,
        [ImportAnswer::Imported]
    );
    assert!(
        store.get(&id("fresh")).await.expect("get").is_none(),
        "a dry run wrote a job"
    );
    assert_eq!(
        import(store, vec![other.clone()], OnConflict::Replace, false).await,
        [ImportAnswer::Replaced]
    );
    assert_eq!(json(&get(store, &id("held")).await), json(&other));
    // The replaced job left its place: nothing is claimable any more.
    assert!(claim(store, "default", WORKER, 10, at(1_000)).await.is_empty());
    // The same id twice in one call: the second meets the first.
    let twice = vec![whole("twice", JobStatus::Dead), whole("twice", JobStatus::Succeeded)];
    assert_eq!(
        import(store, twice.clone(), OnConflict::Skip, false).await,
        [ImportAnswer::Imported, ImportAnswer::Skipped]
    );
    assert_eq!(get(store, &id("twice")).await.status, JobStatus::Dead);
}

pub(super) async fn import_leaves_out_a_live_job_whose_unique_key_a_live_job_holds(store: &DynStore) {
    let mut holder = spec("holder").queue("imported");
    holder.unique_key = Some("key-shared".into());
    add(store, holder).await;
    let mut live = whole("live", JobStatus::Pending);
    live.unique_key = Some("key-shared".into());
    let mut finished = whole("finished", JobStatus::Dead);
    finished.unique_key = Some("key-shared".into());
    let mut elsewhere = whole("elsewhere", JobStatus::Pending);
    elsewhere.unique_key = Some("key-shared".into());
    elsewhere.queue = "other".into();
    assert_eq!(
        import(store, vec![live, finished, elsewhere], OnConflict::Skip, false).await,
        [
            ImportAnswer::KeyTaken { holder: id("holder") },
            ImportAnswer::Imported,
            ImportAnswer::Imported
        ]
    );
    assert!(store.get(&id("live")).await.expect("get").is_none());
}
