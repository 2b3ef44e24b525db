#!/usr/bin/env bash
# One job at a time, two builds taking turns in one window: SQLite's one-at-a-time enqueue at
# synchronous NORMAL and FULL beside huey (from a copy of the peers' harness in $PEERS, default
# /tmp/peers) and beside SQLite's own one-row transactions (benches/probes/sqlite_limit.py: a bare table and
# jobq_jobs); 1, 8 and 64 producers; then bulk enqueue and drain on every store.
#
#   benches/probes/single_enqueue.sh OLD_JOBQ NEW_JOBQ > figures.txt
set -uo pipefail
B=$1 A=$2
J() { python3 -c "import json,sys; d=json.load(sys.stdin); $1"; }
single() { # bin sync producers
  rm -f /var/tmp/ss.db*
  local p=""; [ "${3:-1}" != 1 ] && p="--producers $3"
  $1 --url "sqlite:///var/tmp/ss.db?synchronous=$2" bench enqueue --single-jobs 20000 $p --bulk-jobs 0 -o json 2>/dev/null \
   | J "e=d['enqueue']['single']; print(round(e['jobsPerSecond']), round(e['callMs']['p50']*1000))"
}
echo "== sqlite single (rate/s, p50 µs)"
for r in 1 2 3 4 5; do
  echo "round $r before-normal $(single $B normal) after-normal $(single $A normal) before-full $(single $B full) after-full $(single $A full)"
  (cd "${PEERS:-/tmp/peers}/huey" && ../.venv/bin/python bench.py reset >/dev/null && echo "round $r huey $(../.venv/bin/python bench.py w1-single 20000)")
  echo "round $r raw $(python3 "$(dirname "$0")/sqlite_limit.py" $A 20000 | tr '\n' ' ')"
done
echo "== sqlite producers (after)"
for r in 1 2 3; do echo "round $r p1 $(single $A normal 1) p8 $(single $A normal 8) p64 $(single $A normal 64) p8-before $(single $B normal 8) p64-before $(single $B normal 64)"; done
url() { case $1 in sqlite) echo "sqlite:///var/tmp/bd-$2.db";; postgres) echo "postgres://postgres@127.0.0.1:5432/test?schema=bd_$2";; mysql) echo "mysql://root@127.0.0.1:3306/bd_$2";; redis) echo "redis://127.0.0.1:6379/0?prefix=bd$2:";; esac; }
prep() { case $1 in sqlite) rm -f /var/tmp/bd-$2.db*;; postgres) psql -q -h 127.0.0.1 -U postgres test -c "DROP SCHEMA IF EXISTS bd_$2 CASCADE" >/dev/null 2>&1;; mysql) mariadb -h 127.0.0.1 -uroot -e "DROP DATABASE IF EXISTS bd_$2; CREATE DATABASE bd_$2";; redis) redis-cli --scan --pattern "bd$2:*" | xargs -r redis-cli del >/dev/null;; esac; }
echo "== bulk enqueue and drain (jobs/s)"
for s in sqlite postgres mysql redis; do
  for r in 1 2 3; do
    for side in before after; do
      bin=$B; [ $side = after ] && bin=$A
      prep $s $side
      bulk=$($bin --url "$(url $s $side)" bench enqueue --single-jobs 0 --bulk-jobs 100000 -o json 2>/dev/null | J "print(round(d['enqueue']['bulk']['jobsPerSecond']))")
      prep $s $side
      drain=$($bin --url "$(url $s $side)" bench drain --jobs 20000 -o json 2>/dev/null | J "print(round(d['drain']['jobsPerSecond']))")
      prep $s $side
      echo "$s round $r $side bulk $bulk drain $drain"
    done
  done
done
