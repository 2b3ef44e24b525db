-- 0001_jobs: the jobs table, its indexes, the enqueue notification and the worker registry.
--
-- Transition: an empty schema → jobq schema version 1. No parameters: the schema is the first one on
-- the connection's search_path (jobq sets it from the URL's `schema=` option). The whole file runs in
-- one transaction under a PostgreSQL advisory lock taken by the migrator, so concurrent `migrate`
-- calls apply it exactly once and a failure leaves nothing behind.
--
-- Times are BIGINT Unix milliseconds. Every column but job_type has a DEFAULT, so an application can
-- enqueue inside its own transaction with a plain
--   INSERT INTO jobq_jobs (queue, job_type, payload) VALUES ('default', 'mail.send', '{"to":"a@b.c"}');
-- and the statement trigger below wakes listening workers when that transaction commits.
--
-- Column types, chosen deliberately:
-- * payload, result, meta are JSON, not JSONB: JSON keeps the producer's text (key order, duplicate
--   keys, number spelling) while still refusing invalid JSON, and jobq embeds the payload in its job
--   JSON verbatim; JSONB would reorder keys and drop duplicates, and refuses the \u0000 escape.
--   JSON still answers `payload->>'key'` and expression indexes.
-- * errors is JSONB: jobq appends to it in SQL (`||`, `- 0`) and never shows it byte for byte.
-- * Text that jobq sorts or compares (id, queue, job_type, status, keys) uses COLLATE "C": byte order,
--   the same as Rust's, whatever the database's locale, and cheaper comparisons in the hot indexes.

-- A UUIDv7 (RFC 9562) as the default id: 48 bits of Unix milliseconds, then random bits, so ids made
-- here sort by creation time like the ids jobq generates. PostgreSQL 13+ has gen_random_uuid(); this
-- overwrites its first six bytes with the time and its version nibble with 7.
CREATE FUNCTION jobq_uuid_v7() RETURNS uuid LANGUAGE sql VOLATILE PARALLEL SAFE AS $$
    SELECT encode(
        set_bit(set_bit(
            overlay(uuid_send(gen_random_uuid())
                    PLACING substring(int8send(floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint) FROM 3)
                    FROM 1 FOR 6),
            52, 1), 53, 1),
        'hex')::uuid
$$;

CREATE TABLE jobq_jobs (
    id               text COLLATE "C" NOT NULL DEFAULT jobq_uuid_v7()::text PRIMARY KEY,
    queue            text COLLATE "C" NOT NULL DEFAULT 'default',
    job_type         text COLLATE "C" NOT NULL,
    payload          json    NOT NULL DEFAULT 'null',
    meta             json    NOT NULL DEFAULT '{}',
    priority         integer NOT NULL DEFAULT 0,
    status           text COLLATE "C" NOT NULL DEFAULT 'pending'
                     CHECK (status IN ('pending', 'running', 'waiting', 'succeeded', 'dead', 'cancelled', 'discarded')),
    attempt          integer NOT NULL DEFAULT 0,
    max_attempts     integer NOT NULL DEFAULT 5,
    run_at           bigint  NOT NULL DEFAULT floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint,
    unique_key       text COLLATE "C",
    timeout_ms       bigint,
    progress         integer,
    progress_message text,
    result           json,
    errors           jsonb   NOT NULL DEFAULT '[]',
    created_at       bigint  NOT NULL DEFAULT floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint,
    started_at       bigint,
    finished_at      bigint,
    heartbeat_at     bigint,
    worker_id        text COLLATE "C",
    -- What jobq's decoders rely on, enforced for rows that applications insert by hand.
    CONSTRAINT jobq_jobs_meta_is_object CHECK (json_typeof(meta) = 'object'),
    CONSTRAINT jobq_jobs_errors_is_array CHECK (jsonb_typeof(errors) = 'array'),
    CONSTRAINT jobq_jobs_attempts CHECK (attempt >= 0 AND max_attempts >= 1),
    CONSTRAINT jobq_jobs_timeout CHECK (timeout_ms IS NULL OR timeout_ms > 0)
);

-- Claim: the ready jobs of a queue in claim order, and nothing else.
CREATE INDEX jobq_jobs_ready ON jobq_jobs (queue, priority, run_at, id) WHERE status = 'pending';

-- Rescue: running jobs by last heartbeat.
CREATE INDEX jobq_jobs_running ON jobq_jobs (heartbeat_at) WHERE status = 'running';

-- Coalescing: at most one live job per (queue, unique key); terminal jobs drop out of the index, and
-- enqueue's ON CONFLICT DO NOTHING turns a clash into "coalesced".
CREATE UNIQUE INDEX jobq_jobs_unique ON jobq_jobs (queue, unique_key)
    WHERE unique_key IS NOT NULL AND status IN ('pending', 'running', 'waiting');

-- List newest first. Every claim and finish changes status and so writes a new entry into each index
-- of the table; an index on (status, created_at, id) cost a quarter of the drain rate, so a filtered
-- list scans this one (live statuses are recent) and only the dead-letter view has its own, small,
-- index, which the hot path never touches.
CREATE INDEX jobq_jobs_created ON jobq_jobs (created_at, id);
CREATE INDEX jobq_jobs_dead ON jobq_jobs (created_at, id) WHERE status = 'dead';

-- Cleanup and retention: terminal jobs by finish time.
CREATE INDEX jobq_jobs_finished ON jobq_jobs (finished_at) WHERE finished_at IS NOT NULL;

-- Wake-ups: one NOTIFY on channel jobq_jobs per queue that got new pending jobs in a statement, with
-- payload {"schema": …, "queue": …}. PostgreSQL delivers it when the inserting transaction commits
-- (never on rollback) and folds identical notifications of one transaction into one. A statement-level
-- trigger over the transition table costs one call per statement, not per row, so bulk enqueues stay
-- fast.
CREATE FUNCTION jobq_notify_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('jobq_jobs', json_build_object('schema', TG_TABLE_SCHEMA, 'queue', q.queue)::text)
    FROM (SELECT DISTINCT queue FROM jobq_inserted WHERE status = 'pending') AS q;
    RETURN NULL;
END
$$;

CREATE TRIGGER jobq_jobs_notify AFTER INSERT ON jobq_jobs
    REFERENCING NEW TABLE AS jobq_inserted
    FOR EACH STATEMENT EXECUTE FUNCTION jobq_notify_inserted();

CREATE TABLE jobq_workers (
    id           text COLLATE "C" NOT NULL PRIMARY KEY,
    name         text    NOT NULL,
    host         text    NOT NULL,
    pid          bigint  NOT NULL,
    queues       text[]  NOT NULL,
    started_at   bigint  NOT NULL,
    last_seen_at bigint  NOT NULL,
    jobs_done    bigint  NOT NULL DEFAULT 0
);
