-- 0001_jobs: the jobs table, its indexes, and the worker registry.
-- Times are integer Unix milliseconds; JSON columns hold compact JSON text.

CREATE TABLE jobq_jobs (
    id               TEXT    NOT NULL PRIMARY KEY,
    queue            TEXT    NOT NULL DEFAULT 'default',
    job_type         TEXT    NOT NULL,
    payload          TEXT    NOT NULL DEFAULT 'null',
    meta             TEXT    NOT NULL DEFAULT '{}',
    priority         INTEGER NOT NULL DEFAULT 0,
    status           TEXT    NOT NULL DEFAULT 'pending'
                     CHECK (status IN ('pending', 'running', 'waiting', 'succeeded', 'dead', 'cancelled', 'discarded')),
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
    worker_id        TEXT
);

-- Claim: the ready jobs of a queue in claim order, and nothing else.
CREATE INDEX jobq_jobs_ready ON jobq_jobs (queue, priority, run_at, id) WHERE status = 'pending';

-- Rescue: running jobs by last heartbeat.
CREATE INDEX jobq_jobs_running ON jobq_jobs (heartbeat_at) WHERE status = 'running';

-- Coalescing: at most one live job per (queue, unique key); terminal jobs drop out of the index.
CREATE UNIQUE INDEX jobq_jobs_unique ON jobq_jobs (queue, unique_key)
    WHERE unique_key IS NOT NULL AND status IN ('pending', 'running', 'waiting');

-- Stats and filtered cancel: counts by queue and status from the index alone.
CREATE INDEX jobq_jobs_queue_status ON jobq_jobs (queue, status);

-- List, newest first, unfiltered or by status. Pending jobs stay out of the by-status index, so
-- enqueueing writes one index fewer; `list --status pending` walks the newest-first index, where the
-- newest jobs (the likeliest to be pending) come first.
CREATE INDEX jobq_jobs_created ON jobq_jobs (created_at, id);
CREATE INDEX jobq_jobs_status_created ON jobq_jobs (status, created_at, id) WHERE status <> 'pending';

-- Cleanup and retention: terminal jobs by finish time.
CREATE INDEX jobq_jobs_finished ON jobq_jobs (finished_at) WHERE finished_at IS NOT NULL;

CREATE TABLE jobq_workers (
    id           TEXT    NOT NULL PRIMARY KEY,
    name         TEXT    NOT NULL,
    host         TEXT    NOT NULL,
    pid          INTEGER NOT NULL,
    queues       TEXT    NOT NULL,
    started_at   INTEGER NOT NULL,
    last_seen_at INTEGER NOT NULL,
    jobs_done    INTEGER NOT NULL DEFAULT 0
);
