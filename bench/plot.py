#!/usr/bin/env python3
"""Draws the plots of a bench/run.sh results directory as SVG (stdlib only:
the machines this runs on have no plotting package).

    python3 bench/plot.py RESULTS
        RESULTS/indexing.svg  each system's builds (dots) and fastest (bar), MiB/s, log axis
        RESULTS/latency.svg   cumulative distribution of per-query latency, t1 and t3, log axis
    python3 bench/plot.py --history OUT.svg RESULTS...
        scipis's and Lucene's fastest build per run, and their ratio, in the order given

Numbers are read the way summarize.py reads them (same files, same medians).
"""
import csv
import math
import os
import sys
from xml.sax.saxutils import escape

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from summarize import NAMES, ORDER, kv_file, load_lat  # noqa: E402

COLOURS = {"scipis": "#1b6ca8", "lucene": "#d1495b", "pgfts": "#6a994e", "pgfts-aligned": "#edae49"}
FONT = 'font-family="DejaVu Sans, Arial, sans-serif"'


class Svg:
    def __init__(self, width, height):
        self.w, self.h, self.parts = width, height, []

    def add(self, s):
        self.parts.append(s)

    def text(self, x, y, s, size=12, anchor="start", weight="normal", colour="#222"):
        self.add(f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size}" text-anchor="{anchor}" '
                 f'font-weight="{weight}" fill="{colour}" {FONT}>{escape(s)}</text>')

    def line(self, x1, y1, x2, y2, colour="#bbb", width=1, dash=None):
        d = f' stroke-dasharray="{dash}"' if dash else ""
        self.add(f'<line x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" '
                 f'stroke="{colour}" stroke-width="{width}"{d}/>')

    def save(self, path):
        with open(path, "w") as f:
            f.write(f'<svg xmlns="http://www.w3.org/2000/svg" width="{self.w}" height="{self.h}" '
                    f'viewBox="0 0 {self.w} {self.h}">\n<rect width="100%" height="100%" fill="white"/>\n')
            f.write("\n".join(self.parts))
            f.write("\n</svg>\n")


def log_axis(lo, hi):
    """Decades covering [lo, hi] and a value -> [0, 1] mapping."""
    a, b = math.floor(math.log10(lo)), math.ceil(math.log10(hi))
    if a == b:
        b += 1
    return [10.0 ** e for e in range(a, b + 1)], lambda v: (math.log10(v) - a) / (b - a)


def tick_label(v):
    return f"{v:g}" if v >= 0.01 else f"{v:.0e}"


def draw_log_x(svg, x0, x1, y_top, y_bottom, ticks, frac, label):
    for t in ticks:
        x = x0 + frac(t) * (x1 - x0)
        svg.line(x, y_top, x, y_bottom, "#e3e3e3")
        svg.text(x, y_bottom + 15, tick_label(t), 11, "middle", colour="#555")
    svg.line(x0, y_bottom, x1, y_bottom, "#555")
    svg.text((x0 + x1) / 2, y_bottom + 32, label, 12, "middle")


def builds(res):
    out = {}
    with open(os.path.join(res, "build.csv")) as f:
        for row in csv.DictReader(f):
            if row["step"] == "index":
                mib = float(row["bytes"]) / 1048576.0 / float(row["seconds"])
                out.setdefault(row["system"], []).append(mib)
    return out


def title_of(res):
    m = kv_file(os.path.join(res, "machine.txt"))
    return (f"{m.get('date_utc', '?')[:10]}, {m.get('nproc', '?')} vCPU {m.get('cpu', '?')}, "
            f"{m.get('threads', '?')} indexing threads, {os.path.basename(os.path.normpath(res))}")


def plot_indexing(res, path):
    b = builds(res)
    systems = [s for s in ORDER if s in b]
    if not systems:
        return
    lo = min(min(v) for v in b.values()) / 1.5
    hi = max(max(v) for v in b.values()) * 1.5
    ticks, frac = log_axis(lo, hi)
    x0, x1, top, row_h = 190, 640, 58, 34
    svg = Svg(680, top + row_h * len(systems) + 60)
    svg.text(20, 22, "Indexing throughput, MiB/s (fastest build = bar, every build = dot)", 14, weight="bold")
    svg.text(20, 40, title_of(res), 11, colour="#555")
    bottom = top + row_h * len(systems)
    draw_log_x(svg, x0, x1, top, bottom, ticks, frac, "MiB of input per second of wall time (log scale)")
    best_scipis = max(b.get("scipis", [0]))
    for i, s in enumerate(systems):
        y = top + i * row_h + 6
        best = max(b[s])
        xb = x0 + frac(best) * (x1 - x0)
        svg.add(f'<rect x="{x0}" y="{y:.1f}" width="{xb - x0:.1f}" height="{row_h - 12}" '
                f'fill="{COLOURS.get(s, "#888")}" opacity="0.75"/>')
        for v in b[s]:
            svg.add(f'<circle cx="{x0 + frac(v) * (x1 - x0):.1f}" cy="{y + (row_h - 12) / 2:.1f}" r="3" '
                    f'fill="#111"/>')
        svg.text(x0 - 8, y + row_h / 2 - 2, NAMES.get(s, s), 12, "end")
        note = f"{best:.1f}" + ("" if s == "scipis" or not best_scipis else f"  (scipis {best_scipis / best:.1f}×)")
        svg.text(min(xb + 6, x1 - 150), y + row_h / 2 - 2, note, 11, colour="#222")
    svg.save(path)


