// A watcher-like batch refreshed by path, ROUNDS times: APPENDS lines appended
// to random logs of TREE and NEW fresh files of 16 lines, then one scoped
// refresh of those paths; prints its wall time, segments and bytes read.
// TREE is changed (a new/ directory is added): give it a copy.
//   bench/build/watcher_batch TREE INDEX_DIR APPENDS NEW ROUNDS
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <thread>
#include <vector>
#include "scipis_engine.h"
namespace fs = std::filesystem;
static int finish(scipis_build* b, scipis_build_stats* st, scipis_error* err) { if (!b) return -1; while (!scipis_build_wait(b, 2)) {} return scipis_build_finish(b, st, err); }
int main(int argc, char** argv) {
  if (argc != 6) { fprintf(stderr, "usage: watcher_batch TREE INDEX_DIR APPENDS NEW ROUNDS\n"); return 2; }
  std::string tree = argv[1], idx = argv[2]; int nappend = atoi(argv[3]), nnew = atoi(argv[4]), rounds = atoi(argv[5]);
  scipis_options o; scipis_options_init(&o); o.indexer_threads = 2;
  scipis_error err; scipis_build_stats st;
  if (!fs::exists(idx)) { if (finish(scipis_build_start(idx.c_str(), tree.c_str(), &o, &err), &st, &err)) { puts(err.message); return 1; } printf("built: %llu segments\n", (unsigned long long)st.segments); }
  std::vector<std::string> files; for (auto& e : fs::recursive_directory_iterator(tree)) if (e.is_regular_file() && e.path().string().find("/new/") == std::string::npos) files.push_back(e.path());
  std::mt19937 rng(7); fs::create_directories(tree + "/new"); static int k = 0;
  for (int r = 0; r < rounds; r++) {
    std::vector<std::string> paths;
    for (int i = 0; i < nappend; i++) { auto& f = files[rng() % files.size()]; std::ofstream(f, std::ios::app) << "Jun 14 15:16:01 combo sshd(pam_unix)[19939]: authentication failure; logname= uid=0 euid=0 tty=NODEVssh ruser= rhost=218.188.2.4 " << rng() << "\n"; paths.push_back(f); }
    for (int i = 0; i < nnew; i++) { std::string p = tree + "/new/n" + std::to_string(k++) + ".log"; std::ofstream out(p); for (int l = 0; l < 16; l++) out << "Jun 14 15:16:01 combo sshd(pam_unix)[" << rng() << "]: check pass; user unknown " << rng() << "\n"; paths.push_back(p); }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    std::vector<const char*> ps; for (auto& p : paths) ps.push_back(p.c_str());
    auto t0 = std::chrono::steady_clock::now();
    if (finish(scipis_refresh_start(idx.c_str(), tree.c_str(), &o, ps.data(), (int)ps.size(), 0, &err), &st, &err)) { puts(err.message); return 1; }
    printf("round %d: %.1f ms, segments %llu, appended %llu added %llu bytes_read %llu\n", r, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() * 1e3, (unsigned long long)st.segments, (unsigned long long)st.files_appended, (unsigned long long)st.files_added, (unsigned long long)st.bytes_read);
  }
}
