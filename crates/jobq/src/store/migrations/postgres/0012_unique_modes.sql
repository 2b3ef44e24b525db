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
-- Transition: jobq schema version 11 → 12, in one transaction under the migrator's advisory lock.
-- Adding a column without a default rewrites nothing.

ALTER TABLE jobq_jobs ADD COLUMN unique_mode text;
ALTER TABLE jobq_jobs ADD COLUMN yielded_key text COLLATE "C";
ALTER TABLE jobq_jobs ADD COLUMN cancel_requested boolean NOT NULL DEFAULT false;

CREATE TABLE jobq_unique_holds (
    queue      text   NOT NULL,
    unique_key text   NOT NULL,
    holder     text   NOT NULL,
    held_until bigint NOT NULL,
    PRIMARY KEY (queue, unique_key)
);
CREATE INDEX jobq_unique_holds_until ON jobq_unique_holds (held_until);
