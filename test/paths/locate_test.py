#!/usr/bin/env python3
"""scipis_locate against an oracle of its own: os.walk for the tree, and
Python's fnmatch.fnmatchcase on bytes (or a substring test when the pattern
has no *, ? or [), as docs/search-semantics.md ("Paths") defines patterns.

Run from the repository root against a server where `CREATE EXTENSION scipis`
works (PG* variables select it), e.g. `pg_virtualenv python3 test/paths/locate_test.py`.

A tree of files whose names hold the glob bytes themselves, brackets,
dashes, spaces and bytes >= 0x80 is indexed as one collection; then
several hundred random patterns (substrings of real paths, patterns shorter
than three bytes, globs with *, ?, [set], [!set], ranges, reversed ranges,
a ']' first in a set, an unclosed '[', bytes >= 0x80) go through
scipis_locate(bytea), a sample through scipis_locate(text) too, and each
answer (paths, in path order) must equal the oracle's. Prints failures,
then `locate: N passed, M failed`; exits 1 when M > 0.
"""

import fnmatch
import os
import random
import shutil
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "conformance"))

from conformance_test import parse_csv, run_psql, sql_str  # noqa: E402

COLLECTION = "locate_test"
NAMES = ["a", "b[1]", "c*d", "d\u00e9j\u00e0", "e?f", "x y", "g-h", "!bang", "]close", "[open",
         "z\u00fc", "q", "r2d2", "star*", "Mixed.Case", "dot.log", "tab-less"]


def make_tree(root, rng):
    paths = []
    for d in range(12):
        dname = rng.choice(NAMES) + str(d)
        os.makedirs(os.path.join(root, dname), mode=0o755, exist_ok=True)
        for f in range(rng.randint(5, 25)):
            name = "%s_%d%s" % (rng.choice(NAMES), f, rng.choice([".log", ".txt", "", ".[x]", ".out"]))
            p = os.path.join(root, dname, name)
            with open(p, "w") as fh:
                fh.write("token%d\n" % f)
            paths.append(os.fsencode(p))
    return sorted(set(paths))


def oracle(paths, pattern):
    if not any(c in pattern for c in b"*?["):
        return [p for p in paths if pattern in p]
    return [p for p in paths if fnmatch.fnmatchcase(p, pattern)]


def random_pattern(rng, paths):
    p = rng.choice(paths)
    kind = rng.randrange(6)
    if kind == 0:  # a substring, often shorter than three bytes
        n = rng.choice([0, 1, 2, 2, 3, 5, 8])
        i = rng.randrange(len(p) + 1)
        return p[i:i + n]
    if kind == 1:  # a path with some bytes replaced by ? and runs by *
        out = bytearray()
        i = 0
        while i < len(p):
            r = rng.random()
            if r < 0.1:
                out += b"?"
                i += 1
            elif r < 0.15:
                out += b"*"
                i += rng.randrange(1, 8)
            else:
                out.append(p[i])
                i += 1
        return bytes(out)
    if kind == 2:  # *substring*, with a set in it
        i = rng.randrange(len(p))
        frag = bytearray(p[i:i + rng.randint(1, 6)])
        if frag:
            j = rng.randrange(len(frag))
            c = frag[j]
            frag[j:j + 1] = rng.choice([b"[%c]" % c, b"[!%c]" % c, b"[%c-z]" % c, b"[z-%c]" % c,
                                        b"[]%c]" % c, b"[!]%c]" % c, b"[-%c]" % c])
        return b"*" + bytes(frag) + b"*"
    if kind == 3:  # sets of the glob bytes themselves, unclosed brackets
        return rng.choice([b"*[*]*", b"*[?]*", b"*[[]*", b"*[]]*", b"*[!a-z]*", b"*b[1*",
                           b"*[open*", b"*[*", b"*\xc3\xa9*", b"*\xc3?j*", b"*[\xc3]*",
                           b"*[\x80-\xff]*", b"*[!\x00-\x7f]*", b"*/?", b"*.[lt]??",
                           b"*[z-a]*", b"*[!z-a]*", b"*[a-]*", b"*[!]*", b"*[]*"])
    if kind == 4:  # a directory's files
        d = p[:p.rfind(b"/") + 1]
        return d + rng.choice([b"*", b"*.log", b"?*", b"*[0-9]*"])
    return rng.choice([b"*", b"**", b"", b"/", b"*log", b"?", b"*\xc3\xbc*"])


def bytea_literal(b):
    return "'\\x%s'::bytea" % b.hex()


