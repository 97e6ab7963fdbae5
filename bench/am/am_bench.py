#!/usr/bin/env python3
"""The scipis index access method against GIN full-text search, RUM and
Lucene 9 on the same rows, in one run (bench/am/README.md says what and how).

Normally started by bench/am/run.sh, which prepares the data
(bench/am/prepare.py) and a throw-away cluster (pg_virtualenv -t); this
script expects PG* variables pointing at a server with scipis (and rum, for
--systems rum) installed, and runs as root (it reads the prepared files,
runs Lucene and drives psql).

    python3 bench/am/am_bench.py --manifest DATA/manifest-....json --results OUT_DIR
        [--parts build,query,write,vacuum] [--systems scipis,gin,rum,lucene] [--tables lines,docs]
        [--threads 2] [--passes 3] [--warmup-budget 120] [--pass-budget 300] [--query-timeout 10]
        [--spot 20] [--lucene-heap 4g] [--lucene-warmup 3] [--scratch DIR] [--label L]

Writes OUT_DIR/am.md (the report), am.csv (part, table, metric, system,
value, unit, detail), raw.jsonl (every measurement, every query's latency and
top-10 ids), machine.json, plans.txt (the plans of sample queries) and
queries-<table>.tsv (the query set).
"""

import argparse
import json
import math
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
JAR = os.path.join(REPO, "bench", "lucene", "target", "scipis-bench-lucene.jar")
ALL_PARTS = ["build", "query", "write", "vacuum"]
ALL_SYSTEMS = ["scipis", "gin", "rum", "lucene"]
PEERS = ["gin", "rum", "lucene"]
NAMES = {"scipis": "scipis", "gin": "GIN (ts_rank)", "rum": "RUM", "lucene": "Lucene 9", "none": "no text index"}
TABLES = {  # source table, copy benchmarked, text column
    "lines": ("lines", "am_lines", "line"),
    "docs": ("docs", "am_docs", "body"),
}
KINDS = {"lines": ["t1", "t3", "t1f", "t3f"], "docs": ["t1", "t3"]}
KIND_TEXT = {"t1": "1-term", "t3": "3-term (any)", "t1f": "1-term, ts window 10%", "t3f": "3-term, ts window 10%"}
INF = float("inf")
COPY_ESC = re.compile(r"\\(.)")
COPY_UNESC = {"t": "\t", "n": "\n", "r": "\r"}


def log(msg):
    sys.stderr.write("[%s] %s\n" % (time.strftime("%H:%M:%S"), msg))
    sys.stderr.flush()


def lit(s):
    return "'" + s.replace("'", "''") + "'"


def sh(cmd):
    return subprocess.run(cmd, shell=True, capture_output=True, text=True).stdout.strip()


def psql(sql, check=True):
    p = subprocess.run(["psql", "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1", "-c", sql],
                       capture_output=True, text=True)
    if check and p.returncode != 0:
        raise RuntimeError("psql failed: %s\n%s" % (sql, p.stderr))
    return p.stdout


class SQLError(Exception):
    def __init__(self, sql, out):
        super().__init__("%s\n-> %s" % (sql[:300], out.strip()[:2000]))
        self.sql = sql
        self.out = out
        self.timeout = "canceling statement due to statement timeout" in out


class Session:
    """One backend, kept open: a psql reading statements from a pipe. An
    error does not end it (no ON_ERROR_STOP); run() raises SQLError."""

    def __init__(self):
        self.p = subprocess.Popen(["psql", "-X", "-q", "-At"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, text=True, bufsize=1)
        self.n = 0

    def run(self, sql):
        self.n += 1
        mark = "__am_bench_%d__" % self.n
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
        if re.search(r"^(psql:.*?)?(ERROR|FATAL|PANIC):", out, re.M):
            raise SQLError(sql, out)
        return out

    def timed(self, sql):
        t0 = time.perf_counter()
        out = self.run(sql)
        return out, time.perf_counter() - t0

    def close(self):
        try:
            self.p.stdin.close()
            self.p.wait(timeout=60)
        except Exception:
            self.p.kill()


def pct(v, p):
    v = sorted(v)
    if not v:
        return float("nan")
    return v[min(len(v) - 1, max(0, int(math.ceil(p / 100 * len(v))) - 1))]


class Recorder:
    def __init__(self, out):
        self.out = out
        self.raw = open(os.path.join(out, "raw.jsonl"), "w")
        self.rows = []

    def rec(self, part, table, metric, system, value, unit, detail="", **extra):
        d = dict(part=part, table=table, metric=metric, system=system, value=value, unit=unit, detail=detail)
        d.update(extra)
        self.raw.write(json.dumps(d, default=str) + "\n")
        self.raw.flush()
        self.rows.append(d)

    def raw_line(self, part, what, **data):
        self.raw.write(json.dumps(dict(part=part, what=what, **data), default=str) + "\n")
        self.raw.flush()

    def get(self, table, metric, system):
        for r in reversed(self.rows):
            if r["table"] == table and r["metric"] == metric and r["system"] == system:
                return r["value"]
        return None

    def write_csv(self):
        with open(os.path.join(self.out, "am.csv"), "w") as f:
            f.write("part,table,metric,system,value,unit,detail\n")
            for r in self.rows:
                v = r["value"]
                v = "" if v is None else ("%.6g" % v if isinstance(v, float) else str(v))
                f.write('%s,%s,%s,%s,%s,%s,"%s"\n' % (r["part"], r["table"], r["metric"], r["system"], v, r["unit"],
                                                      str(r["detail"]).replace('"', '""')))


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
        "git_dirty_files": sh("git -C %s status --short --untracked-files=no" % REPO).splitlines(),
        "postgresql": psql("SELECT version()").strip(),
        "scipis_version": psql("SELECT extversion FROM pg_extension WHERE extname = 'scipis'").strip(),
        "rum_version": psql("SELECT extversion FROM pg_extension WHERE extname = 'rum'").strip(),
        "rum_package": sh("dpkg-query -W -f '${Version}' postgresql-15-rum 2>/dev/null"),
        "java": sh("java -version 2>&1 | head -1"),
        "loadavg_start": " ".join(open("/proc/loadavg").read().split()[:3]),
    }
    so = os.path.join(sh("pg_config --pkglibdir"), "scipis.so")
    if os.path.exists(so):
        info["scipis_so"] = "%s sha256 %s" % (time.strftime("%Y-%m-%d %H:%M", time.gmtime(os.path.getmtime(so))),
                                             sh("sha256sum %s | cut -c1-16" % so))
    return info


def pg_settings():
    return psql("SELECT string_agg(name || '=' || setting || coalesce(unit, ''), ' ' ORDER BY name) FROM pg_settings "
                "WHERE name IN ('shared_buffers','work_mem','maintenance_work_mem','max_wal_size','fsync','jit',"
                "'autovacuum','max_parallel_workers_per_gather','max_parallel_maintenance_workers',"
                "'synchronous_commit','wal_level','checkpoint_timeout','gin_pending_list_limit')").strip()


def loadavg():
    return open("/proc/loadavg").read().split()[0]


# ------------------------------------------------------------------ queries --

def read_queries(path):
    qs = []
    with open(path) as f:
        hdr = f.readline().rstrip("\n").split("\t")
        for line in f:
            d = dict(zip(hdr, line.rstrip("\n").split("\t")))
            d["terms"] = d["terms"].split(" ")
            for k in ("ts_lo", "ts_hi", "lo_id", "hi_id"):
                d[k] = int(d[k]) if d.get(k) else None
            d["df"] = [int(x) for x in d["df"].split(",")] if d.get("df") else []
            qs.append(d)
    return qs


def ts_lit(epoch):
    return lit(time.strftime("%Y-%m-%d %H:%M:%S+00", time.gmtime(epoch)))


