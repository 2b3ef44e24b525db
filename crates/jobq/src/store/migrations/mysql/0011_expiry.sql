-- 0011_expiry: a job may carry an expiry (`expires_at`, Unix milliseconds): not started by then, it
-- is never started, and ends `expired`. Claims compare it with the server's clock, so a worker whose
-- clock lags cannot start a job late. The sweep that ends expired jobs reads them by
-- `jobq_jobs_expiry`, on `unstarted_expiry`: a generated column (there are no partial indexes) that
-- holds the expiry of a job that has not started and NULL otherwise, so a job that carries none
-- never changes the index.
--
-- Transition: jobq schema version 10 → 11, one ALTER under the migrator's named lock (MySQL commits
-- each DDL statement): it applies whole or not at all, and can run again after a failure.

ALTER TABLE jobq_jobs
    DROP CONSTRAINT IF EXISTS jobq_jobs_status,
    ADD CONSTRAINT jobq_jobs_status
        CHECK (status IN ('blocked', 'pending', 'running', 'waiting', 'succeeded', 'dead', 'cancelled', 'discarded', 'expired')),
    ADD COLUMN IF NOT EXISTS expires_at BIGINT NULL,
    ADD COLUMN IF NOT EXISTS unstarted_expiry BIGINT
        AS (CASE WHEN status IN ('blocked', 'pending') THEN expires_at END) STORED,
    ADD KEY IF NOT EXISTS jobq_jobs_expiry (unstarted_expiry);
