-- 0009_join_any: a job that waits for any of its dependencies rather than all of them (`Join::Any`,
-- a batch's `--on-failure` job): it becomes pending at its first met edge, and is cancelled only once
-- every edge broke. Read only where a dependent is released, never on the claim or finish of a job
-- that waits for nothing.
--
-- Transition: jobq schema version 8 → 9, in one transaction under the migrator's lock. Existing jobs
-- wait for all of theirs, as they did.

ALTER TABLE jobq_jobs ADD COLUMN wait_any INTEGER NOT NULL DEFAULT 0;
