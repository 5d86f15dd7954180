#!/usr/bin/env bash
# Proves heapledger rewrite on the real jars of scripts/corpus-jars.txt, by hand: rewrites each
# jar with each pass, links every class on JDK 17 and JDK 25 before and after, and prints the
# table (jar, pass, JDK, classes, linked before/after, newly failing).
#
#   rewrite/corpus/check.sh                         every jar, passes identity and probe
#   rewrite/corpus/check.sh -short                  every fourth jar
#   rewrite/corpus/check.sh -corpus.jars=guava.jar,h2.jar -corpus.passes=probe
set -euo pipefail
cd "$(dirname "$0")/../.."
exec go test -count=1 -timeout 30m -run '^TestCorpus$' -v ./rewrite/corpus "$@"
