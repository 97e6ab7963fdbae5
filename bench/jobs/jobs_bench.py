#!/usr/bin/env python3
"""Indexing through the job pool against the engine alone, and a job
interrupted by a fast shutdown at about half its bytes then resumed.
Run by bench/jobs/run.sh (which starts the cluster); see its header.

Per round, in this order (alternating would not change much: each build
reads the corpus from the page cache, warmed by a first untimed build):
  engine     bench/build/index_bench --flags 0 (what a backend ran before jobs)
  engine+    the same with the flags jobs use (resume marks, sizes counted)
  pool       SELECT * FROM scipis_index('logs'), the client's wall time
  resumed    scipis_index(wait => false); a fast restart 0.35 of the pool
             build's time after the job started running, so that the stop
             lands near half the bytes: pg_ctl's fast stop takes a few
             tenths of a second to reach the worker, which indexes on until
             then (a first run stopping at 0.5 kept 0.69; its bytes_done
             is updated every 0.5 s, a quarter of a 1 GiB build from the
             page cache: too late to aim by); the job's read_bytes and
             busy_seconds (both attempts), the bytes its first attempt kept
             (where the stop landed), and the wall time from submit to
             succeeded.
"""
import argparse
import datetime
import json
import os
import platform
import shlex
import statistics
import subprocess
import time


def psql(sql):
    cmd = shlex.split(os.environ["SCIPIS_JOBS_PSQL"]) + ["-c", sql]
    return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout.strip()


def psql_retry(sql, timeout=120):
    end = time.time() + timeout
    while True:
        try:
            return psql(sql)
        except subprocess.CalledProcessError:
            if time.time() > end:
                raise
            time.sleep(0.1)


