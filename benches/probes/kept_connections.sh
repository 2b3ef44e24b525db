#!/usr/bin/env bash
# PostgreSQL and MariaDB: two builds taking turns (OLD, NEW), beside the server's own one-INSERT
# transactions from one client (pgbench with a one-line script; mariadb-slap) into a bare table:
# one-at-a-time enqueue and get (the calls on kept connections, `crates/jobq/src/store/sql/kept.rs`), 8 and 64
# producers, then bulk enqueue and drain (which must not be slower).
#   benches/probes/kept_connections.sh OLD NEW [ROUNDS] [N] [single]
# With `single` last, only the one-at-a-time enqueue and get (quicker rounds, so more of them).
set -uo pipefail
OLD=$1 NEW=$2 R=${3:-5} N=${4:-3000} MODE=${5:-all}
PGA="-h 127.0.0.1 -U postgres"
PG="postgres://postgres@127.0.0.1:5432/test?schema=kept_bench"
MY="mysql://root@127.0.0.1:3306/kept_bench"
echo "INSERT INTO limit_jobs (payload) VALUES ('{\"i\": 1}');" > /tmp/kept_insert.sql
psql $PGA -qc "DROP TABLE IF EXISTS limit_jobs; CREATE TABLE limit_jobs (id bigserial PRIMARY KEY, payload jsonb NOT NULL)" test
mariadb -h 127.0.0.1 -uroot -e "DROP DATABASE IF EXISTS limit_db; CREATE DATABASE limit_db; CREATE TABLE limit_db.limit_jobs (id BIGINT AUTO_INCREMENT PRIMARY KEY, payload JSON NOT NULL) ENGINE=InnoDB"
fresh() {
  case $1 in
    postgres*) psql $PGA -q test -c "DROP SCHEMA IF EXISTS kept_bench CASCADE" 2>/dev/null ;;
    mysql*) mariadb -h 127.0.0.1 -uroot -e "DROP DATABASE IF EXISTS kept_bench; CREATE DATABASE kept_bench" ;;
  esac
}
# single: jobs/s, p50 µs, get reads/s; producers: jobs/s; bulk and drain: jobs/s
single() { python3 -c "import json,sys; e=json.load(sys.stdin)['enqueue']; s=e['single']; print(round(s['jobsPerSecond']), round(s['callMs']['p50']*1000), round(e['get']['jobsPerSecond']))"; }
rate() { python3 -c "import json,sys; d=json.load(sys.stdin); print(round(d['$1']['$2']['jobsPerSecond']) if '$2' else round(d['$1']['jobsPerSecond']))"; }
pgbench_bare() { pgbench $PGA -n -f /tmp/kept_insert.sql -c 1 -j 1 -t "$N" test 2>&1 | grep -oE 'tps = [0-9.]+' | head -1 | cut -d' ' -f3 | cut -d. -f1; }
slap_bare() {
  local t0 t1
  t0=$(date +%s.%N)
  mariadb-slap -h 127.0.0.1 -uroot --create-schema=limit_db --no-drop --concurrency=1 --number-of-queries="$N" \
    --query="INSERT INTO limit_jobs (payload) VALUES ('{\"i\": 1}')" >/dev/null 2>&1
  t1=$(date +%s.%N)
  python3 -c "print(round($N/($t1-$t0)))"
}
for r in $(seq "$R"); do
  for url in "$PG" "$MY"; do
    store=${url%%:*}
    for j in "$OLD" "$NEW"; do
      b=$(basename "$j")
      fresh "$url"; s=$("$j" --url "$url" bench enqueue --single-jobs "$N" --bulk-jobs 0 -o json 2>/dev/null | single)
      if [ "$MODE" = single ]; then
        echo "round $r $store $b single/p50µs/get $s"
        continue
      fi
      fresh "$url"; p8=$("$j" --url "$url" bench enqueue --single-jobs $((N * 2)) --producers 8 --bulk-jobs 0 -o json 2>/dev/null | rate enqueue single)
      fresh "$url"; p64=$("$j" --url "$url" bench enqueue --single-jobs $((N * 4)) --producers 64 --bulk-jobs 0 -o json 2>/dev/null | rate enqueue single)
      fresh "$url"; bulk=$("$j" --url "$url" bench enqueue --single-jobs 0 --bulk-jobs 100000 -o json 2>/dev/null | rate enqueue bulk)
      fresh "$url"; drain=$("$j" --url "$url" bench drain --jobs 20000 -o json 2>/dev/null | rate drain "")
      echo "round $r $store $b single/p50µs/get $s p8 $p8 p64 $p64 bulk $bulk drain $drain"
    done
    case $store in
      postgres) echo "round $r postgres pgbench-bare $(pgbench_bare)" ;;
      mysql) echo "round $r mysql mariadb-slap-bare $(slap_bare)" ;;
    esac
  done
done
fresh "$PG"; psql $PGA -q test -c "DROP SCHEMA IF EXISTS kept_bench CASCADE" 2>/dev/null
mariadb -h 127.0.0.1 -uroot -e "DROP DATABASE IF EXISTS kept_bench"
