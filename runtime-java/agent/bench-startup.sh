#!/usr/bin/env bash
# Startup cost of the agent (docs/agent.md): time to first output and total time of one program
# run plain, offline-rewritten (heapledger rewrite --pass count), under the agent without its
# transform cache (agent), with an empty cache (first: a first run, which fills it), with the
# cache that first run filled (cached: a second run), under the agent with --jdk (JDK classes
# rewritten too) and under the agent with --object-init (java.lang.Object's constructor hooked),
# N runs each (median), plus the agent's per-class transform latency (its --stats line). The
# agent, jdk and objinit rows use no cache, so every run of theirs is a first run.
#
#   runtime-java/agent/bench-startup.sh [RUNS]      (default 5; needs `make build` and a JDK)
#
# Programs: the demo (fixtures/demo, 2000 orders), ecj (Debian libecj-java) compiling the
# demo's sources, and a one-line Clojure script (Debian libclojure-java: about 1,800 classes
# load, most of them the compiled clojure.core). All runs of one program take turns, so
# machine load hits them alike.
set -euo pipefail
cd "$(dirname "$0")/../.."
RUNS=${1:-5}
HL=$PWD/bin/heapledger
RT=$PWD/build/heapledger-runtime.jar
ECJ=/usr/share/java/ecj.jar
[ -x "$HL" ] && [ -f "$RT" ] && [ -f build/heapledger-agent.jar ] || { echo "run make build first" >&2; exit 1; }
export HEAPLEDGER_AGENT=$PWD/build/heapledger-agent.jar
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
MODES="plain offline agent first cached jdk objinit"

# first_and_total CMD...: prints "FIRST_MS TOTAL_MS" (first byte on stdout or stderr).
first_and_total() {
  local start first end
  start=$(date +%s%N)
  "$@" 2>&1 | { head -c1 >/dev/null; date +%s%N >"$W/first"; cat >/dev/null; }
  end=$(date +%s%N)
  first=$(cat "$W/first")
  echo "$(((first - start) / 1000000)) $(((end - start) / 1000000))"
}

median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

# bench NAME: runs the commands plain_cmd, offline_cmd, agent_cmd (arrays) RUNS times.
bench() {
  local name=$1 mode
  : >"$W/times"
  for ((i = 0; i < RUNS; i++)); do
    for mode in $MODES; do
      local -n cmd="${mode}_cmd"
      [ "$mode" = first ] && rm -rf "$W/cache-first"
      echo "$mode $(first_and_total "${cmd[@]}")" >>"$W/times"
    done
  done
  for mode in $MODES; do
    printf '%-6s %-8s first output %5s ms   total %5s ms\n' "$name" "$mode" \
      "$(awk -v m=$mode '$1==m {print $2}' "$W/times" | median)" "$(awk -v m=$mode '$1==m {print $3}' "$W/times" | median)"
  done
  "${stats_cmd[@]}" 2>&1 >/dev/null | grep 'classes sent' | sed "s/^heapledger agent: /$name   agent    /"
  "${cachedstats_cmd[@]}" 2>&1 >/dev/null | grep 'classes sent' | sed "s/^heapledger agent: /$name   cached   /"
  "${jdkstats_cmd[@]}" 2>&1 >/dev/null | grep 'classes sent' | sed "s/^heapledger agent: /$name   jdk      /"
}

# agents_with_cache PROG FLAGS...: the agents of the first and cached rows. first's cache is
# emptied before each of its runs; cached's is filled once, before the runs, and shared by
# the agent that prints --stats.
agents_with_cache() {
  local prog=$1
  shift
  "$HL" agent "$@" --cache-dir "$W/cache-first" -o "$W/first-$prog" >/dev/null
  "$HL" agent "$@" --cache-dir "$W/cache-$prog" -o "$W/cached-$prog" >/dev/null
  "$HL" agent "$@" --cache-dir "$W/cache-$prog" --stats -o "$W/cached-$prog-stats" >/dev/null
}

