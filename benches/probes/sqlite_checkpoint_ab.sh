#!/usr/bin/env bash
# One job at a time on SQLite (20,000 awaited Client::enqueue calls), two builds taking turns at
# synchronous NORMAL and FULL, beside the peers' limits script (Python's sqlite3: BEGIN, one INSERT,
# COMMIT into a bare table; the issue's "store itself" column), one round after another.
#   benches/probes/sqlite_checkpoint_ab.sh OLD NEW [ROUNDS]     (run from a copy of ../shared/peers: needs limits/)
set -uo pipefail
A=$1 B=$2 R=${3:-3}
D=$(mktemp -d)
rate() {
  rm -f "$D"/s.db*
  $1 --url "sqlite://$D/s.db$2" bench enqueue --single-jobs 20000 --bulk-jobs 0 -o json 2>/dev/null |
    python3 -c "import json,sys; e=json.load(sys.stdin)['enqueue']['single']; print(round(e['jobsPerSecond']), 'p50', round(e['callMs']['p50']*1000), 'p99', round(e['callMs']['p99']*1000))"
}
mkdir -p limits/data
for r in $(seq "$R"); do
  limits=$(python3 limits/sqlite_inserts.py 2>/dev/null | python3 -c "import json,sys; print(' '.join(str(round(json.loads(x)['rows_per_s'])) for x in sys.stdin))")
  echo "round $r old-normal $(rate "$A" '') new-normal $(rate "$B" '') old-full $(rate "$A" '?synchronous=full') new-full $(rate "$B" '?synchronous=full') limits(normal-1row normal-bulk full-1row full-bulk) $limits"
done
rm -rf "$D"
