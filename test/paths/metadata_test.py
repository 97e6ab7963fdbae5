#!/usr/bin/env python3
"""scipis_files against an oracle of its own: os.walk and os.lstat over the
tree, never anything scipis says, so that any way of answering predicates on
the view (a scan today, per-block min/max statistics tomorrow) is held to
the same answers.

Run from the repository root against a server where `CREATE EXTENSION scipis`
works (PG* variables select it), e.g. `pg_virtualenv python3 test/paths/metadata_test.py`.

A tree of about 2,600 regular files over nested directories is written in a
few batches with short pauses (so ctimes differ, as they naturally fall):
sizes from 0 bytes to 100 KiB, many of them equal; mtimes set with
os.utime(ns=...) over 1901 to 2446 (what ext4 keeps), clustered a
nanosecond either side of microsecond boundaries, before and after 1970,
on 2^63 - 1 ns and past it; several uids and gids (up to 2^32 - 2) when run
as root, the caller's own otherwise; modes with every read bit set (so the
server reads them whatever their owner) and varied write, execute, setuid,
setgid and sticky bits. Hard links, symbolic links to files and directories,
a dangling link and a FIFO sit among them: with the default options only
regular files are indexed and links are not followed (README, "Options" and
"Crawling"), so the oracle keeps the entries whose lstat is S_ISREG, and
lists a hard-linked file once per path. The tree is one collection; a
subdirectory of it is a second collection, so the same paths appear twice
and `collection` matters.

The oracle's values, per README ("A tour of the SQL API"): size;
mtime and ctime as timestamptz by the rule of docs/search-semantics.md
("File metadata": 64-bit nanoseconds, clamped, floored to the
microsecond; see to_us below); uid and gid as
unsigned 32-bit values in a bigint; mode as st_mode with the file type bits;
inode as a signed 64-bit value (two's complement above 2^63 - 1).

Checks: every row of the view equals the oracle's (one check per
collection); then, from a fixed seed (SCIPIS_METADATA_SEED overrides it;
printed with every failure), several hundred random predicates over size,
mtime, ctime, uid, gid, mode, inode, path and collection: 1 to 4 conditions
joined by AND, some OR and NOT, with <, <=, =, <>, >=, >, BETWEEN (SYMMETRIC,
NOT), IN and NOT IN (with a NULL in the list at times), IS [NOT] NULL and
comparisons with NULL, thresholds drawn from the real values (exact, +-1
unit, the microsecond either side of a nanosecond time) and extremes (0, -1,
2^31, 2^32, 2^63 - 1, -2^63, +-infinity), integer, numeric and text
literals, timestamps with UTC and other offsets, path prefixes through
`LIKE 'prefix%'` (escaped, and raw patterns with _ and % inside),
`starts_with`, `path >= p AND path < p'` and `=`/IN, and a few expressions
(mode & 511, size % 4096, extract(epoch ...), mtime < ctime). Each
`SELECT path FROM scipis_files WHERE <pred> ORDER BY path` must equal the
oracle's list exactly (three-valued logic included); besides those,
count(*), min/max/sum, ORDER BY size or mtime with LIMIT and OFFSET (with
and without a tie-breaker), an IN (subquery) on inode and prepared
statements run as generic plans. Paths compare bytewise: when the
database's collation is not C, comparisons and orderings on path say
COLLATE "C". Prints failures, then `metadata: N passed, M failed`; exits 1
when M > 0.
"""

import datetime
import os
import random
import re
import shutil
import stat
import sys
import tempfile
import time
from fractions import Fraction

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "conformance"))

from conformance_test import parse_csv, run_psql, sql_str  # noqa: E402

MAIN = "metadata_main"
SMALL = "metadata_small"
SEED = int(os.environ.get("SCIPIS_METADATA_SEED", "20261124"))
NFILES = 2600
MAX_SIZE = 100 * 1024
I64_MAX = (1 << 63) - 1
I64_MIN = -(1 << 63)
NS = 1000000000
INF = float("inf")
EPOCH = datetime.datetime(1970, 1, 1)

# How a file's nanoseconds become the microseconds of a timestamptz, as
# docs/search-semantics.md ("File metadata") says: kept as signed 64-bit
# nanoseconds (a time past 2262-04-11 or before 1677-09-21 clamped to that
# end), shown as the microsecond that holds the instant (floor), so that
# `mtime >= T` on the column is `mtime_ns >= 1000 * T` on the file.
def clamp_ns(ns):
    return max(-(1 << 63), min((1 << 63) - 1, ns))


def to_us(ns):
    return clamp_ns(ns) // 1000


def signed64(v):
    return v - (1 << 64) if v >= (1 << 63) else v


# --- the tree -----------------------------------------------------------------

DIR_WORDS = ["run", "data", "logs", "a_b", "p%c", "back\\slash", "donn\u00e9es", "x-y",
             "node", "out", "Z", "deep"]
EXTS = [".log", ".dat", ".out", "", ".txt", "_1", ".%", ".csv"]


