#!/usr/bin/env python3
"""Data for bench/am: generated once, reused by every later run (idempotent).

    python3 bench/am/prepare.py --rows N --docs-gib G [--data /var/tmp/scipis-am] [--seed 42]
        [--queries 200] [--doc-queries 50] [--threads 2] [--keep-corpus]

Prints one JSON object (the manifest: every path and count the benchmark
needs) and writes it to DATA/manifest-<rows>-<docs mib>-seed<S>.json.

Rows (table `lines`): bench/build/gen_logs makes a log corpus large enough for
rows + 220,000 lines (DATA/lines-corpus-<M>mib-seed<S>/, M a multiple of 64);
its files (removed afterwards unless --keep-corpus), in an order shuffled by the seed, are read 32 at a time and their
lines interleaved round robin (a file that ends is replaced by the next), so
any stretch of rows mixes the 16 source systems, as the logs of many hosts do.
Row i (from 1) gets host = '<system>-node<NN>' from its file's path and
ts = 2026-01-01 00:00:00+00 + 3 i seconds. DATA/rows-<M>mib-seed<S>.tsv
holds every row of the corpus in COPY text format (id, host, ts, line;
backslash and tab escaped); the benchmark loads its first N rows, INSERTs the
next 20,000 and COPYs the 200,000 after those (split into their own files
here).

Docs (table `docs`): gen_logs with the same seed and --max-mib 0.95 (every
file under 1 MiB, so that no document exceeds the 1 MiB limit of a tsvector's
lexemes: PostgreSQL's full-text search, GIN and RUM could not index it
otherwise), G GiB in total; DATA/docs-<M>mib-seed<S>.list is id TAB path, in
path order.

Queries, chosen from the data's own tokens exactly as scipis tokenizes them
(ASCII letters, digits, _ and bytes >= 0x80; ASCII lower-cased): document
frequencies (rows, or files, containing the term) counted on a sample (every
k-th of the first N rows, at most 1,000,000 rows; at most 400 files),
scaled up; terms with '_' or non-ASCII bytes are left out (PostgreSQL's
parser splits at '_'); terms bucketed by floor(log2 df); t1 queries take
single terms round robin over the buckets, t3 queries three distinct terms
each from a bucket drawn at random; t1f and t3f are the same queries with a
time window of 10% of the rows (a random start), half-open [lo, hi).
"""

import argparse
import json
import math
import os
import random
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
GEN = os.path.join(REPO, "bench", "build", "gen_logs")
TEMPLATES = os.path.join(REPO, "data", "loghub-2k")
N_INSERT = 20000
N_COPY = 200000
TS_BASE = 1767225600  # 2026-01-01 00:00:00 UTC
TS_STEP = 3
INTERLEAVE = 32
TOKEN = re.compile(rb"[A-Za-z0-9_\x80-\xff]+")
GOOD_TERM = re.compile(rb"^[a-z0-9]+$")


def log(msg):
    sys.stderr.write("[%s] prepare: %s\n" % (time.strftime("%H:%M:%S"), msg))
    sys.stderr.flush()


def tokens(b):
    out = []
    for t in TOKEN.findall(b.lower()):
        if len(t) <= 255:
            out.append(t)
        else:
            out.extend(t[i:i + 255] for i in range(0, len(t), 255))
    return out


def ts_text(i):
    return time.strftime("%Y-%m-%d %H:%M:%S+00", time.gmtime(TS_BASE + TS_STEP * i))


def ts_epoch(i):
    return TS_BASE + TS_STEP * i


