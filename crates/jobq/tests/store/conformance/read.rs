//! Reading: stats by queue and status (ready apart from scheduled), list with filters and pages newest
//! first, and get.

use jobq::job::{Job, JobSpec, JobStatus};
use jobq::store::{Cleanup, DynStore, JobFilter, List, ListCursor, QueueStats};

use crate::support::jobs::*;

async fn list(store: &DynStore, filter: JobFilter) -> Vec<String> {
    ids(&list_page(store, filter, 100, 0).await)
}

async fn list_page(store: &DynStore, filter: JobFilter, limit: u32, offset: u64) -> Vec<Job> {
    store
        .list(&List {
            filter,
            limit,
            offset,
            after: None,
        })
        .await
        .expect("list")
}

/// A page after `after` in list order.
async fn list_after(store: &DynStore, filter: JobFilter, limit: u32, after: &Job) -> Vec<String> {
    let list = List {
        filter,
        limit,
        offset: 0,
        after: Some(ListCursor::of(after)),
    };
    ids(&store.list(&list).await.expect("list"))
}

/// The default filter as `set` changes it.
fn filter(set: impl FnOnce(&mut JobFilter)) -> JobFilter {
    let mut filter = JobFilter::default();
    set(&mut filter);
    filter
}

pub(super) async fn stats_counts_by_queue_and_status(store: &DynStore) {
    assert!(stats(store, &[], T0).await.is_empty(), "an empty store has no queues");

    // Queue a: one of each live and terminal status, two succeeded, two ready and one scheduled.
    for (name, status) in [
        ("a-run", JobStatus::Running),
        ("a-wait", JobStatus::Waiting),
        ("a-ok1", JobStatus::Succeeded),
        ("a-ok2", JobStatus::Succeeded),
        ("a-dead", JobStatus::Dead),
        ("a-cancel", JobStatus::Cancelled),
        ("a-drop", JobStatus::Discarded),
        ("a-late", JobStatus::Expired),
    ] {
        make(store, spec(name).queue("a"), status, at(-10_000)).await;
    }
    add_all(
        store,
        [
            spec("a-ready-old").queue("a").run_at(at(-3_000)),
            spec("a-ready").queue("a").run_at(at(-1_000)),
            spec("a-later").queue("a").run_at(at(5_000)),
            // Queue b has only a scheduled job, queue c only a ready one.
            spec("b-later").queue("b").run_at(at(9_000)),
            spec("c-ready").queue("c").run_at(T0),
        ],
    )
    .await;

    let a = QueueStats {
        queue: "a".into(),
        blocked: 0,
        ready: 2,
        scheduled: 1,
        running: 1,
        waiting: 1,
        succeeded: 2,
        dead: 1,
        cancelled: 1,
        discarded: 1,
        expired: 1,
        oldest_ready_at: Some(at(-3_000)),
    };
    let b = QueueStats {
        queue: "b".into(),
        scheduled: 1,
        ..Default::default()
    };
    let c = QueueStats {
        queue: "c".into(),
        ready: 1,
        oldest_ready_at: Some(T0),
        ..Default::default()
    };
    assert_eq!(
        stats(store, &[], T0).await,
        [a.clone(), b.clone(), c.clone()],
        "queues by name"
    );

    // A job is ready from its run_at on.
    let later = stats(store, &[], at(5_000)).await;
    assert_eq!(
        later[0],
        QueueStats {
            ready: 3,
            scheduled: 0,
            ..a
        }
    );
    assert_eq!(later[1], b);
    let much_later = stats(store, &[], at(9_000)).await;
    assert_eq!(
        much_later[1],
        QueueStats {
            ready: 1,
            scheduled: 0,
            oldest_ready_at: Some(at(9_000)),
            ..b
        }
    );
}

pub(super) async fn stats_filtered_by_queue(store: &DynStore) {
    add_all(store, ["a", "b", "c"].map(|q| spec(&format!("{q}-1")).queue(q))).await;
    let only_b = stats(store, &["b", "no-such-queue"], T0).await;
    assert_eq!(
        only_b,
        [QueueStats {
            queue: "b".into(),
            ready: 1,
            oldest_ready_at: Some(T0),
            ..Default::default()
        }]
    );
    let two = stats(store, &["c", "a"], T0).await;
    assert_eq!(two.iter().map(|q| q.queue.as_str()).collect::<Vec<_>>(), ["a", "c"]);
}

