-- 0007_dependencies: jobs that wait for other jobs (`after`). A job with unfinished dependencies is
-- `blocked` (never claimed; it holds its unique key like any live job); each edge is a row of
-- jobq_deps, resolved once when its dependency ends; and each job counts the open edges that wait
-- for it (`dependents`), so that ending a job nobody waits for reads one column more and writes
-- nothing more.
--
-- Transition: jobq schema version 6 → 7, in one immediate transaction. SQLite cannot change a CHECK
-- constraint in place, so jobq_jobs is copied into a new table with the new one (SQLite's documented
-- way), its indexes made again; the arrivals trigger, which names jobq_jobs, is made again after the
-- rename.

DROP TRIGGER jobq_arrivals_id_taken;

CREATE TABLE jobq_jobs_new (
    id               TEXT    NOT NULL PRIMARY KEY,
    queue            TEXT    NOT NULL DEFAULT 'default',
    job_type         TEXT    NOT NULL,
    payload          TEXT    NOT NULL DEFAULT 'null',
    meta             TEXT    NOT NULL DEFAULT '{}',
    priority         INTEGER NOT NULL DEFAULT 0,
    status           TEXT    NOT NULL DEFAULT 'pending'
                     CHECK (status IN ('blocked', 'pending', 'running', 'waiting', 'succeeded', 'dead', 'cancelled', 'discarded')),
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
    -- Whether the job has edges of its own (it was enqueued after others): only such a job's
    -- deletion looks for edges to delete.
    waits            INTEGER NOT NULL DEFAULT 0
);

INSERT INTO jobq_jobs_new (id, queue, job_type, payload, meta, priority, status, attempt, max_attempts,
    run_at, unique_key, timeout_ms, progress, progress_message, result, errors, created_at, started_at,
    finished_at, heartbeat_at, worker_id, snoozes)
SELECT id, queue, job_type, payload, meta, priority, status, attempt, max_attempts, run_at, unique_key,
    timeout_ms, progress, progress_message, result, errors, created_at, started_at, finished_at,
    heartbeat_at, worker_id, snoozes
FROM jobq_jobs;

DROP TABLE jobq_jobs;
ALTER TABLE jobq_jobs_new RENAME TO jobq_jobs;

-- The indexes of 0001_jobs, the unique one with `blocked` among the live statuses.
CREATE INDEX jobq_jobs_ready ON jobq_jobs (queue, priority, run_at, id) WHERE status = 'pending';
CREATE INDEX jobq_jobs_running ON jobq_jobs (heartbeat_at) WHERE status = 'running';
CREATE UNIQUE INDEX jobq_jobs_unique ON jobq_jobs (queue, unique_key)
    WHERE unique_key IS NOT NULL AND status IN ('blocked', 'pending', 'running', 'waiting');
CREATE INDEX jobq_jobs_queue_status ON jobq_jobs (queue, status);
CREATE INDEX jobq_jobs_created ON jobq_jobs (created_at, id);
CREATE INDEX jobq_jobs_status_created ON jobq_jobs (status, created_at, id) WHERE status <> 'pending';
CREATE INDEX jobq_jobs_finished ON jobq_jobs (finished_at) WHERE finished_at IS NOT NULL;

CREATE TRIGGER jobq_arrivals_id_taken BEFORE INSERT ON jobq_arrivals
WHEN EXISTS (SELECT 1 FROM jobq_jobs WHERE id = NEW.id)
BEGIN SELECT RAISE(ABORT, 'jobq: job id taken'); END;

-- One row per edge: `dependent` waits for `dependency` by `rule` (success, finish or failure).
-- `resolved` is NULL while the dependency has not ended, then 'met' or 'broken', written once.
CREATE TABLE jobq_deps (
    dependency TEXT NOT NULL,
    dependent  TEXT NOT NULL,
    rule       TEXT NOT NULL CHECK (rule IN ('success', 'finish', 'failure')),
    resolved   TEXT CHECK (resolved IN ('met', 'broken')),
    PRIMARY KEY (dependency, dependent)
) WITHOUT ROWID;

-- A job's own dependencies: whether any is still open, which broke, what `show` lists.
CREATE INDEX jobq_deps_dependent ON jobq_deps (dependent);

-- An edge goes with its dependent: whatever deletes a job (cleanup, retention, delete) deletes the
-- edges it waited by. (A trigger, where the server stores have a foreign key: SQLite enforces those
-- only on connections that ask.)
CREATE TRIGGER jobq_jobs_deleted_edges AFTER DELETE ON jobq_jobs WHEN OLD.waits
BEGIN DELETE FROM jobq_deps WHERE dependent = OLD.id; END;
