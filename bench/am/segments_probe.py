#!/usr/bin/env python3
"""How a scipis index's segment count and the backend's page cache change
the latency of the bench's top-10 queries (one scipis system, no peers).

Run inside a throwaway cluster after run.sh has prepared the data:
  pg_virtualenv python3 bench/am/segments_probe.py --manifest M [--rows N]
    [--memory-mib 0,3072] [--cache 32MB,256MB] [--kind t1] [--passes 40]

For each tfidf_index_size (0: the default, maintenance_work_mem) it builds
the index on the manifest's lines table, then for each
scipis.index_cache_size runs the kind's queries `--passes` times in one
session, interleaved as the bench does, each timed in the server by
am_time() as bench/am does. Reports the build time, the segments and the
p50 and p90 over queries of each query's median latency.
"""
import argparse
import csv
import json
import statistics
import subprocess
import sys
import time


def psql(sql, *extra):
    r = subprocess.run(["psql", "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1", *extra],
                       input=sql, text=True, capture_output=True)
    if r.returncode != 0:
        sys.exit("psql failed: " + r.stderr)
    return r.stdout


def loop_sql(cache, terms, passes):
    out = [f"SET scipis.index_cache_size = '{cache}';", "SET enable_seqscan = off;"]
    for _ in range(passes):
        for t in terms:
            q = t.replace("'", "''")
            out.append("SELECT us FROM am_time($q$SELECT array_agg(id), array_agg(-d) FROM "
                       f"(SELECT id, line <@> '{q}'::scipisquery AS d FROM lines "
                       f"WHERE line @@@ '{q}'::scipisquery ORDER BY d LIMIT 10) x$q$);")
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--manifest", required=True)
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--memory-mib", default="0,3072")
    ap.add_argument("--cache", default="32MB,256MB")
    ap.add_argument("--kind", default="t1")
    ap.add_argument("--passes", type=int, default=40)
    a = ap.parse_args()
    m = json.load(open(a.manifest))
    with open(m["queries_lines"]) as f:
        terms = [r["terms"] for r in csv.DictReader(f, delimiter="\t") if r["kind"] == a.kind]
    psql("CREATE EXTENSION IF NOT EXISTS scipis;"
         "CREATE TABLE lines (id bigint, host text, ts timestamptz, line text) WITH (autovacuum_enabled = off);"
         f"COPY lines FROM PROGRAM 'head -n {a.rows} {m['rows_file']}';"
         "VACUUM ANALYZE lines;"
         "CREATE FUNCTION am_time(q text, OUT us float8) LANGUAGE plpgsql AS $$ "
         "DECLARE t0 timestamptz; ids bigint[]; sc float8[]; BEGIN t0 := clock_timestamp(); "
         "EXECUTE q INTO ids, sc; us := extract(epoch from clock_timestamp() - t0) * 1e6; END $$;")
    print(f"{a.rows} rows, {len(terms)} queries of kind {a.kind}, {a.passes} passes; "
          "p50 and p90 over queries of each query's median, µs")
    for mem in [int(x) for x in a.memory_mib.split(",")]:
        psql("DROP INDEX IF EXISTS lines_probe;")
        opt = f" WITH (tfidf_index_size = {mem})" if mem else ""
        t0 = time.monotonic()
        psql(f"SET maintenance_work_mem = '1GB'; CREATE INDEX lines_probe ON lines USING scipis (line){opt};")
        build = time.monotonic() - t0
        segs = psql("SELECT count(*) FROM scipis_index_segments('lines_probe');").strip()
        size = psql("SELECT pg_relation_size('lines_probe') / 1048576.0;").strip()
        for cache in a.cache.split(","):
            lat = [float(x) for x in psql(loop_sql(cache, terms, a.passes)).split()]
            per = [statistics.median(lat[i::len(terms)]) for i in range(len(terms))]
            print(f"tfidf_index_size {mem or 'default'} MiB: build {build:.1f} s, {segs} segments, "
                  f"{float(size):.1f} MiB; index_cache_size {cache}: p50 {statistics.median(per):.1f}, "
                  f"p90 {sorted(per)[int(0.9 * (len(per) - 1))]:.1f}", flush=True)


if __name__ == "__main__":
    main()
