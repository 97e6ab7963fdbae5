#include <cstdio>
#include <cmath>
#include <string>
#include "scipis_engine.h"
double score(scipis_index* ix, const std::string& q, const std::string& path, uint64_t* n) {
  scipis_docs d; scipis_error err;
  scipis_search(ix, q.data(), q.size(), -1, SCIPIS_BM25, SCIPIS_MATCH_ANY, &d, &err);
  double s = -1; *n = d.n;
  for (size_t i = 0; i < d.n; i++) if (std::string(d.docs[i].path, d.docs[i].path_len) == path) s = d.docs[i].score;
  scipis_docs_free(&d); return s;
}
int main(int argc, char** argv) {
  scipis_error err;
  scipis_index* a = scipis_index_open(argv[1], &err); scipis_index* b = scipis_index_open(argv[2], &err);
  for (int i = 4; i < argc; i++) {
    uint64_t na, nb; double sa = score(a, argv[i], argv[3], &na), sb = score(b, argv[i], argv[3], &nb);
    printf("%-12s refreshed %.12g (%llu hits) fresh %.12g (%llu hits) rel %.3g\n", argv[i], sa, (unsigned long long)na, sb, (unsigned long long)nb, sb > 0 ? sa / sb - 1 : 0);
  }
}
