-- 0001_jobs: the jobs table with its indexes, and the worker registry.
--
-- Transition: an empty database → jobq schema version 1. No parameters: the tables go into the
-- database the URL names. MySQL commits every CREATE TABLE on its own, so this file cannot run in one
-- transaction; instead the migrator holds a GET_LOCK named after the database while it runs, so
-- concurrent `migrate` calls apply it once, and every statement is IF NOT EXISTS, so a run cut short
-- (a lost connection) is finished by the next one.
--
-- Times are BIGINT Unix milliseconds. Every column but job_type has a default, so an application can
-- enqueue inside its own transaction with a plain
--   INSERT INTO jobq_jobs (queue, job_type, payload) VALUES ('default', 'mail.send', '{"to":"a@b.c"}');
-- Idle workers look for ready jobs every few milliseconds (MySQL has no notifications), so that row is
-- picked up soon after the transaction commits.
--
-- Column types, chosen deliberately:
-- * Text is utf8mb4 (all of Unicode, emoji included) with the binary collation: ids, queues, types,
--   statuses and keys compare and sort byte by byte, the same as Rust, whatever the server's default.
-- * payload, meta, result and errors are LONGTEXT checked with JSON_VALID, not MySQL's JSON type:
--   MySQL 8 stores JSON in a binary form that reorders keys and drops duplicates, and jobq embeds the
--   payload in its job JSON verbatim (MariaDB's JSON is this same LONGTEXT).
-- * There are no partial indexes: `live_key` is a generated column that holds unique_key while the job
--   is pending, running or waiting and NULL once it is terminal; a unique index on (queue, live_key)
--   lets one live job hold a key (NULLs never clash).
-- * The default id is a UUIDv7 built from the clock and random bits (48 bits of Unix milliseconds
--   first), so ids made here sort by creation time like the ids jobq generates.

CREATE TABLE IF NOT EXISTS jobq_jobs (
    id               VARCHAR(128) NOT NULL DEFAULT (CONCAT(
                         LPAD(LOWER(HEX(FLOOR(UNIX_TIMESTAMP(CURRENT_TIMESTAMP(3)) * 1000) DIV 65536)), 8, '0'), '-',
                         LPAD(LOWER(HEX(FLOOR(UNIX_TIMESTAMP(CURRENT_TIMESTAMP(3)) * 1000) MOD 65536)), 4, '0'), '-7',
                         SUBSTR(MD5(RAND()), 1, 3), '-', ELT(1 + FLOOR(RAND() * 4), '8', '9', 'a', 'b'),
                         SUBSTR(MD5(RAND()), 1, 3), '-', SUBSTR(MD5(RAND()), 1, 12))),
    queue            VARCHAR(64)  NOT NULL DEFAULT 'default',
    job_type         VARCHAR(128) NOT NULL,
    payload          LONGTEXT     NOT NULL DEFAULT ('null'),
    meta             LONGTEXT     NOT NULL DEFAULT ('{}'),
    priority         INT          NOT NULL DEFAULT 0,
    status           VARCHAR(16)  NOT NULL DEFAULT 'pending',
    attempt          INT          NOT NULL DEFAULT 0,
    max_attempts     INT          NOT NULL DEFAULT 5,
    run_at           BIGINT       NOT NULL DEFAULT (FLOOR(UNIX_TIMESTAMP(CURRENT_TIMESTAMP(3)) * 1000)),
    unique_key       VARCHAR(255),
    timeout_ms       BIGINT,
    progress         INT,
    progress_message TEXT,
    result           LONGTEXT,
    errors           LONGTEXT     NOT NULL DEFAULT ('[]'),
    created_at       BIGINT       NOT NULL DEFAULT (FLOOR(UNIX_TIMESTAMP(CURRENT_TIMESTAMP(3)) * 1000)),
    started_at       BIGINT,
    finished_at      BIGINT,
    heartbeat_at     BIGINT,
    worker_id        VARCHAR(255),
    live_key         VARCHAR(255) AS (CASE WHEN status IN ('pending', 'running', 'waiting') THEN unique_key END) STORED,
    PRIMARY KEY (id),
    -- Coalescing: at most one live job per (queue, unique key).
    UNIQUE KEY jobq_jobs_unique (queue, live_key),
    -- Claim: a queue's pending jobs in claim order; also stats and filtered cancels by queue and status.
    KEY jobq_jobs_ready (queue, status, priority, run_at, id),
    -- Rescue: running jobs by last heartbeat.
    KEY jobq_jobs_running (status, heartbeat_at),
    -- List, newest first.
    KEY jobq_jobs_created (created_at, id),
    -- Cleanup and retention: terminal jobs by finish time (NULL while live).
    KEY jobq_jobs_finished (finished_at),
    -- What jobq's decoders rely on, enforced for rows that applications insert by hand.
    CONSTRAINT jobq_jobs_status CHECK (status IN ('pending', 'running', 'waiting', 'succeeded', 'dead', 'cancelled', 'discarded')),
    CONSTRAINT jobq_jobs_payload_is_json CHECK (JSON_VALID(payload)),
    CONSTRAINT jobq_jobs_meta_is_object CHECK (JSON_VALID(meta) AND JSON_TYPE(meta) = 'OBJECT'),
    CONSTRAINT jobq_jobs_result_is_json CHECK (result IS NULL OR JSON_VALID(result)),
    CONSTRAINT jobq_jobs_errors_is_array CHECK (JSON_VALID(errors) AND JSON_TYPE(errors) = 'ARRAY'),
    CONSTRAINT jobq_jobs_attempts CHECK (attempt >= 0 AND max_attempts >= 1),
    CONSTRAINT jobq_jobs_timeout CHECK (timeout_ms IS NULL OR timeout_ms > 0)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

CREATE TABLE IF NOT EXISTS jobq_workers (
    id           VARCHAR(255) NOT NULL PRIMARY KEY,
    name         TEXT         NOT NULL,
    host         TEXT         NOT NULL,
    pid          BIGINT       NOT NULL,
    queues       TEXT         NOT NULL,
    started_at   BIGINT       NOT NULL,
    last_seen_at BIGINT       NOT NULL,
    jobs_done    BIGINT       NOT NULL DEFAULT 0
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;
