#!/usr/bin/env bash
# Freshness (issue 15), in one run on a throw-away cluster preloaded with
# scipis: what a refresh costs against a full build (an unchanged tree, one
# new file, 1 KiB appended to a 20 MiB file), and the watcher under churn
# (staleness of a probe token, refreshes, segments, query latency).
#
#   bash bench/refresh/run.sh --results OUT_DIR [--size-mib 1024 | --corpus DIR]
#        [--tree /var/tmp/scipis-smallfiles/linux-source-6.1]
#        [--rates 10,100,1000] [--seconds 20] [--data /var/tmp/scipis-refresh]
#
# As root, with scipis installed and bench/build/gen_logs built (make -C
# bench). The log corpus is copied into DATA/churn first: the churn writes
# into the copy only. OUT_DIR/refresh.md is the report, raw.json the runs.
# SCIPIS_BENCH_PG_OPTS adds server options (-c log_min_messages=debug1
# logs each merge the watcher commits).
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
RESULTS="" SIZE=1024 CORPUS="" TREE=/var/tmp/scipis-smallfiles/linux-source-6.1 RATES=10,100,1000 SECONDS_PER=20
DATA=/var/tmp/scipis-refresh
while [ $# -gt 0 ]; do
	case "$1" in
		--results) RESULTS=$2; shift 2 ;;
		--size-mib) SIZE=$2; shift 2 ;;
		--corpus) CORPUS=$2; shift 2 ;;
		--tree) TREE=$2; shift 2 ;;
		--rates) RATES=$2; shift 2 ;;
		--seconds) SECONDS_PER=$2; shift 2 ;;
		--data) DATA=$2; shift 2 ;;
		*) echo "run.sh: unknown argument $1" >&2; exit 2 ;;
	esac
done
[ -n "$RESULTS" ] || { echo "run.sh: --results OUT_DIR is required" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "run.sh: run as root" >&2; exit 1; }
[ -x "$REPO/bench/build/gen_logs" ] || make -s -C "$REPO/bench" build/gen_logs
mkdir -p "$RESULTS" "$DATA"
chmod 755 "$DATA"
[ -n "$CORPUS" ] || CORPUS="$DATA/logs-${SIZE}mib-seed42"
[ -d "$CORPUS" ] || "$REPO/bench/build/gen_logs" --out "$CORPUS" --size-mib "$SIZE" --seed 42 \
	--templates "$REPO/data/loghub-2k" >&2
rm -rf "$DATA/churn" && cp -r "$CORPUS" "$DATA/churn"
chown -R postgres: "$DATA/churn"
chmod -R a+rX "$CORPUS" "$DATA/churn"
[ -d "$TREE" ] && chmod -R a+rX "$TREE"
BIN=$(pg_config --bindir)
PGDATA_DIR="$DATA/pgdata" SOCK="$DATA/sock"
rm -rf "$PGDATA_DIR" "$SOCK" "$DATA/log"
mkdir -p "$PGDATA_DIR" "$SOCK" "$DATA/log"
chown postgres: "$PGDATA_DIR" "$SOCK" "$DATA/log"
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
asuser() { runuser -u postgres -- "$@"; }
asuser "$BIN/initdb" -D "$PGDATA_DIR" -A trust >/dev/null
OPTS="-p $PORT -k $SOCK -c listen_addresses='' -c shared_preload_libraries=scipis -c scipis.scheduler_naptime=100ms -c jit=off ${SCIPIS_BENCH_PG_OPTS:-}"
pgctl() { asuser "$BIN/pg_ctl" -D "$PGDATA_DIR" -l "$DATA/log/postgres.log" -o "$OPTS" -w "$@" >/dev/null; }
pgctl start
trap 'pgctl stop -m immediate || true' EXIT
export SCIPIS_REFRESH_PSQL="$BIN/psql -X -qAt -h $SOCK -p $PORT -U postgres -d postgres"
# The churn writes as the server's user, as a site's jobs would.
mkdir -p "$DATA/out" && chown postgres: "$DATA/out"
runuser -u postgres -- python3 "$HERE/refresh_bench.py" --commit "$(git -C "$REPO" rev-parse --short HEAD)" --corpus "$CORPUS" --churn "$DATA/churn" \
	--tree "$TREE" --rates "$RATES" --seconds "$SECONDS_PER" --results "$DATA/out"
mkdir -p "$RESULTS" && cp "$DATA/out/raw.json" "$DATA/out/refresh.md" "$RESULTS/"
