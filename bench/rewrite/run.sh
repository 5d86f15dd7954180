#!/usr/bin/env bash
# Benchmarks heapledger's probe pass against the same pass written with ASM 9 (AsmProbe.java:
# AdviceAdapter, EXPAND_FRAMES + COMPUTE_MAXS), both on the corpus jars of
# scripts/corpus-jars.txt, in one run, and writes docs/rewrite-benchmarks.md.
#
#   bench/rewrite/run.sh [SECONDS]
#
# SECONDS (default 10) is the length of each warm-up and each measured period of the
# single-thread throughput runs. Reported:
#   - single-thread classes/s after warm-up: heapledger on one goroutine (GOMAXPROCS=1) and ASM
#     on one Java thread in a warm JVM, over the same in-memory classes;
#   - end-to-end wall time for the whole corpus: `heapledger rewrite --pass probe` once per jar
#     against one JVM running AsmProbe over all jars, both on all cores, each writing jars.
set -euo pipefail
cd "$(dirname "$0")/../.."
PERIOD="${1:-10}"
LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)
LIB=/usr/share/java
OUT=build/bench-rewrite
ASM_CP="$LIB/asm.jar:$LIB/asm-commons.jar:$LIB/asm-tree.jar:$LIB/asm-analysis.jar"
GO="${GO:-go}"

command -v /usr/bin/time >/dev/null || { echo "run.sh: GNU time missing; run scripts/install-deps.sh" >&2; exit 1; }
for j in asm.jar asm-commons.jar; do
  [ -f "$LIB/$j" ] || { echo "run.sh: $LIB/$j missing; run scripts/install-deps.sh" >&2; exit 1; }
done
rm -rf "$OUT"
mkdir -p "$OUT/classes"
echo "run.sh: building heapledger, the throughput harness and AsmProbe" >&2
"$GO" build -o "$OUT/heapledger" ./cli
"$GO" build -o "$OUT/throughput" ./bench/rewrite/throughput
javac -nowarn -cp "$ASM_CP" -d "$OUT/classes" bench/rewrite/AsmProbe.java

JARS=()
while read -r jar _; do
  case "$jar" in ''|'#'*) continue ;; esac
  if [ -f "$LIB/$jar" ]; then
    JARS+=("$(readlink -f "$LIB/$jar")")
  else
    echo "run.sh: corpus jar $LIB/$jar missing, left out" >&2
  fi
