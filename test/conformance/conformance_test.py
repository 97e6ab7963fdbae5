#!/usr/bin/env python3
"""Conformance test: scipis search results against the brute-force oracle.

Run from the repository root, against a server where `CREATE EXTENSION scipis`
works (PG* environment variables select it), for example:

    pg_virtualenv python3 test/conformance/conformance_test.py

What it does:
  * builds oracles (oracle.py) for the loghub sample shipped in data/loghub-2k
    (used in place, as the collection root) and for two skewed synthetic
    corpora (gen_corpus.py: 3000 files / 23 MB, and 400 files / 0.35 MB for
    the minimum-buffer variants) generated into a fresh directory under /tmp
    that the server's OS user can read (removed at the end);
  * creates and indexes collections over them: default options, the
    "whitespace" tokenizer, and tuning variants (index depth, split factor,
    tiny index buffers forcing many flushes, tiny blocks, thread counts);
  * checks the scipis_index() totals and the scipis_files view (size and
    token count of every file) against the oracle;
  * runs several hundred searches (single terms across the whole range of
    document frequencies, 2-4 term queries with match any/all, both rankings,
    k = 1, 10, NULL and the defaults, repeated terms, mixed case, absent
    terms, over-long terms, empty queries which must fail) and compares every
    result list with the oracle's; the variants run a subset of the queries;
  * prints one line per failed check, then `conformance: N passed, M failed`,
    drops its collections, and exits 1 when M > 0 or on any error.

All SQL goes through a handful of `psql` processes (one per collection for
create + index, one for all the searches, one for the drops). Progress goes
to stderr, failures and the summary to stdout. Under pg_virtualenv as root,
`pg_virtualenv -t` avoids clashing with an existing "regress" cluster.
"""

import csv
import io
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import gen_corpus  # noqa: E402
import oracle      # noqa: E402
from oracle import path_key  # noqa: E402

REPO = os.path.dirname(os.path.dirname(HERE))
# The sample `make install` puts beside the extension's files, which the
# server's OS user can read wherever this checkout lives.
PG_CONFIG = os.environ.get("PG_CONFIG", "/usr/lib/postgresql/15/bin/pg_config")
LOGHUB = os.environ.get("SCIPIS_SAMPLE") or os.path.join(
    subprocess.run([PG_CONFIG, "--sharedir"], check=True, capture_output=True,
                   text=True).stdout.strip(), "scipis", "loghub-2k")
PREFIX = "conformance_"
SCORE_RTOL = 1e-9     # scores must agree with the oracle within this (relative)
TIE_RTOL = 1e-12      # oracle scores this close are treated as ties

# Index buffers at their minimum: every few dozen KiB of input is flushed into
# a segment. These variants run on the "tiny" corpus (about 0.35 MB, including
# one 0.13 MB file), so that dozens of flushes happen without writing (and
# later deleting) tens of thousands of segment files, as a bigger corpus would.
TINY_BUFFERS = {"tfidf_index_size": 65536, "path_index_size": 65536, "block_size": 512}

# Tuning variants: (collection suffix, corpus, options, number of queries).
# Every variant must give exactly the oracle's results.
VARIANTS = [
    ("skew_depth1", "skew", {"index_depth": 1}, 40),
    ("skew_depth2", "skew", {"index_depth": 2}, 40),
    ("skew_depth8", "skew", {"index_depth": 8}, 40),
    ("skew_split1", "skew", {"split_factor": 1}, 40),
    ("skew_split16", "skew", {"split_factor": 16}, 40),
    ("skew_split64", "skew", {"split_factor": 64}, 40),
    ("skew_threads1", "skew", {"reader_threads": 1, "indexer_threads": 1,
                               "writer_threads": 1}, 40),
    ("skew_threads3", "skew", {"block_size": 512, "reader_threads": 3, "indexer_threads": 3,
                               "writer_threads": 3}, 40),
    ("skew_ws", "skew_ws", {"tokenizer": "whitespace"}, 40),
    ("tiny_buffers_t1", "tiny", dict(TINY_BUFFERS, reader_threads=1, indexer_threads=1,
                                     writer_threads=1), 80),
    ("tiny_buffers_t3", "tiny", dict(TINY_BUFFERS, reader_threads=3, indexer_threads=3,
                                     writer_threads=3, index_depth=8, split_factor=64), 80),
    ("tiny_buffers_d1", "tiny", dict(TINY_BUFFERS, index_depth=1, split_factor=1), 80),
    ("tiny_ws_buffers", "tiny_ws", dict(TINY_BUFFERS, tokenizer="whitespace", index_depth=2,
                                        split_factor=16, indexer_threads=3), 80),
    ("loghub_tuned", "loghub", {"block_size": 512, "index_depth": 2, "split_factor": 16,
                                "reader_threads": 3, "indexer_threads": 3,
                                "writer_threads": 1}, 40),
]


