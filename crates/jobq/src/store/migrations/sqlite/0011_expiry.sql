-- 0011_expiry: a job may carry an expiry (`expires_at`, Unix milliseconds): not started by then, it
-- is never started, and ends `expired`. Claims compare it with the clock when they run, so a worker
-- whose clock lags cannot start a job late. The sweep that ends expired jobs reads them by
-- `jobq_jobs_expiry`, which holds only the jobs that carry an expiry and have not started: a queue
-- whose jobs carry none pays nothing for it. Arrived jobs (`0006_arrivals`) carry theirs too.
--
-- Transition: jobq schema version 10 → 11, in one immediate transaction. SQLite cannot change a CHECK
-- constraint in place, so jobq_jobs is copied into a new table with the new one (SQLite's documented
-- way, as in 0007), its indexes and triggers made again.

DROP TRIGGER jobq_arrivals_id_taken;
DROP TRIGGER jobq_jobs_deleted_edges;

CREATE TABLE jobq_jobs_new (
    id               TEXT    NOT NULL PRIMARY KEY,
    queue            TEXT    NOT NULL DEFAULT 'default',
    job_type         TEXT    NOT NULL,
    payload          TEXT    NOT NULL DEFAULT 'null',
    meta             TEXT    NOT NULL DEFAULT '{}',
    priority         INTEGER NOT NULL DEFAULT 0,
    status           TEXT    NOT NULL DEFAULT 'pending'
                     CHECK (status IN ('blocked', 'pending', 'running', 'waiting', 'succeeded', 'dead', 'cancelled', 'discarded', 'expired')),
    attempt          INTEGER NOT NULL DEFAULT 0,
    max_attempts     INTEGER NOT NULL DEFAULT 5,
    run_at           INTEGER NOT NULL DEFAULT (CAST(unixepoch('subsec') * 1000 AS INTEGER)),
    unique_key       TEXT,
    timeout_ms       INTEGER,
    progress         INTEGER,
    progress_message TEXT,
    result           TEXT,
    errors           TEXT    NOT NULL DEFAULT '[]',
    created_at       INTEGER NOT NULL DEFAULT (CAST(unixepoch('subsec') * 1000 AS INTEGER)),
    started_at       INTEGER,
    finished_at      INTEGER,
    heartbeat_at     INTEGER,
    worker_id        TEXT,
    snoozes          INTEGER NOT NULL DEFAULT 0,
    dependents       INTEGER NOT NULL DEFAULT 0,
    waits            INTEGER NOT NULL DEFAULT 0,
    wait_any         INTEGER NOT NULL DEFAULT 0,
    waiting_for      INTEGER NOT NULL DEFAULT 0,
    expires_at       INTEGER
);

INSERT INTO jobq_jobs_new (id, queue, job_type, payload, meta, priority, status, attempt, max_attempts,
    run_at, unique_key, timeout_ms, progress, progress_message, result, errors, created_at, started_at,
    finished_at, heartbeat_at, worker_id, snoozes, dependents, waits, wait_any, waiting_for)
SELECT id, queue, job_type, payload, meta, priority, status, attempt, max_attempts, run_at, unique_key,
    timeout_ms, progress, progress_message, result, errors, created_at, started_at, finished_at,
    heartbeat_at, worker_id, snoozes, dependents, waits, wait_any, waiting_for
FROM jobq_jobs;

DROP TABLE jobq_jobs;
ALTER TABLE jobq_jobs_new RENAME TO jobq_jobs;

CREATE INDEX jobq_jobs_ready ON jobq_jobs (queue, priority, run_at, id) WHERE status = 'pending';
CREATE INDEX jobq_jobs_running ON jobq_jobs (heartbeat_at) WHERE status = 'running';
CREATE UNIQUE INDEX jobq_jobs_unique ON jobq_jobs (queue, unique_key)
    WHERE unique_key IS NOT NULL AND status IN ('blocked', 'pending', 'running', 'waiting');
CREATE INDEX jobq_jobs_queue_status ON jobq_jobs (queue, status);
CREATE INDEX jobq_jobs_created ON jobq_jobs (created_at, id);
CREATE INDEX jobq_jobs_status_created ON jobq_jobs (status, created_at, id) WHERE status <> 'pending';
CREATE INDEX jobq_jobs_finished ON jobq_jobs (finished_at) WHERE finished_at IS NOT NULL;
CREATE INDEX jobq_jobs_expiry ON jobq_jobs (expires_at)
    WHERE expires_at IS NOT NULL AND status IN ('blocked', 'pending');

CREATE TRIGGER jobq_arrivals_id_taken BEFORE INSERT ON jobq_arrivals
WHEN EXISTS (SELECT 1 FROM jobq_jobs WHERE id = NEW.id)
BEGIN SELECT RAISE(ABORT, 'jobq: job id taken'); END;

CREATE TRIGGER jobq_jobs_deleted_edges AFTER DELETE ON jobq_jobs WHEN OLD.waits
BEGIN DELETE FROM jobq_deps WHERE dependent = OLD.id; END;

ALTER TABLE jobq_arrivals ADD COLUMN expires_at INTEGER;
