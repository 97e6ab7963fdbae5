#!/usr/bin/env python3
"""Brute-force reference implementation ("oracle") of scipis search.

Written from the specification only, independently of the engine, and kept
deliberately simple: every document is a Counter of its terms, and a query is
answered by scoring every document, then sorting.

Specification implemented here
------------------------------
Tokens (tokenizer "word", the default): the input is BYTES. A byte is a token
byte when it is ASCII A-Z, a-z, 0-9, '_' or any byte >= 0x80; every other byte
is a delimiter. A token is a maximal run of token bytes, with ASCII A-Z lower
cased (other bytes kept as they are). A run longer than 255 bytes is cut into
consecutive 255-byte pieces (the last one shorter), each piece a token.
Tokenizer "whitespace": delimiters are exactly space, \\t, \\n, \\v, \\f, \\r;
every other byte is a token byte; same lower casing and same 255 cut.

Documents: one regular file (found by walking the root without following
symbolic links) is one document; |d| is its number of tokens. Files without
tokens never match.

Ranking, with N = number of documents with at least one token,
df(t) = number of documents containing t, tf(t,d) = occurrences of t in d,
qf(t) = occurrences of t in the query:
  tfidf: sum_t qf * sqrt(tf) * idf / sqrt(|d|),  idf = 1 + ln((N+1)/(df+1))
  bm25:  sum_t qf * idf * tf / (tf + k1*(1 - b + b*|d|/avgdl)),
         idf = ln(1 + (N - df + 0.5)/(df + 0.5)), k1 = 1.2, b = 0.75,
         avgdl = (sum of |d|) / N
match "any": at least one query term in d; "all": every query term in d.
Order: score descending, then path ascending (bytewise). k limits the number
of rows (None = all matches). An empty query (no tokens) is an error.

Run `python3 oracle.py --selftest` for the built-in checks.
"""

import math
import os
import re
import stat
import sys
from collections import Counter

MAX_TOKEN = 255

# Runs of token bytes for each tokenizer.
_RUN_RE = {
    "word": re.compile(rb"[A-Za-z0-9_\x80-\xff]+"),
    "whitespace": re.compile(rb"[^ \t\n\v\f\r]+"),
}


class QueryError(ValueError):
    """The query is not valid (e.g. it has no tokens)."""


def tokenize(data, tokenizer="word"):
    """Return the list of tokens (bytes) of `data` (bytes)."""
    if isinstance(data, str):
        data = data.encode("utf-8")
    # bytes.lower() lower-cases ASCII A-Z only and keeps every other byte.
    runs = _RUN_RE[tokenizer].findall(data.lower())
    tokens = []
    for run in runs:
        if len(run) <= MAX_TOKEN:
            tokens.append(run)
        else:
            for i in range(0, len(run), MAX_TOKEN):
                tokens.append(run[i:i + MAX_TOKEN])
    return tokens


def path_key(path):
    """Bytewise sort key of a path (str, possibly with surrogate escapes)."""
    return os.fsencode(path)


class Doc:
    __slots__ = ("path", "size", "length", "tf")

    def __init__(self, path, size, tf):
        self.path = path          # absolute path, str
        self.size = size          # bytes
        self.tf = tf              # Counter: term (bytes) -> occurrences
        self.length = sum(tf.values())  # |d|


