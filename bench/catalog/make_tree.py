#!/usr/bin/env python3
"""A deterministic tree of many small log files, for the catalog benchmark.

    python3 bench/catalog/make_tree.py --files 1000000 --out /var/tmp/scipis-catalog/tree-1m [--seed 42]

Layout: DIR/pXX/jobNNNNN/outNNNNNNN.log with 50 top directories p00..p49.
Jobs are numbered globally (job j lives in p{j % 50}) and hold 10 to 30
files (20 on average); files are numbered globally from 0, in job order.
Each file is a small log, 100 B to 4 KiB (log-uniform, exact size), of
plausible HPC lines: a header naming the job, then lines drawn from ~30
templates (slurmstepd, kernel, lustre, mpirun, sshd, the application's own
progress lines, GPU telemetry, ...) whose words are a shared vocabulary,
with numbers, hex ids and host names redrawn, and from time to time a word
of a seeded Zipf-distributed lexicon of 20,000 made-up words (rare tokens:
most of them occur in a handful of files).

Metadata: mtimes spread over the year before --end (default
2026-11-01T00:00:00Z, fixed so that the same options give the same tree on
any day), with nanoseconds; a job's files are written within hours of each
other. Owners: 8 uids (1001..1008, Zipf-weighted) with 3 gids (2001..2003);
applied only when running as root. Files 0644, directories 0755.

The same --files, --seed and --end give the same bytes, names, sizes,
mtimes and owners whatever --jobs is: every job draws from its own
random.Random seeded by (seed, job number); the job plan comes from one
stream seeded by the seed.

Idempotent: DIR.done.json (beside DIR, so that it is not part of the tree)
records the parameters when the tree is complete; a second run with the
same parameters does nothing. A DIR without a matching marker is removed
and generated again, but only if it holds nothing but pNN directories.
"""

import argparse
import json
import math
import multiprocessing
import os
import random
import shutil
import sys
import time
from bisect import bisect_left
from calendar import timegm

GENERATOR_VERSION = 1
TOPS = 50
YEAR_S = 365 * 86400

LEVELS = ["INFO", "INFO", "INFO", "INFO", "DEBUG", "DEBUG", "NOTICE", "WARN", "WARN", "ERROR"]
USERS = ["alice", "bchen", "cmorales", "dpatel", "eowusu", "fkowalski", "gnakamura", "hsilva"]
GROUP_OF_UID = {1001: 2001, 1002: 2001, 1003: 2002, 1004: 2002, 1005: 2002, 1006: 2003, 1007: 2003, 1008: 2003}
UIDS = list(GROUP_OF_UID)
UID_CUM = []
_acc = 0.0
for _i in range(len(UIDS)):
    _acc += 1.0 / (_i + 1)
    UID_CUM.append(_acc)
PROCS = ["lmp", "gmx_mpi", "vasp_std", "python3", "cp2k.psmp", "wrf.exe", "namd2", "pw.x", "ocean_model"]
LIBS = ["libc.so.6", "libmpi.so.40", "libfabric.so.1", "libcuda.so.1", "libhdf5.so.200", "libm.so.6"]
MODULES = ["gcc/12.2.0", "openmpi/4.1.5", "cuda/12.2", "hdf5/1.14.1", "netcdf/4.9.2", "fftw/3.3.10",
           "python/3.11.4", "intel-oneapi/2023.2", "cmake/3.27.4", "boost/1.83.0"]
ERRNOS = [(2, "No such file or directory"), (5, "Input/output error"), (11, "Resource temporarily unavailable"),
          (12, "Cannot allocate memory"), (13, "Permission denied"), (28, "No space left on device"),
          (110, "Connection timed out"), (116, "Stale file handle")]
FS = ["/scratch", "/project", "/home", "/lustre/work"]
STATES = ["COMPLETED", "COMPLETED", "COMPLETED", "FAILED", "TIMEOUT", "CANCELLED", "OUT_OF_MEMORY", "NODE_FAIL"]