pub(super) async fn list_filters_by_queue_type_status_and_creation_time(store: &DynStore) {
    let job = |name: &str, queue: &str, job_type: &str, created: i64| {
        created_at(
            JobSpec::new(job_type, serde_json::json!(name)).id(name).queue(queue),
            at(created),
        )
    };
    make(store, job("l2", "a", "y", -3_000), JobStatus::Running, T0).await;
    make(store, job("l3", "b", "x", -2_000), JobStatus::Succeeded, T0).await;
    add_all(store, [job("l1", "a", "x", -4_000), job("l4", "b", "y", -1_000)]).await;

    assert_eq!(list(store, JobFilter::default()).await, ["l4", "l3", "l2", "l1"]);
    let in_a = filter(|f| f.queues = vec!["a".into()]);
    assert_eq!(list(store, in_a).await, ["l2", "l1"]);
    let of_type_x = filter(|f| f.job_types = vec!["x".into()]);
    assert_eq!(list(store, of_type_x).await, ["l3", "l1"]);
    let pending = JobFilter {
        statuses: vec![JobStatus::Pending],
        ..Default::default()
    };
    assert_eq!(list(store, pending).await, ["l4", "l1"]);
    let two_statuses = JobFilter {
        statuses: vec![JobStatus::Succeeded, JobStatus::Running],
        ..Default::default()
    };
    assert_eq!(list(store, two_statuses).await, ["l3", "l2"]);
    // Since is inclusive, until exclusive.
    let window = JobFilter {
        created_since: Some(at(-3_000)),
        created_until: Some(at(-1_000)),
        ..Default::default()
    };
    assert_eq!(list(store, window).await, ["l3", "l2"]);
    let combined = JobFilter {
        queues: vec!["a".into(), "b".into()],
        job_types: vec!["y".into()],
        ..Default::default()
    };
    assert_eq!(list(store, combined).await, ["l4", "l2"]);
    let nothing = JobFilter {
        queues: vec!["a".into()],
        statuses: vec![JobStatus::Dead],
        ..Default::default()
    };
    assert!(list(store, nothing).await.is_empty());

    // Listed jobs are whole jobs.
    let running = filter(|f| f.statuses = vec![JobStatus::Running]);
    let jobs = list_page(store, running, 10, 0).await;
    assert_eq!(
        (jobs[0].job_type.as_str(), jobs[0].worker_id.as_deref(), jobs[0].attempt),
        ("y", Some(WORKER), 1)
    );
    assert_eq!(value(&jobs[0].payload), serde_json::json!("l2"));
}

pub(super) async fn list_is_newest_first_with_pagination(store: &DynStore) {
    // n00 … n09 created 10 ms apart; n05b shares n05's creation time, so the id decides (descending).
    let mut specs: Vec<JobSpec> = (0..10)
        .map(|i| created_at(spec(&format!("n{i:02}")), at(i * 10)))
        .collect();
    specs.push(created_at(spec("n05b"), at(50)));
    add_all(store, specs).await;

    let everything = list(store, JobFilter::default()).await;
    let expected = [
        "n09", "n08", "n07", "n06", "n05b", "n05", "n04", "n03", "n02", "n01", "n00",
    ];
    assert_eq!(everything, expected);

    let mut paged = Vec::new();
    for page in 0..3 {
        let jobs = list_page(store, JobFilter::default(), 4, page * 4).await;
        assert_eq!(jobs.len(), if page < 2 { 4 } else { 3 });
        paged.extend(ids(&jobs));
    }
    assert_eq!(paged, expected);
    assert!(list_page(store, JobFilter::default(), 4, 11).await.is_empty());
    let filtered = JobFilter {
        created_since: Some(at(50)),
        ..Default::default()
    };
    assert_eq!(ids(&list_page(store, filtered, 2, 3).await), ["n06", "n05b"]);
}

pub(super) async fn list_pages_on_after_a_cursor_in_list_order(store: &DynStore) {
    // As above: n05b shares n05's creation time, and a cursor at one of them must not skip the other.
    let mut specs: Vec<JobSpec> = (0..10)
        .map(|i| {
            created_at(
                spec(&format!("n{i:02}")).queue(if i % 2 == 0 { "even" } else { "odd" }),
                at(i * 10),
            )
        })
        .collect();
    specs.push(created_at(spec("n05b").queue("odd"), at(50)));
    add_all(store, specs).await;

    let mut paged = Vec::new();
    let mut after: Option<Job> = None;
    loop {
        let list = List {
            limit: 3,
            after: after.as_ref().map(ListCursor::of),
            ..Default::default()
        };
        let jobs = store.list(&list).await.expect("list");
        paged.extend(ids(&jobs));
        match jobs.last() {
            Some(last) if jobs.len() == 3 => after = Some(last.clone()),
            _ => break,
        }
    }
    let expected = [
        "n09", "n08", "n07", "n06", "n05b", "n05", "n04", "n03", "n02", "n01", "n00",
    ];
    assert_eq!(paged, expected);

    let n05b = get(store, &id("n05b")).await;
    assert_eq!(list_after(store, JobFilter::default(), 2, &n05b).await, ["n05", "n04"]);
    let odd = filter(|f| f.queues = vec!["odd".into()]);
    assert_eq!(list_after(store, odd, 10, &n05b).await, ["n05", "n03", "n01"]);
    // With a status and a time window as well; an offset counts from the cursor.
    let since = filter(|f| {
        f.statuses = vec![JobStatus::Pending];
        f.created_since = Some(at(20));
    });
    assert_eq!(
        list_after(store, since.clone(), 10, &n05b).await,
        ["n05", "n04", "n03", "n02"]
    );
    let skipped = List {
        filter: since,
        limit: 2,
        offset: 1,
        after: Some(ListCursor::of(&n05b)),
    };
    assert_eq!(ids(&store.list(&skipped).await.expect("list")), ["n04", "n03"]);
    let n00 = get(store, &id("n00")).await;
    assert!(list_after(store, JobFilter::default(), 10, &n00).await.is_empty());
}

pub(super) async fn get_returns_none_for_unknown_id(store: &DynStore) {
    assert!(store.get(&id("no-such-job")).await.expect("get").is_none());
    make(store, spec("gone"), JobStatus::Succeeded, T0).await;
    assert_eq!(get(store, &id("gone")).await.status, JobStatus::Succeeded);
    assert_eq!(
        store
            .cleanup(&Cleanup {
                limit: 10,
                ..Default::default()
            })
            .await
            .expect("cleanup"),
        1
    );
    assert!(store.get(&id("gone")).await.expect("get").is_none());
}
