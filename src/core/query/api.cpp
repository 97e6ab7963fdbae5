// The query door: open a collection, search, look up a path, list files.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "index/segment_format.h"
#include "query/collection.h"
#include "query/doc_reader.h"
#include "query/path_pattern.h"
#include "query/search.h"
#include "scipis_engine.h"
#include "util/bytes.h"
#include "util/door.h"

using namespace scipis;

// A refresh or merge that publishes a generation removes the files of
// the one before that no later generation shares: a handle opened on it
// may find a file it had not opened yet gone. It then answers from the
// generation now current (a whole state, as a search must see), opened
// afresh; an error from the current generation is the answer.
constexpr int kReopenAttempts = 3;

namespace {

// prev: the handle's older state, whose unchanged segments it takes over.
std::unique_ptr<Collection> open_collection(const std::string& dir, Collection* prev = nullptr) {
  for (int attempt = 1;; attempt++) {
    try {
      return std::make_unique<Collection>(dir, read_current(dir), prev, true);
    } catch (const Error& e) {
      // Its manifest replaced while its lists were read: read again.
      if (e.code() != SCIPIS_E_CORRUPT || attempt == kReopenAttempts) throw;
    }
  }
}

}  // namespace

struct scipis_index {
  std::string dir;
  std::unique_ptr<Collection> c;
  explicit scipis_index(std::string d) : dir(std::move(d)), c(open_collection(dir)) {}
};

namespace {

// body (which reads ix->c) against ix's generation, again against the
// current one if it failed on a generation since replaced.
template <typename F>
int on_current(scipis_index* ix, scipis_error* err, F&& body) {
  for (int attempt = 1;; attempt++) {
    const int rc = guarded(err, body);
    if (rc == 0 || attempt == kReopenAttempts || ix->c->is_current()) return rc;
    if (guarded(err, [&] { ix->c = open_collection(ix->dir, ix->c.get()); }) != 0) return -1;
  }
}

// The documents of an answer and their paths, all in one buffer (a string
// each was an allocation and a free per hit).
struct DocsOwner {
  std::vector<scipis_doc> docs;
  std::string paths;
  std::vector<std::pair<size_t, size_t>> path_at;  // per doc: offset, length
  void resize(size_t n) {
    docs.resize(n);
    path_at.resize(n);
  }
};

void emit(scipis_docs* out, DocsOwner* owner) {
  for (size_t i = 0; i < owner->docs.size(); i++) {
    owner->docs[i].path = owner->paths.data() + owner->path_at[i].first;
    owner->docs[i].path_len = static_cast<uint32_t>(owner->path_at[i].second);
  }
  out->docs = owner->docs.data();
  out->n = owner->docs.size();
  out->owner = owner;
}

void set_doc(DocsOwner& o, size_t i, const DocInfo& d, std::string_view path, double score) {
  scipis_doc& doc = o.docs[i];
  doc = scipis_doc{};
  doc.size = d.size;
  doc.mtime_ns = d.mtime_ns;
  doc.tokens = d.tokens;
  doc.ctime_ns = d.ctime_ns;
  doc.inode = d.ino;
  doc.uid = d.uid;
  doc.gid = d.gid;
  doc.mode = d.mode;
  doc.score = score;
  o.path_at[i] = {o.paths.size(), path.size()};
  o.paths.append(path);
}

void add_doc(DocsOwner& o, const DocInfo& d, std::string_view path, double score) {
  o.resize(o.docs.size() + 1);
  set_doc(o, o.docs.size() - 1, d, path, score);
}

}  // namespace

extern "C" scipis_index* scipis_index_open(const char* dir, scipis_error* err) {
  scipis_index* ix = nullptr;
  guarded(err, [&] { ix = new scipis_index(dir); });
  return ix;
}

extern "C" void scipis_index_close(scipis_index* ix) { delete ix; }

