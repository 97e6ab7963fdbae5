#!/usr/bin/env bash
# The engine tests too long for every run (a million files written and
# indexed): builds the engine tests and runs those, with SCIPIS_LONG_TESTS.
#   bash scripts/long-tests.sh
set -euo pipefail
cd "$(dirname "$0")/.."
make -s -j"$(nproc)" test/engine/engine_tests
SCIPIS_LONG_TESTS=1 test/engine/engine_tests --gtest_filter='*AMillion*'