done < scripts/corpus-jars.txt
[ ${#JARS[@]} -gt 0 ] || { echo "run.sh: no corpus jars found" >&2; exit 1; }
CLASSES=0
for j in "${JARS[@]}"; do
  CLASSES=$((CLASSES + $(unzip -Z1 "$j" | grep -c '\.class$' || true)))
done
echo "run.sh: ${#JARS[@]} jars, $CLASSES classes" >&2

now() { date +%s.%N; }

echo "run.sh: single-thread throughput, ${PERIOD}s warm-up + ${PERIOD}s measured each" >&2
HL_TP=$("$OUT/throughput" -seconds "$PERIOD" "${JARS[@]}")
echo "$HL_TP" >&2
ASM_TP=$(java -XX:ActiveProcessorCount=1 -cp "$OUT/classes:$ASM_CP" AsmProbe throughput "$PERIOD" "${JARS[@]}")
echo "$ASM_TP" >&2
# The count pass (--pass count --accounts '*', the product's main pass) has no ASM peer; its
# throughput is reported beside probe's so that the two are measured under the same load.
HL_COUNT=$("$OUT/throughput" -seconds "$PERIOD" -pass count "${JARS[@]}")
echo "$HL_COUNT" >&2
# With package accounts, as users run it: every method of an accounted class that may change
# the thread's account switches, so most methods are edited and get a handler.
PKG_ACCOUNTS='org.*,com.*,net.*,clojure.*,groovy.*,groovyjarjarasm.*,groovyjarjarantlr.*'
HL_ACCT=$("$OUT/throughput" -seconds "$PERIOD" -pass count -accounts "$PKG_ACCOUNTS" "${JARS[@]}")
echo "$HL_ACCT" >&2
acct_rate=$(sed -n 's/.* classes\/s=\([0-9]*\).*/\1/p' <<<"$HL_ACCT")
acct_cpurate=$(sed -n 's/.*classes\/cpu-s=\([0-9]*\).*/\1/p' <<<"$HL_ACCT")
count_rate=$(sed -n 's/.* classes\/s=\([0-9]*\).*/\1/p' <<<"$HL_COUNT")
count_cpurate=$(sed -n 's/.*classes\/cpu-s=\([0-9]*\).*/\1/p' <<<"$HL_COUNT")
hl_rate=$(sed -n 's/.* classes\/s=\([0-9]*\).*/\1/p' <<<"$HL_TP")
asm_rate=$(sed -n 's/.* classes\/s=\([0-9]*\).*/\1/p' <<<"$ASM_TP")
hl_cpurate=$(sed -n 's/.*classes\/cpu-s=\([0-9]*\).*/\1/p' <<<"$HL_TP")
asm_cpurate=$(sed -n 's/.*classes\/cpu-s=\([0-9]*\).*/\1/p' <<<"$ASM_TP")

echo "run.sh: end to end, whole corpus" >&2
mkdir -p "$OUT/hl" "$OUT/asm"
export OUT
# GNU time reports wall time and the CPU time of the command and all its children.
/usr/bin/time -f "%e %U %S" -o "$OUT/hl.time" bash -c '
  for j in "$@"; do
    "$OUT/heapledger" rewrite --pass probe "$j" -o "$OUT/hl/$(basename "$j")" 2>>"$OUT/heapledger.log"
  done' _ "${JARS[@]}"
/usr/bin/time -f "%e %U %S" -o "$OUT/asm.time" \
  java -cp "$OUT/classes:$ASM_CP" AsmProbe rewrite -o "$OUT/asm" "${JARS[@]}" 2>>"$OUT/asm.log"
read -r hl_wall hl_user hl_sys < "$OUT/hl.time"
read -r asm_wall asm_user asm_sys < "$OUT/asm.time"
hl_cpu=$(awk "BEGIN { print $hl_user + $hl_sys }")
asm_cpu=$(awk "BEGIN { print $asm_user + $asm_sys }")

met() { awk "BEGIN { print ($1 >= $2) ? \"met\" : \"not met\" }"; }
ratio() { awk "BEGIN { printf \"%.2f\", $1 / $2 }"; }
tp_ratio=$(ratio "$hl_rate" "$asm_rate")
count_ratio=$(ratio "$count_rate" "$asm_rate")
countcpu_ratio=$(ratio "$count_cpurate" "$asm_cpurate")
acct_ratio=$(ratio "$acct_rate" "$asm_rate")
acctcpu_ratio=$(ratio "$acct_cpurate" "$asm_cpurate")
tpcpu_ratio=$(ratio "$hl_cpurate" "$asm_cpurate")
wall_ratio=$(ratio "$asm_wall" "$hl_wall")
cpu_ratio=$(ratio "$asm_cpu" "$hl_cpu")
printf 'single-thread classes/s: heapledger %s, ASM %s (heapledger/ASM = %s)\n' "$hl_rate" "$asm_rate" "$tp_ratio"
printf 'single-thread classes per CPU-second: heapledger %s, ASM %s (heapledger/ASM = %s)\n' "$hl_cpurate" "$asm_cpurate" "$tpcpu_ratio"
printf 'count pass, single-thread: classes/s %s, classes per CPU-second %s (count/ASM probe = %s; %s)\n' "$count_rate" "$count_cpurate" "$count_ratio" "$countcpu_ratio"
printf 'count pass with package accounts, single-thread: classes/s %s, classes per CPU-second %s (count/ASM probe = %s; %s)\n' "$acct_rate" "$acct_cpurate" "$acct_ratio" "$acctcpu_ratio"
printf 'end-to-end wall time: heapledger %.2fs, ASM %.2fs (ASM/heapledger = %s)\n' "$hl_wall" "$asm_wall" "$wall_ratio"
printf 'end-to-end CPU time: heapledger %.2fs, ASM %.2fs (ASM/heapledger = %s)\n' "$hl_cpu" "$asm_cpu" "$cpu_ratio"

cpu=$(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -1)
# The sections after the generated part (from its first "## " heading) are kept as they are:
# they record other runs and findings, each saying how it was taken.
sed -n '/^## /,$p' docs/rewrite-benchmarks.md > "$OUT/kept.md" 2>/dev/null || true
load_start_note="Load average when the run started: $LOAD_START."
cat > docs/rewrite-benchmarks.md <<DOC
# Rewrite benchmarks: heapledger's probe pass against ASM 9

Regenerate with \`bench/rewrite/run.sh $PERIOD\` (this file is written by it).

The peer is the same probe pass written with ASM 9 (\`bench/rewrite/AsmProbe.java\`, Debian
libasm-java): ClassReader with EXPAND_FRAMES, AdviceAdapter, ClassWriter with COMPUTE_MAXS; the
one new handler gets a hand-written frame (every local Top but the token), so no class is loaded
and no common supertype guessed. It inserts the same calls as \`heapledger rewrite --pass probe\`.
ASM rewrites a class as a whole and drops it when a method grows too large; heapledger keeps the
rest of the class instrumented.

Machine: $(nproc) cores, $cpu; $(java -version 2>&1 | head -1); $("$GO" version).
$load_start_note Load average when the run ended: $(cut -d' ' -f1-3 /proc/loadavg). Both tools ran in
the same run under the same load, and the ratios are what to compare; at a load well above the
core count the JVM's JIT starves and the ratios are not a result. Run on $(date -u +%Y-%m-%d).
Corpus: ${#JARS[@]} jars of scripts/corpus-jars.txt, $CLASSES classes.

| measure | heapledger | ASM 9 | ratio |
| --- | --- | --- | --- |
| single-thread classes/s after ${PERIOD}s warm-up | $hl_rate | $asm_rate | heapledger/ASM = $tp_ratio |
| the same, classes per CPU-second of the whole process | $hl_cpurate | $asm_cpurate | heapledger/ASM = $tpcpu_ratio |
| count pass (\`--accounts '*'\`), single-thread classes/s; classes per CPU-second | $count_rate; $count_cpurate | ASM's probe pass: $asm_rate; $asm_cpurate | count/ASM probe = $count_ratio; $countcpu_ratio |
| count pass with package accounts (\`--accounts '$PKG_ACCOUNTS'\`: methods switch), single-thread classes/s; classes per CPU-second | $acct_rate; $acct_cpurate | ASM's probe pass: $asm_rate; $asm_cpurate | count/ASM probe = $acct_ratio; $acctcpu_ratio |
| end-to-end wall time, whole corpus (s) | $(printf %.2f "$hl_wall") | $(printf %.2f "$asm_wall") | ASM/heapledger = $wall_ratio |
| end-to-end CPU time (user + sys), whole corpus (s) | $(printf %.2f "$hl_cpu") | $(printf %.2f "$asm_cpu") | ASM/heapledger = $cpu_ratio |

Targets (issues 2 and 36): single-thread probe pass at least ASM's (ratio ≥ 1), count pass at
least 0.8× ASM's probe pass, end to end at least 3× faster (ratio ≥ 3). In this run: per core
$(met "$tp_ratio" 1) by wall time and $(met "$tpcpu_ratio" 1) by CPU time; count pass $(met "$count_ratio" 0.8) by
wall time and $(met "$countcpu_ratio" 0.8) by CPU time; end to end $(met "$wall_ratio" 3) by wall time and
$(met "$cpu_ratio" 3) by CPU time.

How each is measured: single-thread throughput loads every corpus class into memory first and
then transforms them in a loop for ${PERIOD}s of warm-up and ${PERIOD}s measured, heapledger on one
goroutine with GOMAXPROCS=1 (\`bench/rewrite/throughput\`), ASM on one thread of a JVM started
with -XX:ActiveProcessorCount=1 (its JIT and GC threads still run beside it); heapledger's
collector runs at GOGC=400, the setting \`heapledger rewrite\` uses (rewrite/jar.GCPercent: less
CPU for a peak of about 70 MB instead of 35 MB on the largest jars). Classes per
CPU-second divide by the CPU time of the whole process (all threads; for the JVM that includes
JIT compilation and GC), which on a loaded machine is steadier than wall time. End to end is
\`heapledger rewrite --pass probe JAR -o OUT\` run once per corpus jar (a new process each
time, all cores) against one JVM running \`AsmProbe rewrite\` over all jars with a thread per
core; both read and write jars. On a loaded machine wall time mostly measures the scheduler, so
CPU time (user + sys of the process and its children, from GNU time) is reported beside it.
DOC
if [ -s "$OUT/kept.md" ]; then
  { echo; cat "$OUT/kept.md"; } >> docs/rewrite-benchmarks.md
fi
echo "run.sh: wrote docs/rewrite-benchmarks.md" >&2
