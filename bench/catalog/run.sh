#!/usr/bin/env bash
# Millions of files and hundreds of connections (issue 12), in one run on a
# throw-away cluster: indexing (scipis, Lucene, updatedb), per-backend memory
# and the first search, 64 fresh connections through pgbench, metadata
# predicates against find, scipis_locate against plocate.
#
#   bash bench/catalog/run.sh (--corpus DIR | --files N [--seed 42]) --results OUT_DIR [--label L]
#        [--parts index,memory,connections,metadata,locate] [--data /var/tmp/scipis-catalog]
#        [--clients 64] [any other option of catalog_bench.py: --threads, --index-runs,
#         --pgbench-threads, --duration, --reconnect, --memory-reps, --runs, --locate-runs,
#         --lucene-heap] [--preload]
#
# --preload starts the cluster with shared_preload_libraries = 'scipis', so
# that new backends are forked with the library loaded (each would load it
# on its first scipis call otherwise).
#
# --files N makes (or reuses: make_tree.py is idempotent) the tree
# DATA/tree-<N>-seed<S> with bench/catalog/make_tree.py. As root, with
# scipis installed and the Lucene jar built (make -C bench lucene; without
# it Lucene is skipped). The cluster lives under --data (pg_virtualenv -t
# with TMPDIR there), on a free port, with max_connections = clients + 36.
# OUT_DIR/catalog.md is the report (see catalog_bench.py for every file).
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ORIG_ARGS=("$@")
CORPUS="" FILES="" SEED=42 DATA=/var/tmp/scipis-catalog CLIENTS=64 RESULTS=""
PASS=() PRELOAD=()
while [ $# -gt 0 ]; do
	case "$1" in
		--corpus) CORPUS=$2; shift 2 ;;
		--files) FILES=$2; shift 2 ;;
		--seed) SEED=$2; shift 2 ;;
		--data) DATA=$2; shift 2 ;;
		--results) RESULTS=$2; PASS+=("$1" "$2"); shift 2 ;;
		--clients) CLIENTS=$2; PASS+=("$1" "$2"); shift 2 ;;
		--reconnect) PASS+=("$1"); shift ;;
		--preload) PRELOAD=(-o shared_preload_libraries=scipis); shift ;;
		--*) [ $# -ge 2 ] || { echo "run.sh: $1 needs a value" >&2; exit 2; }
			PASS+=("$1" "$2"); shift 2 ;;
		*) echo "run.sh: unknown argument $1" >&2; exit 2 ;;
	esac
done
[ -n "$RESULTS" ] || { echo "run.sh: --results OUT_DIR is required" >&2; exit 2; }
log() { echo "[$(date +%T)] $*" >&2; }
umask 022

if [ -z "${SCIPIS_CATALOG_IN_VENV:-}" ]; then
	[ "$(id -u)" = 0 ] || { echo "run.sh: run as root (pg_virtualenv, /proc of the backends, chown of the tree)" >&2; exit 1; }
	[ -f "$(pg_config --sharedir)/extension/scipis.control" ] || { echo "run.sh: scipis is not installed" >&2; exit 1; }
	mkdir -p "$DATA"
	chmod 755 "$DATA"
	if [ -z "$CORPUS" ]; then
		[ -n "$FILES" ] || { echo "run.sh: give --corpus DIR or --files N" >&2; exit 2; }
		CORPUS="$DATA/tree-$FILES-seed$SEED"
		log "tree: $CORPUS"
		python3 "$HERE/make_tree.py" --files "$FILES" --seed "$SEED" --out "$CORPUS" >&2
	fi
	CORPUS=$(cd "$CORPUS" && pwd)
	mkdir -p "$RESULTS"
	export SCIPIS_CATALOG_IN_VENV=1
	mkdir -p "$DATA/pg" "$DATA/scratch"
	chmod 755 "$DATA/pg"
	export TMPDIR="$DATA/pg"
	for PGPORT in $(seq 57432 57632); do
		ss -Htln "sport = :$PGPORT" | grep -q . && continue
		[ -e "/var/run/postgresql/.s.PGSQL.$PGPORT.lock" ] && continue
		break
	done
	export PGPORT
	exec pg_virtualenv -t -v 15 -o max_connections=$((CLIENTS + 36)) -o jit=off \
		-o max_parallel_workers_per_gather=0 "${PRELOAD[@]}" \
		bash "$0" "${ORIG_ARGS[@]}" --corpus "$CORPUS"
fi

export PGOPTIONS="-c client_min_messages=warning"
exec python3 "$HERE/catalog_bench.py" --corpus "$CORPUS" --scratch "$DATA/scratch" "${PASS[@]}"
