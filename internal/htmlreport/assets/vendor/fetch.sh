#!/usr/bin/env bash
# Fetches the JavaScript libraries the HTML report embeds (README.md beside this script says
# which and why) from npm, checks each package against the integrity npm recorded for it, and
# copies the minified files and licences here. Development time only: the built binary embeds
# what is committed and needs nothing. Run it after changing a version below, then commit.
set -euo pipefail
cd "$(dirname "$0")"

# package@version  sha512 integrity (npm view PACKAGE@VERSION dist.integrity)
PACKAGES=(
  "d3@7.9.2 sha512-ZKb/mONPVKzaO5UlcWcwN8bS4ezvQaYu+bsou+XgNABdGC800kwH651ADTbbTxMPHW13UlvbQafdmJQDk1w7Mg=="
  "d3-flame-graph@5.0.0 sha512-ALZQ4at8Dex8HCoj9D5p5TY6gLNEc2vAZAy+NKO/6GLEfhYJmGxYuRClO6RPoplndyOHxQTPipdlGeMggkjtnQ=="
  "uplot@1.6.32 sha512-KIMVnG68zvu5XXUbC4LQEPnhwOxBuLyW1AHtpm6IKTXImkbLgkMy+jabjLgSLMasNuGGzQm/ep3tOkyTxpiQIw=="
)

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for entry in "${PACKAGES[@]}"; do
  spec=${entry% *} want=${entry#* }
  tgz=$(cd "$work" && npm pack --silent "$spec")
  got="sha512-$(openssl dgst -sha512 -binary "$work/$tgz" | base64 -w0)"
  if [ "$got" != "$want" ]; then
    echo "fetch.sh: $spec: integrity $got, want $want" >&2
    exit 1
  fi
  mkdir -p "$work/${spec%@*}"
  tar xzf "$work/$tgz" -C "$work/${spec%@*}"
done

cp "$work/d3/package/dist/d3.min.js" d3.min.js
cp "$work/d3/package/LICENSE" LICENSE.d3
cp "$work/d3-flame-graph/package/dist/d3-flamegraph.umd.min.js" d3-flamegraph.umd.min.js
cp "$work/d3-flame-graph/package/LICENSE" LICENSE.d3-flame-graph
cp "$work/uplot/package/dist/uPlot.iife.min.js" "$work/uplot/package/dist/uPlot.min.css" .
cp "$work/uplot/package/LICENSE" LICENSE.uplot
echo "fetch.sh: updated $(ls | tr '\n' ' ')"
