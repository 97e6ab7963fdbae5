#!/usr/bin/env bash
# Installs what is missing, builds, and runs every test of scipis: engine
# unit tests (plain, then under ASan and UBSan), then pg_regress, pgTAP and
# the oracle suites on a throwaway cluster, then the TAP (perl) tests that
# manage clusters of their own.
set -uo pipefail
cd "$(dirname "$0")/.."
REPO=$(pwd)
bash scripts/install-deps.sh || exit 1
t_build=$SECONDS
bash scripts/build.sh || exit 1
echo "=== build: $((SECONDS - t_build)) s"

# Each suite's output is kept and its individual tests counted
# (scripts/count_tests.py); the last line sums them over every suite.
logs=$(mktemp -d /tmp/scipis-test-logs.XXXXXX)
trap 'rm -rf "$logs"' EXIT
passed=0; failed=0; failures=()
suite() {  # suite NAME COMMAND...
  local name=$1; shift
  local log="$logs/$(echo "$name" | tr -c 'a-zA-Z0-9\n' _).log"
  local t0=$SECONDS
  echo "=== $name"
  "$@" 2>&1 | tee "$log"
  local rc=${PIPESTATUS[0]}
  read -r p f < <(python3 scripts/count_tests.py "$log" "$rc")
  echo "=== $name: $p passed, $f failed ($((SECONDS - t0)) s)"
  passed=$((passed + p)); failed=$((failed + f))
  [ "$rc" -eq 0 ] && [ "$f" -eq 0 ] || failures+=("$name")
}

suite "engine unit tests" make -s -j"$(nproc)" engine-check
suite "engine unit tests under ASan and UBSan" make -s -j"$(nproc)" engine-asan
# The server tests index the sample `make install` put beside the
# extension's files (readable by the server's OS user).
unset SCIPIS_SAMPLE
suite "server tests (pg_regress, pgTAP, oracles)" \
  pg_virtualenv -t -o max_worker_processes=16 bash scripts/server-tests.sh
suite "TAP tests (crash recovery, cancel)" bash scripts/tap-tests.sh

echo
[ ${#failures[@]} -gt 0 ] && echo "failed suites: ${failures[*]}"
echo "scipis tests: $passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ ${#failures[@]} -eq 0 ]
