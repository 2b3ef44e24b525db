#!/usr/bin/env bash
# PostgreSQL: what an arrivals table like SQLite's (`store/sqlite/arrivals.rs`) would let one insert
# cost, before building it: pgbench, one client, the simple protocol (as the peers' limits script),
# taking turns: a bare table (bigserial, jsonb), jobq_jobs as migrated, and a table with the enqueue's
# columns keyed by id, with a NOTIFY trigger like jobq_jobs' and without one.
#   benches/probes/pg_arrivals_potential.sh JOBQ [ROUNDS] [N]
set -uo pipefail
J=$1 R=${2:-5} N=${3:-3000}
D=$(mktemp -d)
PGA="-h 127.0.0.1 -U postgres"
P="psql $PGA -q test"
$P -c "DROP SCHEMA IF EXISTS arr_pot CASCADE" 2>/dev/null
$J --url "postgres://postgres@127.0.0.1:5432/test?schema=arr_pot" migrate >/dev/null
$P <<'SQL'
DROP TABLE IF EXISTS public.limit_jobs;
CREATE TABLE public.limit_jobs (id bigserial PRIMARY KEY, payload jsonb NOT NULL);
CREATE TABLE arr_pot.arrivals (id text PRIMARY KEY, queue text NOT NULL, job_type text NOT NULL,
  payload json NOT NULL, meta json NOT NULL, priority int NOT NULL, max_attempts int NOT NULL,
  run_at bigint NOT NULL, unique_key text, timeout_ms bigint, created_at bigint NOT NULL);
CREATE TABLE arr_pot.arrivals_quiet (LIKE arr_pot.arrivals INCLUDING ALL);
CREATE FUNCTION arr_pot.notify_arrived() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('jobq_jobs', json_build_object('schema', TG_TABLE_SCHEMA, 'queue', q.queue)::text)
    FROM (SELECT DISTINCT queue FROM arrived) AS q;
    RETURN NULL;
END
$$;
CREATE TRIGGER arrivals_notify AFTER INSERT ON arr_pot.arrivals
    REFERENCING NEW TABLE AS arrived FOR EACH STATEMENT EXECUTE FUNCTION arr_pot.notify_arrived();
SQL
echo "INSERT INTO public.limit_jobs (payload) VALUES ('{\"i\": 1}');" > $D/bare.sql
row="(gen_random_uuid()::text, 'default', 'noop', '{\"i\": 1}', '{}', 0, 5, 1764600000000, NULL, NULL, 1764600000000)"
cols="(id, queue, job_type, payload, meta, priority, max_attempts, run_at, unique_key, timeout_ms, created_at)"
echo "INSERT INTO arr_pot.jobq_jobs $cols VALUES $row;" > $D/jobs.sql
echo "INSERT INTO arr_pot.arrivals $cols VALUES $row;" > $D/arrivals.sql
echo "INSERT INTO arr_pot.arrivals_quiet $cols VALUES $row;" > $D/quiet.sql
for r in $(seq "$R"); do
  line="round $r"
  for s in bare jobs arrivals quiet; do
    t=$(pgbench $PGA -n -f $D/$s.sql -c 1 -j 1 -t "$N" test 2>&1 | grep -oE 'tps = [0-9.]+' | head -1 | cut -d' ' -f3)
    line="$line $s ${t%.*}"
  done
  echo "$line"
done
$P -c "DROP SCHEMA arr_pot CASCADE; DROP TABLE public.limit_jobs" >/dev/null 2>&1
