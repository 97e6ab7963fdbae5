#include <cstdio>
#include <map>
#include <string>
#include "scipis_engine.h"
std::map<std::string, unsigned long long> list(const char* dir) {
  scipis_error err; scipis_index* ix = scipis_index_open(dir, &err);
  if (!ix) { printf("open %s: %s\n", dir, err.message); exit(1); }
  scipis_docs d; scipis_list_files(ix, &d, &err);
  std::map<std::string, unsigned long long> m;
  for (size_t i = 0; i < d.n; i++) m[std::string(d.docs[i].path, d.docs[i].path_len)] = d.docs[i].tokens;
  scipis_docs_free(&d); scipis_index_close(ix); return m;
}
int main(int argc, char** argv) {
  auto a = list(argv[1]), b = list(argv[2]);
  printf("%zu %zu files\n", a.size(), b.size());
  for (auto& [p, t] : a) if (!b.count(p) || b[p] != t) printf("DIFF %s %llu vs %llu\n", p.c_str(), t, b.count(p) ? b[p] : 0ULL);
  for (auto& [p, t] : b) if (!a.count(p)) printf("ONLY fresh %s\n", p.c_str());
}