def query_sql(system, tbl, q, k=10, index=None):
    """The top-k statement of one query: (ids, scores) in rank order."""
    _, t, col = TABLES[tbl]
    text = " ".join(q["terms"])
    filt = ""
    if q.get("ts_lo") is not None:
        filt = " AND ts >= %s AND ts < %s" % (ts_lit(q["ts_lo"]), ts_lit(q["ts_hi"]))
    if system == "scipis":
        sq = ("scipis_query(%s, index => %s)" % (lit(text), lit(index)) if index else "%s::scipisquery" % lit(text))
        inner = ("SELECT id, %s <@> %s AS d FROM %s WHERE %s @@@ %s%s ORDER BY d LIMIT %d"
                 % (col, sq, t, col, sq, filt, k))
        return "SELECT array_agg(id), array_agg(-d) FROM (%s) x" % inner
    tq = " || ".join("plainto_tsquery('simple', %s)" % lit(w) for w in q["terms"])
    if len(q["terms"]) > 1:
        tq = "(%s)" % tq
    if system == "gin":
        tv = "to_tsvector('simple', %s)" % col
        inner = ("SELECT id, ts_rank(%s, %s) AS r FROM %s WHERE %s @@ %s%s ORDER BY r DESC LIMIT %d"
                 % (tv, tq, t, tv, tq, filt, k))
        return "SELECT array_agg(id), array_agg(r) FROM (%s) x" % inner
    if system == "rum":
        inner = ("SELECT id, tsv <=> %s AS d FROM %s WHERE tsv @@ %s%s ORDER BY d LIMIT %d"
                 % (tq, t, tq, filt, k))
        return "SELECT array_agg(id), array_agg(d) FROM (%s) x" % inner
    raise ValueError(system)


def parse_arr(s, conv):
    s = s.strip()
    if not s or s == "{}":
        return []
    return [conv(x) for x in s.strip("{}").split(",")]


def time_query(sess, sql):
    """(us, ids, scores) timed in the server by am_time(), or raises SQLError."""
    out = sess.run("SELECT us, ids, scores FROM am_time(%s)" % ("$amq$" + sql + "$amq$"))
    us, ids, sc = out.strip().split("\n")[-1].split("|")
    return float(us), parse_arr(ids, int), parse_arr(sc, float)


def cached_function(tbl):
    """am_time_cached_<tbl>(terms [, lo, hi]): the scipis top-k of query_sql
    as static SQL in PL/pgSQL, so that its plan is cached as an
    application's prepared statement's is; the text's cast to scipisquery
    is timed with it. With lo and hi: the timestamp window's kinds."""
    _, t, col = TABLES[tbl]
    for args, filt in (("", ""), (", lo timestamptz, hi timestamptz", " AND r.ts >= lo AND r.ts < hi")):
        if filt and tbl != "lines":
            continue
        psql("""CREATE OR REPLACE FUNCTION am_time_cached_%s(q text%s, OUT us float8, OUT ids bigint[], OUT scores float8[])
                LANGUAGE plpgsql AS $f$
                DECLARE t0 timestamptz; qq scipisquery;
                BEGIN
                  t0 := clock_timestamp();
                  qq := q::scipisquery;
                  SELECT array_agg(x.id), array_agg(-x.d) INTO ids, scores
                    FROM (SELECT r.id, r.%s <@> qq AS d FROM %s r WHERE r.%s @@@ qq%s ORDER BY d LIMIT 10) x;
                  us := 1e6 * extract(epoch FROM clock_timestamp() - t0);
                END $f$""" % (tbl, args, col, t, col, filt))


def time_cached(sess, tbl, q):
    win = "" if q.get("ts_lo") is None else ", %s, %s" % (ts_lit(q["ts_lo"]), ts_lit(q["ts_hi"]))
    out = sess.run("SELECT us, ids, scores FROM am_time_cached_%s(%s%s)" % (tbl, lit(" ".join(q["terms"])), win))
    us, ids, sc = out.strip().split("\n")[-1].split("|")
    return float(us), parse_arr(ids, int), parse_arr(sc, float)


def run_query_set(R, a, system, tbl, qs, sess, timer=None):
    """Warm-up pass (bounded by --warmup-budget), then up to --passes measured
    passes (another one only while the previous took < --pass-budget s).
    A query that timed out once is not run again (it counts as a timeout).
    Returns {qid: dict(us=[...], ids, scores, status)}."""
    res = {q["qid"]: dict(us=[], ids=None, scores=None, status="ok", error=None) for q in qs}
    timed_out = set()
    warm_timeouts = set()

    def one(q, measured):
        qid = q["qid"]
        if qid in timed_out:
            if measured:
                res[qid]["us"].append(INF)
            return
        try:
            us, ids, sc = timer(q) if timer else time_query(sess, query_sql(system, tbl, q))
        except SQLError as e:
            if e.timeout:
                if measured:
                    timed_out.add(qid)
                    res[qid]["status"] = "timeout"
                    res[qid]["us"].append(INF)
                else:
                    warm_timeouts.add(qid)
                return
            res[qid]["status"] = "error"
            res[qid]["error"] = e.out.strip()[:500]
            if measured:
                res[qid]["us"].append(float("nan"))
            log("  %s %s %s: ERROR %s" % (system, tbl, qid, e.out.strip()[:300]))
            return
        if measured:
            res[qid]["us"].append(us)
            if res[qid]["ids"] is None:
                res[qid]["ids"], res[qid]["scores"] = ids, sc

    t0 = time.perf_counter()
    done = 0
    for q in qs:
        if time.perf_counter() - t0 > a.warmup_budget:
            break
        one(q, False)
        done += 1
    warm_s = time.perf_counter() - t0
    log("  %s %s: warm-up %d of %d queries in %.1f s (%d timeouts)" % (system, tbl, done, len(qs), warm_s,
                                                                      len(warm_timeouts)))
    passes = []
    for p in range(1, a.passes + 1):
        t0 = time.perf_counter()
        for q in qs:
            one(q, True)
        secs = time.perf_counter() - t0
        passes.append(secs)
        log("  %s %s: measured pass %d in %.1f s (%d timeouts)" % (system, tbl, p, secs, len(timed_out)))
        if secs > a.pass_budget:
            break
    R.raw_line("query", "passes", system=system, table=tbl, warmup_queries=done, warmup_s=warm_s, pass_s=passes,
               timeouts=sorted(timed_out), warmup_timeouts=sorted(warm_timeouts))
    return res, dict(warmup_queries=done, warmup_s=warm_s, pass_s=passes, timeouts=len(timed_out))


