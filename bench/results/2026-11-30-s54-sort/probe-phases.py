import sys
p='/tmp/wt/src/core/index/tfidf_index.cpp'
s=open('/work/main/src/core/index/tfidf_index.cpp').read()
def R(a,b):
    global s
    assert a in s, a
    s=s.replace(a,b,1)
R('#include <algorithm>','#include <algorithm>\n#include <chrono>\n#include <cstdio>\ndouble g_t[8]; static double now_s(){return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();}')
R('''  const uint64_t base_seq = n ? base_seq_ : 0;
''','''  const uint64_t base_seq = n ? base_seq_ : 0;
  double T0=now_s();
''')
R('''  size_t reserved = data_reserve(n, postings_);''','''  double T1=now_s(); g_t[0]+=T1-T0; double t3=0;
  size_t reserved = data_reserve(n, postings_);''')
R('''    radix_sort(first, count);
    sort_ties(first, last, 1, lens);''','''    double t0=now_s();
    radix_sort(first, count);
    double t1=now_s();
    sort_ties(first, last, 1, lens);
    double t2=now_s(); g_t[1]+=t1-t0; g_t[2]+=t2-t1;''')
R('''    const size_t groups = (count + kTermGroup - 1) / kTermGroup;''','''    t3=now_s(); g_t[3]+=t3-t2;
    const size_t groups = (count + kTermGroup - 1) / kTermGroup;''')
R('''  meta_.finish(sf, split_count.data()''','''  double T4=now_s(); g_t[4]+=T4-t3;
  meta_.finish(sf, split_count.data()''')
R('''  seal_tf_data(data, static_cast<size_t>(out - base), blocks);
}''','''  seal_tf_data(data, static_cast<size_t>(out - base), blocks);
  g_t[5]+=now_s()-T4;
  fprintf(stderr,"PROBE gather %.3f radix %.3f ties %.3f counts %.3f groups %.3f finish %.3f\\n", g_t[0],g_t[1],g_t[2],g_t[3],g_t[4],g_t[5]);
}''')
open(p,'w').write(s)
