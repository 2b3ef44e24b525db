#!/usr/bin/env bash
# jobq on its embedded SQLite store, end to end: enqueue example jobs, run a worker over them with real
# handlers (exec programs and builtins) — one job retries and then succeeds, one fails for good and is
# parked as a dead letter — and show what happened.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# Only what the demo needs: jobq with the SQLite store, without the other stores' drivers, the http
# handler, `jobq serve` or the broker clients, and without debug info (the `demo` profile).
# `cargo build` with the default features builds the whole jobq.
cargo build --quiet --manifest-path "$here/../../Cargo.toml" --profile demo -p jobq-cli --no-default-features --features sqlite
# (Where cargo put it: its target folder, or the one CARGO_TARGET_DIR names.)
bin="${CARGO_TARGET_DIR:-$here/../../target}/demo/jobq"
jobq() { "$bin" --config "$here/jobq.toml" "$@"; }
rm -f "$here"/demo.db "$here"/demo.db-wal "$here"/demo.db-shm

echo "== enqueue five jobs"
ids=(
  "$(jobq enqueue thumbnail.make '{"image":"cat.jpg","sizes":[64,256]}')"
  "$(jobq enqueue mail.send '{"to":"ana@example.com","subject":"Welcome"}' --meta tenantId=7)"
  "$(jobq enqueue invoice.charge '{"invoice":42,"amount_cents":1999}' --queue default)"
  "$(jobq enqueue cache.warm '{"keys":["home","pricing"]}')"
  "$(jobq enqueue report.build '{"ms":300}' --priority -1)"
)
jobq list

echo
echo "== run a worker until every job has finished"
"$bin" --config "$here/jobq.toml" worker --concurrency 4 &
worker=$!
trap 'kill $worker 2>/dev/null || true' EXIT
for id in "${ids[@]}"; do
  jobq wait -q "$id" >/dev/null || echo "job $id ended with exit code $? (4 = dead)"
done
kill -TERM "$worker"
wait "$worker"
trap - EXIT

echo
echo "== what happened"
jobq list
echo
echo "== the dead letter (replay it with: jobq --config $here/jobq.toml replay-dead --id ${ids[2]})"
jobq show "${ids[2]}"
echo
jobq stats
