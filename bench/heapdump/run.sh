#!/usr/bin/env bash
# Heap-dump benchmark: heapledger against VisualVM's heap library and against reading the file
# once, on the same dumps in the same run. Prints a table with ratios and writes
# docs/heapdump-benchmarks.md.
#
#   bench/heapdump/run.sh [small] [medium] [large]     (default: all three)
#
#   small  ≈ 1 M objects,  ~0.05 GB     medium ≈ 9 M objects, ~0.4 GB     large ≈ 45 M objects, ~2 GB
#
# Environment: BENCH_DIR (dumps and scratch; default /tmp/heapledger-heapdump-bench),
# VISUALVM_TIMEOUT (seconds per VisualVM run, default 1800; VISUALVM_TIMEOUT_small etc. per size), VISUALVM_XMX (default 8g),
# SKIP_VISUALVM=1 to leave the peer out (VISUALVM_SIZES="large" to run it on those sizes only), RUNS (rounds of cat and histogram with the file in the page cache,
# alternating, median reported; default 11 for small, 7 for medium, 5 for large), ANALYZE_RUNS (runs of the
# full analysis per condition, median wall and CPU, the range of wall times and the highest peak RSS
# reported; the same defaults), COLD=0 to leave out the cold-cache rows (the
# dump evicted from the page cache before each contender, so that it is read from disk), REST=0 to leave out
# the at-rest rows (evicted, then PAUSE seconds, default 3, before each contender; they need the cold rows).
# Needs: go, javac/java, GNU time (/usr/bin/time), the Debian package visualvm
# (scripts/install-deps.sh installs them).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
HERE="$ROOT/bench/heapdump"
BENCH_DIR=${BENCH_DIR:-/tmp/heapledger-heapdump-bench}
VISUALVM_TIMEOUT=${VISUALVM_TIMEOUT:-1800}
VISUALVM_XMX=${VISUALVM_XMX:-8g}
VISUALVM_JAR=/usr/share/visualvm/visualvm/modules/org-graalvm-visualvm-lib-jfluid-heap.jar
SIZES=("$@")
[ ${#SIZES[@]} -eq 0 ] && SIZES=(small medium large)

die() { echo "heapdump bench: $*" >&2; exit 1; }
[ -x /usr/bin/time ] || die "GNU time (/usr/bin/time) is missing: run scripts/install-deps.sh"
command -v javac >/dev/null || die "javac is missing: run scripts/install-deps.sh"

mkdir -p "$BENCH_DIR/classes"
(cd "$ROOT" && make go >/dev/null) # the binary as `make build` makes it
HL="$ROOT/bin/heapledger"
CP="$BENCH_DIR/classes"
javac -d "$CP" "$HERE/Generator.java"
HAVE_VVM=0
if [ "${SKIP_VISUALVM:-0}" != 1 ] && [ -f "$VISUALVM_JAR" ]; then
  javac -cp "$VISUALVM_JAR" -d "$CP" "$HERE/VisualVMRetained.java"
  HAVE_VVM=1
elif [ "${SKIP_VISUALVM:-0}" != 1 ]; then
  echo "heapdump bench: $VISUALVM_JAR missing (Debian package visualvm); the peer is left out" >&2
fi
# With SKIP_VISUALVM=1, or for the sizes VISUALVM_SIZES leaves out, the peer's rows of the last run
# that had them are carried over from the doc, marked as such with the date of that run, rather
# than lost: a VisualVM run of the three dumps takes the best part of an hour.
DOC="$ROOT/docs/heapdump-benchmarks.md"
VISUALVM_SIZES=$(tr ',' ' ' <<<"${VISUALVM_SIZES:-}")
for s in $VISUALVM_SIZES; do
  case $s in small | medium | large) ;; *) die "VISUALVM_SIZES: unknown size $s (small, medium, large)" ;; esac
done
PREV_VVM="" PREV_DATE=""
if { [ "${SKIP_VISUALVM:-0}" = 1 ] || [ -n "$VISUALVM_SIZES" ]; } && [ -f "$DOC" ]; then
  PREV_VVM=$(grep -E '^\| [a-z]+ \| [^|]* \| VisualVM ' "$DOC" || true)
  # The date of the doc's own run, for rows that were measured in it (no "not rerun" mark).
  PREV_DATE=$(sed -n 's/^Regenerate with .* Measured \(.*\) on:$/\1/p' "$DOC" | head -1)
fi
# vvm_runs SIZE — whether the peer runs on SIZE in this run.
vvm_runs() {
  [ $HAVE_VVM = 1 ] || return 1
  [ -z "$VISUALVM_SIZES" ] && return 0
  case " $VISUALVM_SIZES " in *" $1 "*) return 0 ;; esac
  return 1
}
VVM_RAN="" VVM_CARRIED=""
HAVE_ANALYZE=0
"$HL" heap analyze --help >/dev/null 2>&1 && HAVE_ANALYZE=1

objects() { case $1 in small) echo 1000000 ;; medium) echo 9000000 ;; large) echo 45000000 ;; *) die "unknown size $1 (small, medium, large)" ;; esac; }
genheap() { case $1 in small) echo 1g ;; medium) echo 3g ;; large) echo 10g ;; esac; }

