#!/usr/bin/env bash
# The scipis benchmark: scipis vs Apache Lucene 9 vs PostgreSQL full-text
# search, on one generated log corpus, in one run. See bench/README.md.
#
#   bash bench/run.sh [--size-mib 1024] [--seed 42] [--threads N]
#                     [--systems lucene,pgfts,scipis] [--pg-tokens simple|aligned|both]
#                     [--single 200] [--multi 200] [--data /var/tmp/scipis-bench]
#                     [--results DIR] [--lucene-warmup 3] [--sql-warmup 1]
#                     [--passes 3] [--index-runs 3]
#
# Needs root (pg_virtualenv makes a throw-away PostgreSQL 15 cluster whose
# server runs as postgres and reads the corpus itself), g++, Java 17, Maven.
set -euo pipefail

BENCH=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(dirname "$BENCH")
ORIG_ARGS=("$@")

SIZE_MIB=1024
SEED=42
THREADS=$(nproc)
SYSTEMS=lucene,pgfts,scipis
PG_TOKENS=both
N_SINGLE=200
N_MULTI=200
DATA=/var/tmp/scipis-bench
RESULTS=
LUCENE_WARMUP=3
SQL_WARMUP=1
PASSES=3
INDEX_RUNS=3
LUCENE_HEAP=4g
PG_UNIT=1000000

usage() { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 2; }
while [ $# -gt 0 ]; do
	case "$1" in
		--size-mib) SIZE_MIB=$2; shift 2 ;;
		--seed) SEED=$2; shift 2 ;;
		--threads) THREADS=$2; shift 2 ;;
		--systems) SYSTEMS=$2; shift 2 ;;
		--pg-tokens) PG_TOKENS=$2; shift 2 ;;
		--single) N_SINGLE=$2; shift 2 ;;
		--multi) N_MULTI=$2; shift 2 ;;
		--data) DATA=$2; shift 2 ;;
		--results) RESULTS=$2; shift 2 ;;
		--lucene-warmup) LUCENE_WARMUP=$2; shift 2 ;;
		--sql-warmup) SQL_WARMUP=$2; shift 2 ;;
		--passes) PASSES=$2; shift 2 ;;
		--index-runs) INDEX_RUNS=$2; shift 2 ;;
		-h|--help) usage ;;
		*) echo "run.sh: unknown option $1" >&2; usage ;;
	esac
done
has() { [[ ",$SYSTEMS," == *",$1,"* ]]; }
case "$PG_TOKENS" in simple|aligned|both) ;; *) echo "run.sh: --pg-tokens simple|aligned|both" >&2; exit 2 ;; esac