# --- psql ---------------------------------------------------------------------

class PsqlError(Exception):
    pass


def sql_str(s):
    """A standard SQL string literal (standard_conforming_strings is on)."""
    if "\x00" in s:
        raise ValueError("NUL in SQL string")
    return "'" + s.replace("'", "''") + "'"


def json_obj(d):
    import json
    return json.dumps(d, sort_keys=True)


def run_psql(script, stop_on_error=True, header=False, tmpdir=None):
    """Run a script in one psql process; returns (rc, stdout, stderr, script path)."""
    fd, path = tempfile.mkstemp(suffix=".sql", dir=tmpdir)
    with os.fdopen(fd, "wb") as f:
        f.write(script.encode("utf-8", "surrogateescape"))
    cmd = ["psql", "-X", "-q", "-v", "ON_ERROR_STOP=%d" % (1 if stop_on_error else 0),
           "--csv", "-f", path]
    if not header:
        cmd.insert(1, "-t")
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out = p.stdout.decode("utf-8", "surrogateescape")
    err = p.stderr.decode("utf-8", "surrogateescape")
    return p.returncode, out, err, path


def parse_csv(text):
    return list(csv.reader(io.StringIO(text)))


# --- checks -------------------------------------------------------------------

class Results:
    def __init__(self):
        self.passed = 0
        self.failed = 0

    def ok(self):
        self.passed += 1

    def fail(self, msg):
        self.failed += 1
        print("FAIL " + msg.replace("\n", "\\n"), flush=True)


def close(a, b, rtol):
    return abs(a - b) <= rtol * max(abs(a), abs(b))


def tie_groups(expected):
    """Split the oracle's ordered list into groups of (numerically) tied scores.

    Returns a list of (start, end) index ranges. Consecutive results whose
    oracle scores are within TIE_RTOL (relative) of each other form a group.
    """
    groups = []
    start = 0
    for i in range(1, len(expected) + 1):
        if i == len(expected) or not close(expected[i - 1][1], expected[i][1], TIE_RTOL):
            groups.append((start, i))
            start = i
    return groups