extern "C" int scipis_index_update(scipis_index* ix, scipis_error* err) {
  return guarded(err, [&] { ix->c = open_collection(ix->dir, ix->c.get()); });
}

extern "C" int scipis_index_is_current(scipis_index* ix) {
  return ix->c->is_current() ? 1 : 0;
}

extern "C" int scipis_index_info_get(scipis_index* ix, scipis_index_info* info,
                                     scipis_error* err) {
  return guarded(err, [&] {
    const Manifest& m = ix->c->manifest();
    info->generation = m.generation;
    info->files = m.files;
    info->bytes = m.bytes;
    info->docs_with_tokens = m.docs_with_tokens;
    info->total_tokens = m.total_tokens;
    info->segments = m.segments.size();
    info->index_bytes = m.index_bytes;
    info->deleted_docs = m.deleted;
    info->heap_bytes = ix->c->heap_bytes() + sizeof(scipis_index) + ix->dir.capacity();
    info->mapped_bytes = ix->c->mapped_bytes();
  });
}

extern "C" int scipis_search(scipis_index* ix, const char* query, size_t query_len,
                             int64_t k, scipis_ranking ranking, scipis_match match,
                             scipis_docs* out, scipis_error* err) {
  *out = scipis_docs{};
  return on_current(ix, err, [&] {
    auto terms = parse_query(ix->c->tokenizer(), std::string_view(query, query_len));
    if (terms.empty())
      fail(SCIPIS_E_INVALID, "search query has no terms (no word characters)");
    auto hits = search(*ix->c, terms, k, ranking, match);
    auto owner = std::make_unique<DocsOwner>();
    owner->resize(hits.size());
    owner->paths.reserve(hits.size() * 64);
    // Records read in document order, each block once, then placed in
    // rank order.
    std::vector<size_t> order(hits.size());
    for (size_t i = 0; i < order.size(); i++) order[i] = i;
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      return hits[a].indexer != hits[b].indexer ? hits[a].indexer < hits[b].indexer : hits[a].seq < hits[b].seq;
    });
    // On the stack: a reader's block of records is 5 KiB, and allocating
    // it took free()'s consolidation with it on every query.
    std::optional<DocReader> rd;
    uint32_t rd_indexer = 0;
    for (size_t i : order) {
      const Hit& h = hits[i];
      if (!rd || rd_indexer != h.indexer) {
        rd.emplace(*ix->c, h.indexer);
        rd_indexer = h.indexer;
      }
      DocInfo d = rd->doc(h.seq);
      d.tokens = ix->c->tokens_of(h.indexer, h.seq, d.tokens);
      set_doc(*owner, i, d, rd->path(h.seq), h.score);
    }
    emit(out, owner.release());
  });
}

extern "C" int scipis_lookup(scipis_index* ix, const char* path, size_t path_len,
                             scipis_docs* out, scipis_error* err) {
  *out = scipis_docs{};
  return on_current(ix, err, [&] {
    std::string_view p(path, path_len);
    uint64_t hash = fnv1a(p);
    uint32_t split = static_cast<uint32_t>(hash % ix->c->manifest().split_factor);
    auto owner = std::make_unique<DocsOwner>();
    DocInfo docs[kFileBlock];
    size_t ends[kFileBlock];
    std::string paths;
    for (auto& s : ix->c->segments()) {
      if (s.ref.docs == 0) continue;
      for (uint32_t rec : ix->c->file_meta(s, split).find(hash)) {
        if (ix->c->hidden(s, rec)) continue;
        const FileBlocks& fb = ix->c->files(s);
        paths.clear();
        fb.decode(rec / kFileBlock, docs, paths, ends);
        const size_t i = rec % kFileBlock, at = i ? ends[i - 1] : 0;
        const std::string_view found = std::string_view(paths).substr(at, ends[i] - at);
        docs[i].tokens = ix->c->tokens_of(s.ref.indexer, s.seq0 + rec, docs[i].tokens);
        if (found == p) add_doc(*owner, docs[i], found, 0);
      }
      if (!owner->docs.empty()) break;
    }
    emit(out, owner.release());
  });
}

