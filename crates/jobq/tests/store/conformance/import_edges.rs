//! The edges of imported jobs (`Store::import_edges`), written once every job of the import is:
//! a dependent arrives before the jobs it waits for (an export is newest first), and its edges then
//! wait for them as an enqueue's would; an edge to a job that has ended is resolved by that end, one
//! to a job the store lacks breaks as a deletion breaks it, and a blocked job is decided on all of
//! its edges. Every case ends its dependencies through the store's own paths afterwards.

use std::collections::BTreeMap;

use jobq::job::{DependOn, Job, JobStatus, Join};
use jobq::store::{
    DynStore, EdgeState, Import, ImportAnswer, ImportEdge, ImportEdges, Lease, OnConflict, ReadEdges, Transition,
};

use crate::support::jobs::*;

const QUEUE: &str = "imported";
const ELSEWHERE: &str = "imported-elsewhere";

/// A job as an export of a store holds it: blocked ones created, the others as they stood.
fn job(name: &str, queue: &str, status: JobStatus) -> Job {
    let ended = status.is_terminal();
    Job {
        id: id(name),
        queue: queue.into(),
        job_type: "import.edges".into(),
        payload: raw("{}"),
        meta: BTreeMap::new(),
        priority: 0,
        status,
        attempt: u32::from(ended),
        max_attempts: 3,
        run_at: at(10),
        unique_key: None,
        unique_mode: jobq::job::UniqueMode::Coalesce,
        timeout_ms: None,
        expires_at: None,
        progress: None,
        result: (status == JobStatus::Succeeded).then(|| raw(r#"{"ok":true}"#)),
        errors: Vec::new(),
        created_at: at(10),
        started_at: ended.then(|| at(20)),
        finished_at: ended.then(|| at(30)),
        heartbeat_at: ended.then(|| at(20)),
        worker_id: None,
        snoozes: 0,
        has_dependencies: false,
        join: Join::All,
        deps: Vec::new(),
    }
}

async fn import(store: &DynStore, jobs: Vec<Job>) {
    let n = jobs.len();
    let import = Import {
        jobs,
        on_conflict: OnConflict::Skip,
        dry_run: false,
    };
    let answers = store.import(&import).await.expect("import");
    assert_eq!(answers, vec![ImportAnswer::Imported; n]);
}

fn edge(dependency: &str, queue: Option<&str>, on: DependOn, state: EdgeState) -> ImportEdge {
    ImportEdge {
        id: id(dependency),
        queue: queue.map(str::to_string),
        on,
        state,
    }
}

fn edges_of(name: &str, queue: &str, join: Join, after: Vec<ImportEdge>) -> ImportEdges {
    ImportEdges {
        job: id(name),
        queue: queue.into(),
        join,
        after,
    }
}

async fn import_edges(store: &DynStore, edges: &[ImportEdges], now: i64) -> Vec<bool> {
    store.import_edges(edges, at(now)).await.expect("import edges")
}

async fn status(store: &DynStore, name: &str) -> JobStatus {
    get(store, &id(name)).await.status
}

/// A claim of none from `queue`: on a cluster it applies what other slots hold for it.
async fn deliver(store: &DynStore, queue: &str, now: i64) {
    assert!(claim(store, queue, WORKER, 0, at(now)).await.is_empty());
}

async fn succeed_next(store: &DynStore, queue: &str, name: &str, now: i64) {
    let job = claim_one(store, queue, WORKER, at(now)).await;
    assert_eq!(job.id.as_str(), name, "the next ready job of {queue}");
    let done = Transition::Succeeded { result: None };
    assert!(finish(store, &Lease::of(&job), done, at(now)).await);
}

pub(super) async fn imported_edges_wait_for_dependencies_imported_after_their_dependents(store: &DynStore) {
    // Newest first, as an export lists them: the dependents, then what they wait for.
    import(
        store,
        vec![
            job("j", QUEUE, JobStatus::Blocked),
            job("far", ELSEWHERE, JobStatus::Blocked),
        ],
    )
    .await;
    import(store, vec![job("d", QUEUE, JobStatus::Pending)]).await;
    let edges = [
        edges_of(
            "j",
            QUEUE,
            Join::All,
            vec![edge("d", Some(QUEUE), DependOn::Success, EdgeState::Open)],
        ),
        edges_of(
            "far",
            ELSEWHERE,
            Join::All,
            vec![edge("d", Some(QUEUE), DependOn::Finish, EdgeState::Open)],
        ),
    ];
    assert_eq!(import_edges(store, &edges, 40).await, [true, true]);
    // Written once: a second call (a resumed import) leaves them.
    assert_eq!(import_edges(store, &edges, 41).await, [false, false]);
    let j = get(store, &id("j")).await;
    assert_eq!(
        (j.status, j.has_dependencies, j.join),
        (JobStatus::Blocked, true, Join::All)
    );
    let read = ReadEdges {
        ids: vec![id("j"), id("d")],
        queue: None,
        dependents: true,
        results: false,
    };
    let read = store.edges(&read).await.expect("edges");
    let to_d: Vec<_> = read[0]
        .dependencies
        .iter()
        .map(|e| (e.job_id.to_string(), e.on, e.state))
        .collect();
    assert_eq!(to_d, [("d".to_string(), DependOn::Success, EdgeState::Open)]);
    let waiting: Vec<String> = read[1].dependents.iter().map(|e| e.job_id.to_string()).collect();
    assert_eq!(sorted(waiting), ["far", "j"]);

    // The dependency's end releases both, the one in another queue through its outbox on a cluster.
    succeed_next(store, QUEUE, "d", 50).await;
    deliver(store, ELSEWHERE, 51).await;
    assert_eq!(status(store, "j").await, JobStatus::Pending);
    assert_eq!(status(store, "far").await, JobStatus::Pending);
    succeed_next(store, QUEUE, "j", 52).await;
    succeed_next(store, ELSEWHERE, "far", 53).await;
}

pub(super) async fn an_imported_edge_to_a_job_that_ended_is_resolved_by_its_end(store: &DynStore) {
    import(
        store,
        vec![
            job("runs", QUEUE, JobStatus::Blocked),
            job("stops", QUEUE, JobStatus::Blocked),
            job("after-stops", ELSEWHERE, JobStatus::Blocked),
            job("ok", QUEUE, JobStatus::Succeeded),
            job("failed", ELSEWHERE, JobStatus::Dead),
        ],
    )
    .await;
    let edges = [
        edges_of(
            "runs",
            QUEUE,
            Join::All,
            vec![edge("ok", Some(QUEUE), DependOn::Success, EdgeState::Open)],
        ),
        edges_of(
            "stops",
            QUEUE,
            Join::All,
            vec![
                edge("ok", Some(QUEUE), DependOn::Success, EdgeState::Open),
                edge("failed", Some(ELSEWHERE), DependOn::Success, EdgeState::Open),
            ],
        ),
        edges_of(
            "after-stops",
            ELSEWHERE,
            Join::All,
            vec![edge("stops", Some(QUEUE), DependOn::Success, EdgeState::Open)],
        ),
    ];
    assert_eq!(import_edges(store, &edges, 40).await, [true, true, true]);
    deliver(store, ELSEWHERE, 41).await;
    assert_eq!(status(store, "runs").await, JobStatus::Pending);
    let stops = get(store, &id("stops")).await;
    assert_eq!(stops.status, JobStatus::Cancelled);
    let error = &stops.errors.last().expect("the reason").error;
    assert_eq!(
        error,
        &jobq::job::broken_dependency_error("failed", JobStatus::Dead, DependOn::Success)
    );
    // The cancel cascades to what waits for it, in another queue too.
    assert_eq!(status(store, "after-stops").await, JobStatus::Cancelled);
    succeed_next(store, QUEUE, "runs", 42).await;
}

pub(super) async fn an_imported_edge_to_a_job_the_store_lacks_breaks_as_a_deletion_does(store: &DynStore) {
    import(
        store,
        vec![
            job("on-success", QUEUE, JobStatus::Blocked),
            job("on-finish", QUEUE, JobStatus::Blocked),
            job("gone-before", QUEUE, JobStatus::Blocked),
        ],
    )
    .await;
    let edges = [
        edges_of(
            "on-success",
            QUEUE,
            Join::All,
            vec![edge(
                "never-exported",
                Some(ELSEWHERE),
                DependOn::Success,
                EdgeState::Open,
            )],
        ),
        edges_of(
            "on-finish",
            QUEUE,
            Join::All,
            vec![edge(
                "never-exported",
                Some(ELSEWHERE),
                DependOn::Finish,
                EdgeState::Open,
            )],
        ),
        // A dependency deleted in the source: its edge had broken there already, naming no queue.
        edges_of(
            "gone-before",
            QUEUE,
            Join::All,
            vec![edge("deleted", None, DependOn::Success, EdgeState::Broken)],
        ),
    ];
    assert_eq!(import_edges(store, &edges, 40).await, [true, true, true]);
    assert_eq!(status(store, "on-success").await, JobStatus::Cancelled);
    assert_eq!(status(store, "on-finish").await, JobStatus::Pending);
    assert_eq!(status(store, "gone-before").await, JobStatus::Cancelled);
    // Nothing is left blocked for a job that will not come.
    assert!(store.stranded(10).await.expect("stranded").is_empty());
}

pub(super) async fn imported_edges_keep_their_states_and_join(store: &DynStore) {
    // Due after the jobs it lets run, so that a claim takes them first.
    let mut live = job("live", QUEUE, JobStatus::Pending);
    live.run_at = at(15);
    import(
        store,
        vec![
            job("any", QUEUE, JobStatus::Blocked),
            job("all", QUEUE, JobStatus::Blocked),
            live,
            job("done", QUEUE, JobStatus::Succeeded),
        ],
    )
    .await;
    let edges = [
        // Read by the export as met while the job still read blocked: it runs now.
        edges_of(
            "any",
            QUEUE,
            Join::Any,
            vec![
                edge("done", Some(QUEUE), DependOn::Success, EdgeState::Met),
                edge("live", Some(QUEUE), DependOn::Success, EdgeState::Open),
            ],
        ),
        edges_of(
            "all",
            QUEUE,
            Join::All,
            vec![
                edge("done", Some(QUEUE), DependOn::Success, EdgeState::Met),
                edge("live", Some(QUEUE), DependOn::Success, EdgeState::Open),
            ],
        ),
    ];
    assert_eq!(import_edges(store, &edges, 40).await, [true, true]);
    let any = get(store, &id("any")).await;
    assert_eq!((any.status, any.join), (JobStatus::Pending, Join::Any));
    assert_eq!(status(store, "all").await, JobStatus::Blocked);
    succeed_next(store, QUEUE, "any", 41).await;
    // The open edges of both wait for `live`: its end releases `all`, once.
    succeed_next(store, QUEUE, "live", 42).await;
    assert_eq!(status(store, "all").await, JobStatus::Pending);
    succeed_next(store, QUEUE, "all", 43).await;
    assert!(store.stranded(10).await.expect("stranded").is_empty());
}
