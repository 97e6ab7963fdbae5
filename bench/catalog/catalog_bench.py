#!/usr/bin/env python3
"""Millions of files and hundreds of connections (issue 12): one run of
scipis against its peers on one tree of small files.

Normally started by bench/catalog/run.sh, which makes the tree and a
throw-away cluster (pg_virtualenv -t); this script expects PG* variables
pointing at a server with scipis installed, and runs as root (it reads
/proc/<backend pid>/ and runs updatedb, find and Lucene on the tree).

    python3 bench/catalog/catalog_bench.py --corpus DIR --results OUT_DIR [--label L]
        [--parts index,memory,connections,metadata,locate] [--threads 2] [--index-runs 1]
        [--clients 64] [--pgbench-threads 2] [--duration 10] [--reconnect]
        [--memory-reps 3] [--runs 3] [--locate-runs 5] [--scratch DIR] [--lucene-heap 4g]

Parts (each switchable; the scipis collection "catalog" is always built,
as every other part needs it):

index        scipis_index files/s and MiB/s (wall time around the call);
             Lucene 9 (bench/lucene, --threads threads) on the same tree;
             plocate's `updatedb -U DIR -o DB -l 0`, timed as a process.
memory       --memory-reps fresh backends: VmRSS, RssAnon, RssFile, RssShmem
             (/proc/PID/status) and Pss (/proc/PID/smaps_rollup) before and
             after the first and second top-10 scipis_search, the latency of
             both (EXPLAIN ANALYZE planning + execution, and the client's
             clock), and the output of any SQL function or view named
             scipis*mem* (scipis's own accounting) if the installed version
             has one.
connections  pgbench, --clients clients and --pgbench-threads threads for
             --duration s, --progress=1, each transaction a top-10
             scipis_search for a random term of terms.txt (real terms of the
             tree); per-second rate and latency, the time until the rate is
             steady, every client's first search (its backend's first). With
             --reconnect, once more with -C (a new connection per search).
metadata     SELECT count(*) FROM scipis_files WHERE size > T / mtime > T at
             selectivities 1e-6, 1e-4, 1e-2 and 0.5 (thresholds from the
             tree's own sizes and mtimes) against GNU find with the same
             predicate (-size +Tc, -newermt @T); counts printed side by side.
locate       bench/paths/locate_bench.py on the same tree (scipis_locate
             against plocate), its report folded in.

Writes OUT_DIR/catalog.md (the report), catalog.csv (part, metric, system,
value, unit, detail), raw.jsonl (every measurement with its details),
terms.txt, pgbench logs and progress output, and locate/ (locate_bench).
"""

import argparse
import bisect
import json
import math
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
COLL = "catalog"
ALL_PARTS = ["index", "memory", "connections", "metadata", "locate"]
SELECTIVITIES = [1e-6, 1e-4, 1e-2, 0.5]


def log(msg):
    sys.stderr.write("[%s] %s\n" % (time.strftime("%H:%M:%S"), msg))
    sys.stderr.flush()


def lit(s):
    return "'" + s.replace("'", "''") + "'"


def psql(sql, check=True):
    p = subprocess.run(["psql", "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1", "-c", sql],
                       capture_output=True, text=True)
    if check and p.returncode != 0:
        raise RuntimeError("psql failed: %s\n%s" % (sql, p.stderr))
    return p.stdout


class Session:
    """One backend, kept open: a psql reading statements from a pipe."""

    def __init__(self):
        self.p = subprocess.Popen(["psql", "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1"],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                  text=True, bufsize=1)
        self.n = 0

    def run(self, sql):
        self.n += 1
        mark = "__catalog_bench_%d__" % self.n
        self.p.stdin.write(sql.strip().rstrip(";") + ";\n\\echo " + mark + "\n")
        self.p.stdin.flush()
        lines = []
        while True:
            line = self.p.stdout.readline()
            if not line:
                raise RuntimeError("psql ended during: %s\n%s" % (sql, "".join(lines)))
            if line.rstrip("\n") == mark:
                break
            lines.append(line)
        out = "".join(lines)
        if "ERROR:" in out:
            raise RuntimeError("psql error in: %s\n%s" % (sql, out))
        return out

    def timed(self, sql):
        t0 = time.perf_counter()
        out = self.run(sql)
        return out, (time.perf_counter() - t0) * 1000

    def close(self):
        try:
            self.p.stdin.close()
            self.p.wait(timeout=30)
        except Exception:
            self.p.kill()


def explain_times(out):
    pl = re.search(r"Planning Time: ([0-9.]+) ms", out)
    ex = re.search(r"Execution Time: ([0-9.]+) ms", out)
    return (float(pl.group(1)) if pl else float("nan")), (float(ex.group(1)) if ex else float("nan"))


def pct(v, p):
    v = sorted(v)
    if not v:
        return float("nan")
    return v[min(len(v) - 1, max(0, int(math.ceil(p / 100 * len(v))) - 1))]


def sh(cmd):
    return subprocess.run(cmd, shell=True, capture_output=True, text=True).stdout.strip()


class Recorder:
    def __init__(self, out):
        self.out = out
        self.raw = open(os.path.join(out, "raw.jsonl"), "w")
        self.rows = []

    def rec(self, part, metric, system, value, unit, detail="", **extra):
        d = dict(part=part, metric=metric, system=system, value=value, unit=unit, detail=detail)
        d.update(extra)
        self.raw.write(json.dumps(d, default=str) + "\n")
        self.raw.flush()
        self.rows.append(d)

    def raw_line(self, part, what, **data):
        self.raw.write(json.dumps(dict(part=part, what=what, **data), default=str) + "\n")
        self.raw.flush()

    def write_csv(self):
        with open(os.path.join(self.out, "catalog.csv"), "w") as f:
            f.write("part,metric,system,value,unit,detail\n")
            for r in self.rows:
                v = r["value"]
                v = "" if v is None else ("%.6g" % v if isinstance(v, float) else str(v))
                f.write('%s,%s,%s,%s,%s,"%s"\n' % (r["part"], r["metric"], r["system"], v, r["unit"],
                                                   str(r["detail"]).replace('"', '""')))


# ------------------------------------------------------------------ corpus --

def walk(root):
    """(paths, sizes, mtime_ns, ndirs) of every regular file, paths sorted."""
    files, ndirs = [], 0
    stack = [root]
    while stack:
        d = stack.pop()
        ndirs += 1
        with os.scandir(d) as it:
            for e in it:
                if e.is_dir(follow_symlinks=False):
                    stack.append(e.path)
                elif e.is_file(follow_symlinks=False):
                    st = e.stat(follow_symlinks=False)
                    files.append((e.path, st.st_size, st.st_mtime_ns))
    files.sort()
    return [f[0] for f in files], [f[1] for f in files], [f[2] for f in files], ndirs


TOKEN = re.compile(rb"[A-Za-z0-9_\x80-\xff]+")


def pick_terms(paths, seed=42, sample=2000):
    """Real terms of the tree, tokenized as scipis does (ASCII letters,
    digits, _ and bytes >= 0x80; ASCII lower-cased), from a fixed sample of
    files: the 16 most frequent words, 16 of middling frequency and 16 seen
    in one sampled file only (letters only, 5+ bytes, so they are words and
    not numbers or ids)."""
    rng = random.Random(seed)
    chosen = paths if len(paths) <= sample else rng.sample(paths, sample)
    df = {}
    for p in chosen:
        with open(p, "rb") as f:
            toks = {t[:255].lower() for t in TOKEN.findall(f.read())}
        for t in toks:
            df[t] = df.get(t, 0) + 1
    words = sorted(((n, t.decode("latin-1")) for t, n in df.items() if t.isalpha() and len(t) >= 3),
                   key=lambda x: (-x[0], x[1]))
    common = [t for _, t in words[:16]]
    n = len(chosen)
    mid_pool = [t for c, t in words if 0.01 * n <= c <= 0.10 * n and t not in common]
    rare_pool = [t for c, t in words if c == 1 and len(t) >= 5]

    def spread(pool, k):
        if len(pool) <= k:
            return list(pool)
        return [pool[int(i * len(pool) / k)] for i in range(k)]
    return common + spread(mid_pool, 16) + spread(rare_pool, 16), n