# measure NAME TIMEOUT CMD... — runs CMD under GNU time; sets WALL, CPU, RSS_MB, STATUS.
measure() {
  local name=$1 limit=$2; shift 2
  local tf="$BENCH_DIR/time.$name" rc=0 out=/dev/null
  # Only the peer's short answer is kept; everything else writes to /dev/null, as cat must.
  [ "$name" = visualvm ] && out="$BENCH_DIR/out.$name"
  # Wall time from the shell's microsecond clock: GNU time's hundredths of a second round cat of
  # a file in the page cache to 0.00 or 0.01 s, which makes every ratio to it noise.
  local t0=$EPOCHREALTIME t1
  if [ "$limit" -gt 0 ]; then
    /usr/bin/time -f "%e %U %S %M" -o "$tf" timeout "$limit" "$@" >"$out" 2>"$BENCH_DIR/err.$name" || rc=$?
  else
    /usr/bin/time -f "%e %U %S %M" -o "$tf" "$@" >"$out" 2>"$BENCH_DIR/err.$name" || rc=$?
  fi
  t1=$EPOCHREALTIME
  read -r _ U S KB < <(tail -1 "$tf")
  WALL=$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.3f", b-a}')
  CPU=$(awk -v u="$U" -v s="$S" 'BEGIN{printf "%.2f", u+s}')
  RSS_MB=$(( KB / 1024 ))
  if [ $rc -eq 124 ]; then STATUS="did not finish in ${limit} s"
  elif [ $rc -ne 0 ]; then STATUS="failed (exit $rc): $(head -c 300 "$BENCH_DIR/err.$name" | tr '\n' ' ')"
  else STATUS=ok; fi
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN{ if (b > 0) printf "%.1f", a/b; else printf "n/a" }'; }
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { printf "%s", (NR % 2) ? v[(NR + 1) / 2] : sprintf("%.3f", (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }

# This machine's speed drifts by a third within minutes (its host's other work, and how much of
# the memory a run touches the host has to back afresh): one run of the analysis said more about
# the moment than about the program, and the median of three still moved by a third from one
# bench run to the next. The rows give the median and the range. Two runs of one binary, 16
# alternated rounds each, had medians 7% apart: the smallest dump, whose runs are cheap, gets
# more rounds (its ratio to cat from disk was 9.5, 10.3 and 11.2 in bench runs of 5 rounds, 9.0
# and 9.1 in runs of 11), the largest no more than five.
RUNS_SET=${RUNS:-} ANALYZE_RUNS_SET=${ANALYZE_RUNS:-}
rounds() { case $1 in small) echo 11 ;; medium) echo 7 ;; *) echo 5 ;; esac; }
# rounds_text SET — how many rounds, for the doc's prose: SET when given, else the defaults by size.
rounds_text() { if [ -n "$1" ]; then echo "$1"; else echo "11 (small), 7 (medium) or 5 (large)"; fi; }
# Cold rows: the dump's pages are evicted from the page cache before each contender, so that each
# reads the file from disk, as when a dump has just been copied in from the machine that wrote it.
# Only the dump's: emptying the whole cache (drop_caches) would also make our static binary load
# itself from disk, while cat's code shares libc with every running process and stays in memory.
COLD=${COLD:-1}
drop() { dd if="$1" iflag=nocache count=0 status=none; }
# At rest: the dump evicted, then PAUSE seconds before each contender (why: the doc's prose on the
# two conditions, below).
REST=${REST:-1}
PAUSE=${PAUSE:-3}
resident_kb() { fincore -b -n -o RES "$1" 2>/dev/null | awk '{ printf "%d", $1 / 1024 }'; }

# warm NAME CMD... — RUNS rounds of cat and CMD alternating, the file in the page cache; sets
# WALL, CPU, RSS_MB, STATUS of CMD and CAT_WALL, CAT_CPU of cat (medians).
warm() {
  local name=$1; shift
  local cw=() cc=() w=() c=() r=() st=ok
  for _ in $(seq "$RUNS"); do
    measure cat 0 cat "$dump"; cw+=("$WALL"); cc+=("$CPU")
    measure "$name" 0 "$@"; w+=("$WALL"); c+=("$CPU"); r+=("$RSS_MB")
    [ "$STATUS" = ok ] || st=$STATUS
  done
  CAT_WALL=$(median "${cw[@]}"); CAT_CPU=$(median "${cc[@]}")
  WALL=$(median "${w[@]}"); CPU=$(median "${c[@]}"); RSS_MB=$(median "${r[@]}"); STATUS=$st
}

# analyses COLD CMD... — ANALYZE_RUNS runs of the analysis CMD, the dump evicted from the page cache
# before each when COLD is 1; sets WALL and CPU (medians), RSS_MB (the highest) and STATUS. Its
# --timings, if asked for, are the last run's. Cold, each run is paired with a run of cat, the
# dump evicted before each, and CAT_WALL is their median: the ratio's two sides are measured in
# the same rounds, as the at-rest rows' are, and see the machine's speed, which drifts, alike.
analyses() {
  local cold=$1; shift
  local w=() c=() r=() cw=() st=ok
  for _ in $(seq "$ANALYZE_RUNS"); do
    # The analysis drops the dump's pages from the page cache as it needs memory (heap analyze
    # --help, Page cache): read again, untimed, for the next run to find the file in memory.
    if [ "$cold" = 1 ]; then
      drop "$dump"
      measure cat 0 cat "$dump"; cw+=("$WALL")
      drop "$dump"
    else
      cat "$dump" >/dev/null
    fi
    measure analyze 0 "$@"; w+=("$WALL"); c+=("$CPU"); r+=("$RSS_MB")
    [ "$STATUS" = ok ] || st=$STATUS
  done
  [ "$cold" = 1 ] && CAT_WALL=$(median "${cw[@]}")
  WALL=$(median "${w[@]}"); CPU=$(median "${c[@]}"); STATUS=$st
  RSS_MB=$(printf '%s\n' "${r[@]}" | sort -g | tail -1)
  RANGE="$(printf '%s\n' "${w[@]}" | sort -g | head -1)–$(printf '%s\n' "${w[@]}" | sort -g | tail -1) s"
}

