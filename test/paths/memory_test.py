#!/usr/bin/env python3
"""A backend's memory for searching does not grow with the number of files.

Run from the repository root against a server where `CREATE EXTENSION scipis`
works (PG* variables select it), e.g. `pg_virtualenv python3 test/paths/memory_test.py`.

Two collections are indexed: one of 1,000 files and one of 1,000,000 paths
(hard links to 1,000 small files, so that the tree costs inodes' worth of
directory entries and no data blocks). In a new backend each, the same
queries run: top-10 searches of a frequent and a rare term under both
rankings, every match of a rare term, a path lookup, a pattern, and
conditions on scipis_files. Then scipis_backend_memory() gives the engine's
own accounting of what the backend holds for the collection (heap bytes:
every structure it keeps between statements; mapped bytes: segment files
shared through the page cache). The checks: the 1,000,000-path collection's
heap stays under a fixed bound (KEEP_BOUND) and within a small margin of
the 1,000-file one's (the same structures per segment and split, nothing
per file); the answers are right (the counts the tree was built with). No
resident-size figure is used: what the engine accounts is what is checked.
Prints failures, then `memory: N passed, M failed`; exits 1 when M > 0.
"""

import os
import shutil
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "conformance"))

from conformance_test import parse_csv, run_psql  # noqa: E402

DISTINCT = 1000
BIG = 1000000
PER_DIR = 1000
# What a collection may hold in a backend whatever its size: a few KiB per
# segment and dictionary split opened (decoder tables, group offsets of
# the splits' terms: the vocabulary here is about 2,000 terms).
KEEP_BOUND = 4 << 20


def make_sources(root):
    os.makedirs(root)
    for i in range(DISTINCT):
        with open(os.path.join(root, "f%04d.log" % i), "w") as f:
            f.write("job step common %s rare%04d\n" % ("even" if i % 2 == 0 else "odd", i))
    return [os.path.join(root, "f%04d.log" % i) for i in range(DISTINCT)]


def make_links(root, sources, n):
    os.makedirs(root)
    for d in range(n // PER_DIR):
        sub = os.path.join(root, "d%04d" % d)
        os.mkdir(sub)
        for j in range(PER_DIR):
            os.link(sources[(d * PER_DIR + j) % DISTINCT], os.path.join(sub, "o%04d.log" % j))


def probe(coll, root):
    """Queries in a new backend, then its accounting; returns the rows."""
    sql = """
SELECT 'n', count(*) FROM scipis_search('common', '{c}', k => 10);
SELECT 'n', count(*) FROM scipis_search('common rare0007', '{c}', k => 10, ranking => 'bm25');
SELECT 'n', count(*) FROM scipis_search('rare0007', '{c}', k => NULL);
SELECT 'n', count(*) FROM scipis_search('even step', '{c}', k => 5, match => 'all');
SELECT 'n', count(*) FROM scipis_lookup('{root}/d0000/o0003.log');
SELECT 'n', count(*) FROM scipis_locate('/o0999.log', '{c}');
SELECT 'n', count(*) FROM scipis_files WHERE collection = '{c}' AND path LIKE '{root}/d0001/%';
SELECT 'n', count(*) FROM scipis_files WHERE collection = '{c}' AND size > 1000;
SELECT 'm', heap_bytes, mapped_bytes FROM scipis_backend_memory() WHERE collection = '{c}';
""".format(c=coll, root=root)
    rc, out, err, _ = run_psql(sql)
    if rc != 0:
        raise SystemExit("probe of %s failed: %s" % (coll, err))
    return parse_csv(out)


def main():
    passed = failed = 0

    def check(ok, what):
        nonlocal passed, failed
        if ok:
            passed += 1
        else:
            failed += 1
            print("FAIL: " + what)

    tmp = tempfile.mkdtemp(prefix="scipis-memory-", dir="/var/tmp")
    os.chmod(tmp, 0o755)
    try:
        t0 = time.time()
        sources = make_sources(os.path.join(tmp, "src"))
        small, big = os.path.join(tmp, "small"), os.path.join(tmp, "big")
        make_links(small, sources, DISTINCT)
        make_links(big, sources, BIG)
        for d, _, files in os.walk(tmp):
            os.chmod(d, 0o755)
        for s in sources:
            os.chmod(s, 0o644)
        print("[%5.1fs] trees made" % (time.time() - t0), flush=True)
        rc, out, err, _ = run_psql("""
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS scipis;
SELECT scipis_create_collection('mem_small', '{s}');
SELECT scipis_create_collection('mem_big', '{b}');
SELECT files FROM scipis_index('mem_small');
SELECT files FROM scipis_index('mem_big');
""".format(s=small, b=big))
        if rc != 0:
            raise SystemExit("indexing failed: " + err)
        counts = [int(r[0]) for r in parse_csv(out) if r]
        check(counts == [DISTINCT, BIG], "files indexed %r" % counts)
        print("[%5.1fs] indexed" % (time.time() - t0), flush=True)

        res = {}
        for coll, root, n in (("mem_small", small, DISTINCT), ("mem_big", big, BIG)):
            rows = probe(coll, root)
            got = [int(r[1]) for r in rows if r[0] == "n"]
            copies = n // DISTINCT
            # rare0007 is in one source file: `copies` paths; one path per
            # lookup; /o0999.log ends one path per directory; the second
            # directory's paths; no file is over 1000 bytes.
            want = [10, 10, copies, 5, 1, n // PER_DIR, PER_DIR if n > PER_DIR else 0, 0]
            check(got == want, "%s answers %r, expected %r" % (coll, got, want))
            mem = [r for r in rows if r[0] == "m"]
            check(len(mem) == 1, "%s: scipis_backend_memory() rows %r" % (coll, mem))
            res[coll] = (int(mem[0][1]), int(mem[0][2])) if mem else (0, 0)
        heap_small, heap_big = res["mem_small"][0], res["mem_big"][0]
        print("heap bytes: %d (1,000 files), %d (1,000,000 paths); mapped: %d, %d" % (
            heap_small, heap_big, res["mem_small"][1], res["mem_big"][1]))
        check(0 < heap_big < KEEP_BOUND, "heap %d for 1,000,000 paths, bound %d" % (heap_big, KEEP_BOUND))
        # Per segment and split, not per file: a thousand times the files
        # may add segments (each flush), each a few KiB.
        check(heap_big < heap_small + (1 << 20),
              "heap grew from %d to %d bytes with the number of files" % (heap_small, heap_big))
        check(res["mem_big"][1] > res["mem_small"][1], "the larger collection maps more")
    finally:
        run_psql("SELECT scipis_drop_collection('mem_small'); SELECT scipis_drop_collection('mem_big');\n")
        shutil.rmtree(tmp, ignore_errors=True)
    print("memory: %d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
