#!/usr/bin/env python3
# Alternates door_query_bench binaries (bench/engine/door_query_bench.cpp,
# each built against one engine) over their indexes and queries, and prints
# each side's median over queries of the per-query medians: the quick A/B
# of session 47's query changes (format_ab.sh is the full one, building
# both engines and indexes from commits).
#
#   python3 bench/engine/ab_query.py QUERIES_TSV PASSES ROUNDS NAME=BENCH:INDEX_DIR ...
import csv, statistics, subprocess, sys
tsv, passes, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
sides = [a.split('=') for a in sys.argv[4:]]
res = {n: {} for n, _ in sides}
for r in range(rounds):
    order = sides if r % 2 == 0 else sides[::-1]
    for n, spec in order:
        b, idx = spec.split(':')
        out = subprocess.run([b, 'query', idx, tsv, passes, '10'], capture_output=True, text=True, check=True).stdout
        for row in csv.DictReader(out.splitlines()):
            res[n].setdefault(row['id'], []).append(float(row['us']))
for n, _ in sides:
    med = statistics.median(statistics.median(v) for v in res[n].values())
    print(n, 'p50 of per-query medians: %.2f us' % med)
