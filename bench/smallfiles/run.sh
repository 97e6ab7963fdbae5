#!/usr/bin/env bash
# Many small files, side by side: the scipis engine alone
# (bench/build/index_bench) and Lucene 9 (bench/lucene) index the same tree
# with the same threads, builds alternating, fastest of --runs each. After
# each scipis build, outside its time, its segments are merged as a
# collection's merge job merges them (index_bench --settle): the index size
# reported is that merged index, which is what users query by default.
#
#   bash bench/smallfiles/run.sh [--corpus tree|linux|DIR] [--files 80000] [--seed 42]
#        [--runs 3] [--threads 2] [--systems scipis,lucene] [--data /var/tmp/scipis-smallfiles]
#        [--results DIR] [--label NAME] [--index-bench PATH]
#
# --corpus tree (default): bench/build/gen_tree --files N --seed S, generated
# under --data unless it exists. --corpus linux: Debian's linux-source-6.1
# tarball (apt-get install linux-source-6.1) unpacked under --data. Any other
# value is a directory. Nothing is installed into PostgreSQL: scipis runs
# through the engine alone. Results: bench/results/<date>-smallfiles-<label>/
# <corpus name>/ (summary.md, machine.txt, corpus.txt, builds.jsonl).
set -euo pipefail
BENCH=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
REPO=$(dirname "$BENCH")
CORPUS=tree FILES=80000 SEED=42 RUNS=3 THREADS=2 SYSTEMS=scipis,lucene
DATA=/var/tmp/scipis-smallfiles RESULTS="" LABEL="" INDEX_BENCH=""
LUCENE_HEAP=4g
while [ $# -gt 0 ]; do
	case "$1" in
		--corpus) CORPUS=$2; shift 2 ;;
		--files) FILES=$2; shift 2 ;;
		--seed) SEED=$2; shift 2 ;;
		--runs) RUNS=$2; shift 2 ;;
		--threads) THREADS=$2; shift 2 ;;
		--systems) SYSTEMS=$2; shift 2 ;;
		--data) DATA=$2; shift 2 ;;
		--results) RESULTS=$2; shift 2 ;;
		--label) LABEL=$2; shift 2 ;;
		--index-bench) INDEX_BENCH=$2; shift 2 ;;
		*) echo "run.sh: unknown option $1" >&2; exit 2 ;;
	esac
done
has() { [[ ",$SYSTEMS," == *",$1,"* ]]; }
log() { echo "[$(date +%T)] $*" >&2; }

make -s -C "$BENCH" build/gen_tree
has lucene && make -s -C "$BENCH" lucene
if [ -z "$INDEX_BENCH" ]; then
	has scipis && make -s -C "$REPO" -j2 index-bench >/dev/null
	INDEX_BENCH="$REPO/bench/build/index_bench"
fi
JAR="$BENCH/lucene/target/scipis-bench-lucene.jar"

mkdir -p "$DATA"
case "$CORPUS" in
	tree)
		DIR="$DATA/tree-$((FILES / 1000))k-seed$SEED"
		if [ ! -d "$DIR" ]; then
			log "generating $FILES files into $DIR"
			"$BENCH/build/gen_tree" --out "$DIR.tmp" --files "$FILES" --seed "$SEED" --threads 2 \
				--templates "$REPO/data/loghub-2k"
			mv "$DIR.tmp" "$DIR"
		fi
		NAME="tree-$((FILES / 1000))k-seed$SEED" ;;
	linux)
		TARBALL=/usr/src/linux-source-6.1.tar.xz
		[ -f "$TARBALL" ] || { echo "run.sh: $TARBALL missing (apt-get install linux-source-6.1)" >&2; exit 1; }
		DIR="$DATA/linux-source-6.1"
		if [ ! -d "$DIR" ]; then
			log "unpacking $TARBALL into $DATA"
			tar -C "$DATA" -xJf "$TARBALL"
		fi
		NAME="linux-source-6.1" ;;
	*)
		DIR=$(cd "$CORPUS" && pwd); NAME=$(basename "$DIR") ;;
esac

