//! The worker registry, written once for the three SQL stores: a row per running worker in
//! `jobq_workers`, refreshed by its heartbeat and removed at its stop (`jobq workers` lists it; rows
//! not refreshed for long are forgotten).

use super::{ReadRow, Sql};
use crate::store::{StoreError, WorkerInfo};
use crate::time::UnixMillis;

impl Sql {
    /// Records (or refreshes) a worker in the registry.
    pub async fn register_worker(&self, worker: &WorkerInfo) -> Result<(), StoreError> {
        let d = self.dialect;
        let queues = serde_json::to_string(&worker.queues).unwrap_or_else(|_| "[]".into());
        let bridge = worker.bridge.as_ref().and_then(|b| serde_json::to_string(b).ok());
        let mut stmt = self.stmt(
            "INSERT INTO jobq_workers (id, name, host, pid, queues, started_at, last_seen_at, jobs_done, bridge) VALUES (",
        );
        stmt.bind(worker.id.as_str())
            .push(", ")
            .bind(worker.name.as_str())
            .push(", ")
            .bind(worker.host.as_str())
            .push(", ")
            .bind(i64::from(worker.pid))
            .push(", ")
            .push(d.queues_in.0)
            .bind(queues)
            .push(d.queues_in.1)
            .push(", ")
            .bind(worker.started_at.0)
            .push(", ")
            .bind(worker.last_seen_at.0)
            .push(", ")
            .bind(worker.jobs_done.min(i64::MAX as u64) as i64)
            .push(", ")
            .bind(bridge)
            .push(")")
            .push(&d.upsert("id", &["last_seen_at", "jobs_done", "bridge"]))
            .keep();
        self.execute(&stmt, "registering a worker").await.map(drop)
    }

    /// Removes a worker from the registry.
    pub async fn unregister_worker(&self, id: &str) -> Result<(), StoreError> {
        let mut stmt = self.stmt("DELETE FROM jobq_workers WHERE id = ");
        stmt.bind(id);
        self.execute(&stmt, "unregistering a worker").await.map(drop)
    }

    /// Workers seen since `seen_since`, oldest start first.
    pub async fn workers(&self, seen_since: UnixMillis) -> Result<Vec<WorkerInfo>, StoreError> {
        let mut stmt = self.stmt(format!(
            "SELECT id, name, host, pid, {}, started_at, last_seen_at, jobs_done, bridge FROM jobq_workers \
             WHERE last_seen_at >= ",
            self.dialect.queues_out
        ));
        stmt.bind(seen_since.0).push(" ORDER BY started_at, id");
        let rows = self.fetch_all(&stmt, "listing workers").await?;
        rows.iter()
            .map(|r| r.worker())
            .collect::<Result<_, _>>()
            .map_err(self.fail("listing workers"))
    }

    /// Forgets the workers not seen since `seen_before`.
    pub async fn forget_workers(&self, seen_before: UnixMillis) -> Result<u64, StoreError> {
        let mut forget = self.stmt("DELETE FROM jobq_workers WHERE last_seen_at < ");
        forget.bind(seen_before.0);
        self.execute(&forget, "forgetting old workers").await
    }
}