log() { printf '[%s] %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }
now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.3f", b - a}'; }  # t0 t1

# The SQL systems need a PostgreSQL cluster: re-run this script inside a
# throw-away one (-t: in a temporary directory, so it never collides with a
# "regress" cluster of someone else's pg_virtualenv).
if { has pgfts || has scipis; } && [ -z "${SCIPIS_BENCH_IN_VENV:-}" ]; then
	if has scipis && [ ! -f /usr/share/postgresql/15/extension/scipis.control ]; then
		echo "run.sh: scipis is not installed (make install in $REPO), or pass --systems lucene,pgfts" >&2
		exit 1
	fi
	export SCIPIS_BENCH_IN_VENV=1
	umask 022
	# The cluster lives under $DATA, not /tmp (where other people's clean-ups
	# may remove it), on a port nobody else is using.
	mkdir -p "$DATA/pg"
	chmod 755 "$DATA" "$DATA/pg"
	export TMPDIR="$DATA/pg"
	for PGPORT in $(seq 56432 56632); do
		ss -Htln "sport = :$PGPORT" | grep -q . && continue
		[ -e "/var/run/postgresql/.s.PGSQL.$PGPORT.lock" ] && continue
		break
	done
	export PGPORT
	exec pg_virtualenv -t -v 15 \
		-o shared_buffers=1GB -o work_mem=64MB -o maintenance_work_mem=1GB \
		-o max_wal_size=8GB -o checkpoint_timeout=30min \
		-o max_parallel_workers_per_gather=0 -o jit=off \
		bash "$0" "${ORIG_ARGS[@]}"
fi

umask 022
DATE=$(date -u +%Y-%m-%d)
[ -n "$RESULTS" ] || RESULTS="$BENCH/results/$DATE-${SIZE_MIB}mib"
mkdir -p "$RESULTS" "$DATA"
RESULTS=$(cd "$RESULTS" && pwd)
log "results in $RESULTS"

# ---------------------------------------------------------------- tools ----
log "building the generator, the query picker and the Lucene jar"
make -s -C "$BENCH" all >&2
GEN="$BENCH/build/gen_logs"
PICK="$BENCH/build/pick_queries"
JAR="$BENCH/lucene/target/scipis-bench-lucene.jar"

# --------------------------------------------------------------- corpus ----
CORPUS="$DATA/corpus-${SIZE_MIB}mib-seed$SEED"
if [ ! -f "$CORPUS.done" ]; then
	rm -rf "$CORPUS"
	log "generating $SIZE_MIB MiB into $CORPUS"
	t0=$(now)
	"$GEN" --out "$CORPUS" --size-mib "$SIZE_MIB" --seed "$SEED" --templates "$REPO/data/loghub-2k" \
		--threads "$THREADS"
	t1=$(now)
	sha=$(cd "$CORPUS" && find . -type f -print0 | LC_ALL=C sort -z | xargs -0 cat | sha256sum | cut -d' ' -f1)
	{
		echo "seed=$SEED"
		echo "size_mib=$SIZE_MIB"
		echo "files=$(find "$CORPUS" -type f | wc -l)"
		echo "bytes=$(find "$CORPUS" -type f -printf '%s\n' | awk '{s+=$1} END {print s}')"
		echo "sha256_of_sorted_concatenation=$sha"
		echo "generate_seconds=$(elapsed "$t0" "$t1")"
	} > "$CORPUS.done"
fi
chmod -R a+rX "$DATA"
cp "$CORPUS.done" "$RESULTS/corpus.txt"
FILES=$(find "$CORPUS" -type f | wc -l)
BYTES=$(find "$CORPUS" -type f -printf '%s\n' | awk '{s+=$1} END {print s}')
log "corpus: $FILES files, $BYTES bytes"
warm_corpus() { find "$CORPUS" -type f -print0 | xargs -0 cat > /dev/null; }
note_load() { echo "loadavg_before_$1=$(cut -d' ' -f1-3 /proc/loadavg)" >> "$RESULTS/machine.txt"; }

# -------------------------------------------------------------- queries ----
log "picking queries"
"$PICK" --corpus "$CORPUS" --seed "$SEED" --single "$N_SINGLE" --multi "$N_MULTI" > "$RESULTS/queries.tsv"

# -------------------------------------------------------------- machine ----
{
	echo "date_utc=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
	echo "nproc=$(nproc)"
	echo "cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"
	echo "ram_gib=$(awk '/MemTotal/ {printf "%.1f", $2/1048576}' /proc/meminfo)"
	echo "kernel=$(uname -r)"
	echo "os=$(. /etc/os-release && echo "$PRETTY_NAME")"
	echo "gcc=$(g++ -dumpfullversion)"
	echo "java=$(java -version 2>&1 | head -1)"
	echo "postgresql=$(/usr/lib/postgresql/15/bin/postgres --version)"
	if [ -f /usr/lib/postgresql/15/lib/scipis.so ]; then
		echo "scipis_so=$(stat -c '%y' /usr/lib/postgresql/15/lib/scipis.so | cut -d. -f1) sha256 $(sha256sum /usr/lib/postgresql/15/lib/scipis.so | cut -c1-16)"
	fi
	echo "threads=$THREADS"
	echo "loadavg_start=$(cut -d' ' -f1-3 /proc/loadavg)"
} > "$RESULTS/machine.txt"
: > "$RESULTS/build.csv.tmp"
echo "system,step,seconds,files,bytes,index_bytes,detail" > "$RESULTS/build.csv"

# ------------------------------------------------------------------ SQL ----
PSQL=(psql -X -q -v ON_ERROR_STOP=1)
export PGOPTIONS="-c client_min_messages=warning"
if has pgfts || has scipis; then
	# pg_virtualenv turns fsync off; the comparison is with fsync on (Lucene
	# fsyncs its commit too).
	"${PSQL[@]}" -c "ALTER SYSTEM SET fsync = on" -c "SELECT pg_reload_conf()" > /dev/null
	"${PSQL[@]}" -f "$BENCH/common/bench.sql" < "$RESULTS/queries.tsv" > /dev/null
	"${PSQL[@]}" -At -c "SELECT name || '=' || setting FROM pg_settings WHERE name IN
		('shared_buffers','work_mem','maintenance_work_mem','max_wal_size','fsync','wal_level',
		 'max_parallel_workers_per_gather','jit') ORDER BY name" | sed 's/^/pg_/' >> "$RESULTS/machine.txt"
fi
export_sql_results() {  # system label: measured passes (>= 1), top-k, build rows
	local sys=$1
	"${PSQL[@]}" -c "\\copy (SELECT system, pass, id, kind, round(us)::bigint AS us, nrows FROM bench.lat WHERE system = '$sys' AND pass >= 1 ORDER BY pass, id) TO '$RESULTS/$sys-lat.csv' WITH (FORMAT csv, HEADER true)"
	"${PSQL[@]}" -c "\\copy (SELECT system, id, rank, path, score FROM bench.topk WHERE system = '$sys' ORDER BY id, rank) TO '$RESULTS/$sys-topk.csv' WITH (FORMAT csv, HEADER true)"
	"${PSQL[@]}" -c "\\copy (SELECT system, step, round(seconds::numeric, 3), NULL, NULL, NULL, detail FROM bench.build WHERE system = '$sys' ORDER BY step) TO STDOUT WITH (FORMAT csv)" >> "$RESULTS/build.csv.tmp"
}
record_build() {  # system step seconds files bytes index_bytes detail-json
	local detail=${7//\"/\"\"}
	echo "$1,$2,$3,$4,$5,$6,\"$detail\"" >> "$RESULTS/build.csv.tmp"
}
# The SQL query passes run in one session: warm-up passes, then the measured
# ones (the per-backend state of each system is warm, as the JVM is for Lucene).
sql_query_passes() {  # function
	local f=$1 args=() p
	for ((p = 0; p < SQL_WARMUP; p++)); do args+=(-c "SELECT $f(0)"); done
	for ((p = 1; p <= PASSES; p++)); do args+=(-c "SELECT $f($p)"); done
	"${PSQL[@]}" "${args[@]}" > /dev/null
}

# ------------------------------------------------ indexing: Lucene, scipis ----
# Both are cheap enough to build --index-runs times, alternately, so that
# both see the same (shared, noisy) machine; the fastest run of each counts.
LUCENE_IDX="$DATA/lucene-index"
lucene_index_run() {  # run number
	rm -rf "$LUCENE_IDX"
	warm_corpus
	note_load "lucene_index_$1"
	log "lucene: indexing run $1 with $THREADS threads (load $(cut -d' ' -f1 /proc/loadavg))"
	java -Xms$LUCENE_HEAP -Xmx$LUCENE_HEAP -cp "$JAR" scipis.bench.Index \
		--corpus "$CORPUS" --index "$LUCENE_IDX" --threads "$THREADS" > "$RESULTS/lucene-build-$1.json"
	cat "$RESULTS/lucene-build-$1.json" >&2
	local lsec lidx
	read -r lsec lidx < <(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["seconds"], d["index_bytes"])' "$RESULTS/lucene-build-$1.json")
	record_build lucene index "$lsec" "$FILES" "$BYTES" "$lidx" "$(cat "$RESULTS/lucene-build-$1.json")"
}
scipis_index_run() {  # run number
	if [ "$1" -gt 1 ]; then
		"${PSQL[@]}" -c "SELECT scipis_drop_collection(name) FROM scipis_collections WHERE name = 'bench'" > /dev/null
	fi
	"${PSQL[@]}" -v corpus="$CORPUS" -v threads="$THREADS" -f "$BENCH/scipis/setup.sql" > /dev/null
	"${PSQL[@]}" -c "CHECKPOINT"
	warm_corpus
	note_load "scipis_index_$1"
	log "scipis: indexing run $1 with $THREADS indexer threads (load $(cut -d' ' -f1 /proc/loadavg))"
	local t0 t1 sidx
	t0=$(now)
	"${PSQL[@]}" -v run="$1" -f "$BENCH/scipis/index.sql" >&2
	t1=$(now)
	# The build's merge job, waited for outside the build's time: the
	# size and the queries are those of the merged index.
	"${PSQL[@]}" -v run="$1" -f "$BENCH/scipis/merged.sql" >&2
	sidx=$("${PSQL[@]}" -At -c "SELECT index_bytes FROM scipis_collections WHERE name = 'bench'")
	record_build scipis index "$(elapsed "$t0" "$t1")" "$FILES" "$BYTES" "$sidx" "{\"run\": $1}"
}
for ((run = 1; run <= INDEX_RUNS; run++)); do
	if has lucene; then lucene_index_run "$run"; fi
	if has scipis; then scipis_index_run "$run"; fi
done

# -------------------------------------------------------- Lucene queries ----
if has lucene; then
	note_load lucene_queries
	log "lucene: $((N_SINGLE + N_MULTI)) queries, $LUCENE_WARMUP warm-up and $PASSES measured passes"
	java -Xms$LUCENE_HEAP -Xmx$LUCENE_HEAP -cp "$JAR" scipis.bench.Search --index "$LUCENE_IDX" \
		--queries "$RESULTS/queries.tsv" --warmup "$LUCENE_WARMUP" --passes "$PASSES" \
		--out "$RESULTS/lucene-lat.csv" --topk "$RESULTS/lucene-topk.csv"
	rm -rf "$LUCENE_IDX"
fi

# -------------------------------------------------------- scipis queries ----
if has scipis; then
	note_load scipis_queries
	log "scipis: queries, $SQL_WARMUP warm-up and $PASSES measured passes in one session"
	sql_query_passes scipisb.run_queries
	# one more pass in a new session (new backend), reported apart: what a
	# fresh connection pays
	"${PSQL[@]}" -c "SELECT scipisb.run_queries(-1)" > /dev/null
	"${PSQL[@]}" -c "\\copy (SELECT system, pass, id, kind, round(us)::bigint AS us, nrows FROM bench.lat WHERE system = 'scipis' AND pass = -1 ORDER BY id) TO '$RESULTS/scipis-fresh-session-lat.csv' WITH (FORMAT csv, HEADER true)"
	export_sql_results scipis
fi

# ------------------------------------------------------ PostgreSQL FTS ----
run_pgfts() {  # tokens label
	local tokens=$1 label=$2
	find "$CORPUS" -type f | LC_ALL=C sort > "$DATA/filelist.txt"
	"${PSQL[@]}" -v tokens="$tokens" -v unit="$PG_UNIT" -v label="$label" \
		-f "$BENCH/pgfts/setup.sql" < "$DATA/filelist.txt" > /dev/null
	"${PSQL[@]}" -c "CHECKPOINT"
	warm_corpus
	note_load "$label"
	log "$label: loading with $THREADS sessions (load $(cut -d' ' -f1 /proc/loadavg))"
	local t0 t1 t2 pids=() w
	t0=$(now)
	for ((w = 0; w < THREADS; w++)); do
		"${PSQL[@]}" -At -c "SELECT pgfts.load($w)" > /dev/null &
		pids+=($!)
	done
	for w in "${pids[@]}"; do wait "$w"; done
	t1=$(now)
	log "$label: GIN index"
	"${PSQL[@]}" -f "$BENCH/pgfts/index.sql" >&2
	t2=$(now)
	local sizes
	sizes=$("${PSQL[@]}" -At -c "SELECT detail->>'total_bytes' FROM bench.build WHERE system = '$label' AND step = 'sizes'")
	record_build "$label" "load (wall)" "$(elapsed "$t0" "$t1")" "" "" "" "{}"
	record_build "$label" "index" "$(elapsed "$t0" "$t2")" "$FILES" "$BYTES" "$sizes" "{\"load_s\": $(elapsed "$t0" "$t1"), \"gin_and_analyze_s\": $(elapsed "$t1" "$t2")}"
	note_load "${label}_queries"
	log "$label: queries, $SQL_WARMUP warm-up and $PASSES measured passes in one session"
	sql_query_passes pgfts.run_queries
	export_sql_results "$label"
	"${PSQL[@]}" -c "DROP SCHEMA pgfts CASCADE" -c "CHECKPOINT"
}
if has pgfts; then
	case "$PG_TOKENS" in
		simple) run_pgfts simple pgfts ;;
		aligned) run_pgfts aligned pgfts-aligned ;;
		both) run_pgfts simple pgfts; run_pgfts aligned pgfts-aligned ;;
	esac
fi

# -------------------------------------------------------------- summary ----
cat "$RESULTS/build.csv.tmp" >> "$RESULTS/build.csv"
rm -f "$RESULTS/build.csv.tmp"
echo "loadavg_end=$(cut -d' ' -f1-3 /proc/loadavg)" >> "$RESULTS/machine.txt"
python3 "$BENCH/summarize.py" "$RESULTS" > "$RESULTS/summary.md"
python3 "$BENCH/plot.py" "$RESULTS"
log "done: $RESULTS/summary.md, indexing.svg, latency.svg"
cat "$RESULTS/summary.md"
