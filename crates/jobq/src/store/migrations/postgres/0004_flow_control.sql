-- 0004_flow_control: pauses, back-pressure blocks, cluster-wide limits and their state, and the count
-- of a job's snoozes.
--
-- Transition: jobq schema version 3 → 4, in one transaction under the migrator's advisory lock.
-- Workers read pauses and blocks once per poll interval; a limited claim (see `store/flow.rs`) locks
-- its scopes' rows in jobq_limits, then counts the running jobs and reads and writes rates in the
-- transaction that leases its jobs. A concurrency limit's slots are its running jobs, counted from
-- jobq_jobs itself, so jobs leaving `running` by any path free their slots with no write here.

-- A snooze puts a job back without spending an attempt; after max_snoozes it counts as a retry.
ALTER TABLE jobq_jobs ADD COLUMN snoozes integer NOT NULL DEFAULT 0;

-- `jobq pause QUEUE [--type TYPE]`: job_type '' pauses the whole queue.
CREATE TABLE jobq_pauses (
    queue     text COLLATE "C" NOT NULL,
    job_type  text COLLATE "C" NOT NULL DEFAULT '',
    paused_at bigint NOT NULL,
    PRIMARY KEY (queue, job_type)
);

-- Back-pressure (an HTTP 429, `::rate-limited`): nothing of the type (or of one partition of it)
-- starts before blocked_until.
CREATE TABLE jobq_blocks (
    job_type      text COLLATE "C" NOT NULL,
    partition_key text COLLATE "C" NOT NULL DEFAULT '',
    whole_type    integer NOT NULL DEFAULT 1,
    blocked_until bigint NOT NULL,
    PRIMARY KEY (job_type, whole_type, partition_key)
);

-- The limits the workers' configs set, by scope (`type:NAME` or `queue:NAME`), as last recorded.
CREATE TABLE jobq_limits (
    scope              text COLLATE "C" NOT NULL PRIMARY KEY,
    global_concurrency bigint,
    rate_count         bigint,
    rate_per_ms        bigint,
    partition_by       text,
    recorded_by        text   NOT NULL DEFAULT '',
    recorded_at        bigint NOT NULL
);

-- Rate buckets (GCRA): the theoretical arrival time, in microseconds, per scope and partition.
CREATE TABLE jobq_rates (
    scope         text COLLATE "C" NOT NULL,
    partition_key text COLLATE "C" NOT NULL,
    tat_us        bigint NOT NULL,
    PRIMARY KEY (scope, partition_key)
);
CREATE INDEX jobq_rates_expiry ON jobq_rates (scope, tat_us);
