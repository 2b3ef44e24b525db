#!/usr/bin/env bash
# A/B of two jobq builds on workloads without dependencies (issue 46: the ack path pays nothing for
# flows it does not have): drain (20,000 jobs, in process) and one-at-a-time enqueue (5,000 jobs),
# every store, the builds taking turns. Each build gets its own database, file or key prefix, since
# a newer build migrates its store past what the older one accepts. Needs the local servers.
# usage: [STORES='redis …'] benches/probes/ab_no_dependencies.sh OLD_BIN NEW_BIN ROUNDS OUT
# each line of OUT: round store build drain <jobs/s> <wall s> enqueue1 <jobs/s>
set -u
OLD=$1 NEW=$2 ROUNDS=$3 OUT=$4
: > "$OUT"
psql -h 127.0.0.1 -U postgres -d test -qc "create database ab_old" 2>/dev/null
psql -h 127.0.0.1 -U postgres -d test -qc "create database ab_new" 2>/dev/null
mysql -uroot -h127.0.0.1 -e "create database if not exists ab_old; create database if not exists ab_new"
url() { # build store
  case $2 in
    sqlite) echo "sqlite:///tmp/ab-$1.db";;
    postgres) echo "postgres://postgres@127.0.0.1/ab_$1";;
    mysql) echo "mysql://root@127.0.0.1/ab_$1";;
    redis) echo "redis://127.0.0.1:6379/0?prefix=ab$1";;
  esac
}
for r in $(seq 1 "$ROUNDS"); do
  for store in ${STORES:-sqlite postgres mysql redis}; do
    for b in old new; do
      bin=$OLD; [ $b = new ] && bin=$NEW
      u=$(url $b $store)
      d=$($bin bench drain --jobs 20000 --url "$u" -o json 2>/dev/null | python3 -c "import json,sys; d=json.load(sys.stdin)['drain']; print(round(d['jobsPerSecond']), round(d['wallSeconds'],3))")
      e=$($bin bench enqueue --single-jobs 5000 --bulk-jobs 0 --url "$u" -o json 2>/dev/null | python3 -c "import json,sys; d=json.load(sys.stdin)['enqueue']['single']; print(round(d['jobsPerSecond']))")
      echo "$r $store $b drain $d enqueue1 $e" | tee -a "$OUT"
    done
  done
done
