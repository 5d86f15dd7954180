#!/usr/bin/env bash
# CPU cost of the runtime's JMX registration (docs/runtime.md, "JMX"): user+sys CPU of one JVM
# run with heapledger.jmx=off, auto (the default) and on, RUNS runs each taking turns (median).
#
#   runtime-java/rt/bench-jmx.sh [RUNS]      (default 20; needs bin/heapledger from `make build` and a JDK)
#
# Programs: the demo's rewritten classes (fixtures/demo, 2000 orders; ends before auto mode first
# looks for a server), and a program that starts the runtime and sleeps 1.5 s (auto looks once).
# The runtime is compiled from runtime-java/rt/src, so the figures are those of the working tree.
set -euo pipefail
cd "$(dirname "$0")/../.."
RUNS=${1:-20}
HL=$PWD/bin/heapledger
[ -x "$HL" ] || { echo "run make build first" >&2; exit 1; }
command -v /usr/bin/time >/dev/null || { echo "needs /usr/bin/time (Debian package time)" >&2; exit 1; }
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT

javac --release 8 -nowarn -d "$W/rt" $(find runtime-java/rt/src -name '*.java')
"$HL" demo --dir "$W/demo" >/dev/null
mkdir -p "$W/sleepy"
cat >"$W/sleepy/Sleepy.java" <<'JAVA'
public class Sleepy {
    public static void main(String[] args) throws Exception {
        heapledger.rt.Ledger.here(); // starts the runtime, as rewritten code's first call does
        Thread.sleep(1500);
    }
}
JAVA
javac -cp "$W/rt" -d "$W/sleepy" "$W/sleepy/Sleepy.java"

median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

# bench NAME CLASSPATH MAIN ARGS...: prints the median CPU milliseconds per mode.
bench() {
  local name=$1 cp=$2 mode
  shift 2
  : >"$W/times"
  for ((i = 0; i < RUNS; i++)); do
    for mode in off auto on; do
      rm -rf "$W/snaps"
      /usr/bin/time -o "$W/t" -f '%U %S' java -Dheapledger.jmx=$mode -Dheapledger.snapshot.dir="$W/snaps" -cp "$cp" "$@" >/dev/null 2>"$W/err" ||
        { cat "$W/err" >&2; exit 1; }
      echo "$mode $(awk '{printf "%d", ($1 + $2) * 1000}' "$W/t")" >>"$W/times"
    done
  done
  for mode in off auto on; do
    printf '%-7s jmx=%-5s CPU %5s ms (median of %d)\n' "$name" "$mode" "$(awk -v m=$mode '$1==m {print $2}' "$W/times" | median)" "$RUNS"
  done
}

uptime
bench demo "$W/demo/classes-hl:$W/rt" demo.Main 2000
bench sleepy "$W/sleepy:$W/rt" Sleepy
uptime
