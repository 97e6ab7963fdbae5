// The query door: open a collection, search, look up a path, list files.
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "index/segment_format.h"
#include "query/collection.h"
#include "query/path_pattern.h"
#include "query/search.h"
#include "scipis_engine.h"
#include "util/bytes.h"
#include "util/door.h"

using namespace scipis;

struct scipis_index {
  Collection c;
  explicit scipis_index(std::string dir) : c(std::move(dir)) {}
};

namespace {

struct DocsOwner {
  std::vector<scipis_doc> docs;
  std::vector<std::string> paths;
};

void emit(scipis_docs* out, DocsOwner* owner) {
  for (size_t i = 0; i < owner->docs.size(); i++) {
    owner->docs[i].path = owner->paths[i].data();
    owner->docs[i].path_len = static_cast<uint32_t>(owner->paths[i].size());
  }
  out->docs = owner->docs.data();
  out->n = owner->docs.size();
  out->owner = owner;
}

void add_doc(DocsOwner& o, const DocInfo& d, std::string_view path, double score) {
  scipis_doc doc{};
  doc.size = d.size;
  doc.mtime_ns = d.mtime_ns;
  doc.tokens = d.tokens;
  doc.ctime_ns = d.ctime_ns;
  doc.inode = d.ino;
  doc.uid = d.uid;
  doc.gid = d.gid;
  doc.mode = d.mode;
  doc.score = score;
  o.docs.push_back(doc);
  o.paths.emplace_back(path);
}

}  // namespace

extern "C" scipis_index* scipis_index_open(const char* dir, scipis_error* err) {
  scipis_index* ix = nullptr;
  guarded(err, [&] { ix = new scipis_index(dir); });
  return ix;
}

extern "C" void scipis_index_close(scipis_index* ix) { delete ix; }

extern "C" int scipis_index_is_current(scipis_index* ix) {
  return ix->c.is_current() ? 1 : 0;
}

extern "C" int scipis_index_info_get(scipis_index* ix, scipis_index_info* info,
                                     scipis_error* err) {
  return guarded(err, [&] {
    const Manifest& m = ix->c.manifest();
    info->generation = m.generation;
    info->files = m.files;
    info->bytes = m.bytes;
    info->docs_with_tokens = m.docs_with_tokens;
    info->total_tokens = m.total_tokens;
    info->segments = m.segments.size();
    info->index_bytes = m.index_bytes;
  });
}

extern "C" int scipis_search(scipis_index* ix, const char* query, size_t query_len,
                             int64_t k, scipis_ranking ranking, scipis_match match,
                             scipis_docs* out, scipis_error* err) {
  *out = scipis_docs{};
  return guarded(err, [&] {
    auto terms = parse_query(ix->c.tokenizer(), std::string_view(query, query_len));
    if (terms.empty())
      fail(SCIPIS_E_INVALID, "search query has no terms (no word characters)");
    auto hits = search(ix->c, terms, k, ranking, match);
    auto owner = std::make_unique<DocsOwner>();
    for (const Hit& h : hits) {
      IndexerState& st = ix->c.indexer(h.indexer);
      add_doc(*owner, *st.docs[h.seq], st.paths[h.seq], h.score);
    }
    emit(out, owner.release());
  });
}

extern "C" int scipis_lookup(scipis_index* ix, const char* path, size_t path_len,
                             scipis_docs* out, scipis_error* err) {
  *out = scipis_docs{};
  return guarded(err, [&] {
    std::string_view p(path, path_len);
    uint64_t hash = fnv1a(p);
    uint32_t split = static_cast<uint32_t>(hash % ix->c.manifest().split_factor);
    auto owner = std::make_unique<DocsOwner>();
    for (auto& s : ix->c.segments()) {
      if (s.ref.docs == 0) continue;
      for (uint32_t rec : ix->c.file_meta(s, split).find(hash)) {
        const FileData& fd = ix->c.files(s);
        if (fd.paths[rec] == p) add_doc(*owner, fd.docs[rec], fd.paths[rec], 0);
      }
      if (!owner->docs.empty()) break;
    }
    emit(out, owner.release());
  });
}

namespace {
// Every file of the collection whose path keep() accepts, in path order.
template <typename Keep>
void list_files(scipis_index* ix, scipis_docs* out, Keep&& keep) {
  std::vector<std::pair<std::string_view, const DocInfo*>> all;
  for (uint32_t i = 0; i < ix->c.indexer_count(); i++) {
    IndexerState& st = ix->c.indexer(i);
    for (size_t k = 0; k < st.docs.size(); k++)
      if (keep(st.paths[k])) all.emplace_back(st.paths[k], st.docs[k]);
  }
  std::sort(all.begin(), all.end());
  auto owner = std::make_unique<DocsOwner>();
  for (const auto& [p, d] : all) add_doc(*owner, *d, p, 0);
  emit(out, owner.release());
}
}  // namespace

extern "C" int scipis_list_files(scipis_index* ix, scipis_docs* out, scipis_error* err) {
  *out = scipis_docs{};
  return guarded(err, [&] { list_files(ix, out, [](std::string_view) { return true; }); });
}

extern "C" int scipis_locate(scipis_index* ix, const char* pattern, size_t pattern_len,
                             scipis_docs* out, scipis_error* err) {
  *out = scipis_docs{};
  return guarded(err, [&] {
    const PathPattern pat(std::string_view(pattern, pattern_len));
    list_files(ix, out, [&](std::string_view path) { return pat.matches(path); });
  });
}

extern "C" void scipis_docs_free(scipis_docs* docs) {
  delete static_cast<DocsOwner*>(docs->owner);
  *docs = scipis_docs{};
}
