#!/usr/bin/env bash
# Installs what is missing, builds, and runs every test of scipis: engine
# unit tests (plain, then under ASan and UBSan), then pg_regress, pgTAP and
# the oracle suites on a throwaway cluster, then the TAP (perl) tests that
# manage clusters of their own.
set -uo pipefail
cd "$(dirname "$0")/.."
REPO=$(pwd)
bash scripts/install-deps.sh || exit 1
bash scripts/build.sh || exit 1

passed=0; failed=0; failures=()
suite() {  # suite NAME COMMAND...
  local name=$1; shift
  echo "=== $name"
  if "$@"; then passed=$((passed + 1)); else failed=$((failed + 1)); failures+=("$name"); fi
}

suite "engine unit tests" make -s engine-check
suite "engine unit tests under ASan and UBSan" make -s -j"$(nproc)" engine-asan
# The server runs as postgres, which may not be able to read this checkout
# (under /root, say): the tests index a world-readable copy of the samples.
SCIPIS_SAMPLE=$(mktemp -d /tmp/scipis-sample.XXXXXX)
cp -r "$REPO/data/loghub-2k" "$SCIPIS_SAMPLE/"
chmod -R a+rX "$SCIPIS_SAMPLE"
export SCIPIS_SAMPLE="$SCIPIS_SAMPLE/loghub-2k"
trap 'rm -rf "$(dirname "$SCIPIS_SAMPLE")"' EXIT
suite "server tests (pg_regress, pgTAP, oracles)" \
  pg_virtualenv -t -o max_worker_processes=16 bash scripts/server-tests.sh
suite "TAP tests (crash recovery, cancel)" bash scripts/tap-tests.sh

echo
[ ${#failures[@]} -gt 0 ] && echo "failed suites: ${failures[*]}"
echo "scipis tests: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
