#!/usr/bin/env bash
# Where a small-file build spends its time: `perf record -e cpu-clock -g` of
# one engine-alone build (bench/build/index_bench), reported three ways into
# OUT_DIR/engine-profile.txt: per thread, self time per symbol (>= 0.5%),
# and time including callees (>= 1%, the syscalls and futex waits).
#   bash bench/smallfiles/profile.sh CORPUS_DIR OUT_DIR [index_bench options]
# INDEX_BENCH=PATH profiles an index_bench built elsewhere (an older commit).
set -euo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
CORPUS=$1 OUT=$2
shift 2
if [ -z "${INDEX_BENCH:-}" ]; then
	make -s -C "$REPO" -j2 index-bench >/dev/null
	INDEX_BENCH="$REPO/bench/build/index_bench"
fi
mkdir -p "$OUT"
DATA=$(mktemp /tmp/scipis-smallfiles-perf-XXXXXX.data)
trap 'rm -f "$DATA"' EXIT
{
	echo "# perf record -e cpu-clock -g bench/build/index_bench --corpus $CORPUS --runs 1 $*"
	echo "# $INDEX_BENCH (sha256 $(sha256sum "$INDEX_BENCH" | cut -c1-16))"
	echo "# $(date -u +%FT%TZ), git $(git -C "$REPO" rev-parse --short HEAD), nproc $(nproc), load $(cut -d' ' -f1-3 /proc/loadavg)"
	echo "# build under perf:"
	perf record -q -e cpu-clock -g -o "$DATA" "$INDEX_BENCH" --corpus "$CORPUS" --runs 1 "$@" 2>/dev/null | sed 's/^/#   /'
	echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"
	echo
	echo "## Per thread (the pipeline's threads in creation order: crawler, readers, indexers, writers)"
	perf report -i "$DATA" --no-children -s pid -g none --stdio 2>/dev/null | grep -v '^#' | grep -v '^$'
	echo
	echo "## Self time per symbol (perf report --no-children --sort sym, >= 0.5%)"
	perf report -i "$DATA" --no-children -s sym -g none --percent-limit 0.5 --stdio 2>/dev/null | grep -v '^#' | grep -v '^$'
	echo
	echo "## Time including callees (perf report --children --sort sym, >= 1%)"
	perf report -i "$DATA" --children -s sym -g none --percent-limit 1 --stdio 2>/dev/null | grep -v '^#' | grep -v '^$'
} > "$OUT/engine-profile.txt"
echo "profile in $OUT/engine-profile.txt" >&2
