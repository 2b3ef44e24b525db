#!/usr/bin/env bash
# Pairs two jobq builds on `jobq cancel --queue q --yes` over N jobs, taking turns: A B A B ...
# usage: benches/probes/cancel_ab.sh OLD_JOBQ NEW_JOBQ sqlite|postgres|mysql|redis [PAIRS] [N]
set -euo pipefail
OLD=$1 NEW=$2 STORE=$3 PAIRS=${4:-5} N=${5:-20000}
python3 -c "
import json,sys
for i in range($N): print(json.dumps({'v':1,'jobType':'noop','payload':{'i':i}}))" > /tmp/cancel-jobs.ndjson
url() {
  case $STORE in
    sqlite) echo "sqlite:///tmp/cancel-$1.db" ;;
    postgres) echo "postgres://postgres@127.0.0.1:5432/test?schema=cancel_$1" ;;
    mysql) echo "mysql://root@127.0.0.1:3306/cancel_$1" ;;
    redis) echo "redis://127.0.0.1:6379/0?prefix=cancel$1:" ;;
  esac
}
clean() {
  case $STORE in
    sqlite) rm -f /tmp/cancel-$1.db* ;;
    postgres) psql -q -h 127.0.0.1 -U postgres test -c "DROP SCHEMA IF EXISTS cancel_$1 CASCADE" >/dev/null 2>&1 ;;
    mysql) mariadb -h 127.0.0.1 -u root -e "DROP DATABASE IF EXISTS cancel_$1" ;;
    redis) redis-cli --scan --pattern "cancel$1:*" | xargs -r redis-cli del >/dev/null ;;
  esac
}
one() { # bin tag
  local u; u=$(url $2); clean $2
  [ $STORE = mysql ] && mariadb -h 127.0.0.1 -u root -e "CREATE DATABASE cancel_$2"
  $1 --url "$u" migrate >/dev/null
  $1 --url "$u" enqueue --file /tmp/cancel-jobs.ndjson --queue q >/dev/null
  local t0 t1; t0=$(date +%s%N)
  $1 --url "$u" cancel --queue q --yes >/dev/null
  t1=$(date +%s%N)
  clean $2
  echo $(( (t1-t0)/1000000 ))
}
for i in $(seq $PAIRS); do
  a=$(one $OLD old); b=$(one $NEW new)
  echo "$STORE old_ms=$a new_ms=$b ratio=$(python3 -c "print(round($b/$a,3))")"
done
