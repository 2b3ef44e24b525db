#!/usr/bin/env bash
# PostgreSQL and MariaDB one-at-a-time enqueue beside the server's own one-INSERT-per-transaction rate
# from one client (pgbench with a one-line script; mariadb-slap), into a bare table and, on
# PostgreSQL, into the jobq_jobs table the enqueue just filled, taking turns.
#   benches/probes/server_single.sh JOBQ [ROUNDS] [N]
set -uo pipefail
J=$1 R=${2:-5} N=${3:-5000}
PGA="-h 127.0.0.1 -U postgres"
psql $PGA -qc "DROP DATABASE IF EXISTS pgbench_limit" postgres >/dev/null
psql $PGA -qc "CREATE DATABASE pgbench_limit" postgres
psql $PGA -q pgbench_limit -c "CREATE TABLE limit_jobs (id bigserial PRIMARY KEY, payload jsonb NOT NULL)"
echo "INSERT INTO limit_jobs (payload) VALUES ('{\"i\": 1}');" > /tmp/insert.sql
echo "INSERT INTO ss.jobq_jobs (id, queue, job_type, payload, meta, priority, max_attempts, run_at, unique_key, timeout_ms, created_at) VALUES (gen_random_uuid()::text, 'default', 'noop', '{\"i\": 1}', '{}', 0, 5, 1764600000000, NULL, NULL, 1764600000000);" > /tmp/jobq_insert.sql
mariadb -h 127.0.0.1 -uroot -e "DROP DATABASE IF EXISTS limit_db; CREATE DATABASE limit_db; CREATE TABLE limit_db.limit_jobs (id BIGINT AUTO_INCREMENT PRIMARY KEY, payload JSON NOT NULL) ENGINE=InnoDB"
jq_rate() { python3 -c "import json,sys; e=json.load(sys.stdin)['enqueue']['single']; print(round(e['jobsPerSecond']), round(e['callMs']['p50']*1000))"; }
for r in $(seq $R); do
  psql $PGA -q test -c "DROP SCHEMA IF EXISTS ss CASCADE" 2>/dev/null
  a=$($J --url "postgres://postgres@127.0.0.1:5432/test?schema=ss" bench enqueue --single-jobs $N --bulk-jobs 0 -o json 2>/dev/null | jq_rate)
  b=$(pgbench $PGA -n -f /tmp/insert.sql -c 1 -j 1 -t $N pgbench_limit 2>&1 | grep -oE 'tps = [0-9.]+' | head -1 | cut -d' ' -f3)
  bj=$(pgbench $PGA -n -f /tmp/jobq_insert.sql -c 1 -j 1 -t $N test 2>&1 | grep -oE 'tps = [0-9.]+' | head -1 | cut -d' ' -f3)
  mariadb -h 127.0.0.1 -uroot -e "DROP DATABASE IF EXISTS ss; CREATE DATABASE ss"
  c=$($J --url "mysql://root@127.0.0.1:3306/ss" bench enqueue --single-jobs $N --bulk-jobs 0 -o json 2>/dev/null | jq_rate)
  t0=$(date +%s.%N)
  mariadb-slap -h 127.0.0.1 -uroot --create-schema=limit_db --no-drop --concurrency=1 --number-of-queries=$N \
    --query="INSERT INTO limit_jobs (payload) VALUES ('{\"i\": 1}')" >/dev/null 2>&1
  t1=$(date +%s.%N)
  d=$(python3 -c "print(round($N/($t1-$t0)))")
  echo "round $r jobq-pg $a pgbench-insert $b pgbench-insert-jobq_jobs $bj jobq-mysql $c mariadb-slap-insert $d"
done
