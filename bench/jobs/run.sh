#!/usr/bin/env bash
# Indexing through the job pool (issue 14), in one run on a throw-away
# cluster preloaded with scipis: the engine alone (bench/build/index_bench,
# what a backend ran before jobs: the same pipeline in the caller's
# process), scipis_index through a job worker, and a job stopped with a
# fast shutdown at about half its bytes and resumed after the restart.
#
#   bash bench/jobs/run.sh --results OUT_DIR [--size-mib 1024] [--rounds 3]
#        [--corpus DIR] [--data /var/tmp/scipis-jobs]
#
# As root, with scipis installed and bench/build/{gen_logs,index_bench}
# built (make -C bench). OUT_DIR/jobs.md is the report, raw.jsonl the runs.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
RESULTS="" SIZE=1024 ROUNDS=3 CORPUS="" DATA=/var/tmp/scipis-jobs
while [ $# -gt 0 ]; do
	case "$1" in
		--results) RESULTS=$2; shift 2 ;;
		--size-mib) SIZE=$2; shift 2 ;;
		--rounds) ROUNDS=$2; shift 2 ;;
		--corpus) CORPUS=$2; shift 2 ;;
		--data) DATA=$2; shift 2 ;;
		*) echo "run.sh: unknown argument $1" >&2; exit 2 ;;
	esac
done
[ -n "$RESULTS" ] || { echo "run.sh: --results OUT_DIR is required" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "run.sh: run as root" >&2; exit 1; }
for b in gen_logs index_bench; do
	[ -x "$REPO/bench/build/$b" ] || make -s -C "$REPO/bench" "build/$b"
done
mkdir -p "$RESULTS" "$DATA"
chmod 755 "$DATA"
if [ -z "$CORPUS" ]; then
	CORPUS="$DATA/logs-${SIZE}mib-seed42"
	[ -d "$CORPUS" ] || "$REPO/bench/build/gen_logs" --out "$CORPUS" --size-mib "$SIZE" --seed 42 \
		--templates "$REPO/data/loghub-2k" >&2
fi
chmod -R a+rX "$CORPUS"
BIN=$(pg_config --bindir)
PGDATA_DIR="$DATA/pgdata" SOCK="$DATA/sock"
rm -rf "$PGDATA_DIR" "$SOCK" "$DATA/scratch" "$DATA/log"
mkdir -p "$PGDATA_DIR" "$SOCK" "$DATA/scratch" "$DATA/log"
chown postgres: "$PGDATA_DIR" "$SOCK" "$DATA/scratch" "$DATA/log"
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
asuser() { runuser -u postgres -- "$@"; }
asuser "$BIN/initdb" -D "$PGDATA_DIR" -A trust >/dev/null
OPTS="-p $PORT -k $SOCK -c listen_addresses='' -c shared_preload_libraries=scipis -c scipis.scheduler_naptime=100ms -c jit=off"
pgctl() { asuser "$BIN/pg_ctl" -D "$PGDATA_DIR" -l "$DATA/log/postgres.log" -o "$OPTS" -w "$@" >/dev/null; }
pgctl start
trap 'pgctl stop -m immediate || true' EXIT
export SCIPIS_JOBS_PSQL="$BIN/psql -X -qAt -h $SOCK -p $PORT -U postgres -d postgres"
export SCIPIS_JOBS_RESTART="runuser -u postgres -- $BIN/pg_ctl -D $PGDATA_DIR -l $DATA/log/postgres.log -o \"$OPTS\" -w restart -m fast"
python3 "$HERE/jobs_bench.py" --corpus "$CORPUS" --results "$RESULTS" --rounds "$ROUNDS" \
	--index-bench "$REPO/bench/build/index_bench" --scratch "$DATA/scratch"
