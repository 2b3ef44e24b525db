#!/usr/bin/env bash
# Processes opening a SQLite file that does not exist yet, at the same moment (issue 43): how often
# one of them fails. Two measures, each on a fresh file per round:
#   pairs:  a burst worker and an enqueue started together, PAIRS times;
#   eights: two burst workers and six enqueues started together, ROUNDS times (every process must
#           exit 0 and all six jobs must be there).
# usage: benches/probes/first_open.sh [JOBQ] [PAIRS] [ROUNDS]   (defaults: target/release/jobq 200 50)
set -uo pipefail
JOBQ=${1:-target/release/jobq} PAIRS=${2:-200} ROUNDS=${3:-50}
dir=$(mktemp -d -t jobq-first-open-XXXXXX)
trap 'rm -rf "$dir"' EXIT

failed=0
for i in $(seq 1 "$PAIRS"); do
  url="sqlite://$dir/pair-$i.db"
  "$JOBQ" --url "$url" worker --burst --handler t=builtin:noop >/dev/null 2>&1 &
  worker=$!
  "$JOBQ" --url "$url" enqueue t '{}' >/dev/null 2>&1 || failed=$((failed + 1))
  wait $worker || failed=$((failed + 1))
done
echo "pairs: $failed failed processes in $PAIRS pairs"

failed=0
for i in $(seq 1 "$ROUNDS"); do
  url="sqlite://$dir/eight-$i.db"
  pids=()
  for _ in 1 2; do "$JOBQ" --url "$url" worker --burst --handler t=builtin:noop >/dev/null 2>&1 & pids+=($!); done
  for n in 1 2 3 4 5 6; do "$JOBQ" --url "$url" enqueue t "{\"n\":$n}" >/dev/null 2>&1 & pids+=($!); done
  bad=0
  for p in "${pids[@]}"; do wait "$p" || bad=1; done
  jobs=$("$JOBQ" --url "$url" list --limit 100 -o json 2>/dev/null | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')
  [ "$jobs" = 6 ] || bad=1
  failed=$((failed + bad))
done
echo "eights: $failed of $ROUNDS rounds with a failed process or a missing job"