"$HL" demo --dir "$W/demo" >/dev/null
"$HL" agent --accounts demo.web,demo.orders,demo.reports --no-cache -o "$W/agent-demo" >/dev/null
"$HL" agent --accounts demo.web,demo.orders,demo.reports --stats --no-cache -o "$W/agent-demo-stats" >/dev/null
plain_cmd=(java -Dheapledger.snapshot.dir="$W/s" -cp "$W/demo/classes" demo.Main 2000)
offline_cmd=(java -Dheapledger.snapshot.dir="$W/s" -cp "$W/demo/classes-hl:$RT" demo.Main 2000)
agent_cmd=("$W/agent-demo/heapledger-java" -Dheapledger.snapshot.dir="$W/s" -cp "$W/demo/classes" demo.Main 2000)
stats_cmd=("$W/agent-demo-stats/heapledger-java" -Dheapledger.snapshot.dir="$W/s" -cp "$W/demo/classes" demo.Main 2000)
agents_with_cache demo --accounts demo.web,demo.orders,demo.reports
first_cmd=("$W/first-demo/heapledger-java" -Dheapledger.snapshot.dir="$W/s" -cp "$W/demo/classes" demo.Main 2000)
cached_cmd=("$W/cached-demo/heapledger-java" -Dheapledger.snapshot.dir="$W/s" -cp "$W/demo/classes" demo.Main 2000)
cachedstats_cmd=("$W/cached-demo-stats/heapledger-java" -Dheapledger.snapshot.dir="$W/s" -cp "$W/demo/classes" demo.Main 2000)
"${cached_cmd[@]}" >/dev/null 2>&1; sleep 3 # fills the cache of the cached rows (written after the JVM exits)
"$HL" agent --jdk --accounts demo.web,demo.orders,demo.reports --no-cache -o "$W/jdk-demo" >/dev/null
"$HL" agent --jdk --accounts demo.web,demo.orders,demo.reports --stats --no-cache -o "$W/jdk-demo-stats" >/dev/null
jdk_cmd=("$W/jdk-demo/heapledger-java" -Dheapledger.snapshot.dir="$W/s" -cp "$W/demo/classes" demo.Main 2000)
jdkstats_cmd=("$W/jdk-demo-stats/heapledger-java" -Dheapledger.snapshot.dir="$W/s" -cp "$W/demo/classes" demo.Main 2000)
"$HL" agent --object-init --accounts demo.web,demo.orders,demo.reports --no-cache -o "$W/objinit-demo" >/dev/null
objinit_cmd=("$W/objinit-demo/heapledger-java" -Dheapledger.snapshot.dir="$W/s" -cp "$W/demo/classes" demo.Main 2000)
bench demo

if [ -f "$ECJ" ]; then
  "$HL" rewrite --pass count --accounts 'org.eclipse.jdt.*' "$ECJ" -o "$W/ecj-hl.jar" >/dev/null 2>&1
  "$HL" agent --accounts 'org.eclipse.jdt.*' --no-cache -o "$W/agent-ecj" >/dev/null
  "$HL" agent --accounts 'org.eclipse.jdt.*' --stats --no-cache -o "$W/agent-ecj-stats" >/dev/null
  srcs=$(find "$W/demo/src" -name '*.java' | tr '\n' ' ')
  ecj_args=(org.eclipse.jdt.internal.compiler.batch.Main -verbose -1.8 -nowarn -d "$W/ecj-out" $srcs)
  plain_cmd=(java -Dheapledger.snapshot.dir="$W/s" -cp "$ECJ" "${ecj_args[@]}")
  offline_cmd=(java -Dheapledger.snapshot.dir="$W/s" -cp "$W/ecj-hl.jar:$RT" "${ecj_args[@]}")
  agent_cmd=("$W/agent-ecj/heapledger-java" -Dheapledger.snapshot.dir="$W/s" -cp "$ECJ" "${ecj_args[@]}")
  stats_cmd=("$W/agent-ecj-stats/heapledger-java" -Dheapledger.snapshot.dir="$W/s" -cp "$ECJ" "${ecj_args[@]}")
  agents_with_cache ecj --accounts 'org.eclipse.jdt.*'
  first_cmd=("$W/first-ecj/heapledger-java" -Dheapledger.snapshot.dir="$W/s" -cp "$ECJ" "${ecj_args[@]}")
  cached_cmd=("$W/cached-ecj/heapledger-java" -Dheapledger.snapshot.dir="$W/s" -cp "$ECJ" "${ecj_args[@]}")
  cachedstats_cmd=("$W/cached-ecj-stats/heapledger-java" -Dheapledger.snapshot.dir="$W/s" -cp "$ECJ" "${ecj_args[@]}")
  "${cached_cmd[@]}" >/dev/null 2>&1; sleep 3 # fills the cache of the cached rows (written after the JVM exits)
  "$HL" agent --jdk --accounts 'org.eclipse.jdt.*' --no-cache -o "$W/jdk-ecj" >/dev/null
  "$HL" agent --jdk --accounts 'org.eclipse.jdt.*' --stats --no-cache -o "$W/jdk-ecj-stats" >/dev/null
  jdk_cmd=("$W/jdk-ecj/heapledger-java" -Dheapledger.snapshot.dir="$W/s" -cp "$ECJ" "${ecj_args[@]}")
  jdkstats_cmd=("$W/jdk-ecj-stats/heapledger-java" -Dheapledger.snapshot.dir="$W/s" -cp "$ECJ" "${ecj_args[@]}")
  "$HL" agent --object-init --accounts 'org.eclipse.jdt.*' --no-cache -o "$W/objinit-ecj" >/dev/null
  objinit_cmd=("$W/objinit-ecj/heapledger-java" -Dheapledger.snapshot.dir="$W/s" -cp "$ECJ" "${ecj_args[@]}")
  bench ecj