# -------------------------------------------------------------------- parts --

def machine_info(a):
    lscpu = sh("lscpu")
    model = re.search(r"Model name:\s*(.+)", lscpu)
    info = {
        "date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "label": a.label,
        "cpu_model": model.group(1).strip() if model else "?",
        "cores": os.cpu_count(),
        "ram_gib": round(int(re.search(r"MemTotal:\s+(\d+)", open("/proc/meminfo").read()).group(1)) / 1048576, 1),
        "kernel": os.uname().release,
        "os": sh(". /etc/os-release && echo \"$PRETTY_NAME\""),
        "git": sh("git -C %s rev-parse --short HEAD" % REPO) +
        ("" if subprocess.run(["git", "-C", REPO, "diff", "--quiet", "HEAD"]).returncode == 0 else "-dirty"),
        "postgresql": psql("SELECT version()").strip(),
        "scipis_version": psql("SELECT extversion FROM pg_extension WHERE extname = 'scipis'").strip(),
        "java": sh("java -version 2>&1 | head -1"),
        "plocate": sh("plocate --version | head -1"),
        "find": sh("find --version | head -1"),
        "pgbench": sh("pgbench --version"),
        "loadavg_start": " ".join(open("/proc/loadavg").read().split()[:3]),
    }
    so = os.path.join(sh("pg_config --pkglibdir"), "scipis.so")
    if os.path.exists(so):
        info["scipis_so"] = "%s sha256 %s" % (time.strftime("%Y-%m-%d %H:%M", time.gmtime(os.path.getmtime(so))),
                                             sh("sha256sum %s | cut -c1-16" % so))
    info["pg_settings"] = psql("SELECT string_agg(name || '=' || setting, ' ' ORDER BY name) FROM pg_settings "
                               "WHERE name IN ('shared_buffers','work_mem','max_connections','fsync','jit','shared_preload_libraries')").strip()
    return info


def warm(corpus):
    subprocess.run("find %s -type f -print0 | xargs -0 cat > /dev/null" % shlexq(corpus), shell=True, check=True)


def shlexq(s):
    return "'" + s.replace("'", "'\\''") + "'"


def scipis_build(R, a, corpus, part):
    load = open("/proc/loadavg").read().split()[0]
    t0 = time.perf_counter()
    out = psql("SELECT row_to_json(s) FROM scipis_index(%s) s" % lit(COLL))
    wall = time.perf_counter() - t0
    d = json.loads(out.strip())
    R.raw_line(part, "scipis_index", wall_s=wall, load1=load, **d)
    return wall, d, load


def part_index(R, a, corpus, files, nbytes, ndirs, scratch, first_build):
    res = {"scipis": [], "lucene": [], "updatedb": []}
    jar = os.path.join(REPO, "bench", "lucene", "target", "scipis-bench-lucene.jar")
    have_jar = os.path.exists(jar)
    if not have_jar:
        log("Lucene jar %s missing (make -C bench lucene): Lucene skipped" % jar)
    for run in range(a.index_runs):
        if run == 0 and first_build is not None:
            wall, d, load = first_build
        else:
            warm(corpus)
            log("index: scipis build %d" % (run + 1))
            wall, d, load = scipis_build(R, a, corpus, "index")
        res["scipis"].append(dict(wall_s=wall, files=d["files"], bytes=d["bytes"], seconds=d["seconds"], load1=load,
                                  detail=d))
        if have_jar:
            warm(corpus)
            ldir = os.path.join(scratch, "lucene")
            shutil.rmtree(ldir, ignore_errors=True)
            load = open("/proc/loadavg").read().split()[0]
            log("index: Lucene build %d, %d threads" % (run + 1, a.threads))
            t0 = time.perf_counter()
            p = subprocess.run(["java", "-Xms" + a.lucene_heap, "-Xmx" + a.lucene_heap, "-cp", jar,
                                "scipis.bench.Index", "--corpus", corpus, "--index", ldir,
                                "--threads", str(a.threads)], capture_output=True, text=True)
            proc_wall = time.perf_counter() - t0
            if p.returncode != 0:
                log("Lucene failed: %s" % p.stderr[-2000:])
            else:
                d = json.loads(p.stdout.strip().splitlines()[-1])
                R.raw_line("index", "lucene", process_wall_s=proc_wall, load1=load, **d)
                res["lucene"].append(dict(wall_s=d["seconds"], process_wall_s=proc_wall, files=d["files"],
                                          bytes=d["bytes"], load1=load, detail=d))
            shutil.rmtree(ldir, ignore_errors=True)
        db = os.path.join(scratch, "plocate.db")
        load = open("/proc/loadavg").read().split()[0]
        log("index: updatedb %d" % (run + 1))
        t0 = time.perf_counter()
        subprocess.run(["updatedb", "-U", corpus, "-o", db, "-l", "0"], check=True)
        wall = time.perf_counter() - t0
        R.raw_line("index", "updatedb", wall_s=wall, load1=load, db_bytes=os.path.getsize(db))
        res["updatedb"].append(dict(wall_s=wall, files=files, load1=load, db_bytes=os.path.getsize(db)))
        os.unlink(db)
    best = {s: min(v, key=lambda b: b["wall_s"]) for s, v in res.items() if v}
    mib = nbytes / 1048576
    for s, b in best.items():
        R.rec("index", "files_per_s", s, b["files"] / b["wall_s"], "files/s",
              "fastest of %d; wall %.3f s" % (len(res[s]), b["wall_s"]))
        if s != "updatedb":
            R.rec("index", "mib_per_s", s, b["bytes"] / 1048576 / b["wall_s"], "MiB/s", "")
        R.rec("index", "wall_s", s, b["wall_s"], "s", "")
    if "lucene" in best:
        R.rec("index", "files_per_s_ratio", "scipis_vs_lucene",
              best["lucene"]["wall_s"] / best["scipis"]["wall_s"], "x", "Lucene's own clock")
    if "updatedb" in best:
        R.rec("index", "wall_ratio", "updatedb_vs_scipis", best["scipis"]["wall_s"] / best["updatedb"]["wall_s"], "x",
              "scipis wall / updatedb wall (updatedb reads no file content)")
    return res, best


def read_mem(pid):
    out = {}
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            k, _, v = line.partition(":")
            if k in ("VmRSS", "VmHWM", "RssAnon", "RssFile", "RssShmem", "VmSize"):
                out[k] = int(v.split()[0])
    try:
        with open("/proc/%d/smaps_rollup" % pid) as f:
            for line in f:
                k, _, v = line.partition(":")
                if k in ("Pss", "Pss_Anon", "Pss_File", "Pss_Shmem", "Private_Dirty", "Private_Clean"):
                    out[k] = int(v.split()[0])
    except OSError:
        pass
    return out


def memory_functions():
    """SQL functions (callable without arguments) and views of scipis whose
    name mentions memory: scipis's own accounting, when the build has one."""
    fns = psql("SELECT p.proname FROM pg_proc p JOIN pg_depend d ON d.objid = p.oid AND d.deptype = 'e' "
               "JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'scipis' "
               "WHERE p.proname ILIKE '%mem%' AND p.pronargs - p.pronargdefaults = 0 ORDER BY 1").split()
    views = psql("SELECT c.relname FROM pg_class c JOIN pg_depend d ON d.objid = c.oid AND d.deptype = 'e' "
                 "JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'scipis' "
                 "WHERE c.relkind = 'v' AND c.relname ILIKE '%mem%' ORDER BY 1").split()
    return ["SELECT json_agg(t) FROM %s() t" % f for f in fns] + ["SELECT json_agg(t) FROM %s t" % v for v in views]