def make_dirs(root, rng):
    dirs = [root]
    for i in range(70):
        parent = rng.choice(dirs) if len(dirs) < 4 or rng.random() < 0.8 else root
        if parent.count(os.sep) - root.count(os.sep) >= 4:
            parent = root
        d = os.path.join(parent, "%s%d" % (rng.choice(DIR_WORDS), i))
        os.mkdir(d, 0o755)
        os.chmod(d, 0o755)
        dirs.append(d)
    return dirs


def random_size(rng):
    r = rng.random()
    if r < 0.06:
        return 0
    if r < 0.30:
        return rng.choice([1, 2, 100, 512, 4095, 4096, 4097, 65536, MAX_SIZE])
    if r < 0.60:
        return rng.randint(1, 300)
    return min(MAX_SIZE, int(2 ** rng.uniform(0, 16.7)))


# Instants every file of the category shares: equal values.
SHARED_NS = [946684800 * NS, -NS // 2, 1234567890 * NS + 123456789, 0, -1,
             -86400 * 365 * NS + 999, 4102444800 * NS]
# Past 2^63 - 1 ns: 2262-04-12, 2286-11-20 (10^19 ns), 2400-01-01,
# 2446-05-10 22:38:55 (the last second ext4 keeps).
FAR_NS = [I64_MAX, I64_MAX - 1, I64_MAX - 999, (1 << 63) + 86400 * NS, 10 ** 19,
          13569465600 * NS + 5, 15032385535 * NS]
LOW_S = -(1 << 31)                      # 1901-12-13 20:45:52, ext4's first second
HIGH_S = I64_MAX // NS - 1              # 2262-04-11


def random_mtime(rng, i):
    """An mtime in ns for file i, or None to keep the one writing gave it."""
    if i < len(FAR_NS):
        return FAR_NS[i]
    r = rng.random()
    if r < 0.08:
        return None
    if r < 0.25:
        return rng.choice(SHARED_NS)
    if r < 0.32:
        return rng.choice([-1001, -1000, -999, -501, -500, -1, 0, 1, 500, 999, 1000, 1001])
    if r < 0.60:  # a nanosecond either side of a microsecond boundary
        us = rng.randint(LOW_S * 1000000, HIGH_S * 1000000)
        if rng.random() < 0.5:
            us = rng.randint(-100 * 365 * 86400 * 1000000, 0)
        return us * 1000 + rng.choice([-1, 0, 1, 999, -999, 500, -500])
    if r < 0.80:
        return rng.randint(LOW_S * NS, HIGH_S * NS)
    return int(time.time() * NS) - rng.randint(0, 10 * 365 * 86400 * NS)


def owners(rng):
    if os.geteuid() == 0:
        ids = [0, 1, 1000, 1001, 65534, (1 << 31) - 1, 1 << 31, (1 << 32) - 2]
        return [(rng.choice(ids), rng.choice(ids)) for _ in range(64)]
    groups = [os.getegid()] + [g for g in os.getgroups() if g != os.getegid()][:3]
    return [(os.geteuid(), rng.choice(groups)) for _ in range(64)]


def random_mode(rng):
    # Every read bit: the server reads the file whoever owns it (a process
    # whose uid or gid matches gets only the owner or group bits).
    return 0o444 | (rng.getrandbits(12) & 0o7333)


def make_tree(root, rng):
    """Writes the tree; returns the root of the second collection."""
    dirs = make_dirs(root, rng)
    small_root = dirs[1]
    content = b"".join(b"word%d alpha_%d beta\n" % (i, i % 97) for i in range(6000))[:MAX_SIZE]
    ids = owners(rng)
    files = []
    batches = 4
    per = NFILES // batches
    for b in range(batches):
        for i in range(b * per, NFILES if b == batches - 1 else (b + 1) * per):
            d = rng.choice(dirs) if i % 10 else small_root
            name = "f%04d%s%s" % (i, rng.choice(["", "_", "-x", "\u00e9"]), rng.choice(EXTS))
            p = os.path.join(d, name)
            size = random_size(rng)
            with open(p, "wb") as fh:
                fh.write(content[:size])
            if os.geteuid() == 0:
                os.chown(p, *rng.choice(ids))
            else:
                os.chown(p, -1, rng.choice(ids)[1])
            os.chmod(p, random_mode(rng))
            m = random_mtime(rng, i)
            if m is not None:
                os.utime(p, ns=(m, m))
            files.append(p)
        if b == batches - 1:
            # Hard links (same inode, two paths, one of them in the second
            # collection at times), symbolic links, a dangling link, a FIFO,
            # an empty directory.
            for k in range(12):
                src = rng.choice(files)
                os.link(src, os.path.join(rng.choice(dirs if k % 3 else [small_root]),
                                          "hard%d.lnk" % k))
            for k in range(6):
                os.symlink(rng.choice(files), os.path.join(rng.choice(dirs), "sym%d" % k))
            os.symlink(dirs[2], os.path.join(small_root, "symdir"))
            os.symlink(os.path.join(root, "nowhere"), os.path.join(root, "dangling"))
            os.mkfifo(os.path.join(dirs[3], "fifo"), 0o644)
            os.mkdir(os.path.join(root, "empty"), 0o755)
        time.sleep(0.06)
    return small_root