def engine(args, flags):
    out = subprocess.run([args.index_bench, "--corpus", args.corpus, "--runs", "1",
                          "--indexers", "2", "--flags", str(flags)],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def pool():
    t0 = time.monotonic()
    row = psql("SELECT row_to_json(i) FROM scipis_index('logs') i")
    return time.monotonic() - t0, json.loads(row)


def resumed(build_s):
    total = int(psql("SELECT bytes FROM scipis_collections WHERE name = 'logs'"))
    t0 = time.monotonic()
    job = int(psql("SELECT job FROM scipis_index('logs', wait => false)"))
    while True:
        state = psql(f"SELECT state FROM scipis_jobs WHERE id = {job}")
        if state == "running":
            break
        if state != "queued":
            raise SystemExit(f"the job ended {state} before it was seen running")
        time.sleep(0.005)
    time.sleep(build_s * 0.35)
    if psql(f"SELECT state FROM scipis_jobs WHERE id = {job}") != "running":
        raise SystemExit("the job ended before a third of its time: use a bigger corpus")
    t_stop = time.monotonic()
    subprocess.run(os.environ["SCIPIS_JOBS_RESTART"], shell=True, check=True,
                   capture_output=True)
    t_up = time.monotonic()
    while psql_retry(f"SELECT state FROM scipis_jobs WHERE id = {job}") not in ("succeeded", "failed", "canceled"):
        time.sleep(0.05)
    wall = time.monotonic() - t0
    row = json.loads(psql(f"SELECT row_to_json(j) FROM (SELECT state, attempts, read_bytes, busy_seconds,"
                          f" resumed_files, resumed_bytes, bytes_total, error FROM scipis_jobs"
                          f" WHERE id = {job}) j"))
    row.update(stopped_at_s=round(t_stop - t0, 3), restart_s=round(t_up - t_stop, 3),
               wall_s=round(wall, 3), corpus_bytes=total)
    return row


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--results", required=True)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--index-bench", required=True)
    ap.add_argument("--scratch", required=True)
    args = ap.parse_args()
    os.makedirs(args.results, exist_ok=True)
    start = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0)
    load0 = os.getloadavg()
    psql("CREATE EXTENSION IF NOT EXISTS scipis")
    psql(f"SELECT scipis_create_collection('logs', '{args.corpus}')")
    pool()  # warms the page cache and the cluster
    raw = []
    for r in range(1, args.rounds + 1):
        e0 = engine(args, 0)
        e3 = engine(args, 3)
        pw, prow = pool()
        res = resumed(prow["seconds"])
        rec = {"round": r, "engine_s": e0["wall_s"], "engine_flags3_s": e3["wall_s"],
               "pool_s": round(pw, 3), "pool_build_s": prow["seconds"], "resumed": res,
               "load1": os.getloadavg()[0]}
        raw.append(rec)
        print(json.dumps(rec), flush=True)
    with open(os.path.join(args.results, "raw.jsonl"), "w") as f:
        for rec in raw:
            f.write(json.dumps(rec) + "\n")
    med = lambda xs: statistics.median(xs)
    eng = med([x["engine_s"] for x in raw])
    eng3 = med([x["engine_flags3_s"] for x in raw])
    pl = med([x["pool_s"] for x in raw])
    rb = med([x["resumed"]["read_bytes"] / x["resumed"]["corpus_bytes"] for x in raw])
    busy = med([x["resumed"]["busy_seconds"] for x in raw])
    rwall = med([x["resumed"]["wall_s"] - x["resumed"]["restart_s"] for x in raw])
    kept = med([x["resumed"]["resumed_bytes"] / x["resumed"]["corpus_bytes"] for x in raw])
    mib = raw[0]["resumed"]["corpus_bytes"] / 1048576
    cpu = platform.processor() or "cpu"
    with open("/proc/cpuinfo") as f:
        model = next((l.split(":", 1)[1].strip() for l in f if l.startswith("model name")), cpu)
    lines = [
        f"# Indexing through the job pool, and a resumed job",
        "",
        f"{start.isoformat()}; {model}, {os.cpu_count()} cores, kernel {platform.release()};"
        f" load average {load0[0]:.2f} at the start, {os.getloadavg()[0]:.2f} at the end."
        f" Corpus `{args.corpus}`: {mib:.1f} MiB. {args.rounds} rounds; medians.",
        "",
        "| | seconds | ratio to the engine alone |",
        "|---|---|---|",
        f"| engine alone (index_bench, flags 0: what a backend ran before jobs) | {eng:.3f} | 1.00 |",
        f"| engine alone with the jobs' flags (resume marks, sizes counted) | {eng3:.3f} | {eng3 / eng:.2f} |",
        f"| `scipis_index` through a job worker (client wall time) | {pl:.3f} | **{pl / eng:.2f}** |",
        f"| resumed job: both attempts' build time (busy_seconds) | {busy:.3f} | {busy / pl:.2f} of the pool build |",
        f"| resumed job: submit to succeeded, restart time left out | {rwall:.3f} | **{rwall / pl:.2f}** of the pool build (target at most 1.15) |",
        "",
        f"Resumed job: bytes read by both attempts / corpus = **{rb:.3f}** (target at most 1.1);"
        f" the stop landed with {kept:.2f} of the corpus indexed and kept.",
        "",
        "Runs:",
        "",
    ]
    for x in raw:
        r = x["resumed"]
        lines.append(f"- round {x['round']}: engine {x['engine_s']:.3f} s, engine+flags {x['engine_flags3_s']:.3f} s,"
                     f" pool {x['pool_s']:.3f} s (its own {x['pool_build_s']:.3f} s); resumed: {r['state']},"
                     f" {r['attempts']} attempts, stopped at {r['stopped_at_s']} s, restart {r['restart_s']} s,"
                     f" wall {r['wall_s']} s, busy {r['busy_seconds']:.3f} s, read {r['read_bytes']} of"
                     f" {r['corpus_bytes']} bytes, kept {r['resumed_files']} files ({r['resumed_bytes']} bytes);"
                     f" load {x['load1']:.2f}")
    with open(os.path.join(args.results, "jobs.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