def part_memory(R, a, terms):
    mem_sql = memory_functions()
    R.raw_line("memory", "memory_functions", queries=mem_sql)
    reps = []
    for rep in range(a.memory_reps):
        # A frequent term first, then one of middling frequency (terms.txt order).
        t1, t2 = terms[rep % len(terms)], terms[(16 + rep) % len(terms)]
        s = Session()
        try:
            pid = int(s.run("SELECT pg_backend_pid()").strip())
            before = read_mem(pid)
            own = {}
            for q in mem_sql:
                own["before:" + q] = s.run(q).strip()
            qs = "EXPLAIN (ANALYZE, TIMING OFF) SELECT path, score FROM scipis_search(%s, %s, 10)"
            o1, c1 = s.timed(qs % (lit(t1), lit(COLL)))
            after1 = read_mem(pid)
            for q in mem_sql:
                own["after_q1:" + q] = s.run(q).strip()
            o2, c2 = s.timed(qs % (lit(t2), lit(COLL)))
            after2 = read_mem(pid)
            # Ten more, to see whether memory keeps growing with use.
            for t in terms[:10]:
                s.run("SELECT count(*) FROM scipis_search(%s, %s, 10)" % (lit(t), lit(COLL)))
            after12 = read_mem(pid)
            for q in mem_sql:
                own["after_q12:" + q] = s.run(q).strip()
        finally:
            s.close()
        own_sum = {}
        for k, v in own.items():
            step = k.split(":")[0]
            try:
                rows = json.loads(v) if v else []
            except ValueError:
                continue
            tot = own_sum.setdefault(step, {})
            for row in rows or []:
                for f, x in (row.items() if isinstance(row, dict) else []):
                    if isinstance(x, (int, float)) and not isinstance(x, bool):
                        tot[f] = tot.get(f, 0) + x
        p1, e1 = explain_times(o1)
        p2, e2 = explain_times(o2)
        r = dict(rep=rep + 1, pid=pid, terms=[t1, t2], before=before, after_q1=after1, after_q2=after2,
                 after_q12=after12, q1=dict(planning_ms=p1, execution_ms=e1, client_ms=c1),
                 q2=dict(planning_ms=p2, execution_ms=e2, client_ms=c2), own=own, own_sum=own_sum)
        R.raw_line("memory", "fresh_backend", **r)
        reps.append(r)
    for key in ("VmRSS", "RssAnon", "RssFile", "RssShmem", "Pss", "Pss_Anon"):
        vals = [r for r in reps if key in r["before"]]
        if not vals:
            continue
        R.rec("memory", key + "_before", "scipis", statistics.median(r["before"][key] for r in vals), "kB",
              "median of %d fresh backends" % len(vals))
        R.rec("memory", key + "_after_first_search", "scipis",
              statistics.median(r["after_q1"][key] for r in vals), "kB", "")
        R.rec("memory", key + "_delta_first_search", "scipis",
              statistics.median(r["after_q1"][key] - r["before"][key] for r in vals), "kB", "")
        R.rec("memory", key + "_after_12_searches", "scipis",
              statistics.median(r["after_q12"][key] for r in vals), "kB", "")
    for step in ("before", "after_q1", "after_q12"):
        fields = sorted({f for r in reps for f in r["own_sum"].get(step, {})})
        for f in fields:
            R.rec("memory", "own_%s_%s" % (f, step), "scipis",
                  statistics.median(r["own_sum"].get(step, {}).get(f, 0) for r in reps), "",
                  "scipis's own accounting, summed over its rows; median of fresh backends")
    R.rec("memory", "first_search_ms", "scipis",
          statistics.median(r["q1"]["planning_ms"] + r["q1"]["execution_ms"] for r in reps), "ms",
          "planning + execution, EXPLAIN ANALYZE, median of fresh backends")
    R.rec("memory", "second_search_ms", "scipis",
          statistics.median(r["q2"]["planning_ms"] + r["q2"]["execution_ms"] for r in reps), "ms", "")
    R.rec("memory", "first_search_client_ms", "scipis", statistics.median(r["q1"]["client_ms"] for r in reps), "ms",
          "psql round trip")
    R.rec("memory", "second_search_client_ms", "scipis", statistics.median(r["q2"]["client_ms"] for r in reps),
          "ms", "")
    return reps, mem_sql


PROGRESS = re.compile(r"progress: ([0-9.]+) s, ([0-9.]+) tps, lat ([0-9.]+) ms stddev ([0-9.]+|NaN)")