namespace {
// Every file of the collection that keep(path, doc, record) accepts, in
// path order, read block by block from the mapped file data; segments that
// seg_ok() rules out are not opened, and only the blocks next_block(s, fb,
// b) names (the first one from b on that may hold a match, or fb.blocks())
// are read.
template <typename Keep, typename SegOk, typename NextBlock>
void list_files(scipis_index* ix, scipis_docs* out, Keep&& keep, SegOk&& seg_ok,
                NextBlock&& next_block, scipis_scan_stats* stats = nullptr) {
  std::vector<std::pair<std::string, DocInfo>> all;
  DocInfo docs[kFileBlock];
  size_t ends[kFileBlock];
  std::string paths;
  for (auto& s : ix->c->segments()) {
    if (s.ref.docs == 0 || !seg_ok(s)) continue;
    const FileBlocks& fb = ix->c->files(s);
    if (stats) stats->blocks += fb.blocks();
    for (size_t b = next_block(s, fb, 0); b < fb.blocks(); b = next_block(s, fb, b + 1)) {
      if (stats) stats->blocks_read++;
      paths.clear();
      fb.decode(b, docs, paths, ends);
      for (size_t i = 0, at = 0; i < fb.records_in(b); at = ends[i++]) {
        const std::string_view p = std::string_view(paths).substr(at, ends[i] - at);
        const uint64_t rec = b * kFileBlock + i;
        if (ix->c->hidden(s, rec)) continue;
        docs[i].tokens = ix->c->tokens_of(s.ref.indexer, s.seq0 + rec, docs[i].tokens);
        if (keep(p, docs[i], rec)) all.emplace_back(std::string(p), docs[i]);
      }
    }
  }
  std::sort(all.begin(), all.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  auto owner = std::make_unique<DocsOwner>();
  owner->docs.reserve(all.size());
  owner->path_at.reserve(all.size());
  size_t bytes = 0;
  for (const auto& [p, d] : all) bytes += p.size();
  owner->paths.reserve(bytes);
  for (const auto& [p, d] : all) add_doc(*owner, d, p, 0);
  emit(out, owner.release());
}

constexpr auto kEverySegment = [](SegmentState&) { return true; };
constexpr auto kEveryBlock = [](SegmentState&, const FileBlocks&, size_t b) { return b; };
constexpr auto kEveryFile = [](std::string_view, const DocInfo&, size_t) { return true; };
}  // namespace

extern "C" int scipis_list_files(scipis_index* ix, scipis_docs* out, scipis_error* err) {
  *out = scipis_docs{};
  return on_current(ix, err, [&] {
    list_files(ix, out, kEveryFile, kEverySegment, kEveryBlock);
  });
}

extern "C" int scipis_locate(scipis_index* ix, const char* pattern, size_t pattern_len,
                             scipis_docs* out, scipis_error* err) {
  *out = scipis_docs{};
  return on_current(ix, err, [&] {
    const PathPattern pat(std::string_view(pattern, pattern_len));
    // The generation's trigram table over most segments' paths (if
    // written) names their candidate records at once; each other segment's
    // own trigram index names its own (or none, when the pattern has no literal run
    // of 3 bytes: then all). A segment with no candidate is passed over
    // without mapping its file data, which a new backend would otherwise
    // open for every segment, and only the candidates' blocks are read,
    // only candidates matched.
    const GenPaths* gp = ix->c->gen_paths();
    std::optional<std::vector<std::vector<uint32_t>>> covered;
    if (gp) covered = gp->candidates(pat);
    std::vector<uint32_t> cands;
    bool scan_all = false;
    size_t at = 0;
    auto seg_ok = [&](SegmentState& s) {
      at = 0;
      cands.clear();
      std::optional<std::vector<uint32_t>> c;
      if (s.covered < 0)
        c = ix->c->trigrams(s).candidates(pat);
      else if (covered)
        c = std::move((*covered)[static_cast<size_t>(s.covered)]);
      scan_all = !c;
      if (c) cands = std::move(*c);
      return scan_all || !cands.empty();
    };
    auto next_block = [&](SegmentState&, const FileBlocks&, size_t b) -> size_t {
      if (scan_all) return b;
      while (at < cands.size() && cands[at] < b * kFileBlock) at++;
      return at < cands.size() ? cands[at] / kFileBlock : SIZE_MAX;
    };
    auto keep = [&](std::string_view path, const DocInfo&, size_t rec) {
      if (scan_all) return pat.matches(path);
      while (at < cands.size() && cands[at] < rec) at++;
      return at < cands.size() && cands[at] == rec && pat.matches(path);
    };
    list_files(ix, out, keep, seg_ok, next_block);
  });
}

extern "C" void scipis_file_filter_init(scipis_file_filter* f) {
  *f = scipis_file_filter{};
  f->size_max = UINT64_MAX;
  f->mtime_min = f->ctime_min = INT64_MIN;
  f->mtime_max = f->ctime_max = INT64_MAX;
  f->uid_max = f->gid_max = UINT32_MAX;
}

extern "C" int scipis_list_files_where(scipis_index* ix, const scipis_file_filter* f,
                                       scipis_docs* out, scipis_scan_stats* stats,
                                       scipis_error* err) {
  *out = scipis_docs{};
  const scipis_scan_stats before = stats ? *stats : scipis_scan_stats{};
  return on_current(ix, err, [&] {
    if (stats) *stats = before;  // an attempt on a replaced generation counts for nothing
    const std::string_view from(f->path_from ? f->path_from : "", f->path_from ? f->path_from_len : 0);
    const std::string_view to(f->path_to ? f->path_to : "", f->path_to ? f->path_to_len : 0);
    // An empty upper end is below every path: nothing matches.
    if (f->path_to_set && to.empty()) return emit(out, new DocsOwner);
    auto keep = [&](std::string_view p, const DocInfo& d, size_t) {
      return d.size >= f->size_min && d.size <= f->size_max && d.mtime_ns >= f->mtime_min &&
             d.mtime_ns <= f->mtime_max && d.ctime_ns >= f->ctime_min && d.ctime_ns <= f->ctime_max &&
             d.uid >= f->uid_min && d.uid <= f->uid_max && d.gid >= f->gid_min && d.gid <= f->gid_max &&
             p >= from && (!f->path_to_set || p < to);
    };
    // Path bounds in terms of what follows the file's common prefix,
    // worked out once per file.
    const FileBlocks* last = nullptr;
    bool any = true;
    std::string_view sfrom, sto;
    auto block_ok = [&](const FileBlocks& fb, size_t b) {
      if (&fb != last) {
        any = range_after_prefix(fb.common_prefix(), from, to, f->path_to_set, sfrom, sto);
        last = &fb;
      }
      if (!any) return false;
      const FileBlockStats st = fb.stats(b);
      return st.size_max >= f->size_min && st.size_min <= f->size_max && st.mtime_max >= f->mtime_min &&
             st.mtime_min <= f->mtime_max && st.ctime_max >= f->ctime_min && st.ctime_min <= f->ctime_max &&
             st.uid_max >= f->uid_min && st.uid_min <= f->uid_max && st.gid_max >= f->gid_min &&
             st.gid_min <= f->gid_max && st.paths_may_meet(sfrom, sto);
    };
    auto next_block = [&](SegmentState&, const FileBlocks& fb, size_t b) {
      while (b < fb.blocks() && !block_ok(fb, b)) b++;
      return b;
    };
    list_files(ix, out, keep, kEverySegment, next_block, stats);
  });
}

extern "C" void scipis_docs_free(scipis_docs* docs) {
  delete static_cast<DocsOwner*>(docs->owner);
  *docs = scipis_docs{};
}
