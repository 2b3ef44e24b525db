-- 0010_waiting_for: a job counts the open edges it waits by (`waiting_for`), as a job counts those
-- that wait for it (`dependents`). A dependency's end no longer rewrites the edges it meets: it
-- lowers its dependents' counts, and an edge whose dependency has ended (or is gone) reads as met
-- unless it is marked broken. On a flow of ten thousand children, the parent's row is written once
-- per batch of ends instead of ten thousand edge rows, one by one. Since most edges now keep
-- `resolved` NULL for good, an index on it tells nothing: the dependent alone is indexed again (as
-- before 8), and a release's read of the edges of the jobs that ended goes by the primary key.
--
-- Transition: jobq schema version 9 → 10, in one transaction under the migrator's lock. Every edge
-- still open until now (`resolved` NULL) is counted on its dependent.

ALTER TABLE jobq_jobs ADD COLUMN waiting_for INTEGER NOT NULL DEFAULT 0;

UPDATE jobq_jobs SET waiting_for = (
    SELECT COUNT(*) FROM jobq_deps AS d WHERE d.dependent = jobq_jobs.id AND d.resolved IS NULL
) WHERE waits;

CREATE INDEX jobq_deps_dependent ON jobq_deps (dependent);
DROP INDEX jobq_deps_open;
