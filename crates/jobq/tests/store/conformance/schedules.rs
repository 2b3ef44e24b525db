//! Schedules' records and ticks: the store records each schedule once, fires each tick at most once
//! however many callers race (and never again once handled, even after its job is gone), honours pause
//! and the overlap rules, and answers a tick of an unrecorded schedule `Unknown`.

use futures_util::future::join_all;
use jobq::job::{JobId, JobSpec, JobStatus};
use jobq::store::{Cleanup, DynStore, Overlap, ScheduleKey, Tick, TickOutcome, Transition};
use jobq::time::UnixMillis;

use crate::support::jobs::*;

fn key(name: &str) -> ScheduleKey {
    ScheduleKey {
        name: name.into(),
        queue: "sched".into(),
    }
}

fn tick_id(name: &str, t: UnixMillis) -> String {
    format!("sched:{name}@{}", t.0)
}

fn tick(name: &str, t: UnixMillis, overlap: Overlap) -> Tick {
    let spec = JobSpec::new(JOB_TYPE, serde_json::json!({ "tick": t.0 }))
        .id(tick_id(name, t))
        .queue("sched")
        .meta("schedule", name);
    Tick {
        schedule: name.into(),
        at: t,
        job: new_job(spec),
        overlap,
    }
}

async fn fire(store: &DynStore, ticks: &[Tick]) -> Vec<TickOutcome> {
    store.fire_ticks(ticks).await.expect("fire ticks")
}

fn enqueued(name: &str, t: UnixMillis) -> TickOutcome {
    TickOutcome::Enqueued(JobId::from_stored(tick_id(name, t)))
}

async fn record(store: &DynStore, name: &str) -> jobq::store::ScheduleState {
    store.schedules(&[key(name)]).await.expect("read")[0]
        .clone()
        .expect("a record")
}

pub(super) async fn schedules_are_recorded_once_from_their_first_sighting(store: &DynStore) {
    assert_eq!(store.schedules(&[key("a")]).await.expect("read"), [None]);
    store
        .register_schedules(&[key("a"), key("b")], at(1_000))
        .await
        .expect("register");
    store
        .register_schedules(&[key("a")], at(9_000))
        .await
        .expect("register again");
    let a = record(store, "a").await;
    assert_eq!(a.name, "a");
    assert_eq!(a.not_before, at(1_000), "the first sighting stands");
    assert_eq!(
        (a.last_tick, a.paused, a.last_job.clone(), a.last_job_status),
        (None, false, None, None)
    );
    let both = store.schedules(&[key("b"), key("nope"), key("a")]).await.expect("read");
    assert_eq!(
        both.iter().map(Option::is_some).collect::<Vec<_>>(),
        [true, false, true],
        "input order"
    );
}

pub(super) async fn a_tick_is_enqueued_once_and_never_again_even_after_its_job_is_gone(store: &DynStore) {
    store
        .register_schedules(&[key("s")], at(1_000))
        .await
        .expect("register");
    let t = at(2_000);
    assert_eq!(fire(store, &[tick("s", t, Overlap::Allow)]).await, [enqueued("s", t)]);
    let job = get(store, &JobId::from_stored(tick_id("s", t))).await;
    assert_eq!((job.queue.as_str(), job.status), ("sched", JobStatus::Pending));
    assert_eq!(job.meta.get("schedule").map(String::as_str), Some("s"));
    let state = record(store, "s").await;
    assert_eq!(state.last_tick, Some(t));
    assert_eq!(
        state.last_job.as_ref().map(JobId::as_str),
        Some(tick_id("s", t).as_str())
    );
    assert_eq!(state.last_job_status, Some(JobStatus::Pending));
    assert_eq!(
        fire(store, &[tick("s", t, Overlap::Allow)]).await,
        [TickOutcome::AlreadyHandled]
    );
    // Its job cancelled and deleted: the tick still counts as handled.
    store
        .cancel(&jobq::store::Cancel {
            target: jobq::store::CancelTarget::Ids(vec![JobId::from_stored(tick_id("s", t))]),
            now: at(2_100),
        })
        .await
        .expect("cancel");
    let deleted = store
        .cleanup(&Cleanup {
            finished_before: Some(at(3_000)),
            limit: 100,
            ..Default::default()
        })
        .await
        .expect("cleanup");
    assert_eq!(deleted, 1);
    assert_eq!(
        fire(store, &[tick("s", t, Overlap::Allow)]).await,
        [TickOutcome::AlreadyHandled]
    );
    assert_eq!(record(store, "s").await.last_job_status, None, "the job is gone");
    // Older ticks (a lagging clock) and ticks before the first sighting never come back either.
    assert_eq!(
        fire(
            store,
            &[tick("s", at(1_500), Overlap::Allow), tick("s", at(500), Overlap::Allow)]
        )
        .await,
        [TickOutcome::AlreadyHandled, TickOutcome::AlreadyHandled]
    );
    // Several ticks of one schedule in one call, oldest first.
    assert_eq!(
        fire(
            store,
            &[
                tick("s", at(3_000), Overlap::Allow),
                tick("s", at(4_000), Overlap::Allow)
            ]
        )
        .await,
        [enqueued("s", at(3_000)), enqueued("s", at(4_000))]
    );
    assert_eq!(record(store, "s").await.last_tick, Some(at(4_000)));
}

