#!/usr/bin/env bash
# The scipis index access method against GIN full-text search, RUM and
# Lucene 9 on the same rows, in one run on a throw-away cluster
# (bench/am/README.md: what is measured and how).
#
#   bash bench/am/run.sh --rows N --docs-gib G --results DIR
#        [--parts build,query,write,vacuum] [--systems scipis,gin,rum,lucene] [--threads 2]
#        [--tables lines,docs] [--data /var/tmp/scipis-am] [--seed 42] [--queries 200]
#        [--doc-queries 50] [--shared-buffers 1GB] [--label L]
#        [any other option of am_bench.py: --passes 3, --warmup-budget 120, --pass-budget 300,
#         --query-timeout 10, --spot 20, --insert-batch 100, --lucene-heap 4g, --lucene-warmup 3]
#
# Defaults: --rows 10000000 --docs-gib 1. As root, with scipis installed
# (make install at the top of the repository). Installs postgresql-15-rum
# with apt-get when --systems has rum and it is missing; builds the generator
# (make -C bench) and the Lucene jar (Maven, offline first) when needed.
# Data is generated once under --data by bench/am/prepare.py and reused by
# later runs; the cluster lives under DATA/pg (pg_virtualenv -t, removed at
# the end). DIR/am.md is the report; also am.csv, raw.jsonl, machine.json,
# plans.txt, queries-*.tsv.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
ORIG_ARGS=("$@")
ROWS=10000000 DOCS_GIB=1 RESULTS="" DATA=/var/tmp/scipis-am SEED=42 SYSTEMS=scipis,gin,rum,lucene
THREADS=2 QUERIES=200 DOC_QUERIES=50 SHARED_BUFFERS=1GB
PASS=()
while [ $# -gt 0 ]; do
	case "$1" in
		--rows) ROWS=$2; shift 2 ;;
		--docs-gib) DOCS_GIB=$2; shift 2 ;;
		--data) DATA=$2; shift 2 ;;
		--seed) SEED=$2; shift 2 ;;
		--queries) QUERIES=$2; shift 2 ;;
		--doc-queries) DOC_QUERIES=$2; shift 2 ;;
		--shared-buffers) SHARED_BUFFERS=$2; shift 2 ;;
		--results) RESULTS=$2; PASS+=("$1" "$2"); shift 2 ;;
		--systems) SYSTEMS=$2; PASS+=("$1" "$2"); shift 2 ;;
		--threads) THREADS=$2; PASS+=("$1" "$2"); shift 2 ;;
		-h|--help) sed -n '2,22p' "$0"; exit 0 ;;
		--*) [ $# -ge 2 ] || { echo "run.sh: $1 needs a value" >&2; exit 2; }
			PASS+=("$1" "$2"); shift 2 ;;
		*) echo "run.sh: unknown argument $1" >&2; exit 2 ;;
	esac
done
[ -n "$RESULTS" ] || { echo "run.sh: --results DIR is required" >&2; exit 2; }
log() { echo "[$(date +%T)] $*" >&2; }
umask 022

if [ -z "${SCIPIS_AM_IN_VENV:-}" ]; then
	[ "$(id -u)" = 0 ] || { echo "run.sh: run as root (pg_virtualenv, apt-get, files read by the server)" >&2; exit 1; }
	[ -f "$(pg_config --sharedir)/extension/scipis.control" ] || { echo "run.sh: scipis is not installed (make install)" >&2; exit 1; }
	export SCIPIS_AM_T0=$(date +%s)
	case ",$SYSTEMS," in
		*,rum,*)
			if [ ! -f "$(pg_config --sharedir)/extension/rum.control" ]; then
				log "installing postgresql-15-rum"
				DEBIAN_FRONTEND=noninteractive apt-get install -y -q postgresql-15-rum >&2
			fi ;;
	esac
	case ",$SYSTEMS," in
		*,lucene,*)
			JAR="$REPO/bench/lucene/target/scipis-bench-lucene.jar"
			if [ ! -f "$JAR" ] || [ -n "$(find "$REPO/bench/lucene/src" "$REPO/bench/lucene/pom.xml" -newer "$JAR" -type f)" ]; then
				log "building the Lucene jar"
				(cd "$REPO/bench/lucene" && { mvn -q -o -B package || mvn -q -B package; }) >&2
			fi ;;
	esac
	make -s -C "$REPO/bench" build/gen_logs >&2
	log "data under $DATA (generated once, then reused)"
	MANIFEST=$(python3 "$HERE/prepare.py" --rows "$ROWS" --docs-gib "$DOCS_GIB" --data "$DATA" --seed "$SEED" \
		--queries "$QUERIES" --doc-queries "$DOC_QUERIES" --threads "$THREADS" |
		python3 -c 'import json, sys; print(json.load(sys.stdin)["manifest"])')
	log "prepared: $MANIFEST ($(( $(date +%s) - SCIPIS_AM_T0 )) s)"
	mkdir -p "$RESULTS"
	export SCIPIS_AM_IN_VENV=1 SCIPIS_AM_MANIFEST="$MANIFEST"
	mkdir -p "$DATA/pg" "$DATA/scratch"
	chmod 755 "$DATA" "$DATA/pg" "$DATA/scratch"
	export TMPDIR="$DATA/pg"
	for PGPORT in $(seq 57432 57632); do
		ss -Htln "sport = :$PGPORT" | grep -q . && continue
		[ -e "/var/run/postgresql/.s.PGSQL.$PGPORT.lock" ] && continue
		break
	done
	export PGPORT
	exec pg_virtualenv -t -v 15 -o shared_buffers="$SHARED_BUFFERS" -o work_mem=64MB \
		-o maintenance_work_mem=1GB -o max_wal_size=4GB -o jit=off -o max_parallel_workers_per_gather=0 \
		-o autovacuum=off bash "$0" "${ORIG_ARGS[@]}"
fi

export PGOPTIONS="-c client_min_messages=warning"
exec python3 "$HERE/am_bench.py" --manifest "$SCIPIS_AM_MANIFEST" --scratch "$DATA/scratch" "${PASS[@]}"
