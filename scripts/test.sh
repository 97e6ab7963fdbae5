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
# suite NAME COMMAND...: runs it, shows its output, counts it.
suite() {
  local name=$1; shift
  local log="$logs/$(echo "$name" | tr -c 'a-zA-Z0-9\n' _).log"
  local t0=$SECONDS
  echo "=== $name"
  "$@" 2>&1 | tee "$log"
  count "$name" "${PIPESTATUS[0]}" "$log" $((SECONDS - t0))
}
count() {  # count NAME RC LOG SECONDS
  read -r p f < <(python3 scripts/count_tests.py "$3" "$2")
  echo "=== $1: $p passed, $f failed ($4 s)"
  passed=$((passed + p)); failed=$((failed + f))
  [ "$2" -eq 0 ] && [ "$f" -eq 0 ] || failures+=("$1")
}
# suite_start NAME COMMAND... runs it beside what follows, until suite_end
# NAME shows its output and counts it: for suites that mostly wait.
declare -A bg_pid bg_t0
suite_start() {
  local name=$1; shift
  local log="$logs/$(echo "$name" | tr -c 'a-zA-Z0-9\n' _).log"
  bg_t0[$name]=$SECONDS
  ( "$@" >"$log" 2>&1 ) &
  bg_pid[$name]=$!
}
suite_end() {
  local name=$1 rc=0
  local log="$logs/$(echo "$name" | tr -c 'a-zA-Z0-9\n' _).log"
  wait "${bg_pid[$name]}" || rc=$?
  echo "=== $name (run beside the suites before)"
  cat "$log"
  count "$name" "$rc" "$log" $((SECONDS - ${bg_t0[$name]}))
}

suite "engine unit tests" make -s -j"$(nproc)" engine-check
suite "engine unit tests under ASan and UBSan" make -s -j"$(nproc)" engine-asan
# The server tests index the sample `make install` put beside the
# extension's files (readable by the server's OS user). The TAP tests,
# with clusters and ports of their own, mostly wait for servers: they run
# beside them.
unset SCIPIS_SAMPLE
suite_start "TAP tests (crash recovery, restarts, standbys)" bash scripts/tap-tests.sh
suite "server tests (pg_regress, pgTAP, oracles)" \
  pg_virtualenv -t -o max_worker_processes=16 bash scripts/server-tests.sh
suite_end "TAP tests (crash recovery, restarts, standbys)"

echo
[ ${#failures[@]} -gt 0 ] && echo "failed suites: ${failures[*]}"
echo "scipis tests: $passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ ${#failures[@]} -eq 0 ]
