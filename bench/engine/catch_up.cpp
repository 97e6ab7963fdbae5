// The renumbering merge's commit when refreshes committed meanwhile: it
// holds the collection's lock while it refreshes on top of the merged
// generation what changed. On a tree of many small files:
//
//   bench/build/catch_up SCRATCH FILES CHANGED [ROUNDS]
//
// Makes SCRATCH/tree (FILES files of about 200 bytes, 1,000 to a
// directory) once, then each round: builds SCRATCH/idx afresh, rewrites
// a tenth of the files five times (each time refreshed: tombstones for
// the merge to drop), starts scipis_compact_garbage_start, rewrites CHANGED files and
// refreshes them by name while it runs, and times scipis_build_finish
// (the commit with its catch-up), for scale an unchanged refresh of the
// whole tree, then a refresh of 20 x CHANGED rewritten files named.
// Prints one line per round.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "scipis_engine.h"

namespace {

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

bool write_file(const std::string& path, const std::string& text) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) return false;
  const bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  return ::close(fd) == 0 && ok;
}

std::string text(std::mt19937& rng) {
  std::string t;
  while (t.size() < 200)
    t += "job" + std::to_string(rng() % 50000) + " step" + std::to_string(rng() % 500) + " ok\n";
  return t;
}

int wait_finish(scipis_build* b, scipis_build_stats* st, scipis_error* err) {
  while (!scipis_build_wait(b, 5)) {
  }
  return scipis_build_finish(b, st, err);
}

int refresh(const std::string& idx, const std::string& tree, const scipis_options& o,
            const std::vector<std::string>& paths, scipis_build_stats* st, scipis_error* err) {
  std::vector<const char*> p;
  for (const auto& s : paths) p.push_back(s.c_str());
  scipis_build* b = scipis_refresh_start(idx.c_str(), tree.c_str(), &o, p.data(), static_cast<int>(p.size()), 0, err);
  return b ? wait_finish(b, st, err) : -1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: catch_up SCRATCH FILES CHANGED [ROUNDS]\n");
    return 2;
  }
  const std::string scratch = argv[1], tree = scratch + "/tree", idx = scratch + "/idx";
  const int files = std::atoi(argv[2]), changed = std::atoi(argv[3]);
  const int rounds = argc > 4 ? std::atoi(argv[4]) : 3;
  std::mt19937 rng(7);
  std::vector<std::string> paths;
  for (int i = 0; i < files; i++)
    paths.push_back(tree + "/d" + std::to_string(i / 1000) + "/f" + std::to_string(i) + ".log");
  ::mkdir(scratch.c_str(), 0755);
  if (::mkdir(tree.c_str(), 0755) == 0) {
    for (int i = 0; i < files; i++) {
      if (i % 1000 == 0) ::mkdir((tree + "/d" + std::to_string(i / 1000)).c_str(), 0755);
      if (!write_file(paths[i], text(rng))) return std::perror("write"), 1;
    }
    ::sleep(1);  // past the racy window
  }
  scipis_options o;
  scipis_options_init(&o);
  scipis_error err;
  scipis_build_stats st;
  for (int r = 0; r < rounds; r++) {
    std::system(("rm -rf '" + idx + "'").c_str());
    scipis_build* b = scipis_build_start(idx.c_str(), tree.c_str(), &o, &err);
    if (!b || wait_finish(b, &st, &err)) return std::puts(err.message), 1;
    std::vector<std::string> garbage;
    for (int i = 0; i < files / 10; i++) garbage.push_back(paths[rng() % files]);
    for (int k = 0; k < 5; k++) {
      for (const auto& p : garbage) write_file(p, text(rng));
      ::usleep(150000);
      if (refresh(idx, tree, o, {}, &st, &err)) return std::puts(err.message), 1;
    }
    const uint64_t dead_before = st.deleted_docs;
    const int needed = scipis_compact_needed(idx.c_str(), 0);
    scipis_build* m = scipis_compact_garbage_start(idx.c_str(), tree.c_str(), &o, &err);
    if (!m) return std::puts(err.message), 1;
    std::vector<std::string> meanwhile;
    for (int i = 0; i < changed; i++) meanwhile.push_back(paths[rng() % files]);
    for (const auto& p : meanwhile) write_file(p, text(rng));
    ::usleep(150000);
    if (refresh(idx, tree, o, meanwhile, &st, &err)) return std::puts(err.message), 1;
    const double t0 = now();
    scipis_build_stats ms;
    if (wait_finish(m, &ms, &err)) return std::puts(err.message), 1;
    const double commit = now() - t0;
    const double t1 = now();
    if (refresh(idx, tree, o, {}, &st, &err)) return std::puts(err.message), 1;
    const double whole = now() - t1;
    // A batch of named paths twenty times as large (a watcher's under a
    // burst, or a change log's).
    std::vector<std::string> batch;
    for (int i = 0; i < 20 * changed; i++) batch.push_back(paths[rng() % files]);
    for (const auto& p : batch) write_file(p, text(rng));
    ::usleep(150000);
    scipis_build_stats bs;
    const double t2 = now();
    if (refresh(idx, tree, o, batch, &bs, &err)) return std::puts(err.message), 1;
    const double named = now() - t2;
    std::printf("round %d: files %d, changed meanwhile %d: merge dropped %llu documents; its commit %.3f s; "
                "an unchanged refresh of the tree %.3f s (found %llu changed); segments merged %llu (dead before %llu, needed %d); a refresh of %zu named paths %.3f s (%llu changed)\n",
                r, files, changed, static_cast<unsigned long long>(ms.docs_dropped), commit, whole,
                static_cast<unsigned long long>(st.files_changed + st.files_added + st.files_deleted),
                static_cast<unsigned long long>(ms.segments_merged), static_cast<unsigned long long>(dead_before), needed, batch.size(), named,
                static_cast<unsigned long long>(bs.files_changed));
  }
  return 0;
}