def compare(expected, k, got):
    """Compare one result list with the oracle; returns a list of problems.

    expected: every match per the oracle, [(path, score)] best first.
    got:      the engine's rows, [(path, score)] in the order returned.

    How the ORDER is compared: two documents with mathematically equal scores
    may get scores differing in the last bits of a double, depending on how
    each side evaluates the formula, so an exact comparison of the order
    would be fragile. The oracle's list is therefore cut into tie groups
    (consecutive scores within TIE_RTOL = 1e-12 relative, see tie_groups);
    within a group the engine must return the same SET of paths (compared
    sorted bytewise), in any order. When the k cut falls inside a tie group,
    any paths of that group are accepted in the remaining positions.
    Independently, the engine's own rows must be in its own stated order:
    score descending and, for bit-identical scores, path ascending (bytewise),
    with no path twice. Every returned score must be within SCORE_RTOL = 1e-9
    (relative) of the oracle's score for that path.
    """
    problems = []
    n = len(expected) if k is None else min(k, len(expected))
    if len(got) != n:
        problems.append("expected %d rows, got %d" % (n, len(got)))
    exp_score = dict(expected)
    seen = set()
    for i, (p, s) in enumerate(got):
        if p in seen:
            problems.append("path %s returned twice" % p)
        seen.add(p)
        if p not in exp_score:
            problems.append("rank %d: %s is not a match per the oracle (score %r)" % (i + 1, p, s))
        elif not close(s, exp_score[p], SCORE_RTOL):
            problems.append("rank %d: %s score %r, oracle %r (rel diff %.3g)" %
                            (i + 1, p, s, exp_score[p],
                             abs(s - exp_score[p]) / max(abs(exp_score[p]), 1e-300)))
    for i in range(len(got) - 1):
        (p1, s1), (p2, s2) = got[i], got[i + 1]
        if not (s1 > s2 or (s1 == s2 and path_key(p1) < path_key(p2))):
            problems.append("ranks %d,%d out of order: (%s, %r) before (%s, %r)" %
                            (i + 1, i + 2, p1, s1, p2, s2))
    for start, end in tie_groups(expected):
        if start >= len(got):
            break
        group = [p for p, _ in expected[start:end]]
        if end <= n:
            want = sorted(group, key=path_key)
            have = sorted((p for p, _ in got[start:end]), key=path_key)
            if want != have:
                miss = [p for p in want if p not in set(have)]
                extra = [p for p in have if p not in set(want)]
                problems.append("ranks %d-%d (tie group, score %r): missing %s, unexpected %s" %
                                (start + 1, end, expected[start][1], miss[:3], extra[:3]))
        else:
            gset = set(group)
            bad = [p for p, _ in got[start:n] if p not in gset]
            if bad:
                problems.append("ranks %d-%d (tie group at the k cut, score %r): unexpected %s" %
                                (start + 1, n, expected[start][1], bad[:3]))
    if problems:
        # Show the first plain positional difference too.
        for i in range(max(len(got), n)):
            e = expected[i] if i < n else None
            g = got[i] if i < len(got) else None
            if e is None or g is None or e[0] != g[0]:
                problems.append("first difference at rank %d: expected %s, got %s" % (i + 1, e, g))
                break
    return problems


# --- queries ------------------------------------------------------------------

class Query:
    __slots__ = ("text", "k", "ranking", "match", "form", "error", "note")

    def __init__(self, text, k=10, ranking="tfidf", match="any", form=5, error=False, note=""):
        self.text = text
        self.k = k              # int or None (NULL)
        self.ranking = ranking
        self.match = match
        self.form = form        # number of arguments written in the call (2..5)
        self.error = error      # the call must fail
        self.note = note

    def sql_call(self, collection):
        args = [sql_str(self.text), sql_str(collection)]
        if self.form >= 3:
            args.append("NULL::int" if self.k is None else str(self.k))
        if self.form >= 4:
            args.append(sql_str(self.ranking))
        if self.form >= 5:
            args.append(sql_str(self.match))
        return "scipis_search(%s)" % ", ".join(args)

    def describe(self):
        return "query %r k=%s ranking=%s match=%s%s%s" % (
            self.text, "NULL" if self.k is None else self.k, self.ranking, self.match,
            "" if self.form == 5 else " (%d-argument call)" % self.form,
            " [%s]" % self.note if self.note else "")


_CONTROL = re.compile(rb"[\x00-\x1f\x7f]")


def usable_terms(corp):
    """Terms that can be written in a query: valid UTF-8, no control bytes."""
    out = []
    for t in corp.df:
        if _CONTROL.search(t):
            continue
        try:
            s = t.decode("utf-8")
        except UnicodeDecodeError:
            continue
        out.append(s)
    out.sort()
    return out


def recase(rng, s):
    return "".join(c.upper() if c.isascii() and rng.random() < 0.5 else c for c in s)


