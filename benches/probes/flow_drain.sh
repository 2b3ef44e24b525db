#!/usr/bin/env bash
# Issue 46: draining a flow against draining the same number of plain jobs, one build, one store.
# A parent after N children (`jobq flow`, one call) or N + 1 jobs without edges (`jobq enqueue
# --file`), then `jobq worker --burst` (concurrency 8, builtin noop) until it exits: the worker's
# process alone is timed (its start, connect and exit included), so the ratio is the drain's.
# usage: benches/probes/flow_drain.sh BIN URL N ROUNDS   (prints: round kind seconds)
set -eu
BIN=$1 URL=$2 N=$3 ROUNDS=$4
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
python3 - "$N" "$dir" <<'PY'
import json, sys
n, d = int(sys.argv[1]), sys.argv[2]
children = [{"ref": f"c{i}", "type": "noop", "queue": "QUEUE"} for i in range(n)]
parent = {"ref": "parent", "type": "noop", "queue": "QUEUE", "after": [f"c{i}" for i in range(n)]}
json.dump({"jobs": children + [parent]}, open(f"{d}/flow.json", "w"))
with open(f"{d}/plain.ndjson", "w") as f:
    for i in range(n + 1):
        f.write('{"v":1,"jobType":"noop","payload":{}}\n')
PY
now() { date +%s.%N; }
for r in $(seq 1 "$ROUNDS"); do
  for kind in flow plain; do
    q="fd$RANDOM$RANDOM"
    if [ $kind = flow ]; then
      sed "s/QUEUE/$q/g" "$dir/flow.json" > "$dir/this.json"
      "$BIN" --url "$URL" flow "$dir/this.json" >/dev/null
    else
      "$BIN" --url "$URL" enqueue --file "$dir/plain.ndjson" --queue "$q" -q >/dev/null
    fi
    t0=$(now)
    "$BIN" --url "$URL" worker --queue "$q" --burst --handler noop=builtin:noop >/dev/null 2>&1
    t1=$(now)
    echo "$r $kind $(python3 -c "print(round($t1 - $t0, 3))")"
    "$BIN" --url "$URL" delete --queue "$q" --status succeeded --yes -q >/dev/null 2>&1 || true
  done
done
