//! Events on Redis: `emit.lua` records an event and enqueues its jobs in one script (on a cluster,
//! one script per hash slot of its queues), and the events list is where any client emits:
//! `LPUSH <prefix>events '{"event":"user.registered","payload":{"userId":7}}'` (optional `id` and
//! `meta`). Workers take the list in batches the way they take an inbox (`inbox_take.lua` into a
//! processing list of their own, `inbox_done.lua` when done), so an item is never lost, and an item
//! without an `id` gets one from its processing list's name and its place in it, so a batch taken
//! over from a worker that died is emitted again as the same events, which the records make no-ops.
//! Items that are not events are filed under the list's rejected list with why.

use std::collections::BTreeMap;

use futures_util::future::try_join_all;
use redis::Value;
use serde::Deserialize;
use serde_json::value::RawValue;

use super::RedisStore;
use super::inbox::{STALE_AFTER, item_id};
use super::scripts::{self, SCRIPTS};
use crate::job::{JobId, NewJob};
use crate::store::{Emit, EmitOutcome, Event, Expander, StoreError};
use crate::time::UnixMillis;

/// An item of the events list as an application pushes it.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PushedEvent {
    event: String,
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    payload: Option<Box<RawValue>>,
    #[serde(default)]
    meta: BTreeMap<String, String>,
}

impl RedisStore {
    /// The list any client pushes events onto.
    pub fn events_key(&self) -> String {
        self.key("events")
    }

    fn events_side_key(&self, name: &str) -> String {
        format!("{{{}}}:{name}", self.events_key())
    }

    pub(super) async fn emit_events(&self, events: &[Emit]) -> Result<Vec<EmitOutcome>, StoreError> {
        let mut outcomes = Vec::with_capacity(events.len());
        // One at a time, in order: a later event of the call with an earlier one's id is its duplicate.
        for emit in events {
            outcomes.push(self.emit_one(emit).await?);
        }
        Ok(outcomes)
    }

    async fn emit_one(&self, emit: &Emit) -> Result<EmitOutcome, StoreError> {
        let cluster = self.is_cluster();
        // On a cluster the whole event's record is written after its parts (see `emit.lua`).
        let whole = format!("{}:event:{}", self.events_side_key("emitted"), emit.event.id);
        if cluster {
            let found: Option<String> = self.query(redis::cmd("GET").arg(&whole), "emitting an event").await?;
            if found.is_some() {
                return Ok(EmitOutcome::Duplicate);
            }
        }
        let mut queues: Vec<String> = emit.jobs.iter().map(|j| j.queue.clone()).collect();
        queues.sort();
        queues.dedup();
        if queues.is_empty() {
            // Nobody subscribes: the record alone, in the slot of the default queue.
            queues.push(crate::job::DEFAULT_QUEUE.to_string());
        }
        let registry = self.key("queues");
        let groups = self.slot_groups(&queues);
        let calls = groups.iter().map(|group| {
            let registry = &registry;
            async move {
                let record = if cluster {
                    format!("{}event:{}", self.queue_prefix(group[0]), emit.event.id)
                } else {
                    self.key(&format!("event:{}", emit.event.id))
                };
                let mut keys = vec![record];
                keys.extend(group.iter().map(|q| self.queue_prefix(q)));
                if !cluster {
                    keys.push(registry.clone());
                }
                let mut cmd = self.script(&SCRIPTS.emit, &keys);
                cmd.arg(&emit.event.id).arg(&emit.event.name).arg(group.len());
                for job in &emit.jobs {
                    let Some(place) = group.iter().position(|q| **q == job.queue) else {
                        continue;
                    };
                    job_args(&mut cmd, place + 1, job);
                }
                let (registers, outcome): (Vec<i64>, String) =
                    self.eval(&SCRIPTS.emit, &cmd, "emitting an event", false).await?;
                let unlisted: Vec<String> = group
                    .iter()
                    .zip(registers)
                    .filter(|(_, r)| *r == 1)
                    .map(|(q, _)| q.to_string())
                    .collect();
                Ok::<_, StoreError>((outcome, unlisted))
            }
        });
        let answers = try_join_all(calls).await?;
        let unlisted: Vec<&String> = answers.iter().flat_map(|(_, u)| u).collect();
        if !unlisted.is_empty() {
            let _: () = self
                .query(redis::cmd("SADD").arg(&registry).arg(&unlisted), "emitting an event")
                .await?;
        }
        if cluster {
            let _: () = self
                .query(redis::cmd("SET").arg(&whole).arg(&emit.event.name), "emitting an event")
                .await?;
        }
        // A part found written means an earlier emit of this id: a duplicate once every part is (a
        // repeat that completed a broken emit answers Emitted).
        if answers.iter().all(|(outcome, _)| outcome == "D") {
            Ok(EmitOutcome::Duplicate)
        } else {
            Ok(EmitOutcome::Emitted)
        }
    }

