#!/usr/bin/env bash
# What heapledger adds to the start-up of short real programs (issue 36, the figures in
# docs/benchmarks-startup.md): ecj, a Groovy and a Clojure script, the Scala compiler and H2, each
# run plain, offline-rewritten, under the agent with an empty and then a filled transform cache,
# and under Google's allocation instrumenter, in rounds (bench/startup/main.go). Installs the
# Debian packages, builds bin/heapledger if missing, prints a Markdown table.
#
#   bench/startup/run.sh                        every program, 3 rounds
#   bench/startup/run.sh -rounds 1 -programs ecj,groovy    any flag of main.go
set -euo pipefail
cd "$(dirname "$0")/../.."
bash scripts/install-deps.sh
if [ ! -x bin/heapledger ]; then
  make build
fi
exec go run ./bench/startup "$@"