def make_lexicon(seed, n=20000):
    """n distinct made-up words, and Zipf cumulative weights over them."""
    rng = random.Random(seed * 7919 + 17)
    cons = "bcdfghjklmnprstvwxz"
    vow = "aeiou"
    words, seen = [], set()
    while len(words) < n:
        w = "".join(rng.choice(cons) + rng.choice(vow) for _ in range(rng.randint(2, 4)))
        if rng.random() < 0.5:
            w += rng.choice(cons)
        if w not in seen:
            seen.add(w)
            words.append(w)
    cum, acc = [], 0.0
    for i in range(n):
        acc += 1.0 / (i + 1) ** 1.1
        cum.append(acc)
    return words, cum


class Job:
    """Everything a job's files draw from, and the line templates."""

    def __init__(self, seed, job, lex, lex_cum, end_s):
        self.r = rng = random.Random(seed * 1000003 + job * 7 + 1)
        self.job = job
        self.lex, self.lex_cum, self.lex_total = lex, lex_cum, lex_cum[-1]
        self.slurm_id = 4000000 + job * 13 + rng.randrange(13)
        ui = bisect_left(UID_CUM, rng.random() * UID_CUM[-1])
        self.uid = UIDS[ui]
        self.gid = GROUP_OF_UID[self.uid]
        self.user = USERS[ui]
        self.nodes = ["c%04d" % rng.randrange(1, 2049) for _ in range(rng.randint(1, 4))]
        self.proc = rng.choice(PROCS)
        self.fs = rng.choice(FS)
        self.ntasks = rng.choice([1, 2, 4, 8, 16, 32, 64, 128])
        # Start somewhere in the year before end, leaving room for the job.
        self.start_ns = (end_s - YEAR_S) * 10**9 + rng.randrange((YEAR_S - 86400) * 10**9)
        self.t = self.start_ns // 10**9
        self.iter = 0
        self.step = 0

    def rare(self):
        return self.lex[bisect_left(self.lex_cum, self.r.random() * self.lex_total)]

    def ts(self):
        self.t += int(self.r.random() * 41)
        tm = time.gmtime(self.t)
        return "%04d-%02d-%02dT%02d:%02d:%02d.%03d" % (tm[0], tm[1], tm[2], tm[3], tm[4], tm[5],
                                                      int(self.r.random() * 1000))

    def line(self):
        r = self.r
        R = r.random
        ri = lambda a, b: a + int(R() * (b - a + 1))
        rb = lambda n: int(R() * n)
        ch = lambda seq: seq[int(R() * len(seq))]
        k = int(R() * 30)
        node = ch(self.nodes)
        pid = ri(1000, 99999)
        if k == 0:
            return "%s %s slurmstepd[%d]: task/cgroup: /slurm/uid_%d/job_%d/step_%d: alloc=%dMB mem.limit=%dMB" % (
                self.ts(), node, pid, self.uid, self.slurm_id, self.step, ch([4096, 8192, 16384, 65536]),
                ch([4096, 8192, 16384, 65536]))
        if k == 1:
            return "%s %s kernel: [%d.%06d] %s[%d]: segfault at %x ip %016x sp %016x error %d in %s[%x+%x]" % (
                self.ts(), node, rb(10**6), rb(10**6), self.proc, pid, r.getrandbits(44),
                r.getrandbits(47), r.getrandbits(47), ch([4, 6, 14]), ch(LIBS), r.getrandbits(44),
                r.getrandbits(20))
        if k == 2:
            return "%s %s mpirun: rank %d on node %s exited with status %d" % (
                self.ts(), node, rb(self.ntasks), node, ch([0, 0, 0, 1, 137, 139]))
        if k == 3:
            return ("%s %s kernel: LustreError: %d:0:(client.c:%d:ptlrpc_expire_one_request()) @@@ Request sent "
                    "has timed out for slow reply: [sent %d/real %d] req@%016x x%d/t0(0) o%d->%s-OST%04x-osc" % (
                        self.ts(), node, pid, ri(1000, 3500), self.t - 30, self.t, r.getrandbits(64),
                        r.getrandbits(50), ch([3, 4, 101, 400]), ch(["scratch", "project"]),
                        rb(256)))
        if k == 4:
            return "%s login%d sshd[%d]: Accepted publickey for %s from 10.%d.%d.%d port %d ssh2: RSA SHA256:%s" % (
                self.ts(), ri(1, 4), pid, self.user, rb(256), rb(256), rb(256),
                ri(1024, 65535), "%x" % r.getrandbits(64))
        if k in (5, 6, 7, 8, 9):
            self.iter += ri(1, 50)
            return "%s %s %s: %s iteration %d residual %.6e dt %.4g wall %.3fs" % (
                self.ts(), node, self.proc, ch(LEVELS), self.iter, r.random() * 10 ** -ri(2, 9),
                r.random() * 0.01, r.random() * 100)
        if k == 10:
            return "%s %s %s: checkpoint written to %s/%s/run_%d/chk_%06d.h5 (%d MB)" % (
                self.ts(), node, self.proc, self.fs, self.user, self.slurm_id, self.iter, ri(10, 20000))
        if k == 11:
            return "%s %s %s: WARN convergence slow at step %d, tolerance %.2e, retrying with %s" % (
                self.ts(), node, self.proc, self.iter, r.random() * 1e-4, ch(["gmres", "bicgstab", "cg",
                                                                                   "amg", "jacobi"]))
        if k == 12:
            return ("%s %s kernel: Out of memory: Killed process %d (%s) total-vm:%dkB, anon-rss:%dkB, "
                    "file-rss:%dkB, shmem-rss:0kB, UID:%d pgtables:%dkB oom_score_adj:0" % (
                        self.ts(), node, pid, self.proc, ri(10**6, 10**8), ri(10**6, 10**8),
                        ri(1000, 100000), self.uid, ri(100, 100000)))
        if k in (13, 14):
            return "%s %s nvidia-smi: GPU %d temp %dC util %d%% mem %dMiB power %.1fW" % (
                self.ts(), node, rb(4), ri(30, 89), rb(101), rb(81920),
                r.random() * 400)
        if k == 15:
            e = ch(ERRNOS)
            return "%s %s %s: ERROR %s failed on %s/%s/%s: errno %d (%s)" % (
                self.ts(), node, self.proc, self.rare(), self.fs, self.user, self.rare(), e[0], e[1])
        if k == 16:
            return "%s %s %s: INFO loaded module %s" % (self.ts(), node, self.proc, ch(MODULES))
        if k == 17:
            return "%s %s %s: DEBUG %s %s %s id=%08x-%04x" % (
                self.ts(), node, self.proc, self.rare(), self.rare(), self.rare(), r.getrandbits(32),
                r.getrandbits(16))
        if k == 18:
            return "%s %s slurmd[%d]: launch task StepId=%d.%d request from UID:%d GID:%d HOST:10.%d.%d.%d PORT:%d" % (
                self.ts(), node, pid, self.slurm_id, self.step, self.uid, self.gid, rb(256),
                rb(256), rb(256), ri(1024, 65535))
        if k == 19:
            return "%s %s systemd[1]: Started Session %d of user %s." % (self.ts(), node, rb(100000),
                                                                        self.user)
        if k == 20:
            return "%s %s %s: INFO reading input deck %s/%s/inputs/%s.in (%d bytes)" % (
                self.ts(), node, self.proc, self.fs, self.user, self.rare(), ri(100, 10**6))
        if k == 21:
            return "%s %s healthcheck: node %s %s load %.2f %.2f %.2f memfree %dkB" % (
                self.ts(), node, node, ch(["ok", "ok", "ok", "degraded", "drain"]), r.random() * 64,
                r.random() * 64, r.random() * 64, rb(10**8))
        if k == 22:
            return "%s %s mlx5_core 0000:%02x:00.0: mlx5_cmd_out_err:%d: %s(0x%x) op_mod(0x0) failed, status bad " \
                   "parameter(0x3), syndrome (0x%x)" % (self.ts(), node, rb(256), ri(700, 900),
                                                        ch(["CREATE_MKEY", "QUERY_VPORT", "DESTROY_QP"]),
                                                        rb(4096), r.getrandbits(24))
        if k == 23:
            return "%s %s %s: NOTICE timestep %d energy %.8f temperature %.3f pressure %.3f" % (
                self.ts(), node, self.proc, self.iter, -r.random() * 1e5, r.random() * 400, r.random() * 2)
        if k == 24:
            return "%s %s sshd[%d]: pam_unix(sshd:session): session opened for user %s(uid=%d) by (uid=0)" % (
                self.ts(), node, pid, self.user, self.uid)
        if k == 25:
            return "%s %s %s: MPI_ABORT was invoked on rank %d in communicator MPI_COMM_WORLD with errorcode %d" % (
                self.ts(), node, self.proc, rb(self.ntasks), ri(1, 255))
        if k == 26:
            return "%s %s %s: timer %s total %.3fs calls %d avg %.6fs" % (
                self.ts(), node, self.proc, ch(["solve", "assemble", "io_write", "halo_exchange", "fft",
                                                      "neighbor_list", "reduce"]),
                r.random() * 1000, ri(1, 100000), r.random())
        if k == 27:
            return "%s %s nfs: server %s not responding, still trying" % (
                self.ts(), node, ch(["nas01", "nas02", "homefs", "appsfs"]))
        if k == 28:
            return "%s %s %s: WARN deprecated option %s ignored" % (self.ts(), node, self.proc, self.rare())
        return "%s %s CRON[%d]: (%s) CMD (%s/%s/bin/%s.sh)" % (self.ts(), node, pid, self.user, self.fs, self.user,
                                                              self.rare())

    def content(self, fileno, size):
        self.step = fileno % 8
        r = self.r
        head = "%s %s slurmstepd[%d]: job %d step %d user %s uid %d ntasks %d nodes %s out %07d\n" % (
            self.ts(), self.nodes[0], r.randint(1000, 99999), self.slurm_id, self.step, self.user, self.uid,
            self.ntasks, ",".join(self.nodes), fileno)
        parts = [head]
        n = len(head)
        while n < size:
            s = self.line() + "\n"
            parts.append(s)
            n += len(s)
        tail = "%s %s slurmstepd[%d]: job %d step %d state %s exit %d:0\n" % (
            self.ts(), self.nodes[0], r.randint(1000, 99999), self.slurm_id, self.step, r.choice(STATES),
            r.choice([0, 0, 1, 9, 137]))
        b = "".join(parts).encode("ascii")
        # Keep the end of the job visible in files that have room for it.
        # Cut to the exact size (the last line drawn is cut short, as in a
        # log copied while it was written).
        if size > 2 * len(tail):
            return b[:size - len(tail) - 1] + b"\n" + tail.encode("ascii")
        return b[:size - 1] + b"\n"


