#include <cstdio>
#include "query/collection.h"
using namespace scipis;
int main(int, char** argv) {
  Collection c(argv[1]);
  for (const auto& l : c.chain_links())
    std::printf("root %u/%llu ext %u/%llu tokens %llu retract '%s'\n", l.root.indexer, (unsigned long long)l.root.seq,
                l.ext.indexer, (unsigned long long)l.ext.seq, (unsigned long long)l.tokens, l.retract.c_str());
}
