#!/usr/bin/env python3
"""Turns one results directory of bench/run.sh into a markdown summary.

    python3 bench/summarize.py bench/results/2026-11-22-1024mib > summary.md

Inputs (all written by run.sh): machine.txt, corpus.txt, build.csv,
queries.tsv, <system>-lat.csv and <system>-topk.csv for each system run.
A query's latency is the median of its measured passes; percentiles are
nearest-rank over the queries of a kind (p50 = the ceil(0.50 n)-th smallest,
p99 = the ceil(0.99 n)-th). Indexing counts each system's fastest run.
"""
import csv
import json
import math
import os
import sys
from collections import defaultdict

NAMES = {
    "scipis": "scipis",
    "lucene": "Lucene",
    "pgfts": "PG FTS",
    "pgfts-aligned": "PG FTS (aligned tokens)",
}
ORDER = ["scipis", "lucene", "pgfts", "pgfts-aligned"]


def kv_file(path):
    out = {}
    if os.path.exists(path):
        for line in open(path):
            line = line.rstrip("\n")
            if "=" in line:
                k, v = line.split("=", 1)
                out[k] = v
    return out


def pct(sorted_vals, p):
    if not sorted_vals:
        return None
    i = max(1, math.ceil(p * len(sorted_vals)))
    return sorted_vals[i - 1]


def load_lat(path):
    """Per kind, the sorted per-query medians over passes; rows of pass 1."""
    runs = defaultdict(list)
    kind = {}
    nrows = {}
    passes = set()
    with open(path) as f:
        for row in csv.DictReader(f):
            i = int(row["id"])
            runs[i].append(float(row["us"]))
            kind[i] = row["kind"]
            passes.add(row["pass"])
            if row["pass"] in ("1", "-1") or i not in nrows:
                nrows[i] = int(row["nrows"])
    by_kind = defaultdict(list)
    for i, v in runs.items():
        v.sort()
        n = len(v)
        med = v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2
        by_kind[kind[i]].append(med)
    return {k: sorted(v) for k, v in by_kind.items()}, nrows, len(passes)


def load_topk(path):
    out = defaultdict(list)
    if os.path.exists(path):
        with open(path) as f:
            for row in csv.DictReader(f):
                out[int(row["id"])].append(row["path"])
    return out


def fmt_ms(us):
    if us is None:
        return "—"
    ms = us / 1000.0
    if ms >= 100:
        return f"{ms:.0f}"
    if ms >= 10:
        return f"{ms:.1f}"
    return f"{ms:.2f}"


def fmt_ratio(x):
    if x is None or x == 0 or math.isinf(x) or math.isnan(x):
        return "—"
    if x >= 100:
        return f"{x:.0f}×"
    return f"{x:.2f}×" if x < 10 else f"{x:.1f}×"


