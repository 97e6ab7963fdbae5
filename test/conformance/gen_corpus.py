#!/usr/bin/env python3
"""Deterministic generator of a skewed test corpus for the conformance test.

    python3 gen_corpus.py OUTDIR [--seed S] [--files N] [--scale F]

Writes N files (default 3000) under OUTDIR in nested directories:
  * sizes are skewed: most files are tiny, some medium, a few large (up to
    about 2 MB); the total is about 25-30 MB at --scale 1;
  * words come from a Zipf-like vocabulary, so document frequencies span 1 to
    nearly N; a term occurs in every file with tokens and one in most of them;
    many files carry a term of their own (df = 1);
  * words appear in mixed case (Error, ERROR) and include UTF-8 words, with
    upper and lower case non-ASCII forms kept distinct by the tokenizer
    ("\u00dcber" vs "\u00fcber");
  * delimiters include punctuation, NUL and other control bytes, CR LF, VT, FF;
  * there are empty files, files made of delimiters only, files whose last
    token touches end of file, a few "binary" files of random bytes, long
    token runs (255, 256, 510, 511, 600, ... bytes, cut by the tokenizer into
    255-byte pieces), and byte-identical files in directories whose names
    make bytewise path order differ from a per-directory walk order
    ("a-b/" < "a/" < "a0/" < "a_b/").
The same seed always gives the same bytes. File names are plain ASCII.
"""

import argparse
import os
import random
import sys

LOWER = "abcdefghijklmnopqrstuvwxyz"
UTF8_WORDS = [
    "\u00fcberlauf", "\u00dcberlauf", "caf\u00e9", "CAF\u00c9", "stra\u00dfe", "na\u00efve",
    "\u00e9t\u00e9", "\u00c9T\u00c9", "\u65e5\u672c\u8a9e", "\u6771\u4eac", "\u03c9mega",
    "\u03a9MEGA", "\u0434\u0430\u043d\u043d\u044b\u0435", "\u0414\u0410\u041d\u041d\u042b\u0415",
    "\U0001f600smile", "x\u00e9y", "r\u00e9sum\u00e9", "\u00e5ngstr\u00f6m", "\u00c5NGSTR\u00d6M",
    "zo\u00eb", "\u0130stanbul", "\u00dfig",
]
# (delimiter bytes, weight)
DELIMS = [
    (b" ", 600), (b"\n", 100), (b", ", 40), (b".", 30), (b"\t", 20), (b"-", 20),
    (b"/", 15), (b":", 15), (b"=", 15), (b" - ", 10), (b"\r\n", 10), (b"(", 5),
    (b")", 5), (b"[", 5), (b"]", 5), (b"\"", 5), (b"'", 5), (b";", 5), (b"\x00", 8),
    (b"\x01", 2), (b"\x7f", 2), (b"\x0b", 2), (b"\x0c", 2), (b"\r", 2), (b"{", 2),
    (b"}", 2), (b"@", 2), (b"#", 2), (b"%", 2), (b"!", 2), (b"?", 2), (b"\\", 2),
    (b"|", 2), (b"~", 2), (b"`", 1), (b"^", 1), (b"&", 1), (b"*", 1), (b"+", 1),
    (b"<", 1), (b">", 1), (b"$", 1), (b"\x1b", 1), (b"\x00\x00\x00\x00", 2),
    (b"  \t \n\n", 3),
]
TIE_DIRS = ["a", "a-b", "a.b", "a0", "a_b", "ab", "A", "B"]


def make_vocab(rng, size):
    """Distinct lower-case words; position = Zipf rank."""
    words, seen = [], set()
    special = ["error", "info", "warn", "debug", "the", "block", "user", "id",
               "_", "__init__", "0", "1", "42", "x", "blk_", "e1", "a1b2c3"]
    for w in special + UTF8_WORDS:
        if w not in seen:
            seen.add(w)
            words.append(w)
    while len(words) < size:
        r = rng.random()
        n = min(1 + int(rng.expovariate(1 / 6.0)), 40)
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
    # Shuffle the ranks a little so that the special words are not all on top.
    head = words[:200]
    rng.shuffle(head)
    return head + words[200:]


def cased(rng, w):
    """Written form of a vocabulary word: usually as is, sometimes re-cased."""
    r = rng.random()
    if r < 0.85:
        return w
    if r < 0.93:
        return w[:1].upper() + w[1:]
    if r < 0.98:
        return w.upper()
    return "".join(c.upper() if rng.random() < 0.5 else c for c in w)


