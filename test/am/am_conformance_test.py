#!/usr/bin/env python3
"""Conformance test of the `scipis` index access method against the oracle.

Run from the repository root, against a server where `CREATE EXTENSION
scipis` works (PG* environment variables select it), for example:

    pg_virtualenv -t python3 test/am/am_conformance_test.py

The expected answers come from test/conformance/oracle.py (tokenizer and
ranking formulas written from docs/search-semantics.md, independently of the
engine), applied to rows instead of files: a document is one row's `body`,
NULL rows are not documents, and N, df and avgdl are taken over the live rows
(docs/search-semantics.md, "Tables").

What it does, on tables named amconf_* (dropped at the end):
  * data: the Loghub lines of data/loghub-2k (one row per line) and a few
    thousand synthetic rows (0 to ~3000 tokens, Zipf-like vocabulary, UTF-8
    words, ALL-CAPS, NULLs, empty and punctuation-only values, tokens longer
    than 255 bytes), loaded with COPY FROM STDIN (csv);
  * four index variants, one at a time (so that queries need not name their
    index): default options; pending_limit = 64 with the index created on an
    empty table and every row inserted through the pending list, with ts as
    a filter column; tfidf_index_size = 1 (many segments) with ts and id as
    filter columns (their conditions decided inside the index); tokenizer =
    'whitespace';
  * right after CREATE INDEX (or the inserts) and right after each VACUUM:
    ORDER BY col <@> q LIMIT 1 / 10 and WHERE col @@@ q ORDER BY col <@> q
    (all matches) against the oracle's scores (1e-9 relative, ties compared
    as sets), WHERE col @@@ q row sets and counts, top 10 under a selective
    extra filter (the resumable ordered scan), ORDER BY col <@> q, id;
  * rounds of INSERT / UPDATE / DELETE / COPY, including updates and deletes
    of the best-ranked rows of some queries: @@@ row sets against the oracle
    over the live rows, and ORDER BY <@> LIMIT k returning k live rows when k
    match; the index's order against the engine's own per-row scores (whose
    statistics still count the dead rows until VACUUM); then VACUUM;
  * the sequential-scan path (index and bitmap scans off, index named);
  * MVCC: rolled-back inserts, updates and deletes; rows of a transaction
    open in another session invisible until it commits;
  * a few deleted rows of a large table, then a plain VACUUM (which
    PostgreSQL may run without an index pass): scores exact again;
  * a second scipis index in the database: index scans and lossy bitmap
    scans with queries that name no index; errors and their SQLSTATEs;
  * scipis_index_check() after each state, when the installed build has it.

Prints one line per failed check, then `am conformance: N passed, M failed`;
exits 1 when M > 0 or on any error. Progress and timings go to stderr
(AMCONF_SLOW=N lists the N slowest statements of each batch).
Deterministic: fixed seeds, no wall-clock conditions; the tables have
autovacuum off, and each VACUUM is repeated while it reports dead rows
it could not remove yet.
"""

import bisect
import datetime
import os
import random
import re
import subprocess
import sys
import tempfile
import time
import traceback
from collections import Counter

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "test", "conformance"))
sys.dont_write_bytecode = True   # leave no __pycache__ in test/conformance

import oracle  # noqa: E402

LOGHUB = os.path.join(REPO, "data", "loghub-2k")
PREFIX = "amconf_"
SCORE_RTOL = 1e-9     # scores must agree with the oracle within this (relative)
TIE_RTOL = 1e-12      # scores this close are treated as ties
PSQL_HANG_SECONDS = 900
T0 = time.time()
TMP = None


def log(msg):
    print("[%6.1fs] %s" % (time.time() - T0, msg), file=sys.stderr, flush=True)


# --- results ------------------------------------------------------------------

class Results:
    def __init__(self):
        self.passed = 0
        self.failed = 0

    def ok(self):
        self.passed += 1

    def fail(self, msg):
        self.failed += 1
        msg = msg.replace("\n", "\\n")
        if len(msg) > 1500:
            msg = msg[:1500] + "..."
        print("FAIL " + msg, flush=True)

    def report(self, desc, problems):
        if problems:
            self.fail("%s: %s" % (desc, "; ".join(problems[:6])))
        else:
            self.ok()


RES = Results()


# --- psql ---------------------------------------------------------------------

def sql_str(s):
    """A standard SQL string literal (standard_conforming_strings is on)."""
    if "\x00" in s:
        raise ValueError("NUL in SQL string")
    return "'" + s.replace("'", "''") + "'"


class Item:
    __slots__ = ("sql", "fn", "desc", "expect_error")

    def __init__(self, sql, fn, desc, expect_error):
        self.sql = sql
        self.fn = fn
        self.desc = desc
        self.expect_error = expect_error


class Batch:
    """Statements run by one psql process, in order, in one session.

    sql():   a statement whose failure is a failed check;
    check(): a statement whose output rows (lists of fields, split at '|')
             go to fn(rows), which returns a list of problems;
    error(): a statement that must fail; fn(rows, msgs) checks the error
             (msgs: [{"level", "sqlstate", "text"}]).
    """

    def __init__(self, name):
        self.name = name
        self.items = []

    def sql(self, sql, desc=None):
        self.items.append(Item(sql, None, desc or sql.split("\n")[0][:100], False))

    def check(self, sql, fn, desc):
        self.items.append(Item(sql, fn, desc, False))

    def error(self, sql, fn, desc):
        self.items.append(Item(sql, fn, desc, True))

    def __len__(self):
        return len(self.items)


_MSG_RE = re.compile(r"^psql:[^\n]*?:(\d+): (ERROR|FATAL|PANIC|WARNING|INFO|NOTICE|LOG):  "
                     r"(?:([0-9A-Z]{5}): )?(.*)$")


def run_psql_script(script, stop_on_error=False, env=None):
    fd, path = tempfile.mkstemp(prefix="batch-", suffix=".sql", dir=TMP)
    with os.fdopen(fd, "wb") as f:
        f.write(script.encode("utf-8"))
    cmd = ["psql", "-X", "-q", "-A", "-t", "-F", "|",
           "-v", "ON_ERROR_STOP=%d" % (1 if stop_on_error else 0), "-f", path]
    try:
        # Not a time limit on the checks: only a hung server must not hang the test.
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                           timeout=PSQL_HANG_SECONDS)
    except subprocess.TimeoutExpired as e:
        os.unlink(path)
        return (-1, (e.stdout or b"").decode("utf-8", "replace"),
                "psql did not finish in %d s (hung?)" % PSQL_HANG_SECONDS)
    os.unlink(path)
    return (p.returncode, p.stdout.decode("utf-8", "replace"),
            p.stderr.decode("utf-8", "replace"))


def run_batch(batch, stop_on_error=False):
    """Runs a batch, calls its checks; returns the messages of each item.
    With stop_on_error, a failure raises (what follows would be meaningless)."""
    failed_before = RES.failed
    lines = ["\\set VERBOSITY verbose", "SET client_min_messages = warning;",
             "SET extra_float_digits = 3;", "\\timing on"]
    starts = []
    for i, it in enumerate(batch.items):
        lines.append("\\echo @@Q %d" % i)
        starts.append(len(lines) + 1)
        lines.extend(it.sql.split("\n"))
    t = time.time()
    rc, out, err = run_psql_script("\n".join(lines) + "\n", stop_on_error)
    t_psql = time.time() - t
    rows = {}
    times = {}
    cur = None
    for line in out.split("\n"):
        if line.startswith("@@Q "):
            cur = int(line[4:])
            rows[cur] = []
        elif line.startswith("Time: "):
            if cur is not None:
                times[cur] = times.get(cur, 0.0) + float(line.split()[1])
        elif line != "" and cur is not None:
            rows[cur].append(line.split("|"))
    msgs = {}
    last = None
    for line in err.split("\n"):
        m = _MSG_RE.match(line)
        if m:
            idx = bisect.bisect_right(starts, int(m.group(1))) - 1
            last = {"level": m.group(2), "sqlstate": m.group(3) or "", "text": m.group(4)}
            msgs.setdefault(idx, []).append(last)
        elif line and last is not None:
            last["text"] += "\n" + line
        elif line:
            msgs.setdefault(-1, []).append({"level": "OTHER", "sqlstate": "", "text": line})
    for m in msgs.get(-1, []):
        if m["level"] in ("ERROR", "FATAL", "PANIC", "OTHER"):
            RES.fail("[%s] psql: %s" % (batch.name, m["text"]))
    if rc not in (0, 1) or (rc == 1 and not stop_on_error):
        RES.fail("[%s] psql exited with %d (connection lost / crash?): %s" %
                 (batch.name, rc, err.strip()[-2000:]))
    for i, it in enumerate(batch.items):
        errs = [m for m in msgs.get(i, []) if m["level"] in ("ERROR", "FATAL", "PANIC")]
        desc = "[%s] %s" % (batch.name, it.desc)
        if i not in rows:
            RES.fail("%s: not run (psql stopped before it)" % desc)
            continue
        if it.expect_error:
            try:
                RES.report(desc, it.fn(rows[i], errs))
            except Exception as e:  # a bug in a check must not hide the others
                RES.fail("%s: check raised %r" % (desc, e))
            continue
        if errs:
            RES.fail("%s: ERROR %s %s" % (desc, errs[0]["sqlstate"], errs[0]["text"]))
            continue
        if it.fn is not None:
            try:
                tc = time.time()
                RES.report(desc, it.fn(rows[i]))
                if "AMCONF_SLOW" in os.environ and time.time() - tc > 0.1:
                    log("  check %.2fs (%d rows) %s" % (time.time() - tc, len(rows[i]), desc[:120]))
            except Exception as e:
                traceback.print_exc()
                RES.fail("%s: check raised %r" % (desc, e))
    slow = sorted(times, key=lambda i: -times[i])[:int(os.environ.get("AMCONF_SLOW", "3"))]
    if times:
        log("  statements: %.1fs in total" % (sum(times.values()) / 1000))
    if slow and (times[slow[0]] > 300 or "AMCONF_SLOW" in os.environ):
        log("  slowest: " + "\n    ".join("%.0f ms %s" % (times[i], batch.items[i].desc[:120])
                                           for i in slow))
    log("batch %s: %d statements, psql %.1fs, checks %.1fs" %
        (batch.name, len(batch), t_psql, time.time() - t - t_psql))
    if stop_on_error and RES.failed > failed_before:
        raise RuntimeError("batch %s failed" % batch.name)
    return msgs


def psql_value(sql):
    rc, out, err = run_psql_script(sql + "\n", stop_on_error=True)
    if rc != 0:
        raise RuntimeError("psql failed: %s: %s" % (sql, err.strip()))
    return out.strip()


# --- data ---------------------------------------------------------------------

UTF8_WORDS = [
    "\u00dcberlauf", "\u00fcberlauf", "\u00dcBERLAUF", "na\u00efve", "NA\u00cfVE",
    "\u65e5\u672c\u8a9e", "\u6771\u4eac", "caf\u00e9", "CAF\u00c9", "stra\u00dfe",
    "\u03c9mega", "\u03a9MEGA", "\u0434\u0430\u043d\u043d\u044b\u0435",
    "\u0414\u0410\u041d\u041d\u042b\u0415", "\U0001f600smile", "r\u00e9sum\u00e9",
    "\u00e5ngstr\u00f6m", "\u0130stanbul", "\u00e9t\u00e9",
]
LOWER = "abcdefghijklmnopqrstuvwxyz"
# (delimiter, weight). NBSP and the em dash are UTF-8 (bytes >= 0x80): token
# bytes for the word tokenizer, so they glue their neighbours into one token.
SYN_DELIMS = [
    (" ", 600), ("\n", 60), (", ", 40), (". ", 30), ("\t", 20), ("-", 20), ("/", 15),
    (":", 15), ("=", 15), (" - ", 10), ("\r\n", 4), ("(", 5), (")", 5), ("[", 5),
    ("]", 5), ('"', 5), ("'", 5), (";", 5), ("\x01", 2), ("\x7f", 2), ("\x0b", 2),
    ("\x0c", 2), ("{", 2), ("}", 2), ("@", 2), ("#", 2), ("%", 2), ("!", 2), ("?", 2),
    ("\\", 2), ("|", 2), ("~", 2), ("  \t ", 3), ("\u00a0", 2), ("\u2014", 1),
]
PUNCT = " ,.;:-!?()[]{}#%&*+=<>/|~^\t\n\x01\x7f"
LONG_RUN_LENGTHS = [256, 300, 509, 510, 511, 600, 800]