def lucene_query_set(a, tbl, qs, index_dir, scratch):
    qf = os.path.join(scratch, "lucene-queries-%s.tsv" % tbl)
    with open(qf, "w") as w:
        w.write("qid\tkind\tterms\tts_lo\tts_hi\n")
        for q in qs:
            w.write("%s\t%s\t%s\t%s\t%s\n" % (q["qid"], q["kind"], " ".join(q["terms"]),
                                              "" if q["ts_lo"] is None else q["ts_lo"],
                                              "" if q["ts_hi"] is None else q["ts_hi"]))
    out = os.path.join(scratch, "lucene-lat-%s.tsv" % tbl)
    t0 = time.perf_counter()
    p = subprocess.run(["java", "-Xms" + a.lucene_heap, "-Xmx" + a.lucene_heap, "-cp", JAR, "scipis.bench.SearchRows",
                        "--index", index_dir, "--queries", qf, "--out", out, "--warmup", str(a.lucene_warmup),
                        "--passes", str(a.passes), "--pass-budget", str(a.pass_budget)],
                       capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if p.returncode != 0:
        raise RuntimeError("SearchRows failed: %s" % p.stderr[-3000:])
    res = {q["qid"]: dict(us=[], ids=None, scores=None, status="ok", error=None) for q in qs}
    passes = set()
    with open(out) as f:
        f.readline()
        for line in f:
            ps, qid, us, n, ids, sc = line.rstrip("\n").split("\t")
            passes.add(int(ps))
            r = res[qid]
            r["us"].append(float(us))
            if r["ids"] is None:
                r["ids"] = [int(x) for x in ids.split()] if ids else []
                r["scores"] = [float(x) for x in sc.split()] if sc else []
    return res, dict(warmup_passes=a.lucene_warmup, passes=len(passes), process_s=wall)


def summarize_latency(R, system, tbl, qs, res, info, a, kinds=None):
    out = {}
    for kind in kinds or KINDS[tbl]:
        lat = []
        fewer = errors = timeouts = 0
        for q in qs:
            if q["kind"] != kind:
                continue
            r = res[q["qid"]]
            good = [u for u in r["us"] if not math.isnan(u)]
            if r["status"] == "error" or not good:
                errors += 1
                continue
            if r["status"] == "timeout":
                timeouts += 1
            lat.append(statistics.median(good))
            if r["ids"] is not None and len(r["ids"]) < 10:
                fewer += 1
        p50, p99 = pct(lat, 50), pct(lat, 99)
        out[kind] = dict(p50=p50, p99=p99, n=len(lat), fewer=fewer, errors=errors, timeouts=timeouts,
                         mean=statistics.mean([x for x in lat if x != INF]) if any(x != INF for x in lat) else None)
        det = "%d queries, median of %s measured passes each; %d timeouts (> %g s), %d errors, %d with < 10 rows" % (
            len(lat), info.get("passes", len(info.get("pass_s", []))), timeouts, a.query_timeout, errors, fewer)
        R.rec("query", tbl, "%s_p50_ms" % kind, system, p50 / 1000, "ms", det)
        R.rec("query", tbl, "%s_p99_ms" % kind, system, p99 / 1000, "ms", det)
        R.rec("query", tbl, "%s_errors" % kind, system, errors, "queries", "")
        R.rec("query", tbl, "%s_timeouts" % kind, system, timeouts, "queries", "")
    for q in qs:
        r = res[q["qid"]]
        R.raw_line("query", "latency", system=system, table=tbl, qid=q["qid"], kind=q["kind"], terms=q["terms"],
                   us=[None if (math.isinf(u) or math.isnan(u)) else round(u, 1) for u in r["us"]],
                   status=r["status"], error=r["error"], ids=r["ids"], scores=r["scores"])
    return out


# --------------------------------------------------------- correctness ----

def same_topk(a_ids, a_sc, b_ids, b_sc, rel=1e-9):
    """Equal lists modulo ties: the same scores rank by rank, and for every
    score but the lowest the same ids (at the lowest, the LIMIT may cut a tie
    group anywhere)."""
    if len(a_ids) != len(b_ids):
        return False, "lengths %d and %d" % (len(a_ids), len(b_ids))
    for i, (x, y) in enumerate(zip(a_sc, b_sc)):
        if abs(x - y) > rel * max(1.0, abs(x), abs(y)):
            return False, "rank %d: score %r vs %r" % (i + 1, x, y)
    if not a_sc:
        return True, ""
    low = a_sc[-1]

    def groups(ids, sc):
        g = {}
        for i, s in zip(ids, sc):
            if abs(s - low) > rel * max(1.0, abs(s)):
                g.setdefault(round(s, 9), set()).add(i)
        return g
    ga, gb = groups(a_ids, a_sc), groups(b_ids, b_sc)
    if ga != gb:
        return False, "ids differ above the last tie group: %s vs %s" % (ga, gb)
    return True, ""


def spot_check(R, a, tbl, qs, stage, nspot):
    """Top-10 of the index scan against a scan without the index (the query
    naming the index), for --spot queries spread over the set."""
    _, t, col = TABLES[tbl]
    idx = t + "_txt"
    base = [q for q in qs if q["kind"] in ("t1", "t3")]
    nf = nspot // 5 if tbl == "lines" else 0  # a fifth with the ts window
    step = max(1, len(base) // max(1, nspot - nf))
    chosen = base[::step][:nspot - nf]
    if nf:
        f = [q for q in qs if q["kind"] in ("t1f", "t3f")]
        chosen += f[::max(1, len(f) // nf)][:nf]
    sess = Session()
    ok = 0
    n_index = 0
    bad = []
    try:
        sess.run("SET statement_timeout = 0")
        sess.run("SET enable_seqscan = off")
        for q in chosen:
            s1 = query_sql("scipis", tbl, q)
            plan1 = sess.run("EXPLAIN (COSTS OFF) " + s1.split(" FROM (", 1)[1].rsplit(") x", 1)[0])
            _, i1, c1 = time_query(sess, s1)
            sess.run("SET enable_seqscan = on; SET enable_indexscan = off; SET enable_bitmapscan = off")
            s2 = query_sql("scipis", tbl, q, index=idx)
            plan2 = sess.run("EXPLAIN (COSTS OFF) " + s2.split(" FROM (", 1)[1].rsplit(") x", 1)[0])
            _, i2, c2 = time_query(sess, s2)
            sess.run("SET enable_seqscan = off; RESET enable_indexscan; RESET enable_bitmapscan")
            used_index = ("Index Scan using %s " % idx) in plan1 + " "
            no_index = not re.search(r"Index Scan using %s |Index Scan on %s " % (idx, idx), plan2 + " ")
            same, why = same_topk(i1, c1, i2, c2)
            good = same and no_index
            ok += good
            n_index += used_index
            R.raw_line("correctness", "spot", table=tbl, stage=stage, qid=q["qid"], terms=q["terms"], same=same,
                       why=why, index_plan=used_index, seq_plan=no_index, index_ids=i1, index_scores=c1,
                       seq_ids=i2, seq_scores=c2)
            if not good:
                bad.append(dict(qid=q["qid"], terms=q["terms"], why=why if not same else "index still used without index scans",
                                index_ids=i1, seq_ids=i2, index_scores=c1, seq_scores=c2))
    finally:
        sess.close()
    R.rec("correctness", tbl, "spot_equal_%s" % stage, "scipis", ok, "of %d" % len(chosen),
          "top-10 ids (modulo ties) and scores of the default plan = those of a scan without the index; "
          "%d of the default plans were scipis index scans" % n_index)
    log("  spot check %s %s: %d of %d equal (%d index scans)" % (tbl, stage, ok, len(chosen), n_index))
    return dict(ok=ok, n=len(chosen), bad=bad, index_scans=n_index)


def index_check(R, tbl):
    _, t, _ = TABLES[tbl]
    t0 = time.perf_counter()
    p = subprocess.run(["psql", "-X", "-q", "-At", "-c",
                        "SELECT coalesce(json_agg(c), '[]') FROM scipis_index_check(%s) c" % lit(t + "_txt")],
                       capture_output=True, text=True)
    secs = time.perf_counter() - t0
    err = p.stderr.strip() if p.returncode != 0 else None
    rows = json.loads(p.stdout.strip()) if p.returncode == 0 and p.stdout.strip() else []
    R.raw_line("correctness", "index_check", table=tbl, seconds=secs, rows=rows, error=err)
    problems = err or (json.dumps(rows) if rows else None)
    R.rec("correctness", tbl, "index_check_rows", "scipis", len(rows) if not err else None, "rows",
          "scipis_index_check after writes and VACUUM; %.1f s%s" % (secs, "; error: " + err if err else ""))
    log("  scipis_index_check %s: %s (%.1f s)" % (tbl, problems or "no rows", secs))
    return dict(seconds=secs, problems=problems)


# ------------------------------------------------------------------ systems --

def table_bytes(tbl):
    src, _, col = TABLES[tbl]
    r = psql("SELECT count(*), sum(octet_length(%s)), sum(pg_column_size(%s)), pg_table_size(%s) FROM %s"
             % (col, col, lit(src), src)).strip().split("|")
    return dict(rows=int(r[0]), text_bytes=int(r[1]), stored_bytes=int(r[2]), table_bytes=int(r[3]))


def copy_table(tbl):
    src, t, _ = TABLES[tbl]
    psql("DROP TABLE IF EXISTS %s" % t)
    t0 = time.perf_counter()
    psql("CREATE TABLE %s AS SELECT * FROM %s ORDER BY id" % (t, src))
    psql("VACUUM (ANALYZE) %s" % t)
    psql("SELECT pg_prewarm(%s)" % lit(t))
    toast = psql("SELECT reltoastrelid::regclass FROM pg_class WHERE oid = %s::regclass AND reltoastrelid <> 0"
                 % lit(t)).strip()
    if toast:
        psql("SELECT pg_prewarm(%s)" % lit(toast))
    psql("CHECKPOINT")
    return time.perf_counter() - t0


def build_sql(R, a, system, tbl, tb):
    _, t, col = TABLES[tbl]
    idx = t + "_txt"
    steps = []
    before = int(psql("SELECT pg_table_size(%s)" % lit(t)))
    load = loadavg()
    sess = Session()
    try:
        if system == "scipis":
            # The timestamp as a filter column on lines: the window's
            # condition decided in the index, as Lucene's LongPoint filter.
            cols = col + (", ts" if tbl == "lines" else "")
            steps.append(("CREATE INDEX", sess.timed("CREATE INDEX %s ON %s USING scipis (%s) WITH (indexer_threads = %d)"
                                                     % (idx, t, cols, a.threads))[1]))
        elif system == "gin":
            steps.append(("CREATE INDEX", sess.timed("CREATE INDEX %s ON %s USING gin (to_tsvector('simple', %s))"
                                                     % (idx, t, col))[1]))
        elif system == "rum":
            steps.append(("ADD COLUMN tsv (stored, generated)", sess.timed(
                "ALTER TABLE %s ADD COLUMN tsv tsvector GENERATED ALWAYS AS (to_tsvector('simple', %s)) STORED"
                % (t, col))[1]))
            steps.append(("CREATE INDEX", sess.timed("CREATE INDEX %s ON %s USING rum (tsv rum_tsvector_ops)"
                                                     % (idx, t))[1]))
    finally:
        sess.close()
    secs = sum(s for _, s in steps)
    ibytes = int(psql("SELECT pg_relation_size(%s)" % lit(idx)))
    after = int(psql("SELECT pg_table_size(%s)" % lit(t)))
    extra = after - before if system == "rum" else 0
    det = "; ".join("%s %.2f s" % s for s in steps) + "; load %s" % load
    R.rec("build", tbl, "build_s", system, secs, "s", det, steps=steps)
    R.rec("build", tbl, "mib_per_s", system, tb["text_bytes"] / 1048576 / secs, "MiB/s",
          "text bytes (octet_length) / build seconds")
    R.rec("build", tbl, "index_mib", system, ibytes / 1048576, "MiB", "pg_relation_size of the index")
    if system == "rum":
        R.rec("build", tbl, "tsv_column_mib", system, extra / 1048576, "MiB",
              "growth of pg_table_size (heap + TOAST) from the stored tsvector column")
    log("  %s %s: built in %.2f s (%s), index %.1f MiB%s" % (system, tbl, secs, det, ibytes / 1048576,
                                                          ", tsv column %.1f MiB" % (extra / 1048576) if extra else ""))
    return dict(seconds=secs, steps=steps, index_bytes=ibytes, extra_bytes=extra)


def plans(a, system, tbl, qs, out):
    """EXPLAIN (ANALYZE, TIMING OFF) of the first query of each kind and of its
    median-df query (plain EXPLAIN when that runs past --query-timeout)."""
    sess = Session()
    try:
        sess.run("SET statement_timeout = '%gs'" % a.query_timeout)
        sess.run("SET enable_seqscan = off")
        for kind in KINDS[tbl]:
            ks = [q for q in qs if q["kind"] == kind]
            if not ks:
                continue
            by_df = sorted(ks, key=lambda q: (max(q["df"] or [0]), q["qid"]))
            for q in (ks[0], by_df[len(by_df) // 2]):
                inner = query_sql(system, tbl, q).split(" FROM (", 1)[1].rsplit(") x", 1)[0]
                try:
                    p = sess.run("EXPLAIN (ANALYZE, TIMING OFF, COSTS OFF) " + inner)
                except SQLError as e:
                    p = e.out.strip() + "\n" + sess.run("EXPLAIN (COSTS OFF) " + inner)
                out.write("== %s %s %s %s (df %s)\n%s\n%s\n" % (system, tbl, q["qid"], " ".join(q["terms"]),
                                                                q["df"], inner, p))
    finally:
        sess.close()


def write_tests(R, a, system, man, scratch):
    """20,000 single-row INSERTs (transactions of 100) and one COPY of 200,000 rows."""
    t = "am_lines"
    ins = os.path.join(scratch, "insert.sql")
    if not os.path.exists(ins):
        with open(man["insert_file"], "rb") as f, open(ins, "w") as w:
            w.write("\\set ON_ERROR_STOP on\n")
            for i, line in enumerate(f):
                if i % a.insert_batch == 0:
                    w.write("BEGIN;\n")
                fid, host, ts, text = line.rstrip(b"\n").split(b"\t", 3)
                text = COPY_ESC.sub(lambda m: COPY_UNESC.get(m.group(1), m.group(1)), text.decode("utf-8"))
                w.write("INSERT INTO %s (id, host, ts, line) VALUES (%s, %s, %s, %s);\n" % (
                    t, fid.decode(), lit(host.decode()), lit(ts.decode()), lit(text)))
                if i % a.insert_batch == a.insert_batch - 1:
                    w.write("COMMIT;\n")
            if (i + 1) % a.insert_batch:
                w.write("COMMIT;\n")
    psql("CHECKPOINT")
    load = loadavg()
    t0 = time.perf_counter()
    p = subprocess.run(["psql", "-X", "-q", "-f", ins], capture_output=True, text=True)
    secs = time.perf_counter() - t0
    if p.returncode != 0:
        raise RuntimeError("INSERT script failed: %s" % p.stderr[-2000:])
    n = man["n_insert"]
    isize = lambda: (int(psql("SELECT pg_relation_size('am_lines_txt')")) / 1048576 if system != "none" else None)
    size_ins = isize()
    R.rec("write", "lines", "insert_rows_per_s", system, n / secs, "rows/s",
          "%d single-row INSERTs, %d per transaction, one psql -f session, client wall %.2f s; load %s"
          % (n, a.insert_batch, secs, load))
    psql("CHECKPOINT")
    load = loadavg()
    t0 = time.perf_counter()
    psql("COPY %s (id, host, ts, line) FROM %s" % (t, lit(man["copy_file"])))
    csecs = time.perf_counter() - t0
    R.rec("write", "lines", "copy_rows_per_s", system, man["n_copy"] / csecs, "rows/s",
          "COPY FROM a server file, %d rows, one statement, %.2f s; load %s" % (man["n_copy"], csecs, load))
    size_copy = isize()
    if system != "none":
        R.rec("write", "lines", "index_mib_after_insert", system, size_ins, "MiB", "")
        R.rec("write", "lines", "index_mib_after_copy", system, size_copy, "MiB", "")
    log("  %s: INSERT %.0f rows/s, COPY %.0f rows/s%s" % (
        system, n / secs, man["n_copy"] / csecs,
        "; index %.1f MiB after the INSERTs, %.1f MiB after the COPY" % (size_ins, size_copy) if size_ins else ""))
    return dict(insert_s=secs, copy_s=csecs, index_mib_after_insert=size_ins, index_mib_after_copy=size_copy)


def vacuum_test(R, a, system, tbl):
    _, t, _ = TABLES[tbl]
    idx = t + "_txt"
    has_idx = system != "none"
    size0 = int(psql("SELECT pg_relation_size(%s)" % lit(idx))) if has_idx else 0
    psql("CHECKPOINT")
    t0 = time.perf_counter()
    n = int(psql("WITH d AS (DELETE FROM %s WHERE id %% 10 = 7 RETURNING 1) SELECT count(*) FROM d" % t))
    dsecs = time.perf_counter() - t0
    psql("CHECKPOINT")
    load = loadavg()
    t0 = time.perf_counter()
    psql("VACUUM %s" % t)
    vsecs = time.perf_counter() - t0
    size1 = int(psql("SELECT pg_relation_size(%s)" % lit(idx))) if has_idx else 0
    R.rec("vacuum", tbl, "vacuum_s", system, vsecs, "s",
          "VACUUM after DELETE of %d rows (id %% 10 = 7; DELETE %.2f s); index %.1f -> %.1f MiB; load %s"
          % (n, dsecs, size0 / 1048576, size1 / 1048576, load))
    R.rec("vacuum", tbl, "delete_s", system, dsecs, "s", "%d rows" % n)
    if has_idx:
        R.rec("vacuum", tbl, "index_mib_after_vacuum", system, size1 / 1048576, "MiB", "")
    log("  %s %s: DELETE %d rows %.2f s, VACUUM %.2f s, index %.1f -> %.1f MiB"
        % (system, tbl, n, dsecs, vsecs, size0 / 1048576, size1 / 1048576))
    return dict(deleted=n, delete_s=dsecs, vacuum_s=vsecs, size_before=size0, size_after=size1)


def run_sql_system(R, a, system, tbl, man, qs, tb, parts, scratch, plan_out, results):
    _, t, _ = TABLES[tbl]
    log("%s on %s: copying the table" % (system, tbl))
    csecs = copy_table(tbl)
    R.raw_line("setup", "copy_table", system=system, table=tbl, seconds=csecs)
    out = {}
    if system != "none":
        out["build"] = build_sql(R, a, system, tbl, tb)
        if "query" in parts:
            if tbl == "lines":
                psql("CREATE INDEX %s_ts ON %s (ts)" % (t, t))
            psql("ANALYZE %s" % t)
            idx_rel = [t + "_txt"] + ([t + "_ts"] if tbl == "lines" else [])
            for rel in idx_rel:
                psql("SELECT pg_prewarm(%s)" % lit(rel))
            sess = Session()
            try:
                sess.run("SET statement_timeout = '%gs'" % a.query_timeout)
                sess.run("SET enable_seqscan = off")
                if system == "scipis" and a.index_cache_size:
                    sess.run("SET scipis.index_cache_size = %s" % lit(a.index_cache_size))
                log("%s on %s: %d queries" % (system, tbl, len(qs)))
                res, info = run_query_set(R, a, system, tbl, qs, sess)
                if system == "scipis" and a.plan_cached:
                    # Every kind again, its plan cached.
                    cqs = qs
                    cached_function(tbl)
                    log("%s on %s: %d queries, plan cached" % (system, tbl, len(cqs)))
                    cres, cinfo = run_query_set(R, a, "scipis_cached", tbl, cqs, sess,
                                                timer=lambda q: time_cached(sess, tbl, q))
                    differ = [q["qid"] for q in cqs if cres[q["qid"]]["ids"] != res[q["qid"]]["ids"]
                              or cres[q["qid"]]["scores"] != res[q["qid"]]["scores"]]
                    R.raw_line("query", "plan_cached_equal", table=tbl, queries=len(cqs), differ=differ)
                    log("  plan cached: %d of %d queries return the same ids and scores" % (len(cqs) - len(differ),
                                                                                           len(cqs)))
                    out["query_cached"] = dict(res=cres, info=cinfo, differ=differ, summary=summarize_latency(
                        R, "scipis_cached", tbl, cqs, cres, cinfo, a))
            finally:
                sess.close()
            out["query"] = dict(res=res, info=info, summary=summarize_latency(R, system, tbl, qs, res, info, a))
            plans(a, system, tbl, qs, plan_out)
            if system == "scipis":
                out["spot_build"] = spot_check(R, a, tbl, qs, "after_build", a.spot)
            if tbl == "lines":
                psql("DROP INDEX %s_ts" % t)
    if "write" in parts and tbl == "lines":
        out["write"] = write_tests(R, a, system, man, scratch)
    if "vacuum" in parts:
        out["vacuum"] = vacuum_test(R, a, system, tbl)
        if system == "scipis":
            out["spot_vacuum"] = spot_check(R, a, tbl, qs, "after_writes_vacuum" if tbl == "lines" else "after_vacuum",
                                            max(1, a.spot // 2))
            out["index_check"] = index_check(R, tbl)
    psql("DROP TABLE %s" % t)
    return out


def run_lucene(R, a, tbl, man, qs, tb, parts, scratch):
    idir = os.path.join(scratch, "lucene-%s" % tbl)
    shutil.rmtree(idir, ignore_errors=True)
    if tbl == "lines":
        subprocess.run("head -n %d %s > /dev/null" % (man["rows"], man["rows_file"]), shell=True, check=True)
        src = ["--rows", man["rows_file"], "--limit", str(man["rows"])]
    else:
        subprocess.run("cut -f2 %s | xargs cat > /dev/null" % man["docs_list"], shell=True, check=True)
        src = ["--files", man["docs_list"]]
    load = loadavg()
    log("lucene on %s: indexing, %d threads" % (tbl, a.threads))
    t0 = time.perf_counter()
    p = subprocess.run(["java", "-Xms" + a.lucene_heap, "-Xmx" + a.lucene_heap, "-cp", JAR, "scipis.bench.IndexRows",
                        "--index", idir, "--threads", str(a.threads)] + src, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if p.returncode != 0:
        raise RuntimeError("IndexRows failed: %s" % p.stderr[-3000:])
    d = json.loads(p.stdout.strip().splitlines()[-1])
    R.raw_line("build", "lucene", table=tbl, process_wall_s=wall, load1=load, **d)
    if d["rows"] != tb["rows"] or d["bytes"] != tb["text_bytes"]:
        log("  warning: Lucene indexed %d rows / %d bytes, the table has %d / %d"
            % (d["rows"], d["bytes"], tb["rows"], tb["text_bytes"]))
    R.rec("build", tbl, "build_s", "lucene", d["seconds"], "s",
          "IndexRows, JVM clock from the first read to commit+close; process %.2f s; %d segments; load %s"
          % (wall, d["segments"], load))
    R.rec("build", tbl, "mib_per_s", "lucene", tb["text_bytes"] / 1048576 / d["seconds"], "MiB/s", "")
    R.rec("build", tbl, "index_mib", "lucene", d["index_bytes"] / 1048576, "MiB", "directory size")
    log("  lucene %s: built in %.2f s, index %.1f MiB" % (tbl, d["seconds"], d["index_bytes"] / 1048576))
    out = dict(build=dict(seconds=d["seconds"], index_bytes=d["index_bytes"], detail=d))
    if "query" in parts:
        log("lucene on %s: %d queries" % (tbl, len(qs)))
        res, info = lucene_query_set(a, tbl, qs, idir, scratch)
        out["query"] = dict(res=res, info=info, summary=summarize_latency(R, "lucene", tbl, qs, res, info, a))
    shutil.rmtree(idir, ignore_errors=True)
    return out


# ------------------------------------------------------------------- report --

def fmt(v, nd=None):
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "—"
    if isinstance(v, float) and math.isinf(v):
        return "timeout"
    if isinstance(v, int):
        return "{:,}".format(v)
    if nd is None:
        av = abs(v)
        nd = 0 if av >= 1000 else 1 if av >= 100 else 2 if av >= 1 else 3 if av >= 0.01 else 4
    return "{:,.{}f}".format(v, nd)


def ratio(s, p, timeout_ms=None):
    """scipis / peer; a peer's timeout bounds the ratio from above."""
    bad = lambda v: v is None or (isinstance(v, float) and math.isnan(v))
    if bad(s) or bad(p) or (isinstance(s, float) and math.isinf(s)):
        return "—"
    if isinstance(p, float) and math.isinf(p):
        return "< %.3g×" % (s / timeout_ms) if timeout_ms else "—"
    if p == 0:
        return "—"
    r = s / p
    return "%.3g×" % r if r < 1000 else "%.0f×" % r


def overlap(res_a, res_b, qs, kinds):
    vals = []
    for q in qs:
        if q["kind"] not in kinds:
            continue
        x, y = res_a.get(q["qid"]), res_b.get(q["qid"])
        if not x or not y or x["ids"] is None or y["ids"] is None:
            continue
        n = max(len(x["ids"]), len(y["ids"]))
        if n == 0:
            continue
        vals.append(len(set(x["ids"]) & set(y["ids"])) / n)
    return (statistics.mean(vals), len(vals)) if vals else (None, 0)


def lucene_check(res_s, res_l, qs):
    """scipis's top-10 against Lucene's (same tokenizer, same TF-IDF formula):
    same ids; else the same scores rank by rank (relative 1e-6: ties cut
    differently at the LIMIT), or within 6% (Lucene's one-byte length norm);
    else different."""
    c = dict(same=0, ties=0, norm=0, differ=0)
    bad = []
    for q in qs:
        x, y = res_s.get(q["qid"]), res_l.get(q["qid"])
        if not x or not y or x["ids"] is None or y["ids"] is None:
            continue
        if x["ids"] == y["ids"] or (set(x["ids"]) == set(y["ids"])):
            c["same"] += 1
            continue
        if len(x["scores"]) == len(y["scores"]):
            dev = max([abs(u - v) / max(abs(u), 1e-12) for u, v in zip(x["scores"], y["scores"])] or [0])
            if dev <= 1e-6:
                c["ties"] += 1
                continue
            if dev <= 0.06:
                c["norm"] += 1
                continue
        c["differ"] += 1
        bad.append(q["qid"])
    return c, bad


def report(a, out, info, man, tbs, parts, systems, results, R, t_start):
    L = []
    w = L.append
    w("# scipis access method vs GIN, RUM and Lucene\n")
    w("%s UTC, git `%s`%s, %s (%d cores, %.1f GiB), %s, %s; load average %s at the start, %s at the end. "
      "Run took %.1f min.\n" % (info["date_utc"], info["git"], " (label %s)" % a.label if a.label else "",
                                 info["cpu_model"], info["cores"], info["ram_gib"], info["os"], info["kernel"],
                                 info["loadavg_start"], info.get("loadavg_end", "?"), (time.time() - t_start) / 60))
    if os.environ.get("SCIPIS_AM_T0"):
        w("With data preparation and the cluster's setup (run.sh): %.1f min.\n"
          % ((time.time() - int(os.environ["SCIPIS_AM_T0"])) / 60))
    w("PostgreSQL: %s; scipis %s (`%s`); RUM %s (package %s); Lucene %s, %s. Settings: `%s`.\n" % (
        info["postgresql"].split(",")[0], info["scipis_version"], info.get("scipis_so", "?"), info["rum_version"] or "—",
        info["rum_package"] or "—", info.get("lucene", "9.12"), info["java"], info["pg_settings"]))
    if info.get("git_dirty_files"):
        w("Uncommitted changes in the work tree when run: %s.\n" % ", ".join("`%s`" % x.strip() for x in info["git_dirty_files"]))
    w("Parts: %s. Systems: %s. Indexing threads: %d for scipis (`indexer_threads`) and Lucene; GIN and RUM "
      "build with one process (PostgreSQL 15 has no parallel GIN build).\n" % (", ".join(parts), ", ".join(systems),
                                                                               a.threads))
    for tbl in a.tables:
        tb = tbs[tbl]
        if tbl == "lines":
            w("**lines**: %s rows of generated log lines (`lines(id bigint, host text, ts timestamptz, line text)`), "
              "%.1f MiB of text (octet_length), %.1f MiB as stored (pg_column_size), table %.1f MiB. "
              % (fmt(tb["rows"]), tb["text_bytes"] / 1048576, tb["stored_bytes"] / 1048576, tb["table_bytes"] / 1048576))
            w("")
        else:
            w("**docs**: %s generated log files, one per row (`docs(id bigint, path text, body text)`), %.1f MiB "
              "of text, %.1f MiB as stored (TOAST, compressed), table %.1f MiB with TOAST.\n"
              % (fmt(tb["rows"]), tb["text_bytes"] / 1048576, tb["stored_bytes"] / 1048576, tb["table_bytes"] / 1048576))
    lc, ri, dc = man["lines_corpus"], man["rows_info"], man["docs_corpus"]
    w("Data (bench/am/prepare.py, seed %d): lines are the lines of a %d MiB `gen_logs` corpus (%d files), files "
      "read %d at a time in a seeded order and their lines interleaved; host from the file's path, ts = "
      "2026-01-01 + 3 s × id. Docs: a %d MiB `gen_logs` corpus with files under 0.95 MiB (a tsvector holds at most "
      "1 MiB of lexemes). Queries: terms of the data bucketed by ⌊log2 df⌋ (df counted on %s), %d per kind on lines, "
      "%d on docs; the ts-window kinds repeat the 1- and 3-term queries with a window of 10%% of the rows.\n" % (
          man["seed"], lc["size_mib"], lc["files"], ri["interleave"], dc["size_mib"],
          "%s sampled rows" % fmt(man["queries_lines_meta"]["sampled_rows"]),
          sum(1 for q in qs_all.get("lines", []) if q["kind"] == "t1"),
          sum(1 for q in qs_all.get("docs", []) if q["kind"] == "t1")))
    w("")
    peers = [p for p in PEERS if p in systems] if "scipis" in systems else []
    for tbl in a.tables:
        rows = []
        def row(label, metric, unit_better, nd=None, scale=1.0, systems_=None):
            vals = {s: R.get(tbl, metric, s) for s in systems}
            if all(v is None for v in vals.values()):
                return
            vs = vals.get("scipis")
            cells = [fmt(None if vals[s] is None else vals[s] * scale, nd) for s in systems]
            tmo = a.query_timeout * 1000 if metric.endswith("_ms") else None
            rats = [ratio(vs, vals.get(p), tmo) if "scipis" in systems else "—" for p in peers]
            rows.append("| " + " | ".join([label] + cells + rats) + " |")
        row("CREATE INDEX, s", "build_s", "low")
        row("MiB of text / s", "mib_per_s", "high")
        row("index size, MiB", "index_mib", "low")
        row("RUM's stored tsvector column, MiB", "tsv_column_mib", "low")
        for kind in KINDS[tbl]:
            row("%s top-10 p50, ms" % KIND_TEXT[kind], "%s_p50_ms" % kind, "low")
            row("%s top-10 p99, ms" % KIND_TEXT[kind], "%s_p99_ms" % kind, "low")
        for kind in KINDS[tbl]:
            # scipis's statement with its plan cached, in scipis's column,
            # against the same queries of the peers (timed as above).
            for pc in ("p50", "p99"):
                vc = R.get(tbl, "%s_%s_ms" % (kind, pc), "scipis_cached")
                if vc is None or "scipis" not in systems:
                    continue
                vals = {s_: (vc if s_ == "scipis" else R.get(tbl, "%s_%s_ms" % (kind, pc), s_)) for s_ in systems}
                cells = [fmt(vals[s_]) for s_ in systems]
                rats = [ratio(vc, vals.get(p_), a.query_timeout * 1000) for p_ in peers]
                rows.append("| " + " | ".join(["%s top-10 %s, ms, scipis's plan cached" % (KIND_TEXT[kind], pc)]
                                              + cells + rats) + " |")
        if tbl == "lines":
            row("INSERT, rows/s", "insert_rows_per_s", "high")
            row("COPY, rows/s", "copy_rows_per_s", "high")
        row("VACUUM after deleting 10%, s", "vacuum_s", "low")
        if not rows:
            continue
        w("## %s\n" % tbl)
        w("| " + " | ".join([""] + [NAMES[s] for s in systems] + ["scipis / %s" % NAMES[p] for p in peers]) + " |")
        w("|---|%s%s" % ("---|" * len(systems), "---|" * len(peers)))
        L.extend(rows)
        w("\nRatios are scipis's value divided by the peer's: below 1 scipis is faster for seconds and latencies "
          "(and smaller for sizes), above 1 it is faster for MiB/s and rows/s. \"timeout\": the percentile query "
          "ran longer than %g s.\n" % a.query_timeout)
        if ("write" in parts and tbl == "lines") or "vacuum" in parts:
            base = []
            for m, lab in (("insert_rows_per_s", "INSERT rows/s"), ("copy_rows_per_s", "COPY rows/s"),
                           ("vacuum_s", "VACUUM s")):
                v = R.get(tbl, m, "none")
                if v is not None:
                    base.append("%s %s" % (lab, fmt(v)))
            if base:
                w("The same table without any text index (heap only): %s.\n" % ", ".join(base))

    # details
    w("## Details\n")
    w("### Builds\n")
    for tbl in a.tables:
        for s in systems:
            r = results.get((s, tbl), {}).get("build")
            if not r:
                continue
            if s == "lucene":
                d = r["detail"]
                w("- %s, %s: %.2f s (JVM clock), %d rows, %d segments, %s terms, index %.1f MiB." % (
                    tbl, NAMES[s], d["seconds"], d["rows"], d["segments"], fmt(d["segment_terms"]),
                    d["index_bytes"] / 1048576))
            else:
                w("- %s, %s: %s; index %.1f MiB%s." % (tbl, NAMES[s], "; ".join("%s %.2f s" % x for x in r["steps"]),
                                                      r["index_bytes"] / 1048576,
                                                      ", stored tsvector column +%.1f MiB" % (r["extra_bytes"] / 1048576)
                                                      if r["extra_bytes"] else ""))
    w("")
    if "query" in parts:
        w("### Queries\n")
        w("Latency of a query = median over its measured passes; p50 and p99 are nearest-rank over the queries of a "
          "kind. SQL: timed in the server by `am_time()` (clock_timestamp() around EXECUTE of the statement: parse, "
          "plan, execute, the 10 ids and scores aggregated), one session per system and table, `enable_seqscan = off`, "
          "`statement_timeout = %gs`%s. Lucene: System.nanoTime in the JVM around query building, search and reading "
          "the 10 stored ids. Rows \"scipis's plan cached\": the same scipis queries through "
          "`am_time_cached_<table>(terms [, lo, hi])`, the statement as static SQL in PL/pgSQL so that its plan is cached as "
          "a prepared statement's is (the cast of the text to scipisquery timed with it), in the same session after "
          "the run above; the peers' columns repeat their numbers above.\n" % (
              a.query_timeout,
              ("; scipis's session with `scipis.index_cache_size = %s` (its backend's cache of index pages read "
               "from shared buffers, checked once; the default is 32MB; Lucene's searcher has the index mapped and "
               "a %s heap)" % (a.index_cache_size, a.lucene_heap)) if a.index_cache_size else ""))
        w("| table | system | warm-up | measured passes | per kind: queries, timeouts, errors, with < 10 rows |")
        w("|---|---|---|---|---|")
        for tbl in a.tables:
            for s in systems:
                r = results.get((s, tbl), {}).get("query")
                if not r:
                    continue
                inf = r["info"]
                if s == "lucene":
                    warm = "%d full passes" % inf["warmup_passes"]
                    mp = "%d" % inf["passes"]
                else:
                    warm = "%d queries, %.1f s" % (inf["warmup_queries"], inf["warmup_s"])
                    mp = "%d (%s s)" % (len(inf["pass_s"]), ", ".join("%.1f" % x for x in inf["pass_s"]))
                ks = "; ".join("%s: %d, %d, %d, %d" % (k, v["n"] + v["errors"], v["timeouts"], v["errors"], v["fewer"])
                               for k, v in r["summary"].items())
                w("| %s | %s | %s | %s | %s |" % (tbl, NAMES[s], warm, mp, ks))
        w("")
        # agreement
        agree = []
        for tbl in a.tables:
            sr = results.get(("scipis", tbl), {}).get("query")
            if not sr:
                continue
            for p in peers:
                pr = results.get((p, tbl), {}).get("query")
                if not pr:
                    continue
                for kinds in (("t1", "t3"), ("t1f", "t3f")):
                    if not any(k in KINDS[tbl] for k in kinds):
                        continue
                    m, n = overlap(sr["res"], pr["res"], qs_all[tbl], kinds)
                    if n:
                        agree.append("| %s | %s | %s | %d | %.3f |" % (tbl, NAMES[p], "/".join(kinds), n, m))
        if agree:
            w("Agreement of the top-10 lists (mean over queries of |scipis ∩ peer| / max size). Lucene uses the same "
              "tokenizer and ClassicSimilarity (scipis's `tfidf` is its formula with exact lengths, Lucene stores a "
              "one-byte length norm), so its lists should mostly agree; GIN's `ts_rank` and RUM's `<=>` rank "
              "differently and PostgreSQL's parser tokenizes differently (host names, paths, versions stay single "
              "lexemes), so low agreement there is expected.\n")
            w("| table | peer | kinds | queries | overlap |\n|---|---|---|---|---|")
            L.extend(agree)
            w("")
        w("Sample plans (EXPLAIN ANALYZE, TIMING OFF) are in [plans.txt](plans.txt).\n")
    if "write" in parts:
        w("### Writes\n")
        w("Each system on its own copy of `lines` (CREATE TABLE AS, VACUUM ANALYZE) with only its text index: "
          "%d single-row INSERTs, %d per transaction, from one `psql -f` session (client wall clock, connection "
          "included), then one server-side `COPY ... FROM 'file'` of %d rows (client wall clock). The rows continue "
          "the table's ids and timestamps.\n" % (man["n_insert"], a.insert_batch, man["n_copy"]))
        for s in systems:
            r = results.get((s, "lines"), {})
            if r.get("write") and r["write"].get("index_mib_after_copy") is not None:
                w("- %s: index %.1f MiB after the build, %.1f MiB after the INSERTs, %.1f MiB after the COPY "
                  "(%s → %s rows)." % (NAMES[s], r["build"]["index_bytes"] / 1048576, r["write"]["index_mib_after_insert"],
                                      r["write"]["index_mib_after_copy"], fmt(tbs["lines"]["rows"]),
                                      fmt(tbs["lines"]["rows"] + man["n_insert"] + man["n_copy"])))
        w("")
    if "vacuum" in parts:
        w("### VACUUM\n")
        for tbl in a.tables:
            for s in ["none"] + systems:
                r = results.get((s, tbl), {}).get("vacuum")
                if r:
                    w("- %s, %s: DELETE of %s rows %.2f s, VACUUM %.2f s%s." % (
                        tbl, NAMES[s], fmt(r["deleted"]), r["delete_s"], r["vacuum_s"],
                        "; index %.1f → %.1f MiB" % (r["size_before"] / 1048576, r["size_after"] / 1048576)
                        if s != "none" else ""))
        w("")
    w("### Correctness of scipis\n")
    any_c = False
    for tbl in a.tables:
        r = results.get(("scipis", tbl), {})
        for key, lab in (("spot_build", "after CREATE INDEX"), ("spot_vacuum", "after the write and VACUUM parts")):
            if key in r:
                any_c = True
                c = r[key]
                w("- %s, %s: %d of %d queries give the same top-10 (ids modulo ties, scores to 1e-9) from the index "
                  "scan as from a scan without it (`enable_indexscan = off`, `enable_bitmapscan = off`, "
                  "`scipis_query(q, index => ...)`).%s" % (tbl, lab, c["ok"], c["n"], "" if not c["bad"] else
                                                           " **Differences**: " + "; ".join(
                                                               "%s `%s`: %s" % (b["qid"], " ".join(b["terms"]), b["why"])
                                                               for b in c["bad"][:5])))
        lq = results.get(("lucene", tbl), {}).get("query")
        if r.get("query") and lq:
            any_c = True
            c, bad = lucene_check(r["query"]["res"], lq["res"], qs_all[tbl])
            R.rec("correctness", tbl, "lucene_topk_differ", "scipis", c["differ"], "queries",
                  "same %d, ties %d, within 6%% %d" % (c["same"], c["ties"], c["norm"]))
            w("- %s, against Lucene (same tokenizer, ClassicSimilarity): of %d top-10 lists, %d have the same ids, "
              "%d the same scores rank by rank (1e-6) with other ids among ties, %d scores within 6%% (Lucene keeps "
              "a document's length in one byte), %s%s." % (
                  tbl, sum(c.values()), c["same"], c["ties"], c["norm"],
                  "**%d differ**" % c["differ"] if c["differ"] else "none differs",
                  " (%s)" % ", ".join(bad[:10]) if bad else ""))
        if "index_check" in r:
            any_c = True
            c = r["index_check"]
            w("- %s: `scipis_index_check` after writes and VACUUM: %s (%.1f s)." % (
                tbl, "no rows (index and table agree)" if not c["problems"] else "**%s**" % c["problems"][:1000],
                c["seconds"]))
        q = r.get("query")
        if q:
            errs = [(qid, x["error"]) for qid, x in q["res"].items() if x["status"] == "error"]
            if errs:
                any_c = True
                w("- %s: **%d queries failed**, e.g. %s: `%s`" % (tbl, len(errs), errs[0][0], errs[0][1][:300]))
    if not any_c:
        w("(not run: needs the query or vacuum part with scipis)")
    w("")
    failed = [(k, v["failed"]) for k, v in results.items() if "failed" in v]
    if failed:
        w("### Failures\n")
        for (s, tbl), e in failed:
            w("- %s on %s: `%s`" % (NAMES[s], tbl, e[:1500].replace("\n", " ")))
        w("")
    w("## Files\n")
    w("`am.csv` (every metric: part, table, metric, system, value, unit, detail), `raw.jsonl` (every measurement, "
      "and per query its terms, latencies, status and top-10 ids and scores), `machine.json`, `plans.txt`, "
      "`queries-lines.tsv`, `queries-docs.tsv`. How each number is taken: bench/am/README.md.\n")
    with open(os.path.join(out, "am.md"), "w") as f:
        f.write("\n".join(L))


qs_all = {}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--manifest", required=True)
    ap.add_argument("--results", required=True)
    ap.add_argument("--label", default="")
    ap.add_argument("--parts", default=",".join(ALL_PARTS))
    ap.add_argument("--systems", default=",".join(ALL_SYSTEMS))
    ap.add_argument("--tables", default="lines,docs")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--passes", type=int, default=3)
    ap.add_argument("--warmup-budget", type=float, default=120)
    ap.add_argument("--pass-budget", type=float, default=300)
    ap.add_argument("--query-timeout", type=float, default=10)
    ap.add_argument("--spot", type=int, default=20)
    ap.add_argument("--plan-cached", type=int, default=1,
                    help="1: also time scipis's queries with their plan cached (PL/pgSQL static SQL)")
    ap.add_argument("--insert-batch", type=int, default=100)
    ap.add_argument("--index-cache-size", default="512MB",
                    help="scipis.index_cache_size of scipis's query sessions ('' leaves the default, 32MB)")
    ap.add_argument("--lucene-heap", default="4g")
    ap.add_argument("--lucene-warmup", type=int, default=3)
    ap.add_argument("--scratch", default=None)
    a = ap.parse_args()
    parts = [p for p in a.parts.split(",") if p]
    systems = [s for s in a.systems.split(",") if s]
    a.tables = [t for t in a.tables.split(",") if t]
    for v, allv, what in ((parts, ALL_PARTS, "part"), (systems, ALL_SYSTEMS, "system"), (a.tables, list(TABLES), "table")):
        bad = [x for x in v if x not in allv]
        if bad:
            sys.exit("am_bench.py: unknown %s(s) %s; choose from %s" % (what, bad, ",".join(allv)))
    systems = [s for s in ALL_SYSTEMS if s in systems]
    man = json.load(open(a.manifest))
    os.makedirs(a.results, exist_ok=True)
    out = os.path.abspath(a.results)
    scratch = tempfile.mkdtemp(prefix="am-scratch-", dir=a.scratch)
    os.chmod(scratch, 0o755)
    R = Recorder(out)
    t_start = time.time()
    results = {}
    try:
        psql("SET client_min_messages = warning; CREATE EXTENSION IF NOT EXISTS scipis; "
             "CREATE EXTENSION IF NOT EXISTS pg_prewarm")
        if "rum" in systems:
            psql("SET client_min_messages = warning; CREATE EXTENSION IF NOT EXISTS rum")
        psql("ALTER SYSTEM SET fsync = on")
        psql("SELECT pg_reload_conf()")
        info = machine_info(a)
        info["pg_settings"] = pg_settings()
        if "lucene" in systems:
            info["lucene"] = "9.12.3 (bench/lucene/pom.xml)"
        log("machine: %s, %d cores, %.1f GiB; git %s; %s" % (info["cpu_model"], info["cores"], info["ram_gib"],
                                                             info["git"], info["pg_settings"]))
        R.raw_line("setup", "manifest", **man)
        psql("""CREATE OR REPLACE FUNCTION am_time(q text, OUT us float8, OUT ids bigint[], OUT scores float8[])
                LANGUAGE plpgsql AS $f$
                DECLARE t0 timestamptz;
                BEGIN
                  t0 := clock_timestamp();
                  EXECUTE q INTO ids, scores;
                  us := 1e6 * extract(epoch FROM clock_timestamp() - t0);
                END $f$""")
        # Source tables (loaded once, never benchmarked themselves).
        tbs = {}
        if "lines" in a.tables:
            log("loading %d rows into lines" % man["rows"])
            psql("DROP TABLE IF EXISTS lines; CREATE TABLE lines (id bigint, host text, ts timestamptz, line text)")
            t0 = time.perf_counter()
            psql("COPY lines FROM PROGRAM %s" % lit("head -n %d %s" % (man["rows"], man["rows_file"])))
            R.raw_line("setup", "load_lines", seconds=time.perf_counter() - t0)
            psql("VACUUM (ANALYZE) lines")
            tbs["lines"] = table_bytes("lines")
            qs_all["lines"] = read_queries(man["queries_lines"])
            shutil.copy(man["queries_lines"], os.path.join(out, "queries-lines.tsv"))
        if "docs" in a.tables:
            log("loading %d files into docs" % man["docs_files"])
            psql("DROP TABLE IF EXISTS docs; CREATE TABLE docs (id bigint, path text, body text)")
            t0 = time.perf_counter()
            psql("CREATE TEMP TABLE dl (id bigint, path text); COPY dl FROM %s; "
                 "INSERT INTO docs SELECT id, path, pg_read_file(path) FROM dl ORDER BY id" % lit(man["docs_list"]))
            R.raw_line("setup", "load_docs", seconds=time.perf_counter() - t0)
            psql("VACUUM (ANALYZE) docs")
            tbs["docs"] = table_bytes("docs")
            qs_all["docs"] = read_queries(man["queries_docs"])
            shutil.copy(man["queries_docs"], os.path.join(out, "queries-docs.tsv"))
        for tbl, tb in tbs.items():
            R.raw_line("setup", "table", table=tbl, **tb)
            R.rec("setup", tbl, "text_mib", "-", tb["text_bytes"] / 1048576, "MiB", "sum(octet_length)")
            R.rec("setup", tbl, "rows", "-", tb["rows"], "rows", "")
        plan_out = open(os.path.join(out, "plans.txt"), "w")
        order = list(systems)
        if ("write" in parts or "vacuum" in parts) and any(s != "lucene" for s in systems):
            order = ["none"] + order
        for s in order:
            for tbl in a.tables:
                if s == "none" and not ("vacuum" in parts or ("write" in parts and tbl == "lines")):
                    continue
                if s == "lucene":
                    if "build" in parts or "query" in parts:
                        results[(s, tbl)] = run_lucene(R, a, tbl, man, qs_all[tbl], tbs[tbl], parts, scratch)
                else:
                    try:
                        results[(s, tbl)] = run_sql_system(R, a, s, tbl, man, qs_all[tbl], tbs[tbl], parts, scratch,
                                                           plan_out, out)
                    except (SQLError, RuntimeError) as e:
                        log("%s on %s FAILED: %s" % (s, tbl, e))
                        R.raw_line("error", "system_failed", system=s, table=tbl, error=str(e))
                        results[(s, tbl)] = dict(failed=str(e))
                        psql("DROP TABLE IF EXISTS %s" % TABLES[tbl][1], check=False)
                plan_out.flush()
        plan_out.close()
        info["loadavg_end"] = " ".join(open("/proc/loadavg").read().split()[:3])
        with open(os.path.join(out, "machine.json"), "w") as f:
            json.dump(info, f, indent=1)
        R.write_csv()
        report(a, out, info, man, tbs, parts, systems, results, R, t_start)
        sys.stdout.write(open(os.path.join(out, "am.md")).read())
        log("results in %s" % out)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
