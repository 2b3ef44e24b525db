#!/usr/bin/env bash
# An exec handler that fails once: exit 75 (EX_TEMPFAIL) asks for a retry with back-off; the second
# attempt succeeds.
set -euo pipefail
cat >/dev/null
if [ "$JOBQ_ATTEMPT" -lt 2 ]; then
  echo "smtp: connection refused by mail.example.com (attempt $JOBQ_ATTEMPT of $JOBQ_MAX_ATTEMPTS)" >&2
  exit 75
fi
echo "sent to ana@example.com"
