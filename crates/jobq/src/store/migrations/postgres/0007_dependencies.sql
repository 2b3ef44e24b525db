-- 0007_dependencies: jobs that wait for other jobs (`after`). A job with unfinished dependencies is
-- `blocked` (never claimed; it holds its unique key like any live job); each edge is a row of
-- jobq_deps, resolved once when its dependency ends; and each job counts the open edges that wait
-- for it (`dependents`), so that ending a job nobody waits for reads one column more and writes
-- nothing more.
--
-- Transition: jobq schema version 6 → 7, in one transaction under the
-- migrator's advisory lock. Adding the column with a constant default rewrites nothing; the status
-- constraint is checked against the existing rows once.

ALTER TABLE jobq_jobs DROP CONSTRAINT jobq_jobs_status_check;
ALTER TABLE jobq_jobs ADD CONSTRAINT jobq_jobs_status_check
    CHECK (status IN ('blocked', 'pending', 'running', 'waiting', 'succeeded', 'dead', 'cancelled', 'discarded'));
ALTER TABLE jobq_jobs ADD COLUMN dependents integer NOT NULL DEFAULT 0;
-- Whether the job has edges of its own (it was enqueued after others): only such a job's deletion
-- looks for edges to delete.
ALTER TABLE jobq_jobs ADD COLUMN waits boolean NOT NULL DEFAULT false;

DROP INDEX jobq_jobs_unique;
CREATE UNIQUE INDEX jobq_jobs_unique ON jobq_jobs (queue, unique_key)
    WHERE unique_key IS NOT NULL AND status IN ('blocked', 'pending', 'running', 'waiting');

-- One row per edge: `dependent` waits for `dependency` by `rule` (success, finish or failure).
-- `resolved` is NULL while the dependency has not ended, then 'met' or 'broken', written once.
CREATE TABLE jobq_deps (
    dependency text COLLATE "C" NOT NULL,
    dependent  text COLLATE "C" NOT NULL,
    rule       text COLLATE "C" NOT NULL CHECK (rule IN ('success', 'finish', 'failure')),
    resolved   text COLLATE "C" CHECK (resolved IN ('met', 'broken')),
    PRIMARY KEY (dependency, dependent)
);

-- A job's own dependencies: whether any is still open, which broke, what `show` lists.
CREATE INDEX jobq_deps_dependent ON jobq_deps (dependent);

-- An edge goes with its dependent: whatever deletes a job (cleanup, retention, delete) deletes the
-- edges it waited by. A row trigger that only jobs with edges fire (the condition is checked
-- without calling the function); not a foreign key, whose triggers would also look at every update
-- of a job, which the claim and the outcomes make by the thousand. The function keeps the
-- migration's search_path (jobq's schema), so an application's connection with another one deletes
-- the right edges.
CREATE FUNCTION jobq_delete_edges_of_deleted() RETURNS trigger LANGUAGE plpgsql
SET search_path FROM CURRENT AS $$
BEGIN
    DELETE FROM jobq_deps WHERE dependent = OLD.id;
    RETURN NULL;
END
$$;

CREATE TRIGGER jobq_jobs_deleted_edges AFTER DELETE ON jobq_jobs
    FOR EACH ROW WHEN (OLD.waits) EXECUTE FUNCTION jobq_delete_edges_of_deleted();