pub(super) async fn racing_fires_enqueue_each_tick_once(store: &DynStore) {
    store
        .register_schedules(&[key("r"), key("q")], at(0))
        .await
        .expect("register");
    let ticks: Vec<Tick> = (1..=5)
        .flat_map(|n| {
            [
                tick("r", at(n * 1_000), Overlap::Allow),
                tick("q", at(n * 1_000), Overlap::Allow),
            ]
        })
        .collect();
    let calls = (0..8).map(|_| store.fire_ticks(&ticks));
    let answers: Vec<Vec<TickOutcome>> = join_all(calls).await.into_iter().map(|a| a.expect("fire")).collect();
    for (n, t) in ticks.iter().enumerate() {
        let wins = answers
            .iter()
            .filter(|a| matches!(a[n], TickOutcome::Enqueued(_)))
            .count();
        assert_eq!(
            wins, 1,
            "tick {} of {} enqueued by exactly one caller",
            t.at.0, t.schedule
        );
    }
    assert_eq!(count(store, JobStatus::Pending, at(10_000)).await, 10);
}

pub(super) async fn overlap_rules_hold_ticks_back_while_the_last_job_lives(store: &DynStore) {
    store.register_schedules(&[key("o")], at(0)).await.expect("register");
    assert_eq!(
        fire(store, &[tick("o", at(1_000), Overlap::Skip)]).await,
        [enqueued("o", at(1_000))]
    );
    // Pending: skip and one-pending both hold the next tick back, which is still handled.
    assert_eq!(
        fire(store, &[tick("o", at(2_000), Overlap::Skip)]).await,
        [TickOutcome::Skipped]
    );
    assert_eq!(
        fire(store, &[tick("o", at(3_000), Overlap::OnePending)]).await,
        [TickOutcome::Skipped]
    );
    assert_eq!(record(store, "o").await.last_tick, Some(at(3_000)));
    assert_eq!(
        fire(store, &[tick("o", at(3_000), Overlap::Allow)]).await,
        [TickOutcome::AlreadyHandled]
    );
    // Running: skip still holds back; one-pending lets one more wait.
    let running = claim_one(store, "sched", WORKER, at(3_500)).await;
    assert_eq!(running.id.as_str(), tick_id("o", at(1_000)));
    assert_eq!(
        fire(store, &[tick("o", at(4_000), Overlap::Skip)]).await,
        [TickOutcome::Skipped]
    );
    assert_eq!(
        fire(store, &[tick("o", at(5_000), Overlap::OnePending)]).await,
        [enqueued("o", at(5_000))]
    );
    // The newest job is pending again: one-pending holds back.
    assert_eq!(
        fire(store, &[tick("o", at(6_000), Overlap::OnePending)]).await,
        [TickOutcome::Skipped]
    );
    // Allow never holds back.
    assert_eq!(
        fire(store, &[tick("o", at(7_000), Overlap::Allow)]).await,
        [enqueued("o", at(7_000))]
    );
    let lease = jobq::store::Lease::of(&running);
    assert!(finish(store, &lease, Transition::Succeeded { result: None }, at(7_500)).await);
}