def make_vocab(rng, size):
    words, seen = [], set()
    special = ["error", "info", "warn", "debug", "the", "block", "user", "id", "_",
               "__init__", "0", "1", "42", "x", "blk_", "e1", "a1b2c3"]
    for w in special + [w.lower() for w in UTF8_WORDS]:
        if w not in seen:
            seen.add(w)
            words.append(w)
    while len(words) < size:
        r = rng.random()
        n = min(1 + int(rng.expovariate(1 / 6.0)), 30)
        if r < 0.75:
            w = "".join(rng.choice(LOWER) for _ in range(n))
        elif r < 0.85:
            w = "".join(rng.choice(LOWER + "0123456789") for _ in range(n))
        elif r < 0.92:
            w = "".join(rng.choice(LOWER + "_") for _ in range(n))
        elif r < 0.97:
            w = str(rng.randrange(10 ** min(n, 12)))
        else:
            w = "".join(rng.choice(LOWER) for _ in range(n)) + rng.choice(UTF8_WORDS)
        if w not in seen:
            seen.add(w)
            words.append(w)
    head = words[:150]
    rng.shuffle(head)
    return head + words[150:]


class SynGen:
    """Deterministic synthetic row values."""

    def __init__(self, seed, vocab_size=20000):
        self.rng = rng = random.Random(seed)
        self.vocab = make_vocab(rng, vocab_size)
        cum, total = [], 0.0
        for rank in range(len(self.vocab)):
            total += 1.0 / (rank + 3.0) ** 1.05
            cum.append(total)
        self.cum = cum
        self.indexes = range(len(self.vocab))
        self.forms = []
        for i, w in enumerate(self.vocab):
            variants = [w]
            if i < 3000:
                variants = [w] * 17 + [w[:1].upper() + w[1:], w.upper(), w.upper(),
                                       "".join(c.upper() if rng.random() < 0.5 else c for c in w)]
            elif rng.random() < 0.05:
                variants = [w.upper()]
            self.forms.append(variants)
        self.delims = [d for d, _ in SYN_DELIMS]
        self.dweights = [w for _, w in SYN_DELIMS]
        self.serial = 0

    def words(self, n):
        rng = self.rng
        out = []
        rnd = rng.random
        forms = self.forms
        for i in rng.choices(self.indexes, cum_weights=self.cum, k=n):
            f = forms[i]
            out.append(f[0] if len(f) == 1 else f[int(rnd() * len(f))])
        return out

    def long_run(self):
        rng = self.rng
        n = rng.choice(LONG_RUN_LENGTHS)
        kind = rng.randrange(4)
        if kind == 0:
            return "A" * n if rng.random() < 0.5 else "a" * n
        if kind == 1:
            return ("Ab_9" * n)[:n]
        if kind == 2:
            return "".join(rng.choice(LOWER + "0123456789_") for _ in range(n))
        return "\u00e9\u65e5z" * (n // 6 + 1)   # 255-byte cuts fall inside characters

    def text(self, ntokens, extra=()):
        rng = self.rng
        ws = self.words(ntokens) + list(extra)
        if extra:
            rng.shuffle(ws)
        ds = rng.choices(self.delims, weights=self.dweights, k=len(ws))
        s = "".join(w + d for w, d in zip(ws, ds))
        if rng.random() < 0.4:
            s = s.rstrip(" ")
        return s

    def row(self):
        """A value: NULL, empty, punctuation only, or 1 to ~3000 tokens."""
        rng = self.rng
        self.serial += 1
        r = rng.random()
        if r < 0.02:
            return None
        if r < 0.03:
            return ""
        if r < 0.045:
            return "".join(rng.choice(PUNCT) for _ in range(rng.randrange(1, 120)))
        if r < 0.75:
            n = int(rng.expovariate(1 / 12.0)) + 1
        elif r < 0.96:
            n = int(rng.expovariate(1 / 250.0)) + 20
        else:
            n = rng.randrange(1000, 3001)
        extra = ["omnipresent"]
        if rng.random() < 0.5:
            extra.append("halfway")
        if rng.random() < 0.25:
            extra.append("uniqsyn%06d" % (self.serial + 1000 * (self.rng.randrange(1000))))
        if rng.random() < 0.01:
            extra.append("rareword")
        if rng.random() < 0.03:
            extra.append(self.long_run())
        if rng.random() < 0.05:
            extra.append(rng.choice(UTF8_WORDS))
        return self.text(n, extra)

    def short(self):
        return self.text(self.rng.randrange(1, 12))


def loghub_rows():
    """[(host, line)] of the Loghub sample, one row per line."""
    out = []
    for name in sorted(os.listdir(LOGHUB)):
        if not name.endswith(".log"):
            continue
        host = name[:-len("_2k.log")] if name.endswith("_2k.log") else name[:-4]
        with open(os.path.join(LOGHUB, name), "rb") as f:
            data = f.read()
        lines = data.split(b"\n")
        if lines and lines[-1] == b"":
            lines.pop()
        for line in lines:
            if line.endswith(b"\r"):
                line = line[:-1]
            if b"\x00" in line:
                continue
            try:
                out.append((host, line.decode("utf-8")))
            except UnicodeDecodeError:
                continue
    return out


BASE_TS = datetime.datetime(2024, 1, 1, tzinfo=datetime.timezone.utc)


def ts_of(rid):
    return (BASE_TS + datetime.timedelta(seconds=rid)).strftime("%Y-%m-%d %H:%M:%S+00")


def csv_field(v):
    if v is None:
        return ""
    if isinstance(v, int):
        return str(v)
    return '"' + v.replace('"', '""') + '"'


def copy_sql(table, rows):
    """COPY ... FROM STDIN (csv) with its data; rows: [(id, host, ts, body)]."""
    data = "".join(",".join(csv_field(v) for v in r) + "\n" for r in rows)
    for line in data.split("\n"):
        if line in ("\\.", "\\.\r"):
            raise ValueError("a CSV line reads as psql's end-of-data marker")
    return "COPY %s (id, host, ts, body) FROM STDIN (FORMAT csv);\n%s\\." % (table, data)


# --- the oracle over rows -----------------------------------------------------

def rkey(rid):
    return "%010d" % rid


class LazyPostings:
    """postings[t] of oracle.Corpus (the documents containing t, by index),
    computed for the terms a search asks for only: from the model's inverted
    index while the model has not moved on, else by scanning the documents."""

    def __init__(self, docs, df, model=None, version=None):
        self.docs = docs
        self.df = df
        self.model = model
        self.version = version
        self.pos = None
        self.cache = {}

    def get(self, term, default=()):
        if not self.df.get(term):
            return default
        v = self.cache.get(term)
        if v is None:
            m = self.model
            if m is not None and m._version == self.version:
                if self.pos is None:
                    self.pos = {int(d.path): i for i, d in enumerate(self.docs)}
                v = sorted(self.pos[r] for r in m._post[term])
            else:
                v = [i for i, d in enumerate(self.docs) if term in d.tf]
            self.cache[term] = v
        return v


class RowCorpus(oracle.Corpus):
    """oracle.Corpus over row values: one document per non-NULL value, its
    "path" the zero-padded id (so that the oracle's order is id order).
    Scoring and search are the oracle's own; N, df and avgdl are computed
    here as oracle.Corpus computes them (df kept up to date by Model)."""

    def __init__(self, docs, df, tokenizer, model=None, version=None):
        self.root = ""
        self.tokenizer = tokenizer
        self.docs = docs
        self.df = df
        self.N = sum(1 for d in self.docs if d.length > 0)
        self.total_tokens = sum(d.length for d in self.docs)
        self.avgdl = self.total_tokens / self.N if self.N else 0.0
        self.by_path = {d.path: d for d in self.docs}
        self.postings = LazyPostings(self.docs, self.df, model, version)
        self._idf = {}
        self._cache = {}

    @classmethod
    def of(cls, bodies, tokenizer):
        docs = []
        df = Counter()
        for rid in sorted(bodies):
            if bodies[rid] is not None:
                data = bodies[rid].encode("utf-8")
                docs.append(oracle.Doc(rkey(rid), len(data), Counter(oracle.tokenize(data, tokenizer))))
                df.update(docs[-1].tf.keys())
        return cls(docs, df, tokenizer)

    def idf(self, term, ranking):
        # Memoized; the formula is the oracle's.
        v = self._idf.get((term, ranking))
        if v is None:
            v = self._idf[(term, ranking)] = oracle.Corpus.idf(self, term, ranking)
        return v

    def expect(self, q):
        """Every match of q, best first: [(id, score)]."""
        key = (q.text, q.ranking, q.match)
        v = self._cache.get(key)
        if v is None:
            t = time.time()
            v = self._cache[key] = [(int(p), s) for p, s in
                                    self.search(q.text, None, q.ranking, q.match)]
            if "AMCONF_SLOW" in os.environ and time.time() - t > 0.1:
                log("  oracle %.2fs for %s" % (time.time() - t, q.describe()))
        return v


class Model:
    """What the table holds: rows[id] = [host, ts, body] (changed freely by
    the writers); corpus() is the oracle over the current live rows."""

    def __init__(self, table, index, tokenizer, cache):
        self.table = table
        self.index = index
        self.tokenizer = tokenizer
        self.cache = cache          # body -> (bytes, Counter of tokens)
        self.rows = {}
        self._corp = None
        self._bodies = {}           # id -> body at the last corpus()
        self._df = Counter()
        self._post = {}             # term -> ids of the rows containing it
        self._version = 0

    def changed(self):
        self._corp = None

    def _tf(self, body):
        ent = self.cache.get(body)
        if ent is None:
            ent = self.cache[body] = (len(body.encode("utf-8")),
                                      Counter(oracle.tokenize(body, self.tokenizer)))
        return ent

    def corpus(self):
        if self._corp is not None:
            return self._corp
        df = self._df
        cur = {i: r[2] for i, r in self.rows.items()}
        prev = self._bodies
        missing = object()
        post = self._post
        for i, b in prev.items():
            nb = cur.get(i, missing)
            if b is not None and nb is not b and nb != b:
                for t in self._tf(b)[1]:
                    c = df[t] - 1
                    post[t].discard(i)
                    if c:
                        df[t] = c
                    else:
                        del df[t]
                        del post[t]
        for i, b in cur.items():
            ob = prev.get(i, missing)
            if b is not None and ob is not b and ob != b:
                for t in self._tf(b)[1]:
                    df[t] += 1
                    s_ = post.get(t)
                    if s_ is None:
                        post[t] = {i}
                    else:
                        s_.add(i)
        self._bodies = cur
        self._version += 1
        docs = []
        for rid in sorted(cur):
            b = cur[rid]
            if b is not None:
                size, tf = self._tf(b)
                docs.append(oracle.Doc(rkey(rid), size, tf))
        corp = RowCorpus(docs, Counter(df), self.tokenizer, self, self._version)
        # A snapshot of the rows for the checks (the model changes later).
        corp.rows = {i: tuple(r) for i, r in self.rows.items()}
        corp.nulls = {i for i, b in cur.items() if b is None}
        self._corp = corp
        return corp

    def null_ids(self):
        return self.corpus().nulls


# --- queries ------------------------------------------------------------------

class Q:
    __slots__ = ("text", "ranking", "match", "note", "form")

    def __init__(self, text, ranking="tfidf", match="any", note="", form="f3"):
        self.text = text
        self.ranking = ranking
        self.match = match
        self.note = note
        self.form = form

    def expr(self, index=None):
        """The query as SQL, written in its form (all forms mean the same)."""
        t = sql_str(self.text)
        if index is not None:
            return "scipis_query(%s, %s, %s, %s)" % (t, sql_str(self.ranking),
                                                     sql_str(self.match), sql_str(index))
        plain = self.ranking == "tfidf" and self.match == "any"
        f = self.form
        if f == "lit" and plain:
            return t                                     # scipisquery input
        if f == "cast" and plain:
            return "%s::text" % t                        # the implicit text cast
        if f == "f1" and plain:
            return "scipis_query(%s)" % t
        if f == "f2" and self.match == "any":
            return "scipis_query(%s, %s)" % (t, sql_str(self.ranking))
        if f == "named":
            return "scipis_query(%s, match => %s, ranking => %s)" % (
                t, sql_str(self.match), sql_str(self.ranking))
        return "scipis_query(%s, %s, %s)" % (t, sql_str(self.ranking), sql_str(self.match))

    def describe(self):
        t = self.text if len(self.text) <= 80 else self.text[:60] + "...(%d chars)" % len(self.text)
        return "q=%r %s/%s%s" % (t, self.ranking, self.match,
                                 " [%s]" % self.note if self.note else "")


FORMS = ["lit", "cast", "f1", "f2", "f3", "named"]
_CONTROL = re.compile(rb"[\x00-\x1f\x7f]")


def usable_terms(corp):
    out = []
    for t in corp.df:
        if _CONTROL.search(t):
            continue
        try:
            out.append(t.decode("utf-8"))
        except UnicodeDecodeError:
            continue
    out.sort()
    return out


def valid_utf8(b):
    try:
        b.decode("utf-8")
        return True
    except UnicodeDecodeError:
        return False


def recase(rng, s):
    return "".join(c.upper() if c.isascii() and rng.random() < 0.5 else c for c in s)


class QueryMaker:
    def __init__(self, corp, rng):
        self.corp = corp
        self.rng = rng
        self.ws = corp.tokenizer == "whitespace"
        self.terms = usable_terms(corp)
        self.df = {t: corp.df[t.encode("utf-8")] for t in self.terms}
        self.usable = set(t.encode("utf-8") for t in self.terms)
        N = max(1, max(self.df.values()) if self.df else 1)
        self.rare = [t for t in self.terms if self.df[t] <= 3]
        self.mid = [t for t in self.terms if 3 < self.df[t] <= max(4, N // 20)]
        self.common = [t for t in self.terms if self.df[t] > max(4, N // 20)]
        self.pools = [p for p in (self.rare, self.mid, self.common) if p]
        self.seps = ([" ", "\t", "  ", "\x0b", " \x0c "] if self.ws else
                     [" ", ", ", " - ", "\t", "; ", "/", " (", ")+(", ".", "'", "\"", ":="])

    def q(self, text, ranking, match, note):
        rng = self.rng
        form = rng.choice(FORMS)
        return Q(text, ranking, match, note, form)

    def join(self, ts):
        out = ts[0]
        for t in ts[1:]:
            out += self.rng.choice(self.seps) + t
        return out

    def by_df(self, fractions, counts=(1, 2, 3, 5)):
        """Terms at document frequencies spread from 1 to the maximum."""
        N = self.corp.N
        targets = sorted(set(list(counts) + [max(1, round(N * f)) for f in fractions]))
        with_df = {}
        for t in self.terms:
            with_df.setdefault(self.df[t], []).append(t)
        dfs = sorted(with_df)
        chosen = []
        for tgt in targets:
            i = bisect.bisect_left(dfs, tgt)
            for j in (i, i - 1, i + 1, i - 2, i + 2):
                if 0 <= j < len(dfs):
                    cands = [t for t in with_df[dfs[j]] if t not in chosen]
                    if cands:
                        chosen.append(self.rng.choice(cands))
                        break
        top = max(self.terms, key=lambda t: (self.df[t], t))
        if top not in chosen:
            chosen.append(top)
        return chosen

    def cooccurring(self, n, notes="co-occurring"):
        rng = self.rng
        docs = [d for d in self.corp.docs if d.length > 1]
        out = []
        tries = 0
        while len(out) < n and tries < 50 * n:
            tries += 1
            d = rng.choice(docs)
            dterms = sorted(t.decode("utf-8") for t in d.tf if t in self.usable)
            if len(dterms) < 2:
                continue
            ts = rng.sample(dterms, min(len(dterms), rng.choice([2, 3, 4])))
            out.append(self.join(ts))
        return out

    def mixed(self, n):
        rng = self.rng
        out = []
        for _ in range(n):
            ts = [rng.choice(rng.choice(self.pools)) for _ in range(rng.choice([2, 3, 4]))]
            out.append(self.join(list(dict.fromkeys(ts))))
        return out

    def repeated(self, n):
        rng = self.rng
        out = []
        for i in range(n):
            a = rng.choice(rng.choice(self.pools))
            b = rng.choice(rng.choice(self.pools))
            shape = [[a, a], [a, a, b], [b, a, a, a], [a, b, a, b, a]][i % 4]
            out.append(self.join(shape))
        return out

    def mixed_case(self, n):
        rng = self.rng
        cased = [t for t in self.terms if any("a" <= c <= "z" for c in t)]
        return [self.join([recase(rng, rng.choice(cased)) for _ in range(1 + i % 3)])
                for i in range(n)]


# --- comparisons --------------------------------------------------------------

def close(a, b, rtol):
    return abs(a - b) <= rtol * max(abs(a), abs(b))


def tie_groups(expected):
    groups = []
    start = 0
    for i in range(1, len(expected) + 1):
        if i == len(expected) or not close(expected[i - 1][1], expected[i][1], TIE_RTOL):
            groups.append((start, i))
            start = i
    return groups


def parse_ranked(rows):
    """[(id, distance or None)] from 'id|distance' rows."""
    return [(int(r[0]), None if r[1] == "" else float(r[1])) for r in rows]


def compare_ranked(expected, got, k, where_match, eligible, null_ids, exact=True):
    """Compares an ORDER BY col <@> q [LIMIT k] result with the oracle.

    expected:    the oracle's matches among the rows the statement can return,
                 best first [(id, score)]
    got:         [(id, distance)] as returned
    where_match: the statement has WHERE col @@@ q (only matches come back)
    eligible:    how many rows pass the statement's other conditions
    exact:       compare scores and tie groups (False between VACUUMs, when
                 the statistics still count dead rows: only which rows)
    Rows past the matches (no WHERE @@@) must be non-matching rows: distance 0,
    or NULL for a NULL value, zeros first.
    """
    problems = []
    M = len(expected)
    n = M if k is None else min(k, M)
    total = n if where_match else (eligible if k is None else min(k, eligible))
    if len(got) != total:
        problems.append("expected %d rows (%d matches), got %d" % (total, M, len(got)))
    exp = dict(expected)
    seen = set()
    for i, (rid, d) in enumerate(got):
        if rid in seen:
            problems.append("id %d returned twice" % rid)
        seen.add(rid)
        if i < n:
            if rid not in exp:
                problems.append("rank %d: id %d is not a match per the oracle (distance %r)" %
                                (i + 1, rid, d))
            elif d is None or d >= 0:
                problems.append("rank %d: id %d matches but its distance is %r" % (i + 1, rid, d))
            elif exact and not close(-d, exp[rid], SCORE_RTOL):
                problems.append("rank %d: id %d score %r, oracle %r (rel diff %.3g)" %
                                (i + 1, rid, -d, exp[rid], abs(-d - exp[rid]) / exp[rid]))
        else:
            if rid in exp:
                problems.append("rank %d: id %d is a match (oracle %r) returned after %d rows" %
                                (i + 1, rid, exp[rid], n))
            want = None if rid in null_ids else 0.0
            if d != want:
                problems.append("rank %d: non-matching id %d has distance %r, want %r" %
                                (i + 1, rid, d, want))
    for i in range(len(got) - 1):
        d1, d2 = got[i][1], got[i + 1][1]
        if d1 is None and d2 is not None:
            problems.append("ranks %d,%d: NULL distance before %r" % (i + 1, i + 2, d2))
        elif d1 is not None and d2 is not None and d1 > d2 and not close(d1, d2, TIE_RTOL):
            problems.append("ranks %d,%d out of order: distances %r then %r" %
                            (i + 1, i + 2, d1, d2))
    if exact:
        for start, end in tie_groups(expected):
            if start >= n:
                break
            group = set(rid for rid, _ in expected[start:end])
            have = [rid for rid, _ in got[start:min(end, n)]]
            if end <= n:
                if set(have) != group:
                    miss = sorted(group - set(have))
                    extra = sorted(set(have) - group)
                    problems.append("ranks %d-%d (score %r): missing ids %s, unexpected %s" %
                                    (start + 1, end, expected[start][1], miss[:4], extra[:4]))
            else:
                bad = [r for r in have if r not in group]
                if bad:
                    problems.append("ranks %d-%d (tie group at the cut, score %r): unexpected %s"
                                    % (start + 1, n, expected[start][1], bad[:4]))
    if problems:
        for i in range(max(len(got), n)):
            e = expected[i] if i < n else None
            g = got[i] if i < len(got) else None
            if e is None or g is None or e[0] != g[0]:
                problems.append("first difference at rank %d: oracle %s, got %s" % (i + 1, e, g))
                break
    return problems


def compare_set(want, got_ids):
    problems = []
    if len(got_ids) != len(set(got_ids)):
        dups = [i for i, c in Counter(got_ids).items() if c > 1]
        problems.append("%d ids returned more than once, e.g. %s" % (len(dups), dups[:4]))
    got = set(got_ids)
    if got != want:
        miss = sorted(want - got)
        extra = sorted(got - want)
        problems.append("%d rows, oracle %d: missing %d %s, unexpected %d %s" %
                        (len(got), len(want), len(miss), miss[:5], len(extra), extra[:5]))
    return problems


# --- checks -------------------------------------------------------------------

FILTERS = [
    ("id %% 97 = 3", lambda rid, r: rid % 97 == 3),
    ("id %% 211 = 17", lambda rid, r: rid % 211 == 17),
    ("host = 'HDFS'", lambda rid, r: r[0] == "HDFS"),
    ("id %% 13 = 5 AND host <> 'synth'", lambda rid, r: rid % 13 == 5 and r[0] != "synth"),
    # Ranges of the filter columns (ts, id) of the variants that index them.
    ("ts >= '2024-01-01 00:20:00+00' AND ts < '2024-01-01 00:45:00+00'",
     lambda rid, r: "2024-01-01 00:20:00+00" <= r[1] < "2024-01-01 00:45:00+00"),
    ("id > 100200 AND ts <= '2024-01-02 04:30:00+00'",
     lambda rid, r: rid > 100200 and r[1] <= "2024-01-02 04:30:00+00"),
    ("id BETWEEN 5000 AND 5600 OR id = 100123", lambda rid, r: 5000 <= rid <= 5600 or rid == 100123),
]


class Checker:
    """Adds checks of one model (table + index) to batches."""

    def __init__(self, model):
        self.m = model

    def ranked(self, b, q, k, where_match, exact=True, filt=None, index=None, tag="",
               force_order=False):
        """SELECT id, col <@> q ... ORDER BY col <@> q [LIMIT k]; force_order:
        no sort and no bitmap scan, so the order comes from the index."""
        m = self.m
        e = q.expr(index)
        conds = []
        if filt:
            conds.append("(%s)" % filt[0].replace("%%", "%"))
        if where_match:
            conds.append("body @@@ %s" % e)
        sql = "SELECT id, body <@> %s FROM %s%s ORDER BY body <@> %s%s;" % (
            e, m.table, " WHERE " + " AND ".join(conds) if conds else "", e,
            "" if k is None else " LIMIT %d" % k)
        if force_order:
            sql = ("SET enable_sort = off; SET enable_bitmapscan = off; %s "
                   "RESET enable_sort; RESET enable_bitmapscan;" % sql)
        corp = m.corpus()
        rows = corp.rows
        nulls = corp.nulls

        def fn(out):
            expected = corp.expect(q)
            if filt:
                expected = [h for h in expected if filt[1](h[0], rows[h[0]])]
                eligible = sum(1 for rid, r in rows.items() if filt[1](rid, r))
            else:
                eligible = len(rows)
            return compare_ranked(expected, parse_ranked(out), k, where_match, eligible, nulls,
                                  exact)
        desc = "%s %s k=%s%s%s%s%s" % (tag or "ranked", q.describe(), k,
                                      " WHERE @@@" if where_match else "",
                                      " filter %s" % filt[0].replace("%%", "%") if filt else "",
                                      " index named" if index else "",
                                      " (ordered index scan forced)" if force_order else "")
        b.check(sql, fn, desc)

    def ranked_ids(self, b, q, k, where_match, tag="ranked ids"):
        """SELECT id (no distance in the select list) ... ORDER BY col <@> q
        LIMIT k: the ids in the oracle's order, modulo ties."""
        m = self.m
        e = q.expr()
        sql = "SELECT id FROM %s%s ORDER BY body <@> %s LIMIT %d;" % (
            m.table, " WHERE body @@@ %s" % e if where_match else "", e, k)
        corp = m.corpus()

        def fn(out):
            expected = corp.expect(q)
            exp = dict(expected)
            # Distances from the oracle: checks which rows, and their order.
            got = [(int(r[0]), -exp[int(r[0])] if int(r[0]) in exp else
                    (None if int(r[0]) in corp.nulls else 0.0)) for r in out]
            return compare_ranked(expected, got, k, where_match, len(corp.rows), corp.nulls)
        b.check(sql, fn, "%s %s k=%d%s" % (tag, q.describe(), k,
                                          " WHERE @@@" if where_match else ""))

    def matchset(self, b, q, index=None, count=False, tag="set"):
        m = self.m
        e = q.expr(index)
        corp = m.corpus()
        if count:
            sql = "SELECT count(*) FROM %s WHERE body @@@ %s;" % (m.table, e)

            def fn(out):
                want = len(corp.expect(q))
                got = int(out[0][0]) if out else None
                return [] if got == want else ["count %s, oracle %d" % (got, want)]
        else:
            sql = "SELECT id FROM %s WHERE body @@@ %s;" % (m.table, e)

            def fn(out):
                return compare_set({rid for rid, _ in corp.expect(q)}, [int(r[0]) for r in out])
        b.check(sql, fn, "%s %s%s%s" % (tag, "count " if count else "", q.describe(),
                                         " index named" if index else ""))

    def tiebreak(self, b, q, k=10):
        """ORDER BY col <@> q, id: within equal distances, ids ascend."""
        m = self.m
        e = q.expr()
        sql = "SELECT id, body <@> %s FROM %s WHERE body @@@ %s ORDER BY body <@> %s, id LIMIT %d;" \
            % (e, m.table, e, e, k)
        corp = m.corpus()
        nulls = m.null_ids()
        n = len(m.rows)

        def fn(out):
            got = parse_ranked(out)
            problems = compare_ranked(corp.expect(q), got, k, True, n, nulls)
            for i in range(len(got) - 1):
                if got[i][1] == got[i + 1][1] and got[i][0] > got[i + 1][0]:
                    problems.append("ranks %d,%d: equal distances, ids %d then %d" %
                                    (i + 1, i + 2, got[i][0], got[i + 1][0]))
            return problems
        b.check(sql, fn, "tiebreak %s" % q.describe())

    def seq_scores(self, b, q, named=True):
        """With index scans off: every match's distance (seq scan)."""
        m = self.m
        e = q.expr(m.index if named else None)
        corp = m.corpus()
        sql = "SELECT id, body <@> %s FROM %s WHERE body @@@ %s;" % (e, m.table, e)

        def fn(out):
            got = parse_ranked(out)
            expected = corp.expect(q)
            problems = compare_set({rid for rid, _ in expected}, [rid for rid, _ in got])
            exp = dict(expected)
            bad = [(rid, d, exp.get(rid)) for rid, d in got
                   if rid in exp and (d is None or not close(-d, exp[rid], SCORE_RTOL))]
            if bad:
                problems.append("%d scores differ, e.g. (id, distance, oracle score) %s" %
                                (len(bad), bad[:3]))
            return problems
        b.check(sql, fn, "seqscan scores %s%s" % (q.describe(), "" if named else " (unnamed)"))

    def seq_distances(self, b, q):
        """With index scans off: distance 0 for non-matching rows, NULL for NULL."""
        m = self.m
        e = q.expr(m.index)
        corp = m.corpus()
        nrows = len(m.rows)
        nnull = len(m.null_ids())
        sql = ("SELECT count(*), count(d), count(*) FILTER (WHERE d = 0), "
               "count(*) FILTER (WHERE d < 0) FROM (SELECT body <@> %s AS d FROM %s) s;"
               % (e, m.table))

        def fn(out):
            M = len(corp.expect(q))
            want = [nrows, nrows - nnull, nrows - nnull - M, M]
            got = [int(x) for x in out[0]] if out else None
            return [] if got == want else [
                "rows, non-NULL distances, zeros, negatives: %s, oracle %s" % (got, want)]
        b.check(sql, fn, "seqscan distances %s" % q.describe())

    def plan(self, b, sql, want, desc):
        def fn(out):
            text = "\n".join("|".join(r) for r in out)
            return [] if re.search(want, text) else ["plan does not match /%s/: %s" %
                                                      (want, text.replace("\n", " / "))]
        b.check("EXPLAIN (COSTS OFF) %s;" % sql, fn, "plan " + desc)

    def self_consistent(self, b_idx, b_seq, q, k=10):
        """Between VACUUMs: the index's top k equal the best k by the engine's
        own per-row distances (same statistics, dead rows included), and the
        match set equals the oracle's over the live rows. b_idx statements run
        before b_seq's in the same session, with no writes in between."""
        m = self.m
        e = q.expr()
        en = q.expr(m.index)
        holder = {}
        corp = m.corpus()
        sql1 = "SELECT id, body <@> %s FROM %s WHERE body @@@ %s ORDER BY body <@> %s LIMIT %d;" \
            % (e, m.table, e, e, k)

        def fn1(out):
            holder["idx"] = parse_ranked(out)
            return []
        b_idx.check(sql1, fn1, "consistency (index part) %s" % q.describe())
        sql2 = "SELECT id, body <@> %s FROM %s WHERE body @@@ %s;" % (en, m.table, en)

        def fn2(out):
            allrows = parse_ranked(out)
            problems = compare_set({rid for rid, _ in corp.expect(q)}, [r for r, _ in allrows])
            if "idx" not in holder:
                return problems + ["index part missing"]
            engine = sorted(((rid, -d) for rid, d in allrows if d is not None),
                            key=lambda h: (-h[1], h[0]))
            problems += compare_ranked(engine, holder["idx"], k, True, len(allrows), set(),
                                       exact=True)
            return problems
        b_seq.check(sql2, fn2, "consistency: index top %d vs per-row distances %s" %
                    (k, q.describe()))


HAVE_INDEX_CHECK = False    # scipis_index_check() exists (set in main)


def index_check(b, m, when):
    """scipis_index_check(index): no rows when the index and table agree."""
    if not HAVE_INDEX_CHECK:
        return
    b.check("SELECT problem, tid, detail FROM scipis_index_check(%s) LIMIT 5;" % sql_str(m.index),
            lambda out: ["%s" % out] if out else [], "scipis_index_check %s" % when)


def set_seq_mode(b, on):
    if on:
        b.sql("SET enable_indexscan = off;")
        b.sql("SET enable_bitmapscan = off;")
    else:
        b.sql("RESET enable_indexscan;")
        b.sql("RESET enable_bitmapscan;")


# --- suites -------------------------------------------------------------------

def full_suite(ck, rng, b, nseq=30):
    """The complete query suite on the current state (statistics exact)."""
    m = ck.m
    corp = m.corpus()
    qm = QueryMaker(corp, rng)
    ws = qm.ws
    nq = 0
    setq = {}

    def want_set(q):
        setq.setdefault((q.text, q.match), q)

    # 1. Single terms across the df range, both rankings, k = 1, 10, all.
    singles = qm.by_df((0.0003, 0.001, 0.003, 0.01, 0.03, 0.1, 0.3))
    for t in singles:
        for ranking in ("tfidf", "bm25"):
            for k in (1, 10, None):
                q = qm.q(t, ranking, "any", "df=%d" % qm.df[t])
                ck.ranked(b, q, k, where_match=(k is None or rng.random() < 0.3),
                          force_order=(k is None and ranking == "bm25"))
                nq += 1
            want_set(q)
    # 2. 2-4 co-occurring terms (any/all), 3. mixed df, 4. qf > 1.
    for texts, note in ((qm.cooccurring(26), "co-occurring"), (qm.mixed(16), "mixed df")):
        for text in texts:
            for match in ("any", "all"):
                q = qm.q(text, rng.choice(["tfidf", "bm25"]), match, note)
                k = rng.choice([1, 10, None, 3])
                ck.ranked(b, q, k, where_match=(k is None or rng.random() < 0.5),
                          force_order=(k is None and match == "all"))
                want_set(q)
                nq += 1
    for i, text in enumerate(qm.repeated(12)):
        q = qm.q(text, ("tfidf", "bm25")[i % 2], ("any", "all")[(i // 2) % 2], "qf>1")
        ck.ranked(b, q, rng.choice([1, 10, None]), where_match=True)
        want_set(q)
        nq += 1
    # Many terms.
    for n, match in ((12, "any"), (40, "any"), (8, "all")):
        ts = [rng.choice(rng.choice(qm.pools)) for _ in range(n)]
        q = qm.q(qm.join(ts), ("tfidf", "bm25")[n % 2], match, "%d terms" % n)
        ck.ranked(b, q, 10, where_match=False)
        want_set(q)
        nq += 1
    # 5. Mixed case; non-ASCII case is kept.
    for i, text in enumerate(qm.mixed_case(12)):
        q = qm.q(text, ("tfidf", "bm25")[i % 2], ("any", "all")[(i // 3) % 2], "mixed case")
        ck.ranked(b, q, rng.choice([1, 10, None]), where_match=(i % 2 == 0))
        want_set(q)
        nq += 1
    for w in UTF8_WORDS[:12]:
        q = qm.q(w, rng.choice(["tfidf", "bm25"]), "any", "UTF-8")
        ck.ranked(b, q, rng.choice([10, None]), where_match=True)
        want_set(q)
        nq += 1
    # 6. Absent terms (alone, and with present ones).
    absent = ["zzqxjvnotaword", "Qwxyzzy9absent", "\u00dcbernotthere"]
    mid = singles[len(singles) // 2]
    for text, ranking, match, k in (
            (absent[0], "tfidf", "any", 10), (absent[1], "bm25", "all", None),
            (qm.join(absent[:2]), "tfidf", "any", None), (qm.join([absent[0], mid]), "bm25", "any", 10),
            (qm.join([mid, absent[2]]), "tfidf", "all", None),
            (qm.join([absent[2], mid, mid]), "bm25", "any", None)):
        q = qm.q(text, ranking, match, "absent")
        ck.ranked(b, q, k, where_match=(k is None))
        want_set(q)
        nq += 1
    # 7. Long terms (cut into 255-byte pieces, like the values).
    for text in ("A" * 600, "a" * 256, "Ab_9" * 75, "\u00e9\u65e5z" * 90, "q" * 255,
                 "A" * 300 + " halfway"):
        q = qm.q(text, rng.choice(["tfidf", "bm25"]), "any", "long term")
        ck.ranked(b, q, rng.choice([10, None]), where_match=True)
        want_set(q)
        nq += 1
    # 8. Delimiter-rich query text.
    t3 = rng.sample(singles, min(3, len(singles)))
    texts = (["\t".join(t3) + " \x0b "] if ws else
             ["--" + "::[".join(t3) + "]...", "(" + ")&(".join(t3) + ")",
              "2015-10-18 ERROR [main] blk_-1608 10.251.42.84:50010 \u00dcberlauf"])
    for text in texts:
        for match in ("any", "all"):
            q = qm.q(text, "bm25", match, "delimiters")
            ck.ranked(b, q, 10, where_match=True)
            want_set(q)
            nq += 1
    # Row sets and counts of every distinct (text, match).
    for i, q in enumerate(setq.values()):
        ck.matchset(b, q, count=(i % 4 == 3))
        nq += 1
    # Top 10 under a selective extra filter (the resumable ordered scan).
    frequent = [t for t in singles if qm.df[t] >= corp.N * 0.05] or singles[-3:]
    fq = ([qm.q(t, r, "any", "filter") for t in frequent for r in ("tfidf", "bm25")] +
          [qm.q(text, "bm25", "any", "filter") for text in qm.mixed(2)])
    for i, q in enumerate(fq):
        filt = FILTERS[i % len(FILTERS)]
        ck.ranked(b, q, 10, where_match=bool(i % 2), filt=filt)
        ck.ranked(b, q, 1, where_match=True, filt=FILTERS[(i + 1) % len(FILTERS)])
        nq += 2
    # Equal distances in id order.
    for t in singles[:4] + singles[-2:]:
        ck.tiebreak(b, qm.q(t, "tfidf", "any", "tiebreak"))
        nq += 1
    # Sequential scans: the operators' own functions, the index named.
    if nseq:
        seqq = [qm.q(t, r, "any", "seq") for t in singles[::2] for r in ("tfidf", "bm25")]
        seqq += [qm.q(text, rng.choice(["tfidf", "bm25"]), mt, "seq")
                 for text in qm.cooccurring(6) for mt in ("any", "all")]
        seqq += [qm.q(w, "bm25", "any", "seq") for w in UTF8_WORDS[:3]]
        seqq = seqq[:nseq]
        set_seq_mode(b, True)
        ck.plan(b, "SELECT id FROM %s WHERE body @@@ %s" % (m.table, seqq[0].expr(m.index)),
                r"Seq Scan on %s" % m.table, "seq scan with index scans off")
        for i, q in enumerate(seqq):
            ck.seq_scores(b, q, named=(i % 5 != 4))
            if i % 3 == 0:
                ck.seq_distances(b, q)
            if i % 4 == 1:
                ck.ranked(b, q, 10, where_match=True, index=m.index, tag="seqscan sort")
            nq += 1
        set_seq_mode(b, False)
    return nq, singles


def after_vacuum_suite(ck, rng, b, nranked=40, nseq=6, extra_texts=()):
    """A smaller suite with exact scores, after a VACUUM."""
    corp = ck.m.corpus()
    qm = QueryMaker(corp, rng)
    singles = qm.by_df((0.001, 0.01, 0.05, 0.2, 0.5))
    qs = []
    for t in singles:
        qs.append(qm.q(t, rng.choice(["tfidf", "bm25"]), "any", "df=%d" % qm.df[t]))
    for text in qm.cooccurring(max(0, (nranked - len(qs)) // 2)) + list(extra_texts):
        qs.append(qm.q(text, rng.choice(["tfidf", "bm25"]), rng.choice(["any", "all"]), "co"))
    for text in qm.mixed(max(0, nranked - len(qs))):
        qs.append(qm.q(text, rng.choice(["tfidf", "bm25"]), rng.choice(["any", "all"]), "mixed"))
    for i, q in enumerate(qs):
        k = (1, 10, None)[i % 3]
        ck.ranked(b, q, k, where_match=(k is None or i % 2 == 0), force_order=(i % 6 == 2))
        ck.matchset(b, q, count=(i % 5 == 0))
    frequent = [t for t in singles if qm.df[t] >= corp.N * 0.02] or singles[-2:]
    for i, t in enumerate(frequent[:3]):
        q = qm.q(t, ("tfidf", "bm25")[i % 2], "any", "filter")
        ck.ranked(b, q, 10, where_match=False, filt=FILTERS[i % len(FILTERS)])
        ck.ranked(b, q, 10, where_match=True, filt=FILTERS[(i + 1) % len(FILTERS)])
    # Ranges of the filter columns: k = 10, 1 and all, any and all terms.
    ranged = frequent[:2] + singles[:1] + qm.cooccurring(2, "range")
    for i, filt in enumerate(FILTERS[4:]):
        for j, text in enumerate(ranged):
            q = qm.q(text, ("tfidf", "bm25")[(i + j) % 2], ("any", "all")[j // 3 % 2], "range")
            ck.ranked(b, q, (10, 1, None)[(i + j) % 3], where_match=((i + j) % 2 == 1), filt=filt)
    if nseq:
        set_seq_mode(b, True)
        for q in qs[:nseq]:
            ck.seq_scores(b, q)
        set_seq_mode(b, False)
    return qs


# --- mutations ----------------------------------------------------------------

class Mutator:
    def __init__(self, model, gen, rng, next_id):
        self.m = model
        self.gen = gen
        self.rng = rng
        self.next_id = next_id

    def new_id(self):
        self.next_id += 1
        return self.next_id

    def _add(self, rid):
        if rid not in self.pos:
            self.pos[rid] = len(self.ids)
            self.ids.append(rid)

    def _remove(self, rid):
        i = self.pos.pop(rid)
        last = self.ids.pop()
        if last != rid:
            self.ids[i] = last
            self.pos[last] = i

    def round(self, b, size, ncopy, rnd, victims=()):
        """Random INSERT / UPDATE / DELETE / COPY statements, applied to the
        model in the same order. victims: queries whose best rows are updated
        or deleted (so that the ordered scan meets many dead entries first).
        Returns words to query: those the round introduced, and the rarest
        word of some deleted or overwritten values."""
        m, rng, gen = self.m, self.rng, self.gen
        t = m.table
        fresh = "freshterm%d" % rnd
        appended = "appendedterm%d" % rnd
        moved = "movedterm%d" % rnd
        self.ids = sorted(m.rows)
        self.pos = {rid: i for i, rid in enumerate(self.ids)}
        self.gone = []      # values deleted or overwritten
        synth = [rid for rid in self.ids if m.rows[rid][0] == "synth"]
        ops = (["copy"] * 2 + ["insert"] * (size // 4) + ["update"] * (size // 4) +
               ["delete"] * (size // 6) + ["update_null"] * 3 + ["reinsert"] * 4 +
               ["bulk_append", "bulk_host", "bulk_delete", "bulk_move"])
        rng.shuffle(ops)
        deleted = []
        for op in ops:
            ids = self.ids
            if op == "copy":
                rows = []
                for _ in range(ncopy):
                    rid = self.new_id()
                    # Half new values, half copies of existing synthetic ones.
                    src = m.rows.get(rng.choice(synth)) if synth and rng.random() >= 0.5 else None
                    body = src[2] if src is not None else gen.row()
                    if body is not None and rng.random() < 0.2:
                        body += " " + fresh
                    rows.append((rid, "copy%d" % rnd, ts_of(rid), body))
                b.sql(copy_sql(t, rows), "COPY %d rows" % len(rows))
                for rid, host, ts, body in rows:
                    m.rows[rid] = [host, ts, body]
                    self._add(rid)
            elif op == "insert":
                rid = self.new_id()
                body = gen.short() + (" " + fresh if rng.random() < 0.3 else "")
                b.sql("INSERT INTO %s (id, host, ts, body) VALUES (%d, 'ins', %s, %s);" %
                      (t, rid, sql_str(ts_of(rid)), sql_str(body)))
                m.rows[rid] = ["ins", ts_of(rid), body]
                self._add(rid)
            elif op == "update":
                rid = rng.choice(ids)
                self.gone.append(m.rows[rid][2])
                body = gen.short() if rng.random() < 0.8 else rng.choice(["", "-- ;;", gen.row() or "x"])
                b.sql("UPDATE %s SET body = %s WHERE id = %d;" % (t, sql_str(body), rid))
                m.rows[rid][2] = body
            elif op == "update_null":
                rid = rng.choice(ids)
                if m.rows[rid][2] is None:
                    body = gen.short()
                    b.sql("UPDATE %s SET body = %s WHERE id = %d;" % (t, sql_str(body), rid))
                    m.rows[rid][2] = body
                else:
                    b.sql("UPDATE %s SET body = NULL WHERE id = %d;" % (t, rid))
                    m.rows[rid][2] = None
            elif op == "delete":
                rid = rng.choice(ids)
                self.gone.append(m.rows[rid][2])
                b.sql("DELETE FROM %s WHERE id = %d;" % (t, rid))
                del m.rows[rid]
                self._remove(rid)
                deleted.append(rid)
            elif op == "reinsert":
                # A deleted id again, with a new value.
                if deleted:
                    rid = deleted.pop()
                    body = gen.short() + " " + fresh
                    b.sql("INSERT INTO %s (id, host, ts, body) VALUES (%d, 'again', %s, %s);" %
                          (t, rid, sql_str(ts_of(rid)), sql_str(body)))
                    m.rows[rid] = ["again", ts_of(rid), body]
                    self._add(rid)
            elif op == "bulk_append":
                r = rng.randrange(53)
                b.sql("UPDATE %s SET body = body || ' %s' WHERE id %% 53 = %d;" % (t, appended, r))
                for rid in ids:
                    if rid % 53 == r and m.rows[rid][2] is not None:
                        m.rows[rid][2] += " " + appended
            elif op == "bulk_host":
                # Not the indexed column: HOT updates where the page has room.
                r = rng.randrange(29)
                b.sql("UPDATE %s SET host = host || 'x' WHERE id %% 29 = %d;" % (t, r))
                for rid in ids:
                    if rid % 29 == r:
                        m.rows[rid][0] += "x"
            elif op == "bulk_delete":
                r = rng.randrange(41)
                b.sql("DELETE FROM %s WHERE id %% 41 = %d;" % (t, r))
                for rid in list(ids):
                    if rid % 41 == r:
                        del m.rows[rid]
                        self._remove(rid)
            elif op == "bulk_move":
                r = rng.randrange(67)
                b.sql("UPDATE %s SET body = %s WHERE id %% 67 = %d AND body IS NOT NULL;" %
                      (t, sql_str("%s replaced value" % moved), r))
                for rid in ids:
                    if rid % 67 == r and m.rows[rid][2] is not None:
                        m.rows[rid][2] = "%s replaced value" % moved
            m.changed()
        # The best rows of some queries: updated (half) or deleted (half).
        words = [fresh, appended, moved]
        corp = m.corpus() if victims else None
        for q in victims:
            best = [rid for rid, _ in corp.expect(q)[:150] if rid in m.rows]
            if not best:
                continue
            half = best[::2]
            rest = best[1::2]
            b.sql("UPDATE %s SET body = %s WHERE id IN (%s);" %
                  (t, sql_str("%s replaced value" % moved), ",".join(map(str, half))),
                  "UPDATE the best rows of %s" % q.describe())
            for rid in half:
                m.rows[rid][2] = "%s replaced value" % moved
            b.sql("DELETE FROM %s WHERE id IN (%s);" % (t, ",".join(map(str, rest))),
                  "DELETE the best rows of %s" % q.describe())
            for rid in rest:
                del m.rows[rid]
            m.changed()
        # Words of values deleted or overwritten: their rarest token (often
        # gone from the table altogether).
        before = corp or m.corpus()
        for body in self.gone[:8]:
            toks = [tk for tk in oracle.tokenize(body or "", m.tokenizer)
                    if not _CONTROL.search(tk)]
            toks = [tk.decode("utf-8") for tk in toks if valid_utf8(tk)]
            if toks:
                words.append(min(toks, key=lambda tk: (before.df.get(tk.encode("utf-8"), 0), tk)))
        return words


def between_vacuums_suite(ck, rng, b, words, victims, n=40):
    """After writes, before VACUUM: row sets, top-k sizes, self-consistency."""
    m = ck.m
    corp = m.corpus()
    qm = QueryMaker(corp, rng)
    qs = [qm.q(w, rng.choice(["tfidf", "bm25"]), "any", "new word") for w in words]
    qs += [Q(v.text, v.ranking, v.match, "victim", "f3") for v in victims]
    singles = qm.by_df((0.001, 0.01, 0.1, 0.3))
    qs += [qm.q(t, rng.choice(["tfidf", "bm25"]), "any", "df=%d" % qm.df[t]) for t in singles]
    qs += [qm.q(text, rng.choice(["tfidf", "bm25"]), rng.choice(["any", "all"]), "co")
           for text in qm.cooccurring(max(0, n - len(qs)))]
    for i, q in enumerate(qs):
        ck.matchset(b, q, count=(i % 6 == 5))
        k = (10, 1, 100)[i % 3]
        ck.ranked(b, q, k, where_match=(i % 2 == 0), exact=False, tag="live top-k")
    for i, q in enumerate(qs[:6]):
        ck.ranked(b, q, 10, where_match=bool(i % 2), exact=False, filt=FILTERS[i % len(FILTERS)],
                  tag="live top-k")
    b2 = Batch(b.name)
    for q in qs[:12]:
        ck.self_consistent(b, b2, q)
    set_seq_mode(b, True)
    b.items.extend(b2.items)
    for q in qs[12:18]:
        ck.matchset(b, q, index=m.index, tag="seqscan set")
    set_seq_mode(b, False)
    return qs


def vacuum(table, desc, plain=True):
    """VACUUM until no dead row is left that could not be removed."""
    for attempt in range(20):
        b = Batch("vacuum %s" % desc)
        b.sql("VACUUM (VERBOSE%s) %s;" % ("" if plain else ", INDEX_CLEANUP ON", table))
        msgs = run_batch(b)
        text = "\n".join(x["text"] for ms in msgs.values() for x in ms if x["level"] == "INFO")
        m = re.search(r"finished vacuuming \"[^\"]*\.%s\".*?(\d+) are dead but not yet removable"
                      % table, text, re.S)
        not_removable = int(m.group(1)) if m else 0
        bypass = re.search(r"finished vacuuming \"[^\"]*\.%s\".*?index scan bypassed" % table,
                           text, re.S)
        if bypass:
            log("VACUUM %s: index scan bypassed" % table)
        if not_removable == 0:
            return bool(bypass)
        log("VACUUM %s: %d dead rows not yet removable, again" % (table, not_removable))
        time.sleep(0.5)
    RES.fail("VACUUM %s: dead rows stay not removable" % table)
    return False


# --- variants -----------------------------------------------------------------

def create_table(b, table):
    b.sql("DROP TABLE IF EXISTS %s;" % table)
    b.sql("CREATE TABLE %s (id int PRIMARY KEY, host text, ts timestamptz, body text) "
          "WITH (autovacuum_enabled = off);" % table)


def load_rows(model, rows, b, chunk=None):
    chunk = chunk or len(rows)
    for i in range(0, len(rows), chunk):
        part = rows[i:i + chunk]
        b.sql(copy_sql(model.table, part), "COPY %d rows" % len(part))
    for rid, host, ts, body in rows:
        model.rows[rid] = [host, ts, body]
    model.changed()


_BASE = {}


def base_rows(seed, nsyn, loghub_hosts=None):
    """The Loghub rows (ids from 1, of the given hosts) and the first nsyn
    synthetic rows (ids from 100001; the same values in every variant), and
    a generator (seeded by seed) for the values the variant writes later."""
    if not _BASE:
        _BASE["loghub"] = loghub_rows()
        g = SynGen(7)
        _BASE["synth"] = [g.row() for _ in range(3000)]
    rows = []
    rid = 0
    for host, line in _BASE["loghub"]:
        rid += 1
        if loghub_hosts is None or host in loghub_hosts:
            rows.append((rid, host, ts_of(rid), line))
    assert nsyn <= len(_BASE["synth"])
    for i in range(nsyn):
        rows.append((100001 + i, "synth", ts_of(100001 + i), _BASE["synth"][i]))
    return rows, SynGen(seed)


def variant_main(cache):
    """Default options; the full suite; two rounds of writes with MVCC."""
    t = PREFIX + "main"
    m = Model(t, t + "_idx", "word", cache)
    ck = Checker(m)
    rng = random.Random(1001)
    rows, gen = base_rows(107, 3000)
    b = Batch("main: load")
    create_table(b, t)
    load_rows(m, rows, b)
    b.sql("CREATE INDEX %s ON %s USING scipis (body);" % (m.index, t))
    run_batch(b, stop_on_error=True)
    log("main: %d rows, N=%d, %d tokens, %d terms" %
        (len(m.rows), m.corpus().N, m.corpus().total_tokens, len(m.corpus().df)))

    b = Batch("main: after CREATE INDEX")
    e = Q("halfway", "bm25", "any", form="f3").expr()
    ck.plan(b, "SELECT id FROM %s ORDER BY body <@> %s LIMIT 10" % (t, e),
            r"Index Scan using %s" % m.index, "ORDER BY <@> LIMIT")
    ck.plan(b, "SELECT id FROM %s WHERE body @@@ %s ORDER BY body <@> %s LIMIT 10" % (t, e, e),
            r"Index Scan using %s" % m.index, "WHERE @@@ ORDER BY <@> LIMIT")
    b.sql("SET enable_sort = off; SET enable_bitmapscan = off;")
    ck.plan(b, "SELECT id FROM %s WHERE body @@@ %s ORDER BY body <@> %s" % (t, e, e),
            r"Index Scan using %s(.|\n)*Order By" % m.index,
            "WHERE @@@ ORDER BY <@> with sorts and bitmap scans off")
    b.sql("RESET enable_sort; RESET enable_bitmapscan;")
    ck.plan(b, "SELECT id FROM %s WHERE body @@@ %s" % (t, e),
            r"(Bitmap Index|Index) Scan (on|using) %s" % m.index, "WHERE @@@")
    ck.plan(b, "SELECT id FROM %s WHERE id %% 97 = 3 ORDER BY body <@> %s LIMIT 10" % (t, e),
            r"Index Scan using %s" % m.index, "filter ORDER BY <@> LIMIT")
    index_check(b, m, "after CREATE INDEX")
    nq, singles = full_suite(ck, rng, b)
    log("main: %d queries" % nq)
    run_batch(b)

    mut = Mutator(m, gen, rng, 200000)
    qm = QueryMaker(m.corpus(), rng)
    victims = [Q(t_, "tfidf", "any", "victim", "f3") for t_ in singles[-4:-1]]
    for rnd, size, ncopy in ((1, 300, 150), (2, 1000, 2600)):
        b = Batch("main: writes round %d" % rnd)
        words = mut.round(b, size, ncopy, rnd, victims if rnd == 1 else
                          [Q(qm.join(singles[-3:-1]), "bm25", "any", "victim", "f3")])
        run_batch(b)
        b = Batch("main: between VACUUMs round %d" % rnd)
        if rnd == 2:
            index_check(b, m, "after writes")
        between_vacuums_suite(ck, rng, b, words, victims, n=(24 if rnd == 1 else 32))
        if rnd == 2:
            mvcc_same_session(ck, b, mut)
        run_batch(b)
        if rnd == 2:
            mvcc_two_sessions(ck, mut)
        vacuum(t, "main round %d" % rnd)
        b = Batch("main: after VACUUM round %d" % rnd)
        if rnd == 2:
            index_check(b, m, "after VACUUM")
        after_vacuum_suite(ck, rng, b, nranked=40,
                           extra_texts=words + [v.text for v in victims])
        run_batch(b)
    small_vacuum(ck)
    two_indexes(ck, rng)
    b = Batch("main: drop")
    b.sql("DROP TABLE %s;" % t)
    run_batch(b)


def variant_pending(cache):
    """pending_limit = 64: the index created empty, every row inserted
    through the pending list, merged into segments every 64 kB."""
    t = PREFIX + "pend"
    m = Model(t, t + "_idx", "word", cache)
    ck = Checker(m)
    rng = random.Random(2002)
    rows, gen = base_rows(108, 2000, loghub_hosts={"HDFS", "Linux", "Mac", "OpenStack", "Spark"})
    b = Batch("pend: load")
    create_table(b, t)
    b.sql("CREATE INDEX %s ON %s USING scipis (body, ts) WITH (pending_limit = 64);" % (m.index, t))
    load_rows(m, rows, b, chunk=700)
    run_batch(b, stop_on_error=True)
    log("pend: %d rows, N=%d" % (len(m.rows), m.corpus().N))
    b = Batch("pend: after inserts")
    index_check(b, m, "after inserts")
    after_vacuum_suite(ck, rng, b, nranked=45, nseq=6)
    run_batch(b)
    mut = Mutator(m, gen, rng, 300000)
    singles = QueryMaker(m.corpus(), rng).by_df((0.05, 0.2))
    victims = [Q(s, "bm25", "any", "victim", "f3") for s in singles[-2:]]
    b = Batch("pend: writes")
    words = mut.round(b, 1200, 700, 1, victims)
    run_batch(b)
    b = Batch("pend: between VACUUMs")
    index_check(b, m, "after writes")
    between_vacuums_suite(ck, rng, b, words, victims, n=30)
    run_batch(b)
    vacuum(t, "pend")
    b = Batch("pend: after VACUUM")
    index_check(b, m, "after VACUUM")
    after_vacuum_suite(ck, rng, b, nranked=30, extra_texts=words + [v.text for v in victims])
    run_batch(b)
    b = Batch("pend: drop")
    b.sql("DROP TABLE %s;" % t)
    run_batch(b)


def variant_tiny(cache):
    """tfidf_index_size = 1 (1 MB of build memory: many segments)."""
    t = PREFIX + "tiny"
    m = Model(t, t + "_idx", "word", cache)
    ck = Checker(m)
    rng = random.Random(3003)
    rows, gen = base_rows(109, 2500, loghub_hosts={"Android", "BGL", "HDFS", "HPC", "Hadoop",
                                                 "Thunderbird", "Windows", "Zookeeper"})
    b = Batch("tiny: load")
    create_table(b, t)
    load_rows(m, rows, b)
    b.sql("CREATE INDEX %s ON %s USING scipis (body, ts, id) WITH (tfidf_index_size = 1, "
          "indexer_threads = 2);" % (m.index, t))
    run_batch(b, stop_on_error=True)
    log("tiny: %d rows, N=%d" % (len(m.rows), m.corpus().N))
    b = Batch("tiny: after CREATE INDEX")
    e = Q("halfway", "bm25", "any", form="f3").expr()
    ck.plan(b, "SELECT id FROM %s WHERE body @@@ %s AND ts >= '2024-01-01 00:20:00+00' "
            "ORDER BY body <@> %s LIMIT 10" % (t, e, e),
            r"Index Scan using %s(.|\n)*Index Cond: .*ts >= " % m.index,
            "filter column condition in the index")
    index_check(b, m, "after CREATE INDEX")
    after_vacuum_suite(ck, rng, b, nranked=45, nseq=6)
    run_batch(b)
    mut = Mutator(m, gen, rng, 300000)
    singles = QueryMaker(m.corpus(), rng).by_df((0.1, 0.3))
    victims = [Q(s, "tfidf", "any", "victim", "f3") for s in singles[-2:]]
    b = Batch("tiny: writes")
    words = mut.round(b, 500, 200, 1, victims)
    run_batch(b)
    b = Batch("tiny: between VACUUMs")
    index_check(b, m, "after writes")
    between_vacuums_suite(ck, rng, b, words, victims, n=20)
    run_batch(b)
    vacuum(t, "tiny")
    b = Batch("tiny: after VACUUM")
    index_check(b, m, "after VACUUM")
    after_vacuum_suite(ck, rng, b, nranked=30, extra_texts=words + [v.text for v in victims])
    run_batch(b)
    b = Batch("tiny: drop")
    b.sql("DROP TABLE %s;" % t)
    run_batch(b)


def variant_whitespace(cache):
    """tokenizer = 'whitespace', one indexer thread, a small table: whole
    ORDER BY <@> without LIMIT (matches, then zeros, then NULLs)."""
    t = PREFIX + "ws"
    m = Model(t, t + "_idx", "whitespace", cache)
    ck = Checker(m)
    rng = random.Random(4004)
    gen = SynGen(10, vocab_size=3000)
    rows = [(i, "synth", ts_of(i), gen.row()) for i in range(1, 701)]
    b = Batch("ws: load")
    create_table(b, t)
    load_rows(m, rows, b)
    b.sql("CREATE INDEX %s ON %s USING scipis (body) WITH (tokenizer = 'whitespace', "
          "indexer_threads = 1);" % (m.index, t))
    run_batch(b, stop_on_error=True)
    b = Batch("ws: after CREATE INDEX")
    qs = after_vacuum_suite(ck, rng, b, nranked=30, nseq=4)
    for q in qs[:8]:
        ck.ranked(b, q, None, where_match=False, tag="whole order")
    run_batch(b)
    mut = Mutator(m, gen, rng, 1000)
    b = Batch("ws: writes")
    words = mut.round(b, 120, 60, 1)
    run_batch(b)
    vacuum(t, "ws")
    b = Batch("ws: after VACUUM")
    index_check(b, m, "after VACUUM")
    qs = after_vacuum_suite(ck, rng, b, nranked=20, nseq=3, extra_texts=words)
    for q in qs[:4]:
        ck.ranked(b, q, None, where_match=False, tag="whole order")
    run_batch(b)
    b = Batch("ws: drop")
    b.sql("DROP TABLE %s;" % t)
    run_batch(b)


# --- MVCC ---------------------------------------------------------------------

def mvcc_same_session(ck, b, mut):
    """Rolled-back INSERT / UPDATE / DELETE: invisible; own rows visible
    inside the transaction. Appended to batch b (the model is not changed)."""
    m = ck.m
    t = m.table
    word = "mvccrollbackword"
    upd = "mvccupdatedword"
    ids = [mut.new_id() for _ in range(5)]
    some = sorted(m.rows)[::4000][:4]
    corp = m.corpus()
    b.sql("BEGIN;")
    b.sql("INSERT INTO %s (id, host, ts, body) VALUES %s;" % (t, ", ".join(
        "(%d, 'mvcc', %s, %s)" % (i, sql_str(ts_of(i)), sql_str("%s number %d" % (word, i))) for i in ids)))
    b.sql("UPDATE %s SET body = %s WHERE id IN (%s);" % (t, sql_str(upd), ",".join(map(str, some))))
    b.sql("DELETE FROM %s WHERE id = %d;" % (t, some[0]))
    q = Q(word, "bm25", "any", "own transaction", "f3")

    def own(out):
        return compare_set(set(ids), [int(r[0]) for r in out])
    b.check("SELECT id FROM %s WHERE body @@@ %s;" % (t, q.expr()), own,
            "MVCC: own uncommitted inserts found by @@@")
    b.check("SELECT id, body <@> %s FROM %s WHERE body @@@ %s ORDER BY body <@> %s LIMIT 10;"
            % (q.expr(), t, q.expr(), q.expr()),
            lambda out: compare_set(set(ids), [int(r[0]) for r in out]),
            "MVCC: own uncommitted inserts found by ORDER BY <@>")
    b.check("SELECT id FROM %s WHERE body @@@ %s;" % (t, sql_str(upd)),
            lambda out: compare_set(set(some[1:]), [int(r[0]) for r in out]),
            "MVCC: own uncommitted updates found")
    b.sql("ROLLBACK;")
    for form in ("@@@", "order"):
        for qq in (q, Q(upd, "tfidf", "any", "rolled back", "lit")):
            if form == "@@@":
                sql = "SELECT id FROM %s WHERE body @@@ %s;" % (t, qq.expr())
            else:
                sql = ("SELECT id FROM %s WHERE body @@@ %s ORDER BY body <@> %s LIMIT 10;" %
                       (t, qq.expr(), qq.expr()))
            b.check(sql, lambda out: compare_set(set(), [int(r[0]) for r in out]),
                    "MVCC: rolled back rows invisible (%s %r)" % (form, qq.text))
    # The rows the rolled-back UPDATE / DELETE touched keep their values.
    for rid in some:
        body = m.rows[rid][2]
        toks = [tk.decode("utf-8", "replace") for tk in oracle.tokenize(body or "")]
        toks = [tk for tk in toks if tk.isascii() and tk.isalnum()]
        if not toks:
            continue
        qq = Q(toks[0], "tfidf", "any", "after rollback", "f3")
        ck.matchset(b, qq, tag="MVCC: rolled back UPDATE/DELETE keeps rows")
        want = {r for r, _ in corp.expect(qq)}
        b.check("SELECT count(*) FROM %s WHERE id = %d AND body @@@ %s;" % (t, rid, qq.expr()),
                lambda out, w=int(rid in want): [] if out and int(out[0][0]) == w
                else ["got %s, want %d" % (out, w)],
                "MVCC: row %d still matches its old value" % rid)


def mvcc_two_sessions(ck, mut):
    """Rows of a transaction open in another session: invisible until it
    commits, then visible."""
    m = ck.m
    t = m.table
    word = "mvccpendingword"
    ids = [mut.new_id() for _ in range(12)]
    bodies = {i: "%s row %d %s" % (word, i, mut.gen.short()) for i in ids}
    env = dict(os.environ, PGAPPNAME="amconf_mvcc1")
    s1 = subprocess.Popen(["psql", "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1"],
                          stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, env=env)
    try:
        s1.stdin.write(("BEGIN;\nINSERT INTO %s (id, host, ts, body) VALUES %s;\n" % (t, ", ".join(
            "(%d, 'mvcc2', %s, %s)" % (i, sql_str(ts_of(i)), sql_str(bodies[i])) for i in ids))).encode())
        s1.stdin.flush()
        # Wait (deterministically: by state, not by time) for the INSERT to be done.
        waited = 0
        while True:
            v = psql_value("SELECT count(*) FROM pg_stat_activity WHERE application_name = "
                           "'amconf_mvcc1' AND state = 'idle in transaction' AND query LIKE 'INSERT%';")
            if v == "1":
                break
            if s1.poll() is not None or waited > 600:
                raise RuntimeError("session 1 did not reach its open transaction: %s" %
                                   s1.stderr.read().decode("utf-8", "replace"))
            time.sleep(0.1)
            waited += 1
        q = Q(word, "tfidf", "any", "other session", "lit")
        b = Batch("main: MVCC other session open")
        none = lambda out: compare_set(set(), [int(r[0]) for r in out])  # noqa: E731
        b.check("SELECT id FROM %s WHERE body @@@ %s;" % (t, q.expr()), none,
                "MVCC: uncommitted rows of another session invisible (@@@)")
        b.check("SELECT id FROM %s WHERE body @@@ %s ORDER BY body <@> %s LIMIT 10;" %
                (t, q.expr(), q.expr(), ), none,
                "MVCC: uncommitted rows of another session invisible (ORDER BY)")
        b.check("SELECT id FROM %s ORDER BY body <@> %s LIMIT 5;" % (t, q.expr()),
                lambda out: ["uncommitted id %s returned" % r[0] for r in out
                             if int(r[0]) in bodies] + ([] if len(out) == 5 else
                                                        ["%d rows, want 5" % len(out)]),
                "MVCC: uncommitted rows of another session invisible (ORDER BY, no WHERE)")
        run_batch(b)
        _, err = s1.communicate(b"COMMIT;\n", timeout=300)
        err = err.decode("utf-8", "replace")
        rc = s1.returncode
        if rc != 0:
            RES.fail("MVCC: session 1 failed (exit %d): %s" % (rc, err.strip()))
            return
        RES.ok()
    finally:
        if s1.poll() is None:
            s1.kill()
            s1.wait()
    for i in ids:
        m.rows[i] = ["mvcc2", ts_of(i), bodies[i]]
    m.changed()
    b = Batch("main: MVCC other session committed")
    ck.matchset(b, q, tag="MVCC: committed rows of another session visible")
    ck.ranked(b, q, 10, where_match=True, exact=False, tag="MVCC: committed rows ranked")
    run_batch(b)


# --- VACUUM of a few dead rows; two indexes; errors ---------------------------

def small_vacuum(ck):
    """A few deleted rows on a large table, then a plain VACUUM: per the spec
    the statistics then count exactly the live rows."""
    m = ck.m
    t = m.table
    corp = m.corpus()
    qm = QueryMaker(corp, random.Random(5))
    term = qm.by_df((0.3,), counts=())[0]
    q = Q(term, "bm25", "any", "after a small delete", "f3")
    victims = [rid for rid, _ in corp.expect(q)[:3]]
    b = Batch("main: small delete")
    b.sql("DELETE FROM %s WHERE id IN (%s);" % (t, ",".join(map(str, victims))))
    run_batch(b)
    for rid in victims:
        del m.rows[rid]
    m.changed()
    bypassed = vacuum(t, "main small delete")
    b = Batch("main: after plain VACUUM of %d deleted rows%s" %
              (len(victims), " (index scan bypassed)" if bypassed else ""))
    ck.ranked(b, q, 10, where_match=True)
    ck.ranked(b, Q(term, "tfidf", "any", "after a small delete", "f3"), 10, where_match=False)
    run_batch(b)
    vacuum(t, "main INDEX_CLEANUP ON", plain=False)
    b = Batch("main: after VACUUM (INDEX_CLEANUP ON)")
    ck.ranked(b, q, 10, where_match=True)
    run_batch(b)


def expect_error(sqlstate, pattern, hint=None):
    def fn(rows, errs):
        if not errs:
            return ["no error (%d rows)" % len(rows)]
        e = errs[0]
        problems = []
        if e["sqlstate"] != sqlstate:
            problems.append("SQLSTATE %s, want %s" % (e["sqlstate"], sqlstate))
        if not re.search(pattern, e["text"], re.I):
            problems.append("message %r does not match /%s/" % (e["text"], pattern))
        if hint and not re.search(hint, e["text"], re.I | re.S):
            problems.append("no hint matching /%s/ in %r" % (hint, e["text"]))
        return problems
    return fn


def two_indexes(ck, rng):
    """A second scipis index in the database: queries that name no index
    bind to their column's index at plan time, with index scans or without;
    with two scipis indexes on the column, operators evaluated row by row
    need a name."""
    m = ck.m
    t = m.table
    o = PREFIX + "other"
    b = Batch("two indexes: setup")
    create_table(b, o)
    b.sql("INSERT INTO %s VALUES (1, 'x', now(), 'halfway omnipresent other table');" % o)
    b.sql("CREATE INDEX %s_idx ON %s USING scipis (body);" % (o, o))
    run_batch(b, stop_on_error=True)
    corp = m.corpus()
    qm = QueryMaker(corp, rng)
    singles = qm.by_df((0.01, 0.2))
    b = Batch("two indexes")
    for s in singles[-1:]:
        q = Q(s, "bm25", "all", "two scipis indexes", "f3")
        ck.ranked_ids(b, q, 10, where_match=False, tag="index scan, query names no index")
        ck.ranked_ids(b, q, 10, where_match=True, tag="index scan, query names no index")
        ck.ranked(b, q, 10, where_match=False, tag="index scan, query names no index")
        ck.ranked(b, q, 10, where_match=True, tag="index scan, query names no index")
        ck.ranked(b, q, 10, where_match=True, index=m.index, tag="index scan, index named")
    set_seq_mode(b, True)
    q = Q(singles[0], "bm25", "any", "", "f3")
    # The other table's index is no ambiguity: the planner binds the query
    # to the index of its column. Two scipis indexes on the column are.
    ck.ranked(b, q, 10, where_match=True, tag="sequential scan, bound to the column's index")
    b.sql("CREATE INDEX %s_ws ON %s USING scipis (body) WITH (tokenizer = 'whitespace');" % (t, t))
    b.error("SELECT id, body <@> %s FROM %s WHERE id < 1000;" % (q.expr(), t),
            expect_error("42704", r"more than one scipis index",
                         hint=r"HINT:.*scipis_query\(.*index"),
            "error: <@> in a sequential scan, two scipis indexes, none named")
    b.error("SELECT count(*) FROM %s WHERE body @@@ %s;" % (t, q.expr()),
            expect_error("42704", r"more than one scipis index", hint=r"HINT:.*index"),
            "error: @@@ in a sequential scan, two scipis indexes, none named")
    b.sql("DROP INDEX %s_ws;" % t)
    ck.seq_scores(b, q)
    ck.seq_scores(b, Q(singles[0], "tfidf", "all", "", "f3"))
    set_seq_mode(b, False)
    run_batch(b)
    b = Batch("two indexes: drop")
    b.sql("DROP TABLE %s;" % o)
    run_batch(b)


def lossy_bitmap():
    """A bitmap scan whose bitmap goes lossy (work_mem = 64kB) rechecks
    col @@@ q row by row; still the oracle's count, with one scipis index in
    the database and then with two. Sequential scans off: the planner knows
    that "common" matches every row."""
    t = PREFIX + "lossy"
    o = PREFIX + "other"
    filler = "f" * 300
    bodies = {i: "common w%d r%d" % (i % 3, i) for i in range(1, 30001)}
    corp = RowCorpus.of(bodies, "word")
    b = Batch("lossy bitmap: load")
    create_table(b, t)
    b.sql(copy_sql(t, [(i, filler, ts_of(i), bodies[i]) for i in sorted(bodies)]), "COPY")
    b.sql("CREATE INDEX %s_idx ON %s USING scipis (body);" % (t, t))
    run_batch(b, stop_on_error=True)
    queries = [Q("common", "tfidf", "any", "", "lit"), Q("W1", "bm25", "all", "", "f3"),
               Q("w2 r77", "tfidf", "all", "", "f3")]

    def count_checks(b, tag):
        b.sql("SET work_mem = '64kB'; SET enable_indexscan = off; SET enable_seqscan = off;")
        for q in queries:
            want = len(corp.expect(q))
            b.check("SELECT count(*) FROM %s WHERE body @@@ %s;" % (t, q.expr()),
                    lambda out, w=want: [] if out == [[str(w)]] else ["count %s, oracle %d" % (out, w)],
                    "%s count %s" % (tag, q.describe()))
        b.sql("RESET work_mem; RESET enable_indexscan; RESET enable_seqscan;")

    b = Batch("lossy bitmap")
    b.sql("SET work_mem = '64kB'; SET enable_indexscan = off; SET enable_seqscan = off;")
    b.check("EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) SELECT count(*) FROM %s "
            "WHERE body @@@ 'common';" % t,
            lambda out: [] if re.search(r"lossy=\d+", "\n".join("|".join(r) for r in out)) else
            ["the bitmap did not go lossy: %s" % out],
            "lossy bitmap: the bitmap goes lossy (precondition)")
    b.sql("RESET work_mem; RESET enable_indexscan; RESET enable_seqscan;")
    count_checks(b, "lossy bitmap, one scipis index:")
    create_table(b, o)
    b.sql("INSERT INTO %s VALUES (1, 'x', now(), 'other table');" % o)
    b.sql("CREATE INDEX %s_idx ON %s USING scipis (body);" % (o, o))
    count_checks(b, "lossy bitmap, two scipis indexes, query names no index:")
    b.sql("DROP TABLE %s;" % o)
    b.sql("DROP TABLE %s;" % t)
    run_batch(b)


def errors():
    t = PREFIX + "err"
    b = Batch("errors")
    create_table(b, t)
    b.sql("ALTER TABLE %s ADD COLUMN n int;" % t)
    b.sql("INSERT INTO %s (id, host, body, n) VALUES (1, 'h', 'alpha beta', 1), "
          "(2, 'h', 'beta gamma', 2), (3, 'h', NULL, 3);" % t)
    b.sql("CREATE INDEX %s_idx ON %s USING scipis (body);" % (t, t))
    idx = sql_str(t + "_idx")
    E = b.error
    E("SELECT count(*) FROM %s WHERE body @@@ '';" % t,
      expect_error("22023", r"empty"), "error: empty query ''")
    E("SELECT count(*) FROM %s WHERE body @@@ scipis_query('');" % t,
      expect_error("22023", r"empty"), "error: empty query scipis_query('')")
    E("SELECT count(*) FROM %s WHERE body @@@ scipis_query('alpha', NULL);" % t,
      expect_error("22004", r"ranking.*NULL|NULL.*ranking"), "error: NULL ranking")
    E("SELECT count(*) FROM %s WHERE body @@@ scipis_query('alpha', 'bm25', NULL);" % t,
      expect_error("22004", r"match.*NULL|NULL"), "error: NULL match")
    E("SELECT count(*) FROM %s WHERE body @@@ scipis_query(NULL);" % t,
      expect_error("22004", r"NULL"), "error: NULL query text")
    E("SELECT count(*) FROM %s WHERE body @@@ scipis_query('alpha', 'foo');" % t,
      expect_error("22023", r"ranking.*foo", hint=r"tfidf.*bm25"), "error: unknown ranking")
    E("SELECT count(*) FROM %s WHERE body @@@ scipis_query('alpha', 'tfidf', 'xx');" % t,
      expect_error("22023", r"match.*xx", hint=r"any.*all"), "error: unknown match")
    E("SELECT count(*) FROM %s WHERE body @@@ '---';" % t,
      expect_error("22023", r"no terms"), "error: query without tokens (index scan)")
    E("SELECT id FROM %s ORDER BY body <@> '---' LIMIT 1;" % t,
      expect_error("22023", r"no terms"), "error: query without tokens (ordered scan)")
    E("SET enable_indexscan = off; SET enable_bitmapscan = off; "
      "SELECT count(*) FROM %s WHERE body @@@ scipis_query('- ; -', 'bm25', 'all', %s);" % (t, idx),
      expect_error("22023", r"no terms"), "error: query without tokens (sequential scan)")
    b.sql("RESET enable_indexscan; RESET enable_bitmapscan;")
    E("SELECT id, body <@> scipis_query('alpha', 'tfidf', 'any', '%s_pkey') FROM %s;" % (t, t),
      expect_error("42809", r"not a scipis index"), "error: the query names a btree index")
    E("CREATE INDEX %s_e1 ON %s USING scipis (body) WITH (foo = 1);" % (t, t),
      expect_error("22023", r"foo"), "error: unknown index option")
    E("CREATE INDEX %s_e2 ON %s USING scipis (body) WITH (tokenizer = 'bogus');" % (t, t),
      expect_error("22023", r"tokenizer.*bogus"), "error: bad tokenizer")
    E("CREATE INDEX %s_e3 ON %s USING scipis (body) WITH (tokenizer = 'word', delimiters = ' ,');"
      % (t, t), expect_error("22023", r"tokenizer.*delimiters"),
      "error: tokenizer and delimiters together")
    E("CREATE INDEX %s_e4 ON %s USING scipis (n);" % (t, t),
      expect_error("42804", r"first column .* must be text"), "error: index on an int column")
    E("CREATE INDEX %s_e5 ON %s USING scipis (body) WITH (pending_limit = 1);" % (t, t),
      expect_error("22023", r"pending_limit"), "error: pending_limit below its minimum")
    E("CREATE INDEX %s_e6 ON %s USING scipis (body) WITH (delimiters = '');" % (t, t),
      expect_error("22023", r"delimiters"), "error: empty delimiters")
    E("CREATE INDEX %s_e7 ON %s USING scipis (body) WITH (indexer_threads = -1);" % (t, t),
      expect_error("22023", r"indexer_threads"), "error: negative indexer_threads")
    E("CREATE INDEX %s_e8 ON %s USING scipis (body, host);" % (t, t),
      expect_error("42804", r"filter columns of type"), "error: a text filter column")
    E("CREATE INDEX %s_e9 ON %s USING scipis (body, (n::numeric));" % (t, t),
      expect_error("42704", r"operator class"), "error: a numeric filter column")
    b.check("SELECT count(*) FROM pg_class WHERE relname LIKE '%s_e%%';" % t,
            lambda out: [] if out == [["0"]] else ["failed CREATE INDEX left %s" % out],
            "failed CREATE INDEX leaves nothing behind")
    # A second scipis index on the column: <@> in a sequential scan must name one.
    b.sql("CREATE INDEX %s_idx2 ON %s USING scipis (body) WITH (tokenizer = 'whitespace');" % (t, t))
    b.sql("SET enable_indexscan = off; SET enable_bitmapscan = off;")
    E("SELECT id, body <@> 'alpha' FROM %s;" % t,
      expect_error("42704", r"more than one scipis index",
                   hint=r"HINT:.*scipis_query\('\.\.\.', index => "),
      "error: <@> in a sequential scan with two scipis indexes, no index named")
    b.check("SELECT id, body <@> scipis_query('alpha beta', 'tfidf', 'any', %s) FROM %s ORDER BY id;"
            % (idx, t),
            lambda out: errors_seq_expect(out), "sequential scan with the index named")
    run_batch(b)
    b = Batch("errors: drop")
    b.sql("DROP TABLE %s;" % t)
    run_batch(b)


def errors_seq_expect(out):
    corp = RowCorpus.of({1: "alpha beta", 2: "beta gamma", 3: None}, "word")
    exp = dict((int(p), s) for p, s in corp.search("alpha beta", None, "tfidf", "any"))
    got = parse_ranked(out)
    want = [(1, -exp[1]), (2, -exp[2]), (3, None)]
    if len(got) != 3 or any(g[0] != w[0] or (w[1] is None) != (g[1] is None) or
                            (w[1] is not None and not close(g[1], w[1], SCORE_RTOL))
                            for g, w in zip(got, want)):
        return ["got %s, want %s" % (got, want)]
    return []


# --- main ---------------------------------------------------------------------

def main():
    global TMP
    TMP = tempfile.mkdtemp(prefix="amconf-")
    try:
        if not os.path.isdir(LOGHUB):
            raise RuntimeError("missing %s" % LOGHUB)
        b = Batch("setup")
        b.sql("CREATE EXTENSION IF NOT EXISTS scipis;")
        b.sql("DO $$ DECLARE r record; BEGIN FOR r IN SELECT relname FROM pg_class "
              "WHERE relname LIKE 'amconf\\_%' AND relkind = 'r' LOOP "
              "EXECUTE format('DROP TABLE IF EXISTS %I CASCADE', r.relname); END LOOP; END $$;")
        run_batch(b, stop_on_error=True)
        global HAVE_INDEX_CHECK
        HAVE_INDEX_CHECK = psql_value(
            "SELECT count(*) FROM pg_proc WHERE proname = 'scipis_index_check';") != "0"
        if not HAVE_INDEX_CHECK:
            log("scipis_index_check() is not installed: its checks are skipped")
        cache = {}
        ws_cache = {}
        for name, fn in (("main", lambda: variant_main(cache)),
                         ("pending_limit", lambda: variant_pending(cache)),
                         ("tfidf_index_size", lambda: variant_tiny(cache)),
                         ("whitespace", lambda: variant_whitespace(ws_cache)),
                         ("lossy bitmap", lossy_bitmap),
                         ("errors", errors)):
            try:
                fn()
            except Exception:
                traceback.print_exc()
                RES.fail("%s: the test stopped with an exception (see stderr)" % name)
    except Exception:
        traceback.print_exc()
        RES.fail("the test itself failed with an exception (see above)")
    finally:
        try:
            rc, out, err = run_psql_script(
                "SET client_min_messages = warning;\n"
                "DO $$ DECLARE r record; BEGIN FOR r IN SELECT relname FROM pg_class "
                "WHERE relname LIKE 'amconf\\_%' AND relkind = 'r' LOOP "
                "EXECUTE format('DROP TABLE IF EXISTS %I CASCADE', r.relname); END LOOP; END $$;\n")
            if rc != 0:
                RES.fail("dropping the amconf_ tables failed: %s" % err.strip())
        finally:
            for name in os.listdir(TMP):
                os.unlink(os.path.join(TMP, name))
            os.rmdir(TMP)
        log("done")
    print("am conformance: %d passed, %d failed" % (RES.passed, RES.failed), flush=True)
    return 1 if RES.failed else 0


if __name__ == "__main__":
    sys.exit(main())
