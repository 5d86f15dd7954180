#!/usr/bin/env bash
# Installs what heapledger's build, tests and benchmarks need on a fresh Debian machine.
# Idempotent: packages already present are skipped, so CI pays for apt only once per machine.
set -euo pipefail

PKGS=(
  # the corpus of real jars the rewriter is proven on
  libguava-java libcommons-lang3-java libjackson2-databind-java libecj-java liblucene4.10-java
  libh2-java libxalan2-java libbatik-java fop sunflow libasm-java libbyte-buddy-java
  libicu4j-java libbcprov-java libclojure-java groovy
  # the Scala compiler, one of the start-up benchmark's programs (bench/startup)
  scala
  # jars the benchmark suite (bench/suite) puts on its workloads' class paths by name; the
  # packages above pull them in today, listed so the suite does not rely on that
  libxerces2-java libxmlgraphics-commons-java libcommons-io-java libcommons-logging-java
  libxml-commons-external-java libfontbox2-java
  # hand-assembled fixtures and the peers we measure against
  jasmin-sable libjava-allocation-instrumenter-java
  # JDK 17 (the default JDK) with javac
  openjdk-17-jdk-headless
  # the top-level build.gradle (the Java side, the Gradle plugin) and the Gradle fixture: Debian's
  # Gradle 4.4.1, patched by Debian to run on JDK 17; JUnit 4 for the fixture projects' tests
  gradle junit4
  # the Maven plugin and the Maven fixture, built offline against Debian's Maven repository
  # (/usr/share/maven-repo, scripts/maven.sh): Maven 3.8.7, its plugin API and descriptor tools,
  # and the plugins of the lifecycle in the versions the poms pin
  maven libmaven3-core-java libmaven-plugin-tools-java libplexus-utils2-java
  libmaven-clean-plugin-java libmaven-resources-plugin-java libmaven-compiler-plugin-java
  libsurefire-java libmaven-jar-plugin-java libmaven-install-plugin-java
  zip unzip
  # heap-dump benchmark: the VisualVM heap library as the peer, GNU time for peak RSS
  visualvm time
  # the HTML report's browser tests (cli/html_browser_test.go) and its render benchmark
  # (bench/htmlreport): headless Chromium driven through chromedriver
  chromium chromium-driver
)

missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps: installing ${missing[*]}" >&2
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
