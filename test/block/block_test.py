#!/usr/bin/env python3
"""Full-scan oracle for scipis block min/max indexes.

Generates arrays (with and without spatial locality, every dtype, 1-D and
3-D, sizes that are not multiples of the partition or block, NaN and +-Inf),
writes them in the ADIOS block layout, builds block indexes through SQL and
checks hundreds of random predicates: scipis_block_query must return exactly
the elements, coordinates and values a full scan finds; scipis_block_count
must agree under every pruning mode; scipis_block_ranges must cover every
hit. Shares no code with the engine: the layout, the data and the IEEE
comparisons are all computed here. Python 3 standard library only.

Run from the repository root inside pg_virtualenv (PG* variables set):
    python3 test/block/block_test.py [--seed N] [--keep]
"""
import argparse
import hashlib
import math
import os
import random
import shutil
import struct
import subprocess
import sys
import tempfile
import time
from array import array

NAN = float("nan")
INF = float("inf")

TYPECODE = {"int32": "i", "int64": "q", "float32": "f", "float64": "d"}


# ---------------------------------------------------------------- layout ---

def file_order(shape, block_shape):
    """Global row-major element indexes in file order: blocks in row-major
    order of the block grid, each block row-major inside, edge blocks clipped."""
    nd = len(shape)
    grid = [(shape[d] + block_shape[d] - 1) // block_shape[d] for d in range(nd)]
    strides = [1] * nd
    for d in range(nd - 2, -1, -1):
        strides[d] = strides[d + 1] * shape[d + 1]
    order = []

    def rec_block(d, bidx):
        if d == nd:
            origin = [bidx[k] * block_shape[k] for k in range(nd)]
            extent = [min(block_shape[k], shape[k] - origin[k]) for k in range(nd)]
            rec_local(0, origin, extent, 0)
            return
        for b in range(grid[d]):
            rec_block(d + 1, bidx + [b])

    def rec_local(d, origin, extent, base):
        if d == nd - 1:
            start = base + origin[d] * strides[d]
            order.extend(range(start, start + extent[d]))
            return
        for c in range(extent[d]):
            rec_local(d + 1, origin, extent, base + (origin[d] + c) * strides[d])

    rec_block(0, [])
    return order


# ------------------------------------------------------------------ data ---

class Dataset:
    def __init__(self, name, shape, block_shape, partition_bytes, variables):
        """variables: list of (name, dtype, header_bytes, values in global order)."""
        self.name = name
        self.shape = shape
        self.block_shape = block_shape
        self.partition_bytes = partition_bytes
        self.n = math.prod(shape)
        self.vars = sorted(variables, key=lambda v: v[0].encode())
        self.order = file_order(shape, block_shape or shape)
        assert len(self.order) == self.n
        self.pos = [0] * self.n
        for p, g in enumerate(self.order):
            self.pos[g] = p
        self.values = {}
        self._rows = None

    def write(self, directory):
        spec = {}
        for name, dtype, header, vals in self.vars:
            a = array(TYPECODE[dtype], (vals[g] for g in self.order))
            if sys.byteorder != "little":
                a.byteswap()
            path = os.path.join(directory, "%s_%s.%s" % (self.name, name, dtype))
            with open(path, "wb") as f:
                f.write(os.urandom(header) if header else b"")
                f.write(a.tobytes())
            os.chmod(path, 0o644)
            # What the file really holds, as doubles, in global order.
            back = array(TYPECODE[dtype], a.tobytes())
            if sys.byteorder != "little":
                back.byteswap()
            g = [0.0] * self.n
            for p, v in enumerate(back):
                g[self.order[p]] = float(v)
            self.values[name] = g
            spec[name] = {"path": path, "dtype": dtype, "header_bytes": header}
        self.spec = spec

    def options(self):
        o = {"shape": self.shape, "partition_bytes": self.partition_bytes, "threads": 2}
        if self.block_shape:
            o["block_shape"] = self.block_shape
        return o

    def rows(self):
        """Each element as the SQL side prints it: "i:coords:hex,hex,..."
        (built column by column: a million rows a call at C speed)."""
        if self._rows is None:
            cols = [[str(i) for i in range(self.n)]]
            if len(self.shape) == 1:
                cols.append(cols[0])
            else:
                coords = [[] for _ in range(self.n)]
                for d, s in enumerate(self.shape):
                    inner = math.prod(self.shape[d + 1:])
                    for i in range(self.n):
                        coords[i].append(str(i // inner % s))
                cols.append([",".join(c) for c in coords])
            for v in self.vars:
                vals = self.values[v[0]]
                h = struct.pack(">%dd" % self.n, *vals).hex()
                cols.append([h[16 * i:16 * i + 16] if x == x else "nan" for i, x in enumerate(vals)])
            self._rows = [cols[0][i] + ":" + cols[1][i] + ":" + ",".join(c[i] for c in cols[2:])
                          for i in range(self.n)]
        return self._rows


def smooth3d(shape, rng, scale, offset=0.0):
    nx, ny, nz = shape
    bumps = [(rng.uniform(0, nx), rng.uniform(0, ny), rng.uniform(0, nz),
              rng.uniform(2, 6), rng.uniform(-3, 3) * scale) for _ in range(6)]
    out = []
    for x in range(nx):
        sx = math.sin(x / 7.0)
        for y in range(ny):
            cy = math.cos(y / 5.0)
            for z in range(nz):
                v = scale * sx * cy + z * scale / nz + offset
                for bx, by, bz, r, h in bumps:
                    d2 = ((x - bx) ** 2 + (y - by) ** 2 + (z - bz) ** 2) / (r * r)
                    if d2 < 9:
                        v += h * math.exp(-d2)
                out.append(v)
    return out


def sprinkle_specials(vals, shape, rng, boxes=True):
    """NaN boxes (partitions of only NaN), scattered NaN, +-Inf."""
    n = len(vals)
    if boxes and len(shape) == 3:
        for _ in range(2):
            x0, y0 = rng.randrange(shape[0] - 3), rng.randrange(shape[1] - 3)
            for x in range(x0, x0 + 3):
                for y in range(y0, y0 + 3):
                    for z in range(shape[2]):
                        vals[(x * shape[1] + y) * shape[2] + z] = NAN
    for _ in range(max(3, n // 700)):
        vals[rng.randrange(n)] = NAN
    for _ in range(max(2, n // 3000)):
        vals[rng.randrange(n)] = INF if rng.random() < 0.5 else -INF
    return vals


def make_datasets(rng):
    sets = []
    # 3-D, strong locality, four dtypes, clipped blocks, odd partition size.
    shape = [37, 29, 23]
    n = math.prod(shape)
    a = sprinkle_specials(smooth3d(shape, rng, 10.0), shape, rng)
    b = [float(struct.unpack("<f", struct.pack("<f", v))[0]) for v in
         sprinkle_specials(smooth3d(shape, rng, 100.0, 5.0), shape, rng, boxes=False)]
    c = [int(((i // 23) % 29) * 7 + (i // (23 * 29)) * 3) - 150 for i in range(n)]
    d = [((i // 500) * 1000003) % 2000 * (1 << 52) - (1 << 61) + (i % 7) for i in range(n)]
    sets.append(Dataset("loc3d", shape, [16, 10, 23], 200,
                        [("a", "float64", 0, a), ("b", "float32", 12, b),
                         ("c", "int32", 0, c), ("d", "int64", 8, d)]))
    # 1-D, no locality, every dtype, one storage block.
    n = 50001
    a = sprinkle_specials([rng.uniform(-1e6, 1e6) for _ in range(n)], [n], rng, boxes=False)
    b = sprinkle_specials([rng.gauss(0, 1) for _ in range(n)], [n], rng, boxes=False)
    c = [rng.randint(-2 ** 31, 2 ** 31 - 1) for _ in range(n)]
    d = [rng.randint(-2 ** 63, 2 ** 63 - 1) for _ in range(n)]
    c[0], c[1], d[0], d[1] = -2 ** 31, 2 ** 31 - 1, -2 ** 63, 2 ** 63 - 1
    sets.append(Dataset("rand1d", [n], None, 4000,
                        [("a", "float64", 0, a), ("b", "float32", 0, b),
                         ("c", "int32", 4, c), ("d", "int64", 0, d)]))
    # 1-D with locality in storage blocks, including a partly filled last block.
    n = 30011
    a = sprinkle_specials([math.sin(i / 300.0) * 50 + i / 1000.0 for i in range(n)], [n], rng,
                          boxes=False)
    b = [(i // 97) % 400 for i in range(n)]
    sets.append(Dataset("loc1d", [n], [4096], 512,
                        [("x", "float64", 0, a), ("y", "int32", 0, b)]))
    # 3-D, one million float64 elements with locality: selectivities down to 1e-6.
    shape = [100, 100, 100]
    big = smooth3d(shape, rng, 10.0)
    big = sprinkle_specials(big, shape, rng)
    t = [(i // 10000) * 3 + (i // 100) % 100 for i in range(len(big))]
    sets.append(Dataset("big", shape, [50, 50, 100], 4096,
                        [("temp", "float64", 0, big), ("t", "int32", 0, t)]))
    return sets


# ------------------------------------------------------------ predicates ---

class Pred:
    """A predicate tree rendered both as scipis text and as a Python expression."""

    def __init__(self, text, py):
        self.text = text
        self.py = py


def fmt_const(v, rng):
    if v != v:
        return rng.choice(["nan", "NaN", "NAN"])
    if v == INF:
        return rng.choice(["inf", "Infinity", "+inf"])
    if v == -INF:
        return rng.choice(["-inf", "-Infinity"])
    return repr(float(v))


def py_const(v):
    if v != v:
        return "NAN"
    if v == INF:
        return "INF"
    if v == -INF:
        return "(-INF)"
    return "(%r)" % float(v)


def quote_var(name, rng):
    return '"%s"' % name if rng.random() < 0.2 else name


class PredGen:
    def __init__(self, ds, rng):
        self.ds = ds
        self.rng = rng
        self.sorted = {}
        for name, _, _, _ in ds.vars:
            self.sorted[name] = sorted(v for v in ds.values[name] if v == v)

    def quantile_value(self, var, q):
        s = self.sorted[var]
        if not s:
            return 0.0
        return s[min(len(s) - 1, max(0, int(q * len(s))))]

    def constant(self, var):
        r = self.rng.random()
        if r < 0.07:
            return self.rng.choice([NAN, INF, -INF, 0.0])
        q = self.rng.choice([self.rng.random(), 10 ** self.rng.uniform(-6, 0),
                             1 - 10 ** self.rng.uniform(-6, 0)])
        v = self.quantile_value(var, q)
        if self.rng.random() < 0.3 and math.isfinite(v):
            v = v + self.rng.uniform(-1, 1) * (abs(v) * 1e-3 + 1e-9)
        return v

    def leaf(self, var=None):
        rng = self.rng
        var = var or rng.choice([v[0] for v in self.ds.vars])
        qv = quote_var(var, rng)
        kind = rng.random()
        if kind < 0.2:
            lo, hi = sorted([self.constant(var), self.constant(var)],
                            key=lambda x: (x != x, x))
            if rng.random() < 0.1:
                lo, hi = hi, lo
            neg = rng.random() < 0.25
            text = "%s %sBETWEEN %s AND %s" % (qv, "NOT " if neg else "", fmt_const(lo, rng),
                                               fmt_const(hi, rng))
            py = "(%s <= V_%s <= %s)" % (py_const(lo), var, py_const(hi))
            if neg:
                py = "(not %s)" % py
            return Pred(text, py)
        op = rng.choice(["<", "<=", ">", ">=", "=", "<>", "!=", "=="])
        c = self.constant(var)
        pyop = {"=": "==", "<>": "!=", "==": "==", "!=": "!="}.get(op, op)
        if rng.random() < 0.2:  # constant first
            flip = {"<": ">", "<=": ">=", ">": "<", ">=": "<="}.get(op, op)
            text = "%s %s %s" % (fmt_const(c, rng), flip, qv)
        else:
            text = "%s %s %s" % (qv, op, fmt_const(c, rng))
        return Pred(text, "(V_%s %s %s)" % (var, pyop, py_const(c)))

    def tree(self, depth=0):
        rng = self.rng
        r = rng.random()
        if depth >= 3 or r < 0.35:
            return self.leaf()
        if r < 0.45:
            c = self.tree(depth + 1)
            kw = rng.choice(["NOT", "not", "Not"])
            return Pred("%s (%s)" % (kw, c.text), "(not %s)" % c.py)
        a, b = self.tree(depth + 1), self.tree(depth + 1)
        if r < 0.75:
            kw = rng.choice(["AND", "and"])
            return Pred("(%s) %s (%s)" % (a.text, kw, b.text), "(%s and %s)" % (a.py, b.py))
        kw = rng.choice(["OR", "or"])
        return Pred("(%s) %s (%s)" % (a.text, kw, b.text), "(%s or %s)" % (a.py, b.py))

    def selectivity(self, var, s):
        """A leaf matching about a fraction s of the elements."""
        srt = self.sorted[var]
        n = len(srt)
        k = max(1, int(round(s * n)))
        thr = srt[n - k]
        if self.rng.random() < 0.5 or k >= n:
            return Pred("%s >= %s" % (var, fmt_const(thr, self.rng)), "(V_%s >= %s)" % (var, py_const(thr)))
        lo = srt[(n - k) // 2]
        hi = srt[(n - k) // 2 + k - 1]
        return Pred("%s BETWEEN %s AND %s" % (var, fmt_const(lo, self.rng), fmt_const(hi, self.rng)),
                    "(%s <= V_%s <= %s)" % (py_const(lo), var, py_const(hi)))


def oracle_hits(ds, pred):
    names = [v[0] for v in ds.vars]
    code = "[i for i, %s in zip(R, %s) if %s]" % (
        ", ".join("V_" + n for n in names),
        ", ".join("C_" + n for n in names), pred.py)
    env = {"R": range(ds.n), "NAN": NAN, "INF": INF}
    for n in names:
        env["C_" + n] = ds.values[n]
    return eval(code, env)


# ------------------------------------------------------------------- SQL ---

def sql_literal(s):
    return "'" + s.replace("'", "''") + "'"


class Psql:
    def __init__(self):
        self.calls = 0

    def run(self, sql):
        self.calls += 1
        p = subprocess.run(["psql", "-X", "-q", "-A", "-t", "-F", "|", "-v", "ON_ERROR_STOP=1"],
                           input=sql, capture_output=True, text=True)
        if p.returncode != 0:
            raise RuntimeError("psql failed: %s" % p.stderr.strip()[-2000:])
        return [l for l in p.stdout.split("\n") if l]


def json_dumps(o):
    import json
    return json.dumps(o)


def query_sql(ds, tag, text):
    nv = len(ds.vars)
    vals = " || ',' || ".join(
        "CASE WHEN vals[%d] = 'NaN' THEN 'nan' ELSE encode(float8send(vals[%d]), 'hex') END"
        % (k + 1, k + 1) for k in range(nv))
    return ("SELECT %s, count(*), coalesce(md5(string_agg(element || ':' || "
            "array_to_string(coords, ',') || ':' || %s, ';' ORDER BY element)), '') "
            "FROM scipis_block_query(%s, %s);\n" % (sql_literal(tag), vals,
                                                    sql_literal("t_" + ds.name), sql_literal(text)))


def count_sql(ds, tag, text):
    return ("SELECT %s, (SELECT hits FROM scipis_block_count(%s, %s, 'partition')), "
            "(SELECT hits FROM scipis_block_count(%s, %s, 'block')), "
            "(SELECT hits FROM scipis_block_count(%s, %s, 'none'));\n"
            % (sql_literal(tag), *([sql_literal("t_" + ds.name), sql_literal(text)] * 3)))


def ranges_sql(ds, tag, text, var, gap, maxread):
    return ("SELECT %s, coalesce(string_agg(byte_offset || '+' || byte_length, ',' "
            "ORDER BY byte_offset), '') FROM scipis_block_ranges(%s, %s, %s, %s) WHERE variable = %s;\n"
            % (sql_literal(tag), sql_literal("t_" + ds.name), sql_literal(text),
               "NULL" if gap is None else gap, "NULL" if maxread is None else maxread,
               sql_literal(var)))


# ------------------------------------------------------------------ main ---

class Result:
    def __init__(self):
        self.passed = 0
        self.failed = 0
        self.shown = 0

    def check(self, ok, what):
        if ok:
            self.passed += 1
        else:
            self.failed += 1
            if self.shown < 15:
                print("FAIL: " + what)
                self.shown += 1


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, default=20261122)
    ap.add_argument("--keep", action="store_true", help="keep the data directory")
    ap.add_argument("--predicates", type=int, default=110, help="random predicates per small dataset")
    args = ap.parse_args()
    t0 = time.time()
    rng = random.Random(args.seed)
    res = Result()
    psql = Psql()

    tmp = tempfile.mkdtemp(prefix="scipis_block_oracle_", dir="/tmp")
    os.chmod(tmp, 0o755)
    try:
        sets = make_datasets(rng)
        setup = ["SET client_min_messages = warning;", "CREATE EXTENSION IF NOT EXISTS scipis;"]
        for ds in sets:
            ds.write(tmp)
            setup.append("SELECT scipis_drop_block_index(%s, true);" % sql_literal("t_" + ds.name))
            setup.append("SELECT scipis_create_block_index(%s, %s, %s);" % (
                sql_literal("t_" + ds.name), sql_literal(json_dumps(ds.spec)),
                sql_literal(json_dumps(ds.options()))))
        setup.append("SELECT index_name, elements, blocks, partitions FROM scipis_block_stats('t_big');")
        print("setup:", psql.run("\n".join(setup) + "\n")[-1])
        print("data generated and indexed in %.1fs" % (time.time() - t0))

        total_preds = 0
        for ds in sets:
            gen = PredGen(ds, rng)
            preds = []
            if ds.name == "big":
                for s in [1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 0.1, 0.5, 1.0]:
                    preds.append(gen.selectivity("temp", s))
                    if s <= 1e-2:
                        preds.append(gen.selectivity("temp", s))
                for _ in range(14):
                    a = gen.selectivity("temp", 10 ** rng.uniform(-6, -1))
                    b = gen.leaf("t")
                    if rng.random() < 0.7:
                        preds.append(Pred("(%s) AND (%s)" % (a.text, b.text), "(%s and %s)" % (a.py, b.py)))
                    else:
                        preds.append(Pred("(%s) OR NOT (%s)" % (a.text, b.text),
                                          "(%s or not %s)" % (a.py, b.py)))
                for _ in range(8):
                    preds.append(gen.tree())
            else:
                preds = [gen.tree() for _ in range(args.predicates)]
            total_preds += len(preds)

            sql = []
            expect = {}
            for k, p in enumerate(preds):
                hits = oracle_hits(ds, p)
                expect[k] = (p, hits)
                sql.append(query_sql(ds, "q%d" % k, p.text))
                if ds.name != "big" or len(hits) < ds.n // 4:
                    sql.append(count_sql(ds, "c%d" % k, p.text))
                # Ranges must cover every hit, with and without coalescing limits.
                var = ds.vars[k % len(ds.vars)][0]
                gap, mr = [(None, None), (0, 4096), (100000, None), (None, 1)][k % 4]
                sql.append(ranges_sql(ds, "r%d" % k, p.text, var, gap, mr))
            t1 = time.time()
            lines = psql.run("".join(sql))
            t_sql = time.time() - t1
            rows = ds.rows()
            var_index = {v[0]: i for i, v in enumerate(ds.vars)}
            for line in lines:
                f = line.split("|")
                tag, k = f[0][0], int(f[0][1:])
                p, hits = expect[k]
                if tag == "q":
                    want_md5 = hashlib.md5(";".join(rows[i] for i in hits).encode()).hexdigest() \
                        if hits else ""
                    res.check(int(f[1]) == len(hits) and f[2] == want_md5,
                              "%s query %r: got %s hits (md5 %s), oracle %d (md5 %s)"
                              % (ds.name, p.text, f[1], f[2], len(hits), want_md5))
                elif tag == "c":
                    got = [int(x) for x in f[1:4]]
                    res.check(got == [len(hits)] * 3, "%s count %r: partition/block/none %s, oracle %d"
                              % (ds.name, p.text, got, len(hits)))
                elif tag == "r":
                    var = ds.vars[k % len(ds.vars)]
                    es = struct.calcsize(TYPECODE[var[1]])
                    spans = []
                    if f[1]:
                        for r in f[1].split(","):
                            o, l = r.split("+")
                            spans.append((int(o), int(o) + int(l)))
                    # Elements wholly inside some span, as a mask over file positions.
                    covered = bytearray(ds.n)
                    for so, eo in spans:
                        first = max(0, -(-(so - var[2]) // es))
                        last = min(ds.n, (eo - var[2]) // es)
                        if last > first:
                            covered[first:last] = b"\x01" * (last - first)
                    pos = ds.pos
                    missing = sum(1 for i in hits if not covered[pos[i]])
                    res.check(missing == 0, "%s ranges %r of %s: %d hits outside every range"
                              % (ds.name, p.text, var[0], missing))
            sel = [len(h) / ds.n for _, h in expect.values()]
            print("%-7s %6d elements, %3d predicates (selectivity %.1e..%.2f), sql %.1fs"
                  % (ds.name, ds.n, len(preds), min(x for x in sel if x > 0) if any(sel) else 0,
                     max(sel), t_sql))

        cleanup = ["SET client_min_messages = warning;"]
        for ds in sets:
            cleanup.append("SELECT scipis_drop_block_index(%s, true);" % sql_literal("t_" + ds.name))
        psql.run("\n".join(cleanup) + "\n")
        print("%d predicates, %d psql calls, %.1fs" % (total_preds, psql.calls, time.time() - t0))
    except Exception as e:  # report, never hide
        print("ERROR: %s" % e)
        res.failed += 1
    finally:
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)
    print("block: %d passed, %d failed" % (res.passed, res.failed))
    sys.exit(1 if res.failed else 0)


if __name__ == "__main__":
    main()
