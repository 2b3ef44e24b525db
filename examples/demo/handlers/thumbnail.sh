#!/usr/bin/env bash
# An exec handler: reads the job envelope on stdin, reports progress and a result on stdout.
set -euo pipefail
envelope=$(cat)
echo "::progress 10 reading $(echo "$envelope" | grep -o '"image":"[^"]*"')"
for size in 64 256; do
  echo "::progress $((size / 3)) resizing to ${size}px"
done
echo '::result {"thumbnails":["cat-64.jpg","cat-256.jpg"]}'