def gen_corpus(out, size_mib, seed, threads, extra=()):
    done = out + ".done"
    if os.path.exists(done):
        return json.load(open(done))
    subprocess.run(["rm", "-rf", out], check=True)
    log("generating %s MiB into %s" % (size_mib, out))
    t0 = time.time()
    subprocess.run([GEN, "--out", out, "--size-mib", str(size_mib), "--seed", str(seed), "--templates", TEMPLATES,
                    "--threads", str(threads)] + list(extra), check=True)
    files = sorted(os.path.relpath(os.path.join(d, f), out) for d, _, fs in os.walk(out) for f in fs)
    info = dict(dir=out, size_mib=size_mib, seed=seed, options=list(extra), files=len(files),
                bytes=sum(os.path.getsize(os.path.join(out, f)) for f in files),
                generate_seconds=round(time.time() - t0, 2))
    json.dump(info, open(done, "w"), indent=1)
    return info


def flatten(corpus, out, seed):
    """Every line of the corpus as a row (COPY text format), files interleaved."""
    done = out + ".done"
    if os.path.exists(done):
        return json.load(open(done))
    files = sorted(os.path.relpath(os.path.join(d, f), corpus) for d, _, fs in os.walk(corpus) for f in fs)
    random.Random(seed).shuffle(files)
    log("rows: interleaving the lines of %d files into %s" % (len(files), out))
    t0 = time.time()
    nxt = 0
    open_ = []  # [host bytes, lines list, position]

    def take():
        nonlocal nxt
        while nxt < len(files):
            rel = files[nxt]
            nxt += 1
            parts = rel.split("/")
            host = ("%s-%s" % (parts[0], parts[1])).encode()
            with open(os.path.join(corpus, rel), "rb") as f:
                lines = [l for l in f.read().split(b"\n") if l.strip()]
            if lines:
                return [host, lines, 0]
        return None

    for _ in range(INTERLEAVE):
        s = take()
        if s:
            open_.append(s)
    n = 0
    nbytes = 0
    tmp = out + ".tmp"
    base = TS_BASE
    with open(tmp, "wb", buffering=1 << 22) as w:
        while open_:
            i = 0
            while i < len(open_):
                s = open_[i]
                line = s[1][s[2]]
                s[2] += 1
                n += 1
                nbytes += len(line)
                if b"\\" in line:
                    line = line.replace(b"\\", b"\\\\")
                if b"\t" in line:
                    line = line.replace(b"\t", b"\\t")
                if b"\r" in line:
                    line = line.replace(b"\r", b"\\r")
                w.write(b"%d\t%s\t%s\t%s\n" % (n, s[0], time.strftime("%Y-%m-%d %H:%M:%S+00",
                                                                    time.gmtime(base + TS_STEP * n)).encode(), line))
                if s[2] >= len(s[1]):
                    r = take()
                    if r:
                        open_[i] = r
                    else:
                        open_.pop(i)
                        continue
                i += 1
    os.rename(tmp, out)
    info = dict(file=out, rows=n, line_bytes=nbytes, seconds=round(time.time() - t0, 1), interleave=INTERLEAVE)
    json.dump(info, open(done, "w"), indent=1)
    return info


def split_rows(rows_file, first, count, out):
    """Rows first .. first + count - 1 of rows_file into out (idempotent)."""
    if os.path.exists(out):
        return
    tmp = out + ".tmp"
    with open(rows_file, "rb") as f, open(tmp, "wb") as w:
        k = 0
        for line in f:
            k += 1
            if k < first:
                continue
            if k >= first + count:
                break
            w.write(line)
    if k < first + count - 1:
        raise SystemExit("prepare: %s has only %d rows" % (rows_file, k))
    os.rename(tmp, out)


