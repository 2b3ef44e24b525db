-- 0003_events: events, emitted by `jobq emit` or stored by an application, and whether each has
-- become its jobs yet.
--
-- Transition: jobq schema version 2 → 3. `jobq emit` records an event here with expanded_at set, in
-- the transaction that enqueues its jobs; its id makes a repeated emit change nothing. An application
-- emits inside its own transaction with a plain
--   INSERT INTO jobq_events (name, payload) VALUES ('user.registered', '{"userId":7}');
-- (id, meta and created_at have defaults; expanded_at stays NULL), and a worker later turns the row
-- into the jobs its config subscribes to that event, marking it expanded in the same transaction, so
-- it is expanded once. A rolled-back insert is never seen.
CREATE TABLE jobq_events (
    id          TEXT    NOT NULL PRIMARY KEY DEFAULT (lower(hex(randomblob(16)))),
    name        TEXT    NOT NULL,
    payload     TEXT    NOT NULL DEFAULT 'null',
    meta        TEXT    NOT NULL DEFAULT '{}',
    created_at  INTEGER NOT NULL DEFAULT (CAST(unixepoch('subsec') * 1000 AS INTEGER)),
    expanded_at INTEGER
);

-- Workers look for the events not expanded yet, oldest first.
CREATE INDEX jobq_events_waiting ON jobq_events (created_at, id) WHERE expanded_at IS NULL;
