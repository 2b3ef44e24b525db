//! Events: an emit records the event and enqueues all its jobs once, a repeated id changes nothing
//! (however many callers race), and events an application stored itself are expanded once, oldest
//! first, by whoever expands.

use std::collections::BTreeMap;

use futures_util::future::join_all;
use jobq::job::{JobId, JobSpec, JobStatus, NewJob};
use jobq::store::{DynStore, Emit, EmitOutcome, Event};
use jobq::time::UnixMillis;

use crate::support::jobs::*;

fn event(id: &str, name: &str) -> Event {
    Event {
        id: id.into(),
        name: name.into(),
        payload: raw(r#"{"userId":7}"#),
        meta: BTreeMap::from([("source".to_string(), "test".to_string())]),
    }
}

/// The jobs an event becomes here: one per queue named, ids `evt:<id>#<n>`.
fn jobs_of(event: &Event, queues: &[&str]) -> Vec<NewJob> {
    queues
        .iter()
        .enumerate()
        .map(|(n, q)| {
            new_job(
                JobSpec::new(JOB_TYPE, serde_json::from_str(event.payload.get()).unwrap())
                    .id(format!("evt:{}#{}", event.id, n + 1))
                    .queue(*q)
                    .meta("eventId", event.id.clone()),
            )
        })
        .collect()
}

fn emit_of(id: &str, queues: &[&str]) -> Emit {
    let event = event(id, "user.registered");
    Emit {
        jobs: jobs_of(&event, queues),
        event,
        now: T0,
    }
}

async fn job_ids(store: &DynStore) -> Vec<String> {
    let list = jobq::store::List {
        filter: Default::default(),
        limit: 1_000,
        offset: 0,
        after: None,
    };
    sorted(ids(&store.list(&list).await.expect("list")))
}

pub(super) async fn an_emit_enqueues_every_job_of_its_event_once(store: &DynStore) {
    let answers = store
        .emit(&[emit_of("e1", &["mail", "crm", "mail"]), emit_of("e2", &[])])
        .await
        .expect("emit");
    assert_eq!(answers, [EmitOutcome::Emitted, EmitOutcome::Emitted]);
    assert_eq!(job_ids(store).await, ["evt:e1#1", "evt:e1#2", "evt:e1#3"]);
    let job = get(store, &JobId::from_stored("evt:e1#2".into())).await;
    assert_eq!((job.queue.as_str(), job.status), ("crm", JobStatus::Pending));
    assert_eq!(job.payload.get(), r#"{"userId":7}"#);
    // The same id again, even with other jobs: nothing changes.
    let again = store
        .emit(&[emit_of("e1", &["other"]), emit_of("e2", &["other"])])
        .await
        .expect("emit again");
    assert_eq!(again, [EmitOutcome::Duplicate, EmitOutcome::Duplicate]);
    assert_eq!(job_ids(store).await, ["evt:e1#1", "evt:e1#2", "evt:e1#3"]);
    // A second event with one id in the same call is a duplicate of the first.
    let twice = store
        .emit(&[emit_of("e3", &["mail"]), emit_of("e3", &["crm"])])
        .await
        .expect("emit twice");
    assert_eq!(twice, [EmitOutcome::Emitted, EmitOutcome::Duplicate]);
    assert_eq!(count(store, JobStatus::Pending, T0).await, 4);
}

pub(super) async fn racing_emits_of_one_id_enqueue_its_jobs_once(store: &DynStore) {
    let emits: Vec<Emit> = (0..8).map(|_| emit_of("race", &["a", "b"])).collect();
    let answers: Vec<EmitOutcome> = join_all(emits.iter().map(|e| store.emit(std::slice::from_ref(e))))
        .await
        .into_iter()
        .map(|a| a.expect("emit").remove(0))
        .collect();
    let emitted = answers.iter().filter(|a| **a == EmitOutcome::Emitted).count();
    assert_eq!(emitted, 1, "one caller emits: {answers:?}");
    assert_eq!(job_ids(store).await, ["evt:race#1", "evt:race#2"]);
}

pub(super) async fn nothing_is_expanded_when_no_event_waits(store: &DynStore) {
    let expander = |event: &Event, _now: UnixMillis| jobs_of(event, &["x"]);
    assert_eq!(
        store
            .expand_events(&jobq::store::ExpandEvents {
                expander: &expander,
                limit: 100,
                now: T0
            })
            .await
            .expect("expand"),
        0
    );
    // Emitted events are expanded already.
    store.emit(&[emit_of("done", &["x"])]).await.expect("emit");
    assert_eq!(
        store
            .expand_events(&jobq::store::ExpandEvents {
                expander: &expander,
                limit: 100,
                now: at(1_000)
            })
            .await
            .expect("expand"),
        0
    );
    assert_eq!(job_ids(store).await, ["evt:done#1"]);
}