# rest CMD... — ANALYZE_RUNS rounds of cat and the analysis CMD alternating, each after the dump is
# evicted and PAUSE seconds pass; sets CAT_WALL, WALL, CPU (medians), RSS_MB (the highest), RANGE
# and STATUS.
rest() {
  local cw=() w=() c=() r=() st=ok
  for _ in $(seq "$ANALYZE_RUNS"); do
    drop "$dump"; sleep "$PAUSE"
    measure cat 0 cat "$dump"; cw+=("$WALL")
    drop "$dump"; sleep "$PAUSE"
    measure analyze 0 "$@"; w+=("$WALL"); c+=("$CPU"); r+=("$RSS_MB")
    [ "$STATUS" = ok ] || st=$STATUS
  done
  CAT_WALL=$(median "${cw[@]}"); WALL=$(median "${w[@]}"); CPU=$(median "${c[@]}"); STATUS=$st
  RSS_MB=$(printf '%s\n' "${r[@]}" | sort -g | tail -1)
  RANGE="$(printf '%s\n' "${w[@]}" | sort -g | head -1)–$(printf '%s\n' "${w[@]}" | sort -g | tail -1) s"
}

# cold NAME CMD... — warm with the dump evicted from the page cache before each contender; fails
# (cold rows left out) when the eviction leaves pages of it resident.
cold() {
  local name=$1; shift
  local cw=() cc=() w=() c=() r=() st=ok left
  for _ in $(seq "$RUNS"); do
    drop "$dump"; left=$(resident_kb "$dump")
    if [ -n "$left" ] && [ "$left" -gt 1024 ]; then
      echo "heapdump bench: $left KB of $dump stayed in the page cache after eviction: cold-cache rows left out" >&2
      return 1
    fi
    measure cat 0 cat "$dump"; cw+=("$WALL"); cc+=("$CPU")
    drop "$dump"; measure "$name" 0 "$@"; w+=("$WALL"); c+=("$CPU"); r+=("$RSS_MB")
    [ "$STATUS" = ok ] || st=$STATUS
  done
  CAT_WALL=$(median "${cw[@]}"); CAT_CPU=$(median "${cc[@]}")
  WALL=$(median "${w[@]}"); CPU=$(median "${c[@]}"); RSS_MB=$(median "${r[@]}"); STATUS=$st
}

