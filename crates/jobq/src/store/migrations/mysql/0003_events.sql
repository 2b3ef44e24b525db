-- 0003_events: events, emitted by `jobq emit` or stored by an application, and whether each has
-- become its jobs yet.
--
-- Transition: jobq schema version 2 → 3, under the migrator's GET_LOCK; IF NOT EXISTS, so a run cut
-- short is finished by the next one. `jobq emit` records an event here with expanded_at set, in the
-- transaction that enqueues its jobs; its id makes a repeated emit change nothing. An application
-- emits inside its own transaction with a plain
--   INSERT INTO jobq_events (name, payload) VALUES ('user.registered', '{"userId":7}');
-- (id, meta and created_at have defaults; expanded_at stays NULL), and a worker later turns the row
-- into the jobs its config subscribes to that event, marking it expanded in the same transaction
-- (the row locked, skipped by other workers meanwhile), so it is expanded once. A rolled-back insert
-- is never seen. MySQL has no partial index: the index leads with expanded_at, and the waiting events
-- are its NULL prefix.
CREATE TABLE IF NOT EXISTS jobq_events (
    id          VARCHAR(128) NOT NULL DEFAULT (CONCAT(
                    LPAD(LOWER(HEX(FLOOR(UNIX_TIMESTAMP(CURRENT_TIMESTAMP(3)) * 1000) DIV 65536)), 8, '0'), '-',
                    LPAD(LOWER(HEX(FLOOR(UNIX_TIMESTAMP(CURRENT_TIMESTAMP(3)) * 1000) MOD 65536)), 4, '0'), '-7',
                    SUBSTR(MD5(RAND()), 1, 3), '-', ELT(1 + FLOOR(RAND() * 4), '8', '9', 'a', 'b'),
                    SUBSTR(MD5(RAND()), 1, 3), '-', SUBSTR(MD5(RAND()), 1, 12))),
    name        VARCHAR(128) NOT NULL,
    payload     LONGTEXT     NOT NULL DEFAULT ('null'),
    meta        LONGTEXT     NOT NULL DEFAULT ('{}'),
    created_at  BIGINT       NOT NULL DEFAULT (FLOOR(UNIX_TIMESTAMP(CURRENT_TIMESTAMP(3)) * 1000)),
    expanded_at BIGINT,
    PRIMARY KEY (id),
    KEY jobq_events_waiting (expanded_at, created_at, id),
    CONSTRAINT jobq_events_payload_is_json CHECK (JSON_VALID(payload)),
    CONSTRAINT jobq_events_meta_is_object CHECK (JSON_VALID(meta) AND JSON_TYPE(meta) = 'OBJECT')
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;