def plot_latency(res, path):
    lat = {}
    for s in ORDER:
        p = os.path.join(res, f"{s}-lat.csv")
        if os.path.exists(p):
            lat[s] = load_lat(p)[0]
    if not lat:
        return
    vals = [v / 1000.0 for d in lat.values() for k in d.values() for v in k if v > 0]
    ticks, frac = log_axis(min(vals) / 1.2, max(vals) * 1.2)
    panel_w, x_pad, top, plot_h = 330, 60, 72, 220
    svg = Svg(x_pad + 2 * panel_w + 20, top + plot_h + 100)
    svg.text(20, 22, "Top-10 query latency: share of queries answered within x ms", 14, weight="bold")
    svg.text(20, 40, title_of(res) + "; per query the median of its passes", 11, colour="#555")
    for pi, (kind, label) in enumerate((("t1", "single-term"), ("t3", "three-term OR"))):
        x0 = x_pad + pi * panel_w
        x1 = x0 + panel_w - 30
        bottom = top + plot_h
        svg.text((x0 + x1) / 2, top - 6, label, 12, "middle", weight="bold")
        draw_log_x(svg, x0, x1, top, bottom, ticks, frac, "ms (log scale)")
        for q in (0.0, 0.5, 1.0):
            y = bottom - q * plot_h
            svg.line(x0, y, x1, y, "#e3e3e3")
            svg.text(x0 - 6, y + 4, f"{q:.1f}", 10, "end", colour="#555")
        svg.line(x0, bottom - 0.99 * plot_h, x1, bottom - 0.99 * plot_h, "#aaa", dash="3,3")
        for s, d in lat.items():
            v = [max(u / 1000.0, ticks[0]) for u in d.get(kind, [])]
            if not v:
                continue
            pts = []
            for i, ms in enumerate(v):
                x = x0 + frac(ms) * (x1 - x0)
                pts.append(f"{x:.1f},{bottom - i / len(v) * plot_h:.1f}")
                pts.append(f"{x:.1f},{bottom - (i + 1) / len(v) * plot_h:.1f}")
            svg.add(f'<polyline points="{" ".join(pts)}" fill="none" stroke="{COLOURS.get(s, "#888")}" '
                    f'stroke-width="2"/>')
    ly = top + plot_h + 52
    lx = x_pad
    for s in lat:
        svg.line(lx, ly - 4, lx + 22, ly - 4, COLOURS.get(s, "#888"), 3)
        svg.text(lx + 28, ly, NAMES.get(s, s), 11)
        lx += 40 + 7 * len(NAMES.get(s, s))
    svg.text(lx + 10, ly, "dashed: 99% of queries", 11, colour="#555")
    svg.save(path)


def plot_history(out, dirs):
    runs = []
    for d in dirs:
        b = builds(d)
        if "scipis" in b and "lucene" in b:
            runs.append((os.path.basename(os.path.normpath(d)), max(b["scipis"]), max(b["lucene"])))
    if not runs:
        sys.exit("plot.py: no results directory with both scipis and Lucene builds")
    x0, y_top, plot_h, col_w = 70, 60, 260, 105
    x1 = x0 + col_w * len(runs)
    svg = Svg(x1 + 40, y_top + plot_h + 56)
    svg.text(20, 22, "Fastest indexing build per run, MiB/s (same corpus, machine and threads)", 14,
             weight="bold")
    svg.text(20, 40, "bars: scipis (blue), Lucene (red); label: scipis / Lucene", 11, colour="#555")
    hi = max(r[1] for r in runs) * 1.15
    bottom = y_top + plot_h
    step = 100 if hi > 300 else 50
    for v in range(0, int(hi) + 1, step):
        y = bottom - v / hi * plot_h
        svg.line(x0, y, x1, y, "#e3e3e3")
        svg.text(x0 - 6, y + 4, str(v), 10, "end", colour="#555")
    svg.line(x0, bottom, x1, bottom, "#555")
    for i, (name, s, l) in enumerate(runs):
        cx = x0 + i * col_w + col_w / 2
        for off, v, c in ((-20, s, COLOURS["scipis"]), (4, l, COLOURS["lucene"])):
            h = v / hi * plot_h
            svg.add(f'<rect x="{cx + off:.1f}" y="{bottom - h:.1f}" width="16" height="{h:.1f}" fill="{c}"/>')
        svg.text(cx, bottom - s / hi * plot_h - 6, f"{s / l:.1f}×", 11, "middle", weight="bold")
        short = name.replace("2026-11-22-1024mib", "").lstrip("-") or "first"
        svg.text(cx, bottom + 16, short, 10, "middle")
    svg.text((x0 + x1) / 2, bottom + 36, "run (bench/results/<date>-<size>-<name>)", 11, "middle", colour="#555")
    svg.save(out)


def main():
    args = sys.argv[1:]
    if len(args) >= 3 and args[0] == "--history":
        plot_history(args[1], args[2:])
    elif len(args) == 1:
        plot_indexing(args[0], os.path.join(args[0], "indexing.svg"))
        plot_latency(args[0], os.path.join(args[0], "latency.svg"))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
