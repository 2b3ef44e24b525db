-- 0008_open_edges: a job's edges by whether they are open. A dependent's release asks, after each of
-- its dependencies ends, whether any of its edges is still open: with the dependent alone indexed,
-- that read visited every edge of the job (a job after ten thousand others read ten thousand rows at
-- each end, a hundred million over its flow); with `resolved` beside it, one probe answers.
--
-- Transition: jobq schema version 7 → 8, in one transaction under the migrator's lock. The new
-- index serves everything the old one did (it leads with the same column).

CREATE INDEX jobq_deps_open ON jobq_deps (dependent, resolved);
DROP INDEX jobq_deps_dependent;
