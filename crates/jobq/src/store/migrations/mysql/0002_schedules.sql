-- 0002_schedules: what the store records of each schedule, so that any number of workers, each
-- running the scheduler, enqueue every tick once.
--
-- Transition: jobq schema version 1 → 2, under the migrator's GET_LOCK; IF NOT EXISTS, so a run cut
-- short is finished by the next one. One row per schedule, written by the workers' schedulers and by
-- `jobq schedules pause|resume`: the newest tick handled (enqueued, or skipped by the overlap rule),
-- the instant before which no tick is ever enqueued (first sighting, or a resume without catch-up),
-- whether it is paused, and the job of its newest enqueued tick. A tick is enqueued in the same
-- transaction that locks the row (SELECT … FOR UPDATE) and moves last_tick past it, so racing workers
-- enqueue it once, and a tick handled once is never enqueued again, even when its job has been
-- cleaned up since.
CREATE TABLE IF NOT EXISTS jobq_schedules (
    name       VARCHAR(255) NOT NULL PRIMARY KEY,
    queue      VARCHAR(64)  NOT NULL,
    last_tick  BIGINT,
    not_before BIGINT       NOT NULL,
    paused     INT          NOT NULL DEFAULT 0,
    last_job   VARCHAR(128),
    updated_at BIGINT       NOT NULL
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;
