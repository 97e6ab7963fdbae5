#!/usr/bin/env bash
# Top-10 latency of this commit's engine against an older commit's (an
# older segment format) on the same tree and queries, through the C door
# alone (bench/engine/door_query_bench.cpp, built against each engine).
# Both indexes are built, then queried in alternation, ROUNDS times each;
# a query's latency is its median over every pass of its engine. Queries
# are split by their largest df at the top 1% of the sampled vocabulary
# (pick_queries prints that df). The answers' digests must agree.
#
#   bash bench/engine/format_ab.sh BASE_COMMIT CORPUS_DIR OUT_DIR [ROUNDS] [PASSES]
#
# COMPACT_HEAD=1: the head's index is compacted (door_query_bench compact:
# every segment merged, as scipis_compact does) before it is queried.
# SETTLE_HEAD=1: its build's segments are merged as the merge job a build
# queues merges them (door_query_bench settle), what users query.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
BASE=$1 CORPUS=$2 OUT=$3 ROUNDS=${4:-3} PASSES=${5:-5}
LIBS="-lnuma -labsl_raw_hash_set -labsl_hash -labsl_city -labsl_low_level_hash -lpthread"
FLAGS="-std=c++20 -O2 -DNDEBUG -Wall -Wextra -Werror -pthread"
WORK=$(mktemp -d /var/tmp/scipis-format-ab-XXXXXX)
trap 'git -C "$REPO" worktree remove --force "$WORK/base" 2>/dev/null || true; rm -rf "$WORK"' EXIT
mkdir -p "$OUT"
log() { echo "[$(date +%T)] $*" >&2; }

# The two engines' objects, and the bench linked with each.
git -C "$REPO" worktree add -q --detach "$WORK/base" "$BASE"
for side in base head; do
	src=$REPO
	[ $side = base ] && src=$WORK/base
	make -s -C "$src" -j2 index-bench >/dev/null
	objs=$(cd "$src" && ls src/core/*.o src/core/*/*.o | sed "s|^|$src/|")
	# shellcheck disable=SC2086
	g++ $FLAGS -I"$src/src/core" -o "$WORK/bench-$side" "$REPO/bench/engine/door_query_bench.cpp" $objs $LIBS
done
make -s -C "$REPO/bench" build/pick_queries >/dev/null
"$REPO/bench/build/pick_queries" --corpus "$CORPUS" > "$OUT/queries.tsv" 2> "$WORK/pick.txt"
cat "$WORK/pick.txt" >&2
frequent=$(sed -n 's/.*top 1% df >= \([0-9]*\).*/\1/p' "$WORK/pick.txt")
for side in base head; do
	log "building the $side index of $CORPUS"
	"$WORK/bench-$side" build "$CORPUS" "$WORK/index-$side"
done
if [ "${COMPACT_HEAD:-0}" = 1 ]; then
	log "compacting the head index"
	"$WORK/bench-head" compact "$WORK/index-head" 2> "$WORK/compact.txt"
	cat "$WORK/compact.txt" >&2
elif [ "${SETTLE_HEAD:-0}" = 1 ]; then
	log "merging the head build's segments as its merge job does"
	"$WORK/bench-head" settle "$WORK/index-head" 2> "$WORK/compact.txt"
	cat "$WORK/compact.txt" >&2
fi
# The side that runs second in a round measured a few percent slower even
# against itself, so the order alternates.
for r in $(seq "$ROUNDS"); do
	order="base head"
	[ $((r % 2)) = 0 ] && order="head base"
	for side in $order; do
		log "round $r: $side"
		"$WORK/bench-$side" query "$WORK/index-$side" "$OUT/queries.tsv" "$PASSES" 10 > "$OUT/$side-$r.csv"
	done
done
{
	echo "# $(date -u +%FT%TZ); $(nproc) CPUs; load $(cut -d' ' -f1-3 /proc/loadavg)"
	echo "# base $(git -C "$REPO" rev-parse --short "$BASE"), head $(git -C "$REPO" rev-parse --short HEAD)$(git -C "$REPO" diff --quiet || echo -dirty); corpus $CORPUS"
	echo "# $ROUNDS rounds x $PASSES passes per engine, alternating (base first in odd rounds); top-10, tfidf, any"
	[ "${COMPACT_HEAD:-0}" = 1 ] || [ "${SETTLE_HEAD:-0}" = 1 ] && sed 's/^/# head index: /' "$WORK/compact.txt"
	cat "$WORK/pick.txt" | sed 's/^/# /'
} > "$OUT/format-ab.md"
python3 - "$OUT" "$ROUNDS" "$frequent" >> "$OUT/format-ab.md" <<'EOF'
import csv, statistics, sys
out, rounds, frequent = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
def load(side):
    per, meta = {}, {}
    for r in range(1, rounds + 1):
        for row in csv.DictReader(open("%s/%s-%d.csv" % (out, side, r))):
            per.setdefault(row["id"], []).append(float(row["us"]))
            meta[row["id"]] = (row["kind"], max(int(d) for d in row["dfs"].split(",")), row["digest"])
    return {q: (meta[q][0], meta[q][1], meta[q][2], statistics.median(v)) for q, v in per.items()}
base, head = load("base"), load("head")
differ = [q for q in base if base[q][2] != head[q][2]]
print()
print("| queries | n | base p50 us | head p50 us | speed-up |")
print("|---|---|---|---|---|")
for kind in ("t1", "t3"):
    for name, pick in (("top 1%% (max df >= %d)" % frequent, lambda d: d >= frequent),
                       ("rest (max df < %d)" % frequent, lambda d: d < frequent)):
        ids = [q for q in base if base[q][0] == kind and pick(base[q][1])]
        if not ids:
            continue
        b = statistics.median(base[q][3] for q in ids)
        h = statistics.median(head[q][3] for q in ids)
        print("| %s %s | %d | %.1f | %.1f | %.2fx |" % (kind, name, len(ids), b, h, b / h))
print()
print("Answers (paths and scores, bit for bit) differing between the engines: %d of %d." % (len(differ), len(base)))
EOF
cat "$OUT/format-ab.md"
