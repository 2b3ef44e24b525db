-- 0011_expiry: a job may carry an expiry (`expires_at`, Unix milliseconds): not started by then, it
-- is never started, and ends `expired`. Claims compare it with the server's clock, so a worker whose
-- clock lags cannot start a job late. The sweep that ends expired jobs reads them by
-- `jobq_jobs_expiry`, which holds only the jobs that carry an expiry and have not started: a queue
-- whose jobs carry none pays nothing for it.
--
-- Transition: jobq schema version 10 → 11, in one transaction under the migrator's advisory lock.
-- Adding a column without a default rewrites nothing; the status constraint is checked against the
-- existing rows once.

ALTER TABLE jobq_jobs DROP CONSTRAINT jobq_jobs_status_check;
ALTER TABLE jobq_jobs ADD CONSTRAINT jobq_jobs_status_check
    CHECK (status IN ('blocked', 'pending', 'running', 'waiting', 'succeeded', 'dead', 'cancelled', 'discarded', 'expired'));
ALTER TABLE jobq_jobs ADD COLUMN expires_at bigint;

CREATE INDEX jobq_jobs_expiry ON jobq_jobs (expires_at)
    WHERE expires_at IS NOT NULL AND status IN ('blocked', 'pending');
