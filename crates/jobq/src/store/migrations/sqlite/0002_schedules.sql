-- 0002_schedules: what the store records of each schedule, so that any number of workers, each
-- running the scheduler, enqueue every tick once.
--
-- Transition: jobq schema version 1 → 2. One row per schedule, written by the workers' schedulers and
-- by `jobq schedules pause|resume`: the newest tick handled (enqueued, or skipped by the overlap rule),
-- the instant before which no tick is ever enqueued (first sighting, or a resume without catch-up),
-- whether it is paused, and the job of its newest enqueued tick. A tick is enqueued in the same
-- transaction that moves last_tick past it, so a tick handled once is never enqueued again, even when
-- its job has been cleaned up since.
CREATE TABLE jobq_schedules (
    name       TEXT    NOT NULL PRIMARY KEY,
    queue      TEXT    NOT NULL,
    last_tick  INTEGER,
    not_before INTEGER NOT NULL,
    paused     INTEGER NOT NULL DEFAULT 0,
    last_job   TEXT,
    updated_at INTEGER NOT NULL
);
