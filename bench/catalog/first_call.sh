#!/usr/bin/env bash
# What a new backend pays for its first scipis call, with and without
# shared_preload_libraries = 'scipis', in one throw-away cluster:
#
#   pg_virtualenv -t bash bench/catalog/first_call.sh OUT_FILE [RUNS]
#
# Each run opens a new connection and times, with psql's \timing, a call
# that loads the library and touches no collection
# (scipis_backend_memory()); the median and p90 over RUNS (40) go to
# OUT_FILE with the date, machine and settings.
set -euo pipefail
OUT=$1 RUNS=${2:-40}
measure() {
	python3 - "$RUNS" <<'PY'
import re, statistics, subprocess, sys
ts = []
for _ in range(int(sys.argv[1])):
    out = subprocess.run(["psql", "-X", "-q", "-c", "\\timing on", "-c", "SELECT 1", "-c",
                          "SELECT count(*) FROM scipis_backend_memory()"],
                         capture_output=True, text=True, check=True).stdout
    ts.append(float(re.findall(r"Time: ([0-9.]+) ms", out)[-1]))
ts.sort()
print("p50 %.2f ms, p90 %.2f ms over %d new backends" % (statistics.median(ts), ts[int(0.9 * len(ts))], len(ts)))
PY
}
psql -X -q -c "CREATE EXTENSION IF NOT EXISTS scipis"
{
	echo "# $(date -u +%FT%TZ); $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores; $(psql -X -t -A -c 'SELECT version()' | cut -d, -f1)"
	echo "first scipis call, library loaded by the backend: $(measure)"
	psql -X -q -c "ALTER SYSTEM SET shared_preload_libraries = 'scipis'"
	pg_ctlcluster "$(psql -X -t -A -c "SELECT current_setting('server_version_num')::int / 10000")" regress restart
	echo "first scipis call, shared_preload_libraries = '$(psql -X -t -A -c 'SHOW shared_preload_libraries')': $(measure)"
} > "$OUT"
cat "$OUT"
