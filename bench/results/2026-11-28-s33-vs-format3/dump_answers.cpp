#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include "scipis_engine.h"
int main(int argc, char** argv) {
  scipis_error err;
  scipis_index* ix = scipis_index_open(argv[1], &err);
  if (!ix) { fprintf(stderr, "%s\n", err.message); return 1; }
  std::ifstream in(argv[2]); std::string line; std::getline(in, line);
  while (std::getline(in, line)) {
    std::istringstream f(line); std::string id, kind, text; std::getline(f, id, '\t'); std::getline(f, kind, '\t'); std::getline(f, text, '\t');
    scipis_docs d;
    if (scipis_search(ix, text.data(), text.size(), 10, SCIPIS_TFIDF, SCIPIS_MATCH_ANY, &d, &err)) { fprintf(stderr, "%s\n", err.message); return 1; }
    for (size_t i = 0; i < d.n; i++) printf("%s\t%.*s\t%.17g\n", id.c_str(), (int)d.docs[i].path_len, d.docs[i].path, d.docs[i].score);
    scipis_docs_free(&d);
  }
}
