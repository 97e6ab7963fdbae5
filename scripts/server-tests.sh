#!/usr/bin/env bash
# Runs inside pg_virtualenv (PG* variables name a throwaway server).
set -uo pipefail
shopt -s nullglob
cd "$(dirname "$0")/.."
rc=0
PGC=/usr/lib/postgresql/15/bin/pg_config
mkdir -p build/regress
echo "--- pg_regress"
make -s installcheck PG_CONFIG=$PGC || { rc=1; cat build/regress/regression.diffs 2>/dev/null | head -200; }
echo "--- pgTAP"
psql -X -q -c "CREATE EXTENSION IF NOT EXISTS pgtap" || rc=1
pg_prove -q test/pgtap/*.sql || rc=1
for t in test/*/*_test.py; do
  echo "--- $t"
  python3 "$t" || rc=1
done
exit $rc
