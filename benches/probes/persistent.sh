#!/usr/bin/env bash
# Persistent handlers (issue 19's speed targets): `jobq bench drain` with one in-process worker whose
# jobs go to a no-op program kept running (the Python and Node.js kits' noop), beside the per-job
# exec path (/bin/true, and a Python no-op started per job) and the builtin noop (the store's own
# ceiling) in the same window, taking turns; then
# `jobq bench latency` to the persistent Python kit's first sight of each job. Medians of RUNS.
#
#   benches/probes/persistent.sh [JOBQ] [RUNS] [STORES]   # defaults: target/release/jobq 3 "sqlite postgres"
set -euo pipefail
J=$(realpath "${1:-target/release/jobq}") RUNS=${2:-3} STORES=${3:-sqlite postgres}
here=$(cd "$(dirname "$0")/../.." && pwd)
kits="$here/examples/handlers"
dir=$(mktemp -d /var/tmp/jobq-persistent.XXXX)
trap 'rm -rf "$dir"; psql -q -h 127.0.0.1 -U postgres test -c "DROP SCHEMA IF EXISTS jobq_persistent_bench CASCADE" >/dev/null 2>&1' EXIT
printf '#!/usr/bin/env python3\nimport sys\nsys.stdin.buffer.read()\n' > "$dir/noop-exec.py"
chmod +x "$dir/noop-exec.py"
url() {
  case $1 in
    sqlite) rm -f "$dir"/bench.db*; echo "sqlite://$dir/bench.db" ;;
    postgres)
      # A fresh schema each run: with autovacuum off, the dead rows of earlier runs slow the next.
      psql -q -h 127.0.0.1 -U postgres test -c "DROP SCHEMA IF EXISTS jobq_persistent_bench CASCADE" >/dev/null 2>&1
      echo "postgres://postgres@127.0.0.1:5432/test?schema=jobq_persistent_bench" ;;
  esac
}
# jobs/s of one drain: STORE JOBS ARGS…
drain() {
  local store=$1 jobs=$2; shift 2
  "$J" --url "$(url "$store")" bench drain --jobs "$jobs" -c 16 -o json -q "$@" |
    python3 -c 'import json,sys; print(round(json.load(sys.stdin)["drain"]["jobsPerSecond"]))'
}
median() { tr ' ' '\n' | grep . | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
for store in $STORES; do
  py=() node=() exec_true=() exec_py=() noop=()
  for r in $(seq "$RUNS"); do
    py+=("$(drain "$store" 100000 --persistent "$kits/python/noop.py" --in-flight 16)")
    exec_true+=("$(drain "$store" 5000 --exec /bin/true)")
    node+=("$(drain "$store" 100000 --persistent "$kits/node/noop.js" --in-flight 16)")
    exec_py+=("$(drain "$store" 500 --exec "$dir/noop-exec.py")")
    noop+=("$(drain "$store" 100000)")
    echo "$store run $r: persistent python ${py[-1]}/s, exec /bin/true ${exec_true[-1]}/s, persistent node ${node[-1]}/s, exec python ${exec_py[-1]}/s, builtin noop ${noop[-1]}/s"
  done
  echo "$store median of $RUNS: persistent python $(echo "${py[@]}" | median)/s, exec /bin/true $(echo "${exec_true[@]}" | median)/s, persistent node $(echo "${node[@]}" | median)/s, exec python $(echo "${exec_py[@]}" | median)/s, builtin noop $(echo "${noop[@]}" | median)/s"
done
for r in $(seq "$RUNS"); do
  "$J" --url "$(url sqlite)" bench latency --latency-jobs 2000 -q -o json --persistent "$kits/python/stamp.py" |
    python3 -c 'import json,sys; m=json.load(sys.stdin)["latency"]["ms"]; print("latency run '"$r"': enqueue -> persistent python p50 %.3f ms, p99 %.3f ms, mean %.3f ms" % (m["p50"], m["p99"], m["mean"]))'
done
