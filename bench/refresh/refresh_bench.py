#!/usr/bin/env python3
"""Freshness (issue 15): what a refresh costs, and the watcher under churn.
Run by bench/refresh/run.sh (which starts the cluster); see its header.

costs   per corpus (the 1 GiB log corpus, a source tree): scipis_index's
        time; then, 0.2 s later (past the racy window), five refreshes of
        the unchanged tree (median).
append  1 KiB appended to a 20 MiB log file in a tree of the corpus's
        copy: scipis_refresh(name, ARRAY[that file]), its bytes_read and
        time, against scipis_index of a collection holding that file alone.
churn   a collection with "watch": true over the copy; per rate, for
        --seconds: a churn writer (60% a log line appended to a random
        file, 20% a new 2 KiB file, 20% one of its new files deleted), a
        probe that every 0.25 s writes a new file holding a unique token
        and polls scipis_search for it every 10 ms (staleness: write to
        found), scipis_search('error failed', k => 10) timed every 0.2 s,
        segments sampled every second; then scipis_wait_fresh and every
        answer compared with a collection built afresh over the tree.
"""
import argparse
import datetime
import json
import os
import platform
import random
import statistics
import subprocess
import threading
import time


class Session:
    """One psql process, kept open: a query costs a round trip, not a fork."""

    def __init__(self):
        cmd = os.environ["SCIPIS_REFRESH_PSQL"].split()
        self.p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, text=True, bufsize=1)
        self.n = 0

    def q(self, sql):
        self.n += 1
        mark = f"__end{self.n}__"
        self.p.stdin.write(sql.rstrip().rstrip(";") + ";\n\\echo " + mark + "\n")
        self.p.stdin.flush()
        out = []
        while True:
            line = self.p.stdout.readline()
            if not line:
                raise SystemExit("psql exited")
            line = line.rstrip("\n")
            if line == mark:
                break
            out.append(line)
        text = "\n".join(out)
        if "ERROR" in text:
            raise SystemExit(f"{sql}: {text}")
        return text

    def timed(self, sql):
        t0 = time.monotonic()
        out = self.q(sql)
        return time.monotonic() - t0, out


def median(v):
    return statistics.median(v) if v else float("nan")


def pct(v, p):
    if not v:
        return float("nan")
    s = sorted(v)
    return s[min(len(s) - 1, int(round(p / 100 * (len(s) - 1))))]


def refresh_sql(name, paths=None):
    arg = "NULL" if paths is None else "ARRAY[" + ",".join("'" + p + "'" for p in paths) + "]"
    return f"SELECT row_to_json(r) FROM scipis_refresh('{name}', {arg}) r"


def refresh_row(s, name, paths=None):
    dt, out = s.timed(refresh_sql(name, paths))
    return dt, json.loads(out)


def costs(s, name, root, options="{}"):
    s.q(f"SELECT scipis_create_collection('{name}', '{root}', '{options}')")
    build_s, out = s.timed(f"SELECT row_to_json(i) FROM scipis_index('{name}') i")
    build = json.loads(out)
    time.sleep(0.2)
    unchanged = [refresh_row(s, name) for _ in range(5)]
    s.q(f"SELECT scipis_drop_collection('{name}')")
    return {"name": name, "root": root, "options": options, "files": build["files"], "bytes": build["bytes"],
            "build_s": build_s, "unchanged_s": [u[0] for u in unchanged],
            "unchanged_rows": [u[1] for u in unchanged]}


CPUACCT = "/sys/fs/cgroup/cpuacct/cpuacct.usage"


def cpu_ns(pid):
    """CPU time spent since boot: by the whole machine (cgroup v1 root
    cpuacct: every process, job workers and the kernel's I/O included;
    an idle machine adds ~3%), else by the backend's threads (schedstat)."""
    if os.path.exists(CPUACCT):
        with open(CPUACCT) as f:
            return int(f.read())
    total = 0
    for t in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{t}/schedstat") as f:
            total += int(f.read().split()[0])
    return total


def timed_cpu(s, sql, pid):
    c0 = cpu_ns(pid)
    dt, out = s.timed(sql)
    return dt, out, (cpu_ns(pid) - c0) / 1e9


