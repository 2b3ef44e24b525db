#!/usr/bin/env bash
# PostgreSQL's own rate for the statement `jobq emit` sends for an event with 10 subscribers (one
# event record and 10 jobs, one statement, its own transaction), from pgbench with one client,
# beside a one-row insert into jobq_events, taking turns.   benches/probes/pg_emit_limit.sh JOBQ [ROUNDS]
set -uo pipefail
J=$1 R=${2:-3}
D=$(mktemp -d)
PGA="-h 127.0.0.1 -U postgres"
psql $PGA -q test -c "DROP SCHEMA IF EXISTS emitb CASCADE" 2>/dev/null
$J --url "postgres://postgres@127.0.0.1:5432/test?schema=emitb" migrate >/dev/null
python3 - "$D" <<'PY'
import sys
d = sys.argv[1]
rows = ", ".join(
    f"('evt:' || :id || '#{n}', 'default', 'sub.{n}', CAST('{{\"userId\":1}}' AS json), "
    f"CAST('{{\"event\":\"user.registered\",\"eventId\":\"x\"}}' AS json), 0, 5, 1764600000000, NULL::text, NULL::bigint, 1764600000000)"
    for n in range(1, 11))
open(f"{d}/emit.sql", "w").write(
    "\\set id random(1, 1000000000)\n"
    "WITH e AS (INSERT INTO emitb.jobq_events (id, name, payload, meta, created_at, expanded_at) VALUES ('e' || :id, "
    "'user.registered', CAST('{\"userId\":1}' AS json), CAST('{}' AS json), 1764600000000, 1764600000000) "
    "ON CONFLICT (id) DO NOTHING RETURNING id) INSERT INTO emitb.jobq_jobs (id, queue, job_type, payload, meta, priority, "
    "max_attempts, run_at, unique_key, timeout_ms, created_at) SELECT * FROM (VALUES " + rows + ") AS v (id, queue, "
    "job_type, payload, meta, priority, max_attempts, run_at, unique_key, timeout_ms, created_at) WHERE EXISTS (SELECT 1 FROM e);\n")
open(f"{d}/one.sql", "w").write("INSERT INTO emitb.jobq_events (id, name) VALUES (gen_random_uuid()::text, 'x');\n")
PY
for r in $(seq "$R"); do
  a=$(pgbench $PGA -n -f "$D/emit.sql" -c 1 -j 1 -t 1500 test 2>&1 | grep -oE 'tps = [0-9.]+' | head -1 | cut -d' ' -f3)
  b=$(pgbench $PGA -n -f "$D/one.sql" -c 1 -j 1 -t 1500 test 2>&1 | grep -oE 'tps = [0-9.]+' | head -1 | cut -d' ' -f3)
  echo "round $r emit-statement-10-jobs ${a%.*} one-row-event-insert ${b%.*}"
done
psql $PGA -q test -c "DROP SCHEMA IF EXISTS emitb CASCADE" 2>/dev/null
rm -rf "$D"
