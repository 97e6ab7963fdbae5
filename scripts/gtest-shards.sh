#!/usr/bin/env bash
# Runs a GoogleTest binary as one shard per core (GTEST_TOTAL_SHARDS), side
# by side, then prints each shard's output in turn; fails if any shard
# failed. The tests share nothing but /tmp scratch directories of their own.
#   scripts/gtest-shards.sh BINARY [ARGS...]
set -uo pipefail
bin=$1; shift
n=$(nproc)
[ "$n" -ge 1 ] || n=1
out=$(mktemp -d /tmp/scipis-shards.XXXXXX)
trap 'rm -rf "$out"' EXIT
pids=()
for ((i = 0; i < n; i++)); do
  GTEST_TOTAL_SHARDS=$n GTEST_SHARD_INDEX=$i "$bin" "$@" >"$out/$i.log" 2>&1 &
  pids+=($!)
done
rc=0
for ((i = 0; i < n; i++)); do
  wait "${pids[$i]}" || rc=1
done
for ((i = 0; i < n; i++)); do
  echo "--- shard $((i + 1)) of $n"
  cat "$out/$i.log"
done
exit $rc
