#!/usr/bin/env python3
"""Two engines' top-10 latency through the C door, alternating: each engine
(a door_query_bench binary, bench/engine/door_query_bench.cpp, linked with
that engine) queries an index it built, ROUNDS rounds of 9 passes, the order
alternating each round. Per query the least time over every pass (the
figure least moved by the machine's other work), then the median over each
bucket: t1/t3 queries whose largest df is at or above THR ("top") or below
it ("rest"). The answers' digests are compared too.

  python3 bench/engine/door_ab.py BIN_A INDEX_A BIN_B INDEX_B QUERIES_TSV ROUNDS THR
"""
import csv,statistics,subprocess,sys
A,IA,B,IB,tsv,rounds,thr=sys.argv[1],sys.argv[2],sys.argv[3],sys.argv[4],sys.argv[5],int(sys.argv[6]),int(sys.argv[7])
res={'A':{},'B':{}}; meta={}; dig={'A':{},'B':{}}
for r in range(rounds):
    for side in (('A','B') if r%2==0 else ('B','A')):
        b,i=(A,IA) if side=='A' else (B,IB)
        out=subprocess.run([b,'query',i,tsv,'9','10'],capture_output=True,text=True).stdout
        for row in csv.DictReader(out.splitlines()):
            res[side].setdefault(row['id'],[]).append(float(row['us']))
            meta[row['id']]=(row['kind'],max(int(d) for d in row['dfs'].split(',')))
            dig[side][row['id']]=row['digest']
for kind in ('t1','t3'):
  for nm,pk in (('top',lambda d:d>=thr),('rest',lambda d:d<thr)):
    ids=[q for q in meta if meta[q][0]==kind and pk(meta[q][1])]
    if not ids: continue
    x=statistics.median(min(res['A'][q]) for q in ids); y=statistics.median(min(res['B'][q]) for q in ids)
    print(kind,nm,len(ids),'%.1f %.1f %.3fx'%(x,y,x/y))
print('answers differing:', sum(dig['A'][q]!=dig['B'][q] for q in meta), 'of', len(meta))
