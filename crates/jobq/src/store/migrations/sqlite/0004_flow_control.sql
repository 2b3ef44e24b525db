-- 0004_flow_control: pauses, back-pressure blocks, cluster-wide limits and their state, and the count
-- of a job's snoozes.
--
-- Transition: jobq schema version 3 → 4, in one immediate transaction. Workers read pauses and blocks
-- once per poll interval; a limited claim (see `store/flow.rs`) counts the running jobs and reads and
-- writes rates in the transaction that leases its jobs. A concurrency limit's slots are its running
-- jobs, counted from jobq_jobs itself, so jobs leaving `running` by any path free their slots with no
-- write here.

-- A snooze puts a job back without spending an attempt; after max_snoozes it counts as a retry.
ALTER TABLE jobq_jobs ADD COLUMN snoozes INTEGER NOT NULL DEFAULT 0;

-- `jobq pause QUEUE [--type TYPE]`: job_type '' pauses the whole queue.
CREATE TABLE jobq_pauses (
    queue     TEXT    NOT NULL,
    job_type  TEXT    NOT NULL DEFAULT '',
    paused_at INTEGER NOT NULL,
    PRIMARY KEY (queue, job_type)
);

-- Back-pressure (an HTTP 429, `::rate-limited`): nothing of the type (or of one partition of it,
-- partition_key '' = the whole type) starts before blocked_until.
CREATE TABLE jobq_blocks (
    job_type      TEXT    NOT NULL,
    partition_key TEXT    NOT NULL DEFAULT '',
    whole_type    INTEGER NOT NULL DEFAULT 1,
    blocked_until INTEGER NOT NULL,
    PRIMARY KEY (job_type, whole_type, partition_key)
);

-- The limits the workers' configs set, by scope (`type:NAME` or `queue:NAME`), as last recorded. A
-- limited claim locks its scopes' rows, so claims that could take the same slot run one at a time.
CREATE TABLE jobq_limits (
    scope              TEXT    NOT NULL PRIMARY KEY,
    global_concurrency INTEGER,
    rate_count         INTEGER,
    rate_per_ms        INTEGER,
    partition_by       TEXT,
    recorded_by        TEXT    NOT NULL DEFAULT '',
    recorded_at        INTEGER NOT NULL
);

-- Rate buckets (GCRA): the theoretical arrival time, in microseconds, per scope and partition. A
-- bucket whose time has passed is full, the same as no row; claims delete those.
CREATE TABLE jobq_rates (
    scope         TEXT    NOT NULL,
    partition_key TEXT    NOT NULL,
    tat_us        INTEGER NOT NULL,
    PRIMARY KEY (scope, partition_key)
);
CREATE INDEX jobq_rates_expiry ON jobq_rates (scope, tat_us);
