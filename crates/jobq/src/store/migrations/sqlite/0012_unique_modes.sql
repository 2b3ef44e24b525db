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
-- per queue and key, the job that took the window and when the window ends (Unix milliseconds). A
-- throttled enqueue takes the row with one upsert that only changes a row whose window is over; the
-- worker's expiry sweep deletes rows whose window ended. Jobs with a mode never go through the
-- arrivals table (`0006_arrivals`).
--
-- Transition: jobq schema version 11 → 12, in one immediate transaction. Adding a nullable column
-- rewrites nothing.

ALTER TABLE jobq_jobs ADD COLUMN unique_mode TEXT;
ALTER TABLE jobq_jobs ADD COLUMN yielded_key TEXT;
ALTER TABLE jobq_jobs ADD COLUMN cancel_requested INTEGER NOT NULL DEFAULT 0;

CREATE TABLE jobq_unique_holds (
    queue      TEXT    NOT NULL,
    unique_key TEXT    NOT NULL,
    holder     TEXT    NOT NULL,
    held_until INTEGER NOT NULL,
    PRIMARY KEY (queue, unique_key)
) WITHOUT ROWID;
CREATE INDEX jobq_unique_holds_until ON jobq_unique_holds (held_until);
