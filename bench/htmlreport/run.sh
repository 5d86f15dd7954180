#!/usr/bin/env bash
# How long the HTML report of a 10,000-site snapshot takes to draw in headless Chromium (the
# figure docs/profiles.md quotes): builds bin/heapledger if missing, then generates the
# snapshot, writes its report and loads it five times (bench/htmlreport/main.go).
#
#   bench/htmlreport/run.sh                    10,000 sites, 5 loads
#   bench/htmlreport/run.sh -sites 50000 -runs 3 -keep /tmp/big    any flag of main.go
set -euo pipefail
cd "$(dirname "$0")/../.."
bash scripts/install-deps.sh
if [ ! -x bin/heapledger ]; then
  make build
fi
exec go run ./bench/htmlreport "$@"
