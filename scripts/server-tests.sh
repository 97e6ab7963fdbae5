#!/usr/bin/env bash
# Runs inside pg_virtualenv (PG* variables name a throwaway server).
set -uo pipefail
shopt -s nullglob
cd "$(dirname "$0")/.."
rc=0
PGC=/usr/lib/postgresql/15/bin/pg_config
mkdir -p build/regress
# Each part's seconds, to see where the run's time goes.
t0=$SECONDS
took() { echo "--- $1: $((SECONDS - t0)) s"; t0=$SECONDS; }
echo "--- pg_regress"
make -s installcheck PG_CONFIG=$PGC || { rc=1; cat build/regress/regression.diffs 2>/dev/null | head -200; }
took pg_regress
echo "--- pgTAP"
psql -X -q -c "CREATE EXTENSION IF NOT EXISTS pgtap" || rc=1
pg_prove -q test/pgtap/*.sql || rc=1
took pgTAP
for t in test/*/*_test.py; do
  echo "--- $t"
  python3 "$t" || rc=1
  took "$t"
done
exit $rc
