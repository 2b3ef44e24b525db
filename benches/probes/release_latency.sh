#!/usr/bin/env bash
# How soon a dependent is claimed after its dependency's outcome (issue 46: claimable within 5 ms,
# p50): N pairs "a ← b" enqueued 20 ms apart as flows (`jobq flow -`), one idle worker with noop
# handlers; per pair, b's startedAt minus a's finishedAt (both written by the worker: the outcome's
# time and the claim's), in milliseconds. Prints p50, p90 and max over the pairs. With a fourth
# argument b goes to that queue (the worker serves both): on a Redis Cluster, a release across slots.
# usage: benches/probes/release_latency.sh JOBQ_BIN URL [N] [B_QUEUE]
set -eu
BIN=$1 URL=$2 N=${3:-100} BQ=${4:-release-probe}
dir=$(mktemp -d)
printf '[handlers.noop]\nbuiltin = "noop"\n' > "$dir/noop.toml"
"$BIN" --url "$URL" -q migrate
"$BIN" --url "$URL" --config "$dir/noop.toml" worker --queue "release-probe,$BQ" > "$dir/worker.log" 2>&1 &
worker=$!
sleep 1
for i in $(seq 1 "$N"); do
  printf '{"jobs":[{"ref":"a","type":"noop","queue":"release-probe","jobId":"rp-a-%s"},{"ref":"b","type":"noop","queue":"%s","jobId":"rp-b-%s","after":["a"]}]}' "$i" "$BQ" "$i" \
    | "$BIN" --url "$URL" -q flow - > /dev/null
  sleep 0.02
done
for _ in $(seq 1 100); do
  left=$("$BIN" --url "$URL" stats --queue release-probe --queue "$BQ" -o json | python3 -c 'import json,sys; q=json.load(sys.stdin)["totals"]; print(q["blocked"]+q["ready"]+q["running"])')
  [ "$left" = 0 ] && break
  sleep 0.1
done
kill "$worker"; wait "$worker" 2>/dev/null || true
"$BIN" --url "$URL" list --queue release-probe --queue "$BQ" --limit 100000 -o ndjson | python3 -c '
import json, sys, statistics
jobs = {j["jobId"]: j for j in map(json.loads, sys.stdin)}
gaps = sorted(jobs[f"rp-b-{i}"]["startedAt"] - jobs[f"rp-a-{i}"]["finishedAt"]
              for i in range(1, 100000) if f"rp-b-{i}" in jobs and jobs[f"rp-b-{i}"]["startedAt"])
p = lambda q: gaps[min(len(gaps) - 1, int(q * len(gaps)))]
print(json.dumps({"pairs": len(gaps), "p50_ms": statistics.median(gaps), "p90_ms": p(0.9), "max_ms": gaps[-1]}))'
rm -rf "$dir"
