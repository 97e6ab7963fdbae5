#!/usr/bin/env bash
# Engine-alone builds of one corpus by several index_bench binaries (built
# from different commits or with a change), alternating, so that a shared
# machine's drift hits each alike: one line per build (binary, user s,
# system s, max RSS KiB, wall s, index bytes), then per binary the medians.
#   [IDLE=S] [COLD=1] bash bench/engine/binary_ab.sh CORPUS ROUNDS BINARY...
# IDLE=S sleeps S seconds before each build: as in the side-by-side runs,
# where a Lucene build of 20 s or more comes between two of scipis's, the
# VM hands pages freed since the last build back to the host, and a build
# then pays for the pages it touches first (session 54: about twice the
# system time after 20 s idle on the VM of bench/results).
# COLD=1 drops the page cache before each build (root: sync, then
# drop_caches), so that every file is read from the device.
# A binary: `make index-bench` in a worktree of the commit, then a copy of
# its bench/build/index_bench. Every other round runs the binaries in the
# reverse order: on the VM of bench/results, the build that comes first in
# a round got more system time (pages touched for the first time), so
# that a fixed order favoured the later binaries (session 52).
set -euo pipefail
corpus=$1 rounds=$2
shift 2
for r in $(seq "$rounds"); do
  order=("$@")
  if [ $((r % 2)) -eq 0 ]; then
    order=()
    for ((i = $#; i >= 1; i--)); do order+=("${!i}"); done
  fi
  for b in "${order[@]}"; do
    sleep "${IDLE:-0}"
    if [ -n "${COLD:-}" ]; then
      sync
      echo 3 >/proc/sys/vm/drop_caches
    fi
    out=$({ /usr/bin/time -f 'TIME %U %S %M' "$b" --corpus "$corpus" --runs 1; } 2>&1)
    echo "$b $(echo "$out" | grep '^TIME' | cut -d' ' -f2-) $(echo "$out" | grep -oE '"wall_s":[0-9.]+' | cut -d: -f2) $(echo "$out" | grep -oE '"index_bytes":[0-9]+' | cut -d: -f2)"
  done
done | tee >(cat >&2) | python3 -c '
import statistics, sys
rows = [l.split() for l in sys.stdin if l.strip()]
for b in dict.fromkeys(r[0] for r in rows):
    got = [r for r in rows if r[0] == b]
    u = [float(r[1]) for r in got]; s = [float(r[2]) for r in got]; w = [float(r[4]) for r in got]
    print("%s: %d builds, user s median %.2f (min %.2f), system %.2f, user+system %.2f, wall %.3f (min %.3f)" % (
        b, len(got), statistics.median(u), min(u), statistics.median(s),
        statistics.median([a + c for a, c in zip(u, s)]), statistics.median(w), min(w)))
'
