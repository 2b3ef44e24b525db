#!/usr/bin/env bash
# Two jobq builds on every store, taking turns (old first in rounds 1 and 3, new first in round 2):
# enqueue (one at a time and bulk), drain and latency, one line of JSON per run.
#   benches/probes/crates_split_ab.sh OLD_JOBQ NEW_JOBQ > results.ndjson
# Needs the local PostgreSQL (database `test`), MariaDB and Redis of the test suite.
set -u
declare -A builds=([old]=$1 [new]=$2)
work=$(mktemp -d)
out=/dev/stdout
mysql -h 127.0.0.1 -u root -e "CREATE DATABASE IF NOT EXISTS jobq_ab CHARACTER SET utf8mb4 COLLATE utf8mb4_bin" 2>/dev/null || mariadb -h 127.0.0.1 -u root -e "CREATE DATABASE IF NOT EXISTS jobq_ab CHARACTER SET utf8mb4 COLLATE utf8mb4_bin"
n=0
for round in 1 2 3; do
  if [ $((round % 2)) = 1 ]; then order="old new"; else order="new old"; fi
  for store in sqlite postgres mysql redis; do
    for build in $order; do
      n=$((n+1))
      case $store in
        sqlite) rm -f "$work"/s.db*; url="sqlite://$work/s.db";;
        postgres) url="postgres://postgres@127.0.0.1:5432/test?schema=ab_$n";;
        mysql) url="mysql://root@127.0.0.1:3306/jobq_ab";;
        redis) url="redis://127.0.0.1:6379/0?prefix=ab$n";;
      esac
      bin=${builds[$build]}
      "$bin" --url "$url" migrate >/dev/null 2>&1
      e=$("$bin" --url "$url" bench enqueue --bulk-jobs 50000 --single-jobs 3000 -o json 2>/dev/null)
      d=$("$bin" --url "$url" bench drain --jobs 20000 -o json 2>/dev/null)
      l=$("$bin" --url "$url" bench latency --latency-jobs 200 --spacing 10ms -o json 2>/dev/null)
      python3 - "$build" "$store" "$round" <<PY >> "$out"
import json,sys
b,s,r=sys.argv[1:]
e=json.loads('''$e''')['enqueue']; d=json.loads('''$d''')['drain']; l=json.loads('''$l''')['latency']
print(json.dumps({"build":b,"store":s,"round":int(r),"single":e['single']['jobsPerSecond'],"bulk":e['bulk']['jobsPerSecond'],"drain":d['jobsPerSecond'],"drain_wall":d['jobs']/d['wallSeconds'],"lat_p50":l['ms']['p50']}))
PY
      echo "$round $store $build done" >&2
    done
  done
done