def plan(files, seed):
    """[(job, first_file, count)] for every job, from one stream."""
    rng = random.Random(seed)
    jobs, f, j = [], 0, 0
    while f < files:
        c = min(rng.randint(10, 30), files - f)
        jobs.append((j, f, c))
        f += c
        j += 1
    return jobs


_LEXICON = {}


def lexicon(seed):
    """make_lexicon, once per process (workers inherit it through fork)."""
    if seed not in _LEXICON:
        _LEXICON[seed] = make_lexicon(seed)
    return _LEXICON[seed]


def work(args):
    out, seed, end_s, jobs, chown = args
    lex, cum = lexicon(seed)
    lo, hi = math.log(100), math.log(4097)
    nfiles = nbytes = 0
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC
    for job, first, count in jobs:
        jb = Job(seed, job, lex, cum, end_s)
        d = os.path.join(out, "p%02d" % (job % TOPS), "job%05d" % (job // TOPS))
        os.mkdir(d, 0o755)
        mt = jb.start_ns
        for i in range(count):
            fileno = first + i
            size = min(4096, int(math.exp(jb.r.uniform(lo, hi))))
            data = jb.content(fileno, size)
            mt += jb.r.randrange(1, 3600 * 10**9)
            fd = os.open(os.path.join(d, "out%07d.log" % fileno), flags, 0o644)
            try:
                os.write(fd, data)
                if chown:
                    os.fchown(fd, jb.uid, jb.gid)
                os.utime(fd, ns=(mt, mt))
            finally:
                os.close(fd)
            nfiles += 1
            nbytes += len(data)
    return nfiles, nbytes


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--files", type=int, required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--end", default="2026-11-01T00:00:00Z",
                    help="mtimes fall in the year before this UTC time (YYYY-MM-DDTHH:MM:SSZ)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="worker processes")
    a = ap.parse_args()
    if a.files < 1 or a.files > 10**7:
        sys.exit("make_tree.py: --files must be 1..10,000,000 (file numbers have 7 digits)")
    end_s = timegm(time.strptime(a.end, "%Y-%m-%dT%H:%M:%SZ"))
    out = os.path.abspath(a.out)
    marker = out + ".done.json"
    chown = os.geteuid() == 0
    params = {"generator": "bench/catalog/make_tree.py", "version": GENERATOR_VERSION, "files": a.files,
              "seed": a.seed, "end": a.end, "owners_applied": chown}
    if os.path.isdir(out) and os.path.exists(marker):
        try:
            old = json.load(open(marker))
        except ValueError:
            old = {}
        if all(old.get(k) == v for k, v in params.items()):
            print("make_tree.py: %s is complete (%s), nothing to do" % (out, marker))
            return
    if os.path.exists(marker):
        os.unlink(marker)
    if os.path.exists(out):
        stray = [e for e in os.listdir(out) if not (len(e) == 3 and e[0] == "p" and e[1:].isdigit())]
        if stray:
            sys.exit("make_tree.py: %s exists and holds %r: not a tree of this generator, remove it yourself"
                     % (out, stray[:5]))
        shutil.rmtree(out)
    t0 = time.time()
    os.makedirs(out, 0o755)
    for t in range(TOPS):
        os.mkdir(os.path.join(out, "p%02d" % t), 0o755)
    jobs = plan(a.files, a.seed)
    lexicon(a.seed)
    # Chunks of jobs, interleaved, so that both workers stay busy to the end.
    nchunks = max(1, min(len(jobs) // 50, 4 * max(1, a.jobs) * 8))
    chunks = [(out, a.seed, end_s, jobs[i::nchunks], chown) for i in range(nchunks)]
    if a.jobs > 1 and len(chunks) > 1:
        with multiprocessing.get_context("fork").Pool(a.jobs) as pool:
            res = pool.map(work, chunks, chunksize=1)
    else:
        res = [work(c) for c in chunks]
    nfiles = sum(r[0] for r in res)
    nbytes = sum(r[1] for r in res)
    secs = time.time() - t0
    params.update(files_written=nfiles, bytes=nbytes, jobs=len(jobs), seconds=round(secs, 2),
                  created_utc=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))
    with open(marker + ".tmp", "w") as f:
        json.dump(params, f, indent=1)
        f.write("\n")
    os.rename(marker + ".tmp", marker)
    print("make_tree.py: %d files, %d bytes (%.1f MiB), %d job directories in %.1f s (%.0f files/s) -> %s"
          % (nfiles, nbytes, nbytes / 1048576, len(jobs), secs, nfiles / secs, out))


if __name__ == "__main__":
    main()