ROWS=()
SUMMARY=()
PHASES=()
LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
STARTED=$(date -u '+%Y-%m-%d %H:%M') # the doc gives when the run started and ended: a peer's run can take an hour
for size in "${SIZES[@]}"; do
  n=$(objects "$size")
  RUNS=${RUNS_SET:-$(rounds "$size")} ANALYZE_RUNS=${ANALYZE_RUNS_SET:-$(rounds "$size")}
  dump="$BENCH_DIR/$size.hprof"
  if [ ! -f "$dump" ] || [ "$HERE/Generator.java" -nt "$dump" ]; then
    rm -f "$dump"
    echo "== generating $size dump (~$n objects)" >&2
    java -Xmx"$(genheap "$size")" -cp "$CP" Generator "$n" "$dump" >&2
  fi
  bytes=$(stat -c %s "$dump")
  mb=$(( bytes / 1048576 ))
  cat "$dump" >/dev/null # the page cache holds the file for every contender alike
  "$HL" --help >/dev/null 2>&1 # and the freshly built binary, as it holds cat's

  # Warm: the file in the page cache, where cat only copies it (several GB/s).
  warm histo "$HL" heap histo "$dump"; H_WALL=$WALL
  ROWS+=("| $size | $mb MB | cat FILE > /dev/null | $CAT_WALL | $CAT_CPU | 1 | 1.0 | ok (median of $RUNS) |")
  ROWS+=("| $size | $mb MB | heapledger heap histo | $WALL | $CPU | $RSS_MB | $(ratio "$H_WALL" "$CAT_WALL") | $STATUS (median of $RUNS) |")
  SUMMARY+=("$size, file in the page cache: histogram $(ratio "$H_WALL" "$CAT_WALL")× the time to read the file (target ≤ 2×); peak RSS $RSS_MB MB of a $mb MB file")

  A_WALL=""
  if [ $HAVE_ANALYZE = 1 ]; then
    analyses 0 "$HL" heap analyze --timings "$dump"; A_WALL=$WALL
    ROWS+=("| $size | $mb MB | heapledger heap analyze | $WALL | $CPU | $RSS_MB | $(ratio "$WALL" "$CAT_WALL") | $STATUS (median of $ANALYZE_RUNS, $RANGE) |")
    SUMMARY+=("$size, file in the page cache: full analysis $(ratio "$A_WALL" "$CAT_WALL")× the time to read the file (target ≤ 10×); peak RSS $RSS_MB MB of a $mb MB file (target ≤ file size)")
    # The phases, from --timings: where the time goes, and the floor the depth-first search sets.
    PHASES+=("| $size | $(sed -n 's/^timing: \(.*[^ ]\) \+\([0-9.]\+\) s wall \+\([0-9.]\+\) s CPU \+\([0-9]\+\) MB peak$/\1: \2 (\3, \4 MB)/p' "$BENCH_DIR/err.analyze" | paste -sd ';' | sed 's/;/; /g') |")
    dfs=$(sed -n 's/^timing: depth-first search \+\([0-9.]\+\) s wall.*/\1/p' "$BENCH_DIR/err.analyze")
    dfs_cpu=$(sed -n 's/^timing: depth-first search .* \([0-9.]\+\) s CPU.*$/\1/p' "$BENCH_DIR/err.analyze")
    # The search runs on one core; when the memory allows, the components for the dynamic sizes
    # are searched on the other meanwhile, which shows as CPU time well above the wall time.
    beside="alone, on one core"
    [ -n "$dfs_cpu" ] && awk -v c="$dfs_cpu" -v w="$dfs" 'BEGIN{exit !(c > 1.3 * w)}' && beside="on one core, the components searched on the other meanwhile"
    [ -n "$dfs" ] && SUMMARY+=("$size: the depth-first search ($beside) took $dfs s, $(ratio "$dfs" "$CAT_WALL")× the time to read the file from the page cache")
  else
    ROWS+=("| $size | $mb MB | heapledger heap analyze | – | – | – | – | not in this build |")
  fi

  # Cold: the dump evicted from the page cache before each, so every contender reads it from disk.
  if [ "$COLD" = 1 ] && cold histo "$HL" heap histo "$dump"; then
    CCAT=$CAT_WALL
    ROWS+=("| $size | $mb MB | cat FILE > /dev/null (cold cache) | $CAT_WALL | $CAT_CPU | 1 | 1.0 | ok (median of $RUNS) |")
    ROWS+=("| $size | $mb MB | heapledger heap histo (cold cache) | $WALL | $CPU | $RSS_MB | $(ratio "$WALL" "$CCAT") | $STATUS (median of $RUNS) |")
    SUMMARY+=("$size, file read from disk: histogram $(ratio "$WALL" "$CCAT")× the time to read the file (target ≤ 2×)")
    if [ $HAVE_ANALYZE = 1 ]; then
      analyses 1 "$HL" heap analyze "$dump"
      ROWS+=("| $size | $mb MB | cat FILE > /dev/null (cold cache, paired with the analysis) | $CAT_WALL | – | 1 | 1.0 | ok (median of $ANALYZE_RUNS) |")
      ROWS+=("| $size | $mb MB | heapledger heap analyze (cold cache) | $WALL | $CPU | $RSS_MB | $(ratio "$WALL" "$CAT_WALL") | $STATUS (median of $ANALYZE_RUNS, $RANGE) |")
      SUMMARY+=("$size, file read from disk: full analysis $(ratio "$WALL" "$CAT_WALL")× the time to read the file, cat and the analysis in the same rounds (target ≤ 10×); peak RSS $RSS_MB MB")
      if [ "$REST" = 1 ]; then
        rest "$HL" heap analyze "$dump"
        ROWS+=("| $size | $mb MB | cat FILE > /dev/null (at rest) | $CAT_WALL | – | 1 | 1.0 | ok (median of $ANALYZE_RUNS) |")
        ROWS+=("| $size | $mb MB | heapledger heap analyze (at rest) | $WALL | $CPU | $RSS_MB | $(ratio "$WALL" "$CAT_WALL") | $STATUS (median of $ANALYZE_RUNS, $RANGE) |")
        SUMMARY+=("$size, file read from disk at rest: full analysis $(ratio "$WALL" "$CAT_WALL")× the time to read the file at rest (target ≤ 10×); peak RSS $RSS_MB MB")
      fi
    fi
    cat "$dump" >/dev/null # back in the page cache for the peer
  fi

  if vvm_runs "$size"; then
    VVM_RAN+="$size "
    echo "== VisualVM on $size" >&2
    limit_var="VISUALVM_TIMEOUT_$size"; limit=${!limit_var:-$VISUALVM_TIMEOUT}
    rm -rf "$dump.hwcache" # VisualVM's index of a previous run would spare it the work
    measure visualvm "$limit" java -Xmx"$VISUALVM_XMX" -cp "$CP:$VISUALVM_JAR" VisualVMRetained "$dump" 10
    ROWS+=("| $size | $mb MB | VisualVM HeapFactory + getBiggestObjectsByRetainedSize(10) | $WALL | $CPU | $RSS_MB | $(ratio "$WALL" "$CAT_WALL") | $STATUS |")
    if [ -n "$A_WALL" ]; then
      if [ "$STATUS" = ok ]; then
        SUMMARY+=("$size: heapledger heap analyze is $(ratio "$WALL" "$A_WALL")× faster than VisualVM (target ≥ 100×)")
      else
        SUMMARY+=("$size: VisualVM $STATUS; heapledger heap analyze took $A_WALL s (≥ $(ratio "$limit" "$A_WALL")× faster)")
      fi
    fi
  fi
  prev=$(printf '%s\n' "$PREV_VVM" | awk -F'|' -v s="$size" '{ f = $2; gsub(/ /, "", f) } f == s' | head -1)
  if ! vvm_runs "$size" && [ -n "$prev" ]; then
    VVM_CARRIED+="$size "
    IFS='|' read -r _ _ _ cmd pwall pcpu prss _ pstatus _ <<<"$prev"
    trim() { sed 's/^ *//; s/ *$//' <<<"$1"; }
    cmd=$(trim "$cmd"); pwall=$(trim "$pwall"); pcpu=$(trim "$pcpu"); prss=$(trim "$prss"); pstatus=$(trim "$pstatus")
    # A row carried over before keeps the date of the run that measured it.
    when=$(sed -n 's/.*(not rerun: run of \(.*\))$/\1/p' <<<"$pstatus")
    [ -n "$when" ] || when=$PREV_DATE
    pstatus=${pstatus% (not rerun*}
    ROWS+=("| $size | $mb MB | $cmd | $pwall | $pcpu | $prss | $(ratio "$pwall" "$CAT_WALL") | $pstatus (not rerun: run of $when) |")
    if [ -n "$A_WALL" ]; then
      if [ "$pstatus" = ok ]; then
        SUMMARY+=("$size: heapledger heap analyze is $(ratio "$pwall" "$A_WALL")× faster than VisualVM in its run of $when (target ≥ 100×)")
      else
        SUMMARY+=("$size: VisualVM $pstatus in its run of $when; heapledger heap analyze took $A_WALL s (≥ $(ratio "$pwall" "$A_WALL")× faster)")
      fi
    fi
  fi
  printf '%s\n' "${ROWS[@]: -10}" >&2
done

machine() {
  echo "- CPU: $(lscpu | sed -n 's/^Model name: *//p' | head -1), $(nproc) cores available"
  echo "- memory: $(free -g | awk '/^Mem:/{print $2}') GB; kernel $(uname -r)"
  echo "- $(java -version 2>&1 | head -1); $(go version)"
  local after busy
  after=$(cut -d' ' -f1-3 /proc/loadavg)
  busy=$(awk -v a="${LOAD_BEFORE%% *}" -v b="${after%% *}" -v c="$(nproc)" 'BEGIN{ print (a > 4 || b > 4 || a > 2*c || b > 2*c) ? 1 : 0 }')
  echo "- load average before the run: $LOAD_BEFORE, after: $after (other work shares the machine: wall times include waiting for a core, CPU = user + system seconds does not)"
  [ "$busy" = 1 ] && echo "- the machine was heavily loaded (load average above 4 on $(nproc) cores): wall times and peak RSS (the collector's pacing) vary from run to run; CPU seconds are the steadier measure"
  if [ -n "$VVM_CARRIED" ]; then
    echo "- VisualVM was not rerun on $(sed 's/ *$//; s/ /, /g' <<<"$VVM_CARRIED") (SKIP_VISUALVM=1 or VISUALVM_SIZES): those rows are from the runs their status names (same dumps, same machine), their × cat against this run's cat"
  fi
  if [ -n "$VVM_RAN" ]; then
    echo "- VisualVM runs are stopped after ${VISUALVM_TIMEOUT} s (VISUALVM_TIMEOUT$(for s in "${SIZES[@]}"; do v="VISUALVM_TIMEOUT_$s"; [ -n "${!v:-}" ] && printf ', %s: %s s' "$s" "${!v}"; done)); a stopped run is reported as not finished, with the time it had"
  fi
}

mkdir -p "$ROOT/docs"
# The doc's own sections after the generated part (## headings: the memory budget, which
# budget.sh writes, and the measurements behind choices in the code) are carried over as they are.
KEPT=""
[ -f "$DOC" ] && KEPT=$(awk '/^## /{ keep = 1 } keep' "$DOC")
{
  echo "# Heap-dump benchmark"
  echo
  echo "Regenerate with \`bench/heapdump/run.sh\` (sizes: small, medium, large). Measured $STARTED–$(date -u '+%H:%M') UTC on:"
  echo
  machine
  echo
  echo "Dumps come from \`bench/heapdump/Generator.java\` (HotSpotDiagnosticMXBean.dumpHeap, live objects): a 100,000-node"
  echo "doubly linked list, binary trees, hash maps with shared values, object arrays of items with byte arrays."
  echo
  echo "Two conditions. **Page cache**: the file is in memory, where cat only copies it (several GB/s); cat and the"
  echo "histogram alternate for $(rounds_text "$RUNS_SET") rounds and the medians are reported; the analysis runs $(rounds_text "$ANALYZE_RUNS_SET") times, the file read"
  echo "again (untimed) before each, as the analysis drops its pages from the page cache; median wall"
  echo "and CPU time, the range of wall times and the highest peak RSS reported, its phases those of the last run. **Cold cache** (rows"
  echo "marked so): the dump's pages are evicted from the page cache before each contender (\`dd iflag=nocache\`, checked"
  echo "with fincore), so each reads the file from disk, as when a dump has just been copied in; cat and the histogram"
  echo "alternate for as many rounds again, and cat and the analysis for $(rounds_text "$ANALYZE_RUNS_SET") rounds, the analysis's ratio taken to that"
  echo "cat's median (paired, as at rest: both sides of the ratio see the machine's speed, which drifts, alike). Only the"
  echo "dump is evicted: emptying the whole cache would"
  echo "also make the static heapledger binary load itself from disk, while cat's code shares libc with every running"
  echo "process and stays in memory. **At rest** (rows marked so, as many rounds): the dump evicted, then a pause of"
  echo "$PAUSE s before each contender, cat and the analysis alternating. This VM hands the memory its guest leaves free"
  echo "back to the host within about two seconds, and a page taken after that the host must back afresh (1.3-2.4 ms per"
  echo "MB, against 0.05 ms for a page freed a moment before): in the cold rows cat's page cache takes the pages the"
  echo "eviction has just freed; after the pause every contender starts as"
  echo "on a machine at rest. Peak RSS and CPU from GNU time, wall time from the shell's microsecond clock around"
  echo "it; ratio = wall time / wall time of cat under the same condition."
  echo
  echo "| dump | file | command | wall s | CPU s | peak RSS MB | × cat | status |"
  echo "|---|---|---|---|---|---|---|---|"
  printf '%s\n' "${ROWS[@]}"
  echo
  echo "Summary:"
  echo
  for s in "${SUMMARY[@]}"; do echo "- $s"; done
  echo
  if [ ${#PHASES[@]} -gt 0 ]; then
    echo "Phases of \`heap analyze\` (file in the page cache), from its \`--timings\`: wall seconds (CPU seconds, peak resident memory so far)."
    echo
    echo "| dump | phases |"
    echo "|---|---|"
    printf '%s\n' "${PHASES[@]}"
    echo
  fi
  echo "How heapledger reads and analyses a dump, and where the time goes:"
  echo
  echo "- An uncompressed dump is indexed as it is read: one goroutine walks the top-level records, skipping the"
  echo "  heap-dump segments (HotSpot writes about a megabyte each) by seeking and reading only the next header after"
  echo "  each, and hands every segment to the workers as soon as it has found it. In the page cache the walk takes about"
  echo "  a millisecond; from disk each hop waits for the disk, and the walk alone took as long as cat reads the whole"
  echo "  file, which is why the reading overlaps it. \`heap histo\` counts the segments on every core, each worker"
  echo "  reading runs of segments (each run at most 1/(2 × workers) of what is left, so that the workers finish within"
  echo "  about a segment of each other) into a 256 KB buffer and counting the instance and primitive-array records"
  echo "  straight from it in one loop (no call and no header copied per record; the two classes counted last are"
  echo "  checked before the class table). Its CPU time includes the copy from the page cache, which is all that cat"
  echo "  does (compare the CPU columns); from disk its two workers' reads keep the disk busier than cat's one stream."
  echo "  The walk steps over the symbols (UTF8 records, most of the records before the heap) without decoding them,"
  echo "  noting only where their runs lie; the names wanted are read back from those runs, by the walk's goroutine"
  echo "  once it is done (the histogram's class names, while the workers count; from the page cache that goroutine"
  echo "  then counts as the last worker, where a worker of its own had at times held the core the walk waited for) or"
  echo "  after pass 1 (the analysis's class and field names, into one string for all), and the class dumps are decoded"
  echo "  by the workers that meet them; a class's layout is worked out once for all its subclasses. A static binary starts"
  echo "  in about 2 ms, and merging, sizing and printing take 1-2 ms more; on the small dump those weigh about as much"
  echo "  as cat's whole time."
  echo "- \`heap analyze\` reads the dump twice: pass 1 (objects, classes, roots) in order, the near half of the file on"
  echo "  one core beside the walk and, when the page cache holds the file's end, the far half on the other (its class"
  echo "  numbers mapped to the near half's and its columns appended after; read from disk, two streams at once were"
  echo "  slower than one, at times four times slower), pass 2 (references) by segments on every core. The graph is"
  echo "  flat arrays (CSR, 32-bit node numbers, no maps per object). Each reference's object is found by its id in a"
  echo "  bitmap over the ids, a bit per 8-byte address, with running counts: its node number is the count of ids below"
  echo "  it, one cache line and a population count per reference (pages of the bitmap that hold no object are left"
  echo "  out, about a byte per object in all); ids too sparse for that are found through a coarse bucket index. The"
  echo "  dominator tree is SEMI-NCA, iterative; dynamic sizes come from Tarjan components, the condensed DAG's dominators and its dominating articulation points,"
  echo "  whose dynamic sizes are their subtrees' sums in the DAG's dominator tree (what such a point reaches is what it"
  echo "  dominates), one pass for all. Work on both cores: the components' search beside the depth-first search, where the"
  echo "  memory allows it, the edges that search skips marked while the sizes and classes go out; the dominator tree's"
  echo "  predecessor lists are counted and filled by the edges' sources, in 32 runs the cores take as they come free"
  echo "  (halves of the edges left one core twice the other's work), the second core counting into an array of its own"
  echo "  (a class object's list takes an edge from every instance of its class, and a count shared between cores cost"
  echo "  more than one core alone); the unreachable objects' removal, and the classes' totals; the condensed DAG's edge lists by the"
  echo "  parity of their components; retained size by class by subtrees of the dominator tree; the top objects by"
  echo "  retained size by halves. Arrays are written a page at a time as they are made: a fresh page first read maps the"
  echo "  system's zero page, and the write after it faults again and flushes that mapping from every core the process"
  echo "  runs on, an interrupt that a virtual machine makes costly; the components' search beside the depth-first search"
  echo "  so spent 4% of the small dump's CPU time, and ran a third slower than alone. A semidominator"
  echo "  search stops at the root, which spares most of a class object's list. The references on the paths reported are"
  echo "  named by reading again only the segments whose id range holds their objects. The phase table above"
  echo "  (\`--timings\`) shows where the time goes. Besides the work itself, two costs of this virtual machine weigh:"
  echo "  fresh memory (the host backs a guest page only when it is first touched, and the kernel clears every fresh page)"
  echo "  and writing the temporary files below (the phase \`setting columns aside\` is mostly that). This VM reports its"
  echo "  free pages to the host (virtio-balloon free page reporting), which takes them back, so a page freed a few seconds"
  echo "  earlier costs a fault in the host again: touching 4 GB of such memory took 10.5 s, the same 4 GB again at once"
  echo "  0.22 s. On the large dump the depth-first search, predecessor lists, semidominators and retained sizes took 1.7,"
  echo "  1.1, 0.9 and 0.8 s on fresh memory, against 0.8, 0.7, 0.55 and 0.33 s on memory reused in the same process. Both"
  echo "  costs vary from run to run with what the host has backed, and so do the analysis's wall times: rerun the"
  echo "  benchmark before comparing two of them (the medium dump took 1.5 s right after another run, which left its memory"
  echo "  backed, and 2.1 s after a pause of six seconds). Arrays of 32 MB and more ask for transparent huge pages (without"
  echo "  them, faulting fresh 4 KB pages in was a third of the run when they were introduced), and their pages are faulted"
  echo "  in by a background goroutine (MADV_POPULATE_WRITE) while the phase starts on them; pass 1's columns, reserved for"
  echo "  the most objects the file could hold, a few segments ahead of its appends (also 4 KB-page columns, when pass 1"
  echo "  reads from disk on one core: the small dump's pass 1 28-31 ms against 32-36), the room faulted past the last"
  echo "  object given back after. That moves much of the cost of fresh"
  echo "  memory to the core that the serial phases leave idle. While the graph is built, mostly on one core, the other"
  echo "  makes the first arrays of the two searches that follow (up to four of 4 bytes per object) and faults them in, if"
  echo "  the file's size leaves room for them on top of what loading holds, 4 bytes per object and 4 MB more: on the large"
  echo "  dump the phases from building the graph to the dominator tree took 4.8-4.9 s with them, against 5.0-5.6 s, and"
  echo "  the peak could fall in the building instead (1.73-1.75 GB on the large dump, 362-367 MB on the medium one), until"
  echo "  the preorder stayed in memory (below)."
  echo "  Once the dump has been read for the last time, its own pages in the page cache are the memory the analysis takes"
  echo "  (\`heap analyze --help\`, Page cache): as arrays of 64 KB and more are made, or their pages faulted in, the file's"
  echo "  pages are dropped from the page cache (POSIX_FADV_DONTNEED) 128 MB at a time, from its end down, so that the arrays"
  echo "  take pages just freed rather than pages the host must back afresh. (Dropped an array's size at a time they seldom"
  echo "  made whole free huge pages: the system time after pass 2 on the large dump was 3.6-4.1 s so, against 1.1-1.8 s"
  echo "  128 MB at a time.) Read from disk, in alternated runs, the large dump's analysis took 8.05-8.16 s, against"
  echo "  9.6-12.6 s with \`--keep-page-cache\`, its system time 1.3-1.7 s against 5.3-9.5 s; the medium dump's 1.55-1.89 s"
  echo "  against 1.77-2.25 s. After a pause of 3 s, as on a machine at rest, the large dump's took 8.9-12.5 s against"
  echo "  12.2-13.8 s. Analysed back to back after an eviction, as in the cold rows, it gains nothing: the run before has"
  echo "  used the memory the eviction would otherwise free for the next one (blocks of four runs of the large dump:"
  echo "  medians 10.1 and 10.1 s against 9.8 and 8.8 s). The file is no different afterwards, but the next program to read"
  echo "  it reads the dropped part from disk."
  echo "- The full analysis stays far from 10× the time of reading a file in the page cache. The depth-first search, which"
  echo "  every dominator algorithm in use starts from and which runs on one core, is alone a large part of that budget"
  echo "  (see the summary), and pass 2, which reads the file again and resolves every reference to a node, takes about"
  echo "  as long as the search. Read from disk, the file costs cat far more, and the ratio is in the cold-cache rows."
  echo "- The analysis aims to peak under the dump's file size. It checks its resident memory before the depth-first"
  echo "  search of the dominator tree: the components for the dynamic sizes are searched on the other core meanwhile, and"
  echo "  their numbers (4 bytes per object) wait for their phase, if the file's size leaves room for both searches' arrays"
  echo "  (20 bytes per object and a few bits per edge) and a megabyte or more for the components' stacks (12 bytes per"
  echo "  object on the deepest path, 4 per object of the largest component), which get what room is left: a search"
  echo "  that needs more gives up and runs in its own phase. Their stacks grow in chunks, not by doubling, which left"
  echo "  twice their size in garbage and took the small dump over its file size. Splitting the predecessor lists between"
  echo "  the cores takes 4 bytes per object more, when there is room for them beside what the components' search, if it"
  echo "  is still running, may yet take: it is then held to what its stacks hold and 16 MB more, and gives up past that."
  echo "  The search's preorder stays in memory through the rest of the tree, 4 bytes per object more, rather than going"
  echo "  out to a temporary file and back, when there is room for it beside the split lists: on the medium and large dumps"
  echo "  there is, the peak moves to the dominator tree (378-381 MB and 1.84 GB, against 362-367 MB and 1.74 GB in the"
  echo "  building), and the lists and the rest of the tree took 212-394 ms against 332-401 on the medium dump,"
  echo "  1.74-2.10 s against 1.81-2.40 on the large one. The components' sizes are summed, and the hub of the dynamic-size"
  echo "  walks chosen, on the other core while the component graph's dominator tree is worked out on one, when the shallow"
  echo "  sizes (4 bytes per object) and the components' sizes (4 per component) fit beside it; its dominating"
  echo "  articulation points are then worked out on the core the tree leaves free and on beside the walks that size them,"
  echo "  which wait on them a block at a time, when 4 bytes per component more fit beside the walks' arrays."
  echo "- Without that overlap, peak RSS stays near 31 bytes per object because no phase holds all of the dump's data. The data is about 24"
  echo "  bytes per object on these dumps: about a byte of id index (the bitmap with its running counts, from which each"
  echo "  object's id follows, so that no offset from the smallest id is kept), class (4),"
  echo "  kind (1), size in 8-byte units (4), successor offset (4), and 4 bytes per reference (2.3 per object) with a weak"
  echo "  bit each. Each phase moves the columns it does not read to a temporary file (plain write; a column of 8 MB and"
  echo "  more as two files of whole pages, written from both cores; every column's memory given back 8 MB at a time as it"
  echo "  is written, so that the page cache takes pages just freed rather than pages this VM has handed back to its host,"
  echo "  which made columns go out at a tenth of the speed early in a run) and gives the memory back to the system at once."
  echo "  A column a later phase needs comes back as a read-only view of its files, mapped from the pages the page cache"
  echo "  holds for them (no fresh memory to clear and no copy: about 100 fewer huge pages faulted in on the medium dump),"
  echo "  and goes out again by unmapping; nothing is mapped while a column is out. The id index and"
  echo "  kinds wait in a file from loading until the reported objects are named (a node's id is where its bit is,"
  echo "  found by a binary search over the running counts for the few objects named); the sizes and classes while the"
  echo "  depth-first search of the dominator tree runs; the edges (13.6 bytes per object, written out on the other core"
  echo "  while the rest of the tree is worked out on one) while the tree is finished and"
  echo "  the retained sizes, suspects and retained size by class are computed, and again once the components are"
  echo "  condensed; the node-to-component column while the dynamic sizes are walked (the few ranked objects read theirs"
  echo "  from the file, and naming the ranked components reads it back a part at a time). Each column is written once,"
  echo "  about 32 bytes per object over a run (28 where the preorder stays in memory); about 30 come back as views, and"
  echo "  the edge offsets, classes and id index that naming needs come back at the end as views too, not populated, of"
  echo "  which the few lookups touch a handful of pages (read back into fresh memory, they had cost the small dump 6 ms);"
  echo "  only the preorder, where it went out, is read back, into an array the dominator tree is done with. The"
  echo "  edges and weak edges are not read again once the components are"
  echo "  condensed, nor the sizes once the components are weighed: their files close then, and the page cache that held"
  echo "  them (400 MB of edges on the large dump) goes to the arrays that follow, in one piece."
  echo "- Phase by phase, in bytes per object: loading about 30 (pass 1 keeps a 64-bit id, class, array length, degree and"
  echo "  kind, 21 bytes; the sizes are then computed in place over the array lengths and the id index built before the"
  echo "  whole ids go); the dominator tree about 31, or 35 split between the cores (the edges and three 32-bit arrays in"
  echo "  the search, whose open nodes' next edges wait on a stack as deep as its path; then four arrays and the"
  echo "  predecessor lists with the edges out, path compression's lowest values kept in the lists' offsets, each read no more"
  echo "  once its node is; the lists take about 4 bytes per object here, mostly references from instances to their"
  echo "  class, as application classes are no GC roots; the preorder waits in a file meanwhile, or stays in memory, 4"
  echo "  bytes more, where the file's size leaves room, as on the medium and large dumps);"
  echo "  retained sizes about 29 (immediate dominators, preorder, sizes, 8-byte retained sizes, the tree's child"
  echo "  lists); components about 29 (the edges, component numbers, the condensed DAG); dynamic sizes about 29 (the DAG"
  echo "  with component sizes, 8-byte sizes, walk marks, the DAG's immediate dominators until the points' sizes are"
  echo "  summed, and, where the points are worked out beside the walks, 4 bytes per component more; the node-to-component"
  echo "  column out). Arrays go back to the system as they are dropped, where the code that drops them knows them (a work"
  echo "  array no later phase takes, the ids once their index is made, the retained sizes, the DAG and the walks' arrays"
  echo "  once the ranking is done, on the other core), without a collection; the phases whose start follows drops it"
  echo "  does not see (the two searches and the dynamic sizes) start with one, which hands what was freed back to the"
  echo "  system. Of the fifteen collections the small dump's run made, twelve went: six had freed nothing, at 0.3-1 ms"
  echo "  each, and what the others freed is given back where it is dropped. The collector otherwise runs"
  echo "  at GOGC=400 (at 100 it started one in the middle of the components' phase, counting arrays given back already"
  echo "  as heap), and within a phase little becomes garbage. On top comes about 12 MB whatever the dump's size (the Go runtime,"
  echo "  the program's code, class and field names): a quarter of the small dump's peak, which leaves it the least"
  echo "  room under its file size."
  if [ -n "$KEPT" ]; then
    echo
    printf '%s\n' "$KEPT"
  fi
} >"$DOC"
echo >&2
cat "$DOC"