class Gen:
    def __init__(self, seed, vocab_size=60000):
        self.rng = random.Random(seed)
        rng = self.rng
        self.vocab = make_vocab(rng, vocab_size)
        cum, total = [], 0.0
        for rank in range(len(self.vocab)):
            total += 1.0 / (rank + 3.0) ** 1.05
            cum.append(total)
        self.cum = cum
        # Pre-encoded written forms: for the 2000 most frequent words, a few
        # case variants so that re-casing costs nothing at generation time.
        self.forms = []
        for i, w in enumerate(self.vocab):
            if i < 2000:
                self.forms.append([cased(rng, w).encode() for _ in range(8)])
            else:
                self.forms.append([cased(rng, w).encode()])
        self.delims = [d for d, _ in DELIMS]
        dcum, t = [], 0
        for _, wt in DELIMS:
            t += wt
            dcum.append(t)
        self.dcum = dcum

    def words(self, n):
        rng = self.rng
        idx = rng.choices(range(len(self.vocab)), cum_weights=self.cum, k=n)
        forms = self.forms
        out = []
        for i in idx:
            f = forms[i]
            out.append(f[0] if len(f) == 1 else f[rng.randrange(8)])
        return out

    def text(self, nbytes):
        """About nbytes of words and delimiters."""
        rng = self.rng
        n = max(1, nbytes // 9)
        ws = self.words(n)
        ds = rng.choices(self.delims, cum_weights=self.dcum, k=n)
        return b"".join(map(bytes.__add__, ws, ds))

    def long_run(self):
        rng = self.rng
        n = rng.choice([255, 256, 300, 509, 510, 511, 600, 765, 766, 1000, 4000])
        kind = rng.randrange(4)
        if kind == 0:      # shared pieces across files: "aaaa..."
            run = b"A" * n if rng.random() < 0.5 else b"a" * n
        elif kind == 1:    # repeated pattern, mixed case
            run = (b"Ab_9" * n)[:n]
        elif kind == 2:    # random letters
            run = bytes(rng.choice(b"abcdefghijklmnopqrstuvwxyz0123456789_") for _ in range(n))
        else:              # UTF-8 text: 255-byte cuts may fall inside a character
            run = ("\u00e9\u65e5z" * n).encode()[:n]
        return run


def generate(out, seed=20240607, nfiles=3000, scale=1.0):
    g = Gen(seed)
    rng = g.rng
    os.makedirs(out, mode=0o755, exist_ok=True)
    os.chmod(out, 0o755)

    # Directory tree: 3 levels of fan-out, plus the tie directories.
    dirs = [""]
    for i in range(12):
        d1 = "d%02d" % i
        dirs.append(d1)
        for j in range(rng.randrange(0, 6)):
            d2 = d1 + "/s%d" % j
            dirs.append(d2)
            for m in range(rng.randrange(0, 3)):
                dirs.append(d2 + "/deep%d/x%d" % (m, m))
    for d in dirs + ["ties/" + t for t in TIE_DIRS] + ["ties"]:
        os.makedirs(os.path.join(out, d), mode=0o755, exist_ok=True)

    files = {}   # relative path -> bytes

    def add(rel, data):
        files[rel] = data

    # Fixed edge cases.
    add("empty_file", b"")
    add("d00/only_delims", b" ,.;:-\t\n\x00\x00\x01\x7f\r\n\x0b\x0c" * 20)
    add("d01/one_token_no_newline", b"Lonely")
    add("d01/token_at_both_ends", b"Start middle END")
    add("d02/run_255", b"q" * 255)
    add("d02/run_256", b"Q" * 256)
    add("d02/run_510", b"q" * 510 + b"\n")
    add("d02/run_511", b"\x00" + b"q" * 511 + b"\x00")
    add("d03/nul_separated", b"\x00".join(w for w in g.words(200)))
    add("d03/high_bytes", b"\xff\xfe\x80 \xc3\x9cber \xc3\xbcber \xe2\x82\xac \xed\xa0\x80")
    # Byte-identical files: exact ties, broken by bytewise path order.
    tie_text = b"tiebreak " + b" ".join(g.words(30)) + b" tiebreak\n"
    for t in TIE_DIRS:
        add("ties/%s/same.txt" % t, tie_text)
        add("ties/%s/Same.txt" % t, tie_text)
    add("ties/same.txt", tie_text)
    add("ties/same.txt0", tie_text)
    add("ties/same-txt", tie_text)

    i = 0
    while len(files) < nfiles:
        i += 1
        d = rng.choice(dirs)
        rel = (d + "/" if d else "") + "f%05d%s" % (i, rng.choice([".log", ".txt", "", ".dat"]))
        r = rng.random()
        if r < 0.03:
            add(rel, b"")
            continue
        if r < 0.05:
            add(rel, bytes(rng.choice(b" ,.;:-\t\n\x00\x01\x7f\r") for _ in range(rng.randrange(1, 2000))))
            continue
        if r < 0.055:   # binary: random bytes (includes >= 0x80 and NUL)
            add(rel, bytes(rng.randrange(256) for _ in range(rng.randrange(100, 20000))))
            continue
        if r < 0.84:
            size = int(rng.expovariate(1 / 400.0)) + 1
        elif r < 0.995:
            size = int(rng.expovariate(1 / 14000.0)) + 2000
        else:
            size = rng.randrange(256 * 1024, 2 * 1024 * 1024)
        size = max(1, int(size * scale))
        parts = [g.text(size)]
        # Terms with a controlled document frequency.
        if rng.random() < 0.97:
            parts.append(b" nearlyeverywhere ")
        parts.append(b" Omnipresent ")
        if rng.random() < 0.25:
            parts.append(b" uniq%05d " % i)          # df = 1
        if rng.random() < 0.5:
            parts.append(b" half ")
        if rng.random() < 0.01:
            parts.append(b" rare ")
        if rng.random() < 0.02:
            parts.append(b" " + g.long_run() + b" ")
        if rng.random() < 0.3:
            rng.shuffle(parts)
        data = b"".join(parts)
        if rng.random() < 0.3:
            data = data.strip(b" ")        # last token touches end of file
        add(rel, data)

    for rel, data in files.items():
        p = os.path.join(out, rel)
        with open(p, "wb") as f:
            f.write(data)
        os.chmod(p, 0o644)
    return len(files), sum(len(v) for v in files.values())


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out")
    ap.add_argument("--seed", type=int, default=20240607)
    ap.add_argument("--files", type=int, default=3000)
    ap.add_argument("--scale", type=float, default=1.0)
    a = ap.parse_args(argv)
    n, total = generate(a.out, a.seed, a.files, a.scale)
    print("gen_corpus: %d files, %d bytes in %s" % (n, total, a.out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
