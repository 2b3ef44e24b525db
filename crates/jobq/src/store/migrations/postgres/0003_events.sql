-- 0003_events: events, emitted by `jobq emit` or stored by an application, and whether each has
-- become its jobs yet.
--
-- Transition: jobq schema version 2 → 3, in one transaction under the migrator's advisory lock.
-- `jobq emit` records an event here with expanded_at set, in the transaction that enqueues its jobs;
-- its id makes a repeated emit change nothing. An application emits inside its own transaction with a
-- plain
--   INSERT INTO jobq_events (name, payload) VALUES ('user.registered', '{"userId":7}');
-- (id, meta and created_at have defaults; expanded_at stays NULL), and a worker later turns the row
-- into the jobs its config subscribes to that event, marking it expanded in the same transaction
-- (the row locked, skipped by other workers meanwhile), so it is expanded once. A rolled-back insert
-- is never seen.
CREATE TABLE jobq_events (
    id          text COLLATE "C" NOT NULL DEFAULT jobq_uuid_v7()::text PRIMARY KEY,
    name        text COLLATE "C" NOT NULL,
    payload     json    NOT NULL DEFAULT 'null',
    meta        json    NOT NULL DEFAULT '{}',
    created_at  bigint  NOT NULL DEFAULT floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint,
    expanded_at bigint,
    CONSTRAINT jobq_events_meta_is_object CHECK (json_typeof(meta) = 'object')
);

-- Workers look for the events not expanded yet, oldest first.
CREATE INDEX jobq_events_waiting ON jobq_events (created_at, id) WHERE expanded_at IS NULL;
