-- 0005_bridges: a bridge (`jobq bridge`, from RabbitMQ or Kafka) registers like a worker, with what
-- it reads and its counts beside the worker's own columns.
--
-- Transition: jobq schema version 4 → 5, in one transaction under the migrator's advisory lock.
-- The column is NULL for a worker; for a bridge it holds the JSON of `BridgeInfo` (source,
-- duplicates, rejected), which `jobq workers` and `/metrics` show.

ALTER TABLE jobq_workers ADD COLUMN bridge TEXT;
