#!/usr/bin/env bash
# Issue 46: flow_drain.sh for two builds taking turns, one store, each build on its own database,
# file or key prefix (a newer build migrates its store past what an older one accepts).
# usage: benches/probes/flow_drain_ab.sh OLD_BIN NEW_BIN STORE ROUNDS   (prints: round build kind seconds)
OLD=$1 NEW=$2 STORE=$3 ROUNDS=$4
url() { case $STORE in
  sqlite) echo "sqlite:///tmp/fd-$1.db";;
  postgres) echo "postgres://postgres@127.0.0.1/fd_$1";;
  mysql) echo "mysql://root@127.0.0.1/fd_$1";;
  redis) echo "redis://127.0.0.1:6379/0?prefix=fd$1";;
esac; }
psql -h 127.0.0.1 -U postgres -qc "create database fd_old" 2>/dev/null
psql -h 127.0.0.1 -U postgres -qc "create database fd_new" 2>/dev/null
mysql -uroot -h127.0.0.1 -e "create database if not exists fd_old; create database if not exists fd_new"
for r in $(seq 1 $ROUNDS); do
  for b in old new; do
    bin=$OLD; [ $b = new ] && bin=$NEW
    "$(dirname "$0")/flow_drain.sh" $bin "$(url $b)" 10000 1 | sed "s/^1 /$r $b /"
  done
done
