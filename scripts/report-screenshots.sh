#!/usr/bin/env bash
# Regenerates the screenshots of the HTML report in docs/images (linked from README.md and
# docs/profiles.md): the demo's report (`heapledger demo`), whole and its flame graphs with a
# search for the library method the demo charges to demo.reports, and the over-time section of
# the report of the three series snapshots in fixtures/snapshots.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
make build
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
bin/heapledger demo --dir "$work/demo" >/dev/null
mkdir -p docs/images
go run ./tools/screenshot -search TextTable.line "$work/demo/report.html" \
  docs/images/report-demo.png docs/images/report-demo-flames.png='#flames'
bin/heapledger html -o "$work/series.html" fixtures/snapshots/series-*.snapshot >/dev/null
go run ./tools/screenshot "$work/series.html" docs/images/report-over-time.png='#over-time'
