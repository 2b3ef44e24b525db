#!/usr/bin/env bash
# MariaDB/MySQL: what an arrivals table like SQLite's (`store/sqlite/arrivals.rs`) would let one insert
# cost, before building it: mariadb-slap, one client, autocommit, one INSERT per transaction, taking
# turns: a bare table (auto-increment key, JSON), jobq_jobs as migrated, and a table with the
# enqueue's columns keyed by id and nothing else.
#   benches/probes/mysql_arrivals_potential.sh JOBQ [ROUNDS] [N]
set -uo pipefail
J=$1 R=${2:-5} N=${3:-3000}
M="mariadb -h 127.0.0.1 -uroot"
$M -e "DROP DATABASE IF EXISTS arr_pot; CREATE DATABASE arr_pot"
$J --url "mysql://root@127.0.0.1:3306/arr_pot" migrate >/dev/null
$M arr_pot -e "CREATE TABLE limit_jobs (id BIGINT AUTO_INCREMENT PRIMARY KEY, payload JSON NOT NULL) ENGINE=InnoDB;
  CREATE TABLE arrivals (id VARCHAR(128) NOT NULL PRIMARY KEY, queue VARCHAR(64) NOT NULL,
  job_type VARCHAR(128) NOT NULL, payload LONGTEXT NOT NULL, meta LONGTEXT NOT NULL, priority INT NOT NULL,
  max_attempts INT NOT NULL, run_at BIGINT NOT NULL, unique_key VARCHAR(255), timeout_ms BIGINT,
  created_at BIGINT NOT NULL) ENGINE=InnoDB"
cols="(id, queue, job_type, payload, meta, priority, max_attempts, run_at, unique_key, timeout_ms, created_at)"
row="(UUID(), 'default', 'noop', '{\"i\": 1}', '{}', 0, 5, 1764600000000, NULL, NULL, 1764600000000)"
declare -A Q=(
  [bare]="INSERT INTO limit_jobs (payload) VALUES ('{\"i\": 1}')"
  [jobs]="INSERT INTO jobq_jobs $cols VALUES $row"
  [arrivals]="INSERT INTO arrivals $cols VALUES $row"
)
for r in $(seq "$R"); do
  line="round $r"
  for s in bare jobs arrivals; do
    t0=$(date +%s.%N)
    mariadb-slap -h 127.0.0.1 -uroot --create-schema=arr_pot --no-drop --concurrency=1 \
      --number-of-queries="$N" --query="${Q[$s]}" >/dev/null 2>&1
    t1=$(date +%s.%N)
    line="$line $s $(python3 -c "print(round($N/($t1-$t0)))")"
  done
  echo "$line"
done
$M arr_pot -N -e "SELECT (SELECT COUNT(*) FROM limit_jobs), (SELECT COUNT(*) FROM jobq_jobs), (SELECT COUNT(*) FROM arrivals)" | sed "s/^/rows written (bare, jobs, arrivals): /"
$M -e "DROP DATABASE arr_pot"
