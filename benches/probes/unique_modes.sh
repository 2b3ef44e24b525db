#!/usr/bin/env bash
# One-at-a-time enqueue with a unique key in every mode against a plain one-at-a-time enqueue (issue
# 47: at least 70 % of plain), every store, the variants taking turns round by round. Each variant
# enqueues 5,000 jobs from one producer: `plain` without keys; each mode once with a key per job (every
# enqueue creates a job: the decision finds no holder) and once on 100 keys (after the first hundred
# every enqueue meets a pending holder: coalesce drops, replace, keep-last and debounce rewrite it, throttle drops
# by its window). Then the hot key: 8 producers debouncing one key (1 s window) while a worker process
# runs beside, answered by one job per quiet period. Needs the local servers.
# usage: [STORES='redis …'] [MODES='keep-last …' (and no hot key)] benches/probes/unique_modes.sh BIN ROUNDS OUT
# each line of OUT: round store variant <jobs/s> <distinct jobs answered>
set -u
BIN=$1 ROUNDS=$2 OUT=$3
: > "$OUT"
psql -h 127.0.0.1 -U postgres -d test -qc "create database bench_unique" 2>/dev/null
mysql -uroot -h127.0.0.1 -e "create database if not exists bench_unique"
url() {
  case $1 in
    sqlite) echo "sqlite:///tmp/bench-unique.db";;
    postgres) echo "postgres://postgres@127.0.0.1/bench_unique";;
    mysql) echo "mysql://root@127.0.0.1/bench_unique";;
    redis) echo "redis://127.0.0.1:6379/0?prefix=benchunique";;
  esac
}
one() { # store variant args…
  local store=$1 variant=$2; shift 2
  $BIN bench enqueue --bulk-jobs 0 --url "$(url "$store")" -o json "$@" 2>/dev/null |
    python3 -c "import json,sys; s=json.load(sys.stdin)['enqueue']['single']; print(round(s['jobsPerSecond']), (s.get('unique') or {}).get('jobs', s['jobs']))" |
    sed "s/^/$r $store $variant /" | tee -a "$OUT"
}
for r in $(seq 1 "$ROUNDS"); do
  for store in ${STORES:-sqlite postgres mysql redis}; do
    one "$store" plain --single-jobs 5000
    for mode in ${MODES:-coalesce replace keep-last debounce throttle}; do
      window=; [ $mode = debounce ] && window="--unique-window 1h"; [ $mode = throttle ] && window="--unique-window 1h"
      # shellcheck disable=SC2086
      one "$store" "$mode-fresh" --single-jobs 5000 --unique-mode $mode $window
      # shellcheck disable=SC2086
      one "$store" "$mode-100keys" --single-jobs 5000 --unique-mode $mode $window --unique-keys 100
    done
    [ -n "${MODES:-}" ] && continue
    one "$store" debounce-hot --single-jobs 4000 --producers 8 --unique-mode debounce --unique-window 1s \
      --unique-keys 1 --processes 1
  done
done