def make_queries(corp, rng, absent_terms):
    """The full query suite for one corpus (tokenizer taken from the oracle)."""
    ws = corp.tokenizer == "whitespace"
    terms = usable_terms(corp)
    df = {t: corp.df[t.encode("utf-8")] for t in terms}
    usable = set(t.encode("utf-8") for t in terms)
    N = corp.N
    seps = [" ", "\t", "  ", "\x0b", "\x0c", " \x0c\x0b "] if ws else \
        [" ", ", ", " - ", "\t", "; ", "/", " (", ")+(", ".", "'", "\"", "\\", ":="]

    def join(ts):
        out = ts[0]
        for t in ts[1:]:
            out += rng.choice(seps) + t
        return out

    qs = []
    ks = [1, 10, None]

    # 1. Single terms at document frequencies from 1 to N.
    targets = sorted(set([1, 1, 2, 3, 5] + [max(1, round(N * f)) for f in
                     (0.01, 0.03, 0.1, 0.25, 0.5, 0.75, 0.9, 0.97)] + [N]))
    with_df = {}
    for t in terms:
        with_df.setdefault(df[t], []).append(t)
    chosen = []
    for tgt in targets + [1]:
        # A term not chosen yet whose df is the closest to the target.
        for dist in range(N + 1):
            cands = [t for f in (tgt - dist, tgt + dist) for t in with_df.get(f, ())
                     if t not in chosen]
            if cands:
                chosen.append(rng.choice(cands))  # terms are sorted
                break
    chosen.append(max(terms, key=lambda t: (df[t], t)))  # the most frequent term
    chosen = list(dict.fromkeys(chosen))
    for t in chosen:
        for ranking in ("tfidf", "bm25"):
            for k in ks:
                qs.append(Query(t, k, ranking, "any", note="df=%d" % df[t]))
    single_terms = chosen

    # Pools of terms by df for composing multi-term queries.
    rare = [t for t in terms if df[t] <= 3]
    mid = [t for t in terms if 3 < df[t] <= max(4, N // 10)]
    common = [t for t in terms if df[t] > max(4, N // 10)]
    pools = [p for p in (rare, mid, common) if p]

    # 2. 2-4 terms taken from one document, so that "all" has matches.
    docs = [d for d in corp.docs if d.length > 0]
    for _ in range(26):
        d = rng.choice(docs)
        dterms = sorted(t.decode("utf-8") for t in d.tf if t in usable)
        if len(dterms) < 2:
            continue
        ts = rng.sample(dterms, min(len(dterms), rng.choice([2, 3, 4])))
        text = join(ts)
        for match in ("any", "all"):
            qs.append(Query(text, rng.choice(ks + [None, 3]), rng.choice(["tfidf", "bm25"]),
                            match, note="co-occurring"))

    # 3. 2-4 terms from different document-frequency ranges.
    for _ in range(16):
        ts = [rng.choice(rng.choice(pools)) for _ in range(rng.choice([2, 3, 4]))]
        ts = list(dict.fromkeys(ts))
        text = join(ts)
        for match in ("any", "all"):
            qs.append(Query(text, rng.choice(ks), rng.choice(["tfidf", "bm25"]), match,
                            note="mixed df"))

    # 4. Repeated terms (qf > 1).
    for i in range(12):
        a = rng.choice(rng.choice(pools))
        b = rng.choice(rng.choice(pools))
        shape = [[a, a], [a, a, b], [b, a, a, a], [a, b, a, b, a]][i % 4]
        qs.append(Query(join(shape), rng.choice(ks), ("tfidf", "bm25")[i % 2],
                        ("any", "all")[(i // 2) % 2], note="qf>1"))

    # 4b. Many terms (the engine merges any number of posting lists; this
    # checks the order in which a document's term scores are summed too).
    for n, match in ((12, "any"), (60, "any"), (400, "any"), (60, "all")):
        ts = [rng.choice(rng.choice(pools)) for _ in range(n)]
        qs.append(Query(join(ts), rng.choice(ks), ("tfidf", "bm25")[n % 2], match,
                        note="%d terms" % n))
    rich = [d for d in docs if sum(1 for t in d.tf if t in usable) >= 30]
    if rich:
        d = rng.choice(rich)
        dterms = sorted(t.decode("utf-8") for t in d.tf if t in usable)
        ts = rng.sample(dterms, 30)
        ts += ts[:5]  # qf 2 for five of them
        for ranking in ("tfidf", "bm25"):
            qs.append(Query(join(ts), None, ranking, "all", note="30 co-occurring terms"))

    # 5. Mixed case (ASCII letters fold to lower case, other bytes do not).
    cased = [t for t in terms if any("a" <= c <= "z" for c in t)]
    for i in range(12):
        ts = [recase(rng, rng.choice(cased)) for _ in range(1 + i % 3)]
        qs.append(Query(join(ts), rng.choice(ks), ("tfidf", "bm25")[i % 2],
                        ("any", "all")[(i // 3) % 2], note="mixed case"))
    for w in ("\u00dcBERLAUF", "\u00fcberlauf", "CAF\u00c9", "Caf\u00e9", "\u00c9t\u00c9"):
        qs.append(Query(w, None, "bm25", "any", note="non-ASCII case is kept"))

    # 6. Terms absent from the corpus.
    for t in absent_terms:
        assert not any(x in corp.df for x in oracle.tokenize(t, corp.tokenizer))
    a1, a2 = absent_terms[0], absent_terms[1]
    present = single_terms[len(single_terms) // 2]
    qs += [
        Query(a1, 10, "tfidf", "any", note="absent"),
        Query(a1, None, "bm25", "all", note="absent"),
        Query(join([a1, a2]), None, "tfidf", "any", note="absent"),
        Query(join([a1, present]), None, "tfidf", "any", note="absent + present"),
        Query(join([present, a2]), 10, "bm25", "any", note="absent + present"),
        Query(join([a1, present]), None, "tfidf", "all", note="absent + present"),
        Query(join([present, a2, present]), 1, "bm25", "all", note="absent + present"),
        Query(join([a2, present, common[0] if common else present]), None, "bm25", "any",
              note="absent + present"),
    ]

    # 7. Over-long query terms, cut into 255-byte pieces like document text.
    for text in ("A" * 600, "q" * 256, "Q" * 510 + " q", ("Ab_9" * 200)[:766], "a" * 255):
        for ranking in ("tfidf", "bm25"):
            qs.append(Query(text, None, ranking, "any", note="long term"))
    qs.append(Query("q" * 511, None, "tfidf", "all", note="long term"))

    # 8. Delimiter-rich text and default arguments.
    t3 = rng.sample(single_terms, min(3, len(single_terms)))
    if ws:
        qs.append(Query("\t".join(t3) + " \x0b ", 10, "tfidf", "any", note="delimiters"))
    else:
        qs.append(Query("--" + "::[".join(t3) + "]...", 10, "tfidf", "any", note="delimiters"))
        qs.append(Query("(" + ")&(".join(t3) + ")", None, "bm25", "all", note="delimiters"))
        qs.append(Query("2015-10-18 ERROR [main] blk_-1608 10.251.42.84:50010 \u00dcberlauf",
                        None, "tfidf", "any", note="spec example"))
    for t in single_terms[:3]:
        qs.append(Query(t, 10, "tfidf", "any", form=2, note="defaults"))
        qs.append(Query(t, None, "tfidf", "any", form=3, note="defaults"))
        qs.append(Query(t + " " + t3[0], 1, "bm25", "any", form=4, note="defaults"))

    # 9. Empty queries are errors.
    qs.append(Query("", 10, "tfidf", "any", error=True, note="empty query"))
    qs.append(Query(" \t " if ws else " ,;- ...", 10, "bm25", "all", error=True,
                    note="no tokens"))
    return qs


# --- the test -----------------------------------------------------------------

class Collection:
    def __init__(self, name, root, options, corp, queries):
        self.name = name
        self.root = root
        self.options = options
        self.corp = corp
        self.queries = queries
        self.ok = False  # created and indexed


def check_index_row(res, coll, row):
    corp = coll.corp
    problems = []
    total_bytes = sum(d.size for d in corp.docs)

    def num(key):
        v = row.get(key)
        return None if v in (None, "") else int(float(v))

    if num("tokens") != corp.total_tokens:
        problems.append("tokens %s, oracle %d" % (row.get("tokens"), corp.total_tokens))
    if num("bytes") != total_bytes:
        problems.append("bytes %s, oracle %d" % (row.get("bytes"), total_bytes))
    if num("files") not in (len(corp.docs), corp.N):
        problems.append("files %s, oracle %d files (%d with tokens)" %
                        (row.get("files"), len(corp.docs), corp.N))
    if problems:
        res.fail("[%s] scipis_index row %s: %s" % (coll.name, row, "; ".join(problems)))
    else:
        res.ok()
    # `terms` is documented as a HyperLogLog estimate (2^16 registers,
    # standard error about 0.4%): accept 2%, five standard errors.
    terms = num("terms")
    exact = len(corp.df)
    if terms is None or abs(terms - exact) > 0.02 * max(exact, 1):
        res.fail("[%s] scipis_index reports %s distinct terms, the oracle counts %d"
                 % (coll.name, row.get("terms"), exact))
    else:
        res.ok()


def stat_fields(path):
    """What scipis_files should say of a file besides size and tokens, from
    os.stat: mtime and ctime in microseconds (truncated toward zero, as
    the ns values are), uid, gid, st_mode, inode (as a signed 64-bit)."""
    st = os.stat(path)

    def us(ns):  # kept as 64-bit ns (clamped), shown floored to the µs
        return max(-(1 << 63), min((1 << 63) - 1, ns)) // 1000
    ino = st.st_ino - (1 << 64) if st.st_ino >= (1 << 63) else st.st_ino
    return (us(st.st_mtime_ns), us(st.st_ctime_ns), st.st_uid, st.st_gid, st.st_mode, ino)


def check_files(res, coll, rows):
    """rows: [(path, size, tokens, mtime_us, ctime_us, uid, gid, mode,
    inode)] from scipis_files for this collection."""
    corp = coll.corp
    problems = []
    seen = {}
    for path, size, tokens, *attrs in rows:
        if not path.startswith("/"):
            path = coll.root + "/" + path
        if path in seen:
            problems.append("%s listed twice" % path)
        seen[path] = (size, tokens)
        want = stat_fields(path)
        if tuple(int(a) for a in attrs) != want:
            problems.append("%s: mtime, ctime, uid, gid, mode, inode %s, os.stat %s" %
                            (path, tuple(attrs), want))
    for d in corp.docs:
        if d.path not in seen:
            if d.length > 0:
                problems.append("%s missing" % d.path)
            continue
        size, tokens = seen.pop(d.path)
        if int(size) != d.size or int(tokens) != d.length:
            problems.append("%s: size %s tokens %s, oracle size %d tokens %d" %
                            (d.path, size, tokens, d.size, d.length))
    for path in sorted(seen, key=path_key):
        problems.append("%s is not a regular file of the collection" % path)
    if problems:
        res.fail("[%s] scipis_files: %d problems, first: %s" %
                 (coll.name, len(problems), "; ".join(problems[:5])))
    else:
        res.ok()


def main():
    t0 = time.time()
    res = Results()
    colls = []
    tmp = None

    def log(msg):
        print("[%6.1fs] %s" % (time.time() - t0, msg), file=sys.stderr, flush=True)

    try:
        if not os.path.isdir(LOGHUB):
            raise RuntimeError("missing %s" % LOGHUB)
        tmp = tempfile.mkdtemp(prefix="scipis-conformance-", dir="/tmp")
        os.chmod(tmp, 0o755)
        skew_root = os.path.join(tmp, "skew")
        tiny_root = os.path.join(tmp, "tiny")
        nfiles, nbytes = gen_corpus.generate(skew_root, seed=20240607, nfiles=3000)
        log("generated %d files, %d bytes in %s" % (nfiles, nbytes, skew_root))
        nfiles, nbytes = gen_corpus.generate(tiny_root, seed=9, nfiles=400, scale=0.2)
        log("generated %d files, %d bytes in %s" % (nfiles, nbytes, tiny_root))
        for top in (skew_root, tiny_root):
            for dirpath, dirnames, filenames in os.walk(top):
                for d in dirnames:
                    os.chmod(os.path.join(dirpath, d), 0o755)

        roots = {"skew": skew_root, "skew_ws": skew_root, "tiny": tiny_root,
                 "tiny_ws": tiny_root, "loghub": LOGHUB, "loghub_ws": LOGHUB}
        oracles = {}
        for key, root in roots.items():
            c = oracle.Corpus(root, "whitespace" if key.endswith("_ws") else "word")
            oracles[key] = c
            log("oracle %s: %d files, N=%d, %d tokens, %d terms" %
                (key, len(c.docs), c.N, c.total_tokens, len(c.df)))

        rng = random.Random(4242)
        absent = ["zzqxjvnotaword", "Qwxyzzy9absent", "\u00dcbernotthere"]
        suites = {key: make_queries(c, rng, absent) for key, c in oracles.items()}

        # Full suites on the default options.
        for key in ("skew", "loghub", "loghub_ws"):
            opts = {"tokenizer": "whitespace"} if key.endswith("_ws") else {}
            colls.append(Collection(PREFIX + key, roots[key], opts, oracles[key], suites[key]))
        # A subset on every tuning variant.
        for suffix, key, opts, nq in VARIANTS:
            pool = [q for q in suites[key] if not q.error]
            sub = random.Random(suffix).sample(pool, min(nq, len(pool)))
            colls.append(Collection(PREFIX + suffix, roots[key], opts, oracles[key], sub))
        log("%d collections, %d queries" % (len(colls), sum(len(c.queries) for c in colls)))

        # Set up: extension, leftovers of an earlier run.
        drops = "".join(
            "DO $$ BEGIN PERFORM scipis_drop_collection(%s); "
            "EXCEPTION WHEN OTHERS THEN NULL; END $$;\n" % sql_str(c.name) for c in colls)
        rc, out, err, _ = run_psql("CREATE EXTENSION IF NOT EXISTS scipis;\n" + drops, tmpdir=tmp)
        if rc != 0:
            raise PsqlError("setup failed: %s" % err.strip())

        # Create and index, one psql process per collection.
        for c in colls:
            script = ("SELECT scipis_create_collection(%s, %s, %s::jsonb) \\g /dev/null\n"
                      "SELECT * FROM scipis_index(%s);\n" %
                      (sql_str(c.name), sql_str(c.root), sql_str(json_obj(c.options)),
                       sql_str(c.name)))
            rc, out, err, _ = run_psql(script, header=True, tmpdir=tmp)
            if rc != 0:
                res.fail("[%s] create/index with options %s failed: %s" %
                         (c.name, json_obj(c.options), err.strip()))
                continue
            rows = parse_csv(out)
            if len(rows) != 2:
                res.fail("[%s] scipis_index returned %r" % (c.name, out))
                continue
            c.ok = True
            row = dict(zip(rows[0], rows[1]))
            log("indexed %s %s: %s" % (c.name, json_obj(c.options), row))
            check_index_row(res, c, row)
        live = [c for c in colls if c.ok]

        # All searches in one psql process. Each search is one line of the
        # script, followed (UNION ALL) by an end marker row with a NULL path:
        # a statement that fails has no end marker, and its error message
        # names its line. ON_ERROR_STOP is off so that one failing search does
        # not hide the others.
        lines = ["SET extra_float_digits = 3;"]
        jobs = {}   # line number -> (collection, query, qid)
        qid = 0
        for c in live:
            for q in c.queries:
                qid += 1
                lines.append("SELECT %d, s.collection, s.path, s.score, s.size FROM %s s "
                             "UNION ALL SELECT %d, NULL, NULL, NULL, NULL;" %
                             (qid, q.sql_call(c.name), qid))
                assert "\n" not in lines[-1] and "\r" not in lines[-1]
                jobs[len(lines)] = (c, q, qid)
        lines.append("SELECT -1, collection, path, size, tokens, "
                     "(EXTRACT(EPOCH FROM mtime) * 1000000)::bigint, "
                     "(EXTRACT(EPOCH FROM ctime) * 1000000)::bigint, uid, gid, mode, inode "
                     "FROM scipis_files "
                     "WHERE collection IN (%s);" %
                     ", ".join(sql_str(c.name) for c in live) if live else "SELECT 1 WHERE false;")
        log("running %d searches" % len(jobs))
        rc, out, err, script_path = run_psql("\n".join(lines) + "\n", stop_on_error=False,
                                             tmpdir=tmp)
        log("searches done (psql exit %d)" % rc)

        errors = {}   # qid -> message
        for m in re.finditer(r"^psql:[^\n]*?:(\d+): (?:ERROR|FATAL):\s*(.*)$", err, re.M):
            line = int(m.group(1))
            if line in jobs:
                errors[jobs[line][2]] = m.group(2)
            else:
                res.fail("psql error on line %d: %s" % (line, m.group(2)))
        got = {}      # qid -> [(path, score, size, collection)]
        ended = set()
        files = {}    # collection -> [(path, size, tokens)]
        for r in parse_csv(out):
            if not r:
                continue
            i = int(r[0])
            if i == -1:
                files.setdefault(r[1], []).append(tuple(r[2:]))
            elif r[2] == "":
                ended.add(i)
            else:
                got.setdefault(i, []).append((r[2], float(r[3]), r[4], r[1]))
        if rc not in (0, 1) or ("FATAL" in err and not errors):
            res.fail("psql failed (exit %d): %s" % (rc, err.strip()[:2000]))

        cache = {}
        for line, (c, q, i) in sorted(jobs.items()):
            where = "[%s] %s" % (c.name, q.describe())
            if q.error:
                if i in ended or i in got:
                    res.fail("%s: expected an error, got %d rows" % (where, len(got.get(i, []))))
                else:
                    res.ok()
                continue
            if i not in ended:
                res.fail("%s: error: %s" % (where, errors.get(i, "no result (psql aborted?)")))
                continue
            ckey = (id(c.corp), q.text, q.ranking, q.match)
            if ckey not in cache:
                cache[ckey] = c.corp.search(q.text, None, q.ranking, q.match)
            expected = cache[ckey]
            rows = got.get(i, [])
            problems = compare(expected, q.k, [(p, s) for p, s, _, _ in rows])
            for p, _, size, coll in rows:
                if coll != c.name:
                    problems.append("%s: collection %r" % (p, coll))
                    break
            for p, _, size, coll in rows:
                d = c.corp.by_path.get(p)
                if d is not None and size != "" and int(size) != d.size:
                    problems.append("%s: size %s, file has %d bytes" % (p, size, d.size))
                    break
            if problems:
                res.fail("%s: %s" % (where, "; ".join(problems[:6])))
            else:
                res.ok()
        for c in live:
            check_files(res, c, files.get(c.name, []))
        log("results compared")
    except Exception:
        traceback.print_exc()
        res.fail("the test itself failed with an exception (see above)")
    finally:
        if colls:
            # Collections whose indexing failed may exist or not: drop them
            # quietly; the others must drop without error.
            drops = "".join(
                ("SELECT scipis_drop_collection(%s);\n" if c.ok else
                 "DO $$ BEGIN PERFORM scipis_drop_collection(%s); "
                 "EXCEPTION WHEN OTHERS THEN NULL; END $$;\n") % sql_str(c.name)
                for c in colls)
            if drops:
                rc, out, err, _ = run_psql(drops, stop_on_error=False, tmpdir=tmp)
                if rc != 0 or "ERROR" in err:
                    res.fail("dropping the collections failed: %s" % err.strip())
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)
        log("done")
    print("conformance: %d passed, %d failed" % (res.passed, res.failed), flush=True)
    return 1 if res.failed else 0


if __name__ == "__main__":
    sys.exit(main())
