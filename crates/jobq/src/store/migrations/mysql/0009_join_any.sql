-- 0009_join_any: a job that waits for any of its dependencies rather than all of them (`Join::Any`,
-- a batch's `--on-failure` job): it becomes pending at its first met edge, and is cancelled only once
-- every edge broke. Read only where a dependent is released, never on the claim or finish of a job
-- that waits for nothing.
--
-- Transition: jobq schema version 8 → 9, one statement under the migrator's GET_LOCK (DDL commits
-- itself; IF NOT EXISTS makes a second run harmless). Existing jobs wait for all of theirs, as they
-- did.

ALTER TABLE jobq_jobs ADD COLUMN IF NOT EXISTS wait_any BOOLEAN NOT NULL DEFAULT FALSE;
