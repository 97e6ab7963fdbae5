// Collection options: documented defaults and their ranges.
#include <cstring>
#include <string>

#include "scipis_engine.h"
#include "util/door.h"

using namespace scipis;

extern "C" void scipis_options_init(scipis_options* o) {
  std::memset(o, 0, sizeof *o);
  scipis_tokenizer_named("word", o->delimiter);
  o->block_size = 1u << 20;
  o->path_index_size = 64ull << 20;
  // 32 MiB: builds of 96, 64 or 32 MiB tables ran 1.09-1.12x (Linux
  // tree) and 1.26-1.33x (logs) as fast as of 128 MiB
  // (bench/results/2026-11-30-table-size): a larger table's pages cost
  // more to fault in and to miss in than its fewer flushes save. A build
  // after 20 s idle, as builds usually start, pays about twice for them
  // (the VM has handed the freed pages back to its host); there 32 MiB
  // ran 0.88-0.91x the wall time of 64 and held 40% less memory, and
  // back to back it ran alike or faster (bench/results/2026-11-30-s54-sort).
  o->tfidf_index_size = 32ull << 20;
  o->index_depth = 4;
  o->split_factor = 1;
  // A build's segment files are read back once, by the merge that
  // follows; through the page cache each cost a copy into fresh pages
  // (bench/results/2026-12-01-s59).
  o->direct_writes = 1;
}

extern "C" int scipis_tokenizer_named(const char* name, unsigned char delim[256]) {
  if (std::strcmp(name, "word") == 0) {
    for (int b = 0; b < 256; b++) {
      bool tok = (b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z') ||
                 (b >= '0' && b <= '9') || b == '_' || b >= 0x80;
      delim[b] = tok ? 0 : 1;
    }
    return 0;
  }
  if (std::strcmp(name, "whitespace") == 0) {
    for (int b = 0; b < 256; b++)
      delim[b] = (b == ' ' || b == '\t' || b == '\n' || b == '\v' || b == '\f' ||
                  b == '\r')
                     ? 1
                     : 0;
    return 0;
  }
  return -1;
}

static void range(const char* name, uint64_t v, uint64_t lo, uint64_t hi) {
  if (v < lo || v > hi)
    fail(SCIPIS_E_INVALID,
         "option \"%s\" must be between %llu and %llu, not %llu", name,
         static_cast<unsigned long long>(lo), static_cast<unsigned long long>(hi),
         static_cast<unsigned long long>(v));
}

static void irange(const char* name, int v, int lo, int hi) {
  if (v < lo || v > hi)
    fail(SCIPIS_E_INVALID, "option \"%s\" must be between %d and %d, not %d",
         name, lo, hi, v);
}

extern "C" int scipis_options_check(const scipis_options* o, scipis_error* err) {
  return guarded(err, [&] {
    irange("reader_threads", o->reader_threads, 0, 256);
    irange("indexer_threads", o->indexer_threads, 0, 256);
    irange("writer_threads", o->writer_threads, 0, 256);
    range("block_size", o->block_size, 512, 1ull << 30);
    range("path_index_size", o->path_index_size, 65536, 1ull << 40);
    range("tfidf_index_size", o->tfidf_index_size, 65536, 1ull << 40);
    irange("index_depth", o->index_depth, 1, 1024);
    irange("split_factor", o->split_factor, 1, 4096);
    if (o->direct_io && o->block_size % 4096 != 0)
      fail(SCIPIS_E_INVALID,
           "option \"block_size\" must be a multiple of 4096 when \"direct_io\" is on");
    bool any_token = false;
    for (int b = 0; b < 256; b++) any_token |= o->delimiter[b] == 0;
    if (!any_token)
      fail(SCIPIS_E_INVALID, "option \"delimiters\" leaves no byte to form tokens");
  });
}

extern "C" int scipis_query_has_terms(const char* q, size_t len,
                                      const unsigned char delim[256]) {
  for (size_t i = 0; i < len; i++)
    if (!delim[static_cast<unsigned char>(q[i])]) return 1;
  return 0;
}