def main():
    res = sys.argv[1]
    machine = kv_file(os.path.join(res, "machine.txt"))
    corpus = kv_file(os.path.join(res, "corpus.txt"))

    build = {}          # the fastest "index" row of each system
    build_runs = defaultdict(list)
    extra = defaultdict(dict)
    with open(os.path.join(res, "build.csv")) as f:
        for row in csv.DictReader(f):
            sysname, step = row["system"], row["step"]
            if step == "index":
                build_runs[sysname].append(float(row["seconds"]))
                if sysname not in build or float(row["seconds"]) < float(build[sysname]["seconds"]):
                    build[sysname] = row
            try:
                extra[sysname][step] = (float(row["seconds"]), json.loads(row["detail"] or "null"))
            except (ValueError, json.JSONDecodeError):
                extra[sysname][step] = (row["seconds"], row["detail"])

    systems = [s for s in ORDER if os.path.exists(os.path.join(res, f"{s}-lat.csv")) or s in build]
    lat, nrows, topk, npasses = {}, {}, {}, {}
    for s in systems:
        p = os.path.join(res, f"{s}-lat.csv")
        if os.path.exists(p):
            lat[s], nrows[s], npasses[s] = load_lat(p)
            topk[s] = load_topk(os.path.join(res, f"{s}-topk.csv"))
    fresh = None
    p = os.path.join(res, "scipis-fresh-session-lat.csv")
    if os.path.exists(p):
        fresh = load_lat(p)[0]

    queries = {}
    with open(os.path.join(res, "queries.tsv")) as f:
        for row in csv.DictReader(f, delimiter="\t"):
            queries[int(row["id"])] = row
    n_t1 = sum(1 for q in queries.values() if q["kind"] == "t1")
    n_t3 = sum(1 for q in queries.values() if q["kind"] == "t3")

    def metric(s, name):
        b = build.get(s)
        if name == "mibs":
            if not b:
                return None
            return float(b["bytes"]) / 1048576.0 / float(b["seconds"])
        if name == "size":
            if not b or not b["index_bytes"]:
                return None
            return float(b["index_bytes"]) / float(b["bytes"])
        kind, p = name.split("_")
        if s not in lat or kind not in lat[s]:
            return None
        return pct(lat[s][kind], {"p50": 0.50, "p99": 0.99}[p])

    # ratio > 1 means scipis is better
    def ratio(name, other):
        a, b = metric("scipis", name), metric(other, name)
        if a is None or b is None or a == 0 or b == 0:
            return None
        return a / b if name == "mibs" else b / a

    others = [s for s in systems if s != "scipis"]
    lucene_version = ""
    if "lucene" in extra and "index" in extra["lucene"]:
        d = extra["lucene"]["index"][1]
        if isinstance(d, dict):
            lucene_version = d.get("lucene", "")

    out = []
    w = out.append
    w(f"# scipis benchmark — {machine.get('date_utc', '?')}")
    w("")
    w(f"Machine: {machine.get('nproc', '?')} CPUs ({machine.get('cpu', '?')}), "
      f"{machine.get('ram_gib', '?')} GiB RAM, {machine.get('os', '?')}, kernel {machine.get('kernel', '?')}; "
      f"{machine.get('postgresql', '')}; {machine.get('java', '')}; g++ {machine.get('gcc', '')}. "
      f"Load average (1/5/15 min) at start {machine.get('loadavg_start', '?')}, "
      + "".join(f"before {NAMES.get(k[len('loadavg_before_'):], k[len('loadavg_before_'):])} {v}, "
                for k, v in machine.items() if k.startswith("loadavg_before_"))
      + f"at end {machine.get('loadavg_end', '?')} (a shared machine: other work was running).")
    w("")
    try:
        cbytes = int(corpus.get("bytes", "0"))
        w(f"Corpus: `gen_logs --size-mib {corpus.get('size_mib', '?')} --seed {corpus.get('seed', '?')}`: "
          f"{corpus.get('files', '?')} files, {cbytes / 1048576:.1f} MiB "
          f"(sha256 of the sorted concatenation `{corpus.get('sha256_of_sorted_concatenation', '?')[:16]}…`). "
          f"Queries: {n_t1} single-term (t1) and {n_t3} three-term OR (t3), top 10; a query's latency "
          f"is the median of its {max(npasses.values()) if npasses else '?'} measured passes. "
          f"Indexing threads: {machine.get('threads', '?')}; indexing throughput is each system's fastest "
          f"build (runs listed below).")
    except ValueError:
        pass
    w("")
    head = ["", *[NAMES.get(s, s) + (f" {lucene_version}" if s == "lucene" and lucene_version else "") for s in systems]]
    if "scipis" in systems:
        head += [f"scipis vs {NAMES.get(s, s)}" for s in others]
    w("| " + " | ".join(head) + " |")
    w("|" + "---|" * len(head))
    rows = [
        ("Indexing throughput, MiB/s", "mibs", lambda v: f"{v:.1f}"),
        ("Index size / input size", "size", lambda v: f"{v:.3f}"),
        ("1-term top-10 p50, ms", "t1_p50", fmt_ms),
        ("1-term top-10 p99, ms", "t1_p99", fmt_ms),
        ("3-term top-10 p50, ms", "t3_p50", fmt_ms),
        ("3-term top-10 p99, ms", "t3_p99", fmt_ms),
    ]
    for label, name, f in rows:
        cells = [label]
        for s in systems:
            v = metric(s, name)
            cells.append("—" if v is None else f(v))
        if "scipis" in systems:
            cells += [fmt_ratio(ratio(name, s)) for s in others]
        w("| " + " | ".join(cells) + " |")
    w("")
    if "scipis" in systems:
        w("Ratios are \"how many times better scipis is\" (> 1: scipis better): throughput "
          "scipis / other, index size and latencies other / scipis.")
    else:
        w("scipis was not part of this run.")
    w("")

    # Details per system
    w("Details:")
    w("")
    for s in systems:
        b = build.get(s)
        if not b:
            continue
        runs = build_runs.get(s, [])
        parts = [f"indexing {float(b['seconds']):.1f} s wall"
                 + (f" (fastest of {len(runs)} runs: " + ", ".join(f"{x:.1f}" for x in runs) + " s)"
                    if len(runs) > 1 else "")]
        if b["index_bytes"]:
            parts.append(f"index {int(float(b['index_bytes'])) / 1048576:.1f} MiB")
        if s.startswith("pgfts"):
            sz = extra[s].get("sizes", (None, None))[1]
            if isinstance(sz, dict):
                parts.append(f"{sz.get('rows')} rows for {sz.get('files')} files "
                             f"({sz.get('split_files')} files over {int(sz.get('unit', 0)) / 1e6:g} MB stored as several rows)")
                parts.append(f"table+TOAST {int(sz['table_bytes']) / 1048576:.1f} MiB, "
                             f"GIN {int(sz['gin_bytes']) / 1048576:.1f} MiB")
            det = json.loads(b["detail"] or "{}") if b["detail"] else {}
            if det:
                parts.append(f"load {det.get('load_s')} s + GIN and ANALYZE {det.get('gin_and_analyze_s')} s")
        if s == "scipis":
            d = None
            try:
                d = json.loads(b["detail"] or "null")
                run = d.get("run") if isinstance(d, dict) else None
                d = extra[s].get(f"scipis_index() run {run}", (None, None))[1]
            except (ValueError, AttributeError):
                pass
            if isinstance(d, dict):
                parts.append("its scipis_index() row: " + ", ".join(
                    f"{k}={v:.2f}" if isinstance(v, float) else f"{k}={v}" for k, v in d.items()))
            m = extra[s].get(f"merge job run {run}", (None, None)) if isinstance(d, dict) else (None, None)
            if isinstance(m[1], dict):
                parts.append(f"then its merge job (queries ran after it): {m[1].get('segments_merged')} segments "
                             f"into {m[1].get('segments')} in {float(m[0]):.1f} s")
        if s == "lucene":
            try:
                d = json.loads(b["detail"] or "null")
            except ValueError:
                d = None
            if isinstance(d, dict):
                parts.append(f"{d.get('segments')} segments, RAM buffer {d.get('ram_mb')} MB")
        if s in lat:
            for kind in ("t1", "t3"):
                v = lat[s].get(kind, [])
                if v:
                    parts.append(f"{kind} mean {fmt_ms(sum(v) / len(v))} ms, max {fmt_ms(v[-1])} ms")
        if s == "scipis" and fresh:
            parts.append("the same queries once more in a new session (new backend, nothing warmed in it): "
                         + ", ".join(f"{k} p50 {fmt_ms(pct(v, 0.5))} ms, p99 {fmt_ms(pct(v, 0.99))} ms"
                                     for k, v in sorted(fresh.items())))
        w(f"- {NAMES.get(s, s)}: " + "; ".join(parts) + ".")
    w("")

    # Result agreement
    if len(topk) > 1:
        w("Result agreement (first measured pass, same query set everywhere):")
        w("")
        ids = sorted(queries)
        base = "scipis" if "scipis" in topk else ("lucene" if "lucene" in topk else None)
        for s in topk:
            if s == base or base is None:
                continue
            same_n = sum(1 for i in ids if nrows[s].get(i, 0) == nrows[base].get(i, 0))
            ov = []
            for i in ids:
                a, b = set(topk[base].get(i, [])), set(topk[s].get(i, []))
                if a or b:
                    ov.append(len(a & b) / max(len(a), len(b)))
            mean_ov = sum(ov) / len(ov) if ov else float("nan")
            w(f"- {NAMES.get(s, s)} vs {NAMES.get(base, base)}: same number of rows for {same_n}/{len(ids)} "
              f"queries; mean top-10 path overlap {mean_ov:.3f}.")
        empty = {s: sum(1 for i in queries if nrows[s].get(i, 0) == 0) for s in nrows}
        w("- Queries with no result: " + ", ".join(f"{NAMES.get(s, s)} {n}" for s, n in empty.items()) + ".")
        w("")
    print("\n".join(out))


if __name__ == "__main__":
    main()
