-- 0005_bridges: a bridge (`jobq bridge`, from RabbitMQ or Kafka) registers like a worker, with what
-- it reads and its counts beside the worker's own columns.
--
-- Transition: jobq schema version 4 → 5, under the migrator's GET_LOCK. MySQL commits each DDL
-- statement by itself, so the column is added IF NOT EXISTS and a run cut short may run again. NULL
-- for a worker; for a bridge the JSON of `BridgeInfo` (source, duplicates, rejected), which
-- `jobq workers` and `/metrics` show.

ALTER TABLE jobq_workers ADD COLUMN IF NOT EXISTS bridge TEXT NULL;