def run_round(label, setup, paths, patterns, tmp):
    """Runs setup, then every pattern (bytea; the first 100 as text too) in
    one new backend; returns (passed, failed) against the oracle."""
    passed = failed = 0
    lines = list(setup)
    jobs = []
    for i, pat in enumerate(patterns):
        lines.append("SELECT %d, path FROM scipis_locate(%s, %s) UNION ALL SELECT %d, NULL;"
                     % (i, bytea_literal(pat), sql_str(COLLECTION), i))
        jobs.append((i, pat))
    # The text form, for patterns valid in the database encoding.
    text_jobs = []
    for i, pat in enumerate(patterns[:100]):
        try:
            s = pat.decode("utf-8")
        except UnicodeDecodeError:
            continue
        if "\x00" in s:
            continue
        q = 10000 + i
        lines.append("SELECT %d, path FROM scipis_locate(%s) WHERE collection = %s "
                     "UNION ALL SELECT %d, NULL;" % (q, sql_str(s), sql_str(COLLECTION), q))
        text_jobs.append((q, pat))
    rc, out, err, script = run_psql("\n".join(lines) + "\n", tmpdir=tmp)
    if rc != 0:
        print("%s: psql failed (exit %d): %s" % (label, rc, err.strip()[:2000]))
        failed += 1
    got = {}
    ended = set()
    for r in parse_csv(out):
        if len(r) != 2:
            continue
        q = int(r[0])
        if r[1] == "":
            ended.add(q)
        else:
            got.setdefault(q, []).append(os.fsencode(r[1]))
    for q, pat in jobs + text_jobs:
        want = oracle(paths, pat)
        have = got.get(q, [])
        if q not in ended or have != want:
            failed += 1
            if failed <= 10:
                print("%s: pattern %r: %d paths, oracle %d; first differences: %r" % (
                    label, pat, len(have), len(want), sorted(set(have) ^ set(want))[:3]))
        else:
            passed += 1
    return passed, failed


def change_tree(root, paths, rng):
    """New files in new directories and old ones, some files deleted: a
    refresh then adds segments the first build's path index does not cover
    and tombstones records it does."""
    for p in rng.sample(paths, 15):
        os.unlink(p)
    for d in range(3):
        dname = os.path.join(root, rng.choice(NAMES) + "new%d" % d)
        os.makedirs(dname, mode=0o755, exist_ok=True)
        for f in range(rng.randint(5, 15)):
            with open(os.path.join(dname, "%s_n%d.log" % (rng.choice(NAMES), f)), "w") as fh:
                fh.write("token%d\n" % f)
    old = sorted(set(os.fsencode(os.path.join(d, f)) for d, _, fs in os.walk(root) for f in fs))
    return old


def main():
    rng = random.Random(20261123)
    passed = failed = 0
    tmp = tempfile.mkdtemp(prefix="scipis-locate-")
    os.chmod(tmp, 0o755)
    try:
        root = os.path.join(tmp, "tree")
        os.mkdir(root, 0o755)
        paths = make_tree(root, rng)
        # After the build (one path index over its segments), after a
        # refresh (new segments beside it, tombstones in it), after a full
        # compaction (written again): each time a new backend.
        rounds = [("build", lambda: ["CREATE EXTENSION IF NOT EXISTS scipis;",
                                     "SELECT scipis_create_collection(%s, %s);" % (sql_str(COLLECTION), sql_str(root)),
                                     "SELECT files FROM scipis_index(%s);" % sql_str(COLLECTION)], 400),
                  ("refresh", lambda: ["SELECT files_added > 0 FROM scipis_refresh(%s);" % sql_str(COLLECTION)], 200),
                  ("compact", lambda: ["SELECT segments FROM scipis_compact(%s);" % sql_str(COLLECTION)], 200)]
        for label, setup, n in rounds:
            if label == "refresh":
                time.sleep(0.2)  # past the racy window of the build's files
                paths = change_tree(root, paths, rng)
            patterns = [random_pattern(rng, paths) for _ in range(n)]
            p, f = run_round(label, setup(), paths, patterns, tmp)
            passed += p
            failed += f
        rc, out, err, script = run_psql("SELECT scipis_drop_collection(%s);\n" % sql_str(COLLECTION), tmpdir=tmp)
        # Errors: a NULL pattern, an unknown collection.
        for sql, expect in [("SELECT * FROM scipis_locate(NULL::text)", "pattern must not be null"),
                            ("SELECT * FROM scipis_locate('x', 'no_such_collection')", "does not exist")]:
            rc, out, err, script = run_psql(sql + ";\n", tmpdir=tmp)
            if rc != 0 and expect in err:
                passed += 1
            else:
                failed += 1
                print("%s: expected an error with %r, got exit %d: %s" % (sql, expect, rc, err.strip()))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("locate: %d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
