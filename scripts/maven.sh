#!/usr/bin/env bash
# Runs Debian's Maven offline against Debian's Maven repository, with a local repository of the
# project's: build/m2, or HEAPLEDGER_M2 (the fixture tests give each run its own).
#
#   scripts/maven.sh -f plugins/maven/pom.xml install    builds the Maven plugin into it (make build)
#   scripts/maven.sh -f fixtures/buildplugins/maven/pom.xml test
#
# Maven's offline mode refuses every remote repository, file: ones included, unless the file:
# protocol is allowed (aether.offline.protocols); scripts/maven-debian-settings.xml makes
# /usr/share/maven-repo the only one. So nothing is downloaded, and CI's clean machine needs only
# the Debian packages scripts/install-deps.sh installs.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
MVN="${MVN:-mvn}"
if ! command -v "$MVN" >/dev/null; then
  echo "maven: $MVN not found; run scripts/install-deps.sh (it installs Debian's maven)" >&2
  exit 1
fi
repo="${HEAPLEDGER_M2:-$root/build/m2}"
mkdir -p "$repo"
exec "$MVN" --offline --batch-mode -Dstyle.color=never -s "$root/scripts/maven-debian-settings.xml" \
  -Daether.offline.protocols=file -Dmaven.repo.local="$repo" "$@"
