-- 0004_flow_control: pauses, back-pressure blocks, cluster-wide limits and their state, and the count
-- of a job's snoozes.
--
-- Transition: jobq schema version 3 → 4, under the migrator's GET_LOCK. MySQL commits each DDL
-- statement by itself, so every statement here may run again after a run cut short (IF NOT EXISTS;
-- and the column ADD COLUMN IF NOT EXISTS). Workers read pauses and blocks once per poll
-- interval; a limited claim (see `store/flow.rs`) locks its scopes' rows in jobq_limits, then reads
-- and writes rates in the transaction that leases its jobs, counting the running jobs themselves as
-- the slots of a concurrency limit (so no exit from `running` writes here).

-- A snooze puts a job back without spending an attempt; after max_snoozes it counts as a retry.
ALTER TABLE jobq_jobs ADD COLUMN IF NOT EXISTS snoozes INT NOT NULL DEFAULT 0;

-- `jobq pause QUEUE [--type TYPE]`: job_type '' pauses the whole queue.
CREATE TABLE IF NOT EXISTS jobq_pauses (
    queue     VARCHAR(64)  NOT NULL,
    job_type  VARCHAR(128) NOT NULL DEFAULT '',
    paused_at BIGINT       NOT NULL,
    PRIMARY KEY (queue, job_type)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

-- Back-pressure (an HTTP 429, `::rate-limited`): nothing of the type (or of one partition of it)
-- starts before blocked_until.
CREATE TABLE IF NOT EXISTS jobq_blocks (
    job_type      VARCHAR(128) NOT NULL,
    partition_key VARCHAR(255) NOT NULL DEFAULT '',
    whole_type    INT          NOT NULL DEFAULT 1,
    blocked_until BIGINT       NOT NULL,
    PRIMARY KEY (job_type, whole_type, partition_key)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

-- The limits the workers' configs set, by scope (`type:NAME` or `queue:NAME`), as last recorded.
CREATE TABLE IF NOT EXISTS jobq_limits (
    scope              VARCHAR(140) NOT NULL PRIMARY KEY,
    global_concurrency INT,
    rate_count         INT,
    rate_per_ms        BIGINT,
    partition_by       VARCHAR(255),
    recorded_by        VARCHAR(255) NOT NULL DEFAULT '',
    recorded_at        BIGINT       NOT NULL
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

-- Rate buckets (GCRA): the theoretical arrival time, in microseconds, per scope and partition.
CREATE TABLE IF NOT EXISTS jobq_rates (
    scope         VARCHAR(140) NOT NULL,
    partition_key VARCHAR(255) NOT NULL,
    tat_us        BIGINT       NOT NULL,
    PRIMARY KEY (scope, partition_key),
    INDEX jobq_rates_expiry (scope, tat_us)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;
