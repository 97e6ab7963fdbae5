#!/usr/bin/env python3
"""Benchmark of scipis block min/max indexes (issue 3); see README.md.

Generates a 2 GiB S3D-like float64 field (1024 x 512 x 512, 64 storage
blocks of 256 x 128 x 128), indexes it, and measures for selectivities from
1e-6 to 1: bytes read, read requests and query time for (a) scipis
partition min/max, (b) one min/max per storage block (what ADIOS does) and
(c) a full scan; index size and build time; a partition-size sweep; and
PostgreSQL BRIN on a subsample loaded into a table.

Run from the repository root with PG* variables pointing at a server that
has scipis installed (for example inside pg_virtualenv), as a user that can
read the page cache hints (root or the file owner):
    python3 bench/block/run_bench.py [--small] [--keep]
Writes bench/block/results.md and prints the same tables.
"""
import argparse
import datetime
import heapq
import json
import os
import platform
import random
import re
import shutil
import subprocess
import sys
import time
from array import array

HERE = os.path.dirname(os.path.abspath(__file__))


def psql(sql, timing=False):
    p = subprocess.run(["psql", "-X", "-q", "-A", "-t", "-F", "|", "-v", "ON_ERROR_STOP=1"],
                       input=sql, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit("psql failed: " + p.stderr[-3000:])
    return [l for l in p.stdout.split("\n") if l]


def evict(path):
    """Drops the file's pages from the page cache: the next read is cold."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def count3(index, pred, mode, cold, path, max_gap=None):
    """Median time of three runs (the machine is shared); counters are identical."""
    runs = [count(index, pred, mode, cold, path, max_gap) for _ in range(3)]
    runs.sort(key=lambda r: r["sec"])
    return runs[1]


def count(index, pred, mode, cold, path, max_gap=None):
    if cold:
        evict(path)
    gap = "NULL" if max_gap is None else str(max_gap)
    line = psql("SELECT hits, candidate_partitions, bytes_read, read_requests, seconds "
                "FROM scipis_block_count('%s', '%s', '%s', %s);\n" % (index, pred, mode, gap))[0]
    h, c, b, r, s = line.split("|")
    return {"hits": int(h), "cand": int(c), "bytes": int(b), "reads": int(r), "sec": float(s)}


def build(name, path, shape, block_shape, pbytes, cold):
    psql("SET client_min_messages = warning; SELECT scipis_drop_block_index('%s', true);\n" % name)
    if cold:
        evict(path)
    opts = {"shape": shape, "threads": 2}
    if block_shape:
        opts["block_shape"] = block_shape
    if pbytes:
        opts["partition_bytes"] = pbytes
    var = {"temp": {"path": path, "dtype": "float64"}}
    t0 = time.time()
    psql("SELECT scipis_create_block_index('%s', '%s', '%s');\n" % (name, json.dumps(var), json.dumps(opts)))
    wall = time.time() - t0
    line = psql("SELECT partitions, partition_elements, index_bytes, build_seconds, bytes_indexed "
                "FROM scipis_block_stats('%s');\n" % name)[0]
    p, pe, ib, bs, bi = line.split("|")
    return {"partitions": int(p), "part_elems": int(pe), "index_bytes": int(ib),
            "build_sec": float(bs), "wall": wall, "bytes_indexed": int(bi)}


def mib(b):
    return "%.1f" % (b / 1048576.0)


def fmt_sec(s):
    return "%.3f" % s if s < 10 else "%.1f" % s


def machine():
    cpu = "?"
    try:
        for l in open("/proc/cpuinfo"):
            if l.startswith("model name"):
                cpu = l.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = "?"
    try:
        for l in open("/proc/meminfo"):
            if l.startswith("MemTotal"):
                mem = "%.0f GiB" % (int(l.split()[1]) / 1048576.0)
    except OSError:
        pass
    ver = psql("SHOW server_version;\n")[0]
    return "%s, %d cores, %s RAM, Linux %s, PostgreSQL %s" % (
        cpu, os.cpu_count(), mem, platform.release(), ver)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--small", action="store_true", help="a 128 MiB field, to try the script")
    ap.add_argument("--keep", action="store_true", help="keep the generated files")
    ap.add_argument("--dir", default="/tmp/scipis_block_bench")
    ap.add_argument("--brin-blocks", type=int, default=4, help="storage blocks loaded for BRIN")
    args = ap.parse_args()
    t_start = time.time()
    out = []

    def emit(s=""):
        print(s, flush=True)
        out.append(s)

    shape = [256, 256, 256] if args.small else [1024, 512, 512]
    bshape = [64, 64, 64] if args.small else [256, 128, 128]
    os.makedirs(args.dir, exist_ok=True)
    os.chmod(args.dir, 0o755)
    field = os.path.join(args.dir, "field.f64")
    sub = os.path.join(args.dir, "sub.f64")
    gen = os.path.join(args.dir, "gen_field")
    subprocess.run(["gcc", "-O2", "-o", gen, os.path.join(HERE, "gen_field.c"), "-lm"], check=True)
    t0 = time.time()
    g = subprocess.run([gen, field] + [str(x) for x in shape + bshape] + [sub, str(args.brin_blocks)],
                       capture_output=True, text=True, check=True)
    os.chmod(field, 0o644)
    os.chmod(sub, 0o644)
    thresholds = [(float(a), float(b)) for a, b in (l.split() for l in g.stdout.split("\n") if l)]
    gen_sec = time.time() - t0
    size = os.path.getsize(field)

    psql("SET client_min_messages = warning; CREATE EXTENSION IF NOT EXISTS scipis;\n")
    emit("# scipis block index benchmark: results")
    emit()
    emit("Measured %s on %s." % (datetime.datetime.now().strftime("%Y-%m-%d %H:%M"), machine()))
    emit("Field: %s float64 = %s MiB, storage blocks %s (%d blocks), generated in %.0f s."
         % ("x".join(map(str, shape)), mib(size), "x".join(map(str, bshape)),
            (shape[0] // bshape[0]) * (shape[1] // bshape[1]) * (shape[2] // bshape[2]), gen_sec))
    emit("Load average at the start: %s." % " ".join(open("/proc/loadavg").read().split()[:3]))
    emit("Cold = the data file's pages dropped from the page cache (posix_fadvise DONTNEED) "
         "before the query; warm = the same query again right after.")
    emit()

    # Build: cold and warm, default partitions.
    b_cold = build("bench_field", field, shape, bshape, None, cold=True)
    b_warm = build("bench_field", field, shape, bshape, None, cold=False)
    emit("## Build (default partition_bytes = 64 KiB, 2 threads)")
    emit()
    emit("| cache | partitions | index size | build time | throughput |")
    emit("|---|---|---|---|---|")
    for tag, b in (("cold", b_cold), ("warm", b_warm)):
        emit("| %s | %d | %s KiB | %s s | %.0f MiB/s |" % (
            tag, b["partitions"], "%.0f" % (b["index_bytes"] / 1024.0), fmt_sec(b["build_sec"]),
            b["bytes_indexed"] / 1048576.0 / b["build_sec"]))
    emit()

    # Selectivity sweep, three pruning modes.
    emit("## Selectivity sweep: predicate `temp >= t`")
    emit()
    emit("(a) scipis partitions (64 KiB), (b) one min/max per storage block (ADIOS), "
         "(c) full scan. Reads are coalesced through gaps of up to 64 KiB (the default "
         "max_gap) into reads of at most 8 MiB. Times are medians of three runs.")
    emit()
    emit("| target sel. | hits | mode | candidate partitions | MiB read | read requests | cold s | warm s |")
    emit("|---|---|---|---|---|---|---|---|")
    sweep = []
    for sel, t in thresholds:
        pred = "temp >= %r" % t if t != float("-inf") else "temp >= -inf"
        for mode in ("partition", "block", "none"):
            c = count3("bench_field", pred, mode, True, field)
            w = count3("bench_field", pred, mode, False, field)
            sweep.append((sel, mode, c, w))
            emit("| %g | %d | %s | %d | %s | %d | %s | %s |" % (
                sel, c["hits"], {"partition": "(a) partition", "block": "(b) block", "none": "(c) scan"}[mode],
                c["cand"], mib(c["bytes"]), c["reads"], fmt_sec(c["sec"]), fmt_sec(w["sec"])))
    emit()
    emit("Speed-up of (a) over (b), cold: " + ", ".join(
        "%g: %.1fx" % (sel, b["sec"] / a["sec"])
        for sel in [s for s, _ in thresholds]
        for (s1, m1, a, _) in sweep if s1 == sel and m1 == "partition"
        for (s2, m2, b, _) in sweep if s2 == sel and m2 == "block"))
    emit()

    # Gap: reading through small holes trades bytes for requests.
    emit("## Coalescing: max_gap at selectivity 1e-3, 1e-2 and 1e-1 (cold, median of three)")
    emit()
    emit("| target sel. | max_gap | MiB read | read requests | cold s |")
    emit("|---|---|---|---|---|")
    for sel, t in thresholds:
        if sel not in (1e-3, 1e-2, 1e-1):
            continue
        for gap in (0, 65536, 1 << 20):
            c = count3("bench_field", "temp >= %r" % t, "partition", True, field, max_gap=gap)
            emit("| %g | %d KiB | %s | %d | %s |" % (sel, gap // 1024, mib(c["bytes"]), c["reads"],
                                                    fmt_sec(c["sec"])))
    emit()

    # Partition-size sweep (the paper's Table I).
    emit("## Partition-size sweep (warm build; cold queries)")
    emit()
    emit("| partition | partitions | index size | build s | sel 1e-5: MiB / reads / s | "
         "sel 1e-3: MiB / reads / s | sel 1e-1: MiB / reads / s |")
    emit("|---|---|---|---|---|---|---|")
    sizes = [4096, 16384, 65536, 262144, 1 << 20, 4 << 20]
    for pb in sizes:
        b = build("bench_sweep", field, shape, bshape, pb, cold=False)
        cells = []
        for sel, t in thresholds:
            if sel in (1e-5, 1e-3, 1e-1):
                c = count3("bench_sweep", "temp >= %r" % t, "partition", True, field)
                cells.append("%s / %d / %s" % (mib(c["bytes"]), c["reads"], fmt_sec(c["sec"])))
        emit("| %d KiB | %d | %.0f KiB | %s | %s |" % (pb // 1024, b["partitions"], b["index_bytes"] / 1024.0,
                                                   fmt_sec(b["build_sec"]), " | ".join(cells)))
    psql("SELECT scipis_drop_block_index('bench_sweep');\n")
    emit()

    # BRIN on a subsample loaded into a table.
    nsub = os.path.getsize(sub) // 8
    emit("## PostgreSQL BRIN on the same values (subsample)")
    emit()
    emit("Loading %d million rows takes too long on this machine for the whole field, so the "
         "first %d storage blocks (%d rows, %s MiB of values, in file order) go into "
         "`UNLOGGED TABLE field_sub (v float8)`; scipis indexes the same values as a 1-D "
         "file. BRIN times are EXPLAIN ANALYZE execution times of `SELECT count(*) ... WHERE "
         "v >= t` with the heap in the OS page cache (warm); scipis is shown warm and cold."
         % (size // 8 // 1000000, args.brin_blocks, nsub, mib(nsub * 8)))
    emit()
    t0 = time.time()
    a = array("d")
    with open(sub, "rb") as f:
        a.frombytes(f.read())
    # The subsample's own thresholds: exact in the tail, from a sample above 1 %.
    top = heapq.nlargest(max(1, len(a) // 100), a)
    rs = random.Random(5)
    sample = sorted((a[rs.randrange(len(a))] for _ in range(1000000)), reverse=True)
    sub_thr = []
    for sel, _ in thresholds:
        k = max(1, int(sel * len(a)))
        if sel >= 1.0:
            continue
        sub_thr.append((sel, top[k - 1] if k <= len(top) else sample[int(sel * len(sample))]))
    txt = os.path.join(args.dir, "sub.txt")
    with open(txt, "w") as f:
        f.write("\n".join(map(repr, a)))
        f.write("\n")
    os.chmod(txt, 0o644)
    del a
    psql("DROP TABLE IF EXISTS field_sub; CREATE UNLOGGED TABLE field_sub (v float8);\n"
         "COPY field_sub FROM '%s';\nVACUUM ANALYZE field_sub;\n" % txt)
    load_sec = time.time() - t0
    heap = int(psql("SELECT pg_relation_size('field_sub');\n")[0])
    brins = []
    for ppr in (128, 16):
        t0 = time.time()
        psql("DROP INDEX IF EXISTS field_sub_brin; "
             "CREATE INDEX field_sub_brin ON field_sub USING brin (v) WITH (pages_per_range = %d);\n" % ppr)
        bsec = time.time() - t0
        bsize = int(psql("SELECT pg_relation_size('field_sub_brin');\n")[0])
        rows = []
        for sel, t in sub_thr:
            plan = "\n".join(psql(
                "SET enable_seqscan = off; SET max_parallel_workers_per_gather = 0;\n"
                "EXPLAIN (ANALYZE, BUFFERS) SELECT count(*) FROM field_sub WHERE v >= %r;\n"
                "EXPLAIN (ANALYZE, BUFFERS) SELECT count(*) FROM field_sub WHERE v >= %r;\n" % (t, t)))
            ex = [float(x) for x in re.findall(r"Execution Time: ([0-9.]+) ms", plan)][-1] / 1000.0
            hb = re.findall(r"Heap Blocks: (?:exact=(\d+))? ?(?:lossy=(\d+))?", plan)
            pages = sum(int(x or 0) + int(y or 0) for x, y in hb[-1:]) if hb else 0
            rows.append((sel, t, ex, pages))
        brins.append((ppr, bsec, bsize, rows))
    seq = "\n".join(psql("SET max_parallel_workers_per_gather = 0; SET enable_bitmapscan = off;\n"
                         "EXPLAIN ANALYZE SELECT count(*) FROM field_sub WHERE v >= 1e300;\n"
                         "EXPLAIN ANALYZE SELECT count(*) FROM field_sub WHERE v >= 1e300;\n"))
    seq_sec = [float(x) for x in re.findall(r"Execution Time: ([0-9.]+) ms", seq)][-1] / 1000.0
    s_build = build("bench_sub", sub, [nsub], None, None, cold=False)
    emit("Table load (text COPY): %.0f s; heap %s MiB; sequential scan %s s (warm)."
         % (load_sec, mib(heap), fmt_sec(seq_sec)))
    emit()
    emit("| index | build s | size |")
    emit("|---|---|---|")
    for ppr, bsec, bsize, _ in brins:
        emit("| BRIN pages_per_range=%d | %s | %.0f KiB |" % (ppr, fmt_sec(bsec), bsize / 1024.0))
    emit("| scipis 64 KiB partitions | %s | %.0f KiB |" % (fmt_sec(s_build["build_sec"]),
                                                       s_build["index_bytes"] / 1024.0))
    emit()
    emit("| target sel. | hits | BRIN 128: heap MiB / s | BRIN 16: heap MiB / s | "
         "scipis: MiB / s warm / s cold |")
    emit("|---|---|---|---|---|")
    for k, (sel, t, _, _) in enumerate(brins[0][3]):
        w = count3("bench_sub", "temp >= %r" % t, "partition", False, sub)
        c = count3("bench_sub", "temp >= %r" % t, "partition", True, sub)
        cells = ["%s / %s" % (mib(b[3][k][3] * 8192), fmt_sec(b[3][k][2])) for b in brins]
        emit("| %g | %d | %s | %s / %s / %s |" % (sel, w["hits"], " | ".join(cells), mib(w["bytes"]),
                                                 fmt_sec(w["sec"]), fmt_sec(c["sec"])))
    emit()
    psql("DROP TABLE field_sub; SELECT scipis_drop_block_index('bench_sub'); "
         "SELECT scipis_drop_block_index('bench_field');\n")
    emit("Whole run: %.0f s; load average at the end: %s (other work shared the machine)."
         % (time.time() - t_start, " ".join(open("/proc/loadavg").read().split()[:3])))
    with open(os.path.join(HERE, "results.md" if not args.small else "results-small.md"), "w") as f:
        f.write("\n".join(out) + "\n")
    if not args.keep:
        shutil.rmtree(args.dir, ignore_errors=True)


if __name__ == "__main__":
    main()