DAY=$(date +%F)
[ -n "$RESULTS" ] || RESULTS="$BENCH/results/$DAY-smallfiles${LABEL:+-$LABEL}/$NAME"
mkdir -p "$RESULTS"
SCRATCH=$(mktemp -d "$DATA/scratch-XXXXXX")
trap 'rm -rf "$SCRATCH"' EXIT

{
	echo "date=$(date -u +%FT%TZ)"
	echo "host_nproc=$(nproc)"
	echo "cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')"
	echo "mem=$(free -g | awk '/^Mem:/ {print $2 " GiB"}')"
	echo "kernel=$(uname -r)"
	echo "gxx=$(g++ --version | head -1)"
	has lucene && echo "java=$(java -version 2>&1 | head -1)"
	echo "git=$(git -C "$REPO" rev-parse --short HEAD)$(git -C "$REPO" diff --quiet || echo -dirty)"
	echo "index_bench=$INDEX_BENCH (sha256 $(sha256sum "$INDEX_BENCH" | cut -c1-16))"
	echo "threads=$THREADS"
	echo "runs=$RUNS"
	echo "loadavg_start=$(cut -d' ' -f1-3 /proc/loadavg)"
} > "$RESULTS/machine.txt"

log "corpus $DIR: counting and warming the page cache"
read -r NFILES NBYTES < <(find "$DIR" -type f -printf '%s\n' | awk '{n++; b+=$1} END {print n, b}')
find "$DIR" -type f -print0 | xargs -0 cat > /dev/null
{
	echo "corpus=$NAME"
	echo "dir=$DIR"
	[ "$CORPUS" = tree ] && echo "generator=gen_tree --files $FILES --seed $SEED (defaults: median 4 KiB, sigma 1.5, max 512 KiB, 0.5% empty, 24 files per directory)"
	echo "files=$NFILES"
	echo "bytes=$NBYTES"
	echo "directories=$(find "$DIR" -type d | wc -l)"
	find "$DIR" -type f -printf '%s\n' | sort -n | awk '{a[NR]=$1} END {printf "size_p50=%d\nsize_p90=%d\nsize_p99=%d\nsize_max=%d\n", a[int(NR*0.5)+1], a[int(NR*0.9)+1], a[int(NR*0.99)+1], a[NR]}'
} > "$RESULTS/corpus.txt"
cat "$RESULTS/corpus.txt" >&2

OUT="$RESULTS/builds.jsonl"
: > "$OUT"
for run in $(seq 1 "$RUNS"); do
	if has scipis; then
		load=$(cut -d' ' -f1 /proc/loadavg)
		log "scipis: build $run, $THREADS indexer threads (load $load)"
		line=$("$INDEX_BENCH" --corpus "$DIR" --runs 1 --indexers "$THREADS" --settle)
		echo "$line" >&2
		python3 -c 'import json,sys; d=json.loads(sys.argv[1]); d.update(system="scipis", run=int(sys.argv[2])); print(json.dumps(d))' \
			"$line" "$run" >> "$OUT"
	fi
	if has lucene; then
		load=$(cut -d' ' -f1 /proc/loadavg)
		log "lucene: build $run, $THREADS threads (load $load)"
		rm -rf "$SCRATCH/lucene"
		line=$(java -Xms$LUCENE_HEAP -Xmx$LUCENE_HEAP -cp "$JAR" scipis.bench.Index \
			--corpus "$DIR" --index "$SCRATCH/lucene" --threads "$THREADS")
		echo "$line" >&2
		python3 -c 'import json,sys; d=json.loads(sys.argv[1]); d.update(run=int(sys.argv[2]), load1=float(sys.argv[3]), wall_s=d["seconds"], files_per_s=d["files"]/d["seconds"]); print(json.dumps(d))' \
			"$line" "$run" "$load" >> "$OUT"
	fi
done
echo "loadavg_end=$(cut -d' ' -f1-3 /proc/loadavg)" >> "$RESULTS/machine.txt"

python3 "$BENCH/smallfiles/summarize.py" "$RESULTS" | tee "$RESULTS/summary.md"
log "results in $RESULTS"
