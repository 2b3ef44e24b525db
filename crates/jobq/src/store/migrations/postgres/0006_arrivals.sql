-- 0006_arrivals: SQLite's table of jobs just arrived (see the SQLite migration of this number). This
-- store writes every job where it stays and needs no such table; the number is taken here too so
-- that one number means one change in every store, and the next change (7) is the same everywhere.
--
-- Transition: jobq schema version 5 → 6, nothing changed.

SELECT 1;