class Corpus:
    """All the regular files under `root`, tokenized once."""

    def __init__(self, root, tokenizer="word"):
        root = os.path.abspath(root)
        if root != "/":
            root = root.rstrip("/")
        self.root = root
        self.tokenizer = tokenizer
        self.docs = []        # every regular file read, tokens or not
        for path in self._walk(root):
            try:
                st = os.lstat(path)
                if not stat.S_ISREG(st.st_mode):
                    continue
                with open(path, "rb") as f:
                    data = f.read()
            except OSError:
                continue  # unreadable files are skipped
            self.docs.append(Doc(path, len(data), Counter(tokenize(data, tokenizer))))
        self.docs.sort(key=lambda d: path_key(d.path))
        self.df = Counter()
        for d in self.docs:
            self.df.update(d.tf.keys())
        self.N = sum(1 for d in self.docs if d.length > 0)
        self.total_tokens = sum(d.length for d in self.docs)
        self.avgdl = self.total_tokens / self.N if self.N else 0.0
        self.by_path = {d.path: d for d in self.docs}
        # postings[t] = indexes (into self.docs) of the documents containing t;
        # only used to skip documents that contain none of the query terms.
        self.postings = {}
        for i, d in enumerate(self.docs):
            for t in d.tf:
                self.postings.setdefault(t, []).append(i)

    @staticmethod
    def _walk(root):
        # os.walk does not descend into symbolic links to directories
        # (followlinks=False); symbolic links to files are filtered by lstat.
        for dirpath, _dirnames, filenames in os.walk(root, followlinks=False):
            for name in filenames:
                yield os.path.join(dirpath, name)

    # --- scoring -------------------------------------------------------
    def idf(self, term, ranking):
        df = self.df.get(term, 0)
        if ranking == "tfidf":
            return 1.0 + math.log((self.N + 1) / (df + 1))
        if ranking == "bm25":
            return math.log(1.0 + (self.N - df + 0.5) / (df + 0.5))
        raise QueryError("unknown ranking %r" % ranking)

    def score(self, doc, qf, ranking):
        """Score of `doc` for the query term counts `qf` (Counter)."""
        s = 0.0
        for term, q in qf.items():
            tf = doc.tf.get(term, 0)
            if tf == 0:
                continue
            if ranking == "tfidf":
                s += q * math.sqrt(tf) * self.idf(term, ranking) / math.sqrt(doc.length)
            else:
                k1, b = 1.2, 0.75
                norm = k1 * (1.0 - b + b * doc.length / self.avgdl)
                s += q * self.idf(term, ranking) * tf / (tf + norm)
        return s

    def search(self, query, k=10, ranking="tfidf", match="any"):
        """All matches as [(path, score)], best first, at most k (None = all)."""
        if ranking not in ("tfidf", "bm25"):
            raise QueryError("unknown ranking %r" % ranking)
        if match not in ("any", "all"):
            raise QueryError("unknown match %r" % match)
        qf = Counter(tokenize(query, self.tokenizer))
        if not qf:
            raise QueryError("empty query")
        candidates = set()
        for t in qf:
            candidates.update(self.postings.get(t, ()))
        hits = []
        for i in sorted(candidates):
            doc = self.docs[i]
            present = sum(1 for t in qf if t in doc.tf)
            if present == 0 or (match == "all" and present < len(qf)):
                continue
            hits.append((doc.path, self.score(doc, qf, ranking)))
        hits.sort(key=lambda h: (-h[1], path_key(h[0])))
        return hits if k is None else hits[:k]


# --- self test ---------------------------------------------------------------

