#!/usr/bin/env bash
# What idle workers cost Redis while a limit is full: WORKERS `jobq worker` processes (default 20)
# serve a type with `global_concurrency = 2` over a backlog of BACKLOG of its jobs (default 5,000),
# each job a 10-minute sleep, so two workers hold the two slots and every other worker's claim, at each
# poll (200 ms), finds the limit full over the backlog. Prints the Redis server's CPU time and its
# scripts' time per second of wall time over MEASURE seconds (default 20), after 5 s to settle.
# Needs a local Redis on 6379 and a built jobq. Usage, from the repository:
#
#     benches/probes/redis_idle_workers.sh target/release/jobq
set -euo pipefail
JOBQ=$1
WORKERS=${WORKERS:-20} BACKLOG=${BACKLOG:-5000} MEASURE=${MEASURE:-20}
PREFIX="idleworkers$$:"
URL="redis://127.0.0.1:6379/?prefix=$PREFIX"
dir=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done
  redis-cli --scan --pattern "$PREFIX*" | xargs -r -n 1000 redis-cli unlink > /dev/null
  rm -rf "$dir"
}
trap cleanup EXIT

cat > "$dir/jobq.toml" <<TOML
[worker]
queues = ["default"]
concurrency = 4
poll_interval = "200ms"
schedules = false

[handlers.slow]
builtin = "sleep"
global_concurrency = 2
TOML
for _ in $(seq "$BACKLOG"); do echo '{"v":1,"jobType":"slow","payload":{"ms":600000}}'; done > "$dir/jobs.jsonl"
"$JOBQ" --url "$URL" enqueue --file "$dir/jobs.jsonl" > /dev/null 2>&1
for _ in $(seq "$WORKERS"); do
  "$JOBQ" --url "$URL" worker --config "$dir/jobq.toml" > /dev/null 2>&1 &
  pids+=($!)
  disown
done
sleep 5
cpu() { redis-cli info cpu | awk -F: '/^used_cpu_(sys|user):/ {s += $2} END {printf "%.3f", s}'; }
scripts() { redis-cli info commandstats | awk -F'[=,]' '/^cmdstat_evalsha:/ {print $2, $4}'; }
read -r calls0 usec0 < <(scripts)
cpu0=$(cpu)
sleep "$MEASURE"
cpu1=$(cpu)
read -r calls1 usec1 < <(scripts)
running=$(redis-cli zcard "${PREFIX}{default}:run")
echo "$WORKERS workers, $running jobs running, $BACKLOG held back: Redis CPU $(echo "scale=1; 100 * ($cpu1 - $cpu0) / $MEASURE" | bc) % of a core;" \
  "scripts $(( (calls1 - calls0) / MEASURE )) calls/s, $(echo "scale=1; ($usec1 - $usec0) / 1000 / $MEASURE" | bc) ms per second" \
  "($(( (usec1 - usec0) / (calls1 - calls0 + 1) )) µs a call)"
