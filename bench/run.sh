#!/usr/bin/env bash
# The one command behind docs/benchmarks.md: installs the Debian packages the workloads need,
# builds bin/heapledger if it is missing, then runs the real-workload suite (bench/suite), which
# generates inputs into bench/out/, measures every available mode against plain and rewrites the doc.
#
#   bench/run.sh                 full run: 1 warm-up + 3 measured rounds, writes docs/benchmarks.md
#   bench/run.sh --quick         correctness only: two small workloads, one round, no doc
#   bench/run.sh --runs 5 --note "quiet machine"   any flag of `go run ./bench/suite -h`
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-deps.sh
if [ ! -x bin/heapledger ]; then
  make build
fi

# The suite records this in the doc as the command that regenerates it.
export HEAPLEDGER_BENCH_COMMAND="bench/run.sh${*:+ $(printf '%q ' "$@")}"
HEAPLEDGER_BENCH_COMMAND="${HEAPLEDGER_BENCH_COMMAND% }"
mkdir -p bench/out
go build -o bench/out/suite ./bench/suite
exec bench/out/suite "$@"