class Rec:
    __slots__ = ("coll", "path", "bpath", "size", "mtime_ns", "ctime_ns", "mtime", "ctime",
                 "uid", "gid", "mode", "inode")

    def __init__(self, coll, bpath, st):
        self.coll = coll
        self.bpath = bpath
        self.path = os.fsdecode(bpath)
        self.size = st.st_size
        self.mtime_ns = clamp_ns(st.st_mtime_ns)
        self.ctime_ns = clamp_ns(st.st_ctime_ns)
        self.mtime = to_us(st.st_mtime_ns)
        self.ctime = to_us(st.st_ctime_ns)
        self.uid = st.st_uid
        self.gid = st.st_gid
        self.mode = st.st_mode
        self.inode = signed64(st.st_ino)

    def key(self):
        return (self.bpath, self.coll)

    def row(self):
        return (self.coll, self.path, self.size, self.mtime, self.ctime, self.uid, self.gid,
                self.mode, self.inode)


def walk(coll, root):
    """The regular files under root, as lstat sees them (links not followed)."""
    out = []
    for dirpath, dirnames, filenames in os.walk(os.fsencode(root)):
        for n in filenames + dirnames:
            p = os.path.join(dirpath, n)
            st = os.lstat(p)
            if stat.S_ISREG(st.st_mode):
                out.append(Rec(coll, p, st))
    return out


# --- predicates: SQL text and three-valued evaluation from one tree ----------------

