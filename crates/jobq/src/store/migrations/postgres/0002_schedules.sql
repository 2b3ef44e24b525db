-- 0002_schedules: what the store records of each schedule, so that any number of workers, each
-- running the scheduler, enqueue every tick once.
--
-- Transition: jobq schema version 1 → 2, in the schema of the connection's search_path, in one
-- transaction under the migrator's advisory lock. One row per schedule, written by the workers'
-- schedulers and by `jobq schedules pause|resume`: the newest tick handled (enqueued, or skipped by
-- the overlap rule), the instant before which no tick is ever enqueued (first sighting, or a resume
-- without catch-up), whether it is paused (0 or 1, as on every SQL store), and the job of its newest
-- enqueued tick. A tick is enqueued in the same transaction that locks the row and moves last_tick
-- past it, so racing workers enqueue it once, and a tick handled once is never enqueued again, even
-- when its job has been cleaned up since.
CREATE TABLE jobq_schedules (
    name       text COLLATE "C" NOT NULL PRIMARY KEY,
    queue      text COLLATE "C" NOT NULL,
    last_tick  bigint,
    not_before bigint  NOT NULL,
    paused     integer NOT NULL DEFAULT 0,
    last_job   text COLLATE "C",
    updated_at bigint  NOT NULL
);