def flush_floor(dirname, idle_s, n=21):
    """A 12 KiB write and fdatasync over blocks already written (what a
    journal record costs the disk), after idle_s of nothing: the median."""
    path = os.path.join(dirname, "flush-probe")
    with open(path, "wb") as f:
        f.write(b"\0" * (64 << 10))
        os.fsync(f.fileno())
    fd = os.open(path, os.O_WRONLY)
    t = []
    for i in range(n):
        time.sleep(idle_s)
        t0 = time.monotonic()
        os.pwrite(fd, bytes([i % 251]) * (12 << 10), (i % 4) * (12 << 10))
        os.fdatasync(fd)
        t.append(time.monotonic() - t0)
    os.close(fd)
    os.unlink(path)
    return median(t)


def settle():
    """Writes back what the set-up left dirty (the corpus copy, the 20 MiB
    files) and lets the disk finish discarding what was removed (a dropped
    collection): a refresh's fdatasync would otherwise wait behind them."""
    os.sync()
    time.sleep(3)


def appends(s, big, line, pid, idle_s, n=21):
    """n appends of 1 KiB, each refreshed after idle_s: client seconds,
    the function's own seconds, the backend's CPU seconds (medians)."""
    runs = []
    for _ in range(n):
        with open(big, "ab") as f:
            f.write((line * (1024 // len(line) + 1))[:1024])
        time.sleep(idle_s)
        dt, out, cpu = timed_cpu(s, refresh_sql("appendee", [big]), pid)
        row = json.loads(out)
        runs.append((dt, float(row["seconds"]), cpu, row))
    return {"client_s": median([r[0] for r in runs]), "engine_s": median([r[1] for r in runs]),
            "cpu_s": median([r[2] for r in runs]), "client_runs_s": [r[0] for r in runs],
            "engine_runs_s": [r[1] for r in runs], "cpu_runs_s": [r[2] for r in runs],
            "bytes_read": max(r[3]["bytes_read"] for r in runs),
            "row": sorted(runs, key=lambda r: r[0])[n // 2][3]}


def append_cost(s, churn, scratch, idle_s=0.2):
    big = f"{churn}/append-target.log"
    src = max((os.path.join(d, f) for d, _, fs in os.walk(churn) for f in fs),
              key=os.path.getsize)
    with open(src, "rb") as f:
        data = f.read(20 << 20)
    while len(data) < (20 << 20):
        data += data[: (20 << 20) - len(data)]
    with open(big, "wb") as f:
        f.write(data)
    os.makedirs(scratch, exist_ok=True)
    with open(f"{scratch}/alone.log", "wb") as f:
        f.write(data)
    s.q(f"SELECT scipis_create_collection('alone', '{scratch}')")
    pid = int(s.q("SELECT pg_backend_pid()"))
    settle()
    # Re-indexing the file alone, three times: the median.
    alone = sorted((timed_cpu(s, "SELECT row_to_json(i) FROM scipis_index('alone') i", pid) for _ in range(3)),
                   key=lambda r: r[0])
    alone_s, out, _ = alone[1]
    # What a call costs the client and psql alone.
    trip = median([s.timed("SELECT 1")[0] for _ in range(21)])
    s.q("SELECT scipis_create_collection('appendee', '" + churn + "')")
    s.q("SELECT files FROM scipis_index('appendee')")
    settle()
    line = data[:1024].split(b"\n", 1)[0] + b"\n"
    # Back to back (a log that keeps growing), and each after idle_s with
    # nothing running: on this VM an idle vCPU and disk make any short call
    # slower (the journal record's fdatasync above all: flush_floor).
    hot = appends(s, big, line, pid, 0)
    idle = appends(s, big, line, pid, idle_s)
    # The caller's synchronous_commit = off: the journal record may stay
    # unsynced (a crash of the machine can take it back to the last synced
    # state; the next refresh reads the change again). Synced all the same
    # once the first unsynced record is a second old.
    s.q("SET synchronous_commit = off")
    hot_async = appends(s, big, line, pid, 0)
    idle_async = appends(s, big, line, pid, idle_s)
    s.q("RESET synchronous_commit")
    # The same file replaced (a new inode, the same bytes), refreshed: what
    # re-indexing it costs in this collection, the tail-tier merge after
    # included.
    replaced = []
    for _ in range(3):
        with open(big + ".new", "wb") as f:
            f.write(data)
        os.rename(big + ".new", big)
        time.sleep(idle_s)
        dt, out, cpu = timed_cpu(s, refresh_sql("appendee", [big]), pid)
        replaced.append((dt, float(json.loads(out)["seconds"]), cpu))
    s.q("SELECT scipis_drop_collection('appendee')")
    s.q("SELECT scipis_drop_collection('alone')")
    # A control of about the same length that touches no file: what the
    # idle gap alone does to a call on this machine.
    control = "SELECT sum(i) FROM generate_series(1, 10000) i"
    control_hot = median([s.timed(control)[0] for _ in range(21)])
    control_idle = median([(time.sleep(idle_s), s.timed(control)[0])[1] for _ in range(21)])
    return {"control_hot_s": control_hot, "control_idle_s": control_idle, "file_bytes": len(data) + 1024, "appended": 1024, "hot": hot, "idle": idle, "hot_async": hot_async, "idle_async": idle_async, "idle_s": idle_s,
            "flush_hot_s": flush_floor(churn, 0), "flush_idle_s": flush_floor(churn, idle_s),
            "reindex_alone_s": alone_s, "reindex_alone": json.loads(out),
            "reindex_alone_runs_s": [r[0] for r in alone],
            "reindex_alone_engine_s": sorted(float(json.loads(r[1])["seconds"]) for r in alone)[1],
            "reindex_alone_cpu_s": median([r[2] for r in alone]), "round_trip_s": trip,
            "cpu_clock": "machine" if os.path.exists(CPUACCT) else "backend",
            "replaced_client_s": median([r[0] for r in replaced]),
            "replaced_engine_s": median([r[1] for r in replaced]),
            "replaced_cpu_s": median([r[2] for r in replaced])}


def churn_run(churn, rate, seconds, results):
    files = [os.path.join(d, f) for d, _, fs in os.walk(churn) for f in fs
             if "/probes" not in d and "/new" not in d]
    lines = []
    with open(files[0], "rb") as f:
        lines = f.read(1 << 16).split(b"\n")[:-1][:200] or [b"a log line"]
    os.makedirs(f"{churn}/new", exist_ok=True)
    os.makedirs(f"{churn}/probes", exist_ok=True)
    stop = threading.Event()
    rng = random.Random(rate)
    created = []
    ops = {"append": 0, "create": 0, "delete": 0}

    def writer():
        t_next = time.monotonic()
        k = 0
        while not stop.is_set():
            r = rng.random()
            if r < 0.6:
                with open(rng.choice(files), "ab") as f:
                    f.write(rng.choice(lines) + b"\n")
                ops["append"] += 1
            elif r < 0.8 or not created:
                k += 1
                p = f"{churn}/new/r{rate}-{k}.log"
                with open(p, "wb") as f:
                    f.write(b"\n".join(rng.choice(lines) for _ in range(16))[:2048] + b"\n")
                created.append(p)
                ops["create"] += 1
            else:
                os.unlink(created.pop(rng.randrange(len(created))))
                ops["delete"] += 1
            t_next += 1.0 / rate
            d = t_next - time.monotonic()
            if d > 0:
                time.sleep(d)

    stale, qlat, segs = [], [], []
    # (seconds into the run, value) of each probe and query, and every
    # error a client met (a thread that died of one used to end silently).
    stale_at, qlat_at, errors = [], [], []
    t_run = time.monotonic()

    def guarded(q):
        def run(*a):
            try:
                return q(*a)
            except SystemExit as e:
                errors.append((round(time.monotonic() - t_run, 1), str(e)[:300]))
                return None
        return run

    def prober():
        s = Session()
        i = 0
        while not stop.is_set():
            i += 1
            tok = f"probe{rate}x{i}z"
            with open(f"{churn}/probes/{tok}.log", "w") as f:
                f.write(tok + "\n")
            t0 = time.monotonic()
            q = guarded(s.q)
            while True:
                n = q(f"SELECT count(*) FROM scipis_search('{tok}', 'watched')")
                if n is not None and n != "0":
                    stale.append(time.monotonic() - t0)
                    stale_at.append((round(t0 - t_run, 1), stale[-1]))
                    break
                if time.monotonic() - t0 > 60:
                    stale.append(float("inf"))
                    break
                time.sleep(0.01)
            time.sleep(max(0.0, 0.25 - (time.monotonic() - t0)))

    def querier():
        s = Session()
        timed = guarded(s.timed)
        while not stop.is_set():
            r = timed("SELECT count(*) FROM scipis_search('error failed', 'watched', k => 10)")
            if r is not None:
                qlat.append(r[0])
                qlat_at.append((round(time.monotonic() - t_run, 1), r[0]))
            time.sleep(0.2)

    def sampler():
        s = Session()
        t0 = time.monotonic()
        q = guarded(s.q)
        while not stop.is_set():
            r = q("SELECT segments || ' ' || deleted_docs FROM scipis_collections WHERE name = 'watched'")
            if r is not None:
                segs.append((round(time.monotonic() - t0, 1), r))
            time.sleep(1)

    threads = [threading.Thread(target=f) for f in (writer, prober, querier, sampler)]
    t_start = time.monotonic()
    for t in threads:
        t.start()
    time.sleep(seconds)
    stop.set()
    for t in threads:
        t.join()
    elapsed = time.monotonic() - t_start
    s = Session()
    t0 = time.monotonic()
    s.q("SELECT scipis_wait_fresh('watched', now(), '600 s')")
    settle = time.monotonic() - t0
    # Exact throughout: the watched collection answers as one built afresh.
    s.q(f"SELECT scipis_create_collection('check{rate}', '{churn}')")
    s.q(f"SELECT files FROM scipis_index('check{rate}')")
    differing = {}
    for q in ("error", "failed connection", "probe", "info user session"):
        sql = ("SELECT count(*) FROM ((SELECT path, score FROM scipis_search('{q}', 'watched', k => NULL, ranking => 'bm25')"
               " EXCEPT SELECT path, score FROM scipis_search('{q}', 'check{r}', k => NULL, ranking => 'bm25'))"
               " UNION ALL (SELECT path, score FROM scipis_search('{q}', 'check{r}', k => NULL, ranking => 'bm25')"
               " EXCEPT SELECT path, score FROM scipis_search('{q}', 'watched', k => NULL, ranking => 'bm25'))) d")
        differing[q] = int(s.q(sql.format(q=q, r=rate)))
    files_now = s.q(f"SELECT files || ' ' || segments || ' ' || deleted_docs FROM scipis_collections WHERE name = 'watched'")
    s.q(f"SELECT scipis_drop_collection('check{rate}')")
    return {"rate": rate, "seconds": elapsed, "ops": ops, "ops_per_s": sum(ops.values()) / elapsed,
            "staleness_s": stale, "query_s": qlat, "segments": segs, "settle_s": settle,
            "staleness_at": stale_at, "query_at": qlat_at, "errors": errors,
            "differing": differing, "files_segments_deleted": files_now}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--churn", required=True)
    ap.add_argument("--tree")
    ap.add_argument("--rates", default="10,100,1000")
    ap.add_argument("--seconds", type=float, default=20)
    ap.add_argument("--results", required=True)
    ap.add_argument("--commit", default="")
    a = ap.parse_args()
    s = Session()
    s.q("CREATE EXTENSION IF NOT EXISTS scipis")
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "")
    out = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
           "machine": f"{cpu}, {os.cpu_count()} cores, {platform.release()}", "commit": a.commit,
           "costs": [], "append": None, "churn": []}
    out["costs"].append(costs(s, "logs", a.corpus))
    if a.tree and os.path.isdir(a.tree):
        out["costs"].append(costs(s, "tree", a.tree))
        # Directories unchanged since the last walk not listed, their files
        # not stat'ed (as plocate and GUFI rescan).
        out["costs"].append(costs(s, "tree_skipping", a.tree, '{"skip_unchanged_dirs": true}'))
    out["append"] = append_cost(s, a.churn, os.path.join(a.results, "alone"))
    if a.rates:
        s.q(f"SELECT scipis_create_collection('watched', '{a.churn}', '{{\"watch\": true}}')")
        t0 = time.monotonic()
        s.q("SELECT scipis_wait_fresh('watched', now(), '900 s')")
        out["watch_start_s"] = time.monotonic() - t0
    for r in (int(x) for x in a.rates.split(",") if x):
        out["churn"].append(churn_run(a.churn, r, a.seconds, a.results))
    with open(os.path.join(a.results, "raw.json"), "w") as f:
        json.dump(out, f, indent=1, default=str)
    write_report(out, os.path.join(a.results, "refresh.md"))


def append_report(a):
    al, ae, ac = a["reindex_alone_s"], a["reindex_alone_engine_s"], a["reindex_alone_cpu_s"]
    h, i = a["hot"], a["idle"]
    pc = lambda x, y: f"{100 * x / y:.2f}%"
    who = "the machine's" if a["cpu_clock"] == "machine" else "the backend's"
    return [
        f"Re-indexing that file (scipis_index of a collection of it alone, median of 3): {1e3 * al:.1f} ms by the "
        f"client's clock, {1e3 * ae:.1f} ms by its own `seconds`, {1e3 * ac:.1f} ms of {who} CPU. "
        f"The file replaced (a new inode) and refreshed in its collection (median of 3, the tail-tier merge "
        f"after it included): {1e3 * a['replaced_client_s']:.1f} ms client, {1e3 * a['replaced_engine_s']:.1f} ms "
        f"`seconds`, {1e3 * a['replaced_cpu_s']:.1f} ms CPU. `SELECT 1` through the same client: "
        f"{1e3 * a['round_trip_s']:.2f} ms.", "",
        f"scipis_refresh(name, ARRAY[file]) after 1 KiB appended, medians of {len(h['client_runs_s'])}; read "
        f"{h['bytes_read']:,} bytes ({100 * h['bytes_read'] / a['file_bytes']:.3f}% of the file); row: "
        f"changed {h['row']['files_changed']}, appended {h['row'].get('files_appended', 0)}. Percentages "
        f"of re-indexing the file alone:", "",
        f"| appends | client ms | % | `seconds` ms | % | CPU ms ({who}) | % | a 12 KiB write + fdatasync, ms |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
        f"| back to back | {1e3 * h['client_s']:.2f} | {pc(h['client_s'], al)} | {1e3 * h['engine_s']:.2f} | "
        f"{pc(h['engine_s'], ae)} | {1e3 * h['cpu_s']:.2f} | {pc(h['cpu_s'], ac)} | {1e3 * a['flush_hot_s']:.2f} |",
        f"| each after {a['idle_s']:.1f} s idle | {1e3 * i['client_s']:.2f} | {pc(i['client_s'], al)} | "
        f"{1e3 * i['engine_s']:.2f} | {pc(i['engine_s'], ae)} | {1e3 * i['cpu_s']:.2f} | "
        f"{pc(i['cpu_s'], ac)} | {1e3 * a['flush_idle_s']:.2f} |"] + [
        f"| {label}, `synchronous_commit = off` | {1e3 * x['client_s']:.2f} | {pc(x['client_s'], al)} | "
        f"{1e3 * x['engine_s']:.2f} | {pc(x['engine_s'], ae)} | {1e3 * x['cpu_s']:.2f} | "
        f"{pc(x['cpu_s'], ac)} | |"
        for label, x in (("back to back", a.get("hot_async")), (f"each after {a['idle_s']:.1f} s idle", a.get("idle_async")))
        if x] + ["",
        f"Control (`SELECT sum(i) FROM generate_series(1, 10000) i`, no file touched, medians of 21): "
        f"{1e3 * a['control_hot_s']:.2f} ms back to back, {1e3 * a['control_idle_s']:.2f} ms after "
        f"{a['idle_s']:.1f} s idle ({a['control_idle_s'] / a['control_hot_s']:.1f}x)."]


def write_report(o, path):
    L = [f"# Refresh and the watcher ({o['date']})", "",
         f"Machine: {o['machine']}. Commit {o['commit']}. One run; times are the client's wall time.", "",
         "## What a refresh costs against a full build", "",
         "| corpus | options | files | MiB | scipis_index s | unchanged refresh s (median of 5) | ratio |",
         "| --- | --- | --- | --- | --- | --- | --- |"]
    for c in o["costs"]:
        u = median(c["unchanged_s"])
        L.append(f"| {c['name']} | `{c.get('options', '{}')}` | {c['files']:,} | {c['bytes'] / 2**20:.0f} | "
                 f"{c['build_s']:.2f} | {u:.3f} | {u / c['build_s']:.3f} |")
    a = o["append"]
    L += ["", "## 1 KiB appended to a 20 MiB file", ""] + append_report(a) + ["",
          "## The watcher under churn", "",
          f"First whole-tree refresh of the watched copy: {o.get('watch_start_s', float('nan')):.2f} s.", "",
          "| target ops/s | done ops/s | probes | staleness p50 s | p99 s | max s | query p50 ms | p99 ms | segments (start, end) | deleted docs at end | catch-up s | answers differing from a fresh build | search errors |",
          "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for c in o["churn"]:
        st = c["staleness_s"]
        seg = c["segments"]
        L.append(f"| {c['rate']} | {c['ops_per_s']:.0f} | {len(st)} | {pct(st, 50):.3f} | {pct(st, 99):.3f} | "
                 f"{max(st) if st else float('nan'):.3f} | {pct(c['query_s'], 50) * 1e3:.1f} | "
                 f"{pct(c['query_s'], 99) * 1e3:.1f} | {seg[0][1].split()[0] if seg else '?'}, "
                 f"{c['files_segments_deleted'].split()[1]} | {c['files_segments_deleted'].split()[2]} | "
                 f"{c['settle_s']:.2f} | {sum(c['differing'].values())} | {len(c.get('errors', []))} |")
    with open(path, "w") as f:
        f.write("\n".join(L) + "\n")


if __name__ == "__main__":
    main()
