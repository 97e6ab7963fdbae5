import re,collections,sys,subprocess
txt=subprocess.run(['perf','script','-i',sys.argv[1],'-F','comm,tid,time'],capture_output=True,text=True).stdout
samples=[]
for line in txt.splitlines():
    m=re.match(r'\s*(\S+)\s+(\d+)\s+(\d+\.\d+):',line)
    if m: samples.append((m.group(1),int(m.group(2)),float(m.group(3))))
ib=[s for s in samples if s[0].startswith('ib_')]
tids=sorted(set(s[1] for s in ib))
t0=min(s[2] for s in ib)
# indexers = the two tids with the most samples
cnt=collections.Counter(s[1] for s in ib)
ix=[t for t,_ in cnt.most_common(2)]
end_ix=max(s[2] for s in ib if s[1] in ix)
# readers: next two by count among tids < min(ix)
rd=[t for t in tids if t<min(ix)][-2:]
end_rd=max(s[2] for s in ib if s[1] in rd)
last_ix=[max(s[2] for s in ib if s[1]==t) for t in ix]
mid=[s for s in samples if t0+0.05<=s[2]<=end_ix]
idle=sum(1 for s in mid if s[0]=='swapper')
print('span %.3f readers_end %.3f ix_ends %s idle_samples_in_build %d of %d (%.1f%%)'%(end_ix-t0,end_rd-t0,['%.3f'%(x-t0) for x in last_ix],idle,len(mid),100*idle/len(mid)))
