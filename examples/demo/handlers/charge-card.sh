#!/usr/bin/env bash
# An exec handler that fails for good: exit 65 (EX_DATAERR) makes the job dead at once, a dead letter
# for an operator to look at and replay.
set -euo pipefail
cat >/dev/null
echo "card declined: insufficient funds (invoice 42)" >&2
exit 65