def ts_sql(us, offset_min=0):
    """A timestamptz literal for us microseconds since the epoch."""
    if us in (INF, -INF):
        return "'%sinfinity'::timestamptz" % ("-" if us < 0 else "")
    t = EPOCH + datetime.timedelta(microseconds=us + offset_min * 60000000)
    sign = "+" if offset_min >= 0 else "-"
    return "'%04d-%02d-%02d %02d:%02d:%02d.%06d%s%02d:%02d'::timestamptz" % (
        t.year, t.month, t.day, t.hour, t.minute, t.second, t.microsecond, sign,
        abs(offset_min) // 60, abs(offset_min) % 60)


class Val:
    """A literal: its SQL text and the value the oracle compares."""

    def __init__(self, sql, v):
        self.sql = sql
        self.v = v


NULL = Val("NULL", None)

INT_COLS = ["size", "uid", "gid", "mode", "inode"]
TS_COLS = ["mtime", "ctime"]
INT_EXTREMES = {
    "size": [0, -1, 1, MAX_SIZE, MAX_SIZE + 1, I64_MAX, I64_MIN],
    "uid": [0, -1, (1 << 31) - 1, 1 << 31, (1 << 32) - 2, (1 << 32) - 1, 1 << 32, I64_MAX],
    "gid": [0, -1, (1 << 31) - 1, 1 << 31, (1 << 32) - 2, (1 << 32) - 1, I64_MIN],
    "mode": [0, -1, 0o100000, 0o100644, 0o107777, (1 << 31) - 1, -(1 << 31), 65535],
    "inode": [0, 1, -1, I64_MAX, I64_MIN, 1 << 32],
}
TS_EXTREMES = [-INF, INF, 0, -1, 1, LOW_S * 1000000, I64_MAX // 1000, I64_MAX // 1000 + 1,
               I64_MAX // 1000 - 1, 15032385535 * 1000000, -2208988800 * 1000000]


def int_val(rng, v):
    r = rng.random()
    if r < 0.08:
        return Val("'%d'" % v, v)
    if r < 0.14:
        return Val("%d.0" % v, v)
    if r < 0.20:  # halfway to the next integer up: never equal, between two
        half = Fraction(2 * v + 1, 2)
        return Val("%s%d.5" % ("-" if half < 0 else "", abs(2 * v + 1) // 2), half)
    if r < 0.24 and -(1 << 50) < v < (1 << 50):
        return Val("%d::float8" % v, v)
    return Val(str(v), v)


def ts_val(rng, us):
    if us in (INF, -INF):
        return Val(ts_sql(us), us)
    off = rng.choice([0, 0, 0, 330, -480, 60 * 14, -60 * 12])
    return Val(ts_sql(us, off), us)


class Pick:
    def __init__(self, rng, recs):
        self.rng = rng
        self.recs = recs

    def rec(self):
        return self.rng.choice(self.recs)

    def int_value(self, col):
        rng = self.rng
        if rng.random() < 0.12:
            v = rng.choice(INT_EXTREMES[col])
        else:
            v = getattr(self.rec(), col) + rng.choice([0, 0, 0, -1, 1])
        return int_val(rng, v)

    def ts_value(self, col):
        rng = self.rng
        if rng.random() < 0.12:
            return ts_val(rng, rng.choice(TS_EXTREMES))
        ns = getattr(self.rec(), col + "_ns")
        r = rng.random()
        if r < 0.5:
            us = ns // 1000 + rng.choice([0, 0, -1, 1])
        elif r < 0.8:  # truncation toward zero, and a microsecond either side
            us = -((-ns) // 1000) if ns < 0 else ns // 1000
            us += rng.choice([0, -1, 1])
        else:
            us = (ns + 500) // 1000
        return ts_val(rng, us)

    def value(self, col):
        return self.ts_value(col) if col in TS_COLS else self.int_value(col)


OPS = {"<": lambda a, b: a < b, "<=": lambda a, b: a <= b, "=": lambda a, b: a == b,
       "<>": lambda a, b: a != b, ">=": lambda a, b: a >= b, ">": lambda a, b: a > b}


def and3(vals):
    vals = list(vals)
    if False in vals:
        return False
    return None if None in vals else True


def or3(vals):
    vals = list(vals)
    if True in vals:
        return True
    return None if None in vals else False


def not3(v):
    return None if v is None else not v


class Cmp:
    def __init__(self, lhs_sql, get, op, val):
        self.lhs_sql, self.get, self.op, self.val = lhs_sql, get, op, val

    def sql(self):
        return "%s %s %s" % (self.lhs_sql, self.op, self.val.sql)

    def eval(self, r):
        if self.val.v is None:
            return None
        return OPS[self.op](self.get(r), self.val.v)


class Between:
    def __init__(self, lhs_sql, get, lo, hi, symmetric, negated):
        self.lhs_sql, self.get, self.lo, self.hi = lhs_sql, get, lo, hi
        self.symmetric, self.negated = symmetric, negated

    def sql(self):
        return "%s %sBETWEEN %s%s AND %s" % (self.lhs_sql, "NOT " if self.negated else "",
                                             "SYMMETRIC " if self.symmetric else "",
                                             self.lo.sql, self.hi.sql)

    def eval(self, r):
        x = self.get(r)

        def btw(lo, hi):
            return and3([None if lo is None else x >= lo, None if hi is None else x <= hi])
        v = btw(self.lo.v, self.hi.v)
        if self.symmetric:
            v = or3([v, btw(self.hi.v, self.lo.v)])
        return not3(v) if self.negated else v


class In:
    def __init__(self, lhs_sql, get, vals, negated):
        self.lhs_sql, self.get, self.vals, self.negated = lhs_sql, get, vals, negated

    def sql(self):
        return "%s %sIN (%s)" % (self.lhs_sql, "NOT " if self.negated else "",
                                 ", ".join(v.sql for v in self.vals))

    def eval(self, r):
        x = self.get(r)
        v = or3([None if c.v is None else x == c.v for c in self.vals])
        return not3(v) if self.negated else v


class IsNull:
    def __init__(self, col, negated):
        self.col, self.negated = col, negated

    def sql(self):
        return "%s IS %sNULL" % (self.col, "NOT " if self.negated else "")

    def eval(self, r):
        return self.negated  # no column of the view is ever NULL


def like_regex(pattern, esc="\\"):
    out = []
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == esc:
            i += 1
            out.append(re.escape(pattern[i]))
        elif c == "%":
            out.append(".*")
        elif c == "_":
            out.append(".")
        else:
            out.append(re.escape(c))
        i += 1
    return re.compile("".join(out), re.S)


class Like:
    def __init__(self, pattern, negated, esc=None):
        self.pattern, self.negated, self.esc = pattern, negated, esc
        self.rx = like_regex(pattern, esc or "\\")

    def sql(self):
        s = "path %sLIKE %s" % ("NOT " if self.negated else "", sql_str(self.pattern))
        if self.esc:
            s += " ESCAPE %s" % sql_str(self.esc)
        return s

    def eval(self, r):
        return (self.rx.fullmatch(r.path) is None) == self.negated


class StartsWith:
    def __init__(self, prefix):
        self.prefix = prefix

    def sql(self):
        return "starts_with(path, %s)" % sql_str(self.prefix)

    def eval(self, r):
        return r.path.startswith(self.prefix)


class Expr:
    """A condition the oracle evaluates with a Python function of its own."""

    def __init__(self, sql, fn):
        self._sql, self.fn = sql, fn

    def sql(self):
        return self._sql

    def eval(self, r):
        return self.fn(r)


class Bool:
    def __init__(self, kind, parts):
        self.kind, self.parts = kind, parts

    def sql(self):
        if self.kind == "NOT":
            return "NOT (%s)" % self.parts[0].sql()
        return (" %s " % self.kind).join("(%s)" % p.sql() for p in self.parts)

    def eval(self, r):
        if self.kind == "NOT":
            return not3(self.parts[0].eval(r))
        # and3 / or3, stopping at the first False / True.
        stop = self.kind != "AND"
        unknown = False
        for p in self.parts:
            v = p.eval(r)
            if v is stop:
                return stop
            if v is None:
                unknown = True
        return None if unknown else not stop


def like_escape(s):
    return s.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def successor(s):
    """The least string greater than every string that starts with s."""
    while s and ord(s[-1]) >= 0x10FFFF:
        s = s[:-1]
    return s[:-1] + chr(ord(s[-1]) + 1) if s else None


class Gen:
    def __init__(self, rng, recs, coll_c):
        self.rng = rng
        self.recs = recs
        self.pick = Pick(rng, recs)
        self.pc = "path" + coll_c   # path under bytewise comparison

    def prefix(self):
        rng = self.rng
        p = self.pick.rec().path
        r = rng.random()
        if r < 0.5:  # a directory's files, any depth
            cut = [i + 1 for i, c in enumerate(p) if c == "/"]
            return p[:rng.choice(cut)]
        if r < 0.9:
            return p[:rng.randint(1, len(p))]
        return rng.choice(["", "/", "/nonexistent", p + "x", p[:-1] + "\u00ff"])

    def path_leaf(self):
        rng = self.rng
        pc = self.pc
        k = rng.randrange(9)
        if k == 0:
            return Like(like_escape(self.prefix()) + "%", rng.random() < 0.15)
        if k == 1:  # a pattern with wildcards inside: _ and % are not literal
            p = self.pick.rec().path
            out = []
            for c in p:
                x = rng.random()
                if x < 0.06:
                    out.append("_")
                elif x < 0.09:
                    out.append("%")
                else:
                    out.append(like_escape(c))
            pat = "".join(out)
            if rng.random() < 0.5:
                pat = pat[:rng.randint(1, len(pat))].rstrip("\\") + "%"
            return Like(pat, rng.random() < 0.15)
        if k == 2:  # another escape character
            pre = self.prefix()
            pat = pre.replace("!", "!!").replace("%", "!%").replace("_", "!_") + "%"
            return Like(pat, False, "!")
        if k == 3:
            return StartsWith(self.prefix())
        if k in (4, 5):
            pre = self.prefix()
            succ = successor(pre)
            lo = Cmp(pc, lambda r: r.bpath, ">=", Val(sql_str(pre), os.fsencode(pre)))
            if succ is None:
                return lo
            hi = Cmp(pc, lambda r: r.bpath, "<", Val(sql_str(succ), os.fsencode(succ)))
            return Bool("AND", [lo, hi])
        if k == 6:
            op = rng.choice(list(OPS))
            p = self.pick.rec().path
            if rng.random() < 0.3:
                p = p[:rng.randint(1, len(p))]
            return Cmp(pc, lambda r: r.bpath, op, Val(sql_str(p), os.fsencode(p)))
        if k == 7:
            vals = [self.pick.rec().path for _ in range(rng.randint(1, 4))]
            return In("path", lambda r: r.path, [Val(sql_str(v), v) for v in vals],
                      rng.random() < 0.2)
        p = self.pick.rec().path
        return Cmp("path", lambda r: r.path, "=", Val(sql_str(p), p))

    def coll_leaf(self):
        rng = self.rng
        c = rng.choice([MAIN, SMALL, SMALL, "no_such"])
        if rng.random() < 0.2:
            return In("collection", lambda r: r.coll,
                      [Val(sql_str(MAIN), MAIN), Val(sql_str(c), c)], rng.random() < 0.3)
        return Cmp("collection", lambda r: r.coll, rng.choice(["=", "=", "<>"]), Val(sql_str(c), c))

    def expr_leaf(self):
        rng = self.rng
        r0 = self.pick.rec()
        k = rng.randrange(6)
        if k == 0:
            perm = r0.mode & 0o777 if rng.random() < 0.7 else rng.getrandbits(9)
            return Expr("mode & 511 = %d" % perm, lambda r: (r.mode & 0o777) == perm)
        if k == 1:
            bit = rng.choice([0o4000, 0o2000, 0o1000, 0o002, 0o111, 0o100])
            return Expr("(mode & %d) <> 0" % bit, lambda r: (r.mode & bit) != 0)
        if k == 2:
            return Expr("(mode & 61440) = 32768", lambda r: stat.S_IFMT(r.mode) == 0o100000)
        if k == 3:
            m = rng.choice([2, 512, 4096])
            return Expr("size %% %d = 0" % m, lambda r: r.size % m == 0)
        if k == 4:
            col = rng.choice(TS_COLS)
            s = getattr(r0, col) // 1000000 + rng.choice([0, 1, -1])
            op = rng.choice(list(OPS))
            return Expr("extract(epoch FROM %s) %s %d" % (col, op, s),
                        lambda r: OPS[op](getattr(r, col), s * 1000000))
        op = rng.choice(["<", "=", ">", "<="])
        return Expr("mtime %s ctime" % op, lambda r: OPS[op](r.mtime, r.ctime))

    def value_leaf(self, col):
        rng = self.rng
        get = (lambda r: getattr(r, col))
        k = rng.random()
        if k < 0.5:
            op = rng.choice(list(OPS))
            val = NULL if rng.random() < 0.02 else self.pick.value(col)
            return Cmp(col, get, op, val)
        if k < 0.7:
            return Between(col, get, self.pick.value(col), self.pick.value(col),
                           rng.random() < 0.2, rng.random() < 0.2)
        if k < 0.92:
            vals = [self.pick.value(col) for _ in range(rng.randint(1, 5))]
            if rng.random() < 0.15:
                vals.append(NULL)
            return In(col, get, vals, rng.random() < 0.2)
        return IsNull(col, rng.random() < 0.5)

    def leaf(self):
        r = self.rng.random()
        if r < 0.18:
            return self.path_leaf()
        if r < 0.24:
            return self.coll_leaf()
        if r < 0.32:
            return self.expr_leaf()
        col = self.rng.choice(["size", "size", "mtime", "mtime", "ctime", "uid", "gid",
                               "mode", "inode"])
        return self.value_leaf(col)

    def predicate(self):
        rng = self.rng
        n = rng.choice([1, 1, 2, 2, 2, 3, 3, 4])
        parts = [self.leaf() for _ in range(n)]
        for i in range(n):
            if rng.random() < 0.1:
                parts[i] = Bool("NOT", [parts[i]])
        if n == 1:
            return parts[0]
        r = rng.random()
        if r < 0.6:
            e = Bool("AND", parts)
        elif r < 0.8:
            e = Bool("OR", parts)
        else:  # A AND (B OR C ...)
            e = Bool("AND", [parts[0], Bool("OR", parts[1:])]) if n > 2 else Bool("OR", parts)
        if rng.random() < 0.08:
            e = Bool("NOT", [e])
        return e


# --- running ------------------------------------------------------------------

class Checks:
    def __init__(self):
        self.passed = 0
        self.failed = 0
        self.printed = 0

    def ok(self):
        self.passed += 1

    def fail(self, msg):
        self.failed += 1
        self.printed += 1
        if self.printed <= 25:
            print("FAIL [seed %d] %s" % (SEED, msg.replace("\n", "\\n")), flush=True)
        elif self.printed == 26:
            print("(further failures not shown)", flush=True)


def run_queries(queries, tmp, prelude=""):
    """queries: [sql]; returns ({index: [csv rows]}, {index: error message})."""
    lines = ["SET TimeZone = 'Asia/Kathmandu';", prelude]
    for i, q in enumerate(queries):
        lines += ["\\echo @@Q %d" % i, q.rstrip(";") + ";",
                  "\\if :ERROR", "\\echo @@E :LAST_ERROR_MESSAGE", "\\endif"]
    rc, out, err, script = run_psql("\n".join(lines) + "\n", stop_on_error=False, tmpdir=tmp)
    blocks, errors = {}, {}
    cur = None
    for line in out.split("\n"):
        if line.startswith("@@Q "):
            cur = int(line[4:])
            blocks[cur] = []
        elif line.startswith("@@E "):
            errors[cur] = line[4:]
        elif cur is not None and line != "":
            blocks[cur].append(line)
    return {i: parse_csv("\n".join(b) + "\n") if b else [] for i, b in blocks.items()}, errors


def diff_msg(have, want):
    hs, ws = set(have), set(want)
    return "%d rows, oracle %d; only in scipis %r; only in the oracle %r" % (
        len(have), len(want), sorted(hs - ws)[:3], sorted(ws - hs)[:3])


def main():
    t0 = time.time()
    rng = random.Random(SEED)
    checks = Checks()
    tmp = tempfile.mkdtemp(prefix="scipis-metadata-", dir="/tmp")
    os.chmod(tmp, 0o755)
    created = False
    try:
        root = os.path.join(tmp, "tree")
        os.mkdir(root, 0o755)
        os.chmod(root, 0o755)
        small_root = make_tree(root, rng)

        def snapshot():
            return walk(MAIN, root) + walk(SMALL, small_root)
        recs = snapshot()
        setup = ["CREATE EXTENSION IF NOT EXISTS scipis;",
                 "SELECT scipis_create_collection(%s, %s);" % (sql_str(MAIN), sql_str(root)),
                 "SELECT scipis_create_collection(%s, %s);" % (sql_str(SMALL), sql_str(small_root)),
                 "SELECT files FROM scipis_index(%s);" % sql_str(MAIN),
                 "SELECT files FROM scipis_index(%s);" % sql_str(SMALL),
                 "SELECT datcollate IN ('C', 'POSIX') FROM pg_database "
                 "WHERE datname = current_database();",
                 "SELECT count(*) FROM scipis_collection WHERE name NOT IN (%s, %s);"
                 % (sql_str(MAIN), sql_str(SMALL))]
        rc, out, err, _ = run_psql("\n".join(setup) + "\n", tmpdir=tmp)
        created = True
        if rc != 0:
            checks.fail("setup failed (exit %d): %s" % (rc, err.strip()[:2000]))
            return finish(checks, t0)
        rows = parse_csv(out)
        coll_c = "" if rows[-2][0] == "t" else ' COLLATE "C"'
        others = int(rows[-1][0])
        if [r.row() for r in sorted(recs, key=Rec.key)] != \
                [r.row() for r in sorted(snapshot(), key=Rec.key)]:
            checks.fail("the tree changed while it was indexed: the oracle is not valid")
        recs.sort(key=Rec.key)
        nmain = sum(1 for r in recs if r.coll == MAIN)
        print("[%5.1fs] %d files in %s, %d in %s; %d distinct mtimes, %d ctimes, %d sizes" % (
            time.time() - t0, nmain, MAIN, len(recs) - nmain, SMALL,
            len({r.mtime for r in recs}), len({r.ctime for r in recs}),
            len({r.size for r in recs})), file=sys.stderr, flush=True)
        # Another collection on this server would be in the view: scope to ours.
        scope = "" if others == 0 else "collection IN (%s, %s) AND " % (sql_str(MAIN), sql_str(SMALL))
        order = "path%s" % coll_c

        # 1. Every row of the view, exactly.
        us_sql = "(extract(epoch FROM %s) * 1000000)::bigint"
        queries = ["SELECT collection, path, size, %s, %s, uid, gid, mode, inode FROM scipis_files "
                   "WHERE %scollection = %s ORDER BY %s" % (us_sql % "mtime", us_sql % "ctime", scope,
                                                             sql_str(c), order)
                   for c in (MAIN, SMALL)]
        kinds = [("rows", c) for c in (MAIN, SMALL)]

        # 2. Random predicates: paths in path order.
        gen = Gen(rng, recs, coll_c)
        preds = [gen.predicate() for _ in range(650)]
        for p in preds:
            queries.append("SELECT path FROM scipis_files WHERE %s(%s) ORDER BY %s" % (scope, p.sql(), order))
            kinds.append(("paths", p))
        # 3. count(*) and aggregates.
        for p in preds[:150]:
            queries.append("SELECT count(*) FROM scipis_files WHERE %s(%s)" % (scope, p.sql()))
            kinds.append(("count", p))
        agg = ("count(*), min(size), max(size), sum(size), %s, %s, min(inode), max(inode), "
               "min(uid), max(gid), min(%s), max(%s)" % (
                   us_sql % "min(mtime)", us_sql % "max(mtime)", order, order))
        for _ in range(80):
            p = gen.predicate()
            queries.append("SELECT %s FROM scipis_files WHERE %s(%s)" % (agg, scope, p.sql()))
            kinds.append(("agg", p))
        # 4. ORDER BY ... LIMIT, with a tie-breaker (exact) and without
        # (the same sort keys, each row a match).
        for i in range(60):
            p = gen.predicate()
            k = rng.choice([1, 2, 5, 10, 50, 400])
            off = rng.choice([0, 0, 3])
            if i % 3 == 2:
                col = rng.choice(["size", "mtime"])
                desc = rng.random() < 0.5
                q = ("SELECT collection, path, size, %s FROM scipis_files WHERE %s(%s) "
                     "ORDER BY %s%s LIMIT %d OFFSET %d" % (us_sql % "mtime", scope, p.sql(), col,
                                                           " DESC" if desc else "", k, off))
                kinds.append(("topn", (p, col, desc, k, off)))
            else:
                col = rng.choice(["size", "size", "mtime", "inode"])
                desc = rng.random() < 0.5
                q = ("SELECT collection, path, size, %s FROM scipis_files WHERE %s(%s) "
                     "ORDER BY %s%s, %s, collection LIMIT %d OFFSET %d" % (
                         us_sql % "mtime", scope, p.sql(), col, " DESC" if desc else "", order,
                         k, off))
                kinds.append(("topn_exact", (p, col, desc, k, off)))
            queries.append(q)
        # 5. Paths of the files sharing an inode with the matches of another
        # predicate (hard links).
        for _ in range(20):
            p, p2 = gen.predicate(), gen.predicate()
            queries.append("SELECT path FROM scipis_files WHERE %s(%s) AND inode IN "
                           "(SELECT inode FROM scipis_files WHERE %s) ORDER BY %s" % (
                               scope, p.sql(), p2.sql(), order))
            kinds.append(("inode_in", (p, p2)))

        res, errors = run_queries(queries, tmp)
        # 6. Prepared statements as generic plans (parameters, not constants).
        prep = ["SET plan_cache_mode = force_generic_plan;",
                "PREPARE m(timestamptz, timestamptz, bigint) AS SELECT path FROM scipis_files "
                "WHERE %smtime >= $1 AND mtime < $2 AND size <= $3 ORDER BY %s;" % (scope, order),
                "PREPARE c(bigint, bigint, text) AS SELECT count(*) FROM scipis_files "
                "WHERE %s(uid = $1 OR gid = $2) AND starts_with(path, $3);" % scope]
        pqueries, pkinds = [], []
        for _ in range(40):
            a, b = gen.pick.ts_value("mtime"), gen.pick.ts_value("mtime")
            s = gen.pick.int_value("size")
            s = Val(str(int(s.v)), int(s.v))
            pqueries.append("EXECUTE m(%s, %s, %s)" % (a.sql, b.sql, s.sql))
            pkinds.append(("paths", Bool("AND", [Cmp("", lambda r: r.mtime, ">=", a),
                                                 Cmp("", lambda r: r.mtime, "<", b),
                                                 Cmp("", lambda r: r.size, "<=", s)])))
        for _ in range(20):
            u, g = gen.pick.int_value("uid"), gen.pick.int_value("gid")
            u, g = Val(str(int(u.v)), int(u.v)), Val(str(int(g.v)), int(g.v))
            pre = gen.prefix()
            pqueries.append("EXECUTE c(%s, %s, %s)" % (u.sql, g.sql, sql_str(pre)))
            pkinds.append(("count", Bool("AND", [Bool("OR", [Cmp("", lambda r: r.uid, "=", u),
                                                             Cmp("", lambda r: r.gid, "=", g)]),
                                                 StartsWith(pre)])))
        pres, perrors = run_queries(pqueries, tmp, "\n".join(prep))
        print("[%5.1fs] %d queries run" % (time.time() - t0, len(queries) + len(pqueries)),
              file=sys.stderr, flush=True)

        for (kinds_, res_, errors_, qs) in ((kinds, res, errors, queries),
                                            (pkinds, pres, perrors, pqueries)):
            for i, (kind, arg) in enumerate(kinds_):
                q = qs[i]
                if i not in res_ or i in errors_:
                    checks.fail("%s: %s" % (q, errors_.get(i, "no answer")))
                    continue
                problem = judge(kind, arg, res_[i], recs)
                if problem:
                    checks.fail("%s: %s" % (q, problem))
                else:
                    checks.ok()
    finally:
        if created:
            run_psql("SELECT scipis_drop_collection(%s);\nSELECT scipis_drop_collection(%s);\n"
                     % (sql_str(MAIN), sql_str(SMALL)), stop_on_error=False, tmpdir=tmp)
        shutil.rmtree(tmp, ignore_errors=True)
    return finish(checks, t0)


_matches = {}


def matches(p, recs):
    if id(p) not in _matches:
        _matches[id(p)] = (p, [r for r in recs if p.eval(r) is True])
    return list(_matches[id(p)][1])


def judge(kind, arg, rows, recs):
    """Returns a description of what differs from the oracle, or None."""
    if kind == "rows":
        want = [tuple(str(x) for x in r.row()) for r in recs if r.coll == arg]
        have = [tuple(r) for r in rows]
        if have == want:
            return None
        # Grouped by what differs, with the first example of each group.
        groups = {}
        byp = {r.path: r for r in recs if r.coll == arg}
        for h in have:
            r = byp.get(h[1])
            if r is None:
                groups.setdefault("not a regular file of the tree", []).append(h[1])
                continue
            w = tuple(str(x) for x in r.row())
            if tuple(h) == w:
                continue
            cols = [n for n, a, b in zip(("collection", "path", "size", "mtime", "ctime", "uid",
                                          "gid", "mode", "inode"), h, w) if a != b]
            what = "differs in " + ", ".join(cols)
            if cols == ["mtime"] and abs(int(h[3]) - int(w[3])) == 1:
                what += " by 1 us"
            groups.setdefault(what, []).append(
                "%s: scipis (size, mtime_us, ctime_us, uid, gid, mode, inode) %s, lstat %s "
                "(mtime_ns %d, ctime_ns %d)" % (h[1], tuple(h[2:]), w[2:], r.mtime_ns, r.ctime_ns))
        hp = {h[1] for h in have}
        missing = [p for p in sorted(byp) if p not in hp]
        if missing:
            groups["missing"] = missing
        if not groups:
            groups["same rows, another order"] = [""]
        return "%d rows, oracle %d; %s" % (len(have), len(want), "; ".join(
            "%d %s, first: %s" % (len(v), k, v[0]) for k, v in sorted(groups.items())))
    if kind == "paths":
        want = [r.path for r in matches(arg, recs)]
        have = [r[0] for r in rows]
        return None if have == want else diff_msg(have, want)
    if kind == "count":
        want = len(matches(arg, recs))
        have = int(rows[0][0]) if rows else None
        return None if have == want else "count %s, oracle %d" % (have, want)
    if kind == "agg":
        m = matches(arg, recs)
        if m:
            bp = [r.bpath for r in m]
            want = [len(m), min(r.size for r in m), max(r.size for r in m), sum(r.size for r in m),
                    min(r.mtime for r in m), max(r.mtime for r in m), min(r.inode for r in m),
                    max(r.inode for r in m), min(r.uid for r in m), max(r.gid for r in m),
                    os.fsdecode(min(bp)), os.fsdecode(max(bp))]
            want = [str(x) for x in want]
        else:
            want = ["0"] + [""] * 11
        have = rows[0] if rows else None
        return None if have == want else "(count, min/max/sum size, min/max mtime, min/max " \
            "inode, min uid, max gid, min/max path) %s, oracle %s" % (have, want)
    if kind == "inode_in":
        p, p2 = arg
        inodes = {r.inode for r in matches(p2, recs)}
        want = [r.path for r in recs if p.eval(r) is True and r.inode in inodes]
        have = [r[0] for r in rows]
        return None if have == want else diff_msg(have, want)
    p, col, desc, k, off = arg
    m = matches(p, recs)
    if kind == "topn_exact":
        # Python's sort is stable: by (path, collection) first, then the key.
        m.sort(key=lambda r: getattr(r, col), reverse=desc)
        want = [(r.coll, r.path, str(r.size), str(r.mtime)) for r in m[off:off + k]]
        have = [tuple(r) for r in rows]
        return None if have == want else diff_msg(have, want)
    keys = sorted((getattr(r, col) for r in m), reverse=desc)[off:off + k]
    have_keys = [int(r[2] if col == "size" else r[3]) for r in rows]
    if have_keys != keys:
        return "sort keys %s, oracle %s" % (have_keys[:8], keys[:8])
    ok = {(r.coll, r.path, str(r.size), str(r.mtime)) for r in m}
    bad = [tuple(r) for r in rows if tuple(r) not in ok]
    if bad or len({(r[0], r[1]) for r in rows}) != len(rows):
        return "rows that are no match, or twice: %s" % bad[:3]
    return None


def finish(checks, t0):
    print("[%5.1fs] done" % (time.time() - t0), file=sys.stderr, flush=True)
    print("metadata: %d passed, %d failed" % (checks.passed, checks.failed))
    return 1 if checks.failed else 0


if __name__ == "__main__":
    sys.exit(main())