else
  echo "ecj: $ECJ missing (scripts/install-deps.sh installs libecj-java)" >&2
fi

CLJ=/usr/share/java/clojure.jar
# The jars clojure.jar's manifest names on its Class-Path.
SPECS=(/usr/share/maven-repo/org/clojure/spec.alpha/debian/spec.alpha-debian.jar
  /usr/share/maven-repo/org/clojure/core.specs.alpha/debian/core.specs.alpha-debian.jar)
if [ -f "$CLJ" ] && [ -f "${SPECS[0]}" ] && [ -f "${SPECS[1]}" ]; then
  clj_hl=""
  for j in "$CLJ" "${SPECS[@]}"; do
    "$HL" rewrite --pass count --accounts '*' "$j" -o "$W/hl-$(basename "$j")" >/dev/null 2>&1
    clj_hl="$clj_hl$W/hl-$(basename "$j"):"
  done
  echo '(println (reduce + (range 1000)))' >"$W/sum.clj"
  "$HL" agent --accounts '*' --no-cache -o "$W/agent-clj" >/dev/null
  "$HL" agent --accounts '*' --stats --no-cache -o "$W/agent-clj-stats" >/dev/null
  plain_cmd=(java -Dheapledger.snapshot.dir="$W/s" -cp "$CLJ" clojure.main "$W/sum.clj")
  offline_cmd=(java -Dheapledger.snapshot.dir="$W/s" -cp "$clj_hl$RT" clojure.main "$W/sum.clj")
  agent_cmd=("$W/agent-clj/heapledger-java" -Dheapledger.snapshot.dir="$W/s" -cp "$CLJ" clojure.main "$W/sum.clj")
  stats_cmd=("$W/agent-clj-stats/heapledger-java" -Dheapledger.snapshot.dir="$W/s" -cp "$CLJ" clojure.main "$W/sum.clj")
  agents_with_cache clj --accounts '*'
  first_cmd=("$W/first-clj/heapledger-java" -Dheapledger.snapshot.dir="$W/s" -cp "$CLJ" clojure.main "$W/sum.clj")
  cached_cmd=("$W/cached-clj/heapledger-java" -Dheapledger.snapshot.dir="$W/s" -cp "$CLJ" clojure.main "$W/sum.clj")
  cachedstats_cmd=("$W/cached-clj-stats/heapledger-java" -Dheapledger.snapshot.dir="$W/s" -cp "$CLJ" clojure.main "$W/sum.clj")
  "${cached_cmd[@]}" >/dev/null 2>&1; sleep 3 # fills the cache of the cached rows (written after the JVM exits)
  "$HL" agent --jdk --accounts '*' --no-cache -o "$W/jdk-clj" >/dev/null
  "$HL" agent --jdk --accounts '*' --stats --no-cache -o "$W/jdk-clj-stats" >/dev/null
  jdk_cmd=("$W/jdk-clj/heapledger-java" -Dheapledger.snapshot.dir="$W/s" -cp "$CLJ" clojure.main "$W/sum.clj")
  jdkstats_cmd=("$W/jdk-clj-stats/heapledger-java" -Dheapledger.snapshot.dir="$W/s" -cp "$CLJ" clojure.main "$W/sum.clj")
  "$HL" agent --object-init --accounts '*' --no-cache -o "$W/objinit-clj" >/dev/null
  objinit_cmd=("$W/objinit-clj/heapledger-java" -Dheapledger.snapshot.dir="$W/s" -cp "$CLJ" clojure.main "$W/sum.clj")
  bench clj
else
  echo "clojure: $CLJ or its spec jars missing (scripts/install-deps.sh installs libclojure-java)" >&2
fi