def pick(df, nsample_units, scale, seed, n_single, n_multi, windows_rows):
    """Queries from sampled document frequencies (see the module docstring)."""
    rng = random.Random(seed * 7919 + 17)
    buckets = {}
    for t, c in df.items():
        if not GOOD_TERM.match(t):
            continue
        est = c * scale
        buckets.setdefault(int(math.floor(math.log2(est))), []).append((t.decode(), est))
    keys = sorted(buckets)
    for b in keys:
        buckets[b].sort()
        rng.shuffle(buckets[b])
    used = {b: 0 for b in keys}

    def draw(b):
        v = buckets[b]
        t = v[used[b] % len(v)]
        used[b] += 1
        return t

    qs = []
    for i in range(n_single):
        t, est = draw(keys[i % len(keys)])
        qs.append(dict(kind="t1", terms=[t], df=[round(est)]))
    for i in range(n_multi):
        terms, dfs = [], []
        while len(terms) < 3:
            t, est = draw(keys[rng.randrange(len(keys))])
            if t not in terms:
                terms.append(t)
                dfs.append(round(est))
        qs.append(dict(kind="t3", terms=terms, df=dfs))
    out = []
    for k, q in enumerate(qs):
        q["qid"] = "%s-%03d" % (q["kind"], k if q["kind"] == "t1" else k - n_single)
        out.append(q)
    if windows_rows:
        n, w = windows_rows
        for q in list(out):
            lo = rng.randint(1, max(1, n - w + 1))
            f = dict(q, kind=q["kind"] + "f", qid=q["qid"].replace("-", "f-", 1), lo_id=lo, hi_id=lo + w,
                     ts_lo=ts_epoch(lo), ts_hi=ts_epoch(lo + w))
            out.append(f)
    return out, {str(b): len(buckets[b]) for b in keys}


