#!/usr/bin/env bash
# PostgreSQL: what one insert into jobq_jobs costs, piece by piece: pgbench, one client, the simple
# protocol (as the peers' limits script), into a bare table (bigserial, jsonb) and into jobq_jobs as
# migrated, without its NOTIFY trigger, also without its CHECK constraints, also without the created
# index, taking turns.   benches/probes/pg_insert_parts.sh JOBQ [ROUNDS] [N]
set -uo pipefail
J=$1 R=${2:-5} N=${3:-3000}
D=$(mktemp -d)
PGA="-h 127.0.0.1 -U postgres"
P="psql $PGA -q test"
for s in a_full a_notrig a_nocheck a_min; do
  $P -c "DROP SCHEMA IF EXISTS $s CASCADE" 2>/dev/null
  $J --url "postgres://postgres@127.0.0.1:5432/test?schema=$s" migrate >/dev/null
done
$P -c "ALTER TABLE a_notrig.jobq_jobs DISABLE TRIGGER jobq_jobs_notify"
$P -c "ALTER TABLE a_nocheck.jobq_jobs DISABLE TRIGGER jobq_jobs_notify; ALTER TABLE a_nocheck.jobq_jobs DROP CONSTRAINT jobq_jobs_meta_is_object, DROP CONSTRAINT jobq_jobs_errors_is_array, DROP CONSTRAINT jobq_jobs_attempts, DROP CONSTRAINT jobq_jobs_timeout, DROP CONSTRAINT jobq_jobs_status_check"
$P -c "ALTER TABLE a_min.jobq_jobs DISABLE TRIGGER jobq_jobs_notify; ALTER TABLE a_min.jobq_jobs DROP CONSTRAINT jobq_jobs_meta_is_object, DROP CONSTRAINT jobq_jobs_errors_is_array, DROP CONSTRAINT jobq_jobs_attempts, DROP CONSTRAINT jobq_jobs_timeout, DROP CONSTRAINT jobq_jobs_status_check; DROP INDEX a_min.jobq_jobs_created"
$P -c "DROP TABLE IF EXISTS public.limit_jobs; CREATE TABLE public.limit_jobs (id bigserial PRIMARY KEY, payload jsonb NOT NULL)"
echo "INSERT INTO public.limit_jobs (payload) VALUES ('{\"i\": 1}');" > $D/bare.sql
for s in a_full a_notrig a_nocheck a_min; do
  echo "INSERT INTO $s.jobq_jobs (id, queue, job_type, payload, meta, priority, max_attempts, run_at, unique_key, timeout_ms, created_at) VALUES (gen_random_uuid()::text, 'default', 'noop', '{\"i\": 1}', '{}', 0, 5, 1764600000000, NULL, NULL, 1764600000000);" > $D/$s.sql
done
for r in $(seq $R); do
  line="round $r"
  for s in bare a_full a_notrig a_nocheck a_min; do
    t=$(pgbench $PGA -n -f $D/$s.sql -c 1 -j 1 -t $N test 2>&1 | grep -oE 'tps = [0-9.]+' | head -1 | cut -d' ' -f3)
    line="$line $s ${t%.*}"
  done
  echo "$line"
done
