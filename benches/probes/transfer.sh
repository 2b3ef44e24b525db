#!/usr/bin/env bash
# Moving jobs between stores (issue 18's speed targets), timed as whole commands, medians of RUNS:
# `jobq export` of N jobs from SQLite, `jobq import` of that file into a fresh SQLite file, and
# `jobq copy` of them from SQLite into a fresh PostgreSQL schema and a fresh Redis key prefix (the
# tests' local servers). The jobs are N finished and pending jobs with 100-byte payloads, made once by
# `jobq enqueue --file`.
#
#   benches/probes/transfer.sh [JOBQ] [N] [RUNS]      # defaults: target/release/jobq 1000000 3
set -euo pipefail
J=${1:-target/release/jobq} N=${2:-1000000} RUNS=${3:-3}
dir=$(mktemp -d /var/tmp/jobq-transfer.XXXX)
trap 'rm -rf "$dir"; psql -q -h 127.0.0.1 -U postgres test -c "DROP SCHEMA IF EXISTS jobq_transfer CASCADE" >/dev/null 2>&1; redis-cli --scan --pattern "jobq-transfer:*" | xargs -r -d "\n" redis-cli del >/dev/null' EXIT
src="sqlite://$dir/source.db"
python3 - "$N" > "$dir/new.ndjson" <<'PY'
import json, sys
pad = "x" * 80
for i in range(int(sys.argv[1])):
    print(json.dumps({"v": 1, "jobType": "mail.send", "queue": "q%d" % (i % 4), "payload": {"n": i, "pad": pad}}))
PY
"$J" --url "$src" enqueue --file "$dir/new.ndjson" -q
secs() { local t0 t1; t0=$(date +%s.%N); "$@" >/dev/null 2>&1; t1=$(date +%s.%N); echo "$t1 - $t0" | bc; }
rate() { python3 -c "import sys; print(round($N / float(sys.argv[1])))" "$1"; }
median() { tr ' ' '\n' | grep . | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
exp=() imp=() pg=() rd=()
for r in $(seq "$RUNS"); do
  exp+=("$(rate "$(secs "$J" --url "$src" export --file "$dir/jobs.ndjson")")")
  rm -f "$dir"/target.db*
  imp+=("$(rate "$(secs "$J" --url "sqlite://$dir/target.db" import "$dir/jobs.ndjson")")")
  psql -q -h 127.0.0.1 -U postgres test -c "DROP SCHEMA IF EXISTS jobq_transfer CASCADE" >/dev/null 2>&1
  pg+=("$(rate "$(secs "$J" --url "$src" copy --to "postgres://postgres@127.0.0.1:5432/test?schema=jobq_transfer")")")
  redis-cli --scan --pattern "jobq-transfer:*" | xargs -r -d "\n" redis-cli del >/dev/null
  rd+=("$(rate "$(secs "$J" --url "$src" copy --to "redis://127.0.0.1:6379/0?prefix=jobq-transfer:")")")
  echo "run $r: export ${exp[-1]}/s, import ${imp[-1]}/s, copy to PostgreSQL ${pg[-1]}/s, copy to Redis ${rd[-1]}/s"
done
echo "median of $RUNS, $N jobs: export $(echo "${exp[@]}" | median)/s, import $(echo "${imp[@]}" | median)/s, copy to PostgreSQL $(echo "${pg[@]}" | median)/s, copy to Redis $(echo "${rd[@]}" | median)/s"
