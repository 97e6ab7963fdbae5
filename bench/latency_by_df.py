#!/usr/bin/env python3
"""scipis top-10 latency by document frequency, for one run or two.

Usage: latency_by_df.py RUN_DIR [BASELINE_RUN_DIR]

Queries (queries.tsv) are split by the largest df among their terms: the
frequent ones (df >= --frequent, default 512 of the 1165 files of the
1 GiB corpus: in the top 1% of terms by df, as 89% of its 4.6 M distinct
terms are in one file) and the rest. A query's latency is the median of
its measured passes (<system>-lat.csv), as in summary.md.
"""
import argparse
import csv
import os
import statistics


def load(run, system):
    dfs = {}
    with open(os.path.join(run, "queries.tsv")) as f:
        for row in csv.DictReader(f, delimiter="\t"):
            dfs[row["id"]] = (row["kind"], max(int(d) for d in row["dfs"].split(",")))
    per = {}
    with open(os.path.join(run, system + "-lat.csv")) as f:
        for row in csv.DictReader(f):
            per.setdefault(row["id"], []).append(float(row["us"]))
    return {q: (dfs[q][0], dfs[q][1], statistics.median(v)) for q, v in per.items()}


def pct(v, p):
    v = sorted(v)
    return v[min(len(v) - 1, int(round(p / 100 * (len(v) - 1))))]


def table(run, system, frequent):
    lat = load(run, system)
    out = {}
    for kind in ("t1", "t3"):
        for name, pick in (("frequent", lambda d: d >= frequent), ("rest", lambda d: d < frequent)):
            v = [us for k, d, us in lat.values() if k == kind and pick(d)]
            if v:
                out[(kind, name)] = (len(v), pct(v, 50) / 1000, pct(v, 99) / 1000)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("run")
    ap.add_argument("baseline", nargs="?")
    ap.add_argument("--system", default="scipis")
    ap.add_argument("--frequent", type=int, default=512)
    a = ap.parse_args()
    now = table(a.run, a.system, a.frequent)
    base = table(a.baseline, a.system, a.frequent) if a.baseline else {}
    print("| queries | n | p50 ms | p99 ms |" + (" baseline p50 / p99 ms | p50 speed-up |" if base else ""))
    print("|---|---|---|---|" + ("---|---|" if base else ""))
    for key, (n, p50, p99) in sorted(now.items()):
        line = "| %s %s (max df %s %d) | %d | %.3f | %.3f |" % (
            key[0], key[1], ">=" if key[1] == "frequent" else "<", a.frequent, n, p50, p99)
        if key in base:
            line += " %.3f / %.3f | %.2fx |" % (base[key][1], base[key][2], base[key][1] / p50)
        print(line)


if __name__ == "__main__":
    main()
