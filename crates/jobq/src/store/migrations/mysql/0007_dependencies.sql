-- 0007_dependencies: jobs that wait for other jobs (`after`). A job with unfinished dependencies is
-- `blocked` (never claimed; it holds its unique key like any live job); each edge is a row of
-- jobq_deps, resolved once when its dependency ends; and each job counts the open edges that wait
-- for it (`dependents`), so that ending a job nobody waits for reads one column more and writes
-- nothing more.
--
-- Transition: jobq schema version 6 → 7, statement by statement under the
-- migrator's named lock (MySQL commits each DDL statement). The table's changes are one ALTER, so
-- they apply together or not at all, and each statement can run again after a failure.

ALTER TABLE jobq_jobs
    DROP CONSTRAINT IF EXISTS jobq_jobs_status,
    ADD CONSTRAINT jobq_jobs_status
        CHECK (status IN ('blocked', 'pending', 'running', 'waiting', 'succeeded', 'dead', 'cancelled', 'discarded')),
    MODIFY COLUMN live_key VARCHAR(255)
        AS (CASE WHEN status IN ('blocked', 'pending', 'running', 'waiting') THEN unique_key END) STORED,
    ADD COLUMN IF NOT EXISTS dependents INT NOT NULL DEFAULT 0,
    -- Whether the job has edges of its own (it was enqueued after others).
    ADD COLUMN IF NOT EXISTS waits BOOLEAN NOT NULL DEFAULT FALSE;

-- One row per edge: `dependent` waits for `dependency` by `rule` (success, finish or failure).
-- `resolved` is NULL while the dependency has not ended, then 'met' or 'broken', written once.
CREATE TABLE IF NOT EXISTS jobq_deps (
    dependency VARCHAR(128) NOT NULL,
    dependent  VARCHAR(128) NOT NULL,
    rule       VARCHAR(16)  NOT NULL,
    resolved   VARCHAR(16),
    PRIMARY KEY (dependency, dependent),
    -- A job's own dependencies: whether any is still open, which broke, what `show` lists.
    KEY jobq_deps_dependent (dependent),
    -- An edge goes with its dependent: whatever deletes a job (cleanup, retention, delete) deletes
    -- the edges it waited by.
    CONSTRAINT jobq_deps_dependent_job FOREIGN KEY (dependent) REFERENCES jobq_jobs (id) ON DELETE CASCADE,
    CONSTRAINT jobq_deps_rule CHECK (rule IN ('success', 'finish', 'failure')),
    CONSTRAINT jobq_deps_resolved CHECK (resolved IS NULL OR resolved IN ('met', 'broken'))
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;
