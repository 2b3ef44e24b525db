-- 0008_open_edges: a job's edges by whether they are open. A dependent's release asks, after each of
-- its dependencies ends, whether any of its edges is still open: with the dependent alone indexed,
-- that read visited every edge of the job (a job after ten thousand others read ten thousand rows at
-- each end, a hundred million over its flow); with `resolved` beside it, one probe answers.
--
-- Transition: jobq schema version 7 → 8, one statement under the migrator's GET_LOCK (DDL commits
-- itself). The new index serves everything the old one did, the foreign key on `dependent` among it,
-- so the old one goes in the same statement.

ALTER TABLE jobq_deps
    ADD KEY IF NOT EXISTS jobq_deps_open (dependent, resolved),
    DROP KEY IF EXISTS jobq_deps_dependent;
