#!/usr/bin/env bash
# Runs the README's test command (scripts/test.sh) on a fresh clone of this
# repository's HEAD N times in a row while a load generator keeps every core
# busy, and prints each run's result: a test that passes only on an idle
# machine fails here.
#
#   bash scripts/soak-tests.sh [N]          (default 3)
#
# Commit first: a clone has only what is committed. Each run's whole
# output is kept in $SOAK_LOGS (default /tmp/scipis-soak) as run-<i>.log.
set -uo pipefail
cd "$(dirname "$0")/.."
REPO=$(pwd)
N=${1:-3}
LOGS=${SOAK_LOGS:-/tmp/scipis-soak}
mkdir -p "$LOGS"
work=$(mktemp -d /tmp/scipis-soak-clone.XXXXXX)
rev=$(git rev-parse HEAD)  # every run tests this commit, whatever lands meanwhile

# One busy loop per core, at normal priority, for the whole soak.
load=()
for _ in $(seq "$(nproc)"); do
  ( while :; do :; done ) &
  load+=($!)
done
cleanup() { kill "${load[@]}" 2>/dev/null; wait "${load[@]}" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT

echo "soak: $N runs of scripts/test.sh on fresh clones of ${rev:0:12}," \
  "$(date -u +%Y-%m-%dT%H:%M:%SZ), $(nproc) cores busy with ${#load[@]} load loops"
ok=0
for i in $(seq "$N"); do
  rm -rf "$work/clone"
  git clone -q "$REPO" "$work/clone" && git -C "$work/clone" checkout -q "$rev"
  t0=$(date +%s)
  (cd "$work/clone" && bash scripts/test.sh) > "$LOGS/run-$i.log" 2>&1
  rc=$?
  secs=$(( $(date +%s) - t0 ))
  last=$(grep -E '^scipis tests: ' "$LOGS/run-$i.log" | tail -1)
  echo "run $i: exit $rc in ${secs}s, load average $(cut -d' ' -f1-3 /proc/loadavg): ${last:-no result line}"
  grep -E '^=== .*: [0-9]+ passed, [0-9]+ failed$' "$LOGS/run-$i.log" | sed 's/^/    /'
  [ "$rc" -eq 0 ] && ok=$((ok + 1))
done
echo "soak: $ok of $N runs passed"
[ "$ok" -eq "$N" ]
