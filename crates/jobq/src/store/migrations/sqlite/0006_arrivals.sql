-- 0006_arrivals: where a few jobs enqueued at once land first (SQLite only; `store/sqlite/arrivals.rs`).
--
-- A pending job's row in jobq_jobs changes five b-trees (the table, its key, the ready, queue/status
-- and created indexes), and each commit writes every page it changed to the log: for one job per
-- commit, five pages where a table with one b-tree writes one. A plain enqueue of a few jobs (no
-- unique key) commits its rows here instead, one b-tree keyed by id. Every read or change of jobs
-- moves what is here into jobq_jobs first, in one transaction for all of them, so no caller sees
-- the difference; the cost of the five b-trees is paid once per move instead of once per commit.
--
-- Transition: jobq schema version 5 → 6, in one immediate transaction. An older jobq refuses the
-- newer schema, so none can miss jobs that wait here.

CREATE TABLE jobq_arrivals (
    id           TEXT    NOT NULL PRIMARY KEY,
    queue        TEXT    NOT NULL,
    job_type     TEXT    NOT NULL,
    payload      TEXT    NOT NULL,
    meta         TEXT    NOT NULL,
    priority     INTEGER NOT NULL,
    max_attempts INTEGER NOT NULL,
    run_at       INTEGER NOT NULL,
    unique_key   TEXT,
    timeout_ms   INTEGER,
    created_at   INTEGER NOT NULL
) WITHOUT ROWID;

-- A job's id is taken by a stored job as much as by an arrived one: the insert fails having written
-- nothing, and the enqueue answers that batch by looking (an id given twice is `exists`).
CREATE TRIGGER jobq_arrivals_id_taken BEFORE INSERT ON jobq_arrivals
WHEN EXISTS (SELECT 1 FROM jobq_jobs WHERE id = NEW.id)
BEGIN SELECT RAISE(ABORT, 'jobq: job id taken'); END;
