#!/usr/bin/env python3
"""Summary of a small-file run (bench/smallfiles/run.sh): the fastest build
of each system, every build with its load average, and the ratios.
Usage: python3 bench/smallfiles/summarize.py RESULTS_DIR"""
import json
import os
import statistics
import sys


def kv(path):
    out = {}
    if os.path.exists(path):
        for line in open(path):
            if "=" in line:
                k, v = line.rstrip("\n").split("=", 1)
                out[k] = v
    return out


def index_bytes(b):
    """scipis's index after its merge job (index_bench --settle) when
    measured: what a collection answers from by default."""
    return b.get("merged_index_bytes", b["index_bytes"])


def main(d):
    builds = [json.loads(l) for l in open(os.path.join(d, "builds.jsonl")) if l.strip()]
    m, c = kv(os.path.join(d, "machine.txt")), kv(os.path.join(d, "corpus.txt"))
    systems = [s for s in ("scipis", "lucene") if any(b["system"] == s for b in builds)]
    best = {s: min((b for b in builds if b["system"] == s), key=lambda b: b["wall_s"]) for s in systems}
    mib = int(c.get("bytes", 0)) / 1048576
    print(f"# Small files: {c.get('corpus', '?')}\n")
    print(f"{m.get('date', '?')}; {m.get('host_nproc', '?')} CPUs ({m.get('cpu', '?')}), {m.get('mem', '?')}; "
          f"git {m.get('git', '?')}; {m.get('threads', '?')} indexing threads; load average "
          f"{m.get('loadavg_start', '?')} at the start, {m.get('loadavg_end', '?')} at the end.\n")
    print(f"Corpus: {c.get('files', '?')} files, {mib:.1f} MiB, {c.get('directories', '?')} directories; "
          f"{c.get('size_p50', '?')} bytes median, p90 {c.get('size_p90', '?')}, p99 {c.get('size_p99', '?')}, "
          f"max {c.get('size_max', '?')}. {c.get('generator', '')}\n")
    hdr = "| | " + " | ".join(systems) + (" | scipis vs Lucene |" if len(systems) == 2 else " |")
    print(hdr)
    print("|---" * (len(systems) + 1 + (len(systems) == 2)) + "|")

    def row(name, f, ratio):
        vals = [f(best[s]) for s in systems]
        cells = " | ".join(f"{v:,.3f}" if isinstance(v, float) and v < 1 else
                           f"{v:,.1f}" if isinstance(v, float) else f"{v:,}" for v in vals)
        r = ""
        if len(systems) == 2:
            r = f" | {ratio(vals[0], vals[1]):.2f}×"
        print(f"| {name} | {cells}{r} |")

    row("Indexing, MiB/s", lambda b: b["bytes"] / 1048576 / b["wall_s"], lambda a, b: a / b)
    row("Files/s", lambda b: round(b["files"] / b["wall_s"]), lambda a, b: a / b)
    row("Wall, s", lambda b: b["wall_s"], lambda a, b: b / a)
    row("Index MiB", lambda b: index_bytes(b) / 1048576, lambda a, b: b / a)
    row("Index / input", lambda b: round(index_bytes(b) / b["bytes"], 3), lambda a, b: b / a)
    print("\nRatios: how many times better scipis is (throughput scipis/Lucene, wall and index size "
          "Lucene/scipis). Fastest build of each system. Lucene's time starts after its file walk "
          "(Files.walk, sorted, before the clock); scipis's includes its crawl. scipis's index is "
          "the one its merge job leaves, when measured (below).\n")
    print("Every build (load: 1-minute load average when it started):\n")
    print("| system | run | wall s | MiB/s | files/s | index MiB | load |")
    print("|---|---|---|---|---|---|---|")
    for b in builds:
        print(f"| {b['system']} | {b['run']} | {b['wall_s']:.3f} | {b['bytes'] / 1048576 / b['wall_s']:.1f} | "
              f"{b['files'] / b['wall_s']:,.0f} | {index_bytes(b) / 1048576:.1f} | {b.get('load1', -1):.2f} |")
    if "scipis" in best:
        b = best["scipis"]
        print(f"\nscipis fastest build: {b['files']} files, {b['tokens']:,} tokens, {b['terms']:,} terms (estimate), "
              f"{b['segments']} segments, {b['skipped']} skipped; {b['cpu_s_per_gib']:.2f} CPU-s per GiB, "
              f"{b['cpu_us_per_file']:.1f} CPU-µs per file.")
        if "merge_s" in b:
            print(f"Its merge job's merge, outside the build's time: {b['segments_merged']} segments into "
                  f"{b['merged_segments']} in {b['merge_s']:.2f} s; the index was "
                  f"{b['index_bytes'] / 1048576:.1f} MiB as the build left it, "
                  f"{b['merged_index_bytes'] / 1048576:.1f} MiB merged.")
            if "lucene" in best:
                print(f"Counting the merge in (Lucene's time includes its merges): "
                      f"{best['lucene']['wall_s'] / (b['wall_s'] + b['merge_s']):.2f}×.")
    if len(systems) == 2:
        sw = max(b["wall_s"] for b in builds if b["system"] == "scipis")
        print(f"scipis's slowest build against Lucene's fastest: "
              f"{best['lucene']['wall_s'] / sw:.2f}×.")
        # Each round's builds run back to back (scipis, then Lucene), so
        # their ratio shares the host's speed of that minute; the host's
        # drift between minutes (bench/results: 20-30% within a run) moves
        # the fastest builds of the two apart, not a round's ratio.
        by_run = {}
        for b in builds:
            by_run.setdefault(b["run"], {})[b["system"]] = b["wall_s"]
        paired = sorted(r["lucene"] / r["scipis"] for r in by_run.values() if len(r) == 2)
        if paired:
            print(f"Per round (each scipis build against the Lucene build after it): median "
                  f"{statistics.median(paired):.2f}×, from {paired[0]:.2f}× to {paired[-1]:.2f}× "
                  f"over {len(paired)} rounds.")
        lw = best["lucene"].get("walk_seconds")
        if lw is not None:
            print(f"Lucene's file walk before its clock took {lw:.3f} s in its fastest build; counted in, "
                  f"as scipis's crawl is: {(best['lucene']['wall_s'] + lw) / best['scipis']['wall_s']:.2f}×.")


if __name__ == "__main__":
    main(sys.argv[1])