def run_pgbench(R, a, terms, out, name, reconnect, baseline=False):
    if baseline:
        script = os.path.join(out, "pgbench-select1.sql")
        with open(script, "w") as f:
            f.write("SELECT 1;\n")
    else:
        script = os.path.join(out, "pgbench-search.sql")
        arr = "ARRAY[" + ",".join(lit(t) for t in terms) + "]"
        with open(script, "w") as f:
            f.write("\\set i random(1, %d)\n" % len(terms))
            f.write("SELECT path, score FROM scipis_search((%s)[ :i ], %s, 10);\n" % (arr, lit(COLL)))
    logdir = os.path.join(out, "pgbench-" + name)
    shutil.rmtree(logdir, ignore_errors=True)
    os.makedirs(logdir)
    cmd = ["pgbench", "-n", "-c", str(a.clients), "-j", str(a.pgbench_threads), "-T", str(a.duration),
           "--progress=1", "-f", script, "-l", "--log-prefix=" + os.path.join(logdir, "tx")]
    if reconnect:
        cmd.insert(1, "-C")
    log("connections: %s" % " ".join(cmd))
    t_start = time.time()
    fo = tempfile.TemporaryFile("w+")
    fe = tempfile.TemporaryFile("w+")
    p = subprocess.Popen(cmd, stdout=fo, stderr=fe, text=True)
    # At 70% of the run, the memory of every pgbench backend.
    time.sleep(a.duration * 0.7)
    backends = []
    if p.poll() is None:
        pids = psql("SELECT pid FROM pg_stat_activity WHERE application_name = 'pgbench' "
                    "AND backend_type = 'client backend'", check=False).split()
        for pid in pids:
            try:
                backends.append(read_mem(int(pid)))
            except (OSError, ValueError):
                pass
    rc = p.wait()
    fo.seek(0)
    fe.seek(0)
    stdout, stderr = fo.read(), fe.read()
    with open(os.path.join(out, "pgbench-%s.out" % name), "w") as f:
        f.write("$ " + " ".join(cmd) + "\n" + stdout + stderr)
    if rc != 0:
        raise RuntimeError("pgbench failed:\n%s" % stderr[-3000:])
    prog = [dict(t=float(m.group(1)), tps=float(m.group(2)), lat_ms=float(m.group(3)),
                 stddev_ms=float(m.group(4)) if m.group(4) != "NaN" else None)
            for m in PROGRESS.finditer(stderr)]
    summ = {}
    for k, rx in (("tps", r"tps = ([0-9.]+) \("), ("lat_avg_ms", r"latency average = ([0-9.]+) ms"),
                  ("conn_ms", r"initial connection time = ([0-9.]+) ms"),
                  ("avg_conn_ms", r"average connection time = ([0-9.]+) ms"),
                  ("tx", r"number of transactions actually processed: (\d+)"),
                  ("failed", r"number of failed transactions: (\d+)")):
        m = re.search(rx, stdout)
        summ[k] = float(m.group(1)) if m else None
    # Per-transaction log: client, tx no, latency us, script, end epoch s, end us.
    tx = []
    for fn in os.listdir(logdir):
        with open(os.path.join(logdir, fn)) as f:
            for line in f:
                x = line.split()
                if len(x) >= 6:
                    end = int(x[4]) + int(x[5]) / 1e6
                    tx.append((int(x[0]), int(x[1]), int(x[2]) / 1000.0, end))
    t0 = min(e - l / 1000 for _, _, l, e in tx) if tx else t_start
    half = {}
    for _, _, lat, end in tx:
        b = int((end - t0) / 0.5)
        half.setdefault(b, []).append(lat)
    # Full half-second buckets from the first search's start to the last
    # search's end (pgbench's -T also counts the time it takes to connect).
    t_end = max(e for _, _, _, e in tx) if tx else t0
    nb = int((t_end - t0) / 0.5)
    buckets = [dict(t=(b + 1) * 0.5, rate=len(half.get(b, [])) / 0.5,
                    p50_ms=pct(half.get(b, []), 50), p99_ms=pct(half.get(b, []), 99)) for b in range(nb)]
    full = buckets
    late = [x["rate"] for x in full[len(full) // 2:]]
    steady = statistics.median(late) if late else float("nan")
    # Steady at the end of the first half-second bucket that runs at >= 90%
    # of the steady rate; the buckets below that after it are counted apart
    # (a shared machine has the odd dip). Not for -C runs: pgbench connects
    # each thread's clients one after the other, so their searches come in
    # bursts and half-second rates mean nothing.
    t_steady, dips = None, None
    for i, x in enumerate(full if not reconnect else []):
        if x["rate"] >= 0.9 * steady:
            t_steady = x["t"]
            dips = sum(1 for y in full[i + 1:] if y["rate"] < 0.9 * steady)
            break
    first_no = {}
    for c, n, l, e in tx:
        if c not in first_no or n < first_no[c][0]:
            first_no[c] = (n, l)
    first = sorted(v[1] for v in first_no.values())
    res = dict(name=name, reconnect=reconnect, baseline=baseline, cmd=" ".join(cmd), progress=prog, summary=summ, buckets=buckets,
               steady_rate=None if reconnect else steady, t_steady_s=t_steady, dips_after=dips,
               first_search_after_start_s=t0 - t_start, first_tx_ms=dict(n=len(first), p50=pct(first, 50),
                                                                        p90=pct(first, 90), max=pct(first, 100)),
               all_tx_ms=dict(n=len(tx), p50=pct([x[2] for x in tx], 50), p99=pct([x[2] for x in tx], 99)),
               backends_mem=dict(n=len(backends), **{k: sum(b.get(k, 0) for b in backends)
                                                     for k in ("VmRSS", "RssAnon", "RssFile", "RssShmem", "Pss",
                                                               "Pss_Anon")}),
               backend_mem_each=backends)
    R.raw_line("connections", "pgbench", **res)
    tag = name
    R.rec("connections", "searches_per_s", tag, summ["tps"], "searches/s",
          "pgbench -c %d -j %d -T %d%s" % (a.clients, a.pgbench_threads, a.duration, " -C" if reconnect else ""))
    R.rec("connections", "latency_avg_ms", tag, summ["lat_avg_ms"], "ms", "")
    R.rec("connections", "steady_rate", tag, res["steady_rate"], "searches/s", "median rate of the half-second buckets of the 2nd half")
    R.rec("connections", "time_to_steady_s", tag, t_steady, "s", "end of the first half-second bucket at >= 90% of the steady rate")
    R.rec("connections", "dips_after_steady", tag, dips, "buckets", "later half-second buckets below 90%")
    R.rec("connections", "first_search_p50_ms", tag, res["first_tx_ms"]["p50"], "ms", "each client's first search")
    R.rec("connections", "first_search_max_ms", tag, res["first_tx_ms"]["max"], "ms", "")
    bm = res["backends_mem"]
    if bm["n"]:
        for k in ("RssAnon", "Pss", "VmRSS"):
            R.rec("connections", "backends_%s_total" % k, tag, bm[k], "kB",
                  "sum over the %d pgbench backends at %.0f%% of the run" % (bm["n"], 70))
    for x in prog:
        R.rec("connections", "progress_tps_%gs" % x["t"], tag, x["tps"], "searches/s", "lat %.3f ms" % x["lat_ms"])
    return res


def choose_size_threshold(sizes_sorted, k):
    """T with count(size > T) as close as possible to k (>= 1)."""
    n = len(sizes_sorted)
    best = None
    cands = sorted(set(sizes_sorted)) + [sizes_sorted[0] - 1]
    for v in cands:
        c = n - bisect.bisect_right(sizes_sorted, v)
        if c < 1:
            continue
        key = (abs(math.log(c / k)), -v)
        if best is None or key < best[0]:
            best = (key, v, c)
    return best[1], best[2]


def choose_mtime_threshold(mt_sorted, k):
    """T in whole microseconds with count(mtime > T) near k, where the two
    files on either side of T are at least 2 us apart: find compares
    nanoseconds, scipis_files microseconds (truncated), and both must split
    the files the same way."""
    n = len(mt_sorted)
    for d in range(0, n):
        for kk in (k + d, k - d):
            if kk < 1 or kk >= n:
                continue
            lo, hi = mt_sorted[n - kk - 1], mt_sorted[n - kk]
            if hi // 1000 - lo // 1000 >= 2:
                return lo // 1000 + 1, kk
    return mt_sorted[0] // 1000, n


def us_literal(us):
    s, f = divmod(us, 10**6)
    return time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(s)) + ".%06d+00" % f


def part_metadata(R, a, corpus, sizes, mtimes):
    n = len(sizes)
    ss, ms = sorted(sizes), sorted(mtimes)
    cases = []
    for sel in SELECTIVITIES:
        k = max(1, int(round(sel * n)))
        t, c = choose_size_threshold(ss, k)
        cases.append(dict(sel=sel, target=k, kind="size", expect=c, sql="size > %d" % t,
                          find=["-size", "+%dc" % t], show="size > %d B" % t))
        tu, c = choose_mtime_threshold(ms, k)
        cases.append(dict(sel=sel, target=k, kind="mtime", expect=c, sql="mtime > %s" % lit(us_literal(tu)),
                          find=["-newermt", "@%d.%06d" % divmod(tu, 10**6)], show="mtime > %s" % us_literal(tu)))
    s = Session()
    try:
        s.run("SELECT count(*) FROM scipis_files")  # loads the file records into this backend
        for c in cases:
            q = "SELECT count(*) FROM scipis_files WHERE %s" % c["sql"]
            c["scipis_count"] = int(s.run(q).strip())
            warm_ms, fresh_ms, find_ms, fcounts = [], [], [], []
            for _ in range(a.runs):
                warm_ms.append(explain_times(s.run("EXPLAIN (ANALYZE, TIMING OFF) " + q))[1])
                fresh_ms.append(explain_times(psql("EXPLAIN (ANALYZE, TIMING OFF) " + q))[1])
                t0 = time.perf_counter()
                p = subprocess.run(["find", corpus, "-type", "f"] + c["find"] + ["-printf", "\n"],
                                   capture_output=True, check=True)
                find_ms.append((time.perf_counter() - t0) * 1000)
                fcounts.append(p.stdout.count(b"\n"))
            c.update(find_count=fcounts[0], find_counts_agree=len(set(fcounts)) == 1,
                     scipis_warm_ms=statistics.median(warm_ms), scipis_fresh_ms=statistics.median(fresh_ms),
                     find_ms=statistics.median(find_ms), runs=dict(warm=warm_ms, fresh=fresh_ms, find=find_ms))
            c["agree"] = c["scipis_count"] == c["find_count"] == c["expect"]
            R.raw_line("metadata", "predicate", **c)
            tag = "%s_%g" % (c["kind"], c["sel"])
            R.rec("metadata", "count_" + tag, "scipis", c["scipis_count"], "files", c["show"])
            R.rec("metadata", "count_" + tag, "find", c["find_count"], "files", " ".join(c["find"]))
            R.rec("metadata", "ms_" + tag, "scipis_fresh_backend", c["scipis_fresh_ms"], "ms", "Execution Time")
            R.rec("metadata", "ms_" + tag, "scipis_warm_backend", c["scipis_warm_ms"], "ms", "Execution Time")
            R.rec("metadata", "ms_" + tag, "find", c["find_ms"], "ms", "process wall")
            R.rec("metadata", "ratio_" + tag, "find_vs_scipis_fresh", c["find_ms"] / c["scipis_fresh_ms"], "x", "")
            log("metadata: %-48s scipis %8d  find %8d  %s  scipis %.1f/%.1f ms (fresh/warm), find %.1f ms" % (
                c["show"], c["scipis_count"], c["find_count"], "agree" if c["agree"] else "DIFFER",
                c["scipis_fresh_ms"], c["scipis_warm_ms"], c["find_ms"]))
    finally:
        s.close()
    return cases


def part_locate(R, a, corpus, out):
    d = os.path.join(out, "locate")
    log("locate: bench/paths/locate_bench.py")
    subprocess.run([sys.executable, os.path.join(REPO, "bench", "paths", "locate_bench.py"), "--corpus", corpus,
                    "--results", d, "--runs", str(a.locate_runs)], check=True, stdout=subprocess.DEVNULL)
    rows = []
    import csv
    with open(os.path.join(d, "locate.csv")) as f:
        for r in csv.DictReader(f):
            rows.append(r)
    res = {}
    for col, name in (("plocate_ms", "plocate"), ("scipis_fresh_backend_ms", "scipis_fresh_backend"),
                      ("scipis_warm_ms", "scipis_warm_backend")):
        v = [float(r[col]) for r in rows]
        res[name] = dict(p50=pct(v, 50), p99=pct(v, 99))
        R.rec("locate", "p50_ms", name, res[name]["p50"], "ms", "%d patterns" % len(rows))
        R.rec("locate", "p99_ms", name, res[name]["p99"], "ms", "")
    R.rec("locate", "p50_ratio", "scipis_fresh_vs_plocate",
          res["scipis_fresh_backend"]["p50"] / res["plocate"]["p50"], "x", "> 1: plocate faster")
    R.rec("locate", "p50_ratio", "scipis_warm_vs_plocate",
          res["scipis_warm_backend"]["p50"] / res["plocate"]["p50"], "x", "> 1: plocate faster")
    build = re.search(r"\| build, s \| ([0-9.]+).*\| ([0-9.]+) \(`updatedb`\)", open(os.path.join(d, "locate.md")).read())
    res["patterns"] = len(rows)
    res["equal_counts"] = sum(1 for r in rows if r["plocate_count"] == r["scipis_count"])
    res["build"] = build.groups() if build else None
    return res


# ------------------------------------------------------------------- report --

def fmt(v, nd=1):
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "—"
    if isinstance(v, float):
        if abs(v) >= 100:
            return "{:,.0f}".format(v)
        return "{:,.{}f}".format(v, nd if abs(v) >= 1 else max(nd, 3))
    return "{:,}".format(v)


def mib(kb):
    return "%.1f" % (kb / 1024.0)


def summary(w, a, res):
    """The headline numbers and the ratios, scipis against its peer."""
    rows = []
    if "index" in res:
        best = res["index"][1]
        sc = best.get("scipis")
        if sc and "lucene" in best:
            lu = best["lucene"]
            rows.append(("Indexing, files/s", "%s (%s MiB/s)" % (fmt(sc["files"] / sc["wall_s"]),
                                                               fmt(sc["bytes"] / 1048576 / sc["wall_s"])),
                         "Lucene %s (%s MiB/s)" % (fmt(lu["files"] / lu["wall_s"]), fmt(lu["bytes"] / 1048576 / lu["wall_s"])),
                         "%.2f× faster" % (lu["wall_s"] / sc["wall_s"])))
        if sc and "updatedb" in best:
            ud = best["updatedb"]
            rows.append(("Build time, s (updatedb: paths only)", fmt(sc["wall_s"], 2), "updatedb %s" % fmt(ud["wall_s"], 2),
                         "%.2f× %s" % (max(sc["wall_s"], ud["wall_s"]) / min(sc["wall_s"], ud["wall_s"]),
                                       "faster" if sc["wall_s"] < ud["wall_s"] else "slower")))
    if "memory" in res:
        reps = res["memory"][0]
        md = statistics.median
        rows.append(("Fresh backend, RssAnon added by the first search, MiB",
                     mib(md(r["after_q1"]["RssAnon"] - r["before"]["RssAnon"] for r in reps)), "—", ""))
        own_fields = sorted({f for r in reps for f in r["own_sum"].get("after_q1", {})})
        if own_fields:
            rows.append(("  scipis's own accounting after it, MiB", ", ".join(
                "%s %.2f" % (f, md(r["own_sum"].get("after_q1", {}).get(f, 0) for r in reps) / 1048576.0)
                for f in own_fields), "—", ""))
        f1 = md(r["q1"]["planning_ms"] + r["q1"]["execution_ms"] for r in reps)
        f2 = md(r["q2"]["planning_ms"] + r["q2"]["execution_ms"] for r in reps)
        rows.append(("First / second search of a backend, ms", "%s / %s" % (fmt(f1, 2), fmt(f2, 2)), "—",
                     "first is %.1f× the second" % (f1 / max(f2, 1e-9))))
    conns = res.get("connections", [])
    for cr in conns:
        if cr["baseline"]:
            continue
        if cr["reconnect"]:
            base = [b for b in conns if b["baseline"]]
            if base:
                bt = base[0]["summary"]["tps"]
                rows.append(("%d clients, -C (new connection per search): transactions/s" % a.clients,
                             fmt(cr["summary"]["tps"]), "`SELECT 1` %s" % fmt(bt),
                             "%.2f×; a search costs the system %.1f ms more than `SELECT 1`" % (
                                 cr["summary"]["tps"] / bt, 1000 / cr["summary"]["tps"] - 1000 / bt)))
            continue
        rows.append(("%d fresh connections: searches/s, time to steady" % a.clients,
                     "%s/s, steady %s s after the first search (%s s after pgbench started)" % (
                         fmt(cr["summary"]["tps"]), fmt(cr["t_steady_s"], 1),
                         fmt(None if cr["t_steady_s"] is None else cr["t_steady_s"] + cr["first_search_after_start_s"], 1)),
                     "—", "target within 2 s: %s" % ("met" if cr["t_steady_s"] is not None and cr["t_steady_s"] <= 2
                                                     else "not met")))
        bm = cr["backends_mem"]
        if bm["n"]:
            rows.append(("  their backends' RssAnon, MiB (sum / each)", "%s / %s" % (mib(bm["RssAnon"]),
                                                                                    mib(bm["RssAnon"] / bm["n"])),
                         "—", ""))
    for c in res.get("metadata", []):
        rows.append(("count(*) where %s (sel. %g), ms" % (c["show"], c["sel"]),
                     "%s (fresh backend), %s (warm)" % (fmt(c["scipis_fresh_ms"], 1), fmt(c["scipis_warm_ms"], 1)),
                     "find %s" % fmt(c["find_ms"], 1),
                     "%.1f× / %.1f×%s" % (c["find_ms"] / c["scipis_fresh_ms"], c["find_ms"] / c["scipis_warm_ms"],
                                          "" if c["agree"] else "; COUNTS DIFFER")))
    if "locate" in res:
        r = res["locate"]
        rows.append(("locate p50, ms", "%s (new backend), %s (one backend)" % (
            fmt(r["scipis_fresh_backend"]["p50"], 2), fmt(r["scipis_warm_backend"]["p50"], 2)),
            "plocate %s" % fmt(r["plocate"]["p50"], 2),
            "%.2f× / %.2f×" % (r["plocate"]["p50"] / r["scipis_fresh_backend"]["p50"],
                              r["plocate"]["p50"] / r["scipis_warm_backend"]["p50"])))
    if not rows:
        return
    w("## Summary\n")
    w("Ratios are peer / scipis for times (> 1: scipis faster), scipis / peer for rates.\n")
    w("| | scipis | peer | ratio |\n|---|---|---|---|")
    for r in rows:
        w("| %s | %s | %s | %s |" % r)
    w("")


def report(a, out, info, corpus_info, parts, terms, res):
    L = []
    w = L.append
    w("# Millions of files and hundreds of connections: %s\n" % (a.label or os.path.basename(corpus_info["dir"])))
    w("%s; %s, %d cores, %.1f GiB RAM, kernel %s, %s; %s; scipis %s (git %s%s); load average %s at the start, %s at "
      "the end.\n" % (info["date_utc"], info["cpu_model"], info["cores"], info["ram_gib"], info["kernel"], info["os"],
                      info["postgresql"].split(" on ")[0], info["scipis_version"], info["git"],
                      ", scipis.so " + info["scipis_so"] if "scipis_so" in info else "",
                      info["loadavg_start"], info.get("loadavg_end", "?")))
    g = corpus_info.get("generator") or {}
    w("Tree: `%s`: %s files, %.1f MiB, %s directories; size p50 %d B, p90 %d B, max %d B; mtimes %s .. %s.%s\n" % (
        corpus_info["dir"], fmt(corpus_info["files"]), corpus_info["bytes"] / 1048576, fmt(corpus_info["dirs"]),
        corpus_info["size_p50"], corpus_info["size_p90"], corpus_info["size_max"], corpus_info["mtime_min"],
        corpus_info["mtime_max"],
        (" Generated by `make_tree.py --files %s --seed %s` (%s s)." % (g.get("files"), g.get("seed"), g.get("seconds")))
        if g else ""))
    w("Parts run: %s. PostgreSQL settings: %s. Everything below is from this one run.\n" % (
        ", ".join(parts), info["pg_settings"]))

    summary(w, a, res)

    if "index" in res:
        r, best = res["index"]
        w("## Indexing\n")
        w("Warm page cache (every file read once before each build). scipis: `scipis_index` wall time from the "
          "client (its own `seconds` in raw.jsonl); %d indexer threads. Lucene 9 (bench/lucene `scipis.bench.Index`, "
          "%d threads, one document per file, content not stored): its own clock, which starts after its file walk; "
          "the process's wall time (JVM start and walk included) beside it. plocate: `updatedb -U DIR -o DB -l 0` "
          "as a process; it records paths only, reading no file content. Fastest of %d build(s) each.\n"
          % (a.threads, a.threads, a.index_runs))
        w("| | files/s | MiB/s | wall, s | notes |\n|---|---|---|---|---|")
        if "scipis" in best:
            b = best["scipis"]
            w("| scipis_index | %s | %s | %s | function's own seconds %.3f; %s terms, %s segments, %s skipped |" % (
                fmt(b["files"] / b["wall_s"]), fmt(b["bytes"] / 1048576 / b["wall_s"]), fmt(b["wall_s"], 2),
                b["seconds"], fmt(b["detail"].get("terms")), b["detail"].get("segments"), b["detail"].get("skipped")))
        if "lucene" in best:
            b = best["lucene"]
            w("| Lucene %s | %s | %s | %s | process wall %.2f s (%s files/s); %s segments |" % (
                b["detail"].get("lucene", ""), fmt(b["files"] / b["wall_s"]), fmt(b["bytes"] / 1048576 / b["wall_s"]),
                fmt(b["wall_s"], 2), b["process_wall_s"], fmt(b["files"] / b["process_wall_s"]),
                b["detail"].get("segments")))
        if "updatedb" in best:
            b = best["updatedb"]
            w("| plocate updatedb | %s | — | %s | paths only; database %s bytes |" % (
                fmt(b["files"] / b["wall_s"]), fmt(b["wall_s"], 2), fmt(b["db_bytes"])))
        w("")
        if "lucene" in best:
            w("scipis vs Lucene: **%.2f×** the files/s (Lucene's own clock), %.2f× against Lucene's whole process." % (
                best["lucene"]["wall_s"] / best["scipis"]["wall_s"],
                best["lucene"]["process_wall_s"] / best["scipis"]["wall_s"]))
        if "updatedb" in best:
            w("scipis vs updatedb: scipis takes **%.2f×** updatedb's time (for the full-text index, the file records "
              "and the paths; updatedb only lists paths)." % (best["scipis"]["wall_s"] / best["updatedb"]["wall_s"]))
        w("\nEvery build: " + "; ".join("%s %s" % (s, ", ".join("%.2f s (load %s)" % (x["wall_s"], x["load1"])
                                                              for x in v)) for s, v in r.items() if v) + ".\n")

    if "memory" in res:
        reps, mem_sql = res["memory"]
        w("## Per-backend memory and the first search\n")
        w("%d fresh backends (a new psql connection each). Memory of the backend from `/proc/<pg_backend_pid()>/status` "
          "and `smaps_rollup`, read before its first scipis call, after the first top-10 `scipis_search`, after a "
          "second (another term) and after 10 more; MiB. RssAnon is the backend's private heap; RssFile includes "
          "the scipis.so and index pages mapped from files; RssShmem the shared buffers it touched; Pss splits "
          "shared pages among their users. Latency: EXPLAIN (ANALYZE, TIMING OFF) planning + execution time, and "
          "the client's clock around the statement (psql on the same machine).\n" % len(reps))
        w("| backend | terms | VmRSS before → 1st → 2nd → 12th | RssAnon before → 1st → 12th | RssFile before → 1st "
          "| Pss before → 1st → 12th | 1st search ms (server / client) | 2nd search ms (server / client) |")
        w("|---|---|---|---|---|---|---|---|")
        for r in reps:
            b, q1, q2, q12 = r["before"], r["after_q1"], r["after_q2"], r["after_q12"]
            w("| %d | %s, %s | %s → %s → %s → %s | %s → %s → %s | %s → %s | %s → %s → %s | %.2f / %.2f | %.2f / %.2f |" % (
                r["rep"], r["terms"][0], r["terms"][1], mib(b["VmRSS"]), mib(q1["VmRSS"]), mib(q2["VmRSS"]),
                mib(q12["VmRSS"]), mib(b["RssAnon"]), mib(q1["RssAnon"]), mib(q12["RssAnon"]), mib(b["RssFile"]),
                mib(q1["RssFile"]), mib(b.get("Pss", 0)), mib(q1.get("Pss", 0)), mib(q12.get("Pss", 0)),
                r["q1"]["planning_ms"] + r["q1"]["execution_ms"], r["q1"]["client_ms"],
                r["q2"]["planning_ms"] + r["q2"]["execution_ms"], r["q2"]["client_ms"]))
        md = statistics.median
        w("\nMedians: the first search adds **%s MiB** of RssAnon (%s MiB VmRSS, %s MiB Pss) to a fresh backend; "
          "first search %.2f ms, second %.2f ms (server); **%.1f×**.\n" % (
              mib(md(r["after_q1"]["RssAnon"] - r["before"]["RssAnon"] for r in reps)),
              mib(md(r["after_q1"]["VmRSS"] - r["before"]["VmRSS"] for r in reps)),
              mib(md(r["after_q1"].get("Pss", 0) - r["before"].get("Pss", 0) for r in reps)),
              md(r["q1"]["planning_ms"] + r["q1"]["execution_ms"] for r in reps),
              md(r["q2"]["planning_ms"] + r["q2"]["execution_ms"] for r in reps),
              md(r["q1"]["planning_ms"] + r["q1"]["execution_ms"] for r in reps) /
              max(1e-9, md(r["q2"]["planning_ms"] + r["q2"]["execution_ms"] for r in reps))))
        if mem_sql:
            w("scipis's own accounting (%s; numeric columns summed over its rows, MiB):\n"
              % ", ".join("`%s`" % q for q in mem_sql))
            fields = sorted({f for r in reps for st in r["own_sum"].values() for f in st})
            steps = (("before", "before"), ("after_q1", "after the 1st search"), ("after_q12", "after the 12th"))
            w("| backend | " + " | ".join("%s %s" % (f, lab) for f in fields for _, lab in steps) + " |")
            w("|---|" + "---|" * (len(fields) * len(steps)))
            for r in reps:
                w("| %d | " % r["rep"] + " | ".join(
                    "%.2f" % (r["own_sum"].get(st, {}).get(f, 0) / 1048576.0) for f in fields for st, _ in steps) + " |")
            w("\nBackend 1, as returned: " + "; ".join("%s `%s`" % (k.split(":")[0], v or "(no rows)")
                                                       for k, v in reps[0]["own"].items()) + "\n")
        else:
            w("scipis's own memory accounting: the installed scipis has no SQL function or view named `*mem*`, so "
              "none is recorded (the driver calls any such function without arguments when one exists).\n")

    if "connections" in res:
        w("## %d fresh connections\n" % a.clients)
        w("pgbench opens its %d connections (new backends) and then runs searches for %d s, %d threads; a "
          "transaction is one search. Nothing of scipis is loaded in those backends beforehand.\n"
          % (a.clients, a.duration, a.pgbench_threads))
        for cr in res["connections"]:
            s = cr["summary"]
            if cr["baseline"]:
                w("Baseline for the run above: the same with `SELECT 1` instead of the search (what connecting "
                  "costs by itself: pg_virtualenv's clusters authenticate TCP connections with SCRAM).\n")
            w("`%s` (script: %s). "
              "%s transactions in %d s: **%s per second**, latency average %s ms, initial connection time %s ms, "
              "%s failed%s.\n" % (cr["cmd"].replace(a.results + "/", ""),
                                "`SELECT 1`" if cr["baseline"] else "a top-10 `scipis_search` of one of the %d terms "
                                "of terms.txt, drawn at random" % len(terms),
                                fmt(None if s["tx"] is None else int(s["tx"])), a.duration, fmt(s["tps"]), fmt(s["lat_avg_ms"], 2),
                                fmt(s["conn_ms"], 1), fmt(None if s["failed"] is None else int(s["failed"])),
                                "; average connection time %s ms (pgbench -C: tps includes reconnecting)"
                                % fmt(s["avg_conn_ms"], 2) if s.get("avg_conn_ms") is not None else ""))
            bm = cr["backends_mem"]
            if bm["n"]:
                w("Memory of the %d pgbench backends at %.0f s (70%% of the run), summed: RssAnon %s MiB "
                  "(%s MiB each on average), Pss %s MiB, VmRSS %s MiB.\n" % (
                      bm["n"], a.duration * 0.7, mib(bm["RssAnon"]), mib(bm["RssAnon"] / bm["n"]), mib(bm["Pss"]),
                      mib(bm["VmRSS"])))
            w("pgbench's progress (its clock starts before the %d connections are made):\n" % a.clients)
            w("| second | searches/s | latency ms (avg) | stddev ms |\n|---|---|---|---|")
            for x in cr["progress"]:
                w("| %g | %s | %.2f | %s |" % (x["t"], fmt(x["tps"]), x["lat_ms"],
                                              "%.2f" % x["stddev_ms"] if x["stddev_ms"] is not None else "—"))
            if cr["reconnect"]:
                w("\nWith -C every transaction opens a new connection, i.e. a new backend whose search is its first. "
                  "pgbench connects each thread's clients one after the other, so the searches come in bursts: "
                  "only the totals mean something. Each transaction (connection + statement): p50 %s ms, p99 %s ms.\n"
                  % (fmt(cr["all_tx_ms"]["p50"], 2), fmt(cr["all_tx_ms"]["p99"], 2)))
                continue
            w("\nFrom the transaction log, half-second buckets from the start of the first search, which came %.2f s "
              "after pgbench started (searches/s, p50 / p99 latency ms): " % cr["first_search_after_start_s"] +
              ", ".join("%.1fs %s (%s/%s)" % (x["t"], fmt(x["rate"]), fmt(x["p50_ms"], 2), fmt(x["p99_ms"], 2))
                        for x in cr["buckets"]) + ".")
            ts = cr["t_steady_s"]
            w("\nSteady rate (median of the half-second buckets of the second half) %s searches/s; the first "
              "bucket at >= 90%% of it ends **%s s** after the first search started, %s s after pgbench started "
              "(target: within 2 s: **%s**); %s later bucket(s) below 90%%. Each client's first search "
              "(its backend's first): p50 %s ms, p90 %s ms, max %s ms; all searches p50 %s ms, p99 %s ms.\n" % (
                  fmt(cr["steady_rate"]), fmt(ts, 1),
                  fmt(None if ts is None else ts + cr["first_search_after_start_s"], 1),
                  "met" if ts is not None and ts <= 2 else "not met", fmt(cr["dips_after"]),
                  fmt(cr["first_tx_ms"]["p50"], 2), fmt(cr["first_tx_ms"]["p90"], 2), fmt(cr["first_tx_ms"]["max"], 2),
                  fmt(cr["all_tx_ms"]["p50"], 2), fmt(cr["all_tx_ms"]["p99"], 2)))

    if "metadata" in res:
        cases = res["metadata"]
        w("## Metadata predicates\n")
        w("`SELECT count(*) FROM scipis_files WHERE <predicate>` (EXPLAIN (ANALYZE, TIMING OFF) Execution Time, in "
          "a fresh backend per run — `psql -c`, which loads the collection's file records first — and in one warm "
          "backend) against `find DIR -type f <predicate> -printf '\\n'` timed as a process (kernel caches warm). "
          "Thresholds picked from the tree's own sizes and mtimes so that the count is the nearest possible to "
          "selectivity × files (sizes are whole bytes between 100 and 4096, so small selectivities on size cannot "
          "be exact: many files share a size). Median of %d runs.\n" % a.runs)
        w("| selectivity | predicate | target | scipis count | find count | agree | scipis ms, fresh backend | "
          "scipis ms, warm backend | find ms | find / scipis (fresh) | find / scipis (warm) |")
        w("|---|---|---|---|---|---|---|---|---|---|---|")
        for c in cases:
            w("| %g | `%s` / `%s` | %s | %s | %s | %s | %s | %s | %s | %.1f× | %.1f× |" % (
                c["sel"], c["show"], " ".join(c["find"]), fmt(c["target"]), fmt(c["scipis_count"]),
                fmt(c["find_count"]), "yes" if c["agree"] else "**NO**", fmt(c["scipis_fresh_ms"], 2),
                fmt(c["scipis_warm_ms"], 2), fmt(c["find_ms"], 1), c["find_ms"] / c["scipis_fresh_ms"],
                c["find_ms"] / c["scipis_warm_ms"]))
        w("\n%d of %d predicates: scipis and find count the same files.\n" % (sum(c["agree"] for c in cases), len(cases)))

    if "locate" in res:
        r = res["locate"]
        w("## scipis_locate and plocate\n")
        w("bench/paths/locate_bench.py on the same tree, %d patterns, %d runs each (its own report: "
          "[locate/locate.md](locate/locate.md)).\n" % (r["patterns"], a.locate_runs))
        w("| | scipis_locate, new backend each | scipis_locate, one backend | plocate (a process) |\n|---|---|---|---|")
        w("| p50, ms | %s | %s | %s |" % (fmt(r["scipis_fresh_backend"]["p50"], 2), fmt(r["scipis_warm_backend"]["p50"], 2),
                                       fmt(r["plocate"]["p50"], 2)))
        w("| p99, ms | %s | %s | %s |" % (fmt(r["scipis_fresh_backend"]["p99"], 2), fmt(r["scipis_warm_backend"]["p99"], 2),
                                       fmt(r["plocate"]["p99"], 2)))
        if r["build"]:
            w("\nBuilds inside locate_bench: its own `scipis_index` of the tree %s s, `updatedb` %s s." % r["build"])
        w("\np50 ratio scipis / plocate: **%.2f×** (new backend), **%.2f×** (one backend); > 1 means plocate is "
          "faster. %d of %d patterns gave equal counts (plocate also lists directories).\n" % (
              r["scipis_fresh_backend"]["p50"] / r["plocate"]["p50"], r["scipis_warm_backend"]["p50"] / r["plocate"]["p50"],
              r["equal_counts"], r["patterns"]))

    w("## Files\n")
    w("`catalog.csv` (every metric: part, metric, system, value, unit, detail), `raw.jsonl` (every measurement with "
      "its details), `machine.json`, `terms.txt` (the search terms), `pgbench-*.out` and `pgbench-*/` (pgbench's "
      "output and per-transaction logs), `locate/`.\n")
    with open(os.path.join(out, "catalog.md"), "w") as f:
        f.write("\n".join(L))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--results", required=True)
    ap.add_argument("--label", default="")
    ap.add_argument("--parts", default=",".join(ALL_PARTS))
    ap.add_argument("--threads", type=int, default=2, help="indexing threads, scipis and Lucene")
    ap.add_argument("--index-runs", type=int, default=1)
    ap.add_argument("--clients", type=int, default=64)
    ap.add_argument("--pgbench-threads", type=int, default=2)
    ap.add_argument("--duration", type=int, default=10)
    ap.add_argument("--reconnect", action="store_true", help="also run pgbench with -C")
    ap.add_argument("--memory-reps", type=int, default=3)
    ap.add_argument("--runs", type=int, default=3, help="runs of each metadata predicate")
    ap.add_argument("--locate-runs", type=int, default=5)
    ap.add_argument("--scratch", default=None, help="Lucene index and plocate database (default: a temporary dir)")
    ap.add_argument("--lucene-heap", default="4g")
    a = ap.parse_args()
    parts = [p for p in a.parts.split(",") if p]
    bad = [p for p in parts if p not in ALL_PARTS]
    if bad:
        sys.exit("catalog_bench.py: unknown part(s) %s; parts are %s" % (bad, ",".join(ALL_PARTS)))
    corpus = os.path.abspath(a.corpus).rstrip("/")
    os.makedirs(a.results, exist_ok=True)
    out = os.path.abspath(a.results)
    a.results = out
    if os.geteuid() != 0:
        log("warning: not root; /proc/<backend>/ of the postgres user may be unreadable")
    scratch = tempfile.mkdtemp(prefix="catalog-scratch-", dir=a.scratch)
    R = Recorder(out)
    res = {}
    try:
        psql("SET client_min_messages = warning; CREATE EXTENSION IF NOT EXISTS scipis")
        info = machine_info(a)
        log("machine: %s, %d cores, %.1f GiB, %s; git %s; scipis %s" % (
            info["cpu_model"], info["cores"], info["ram_gib"], info["kernel"], info["git"], info["scipis_version"]))

        log("corpus: walking %s" % corpus)
        paths, sizes, mtimes, ndirs = walk(corpus)
        if not paths:
            sys.exit("catalog_bench.py: no files under %s" % corpus)
        ss = sorted(sizes)
        ci = dict(dir=corpus, files=len(paths), bytes=sum(sizes), dirs=ndirs, size_p50=ss[len(ss) // 2],
                  size_p90=ss[int(len(ss) * 0.9)], size_max=ss[-1],
                  mtime_min=time.strftime("%Y-%m-%d", time.gmtime(min(mtimes) / 1e9)),
                  mtime_max=time.strftime("%Y-%m-%d", time.gmtime(max(mtimes) / 1e9)))
        marker = corpus + ".done.json"
        if os.path.exists(marker):
            ci["generator"] = json.load(open(marker))
        R.raw_line("corpus", "corpus", **ci)
        log("corpus: %d files, %.1f MiB, %d directories" % (ci["files"], ci["bytes"] / 1048576, ci["dirs"]))
        terms, sampled = pick_terms(paths)
        with open(os.path.join(out, "terms.txt"), "w") as f:
            f.write("".join(t + "\n" for t in terms))
        R.raw_line("corpus", "terms", terms=terms, sampled_files=sampled)

        # fsync on, as Lucene's commit fsyncs (pg_virtualenv turns it off).
        psql("ALTER SYSTEM SET fsync = on")
        psql("SELECT pg_reload_conf()")
        info["pg_settings"] = psql("SELECT string_agg(name || '=' || setting, ' ' ORDER BY name) FROM pg_settings "
                                   "WHERE name IN ('shared_buffers','work_mem','max_connections','fsync','jit','shared_preload_libraries')").strip()
        psql("SET client_min_messages = warning; SELECT scipis_drop_collection(name) FROM scipis_collection "
             "WHERE name = %s" % lit(COLL))
        psql("SELECT scipis_create_collection(%s, %s, %s)" % (lit(COLL), lit(corpus),
                                                             lit(json.dumps({"indexer_threads": a.threads}))))
        warm(corpus)
        log("scipis: building collection %s" % COLL)
        first = scipis_build(R, a, corpus, "index" if "index" in parts else "setup")
        log("scipis: %s files in %.2f s (%.0f files/s)" % (first[1]["files"], first[0], first[1]["files"] / first[0]))
        if first[1]["files"] != len(paths):
            log("warning: scipis indexed %s files, the walk found %d (skipped %s): can the postgres user read "
                "the tree?" % (first[1]["files"], len(paths), first[1].get("skipped")))

        if "index" in parts:
            res["index"] = part_index(R, a, corpus, len(paths), sum(sizes), ndirs, scratch, first)
        if "memory" in parts:
            log("memory: %d fresh backends" % a.memory_reps)
            res["memory"] = part_memory(R, a, terms)
        if "connections" in parts:
            res["connections"] = [run_pgbench(R, a, terms, out, "fresh", False)]
            if a.reconnect:
                res["connections"].append(run_pgbench(R, a, terms, out, "reconnect", True))
                res["connections"].append(run_pgbench(R, a, terms, out, "reconnect-select1", True, baseline=True))
        if "metadata" in parts:
            res["metadata"] = part_metadata(R, a, corpus, sizes, mtimes)
        if "locate" in parts:
            res["locate"] = part_locate(R, a, corpus, out)
        info["loadavg_end"] = " ".join(open("/proc/loadavg").read().split()[:3])
        with open(os.path.join(out, "machine.json"), "w") as f:
            json.dump(info, f, indent=1)
        R.write_csv()
        report(a, out, info, ci, parts, terms, res)
        sys.stdout.write(open(os.path.join(out, "catalog.md")).read())
        log("results in %s" % out)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
