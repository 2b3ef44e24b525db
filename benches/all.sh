#!/usr/bin/env bash
# Every figure of BENCHMARKS.md in one run: `jobq bench` on each store this machine runs (SQLite at
# synchronous NORMAL and FULL, PostgreSQL, MariaDB, Redis), the drain with one and two worker
# processes and with exec handlers, the command-line benchmark (`cargo bench --bench cli`) and the
# timings behind the integration tests (`cargo bench --bench timings`).
# Each workload's run gets a store of its own (a fresh SQLite file, PostgreSQL schema, MariaDB database or Redis
# key prefix), removed afterwards. Prints one markdown table per store: medians of RUNS runs, the runs
# in brackets.
#
#   benches/all.sh                 # RUNS=3
#   RUNS=5 STORES="sqlite postgres" benches/all.sh
#   PRIORITY=1 benches/all.sh      # see below
#
# The machine should be quiet. Where it cannot be (a shared machine), PRIORITY=1 runs jobq and the
# database servers at real-time priority (chrt -f 10, as root) for the duration, so that whatever else
# runs waits for them; BENCHMARKS.md says when figures were taken that way. Servers are put back to
# normal priority at the end.
set -euo pipefail

RUNS=${RUNS:-3}
STORES=${STORES:-"sqlite sqlite-full postgres mysql redis"}
PG=${JOBQ_BENCH_POSTGRES_URL:-postgres://postgres@127.0.0.1:5432/test}
MY=${JOBQ_BENCH_MYSQL_URL:-mysql://root@127.0.0.1:3306}
RD=${JOBQ_BENCH_REDIS_URL:-redis://127.0.0.1:6379/0}
OUT=${OUT:-$(mktemp -d -t jobq-bench-XXXXXX)}
mkdir -p "$OUT"

cd "$(dirname "$0")/.."
cargo build --release --quiet
JOBQ=$PWD/target/release/jobq

run=()
if [[ ${PRIORITY:-0} == 1 ]]; then
    run=(chrt -f 10)
    servers=$(pgrep -d ' ' -x 'postgres|mariadbd|redis-server' || true)
    for pid in $servers; do chrt -a -f -p 10 "$pid" >/dev/null; done
    trap 'for pid in $servers; do chrt -a -o -p 0 "$pid" >/dev/null 2>&1 || true; done' EXIT
fi

# url STORE RUN: a fresh store for one run, created where the server needs it.
url() {
    local tag="jobq_bench_$2_$RANDOM"
    case $1 in
        sqlite) echo "sqlite://$OUT/$tag.db" ;;
        sqlite-full) echo "sqlite://$OUT/$tag.db?synchronous=full" ;;
        postgres) echo "$PG?schema=$tag" ;;
        mysql) mariadb -uroot -h 127.0.0.1 -e "CREATE DATABASE $tag" && echo "$MY/$tag" ;;
        redis) echo "$RD?prefix=$tag:" ;;
    esac
}

# drop STORE URL: removes what `url` made.
drop() {
    case $1 in
        postgres) psql -q "${2%%\?*}" -c "DROP SCHEMA IF EXISTS ${2##*schema=} CASCADE" 2>/dev/null ;;
        mysql) mariadb -uroot -h 127.0.0.1 -e "DROP DATABASE IF EXISTS ${2##*/}" ;;
        redis) redis-cli -u "${2%%\?*}" --scan --pattern "${2##*prefix=}*" | xargs -r redis-cli -u "${2%%\?*}" DEL >/dev/null ;;
        *) rm -f "${2#sqlite://}"* ;;
    esac
}

# bench STORE NAME ARGS…: RUNS runs of `jobq bench ARGS -o json`, each on a fresh store.
bench() {
    local store=$1 name=$2
    shift 2
    for r in $(seq 1 "$RUNS"); do
        local u
        u=$(url "$store" "$r")
        "${run[@]}" "$JOBQ" bench "$@" --url "$u" -o json >"$OUT/$store.$name.$r.json" 2>"$OUT/$store.$name.$r.log" ||
            echo "jobq bench $* failed on $store (run $r): see $OUT/$store.$name.$r.log" >&2
        drop "$store" "$u"
    done
}

for store in $STORES; do
    echo "== $store" >&2
    # Each workload on a store of its own: what one leaves behind (dead rows where the server does not
    # vacuum on its own, a bigger file) must not slow the next.
    for workload in enqueue drain steady latency; do bench "$store" "$workload" "$workload"; done
    bench "$store" p1 drain --processes 1
    bench "$store" p2 drain --processes 2
    [[ $store == sqlite* ]] && bench "$store" exec drain --processes 1 --jobs 10000 --concurrency 64 --exec /bin/true
done
python3 benches/summarize.py "$OUT" $STORES

if [[ " $STORES " == *" sqlite "* ]]; then
    echo "== the command line (SQLite)" >&2
    JOBQ_BENCH_RUNS=$RUNS "${run[@]}" cargo bench --quiet --bench cli
fi
# The times the integration tests check only the outcome of (failing on an unreachable server, wake-ups,
# back-off), on every store whose test server runs.
echo "== timings behind the tests" >&2
JOBQ_BENCH_RUNS=$RUNS "${run[@]}" cargo bench --quiet --bench timings
echo "raw JSON reports: $OUT" >&2
