#!/usr/bin/env bash
# Steady-state cost per object of the Object.<init> hook (docs/agent.md, "The Object.<init>
# hook"): bench/objinit/Alloc.java constructs N small objects per round, run plain, under the
# agent (each object counted at its rewritten site) and under the agent with --object-init (the
# hook counts it again), in turns, RUNS times each; medians of the last round's ns per object.
#
#   runtime-java/agent/bench-objinit.sh [RUNS] [N]     (defaults 5 and 50000000; needs `make build`)
set -euo pipefail
cd "$(dirname "$0")/../.."
RUNS=${1:-5}
N=${2:-50000000}
HL=$PWD/bin/heapledger
[ -x "$HL" ] && [ -f build/heapledger-agent.jar ] || { echo "run make build first" >&2; exit 1; }
export HEAPLEDGER_AGENT=$PWD/build/heapledger-agent.jar
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
javac --release 8 -d "$W/classes" runtime-java/agent/bench/objinit/Alloc.java
"$HL" agent --accounts 'objinit.*' -o "$W/agent" >/dev/null
"$HL" agent --accounts 'objinit.*' --object-init -o "$W/objinit" >/dev/null
plain_cmd=(java -cp "$W/classes" objinit.Alloc "$N")
agent_cmd=("$W/agent/heapledger-java" -Dheapledger.snapshot.dir="$W/s" -cp "$W/classes" objinit.Alloc "$N")
objinit_cmd=("$W/objinit/heapledger-java" -Dheapledger.snapshot.dir="$W/s" -cp "$W/classes" objinit.Alloc "$N")
: >"$W/times"
for ((i = 0; i < RUNS; i++)); do
  for mode in plain agent objinit; do
    declare -n cmd="${mode}_cmd"
    echo "$mode $("${cmd[@]}" 2>/dev/null | awk '/ns per object/ {print $1}')" >>"$W/times"
    unset -n cmd
  done
done
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
for mode in plain agent objinit; do
  printf '%-8s %6s ns per object (median of %d runs, %d objects per round)\n' "$mode" \
    "$(awk -v m=$mode '$1==m {print $2}' "$W/times" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')" "$RUNS" "$N"
done
