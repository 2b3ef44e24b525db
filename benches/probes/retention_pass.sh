#!/usr/bin/env bash
# Issue 47's retention target: a drain while a worker's retention deletes 1,000,000 finished jobs,
# against the same drain without it. OLD succeeded jobs that finished two days ago are imported into
# queue `archive`; then, ROUNDS times, the drain of DRAIN noop jobs (`jobq bench drain`, its own
# queue) runs once alone and once beside a `jobq worker` whose only work is retention
# (`retention = "1h"`, serving an empty queue), started just before and stopped just after. The
# pass deletes in batches of 1,000 with 50 ms between them, so it is still deleting when each drain
# ends; what it deleted during each is counted.
# With WORKLOAD=latency, `jobq bench latency` (500 jobs 20 ms apart: enqueue to start) instead of the
# drain: how long a job waits for its claim while the pass deletes.
#   [WORKLOAD=latency] benches/probes/retention_pass.sh BIN URL [OLD] [DRAIN] [ROUNDS]
#   each line: round mode drain-jobs/s wall-s (or p50 ms p99 ms) archive-left
set -euo pipefail
J=$1 URL=$2 OLD=${3:-1000000} DRAIN=${4:-50000} ROUNDS=${5:-3}
dir=$(mktemp -d /var/tmp/jobq-retention.XXXX)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$dir"' EXIT
python3 - "$OLD" > "$dir/old.ndjson" <<'PY'
import json, sys, time, uuid
done = int(time.time() * 1000) - 2 * 86_400_000
line = {"v": 1, "jobType": "mail.send", "queue": "archive", "meta": {}, "priority": 0, "attempt": 1,
        "maxAttempts": 5, "uniqueKey": None, "timeoutMs": None, "status": "succeeded", "progress": None,
        "result": None, "errors": [], "heartbeatAt": None, "workerId": None, "snoozes": 0}
for i in range(int(sys.argv[1])):
    t = done - i
    line.update(jobId="old-%07d" % i, payload={"n": i}, runAt=t - 10, createdAt=t - 10, startedAt=t - 5,
                finishedAt=t)
    print(json.dumps(line, separators=(",", ":")))
PY
"$J" --url "$URL" import "$dir/old.ndjson" -q
printf 'url = "%s"\n[worker]\nqueues = ["retention-only"]\nretention = "1h"\n[handlers.none]\nbuiltin = "noop"\n' "$URL" \
  > "$dir/retention.toml"
left() { "$J" --url "$URL" stats -o json | python3 -c "import json,sys; q=[q for q in json.load(sys.stdin)['queues'] if q['queue']=='archive']; print(q[0]['succeeded'] if q else 0)"; }
drain() {
  if [ "${WORKLOAD:-drain}" = latency ]; then
    "$J" bench latency --url "$URL" -o json 2>/dev/null | python3 -c "import json,sys; d=json.load(sys.stdin)['latency']['ms']; print('p50', d['p50'], 'p99', d['p99'])"
  else
    "$J" bench drain --jobs "$DRAIN" --url "$URL" -o json 2>/dev/null | python3 -c "import json,sys; d=json.load(sys.stdin)['drain']; print(round(d['jobsPerSecond']), round(d['wallSeconds'],3))"
  fi
}
for r in $(seq "$ROUNDS"); do
  echo "$r alone $(drain) $(left)"
  "$J" --config "$dir/retention.toml" worker --name retention > "$dir/worker.log" 2>&1 &
  worker=$!
  # The pass starts with the worker: wait until it has deleted its first batch.
  before=$(left)
  while [ "$(left)" = "$before" ]; do
    kill -0 $worker 2>/dev/null || { cat "$dir/worker.log" >&2; exit 1; }
    sleep 0.05
  done
  echo "$r with-retention $(drain) $(left)"
  kill -TERM $worker; wait $worker || true
done
