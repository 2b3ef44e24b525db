//! The Redis store's schedule records: one hash per schedule in its queue's slot (see
//! `lua/schedules.lua`), read, fired and paused by one script per queue; the calls for several queues
//! go at once on the one connection.

use std::str::FromStr;

use futures_util::future::try_join_all;
use redis::Value;

use super::RedisStore;
use super::calls::{by_queue, in_input_order};
use super::scripts::{self, SCRIPTS};
use crate::job::{JobId, JobStatus};
use crate::store::{ScheduleKey, ScheduleState, StoreError, Tick, TickOutcome};
use crate::time::UnixMillis;

impl RedisStore {
    pub(super) async fn read_schedules(&self, keys: &[ScheduleKey]) -> Result<Vec<Option<ScheduleState>>, StoreError> {
        let groups = by_queue(keys, |k| k.queue.as_str());
        let calls = groups.iter().map(|(queue, positions)| async move {
            let mut cmd = self.queue_script(&SCRIPTS.schedules, queue);
            for &n in positions {
                cmd.arg(&keys[n].name);
            }
            let reply: Vec<Value> = self.eval(&SCRIPTS.schedules, &cmd, "reading schedules", true).await?;
            positions
                .iter()
                .zip(reply)
                .map(|(&n, v)| schedule_state(&keys[n].name, v))
                .collect::<Result<Vec<_>, _>>()
        });
        let answers = try_join_all(calls).await?;
        Ok(in_input_order(keys.len(), &groups, answers))
    }

    pub(super) async fn add_schedules(&self, keys: &[ScheduleKey], now: UnixMillis) -> Result<(), StoreError> {
        let mut pipe = redis::pipe();
        for key in keys {
            pipe.cmd("HSETNX")
                .arg(self.schedule_key(key))
                .arg("nb")
                .arg(now.0)
                .ignore();
        }
        let mut conn = self.conn.clone();
        pipe.query_async::<()>(&mut conn)
            .await
            .map_err(self.fail("recording schedules"))
    }

    pub(super) async fn pause_schedule(
        &self,
        key: &ScheduleKey,
        paused: bool,
        now: UnixMillis,
        skip_missed: bool,
    ) -> Result<(), StoreError> {
        let mut cmd = self.queue_script(&SCRIPTS.schedule_pause, &key.queue);
        cmd.arg(&key.name)
            .arg(if paused { "1" } else { "0" })
            .arg(now.0)
            .arg(if skip_missed { "1" } else { "0" });
        let _: i64 = self
            .eval(&SCRIPTS.schedule_pause, &cmd, "pausing a schedule", true)
            .await?;
        Ok(())
    }

    /// Writes schedules' records as given, one script per queue.
    pub(super) async fn restore(&self, records: &[(ScheduleKey, ScheduleState)]) -> Result<(), StoreError> {
        let groups = by_queue(records, |(key, _)| key.queue.as_str());
        let calls = groups.iter().map(|(queue, positions)| async move {
            let mut cmd = self.queue_script(&SCRIPTS.schedule_restore, queue);
            cmd.arg(positions.len());
            for &n in positions {
                let (key, state) = &records[n];
                cmd.arg(&key.name)
                    .arg(state.not_before.0)
                    .arg(state.last_tick.map(|t| t.0.to_string()).unwrap_or_default())
                    .arg(if state.paused { "1" } else { "0" })
                    .arg(state.last_job.as_ref().map(|j| j.to_string()).unwrap_or_default());
            }
            self.eval::<i64>(&SCRIPTS.schedule_restore, &cmd, "restoring schedules", true)
                .await
        });
        try_join_all(calls).await?;
        Ok(())
    }

    pub(super) async fn fire(&self, ticks: &[Tick]) -> Result<Vec<TickOutcome>, StoreError> {
        let groups = by_queue(ticks, |t| t.job.queue.as_str());
        let cluster = self.is_cluster();
        let registry = self.key("queues");
        let calls = groups.iter().map(|(queue, positions)| {
            let registry = &registry;
            async move {
                let mut cmd = if cluster {
                    self.queue_script(&SCRIPTS.tick, queue)
                } else {
                    self.script(&SCRIPTS.tick, &[self.queue_prefix(queue), registry.clone()])
                };
                cmd.arg(positions.len());
                for &n in positions {
                    let tick = &ticks[n];
                    cmd.arg(&tick.schedule).arg(tick.at.0).arg(tick.overlap.as_str());
                    scripts::new_job_args(&mut cmd, &tick.job);
                }
                // Not sent again when the connection drops: the first call may have enqueued, and a
                // second one finds the ticks handled, which is what the caller is then told.
                let (register, letters): (i64, String) =
                    self.eval(&SCRIPTS.tick, &cmd, "firing schedule ticks", false).await?;
                let outcomes = positions
                    .iter()
                    .zip(letters.chars())
                    .map(|(&n, letter)| match letter {
                        'E' => Ok(TickOutcome::Enqueued(ticks[n].job.id.clone())),
                        'A' => Ok(TickOutcome::AlreadyHandled),
                        'S' => Ok(TickOutcome::Skipped),
                        'P' => Ok(TickOutcome::Paused),
                        'U' => Ok(TickOutcome::Unknown),
                        other => Err(StoreError::query(
                            super::KIND,
                            "firing schedule ticks",
                            format!("unexpected outcome {other:?}"),
                        )),
                    })
                    .collect::<Result<Vec<_>, _>>()?;
                Ok::<_, StoreError>((outcomes, register == 1, *queue))
            }
        });
        let answers = try_join_all(calls).await?;
        let unlisted: Vec<&str> = answers.iter().filter(|a| a.1).map(|a| a.2).collect();
        if !unlisted.is_empty() {
            let _: () = self
                .query(
                    redis::cmd("SADD").arg(&registry).arg(&unlisted),
                    "firing schedule ticks",
                )
                .await?;
        }
        let per_group = answers.into_iter().map(|a| a.0).collect();
        Ok(in_input_order(ticks.len(), &groups, per_group))
    }

    fn schedule_key(&self, key: &ScheduleKey) -> String {
        format!("{}sched:{}", self.queue_prefix(&key.queue), key.name)
    }
}

/// A schedule's record from its reply in `schedules.lua`.
fn schedule_state(name: &str, reply: Value) -> Result<Option<ScheduleState>, StoreError> {
    let bad = |why: String| StoreError::query(super::KIND, "reading schedules", why);
    let fields: Vec<String> = match reply {
        Value::Nil | Value::Boolean(false) => return Ok(None),
        other => redis::from_redis_value(other).map_err(|e| bad(e.to_string()))?,
    };
    let [not_before, last_tick, paused, last_job, status] = fields.as_slice() else {
        return Err(bad(format!("{} fields in a schedule's record", fields.len())));
    };
    let millis = |text: &str| text.parse::<i64>().map(UnixMillis).map_err(|e| bad(e.to_string()));
    Ok(Some(ScheduleState {
        name: name.to_string(),
        last_tick: (!last_tick.is_empty()).then(|| millis(last_tick)).transpose()?,
        not_before: millis(not_before)?,
        paused: paused == "1",
        last_job: (!last_job.is_empty()).then(|| JobId::from_stored(last_job.clone())),
        last_job_status: (!status.is_empty())
            .then(|| JobStatus::from_str(status))
            .transpose()
            .map_err(bad)?,
    }))
}
