#!/usr/bin/env bash
# Engine-alone builds alternating between TF-IDF index budgets, so that a
# shared machine's drift hits every budget alike; one JSON line per build
# (index_bench's, with the budget added), then the medians.
#   [IDLE=S] bash bench/engine/budget_ab.sh CORPUS ROUNDS MIB...
# IDLE=S sleeps S seconds before each build, as binary_ab.sh does (a
# build after idle pays for the pages it touches first).
# Needs `make index-bench` first.
set -euo pipefail
cd "$(dirname "$0")/../.."
corpus=$1 rounds=$2
shift 2
for r in $(seq "$rounds"); do
  # Every other round in reverse: the first build of a round gets more
  # system time on this VM (see binary_ab.sh).
  order=("$@")
  if [ $((r % 2)) -eq 0 ]; then
    order=()
    for ((i = $#; i >= 1; i--)); do order+=("${!i}"); done
  fi
  for mib in "${order[@]}"; do
    sleep "${IDLE:-0}"
    bench/build/index_bench --corpus "$corpus" --runs 1 --tfidf-mib "$mib" |
      sed "s/^{/{\"tfidf_mib\":$mib,\"round\":$r,/"
  done
done | tee >(cat >&2) | python3 -c '
import json, statistics, sys
rows = [json.loads(l) for l in sys.stdin]
for mib in sorted({r["tfidf_mib"] for r in rows}, reverse=True):
    got = [r for r in rows if r["tfidf_mib"] == mib]
    print("tfidf_mib %d: %d builds, median %.1f MiB/s, median %.2f CPU-s/GiB, %d segments" % (
        mib, len(got), statistics.median(r["mib_per_s"] for r in got),
        statistics.median(r["cpu_s_per_gib"] for r in got), got[0]["segments"]))'