def _selftest():
    import shutil
    import tempfile

    passed = failed = 0

    def check(name, got, want, tol=None):
        nonlocal passed, failed
        if tol is None:
            ok = got == want
        else:
            ok = (len(got) == len(want) and
                  all(gp == wp and abs(gs - ws) <= tol * abs(ws)
                      for (gp, gs), (wp, ws) in zip(got, want)))
        if ok:
            passed += 1
        else:
            failed += 1
            print("FAIL %s:\n  got  %r\n  want %r" % (name, got, want))

    # Tokenizer: the example of the specification.
    line = "2015-10-18 ERROR [main] blk_-1608 10.251.42.84:50010 \u00dcberlauf"
    check("spec example", tokenize(line),
          [t.encode() for t in "2015 10 18 error main blk_ 1608 10 251 42 84 50010 "
           "\u00dcberlauf".split()])
    check("whitespace example", tokenize(line, "whitespace"),
          [t.encode() for t in "2015-10-18 error [main] blk_-1608 10.251.42.84:50010 "
           "\u00dcberlauf".split()])
    check("empty", tokenize(b""), [])
    check("delimiters only", tokenize(b" ,;-\x00\x01\x7f\n"), [])
    check("NUL and controls delimit", tokenize(b"a\x00B\x7fc\x1fd"), [b"a", b"b", b"c", b"d"])
    check("high bytes are token bytes, not lower cased",
          tokenize(b"X\xc3\x9cY\xff\x80"), [b"x\xc3\x9cy\xff\x80"])
    check("255 kept", tokenize(b"a" * 255), [b"a" * 255])
    check("256 cut", tokenize(b"A" * 256 + b" z"), [b"a" * 255, b"a", b"z"])
    check("600 cut", tokenize(b"-" + b"ab" * 300 + b"-"),
          [(b"ab" * 300)[0:255], (b"ab" * 300)[255:510], (b"ab" * 300)[510:600]])
    check("whitespace delimiters", tokenize(b"a b\tc\nd\x0be\x0cf\rg\x00h-I", "whitespace"),
          [b"a", b"b", b"c", b"d", b"e", b"f", b"g\x00h-i"])
    check("whitespace 255 cut", tokenize(b"x" * 510 + b"!", "whitespace"),
          [b"x" * 255, b"x" * 255, b"!"])

    # A tiny corpus with hand-computed scores.
    tmp = tempfile.mkdtemp(prefix="scipis-oracle-")
    try:
        files = {
            "a": b"x y x",       # |d| = 3
            "b": b"Y,z",         # |d| = 2
            "c": b"",            # no tokens
            "d": b",,;\x00",     # no tokens
            "sub/e": b"z",       # |d| = 1
        }
        for rel, data in files.items():
            p = os.path.join(tmp, rel)
            os.makedirs(os.path.dirname(p), exist_ok=True)
            with open(p, "wb") as f:
                f.write(data)
        os.symlink(os.path.join(tmp, "a"), os.path.join(tmp, "link_to_a"))
        os.symlink(tmp + "/sub", os.path.join(tmp, "link_to_sub"))
        c = Corpus(tmp)
        r = c.root
        A, B, E = r + "/a", r + "/b", r + "/sub/e"
        check("documents (symlinks not followed)",
              [os.path.relpath(d.path, r) for d in c.docs], ["a", "b", "c", "d", "sub/e"])
        check("N", c.N, 3)
        check("avgdl", c.avgdl, 2.0)  # (3 + 2 + 0 + 0 + 1) / 3
        # df: x=1, y=2, z=2, N=3.
        # tfidf "x": idf = 1 + ln(4/2) = 1.6931471805599454;
        # a: sqrt(2) * 1.6931471805599454 / sqrt(3)
        #    = 0.8164966 * 1.6931472 = 1.3824489 (by hand)
        check("tfidf x", c.search("x"), [(A, 1.382448883934615)], 1e-12)
        # tfidf "z": idf = 1 + ln(4/3) = 1.2876820724517808
        # e: 1 * 1.2876820724517808 / 1 = 1.2876820724517808
        # b: 1.2876820724517808 / sqrt(2) = 1.2876821 * 0.7071068 = 0.9105287
        check("tfidf z", c.search("Z"), [(E, 1.2876820724517808), (B, 0.9105287254430013)], 1e-12)
        # tfidf "x x y" (qf x = 2, qf y = 1), idf(y) = 1 + ln(4/3):
        # a: (2*sqrt(2)*1.6931471805599454 + 1.2876820724517808) / sqrt(3)
        #    = (4.7889434 + 1.2876821) / 1.7320508 = 3.50834 (by hand)
        # b: 1.2876820724517808 / sqrt(2) = 1.2876821 * 0.7071068 = 0.9105287
        want_a = (2 * 1.4142135623730951 * 1.6931471805599454 + 1.2876820724517808) / 1.7320508075688772
        check("tfidf qf>1 hand value", abs(want_a - 3.5083413590299206) < 1e-12, True)
        check("tfidf x x y", c.search("x-x y"), [(A, 3.5083413590299206), (B, 0.9105287254430013)], 1e-12)
        check("tfidf all", c.search("x y", match="all"), [(A, (1.4142135623730951 * 1.6931471805599454 + 1.2876820724517808) / 1.7320508075688772)], 1e-12)
        check("all, absent term", c.search("x nothere", match="all"), [])
        check("any, absent term", [p for p, _ in c.search("x nothere")], [A])
        # bm25 "y": idf = ln(1 + (3-2+0.5)/(2+0.5)) = ln(1.6) = 0.4700036292457356
        # a: |d|=3: tf/(tf + 1.2*(0.25 + 0.75*3/2)) = 1/(1 + 1.65) = 1/2.65
        # b: |d|=2: 1/(1 + 1.2*(0.25 + 0.75)) = 1/2.2
        check("bm25 y", c.search("y", ranking="bm25"),
              [(B, 0.4700036292457356 / 2.2), (A, 0.4700036292457356 / 2.65)], 1e-12)
        check("bm25 y values", [round(s, 12) for _, s in c.search("y", ranking="bm25")],
              [0.213638013294, 0.177359860093])
        # bm25 "x": df=1: idf = ln(1 + 2.5/1.5) = ln(8/3) = 0.9808292530117262
        # a: tf=2: 2/(2 + 1.2*1.375) = 2/3.65
        check("bm25 x", c.search("x", ranking="bm25"), [(A, 0.9808292530117262 * 2 / 3.65)], 1e-12)
        check("k=1", [p for p, _ in c.search("z", k=1)], [E])
        # "z y x": a = (1.2877 + 1.4142*1.6931)/1.7321 = 2.1259,
        #          b = 2*1.2877/1.4142 = 1.8210, e = 1.2877
        check("k=None", [p for p, _ in c.search("z y x", k=None)], [A, B, E])
        try:
            c.search(" ,; ")
            check("empty query raises", False, True)
        except QueryError:
            check("empty query raises", True, True)
        # Ties are broken by path, bytewise: "a-b/x" < "a/x" < "a0/x" < "a_b/x".
        tmp2 = tempfile.mkdtemp(prefix="scipis-oracle-")
        for d in ("a", "a-b", "a0", "a_b", "A"):
            os.makedirs(os.path.join(tmp2, d))
            with open(os.path.join(tmp2, d, "x"), "wb") as f:
                f.write(b"same words here")
        c2 = Corpus(tmp2)
        check("tie order is bytewise",
              [os.path.relpath(p, c2.root) for p, _ in c2.search("words", k=None)],
              ["A/x", "a-b/x", "a/x", "a0/x", "a_b/x"])
        shutil.rmtree(tmp2)
    finally:
        shutil.rmtree(tmp)

    print("oracle selftest: %d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


def _main(argv):
    import argparse
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--selftest", action="store_true")
    ap.add_argument("--root")
    ap.add_argument("--tokenizer", default="word", choices=("word", "whitespace"))
    ap.add_argument("--k", default="10", help="an integer or 'null'")
    ap.add_argument("--ranking", default="tfidf", choices=("tfidf", "bm25"))
    ap.add_argument("--match", default="any", choices=("any", "all"))
    ap.add_argument("query", nargs="?")
    a = ap.parse_args(argv)
    if a.selftest:
        return _selftest()
    if not a.root or a.query is None:
        ap.error("--root and a query are required (or --selftest)")
    c = Corpus(a.root, a.tokenizer)
    k = None if a.k.lower() == "null" else int(a.k)
    for path, score in c.search(a.query, k, a.ranking, a.match):
        print("%.17g\t%s" % (score, path))
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
