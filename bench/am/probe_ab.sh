#!/usr/bin/env bash
# A/B rounds of bench/am/probe.sql's probe() between scipis builds: each
# round installs each given scipis.so in turn (by rename, so that running
# backends keep theirs) and times the kind in a new session, after a
# warm-up of two passes. The server's PG* variables as for psql.
#   bash bench/am/probe_ab.sh KIND MODE PASSES ROUNDS A.so B.so ...
set -euo pipefail
kind=$1 mode=$2 passes=$3 rounds=$4
shift 4
lib=$(pg_config --pkglibdir)/scipis.so
for r in $(seq "$rounds"); do
	for so in "$@"; do
		cp "$so" "$lib.new" && mv "$lib.new" "$lib"
		out=$(psql -X -At -c "SELECT * FROM probe('$kind','$mode',2)" \
			-c "SELECT * FROM probe('$kind','$mode',$passes)" 2>/dev/null | tail -1)
		echo "round $r $(basename "$so") p50|mean us: $out"
	done
done