def lines_df(rows_file, n, cap=1000000):
    k = max(1, -(-n // cap))
    df = {}
    sampled = 0
    with open(rows_file, "rb") as f:
        for i, line in enumerate(f, 1):
            if i > n:
                break
            if i % k:
                continue
            text = line.rstrip(b"\n").split(b"\t", 3)[3]
            sampled += 1
            for t in set(tokens(text.replace(b"\\t", b" ").replace(b"\\\\", b"\\"))):
                df[t] = df.get(t, 0) + 1
    return df, sampled, k


def docs_df(paths, seed, cap=400):
    chosen = list(paths)
    if len(chosen) > cap:
        chosen = random.Random(seed).sample(chosen, cap)
    df = {}
    for p in chosen:
        with open(p, "rb") as f:
            for t in set(tokens(f.read())):
                df[t] = df.get(t, 0) + 1
    return df, len(chosen), len(paths) / len(chosen)


def write_queries(path, qs):
    with open(path + ".tmp", "w") as w:
        w.write("qid\tkind\tterms\tts_lo\tts_hi\tlo_id\thi_id\tdf\n")
        for q in qs:
            w.write("%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n" % (
                q["qid"], q["kind"], " ".join(q["terms"]), q.get("ts_lo", ""), q.get("ts_hi", ""),
                q.get("lo_id", ""), q.get("hi_id", ""), ",".join(str(x) for x in q["df"])))
    os.rename(path + ".tmp", path)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, required=True)
    ap.add_argument("--docs-gib", type=float, required=True)
    ap.add_argument("--data", default="/var/tmp/scipis-am")
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--queries", type=int, default=200, help="t1 and t3 queries each, on lines")
    ap.add_argument("--doc-queries", type=int, default=50, help="t1 and t3 queries each, on docs")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--keep-corpus", action="store_true",
                    help="keep the lines corpus once its rows are written (removed by default: rows.tsv has them all)")
    a = ap.parse_args()
    os.makedirs(a.data, exist_ok=True)
    os.chmod(a.data, 0o755)
    if not os.path.exists(GEN):
        subprocess.run(["make", "-s", "-C", os.path.join(REPO, "bench"), "build/gen_logs"], check=True)

    need = a.rows + N_INSERT + N_COPY
    size_mib = max(64, int(math.ceil(need * 140 / 1048576 / 64)) * 64)
    while True:
        corpus = os.path.join(a.data, "lines-corpus-%dmib-seed%d" % (size_mib, a.seed))
        ci = gen_corpus(corpus, size_mib, a.seed, a.threads)
        rows_file = os.path.join(a.data, "rows-%dmib-seed%d.tsv" % (size_mib, a.seed))
        ri = flatten(corpus, rows_file, a.seed)
        if ri["rows"] >= need:
            if not a.keep_corpus and os.path.isdir(corpus):
                # rows.tsv has every line; the corpus's .done file stays as its record
                subprocess.run(["rm", "-rf", corpus], check=True)
            break
        size_mib *= 2
        log("only %d rows, %d needed: a corpus of %d MiB" % (ri["rows"], need, size_mib))
    tag = "%dmib-seed%d-n%d" % (size_mib, a.seed, a.rows)
    insert_file = os.path.join(a.data, "insert-%s.tsv" % tag)
    copy_file = os.path.join(a.data, "copy-%s.tsv" % tag)
    split_rows(rows_file, a.rows + 1, N_INSERT, insert_file)
    split_rows(rows_file, a.rows + 1 + N_INSERT, N_COPY, copy_file)

    docs_mib = int(round(a.docs_gib * 1024))
    dcorpus = os.path.join(a.data, "docs-corpus-%dmib-max0.95-seed%d" % (docs_mib, a.seed))
    di = gen_corpus(dcorpus, docs_mib, a.seed, a.threads, ["--max-mib", "0.95"])
    dlist = os.path.join(a.data, "docs-%dmib-seed%d.list" % (docs_mib, a.seed))
    dpaths = sorted(os.path.join(d, f) for d, _, fs in os.walk(dcorpus) for f in fs)
    if not os.path.exists(dlist):
        with open(dlist + ".tmp", "w") as w:
            for i, p in enumerate(dpaths, 1):
                w.write("%d\t%s\n" % (i, p))
        os.rename(dlist + ".tmp", dlist)

    ql = os.path.join(a.data, "queries-lines-%s-q%d.tsv" % (tag, a.queries))
    qmeta_l = ql + ".json"
    if not os.path.exists(ql):
        log("queries: document frequencies of lines")
        df, sampled, k = lines_df(rows_file, a.rows)
        qs, bk = pick(df, sampled, k, a.seed, a.queries, a.queries, (a.rows, max(1, a.rows // 10)))
        write_queries(ql, qs)
        json.dump(dict(sampled_rows=sampled, every=k, buckets=bk, vocabulary_sampled=len(df)), open(qmeta_l, "w"))
    qd = os.path.join(a.data, "queries-docs-%dmib-seed%d-q%d.tsv" % (docs_mib, a.seed, a.doc_queries))
    qmeta_d = qd + ".json"
    if not os.path.exists(qd):
        log("queries: document frequencies of docs")
        df, sampled, scale = docs_df(dpaths, a.seed)
        qs, bk = pick(df, sampled, scale, a.seed, a.doc_queries, a.doc_queries, None)
        write_queries(qd, qs)
        json.dump(dict(sampled_files=sampled, scale=scale, buckets=bk, vocabulary_sampled=len(df)), open(qmeta_d, "w"))

    subprocess.run(["chmod", "-R", "a+rX", a.data], check=True)
    man = dict(rows=a.rows, seed=a.seed, lines_corpus=ci, rows_file=rows_file, rows_info=ri,
               insert_file=insert_file, copy_file=copy_file, n_insert=N_INSERT, n_copy=N_COPY,
               docs_corpus=di, docs_list=dlist, docs_files=len(dpaths),
               queries_lines=ql, queries_lines_meta=json.load(open(qmeta_l)),
               queries_docs=qd, queries_docs_meta=json.load(open(qmeta_d)),
               ts_base=TS_BASE, ts_step=TS_STEP)
    mpath = os.path.join(a.data, "manifest-%d-%dmib-seed%d.json" % (a.rows, docs_mib, a.seed))
    json.dump(man, open(mpath, "w"), indent=1)
    print(json.dumps(dict(man, manifest=mpath)))


if __name__ == "__main__":
    main()
