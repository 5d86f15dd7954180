#!/usr/bin/env bash
# Builds every Java-side tool of heapledger into build/ (git-ignored). `make build` runs it.
#
#   scripts/build-java.sh           build every step
#   scripts/build-java.sh verify    build only the named steps (tests use this)
#
# Each step is a function named step_NAME, listed in STEPS in build order; add yours to both.
# A step compiles into a temporary directory and moves the result into place, so a test that
# builds a tool while another test runs it never sees half a jar.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD="$PWD/build"
mkdir -p "$BUILD"

JAVAC="${JAVAC:-javac}"
JAR="${JAR:-jar}"

# compile_jar NAME MAIN-CLASS SRC-DIR [javac options...]: compiles SRC-DIR's .java files for
# Java 8 and writes build/NAME.jar with MAIN-CLASS as its entry point (none when "-").
compile_jar() (
  name=$1 main=$2 src=$3
  shift 3
  tmp=$(mktemp -d "$BUILD/.$name.XXXXXX")
  trap 'rm -rf "$tmp"' EXIT
  find "$src" -name '*.java' >"$tmp/sources"
  "$JAVAC" --release 8 -Xlint:all,-options -Werror -encoding UTF-8 -d "$tmp/classes" "$@" @"$tmp/sources"
  if [ "$main" = "-" ]; then
    "$JAR" --create --file "$tmp/$name.jar" -C "$tmp/classes" .
  else
    "$JAR" --create --file "$tmp/$name.jar" --main-class "$main" -C "$tmp/classes" .
  fi
  mv -f "$tmp/$name.jar" "$BUILD/$name.jar"
  echo "build-java: build/$name.jar" >&2
)

# verify: links every class of a jar on HotSpot and reports per class (tools/verify).
step_verify() { compile_jar verify heapledger.verify.Verify tools/verify/src; }

# runtime: the heapledger runtime that rewritten code calls (runtime-java/rt, no dependencies).
step_runtime() { compile_jar heapledger-runtime - runtime-java/rt/src; }

# probe: the runtime of the probe pass (runtime-java/probe, no dependencies).
step_probe() { compile_jar heapledger-probe - runtime-java/probe/src; }

# agent: the -javaagent jar, heapledger-agent.jar: the agent (runtime-java/agent) and the runtime
# classes in one jar that puts itself on the bootstrap class path (Boot-Class-Path names the jar,
# so it must keep this file name; `heapledger agent` copies it under that name).
step_agent() (
  [ -f "$BUILD/heapledger-runtime.jar" ] || step_runtime
  tmp=$(mktemp -d "$BUILD/.agent.XXXXXX")
  trap 'rm -rf "$tmp"' EXIT
  find runtime-java/agent/src -name '*.java' >"$tmp/sources"
  "$JAVAC" --release 8 -Xlint:all,-options -Werror -encoding UTF-8 -cp "$BUILD/heapledger-runtime.jar" \
    -d "$tmp/classes" @"$tmp/sources"
  (cd "$tmp/classes" && "$JAR" --extract --file "$BUILD/heapledger-runtime.jar" && rm -rf META-INF)
  "$JAR" --create --file "$tmp/heapledger-agent.jar" --manifest runtime-java/agent/MANIFEST.MF -C "$tmp/classes" .
  mv -f "$tmp/heapledger-agent.jar" "$BUILD/heapledger-agent.jar"
  echo "build-java: build/heapledger-agent.jar" >&2
)

STEPS=(verify runtime probe agent)

if ! command -v "$JAVAC" >/dev/null; then
  echo "build-java: $JAVAC not found; run scripts/install-deps.sh (it installs JDK 17)" >&2
  exit 1
fi
if [ $# -gt 0 ]; then
  STEPS=("$@")
fi
for s in "${STEPS[@]}"; do
  if ! declare -F "step_$s" >/dev/null; then
    echo "build-java: unknown step $s" >&2
    exit 1
  fi
  "step_$s"
done