    pub(super) async fn expand_pushed_events(
        &self,
        expander: &Expander,
        limit: usize,
        now: UnixMillis,
    ) -> Result<usize, StoreError> {
        let registry = self.events_side_key("processing");
        let fresh = format!("{registry}:{}", JobId::generate());
        let mut take = self.script(&SCRIPTS.inbox_take, &[self.events_key(), registry.clone(), fresh]);
        let stale_before = now.0.saturating_sub(STALE_AFTER.as_millis() as i64);
        take.arg(now.0).arg(stale_before).arg(limit);
        let taken: Vec<Value> = self.eval(&SCRIPTS.inbox_take, &take, "taking events", false).await?;
        if taken.is_empty() {
            return Ok(0);
        }
        let (list, items): (String, Vec<Vec<u8>>) =
            redis::from_redis_value(Value::Array(taken)).map_err(|e| self.fail("taking events")(e.into()))?;
        let mut emits = Vec::with_capacity(items.len());
        let mut rejected = Vec::new();
        for (n, bytes) in items.iter().enumerate() {
            let text = String::from_utf8_lossy(bytes);
            match pushed_event(&text, item_id(&list, n)) {
                Ok(event) => {
                    let jobs = expander(&event, now);
                    emits.push(Emit { event, jobs, now });
                }
                Err(error) => {
                    tracing::warn!(error = %error, "an item of the events list is not an event");
                    let record = serde_json::json!({ "at": now.0, "error": error, "item": text });
                    rejected.push(record.to_string());
                }
            }
        }
        self.emit_events(&emits).await?;
        let mut done = self.script(&SCRIPTS.inbox_done, &[registry, list, self.events_side_key("rejected")]);
        for record in &rejected {
            done.arg(record);
        }
        let _: i64 = self.eval(&SCRIPTS.inbox_done, &done, "taking events", true).await?;
        Ok(emits.len())
    }
}

/// An item of the events list as an event, or why it is none.
fn pushed_event(text: &str, default_id: String) -> Result<Event, String> {
    let pushed: PushedEvent = serde_json::from_str(text).map_err(|e| format!("not an event: {e}"))?;
    crate::job::validate_type(&pushed.event).map_err(|e| format!("event name: {}", e.reason))?;
    let id = pushed.id.unwrap_or(default_id);
    if id.is_empty() || id.len() > crate::store::MAX_EVENT_ID_BYTES {
        return Err(format!(
            "event id must be 1 to {} bytes long",
            crate::store::MAX_EVENT_ID_BYTES
        ));
    }
    // Compact, as every job's payload is stored (an application may push it pretty-printed).
    let payload: serde_json::Value = match pushed.payload {
        Some(raw) => serde_json::from_str(raw.get()).map_err(|e| format!("payload: {e}"))?,
        None => serde_json::Value::Null,
    };
    let payload = serde_json::value::to_raw_value(&payload).map_err(|e| format!("payload: {e}"))?;
    Ok(Event {
        id,
        name: pushed.event,
        payload,
        meta: pushed.meta,
    })
}

/// The arguments of one job for `emit.lua`: the place of its queue, then its fields.
fn job_args(cmd: &mut redis::Cmd, place: usize, job: &NewJob) {
    cmd.arg(place);
    scripts::new_job_args(cmd, job);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pushed_item_becomes_an_event_or_says_why_not() {
        let event = pushed_event(
            r#"{"event":"user.registered","payload":{"userId":7}}"#,
            "fallback".into(),
        )
        .unwrap();
        assert_eq!(
            (event.id.as_str(), event.name.as_str()),
            ("fallback", "user.registered")
        );
        assert_eq!(event.payload.get(), r#"{"userId":7}"#);
        let named = pushed_event(r#"{"event":"e","id":"abc","meta":{"k":"v"}}"#, "x".into()).unwrap();
        assert_eq!((named.id.as_str(), named.payload.get()), ("abc", "null"));
        assert!(
            pushed_event("not json", "x".into())
                .unwrap_err()
                .starts_with("not an event")
        );
        assert!(pushed_event(r#"{"payload":1}"#, "x".into()).is_err());
        assert!(
            pushed_event(r#"{"event":""}"#, "x".into())
                .unwrap_err()
                .contains("event name")
        );
    }
}