pub(super) async fn paused_schedules_fire_nothing_and_a_resume_may_skip_what_was_missed(store: &DynStore) {
    // Pausing records a schedule no worker has seen.
    store
        .set_schedule_paused(&jobq::store::SetSchedulePaused {
            key: &key("p"),
            paused: true,
            now: at(1_000),
            skip_missed: false,
        })
        .await
        .expect("pause");
    let state = record(store, "p").await;
    assert!(state.paused);
    assert_eq!(state.not_before, at(1_000));
    assert_eq!(
        fire(store, &[tick("p", at(2_000), Overlap::Allow)]).await,
        [TickOutcome::Paused]
    );
    // Resumed without catch-up at 5s: the ticks missed before it are never enqueued.
    store
        .set_schedule_paused(&jobq::store::SetSchedulePaused {
            key: &key("p"),
            paused: false,
            now: at(5_000),
            skip_missed: true,
        })
        .await
        .expect("resume");
    assert!(!record(store, "p").await.paused);
    assert_eq!(
        fire(
            store,
            &[
                tick("p", at(3_000), Overlap::Allow),
                tick("p", at(6_000), Overlap::Allow)
            ]
        )
        .await,
        [TickOutcome::AlreadyHandled, enqueued("p", at(6_000))]
    );
    // Paused and resumed with catch-up: what was missed comes back.
    store
        .set_schedule_paused(&jobq::store::SetSchedulePaused {
            key: &key("p"),
            paused: true,
            now: at(7_000),
            skip_missed: false,
        })
        .await
        .expect("pause");
    store
        .set_schedule_paused(&jobq::store::SetSchedulePaused {
            key: &key("p"),
            paused: false,
            now: at(9_000),
            skip_missed: false,
        })
        .await
        .expect("resume");
    assert_eq!(
        fire(store, &[tick("p", at(8_000), Overlap::Allow)]).await,
        [enqueued("p", at(8_000))]
    );
}

pub(super) async fn a_tick_of_an_unrecorded_schedule_is_unknown(store: &DynStore) {
    assert_eq!(
        fire(store, &[tick("ghost", at(1_000), Overlap::Allow)]).await,
        [TickOutcome::Unknown]
    );
    assert!(store.schedules(&[key("ghost")]).await.expect("read")[0].is_none());
    assert_eq!(count(store, JobStatus::Pending, at(2_000)).await, 0);
}

pub(super) async fn restored_schedules_read_back_as_written_and_fire_on_from_there(store: &DynStore) {
    // A record the store holds is replaced whole; one it does not hold is written.
    store
        .register_schedules(&[key("held")], at(1_000))
        .await
        .expect("register");
    let t = at(60_000);
    let moved = |name: &str, paused: bool| jobq::store::ScheduleState {
        name: name.into(),
        last_tick: Some(t),
        not_before: at(500),
        paused,
        last_job: Some(JobId::from_stored(tick_id(name, t))),
        last_job_status: None,
    };
    let records = vec![(key("held"), moved("held", false)), (key("new"), moved("new", true))];
    store.restore_schedules(&records, at(70_000)).await.expect("restore");
    for (_, written) in &records {
        assert_eq!(record(store, &written.name).await, *written);
    }
    // The tick the source handled is not enqueued again; the next one is, and the paused one waits.
    let outcomes = fire(
        store,
        &[
            tick("held", t, Overlap::Allow),
            tick("held", at(120_000), Overlap::Allow),
            tick("new", at(120_000), Overlap::Allow),
        ],
    )
    .await;
    assert_eq!(
        outcomes,
        [
            TickOutcome::AlreadyHandled,
            enqueued("held", at(120_000)),
            TickOutcome::Paused
        ]
    );
}
