import os,re,sys,random,hashlib
root='/var/tmp/scipis-smallfiles/linux-source-6.1'
tok=re.compile(rb'[A-Za-z0-9_\x80-\xff]+')
terms=set(); n=0
for d,_,fs in os.walk(root):
    for f in fs:
        if random.random()>0.12: continue
        try: b=open(os.path.join(d,f),'rb').read()
        except: continue
        for t in tok.findall(b): terms.add(t.lower()[:255])
terms=sorted(terms); print(len(terms),"terms", sum(map(len,terms))/len(terms),"avg len")
def cost(lst,G):
    s=0; first=0
    for i,t in enumerate(lst):
        if i%G==0: s+=len(t); first+=1; prev=t; continue
        p=0
        while p<min(len(t),len(prev)) and t[p]==prev[p]: p+=1
        s+=len(t)-p; prev=t
    return s
for G in (16,32):
    full=cost(terms,G)
    sp=[[] for _ in range(16)]
    for t in terms: sp[int(hashlib.md5(t).hexdigest()[:2],16)%16].append(t)
    split=sum(cost(x,G) for x in sp)
    print("G",G,"global-order suffix bytes/term",full/len(terms),"hash-split",split/len(terms))
