#!/usr/bin/env bash
# Redis, one job at a time: two jobq builds taking turns in one window, beside what one client gets
# from the server itself (`redis-benchmark -c 1`): SET, a two-command script (HSET and ZADD, the
# smallest that writes a job and indexes it) and a script doing what `enqueue.lua` does for one job
# (EXISTS, HSET, two ZADD, XADD, SADD). Each round runs, in turn: the before build's
# `jobq bench enqueue --single-jobs 20000 --bulk-jobs 0`, the after build's, the three redis-benchmark
# runs, then both builds' bulk enqueue (`--single-jobs 0 --bulk-jobs 20000`). Prints every run and
# the medians.
#
#   benches/probes/redis_single.sh BEFORE_JOBQ AFTER_JOBQ [ROUNDS]    # ROUNDS=5
set -euo pipefail
BEFORE=$1 AFTER=$2 ROUNDS=${3:-5}
URL=${JOBQ_BENCH_REDIS_URL:-redis://127.0.0.1:6379/0}
OUT=$(mktemp -d -t jobq-redis-single-XXXXXX)

two=$(redis-cli script load "redis.call('HSET', KEYS[1] .. ARGV[1], 'p', ARGV[2]) redis.call('ZADD', KEYS[1] .. 'z', 0, ARGV[1]) return 1")
six=$(redis-cli script load "local k = KEYS[1] .. ARGV[1]
if redis.call('EXISTS', k) == 1 then return 'D' end
redis.call('HSET', k, 't', 'noop', 'p', ARGV[2], 'r', ARGV[1], 'c', ARGV[1])
redis.call('ZADD', KEYS[1] .. 'pend:0', 0, ARGV[1])
redis.call('ZADD', KEYS[1] .. 'prios', 0, 0)
redis.call('XADD', KEYS[1] .. 'wake', 'MAXLEN', '64', '*', 'w', '1')
redis.call('SADD', KEYS[1] .. 'queues', 'q')
return 'C'")

rps() { tr '\r' '\n' | grep -oE '[0-9.]+ requests per second' | tail -1 | cut -d' ' -f1; }
single() { "$1" --url "$URL?prefix=$2:" bench enqueue --single-jobs 20000 --bulk-jobs 0 -o json |
  python3 -c 'import json,sys; s=json.load(sys.stdin)["enqueue"]["single"]; print(round(s["jobsPerSecond"]), s["callMs"]["p50"])'; }
bulk() { "$1" --url "$URL?prefix=$2:" bench enqueue --single-jobs 0 --bulk-jobs 20000 -o json |
  python3 -c 'import json,sys; print(round(json.load(sys.stdin)["enqueue"]["bulk"]["jobsPerSecond"]))'; }

for r in $(seq "$ROUNDS"); do
  single "$BEFORE" "rs-b$r" >> "$OUT/single-before"
  single "$AFTER" "rs-a$r" >> "$OUT/single-after"
  redis-benchmark -c 1 -n 50000 -q -t set 2>&1 | rps >> "$OUT/set"
  redis-benchmark -c 1 -n 50000 -q -r 1000000 evalsha "$two" 1 'rb:{q}:' __rand_int__ '{}' 2>&1 | rps >> "$OUT/script2"
  redis-benchmark -c 1 -n 50000 -q -r 1000000 evalsha "$six" 1 'rb:{q}:' __rand_int__ '{}' 2>&1 | rps >> "$OUT/script6"
  redis-cli --scan --pattern 'rb:*' | xargs -r redis-cli unlink > /dev/null
  bulk "$BEFORE" "rs-bb$r" >> "$OUT/bulk-before"
  bulk "$AFTER" "rs-ba$r" >> "$OUT/bulk-after"
  echo "round $r done" >&2
done

python3 - "$OUT" <<'EOF'
import pathlib, statistics, sys
out = pathlib.Path(sys.argv[1])
for name in ["single-before", "single-after", "set", "script2", "script6", "bulk-before", "bulk-after"]:
    rows = [line.split() for line in (out / name).read_text().split("\n") if line.strip()]
    rates = [float(r[0]) for r in rows]
    extra = ""
    if len(rows[0]) > 1:
        extra = f"  p50 call ms {statistics.median(float(r[1]) for r in rows):.3f}"
    print(f"{name:14} median {statistics.median(rates):>9.0f}/s  runs {[round(x) for x in rates]}{extra}")
EOF
