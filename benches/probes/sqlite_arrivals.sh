#!/usr/bin/env bash
# SQLite's arrivals table (issue 14): two builds taking turns in one window, on fresh files. Both
# builds need `bench enqueue --processes` (the build before: its commit with src/bench/enqueue.rs and
# src/cli/bench.rs of the change copied in).
#
#   benches/probes/sqlite_arrivals.sh OLD_JOBQ NEW_JOBQ [ROUNDS] > figures.txt
#
# Each round, old then new for each line:
#   single-normal / single-full  one producer, 20,000 awaited `Client::enqueue` calls, no worker
#                                (jobs/s, p50 µs per call)
#   beside                       the same producer with a `jobq worker` process working the jobs off
#                                meanwhile (`bench enqueue --processes 1`: jobs/s enqueued, p50 µs
#                                per call, jobs/s from the first call to the last job's end)
#   latency                      enqueue→start from a separate producer, 500 jobs 20 ms apart (p50/p99 ms)
#   p8 / p64                     8 and 64 producers in one process (jobs/s)
#   bulk / drain                 100,000 jobs in batches of 10,000; 20,000 jobs worked off (jobs/s)
# and beside them SQLite's own one-row transactions (benches/probes/sqlite_limit.py: a bare table and
# jobq_jobs, NORMAL and FULL) and huey's one-at-a-time enqueue (from a copy of the peers' harness in
# $PEERS, default /tmp/peers, with its .venv; skipped when absent).
set -uo pipefail
OLD=$1 NEW=$2 ROUNDS=${3:-5}
DB=/var/tmp/arrivals-bench.db
J() { python3 -c "import json,sys; d=json.load(sys.stdin); $1"; }
run() { rm -f $DB*; "$1" --url "sqlite://$DB?synchronous=${SYNC:-normal}" bench "${@:2}" -o json 2>/dev/null; }
single() { run "$1" enqueue --single-jobs 20000 --bulk-jobs 0 --producers "${2:-1}" \
  | J "e=d['enqueue']['single']; print(round(e['jobsPerSecond']), round(e['callMs']['p50']*1000))"; }
beside() { run "$1" enqueue --single-jobs 20000 --bulk-jobs 0 --processes 1 \
  | J "e=d['enqueue']['single']; print(round(e['jobsPerSecond']), round(e['callMs']['p50']*1000), round(e['beside']['jobsPerSecond']))"; }
latency() { run "$1" latency | J "l=d['latency']['ms']; print(l['p50'], l['p99'])"; }
bulk() { run "$1" enqueue --single-jobs 0 --bulk-jobs 100000 | J "print(round(d['enqueue']['bulk']['jobsPerSecond']))"; }
drain() { run "$1" drain --jobs 20000 | J "print(round(d['drain']['jobsPerSecond']))"; }
PEERS=${PEERS:-/tmp/peers}
for r in $(seq "$ROUNDS"); do
  echo "round $r single-normal $(single "$OLD") | $(single "$NEW")"
  echo "round $r single-full $(SYNC=full single "$OLD") | $(SYNC=full single "$NEW")"
  python3 "$(dirname "$0")/sqlite_limit.py" "$NEW" 20000 | sed "s/^/round $r sqlite-own /"
  if [ -x "$PEERS/.venv/bin/python" ]; then
    (cd "$PEERS/huey" && ../.venv/bin/python bench.py reset >/dev/null && echo "round $r huey $(../.venv/bin/python bench.py w1-single 20000)")
  fi
  echo "round $r beside $(beside "$OLD") | $(beside "$NEW")"
  echo "round $r latency $(latency "$OLD") | $(latency "$NEW")"
  echo "round $r p8 $(single "$OLD" 8) | $(single "$NEW" 8)"
  echo "round $r p64 $(single "$OLD" 64) | $(single "$NEW" 64)"
  echo "round $r bulk $(bulk "$OLD") | $(bulk "$NEW")"
  echo "round $r drain $(drain "$OLD") | $(drain "$NEW")"
done
