#!/usr/bin/env python3
"""scipis_locate against plocate on the same tree, one run.

    pg_virtualenv -t python3 bench/paths/locate_bench.py --corpus DIR --results OUT_DIR

Builds plocate's database of the tree (`updatedb -U DIR -o DB -l 0`, timed)
and a scipis collection of it (`scipis_index`, timed), then runs the same
patterns through both, alternating, --runs times each: 40 substrings of
real paths (3 to 12 bytes, drawn with a fixed seed) and 20 globs made from
them (`*sub*.c`, `*/sub*`, `*sub?*`, sets). plocate is timed per process
(`plocate -d DB -- PATTERN > /dev/null`, as a user runs it); scipis per
statement inside the server (`EXPLAIN (ANALYZE, TIMING OFF)` of `SELECT
count(*) FROM scipis_locate(...)`: its Execution Time), twice: in a new
backend per query (`psql -c`, which loads the collection's file records
first, as a new connection does) and all in one backend. A pattern's latency is its median over the runs; the report gives
p50 and p99 over patterns. plocate also lists directories, scipis regular
files only, so their counts differ by the directories that match.
Writes OUT_DIR/locate.md and OUT_DIR/locate.csv (pattern, counts, times).
"""

import argparse
import os
import random
import re
import shutil
import statistics
import subprocess
import tempfile
import time


def psql(sql):
    p = subprocess.run(["psql", "-X", "-q", "-t", "-A", "-c", sql], capture_output=True, text=True)
    if p.returncode != 0:
        raise SystemExit("psql failed: %s\n%s" % (sql, p.stderr))
    return p.stdout


def lit(s):
    return "'" + s.replace("'", "''") + "'"


def pct(v, p):
    v = sorted(v)
    return v[min(len(v) - 1, int(round(p / 100 * (len(v) - 1))))]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--results", required=True)
    ap.add_argument("--runs", type=int, default=5)
    a = ap.parse_args()
    corpus = os.path.abspath(a.corpus)
    os.makedirs(a.results, exist_ok=True)
    rng = random.Random(42)
    paths = []
    for d, _, fs in os.walk(corpus):
        for f in fs:
            p = os.path.join(d, f)
            if os.path.isfile(p) and not os.path.islink(p):
                paths.append(p)
    paths.sort()
    subs = []
    while len(subs) < 40:
        p = rng.choice(paths)[len(corpus):]
        n = rng.randint(3, 12)
        i = rng.randrange(max(1, len(p) - n))
        s = p[i:i + n]
        if len(s) >= 3 and not any(c in s for c in "*?[\\'\n"):
            subs.append(s)
    globs = []
    for s in subs[:20]:
        globs.append(rng.choice(["*%s*.c" % s, "*/%s*" % s, "*%s?*" % s,
                                 "*[%s]%s*" % (s[0], s[1:])]))
    patterns = subs + globs

    work = tempfile.mkdtemp(prefix="scipis-locate-bench-")
    try:
        db = os.path.join(work, "plocate.db")
        t0 = time.time()
        subprocess.run(["updatedb", "-U", corpus, "-o", db, "-l", "0"], check=True)
        updatedb_s = time.time() - t0
        psql("CREATE EXTENSION IF NOT EXISTS scipis")
        psql("SELECT scipis_create_collection('locate_bench', %s)" % lit(corpus))
        t0 = time.time()
        segments = int(psql("SELECT segments FROM scipis_index('locate_bench')"))
        index_s = time.time() - t0
        psql("SELECT count(*) FROM scipis_locate('x', 'locate_bench')")  # loads the collection
        # Warm: every pattern and run in one session (one backend, its
        # collection loaded once), alternating runs over the patterns.
        script = "\n".join("EXPLAIN (ANALYZE, TIMING OFF) SELECT count(*) FROM scipis_locate(%s, "
                           "'locate_bench');" % lit(pat) for _ in range(a.runs) for pat in patterns)
        times = [float(t) for t in re.findall(r"Execution Time: ([0-9.]+) ms", psql(script))]
        warm = {pat: statistics.median(times[r * len(patterns) + i] for r in range(a.runs))
                for i, pat in enumerate(patterns)}
        rows = []
        for pat in patterns:
            pl, sc = [], []
            for _ in range(a.runs):
                t0 = time.perf_counter()
                out = subprocess.run(["plocate", "-d", db, "--", pat], capture_output=True)
                pl.append((time.perf_counter() - t0) * 1000)
                n_pl = out.stdout.count(b"\n")
                plan = psql("EXPLAIN (ANALYZE, TIMING OFF) SELECT count(*) FROM scipis_locate(%s, "
                            "'locate_bench')" % lit(pat))
                sc.append(float(re.search(r"Execution Time: ([0-9.]+) ms", plan).group(1)))
            n_sc = int(psql("SELECT count(*) FROM scipis_locate(%s, 'locate_bench')" % lit(pat)))
            rows.append((pat, n_pl, n_sc, statistics.median(pl), statistics.median(sc), warm[pat]))
        psql("SELECT scipis_drop_collection('locate_bench')")
    finally:
        shutil.rmtree(work, ignore_errors=True)

    with open(os.path.join(a.results, "locate.csv"), "w") as f:
        f.write("pattern,plocate_count,scipis_count,plocate_ms,scipis_fresh_backend_ms,scipis_warm_ms\n")
        for r in rows:
            f.write('"%s",%d,%d,%.3f,%.3f,%.3f\n' % (r[0].replace('"', '""'), r[1], r[2], r[3], r[4], r[5]))
    pl = [r[3] for r in rows]
    sc = [r[4] for r in rows]
    wm = [r[5] for r in rows]
    load = open("/proc/loadavg").read().split()[:3]
    with open(os.path.join(a.results, "locate.md"), "w") as f:
        f.write("# scipis_locate and plocate: %s\n\n" % os.path.basename(corpus))
        f.write("%s; %d CPUs; load %s at the end. %d files; %d patterns (%d substrings, %d globs), "
                "median of %d runs each.\n\n" % (time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                                                 os.cpu_count(), " ".join(load), len(paths),
                                                 len(patterns), len(subs), len(globs), a.runs))
        f.write("| | scipis_locate, new backend each | scipis_locate, one backend | plocate (a process) |\n"
                "|---|---|---|---|\n")
        f.write("| build, s | %.1f (`scipis_index`: the whole full-text index) | | %.1f (`updatedb`) |\n"
                % (index_s, updatedb_s))
        f.write("| p50, ms | %.2f | %.2f | %.2f |\n| p99, ms | %.2f | %.2f | %.2f |\n"
                % (pct(sc, 50), pct(wm, 50), pct(pl, 50), pct(sc, 99), pct(wm, 99), pct(pl, 99)))
        pre = psql("SHOW shared_preload_libraries").strip()
        f.write("\nBoth read trigram posting lists (scipis one table per build, its lists cut by "
                "segment, %d segments) and "
                "match the candidates' paths. shared_preload_libraries = '%s'. plocate's times include "
                "starting a process, scipis's do not "
                "include a client round trip. Counts differ where directories match (plocate lists "
                "them): %d of %d patterns had equal counts.\n"
                % (segments, pre, sum(1 for r in rows if r[1] == r[2]), len(rows)))
    print(open(os.path.join(a.results, "locate.md")).read())


if __name__ == "__main__":
    main()
