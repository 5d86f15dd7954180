#!/usr/bin/env bash
# Heap-dump analysis under a memory limit: `heap analyze` once without a budget and once under
# each cgroup memory limit, in one run, on the same dump; checks that every report is identical
# to the unbounded one and writes the rows into the "Memory budget" section of
# docs/heapdump-benchmarks.md (run.sh carries that section over when it rewrites the doc).
#
#   bench/heapdump/budget.sh [SIZE] [LIMIT...]     (default: large 512M 256M)
#
# Each limited run is in a cgroup of its own with that memory limit (the page cache it fills
# counts, as in a container), made with systemd-run --scope where systemd runs, else as a
# directory of cgroup version 2, else of version 1 under the shell's own memory cgroup; the
# analysis takes its default budget, which it derives from the limit. RLIMIT_AS (prlimit) is not
# used: it counts mappings, not memory. Each run is stopped after TIMEOUT seconds (default 3600).
# Environment: BENCH_DIR (as run.sh: the dumps; default /tmp/heapledger-heapdump-bench),
# NICE (default 10).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BENCH_DIR=${BENCH_DIR:-/tmp/heapledger-heapdump-bench}
TIMEOUT=${TIMEOUT:-3600}
NICE=${NICE:-10}
SIZE=${1:-large}
shift || true
LIMITS=("$@")
[ ${#LIMITS[@]} -eq 0 ] && LIMITS=(512M 256M)

die() { echo "budget bench: $*" >&2; exit 1; }
dump="$BENCH_DIR/$SIZE.hprof"
[ -f "$dump" ] || die "$dump missing: bench/heapdump/run.sh $SIZE generates it"
[ -x /usr/bin/time ] || die "GNU time (/usr/bin/time) is missing: run scripts/install-deps.sh"
(cd "$ROOT" && make go >/dev/null)
HL="$ROOT/bin/heapledger"
OUT=$(mktemp -d /tmp/heapledger-budget-bench.XXXXXX)
trap 'rm -rf "$OUT"' EXIT

# cgroup_make NAME BYTES — makes a cgroup limited to BYTES: sets CG to "systemd" (run under
# systemd-run --scope) or to the cgroup's directory, and CG_VERSION.
cgroup_make() {
  local name=$1 bytes=$2 v1
  if systemd-run --scope -q -p MemoryMax="$bytes" true 2>/dev/null; then
    CG=systemd CG_VERSION=systemd
    return
  fi
  if grep -qw memory /sys/fs/cgroup/cgroup.controllers 2>/dev/null; then
    CG="/sys/fs/cgroup$(sed -n 's/^0:://p' /proc/self/cgroup)/$name"
    if mkdir "$CG" 2>/dev/null && echo "$bytes" >"$CG/memory.max"; then
      CG_VERSION="cgroup v2 directory"
      return
    fi
  fi
  v1=$(awk -F: '$2 ~ /(^|,)memory(,|$)/ { print $3; exit }' /proc/self/cgroup)
  CG="/sys/fs/cgroup/memory${v1%/}/$name"
  if [ -n "$v1" ] && mkdir "$CG" 2>/dev/null && echo "$bytes" >"$CG/memory.limit_in_bytes"; then
    CG_VERSION="cgroup v1 memory directory"
    return
  fi
  die "no way to run under a memory limit here (systemd-run, or a writable cgroup v2 or v1 memory hierarchy)"
}

# cgroup_peak DIR — the cgroup's peak memory in MB (page cache included), or "–".
cgroup_peak() {
  local f
  for f in "$1/memory.peak" "$1/memory.max_usage_in_bytes"; do
    [ -r "$f" ] && { echo $(($(cat "$f") / 1048576)); return; }
  done
  echo "–"
}

# run NAME LIMIT — one analysis, under LIMIT (or none); sets WALL, CPU, RSS_MB, PEAK, STATUS,
# BUDGET and the report in $OUT/NAME.json.
run() {
  local name=$1 limit=$2
  local tf="$OUT/time.$name" rc=0 t0 t1 cg="" how=()
  if [ "$limit" != none ]; then
    cgroup_make "heapledger-budget-$name-$$" "$limit"
    cg=$CG
    if [ "$cg" = systemd ]; then
      how=(systemd-run --scope -q -p MemoryMax="$limit")
    else
      how=(sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$cg")
    fi
  fi
  t0=$EPOCHREALTIME
  "${how[@]}" nice -n "$NICE" /usr/bin/time -f "%e %U %S %M" -o "$tf" timeout "$TIMEOUT" \
    "$HL" heap analyze --json --timings "$dump" >"$OUT/$name.json" 2>"$OUT/err.$name" || rc=$?
  t1=$EPOCHREALTIME
  read -r _ U S KB < <(tail -1 "$tf")
  WALL=$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.1f", b-a}')
  CPU=$(awk -v u="$U" -v s="$S" 'BEGIN{printf "%.1f", u+s}')
  RSS_MB=$((KB / 1024))
  PEAK="–"
  if [ -n "$cg" ] && [ "$cg" != systemd ]; then
    PEAK=$(cgroup_peak "$cg")
    rmdir "$cg" 2>/dev/null || true
  fi
  BUDGET=$(sed -n 's/^memory budget: \([0-9]* MB\).*/\1/p' "$OUT/err.$name")
  if [ $rc -eq 124 ]; then STATUS="did not finish in $TIMEOUT s"
  elif [ $rc -ne 0 ]; then STATUS="failed (exit $rc): $(grep -v '^timing:' "$OUT/err.$name" | head -c 300 | tr '\n' ' ')"
  else STATUS=ok; fi
  PHASES=$(sed -n 's/^timing: \(.*[^ ]\) \+\([0-9.]\+\) s wall \+\([0-9.]\+\) s CPU.*$/\1: \2/p' "$OUT/err.$name" | paste -sd ';' | sed 's/;/; /g')
}

mb=$(($(stat -L -c %s "$dump") / 1048576))
STARTED=$(date -u '+%Y-%m-%d %H:%M')
LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
ROWS=() PHASE_ROWS=()
cat "$dump" >/dev/null # each run starts with the file in the page cache, as far as its limit lets it keep it
run unbounded none
BASE_WALL=$WALL
ROWS+=("| $SIZE | $mb MB | none | – | $WALL | $CPU | $RSS_MB | – | 1.0 | – | $STATUS |")
PHASE_ROWS+=("| none | $PHASES |")
for limit in "${LIMITS[@]}"; do
  cat "$dump" >/dev/null
  run "$limit" "$limit"
  same="–"
  if [ "$STATUS" = ok ]; then
    if cmp -s "$OUT/unbounded.json" "$OUT/$limit.json"; then same=identical; else same=DIFFERENT; fi
  fi
  ratio=$(awk -v a="$WALL" -v b="$BASE_WALL" 'BEGIN{ if (b > 0) printf "%.1f", a/b; else printf "n/a" }')
  ROWS+=("| $SIZE | $mb MB | cgroup $limit | ${BUDGET:-–} | $WALL | $CPU | $RSS_MB | $PEAK | $ratio | $same | $STATUS |")
  PHASE_ROWS+=("| $limit | $PHASES |")
  printf '%s\n' "${ROWS[-1]}" >&2
done

DOC="$ROOT/docs/heapdump-benchmarks.md"
SECTION="$OUT/section.md"
# Whether the ratios are a quiet machine's: a load above the core count means runs waited for a
# core, which weighs on the short unbounded run and the long limited ones alike.
CORES=$(nproc)
LOAD_NOTE="quiet: the load before was below the machine's $CORES cores"
if awk -v l="${LOAD_BEFORE%% *}" -v c="$CORES" 'BEGIN { exit !(l > c) }'; then
  LOAD_NOTE="other work shared the machine's $CORES cores: wall times include waiting for a core"
fi
{
  echo "## Memory budget"
  echo
  echo "Regenerate with \`bench/heapdump/budget.sh $SIZE ${LIMITS[*]}\`. Measured $STARTED–$(date -u '+%H:%M') UTC, load average before: $LOAD_BEFORE, after: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "($LOAD_NOTE). \`heap analyze\` once without a limit, then"
  echo "once in a cgroup of each memory limit (${CG_VERSION/systemd/systemd-run --scope}; the page cache the run fills counts against it),"
  echo "taking its default budget, 90% of the limit; under \`nice -n $NICE\`, the file in the page cache before each run as far as the"
  echo "limit lets it stay. Peak RSS from GNU time; cgroup peak: the cgroup's own high-water mark, page cache included."
  echo "Same report: the JSON report compared byte for byte with the unbounded run's."
  echo
  echo "| dump | file | limit | budget | wall s | CPU s | peak RSS MB | cgroup peak MB | × unbounded wall | same report | status |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|"
  printf '%s\n' "${ROWS[@]}"
  echo
  echo "Phases (wall seconds, from \`--timings\`):"
  echo
  echo "| limit | phases |"
  echo "|---|---|"
  printf '%s\n' "${PHASE_ROWS[@]}"
} >"$SECTION"
# The section replaces the doc's own, up to the next section; or goes before the measurements
# behind the code's choices.
awk -v sec="$SECTION" '
  /^## Memory budget$/ { skip = 1; while ((getline l < sec) > 0) print l; print ""; done = 1; next }
  skip && /^## / { skip = 0 }
  !done && /^## Measurements behind choices in the code$/ { while ((getline l < sec) > 0) print l; print ""; done = 1 }
  !skip { print }
  END { if (!done) { print ""; while ((getline l < sec) > 0) print l } }
' "$DOC" >"$OUT/doc.md"
cp "$OUT/doc.md" "$DOC"
cat "$SECTION"
