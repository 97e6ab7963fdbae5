#!/usr/bin/env python3
"""Minute-by-minute view of a churn run's raw.json (bench/refresh/run.sh):
segments, tombstoned documents, query and staleness percentiles.

    python3 bench/results/by_minute.py bench/results/<run>/raw.json [seconds per row]
"""
import json
import statistics
import sys


def pct(v, p):
    v = sorted(v)
    return v[min(len(v) - 1, int(len(v) * p))] if v else float("nan")


def main():
    raw = json.load(open(sys.argv[1]))
    step = int(sys.argv[2]) if len(sys.argv) > 2 else 60
    for c in raw["churn"]:
        print(f"rate {c['rate']}: {len(c.get('errors', []))} search errors")
        print("| from s | segments min-max (mean) | tombstoned at end | query p50 ms | p99 ms | staleness p50 s | p99 s | max s | probes |")
        print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
        seconds = int(c["seconds"])
        for t0 in range(0, seconds, step):
            inside = lambda t: t0 <= t < t0 + step
            segs = [int(s[1].split()[0]) for s in c["segments"] if inside(s[0])]
            dead = [int(s[1].split()[1]) for s in c["segments"] if inside(s[0])]
            q = [x[1] * 1000 for x in c["query_at"] if inside(x[0])]
            st = [x[1] for x in c["staleness_at"] if inside(x[0])]
            if not segs or not q or not st:
                continue
            print(f"| {t0} | {min(segs)}-{max(segs)} ({statistics.mean(segs):.0f}) | {max(dead):,} | "
                  f"{statistics.median(q):.1f} | {pct(q, .99):.1f} | {statistics.median(st):.2f} | "
                  f"{pct(st, .99):.2f} | {max(st):.2f} | {len(st)} |")


if __name__ == "__main__":
    main()
