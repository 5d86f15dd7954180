#!/usr/bin/env bash
# Builds the Java side of heapledger into build/ (git-ignored) with the top-level build.gradle and
# Debian's Gradle, offline. `make build` runs it.
#
#   scripts/build-java.sh           build every jar
#   scripts/build-java.sh verify    build only the named ones (tests use this)
#
# The names are the projects of settings.gradle: verify (build/verify.jar), runtime, probe,
# agent, gradle-plugin (build/heapledger-NAME.jar). Each jar reaches build/ through a temporary
# and a rename, so a test that builds a tool while another test runs it never sees half a jar.
#
# Gradle's daemon serves the builds (it makes a build of nothing new take a second, not ten);
# GRADLE_USER_HOME chooses whose daemons and caches, as for any Gradle build.
set -euo pipefail
cd "$(dirname "$0")/.."

GRADLE="${GRADLE:-gradle}"
if ! command -v "$GRADLE" >/dev/null; then
  echo "build-java: $GRADLE not found; run scripts/install-deps.sh (it installs Debian's gradle)" >&2
  exit 1
fi

PROJECTS=(verify runtime probe agent gradle-plugin)
if [ $# -gt 0 ]; then
  PROJECTS=("$@")
fi
tasks=()
for p in "${PROJECTS[@]}"; do
  case " verify runtime probe agent gradle-plugin " in
    *" $p "*) tasks+=(":$p:dist") ;;
    *) echo "build-java: unknown project $p (verify, runtime, probe, agent, gradle-plugin)" >&2; exit 1 ;;
  esac
done

# Debian's gradle script prints `java -version` on stderr before every build: only what the
# build says is worth passing on, and a failure shows it all.
log=$(mktemp)
trap 'rm -f "$log"' EXIT
if ! "$GRADLE" --offline --quiet --console=plain "${tasks[@]}" >"$log" 2>&1; then
  cat "$log" >&2
  exit 1
fi
grep -v -e '^openjdk version' -e '^OpenJDK ' "$log" >&2 || true
for p in "${PROJECTS[@]}"; do
  case $p in
    verify) echo "build-java: build/verify.jar" >&2 ;;
    *) echo "build-java: build/heapledger-$p.jar" >&2 ;;
  esac
done
