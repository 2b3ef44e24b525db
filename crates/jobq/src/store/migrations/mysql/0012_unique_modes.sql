-- 0012_unique_modes: what an enqueue does when a live job holds its unique key. A job keeps the
-- mode it was enqueued with (`unique_mode`: NULL for `coalesce`, else `replace`, `keep-last`,
-- `cancel-running`, `debounce WINDOW [MAX] [queue-behind]` or `throttle WINDOW`, windows in
-- milliseconds) for `jobq show` and the dashboard; the decision itself reads the holder's row. A
-- running holder that a `keep-last` or `cancel-running` job queues behind gives its key to that
-- job: `unique_key` becomes NULL (the unique index of live keys then holds the waiting job's), and
-- `yielded_key` keeps the key the job was enqueued with, which is what it shows. Under
-- `cancel-running` the running holder is also asked to stop (`cancel_requested`): its heartbeat
-- tells its worker while a job still waits behind it. A throttled key is held for its window
-- whether or not its job has finished, which no row of jobq_jobs says: `jobq_unique_holds` keeps,
-- per queue and key, the job that took the window and when the window ends (Unix milliseconds, the
-- server's clock). A throttled enqueue takes the row with one upsert that only changes a row whose
-- window is over, so two producers can never both take it; the worker's expiry sweep deletes rows
-- whose window ended.
--
-- Transition: jobq schema version 11 → 12 under the migrator's named lock (MySQL commits each DDL
-- statement); each statement can run again after a failure.

ALTER TABLE jobq_jobs ADD COLUMN IF NOT EXISTS unique_mode VARCHAR(64) NULL;
ALTER TABLE jobq_jobs ADD COLUMN IF NOT EXISTS yielded_key VARCHAR(255) NULL;
ALTER TABLE jobq_jobs ADD COLUMN IF NOT EXISTS cancel_requested BOOLEAN NOT NULL DEFAULT FALSE;

CREATE TABLE IF NOT EXISTS jobq_unique_holds (
    queue      VARCHAR(64)  NOT NULL,
    unique_key VARCHAR(255) NOT NULL,
    holder     VARCHAR(128) NOT NULL,
    held_until BIGINT       NOT NULL,
    PRIMARY KEY (queue, unique_key),
    KEY jobq_unique_holds_until (held_until)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;
