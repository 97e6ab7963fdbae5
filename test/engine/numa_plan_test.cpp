// NUMA placement: the plan over supplied topologies (1, 2, 4 and 8 nodes,
// uneven cores, memory-only nodes), then builds under those topologies
// with a placer that records instead of pinning: every thread runs where
// the plan says, every region is bound to its thread's node, nothing
// crosses between nodes, and the index answers as the brute-force oracle.
#include <gtest/gtest.h>
#include <sched.h>
#include <sys/stat.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "brute_force.h"
#include "pipeline/buffer_pool.h"
#include "pipeline/crawler.h"
#include "pipeline/numa_plan.h"
#include "pipeline/pipeline.h"
#include "test_util.h"

namespace {

using scipis::NumaPlan;
using scipis::NumaRole;
using scipis::NumaTopology;

NumaTopology topology(const std::vector<int>& cpus_per_node) {
  NumaTopology t;
  int cpu = 0;
  for (size_t n = 0; n < cpus_per_node.size(); n++) {
    NumaTopology::Node node;
    node.id = static_cast<int>(n);
    for (int c = 0; c < cpus_per_node[n]; c++) node.cpus.push_back(cpu++);
    t.nodes.push_back(node);
  }
  return t;
}

const std::vector<std::vector<int>> kTopologies = {
    {8}, {4, 4}, {3, 1}, {1, 3, 2, 6}, {2, 0, 5, 5}, {1, 2, 3, 4, 5, 6, 7, 8},
    {4, 4, 4, 4, 0, 1, 16, 2}, {1, 1, 1, 1, 1, 1, 1, 1}};

std::vector<int> per_node(const std::vector<int>& node_of, size_t nodes) {
  std::vector<int> count(nodes, 0);
  for (int n : node_of) count.at(static_cast<size_t>(n))++;
  return count;
}

// No thread could move to another node and leave the threads per CPU
// more even (the highest-averages property), beyond the floor per node.
void expect_shared_by_cores(const std::vector<int>& count, const std::vector<size_t>& cpus,
                            int floor, const std::string& what) {
  for (size_t i = 0; i < count.size(); i++) {
    EXPECT_GE(count[i], floor) << what << " node " << i;
    if (count[i] <= floor) continue;
    for (size_t j = 0; j < count.size(); j++)
      EXPECT_LE(static_cast<size_t>(count[i]) * cpus[j], static_cast<size_t>(count[j] + 1) * cpus[i])
          << what << ": node " << i << " has " << count[i] << " for " << cpus[i] << " cpus, node "
          << j << " " << count[j] << " for " << cpus[j];
  }
}

void check_plan(const NumaTopology& topo, int readers, int indexers, int writers) {
  const std::string what = std::to_string(topo.nodes.size()) + " nodes, " + std::to_string(readers) +
                           "r/" + std::to_string(indexers) + "i/" + std::to_string(writers) + "w";
  NumaPlan p = scipis::plan_numa(topo, readers, indexers, writers);
  std::map<int, size_t> cpus_of;
  size_t with_cpus = 0;
  for (const auto& n : topo.nodes) {
    cpus_of[n.id] = n.cpus.size();
    with_cpus += !n.cpus.empty();
  }
  const size_t k = std::min({with_cpus, static_cast<size_t>(readers), static_cast<size_t>(indexers)});
  ASSERT_EQ(p.reader_node.size(), static_cast<size_t>(readers)) << what;
  ASSERT_EQ(p.indexer_node.size(), static_cast<size_t>(indexers)) << what;
  ASSERT_EQ(p.writer_node.size(), static_cast<size_t>(writers)) << what;
  if (k <= 1) {
    EXPECT_FALSE(p.pinned()) << what;
    EXPECT_EQ(p.node_count(), 1u) << what;
    EXPECT_EQ(p.crawler_node, std::vector<int>{0}) << what;
    for (const auto* v : {&p.reader_node, &p.indexer_node, &p.writer_node})
      for (int n : *v) EXPECT_EQ(n, 0) << what;
    return;
  }
  ASSERT_TRUE(p.pinned()) << what;
  ASSERT_EQ(p.nodes.size(), k) << what;
  ASSERT_TRUE(std::is_sorted(p.nodes.begin(), p.nodes.end())) << what;
  // The nodes with the most CPUs, ties to the lower id; never one without.
  std::set<int> used(p.nodes.begin(), p.nodes.end());
  EXPECT_EQ(used.size(), k) << what;
  for (const auto& n : topo.nodes) {
    if (used.count(n.id)) {
      EXPECT_FALSE(n.cpus.empty()) << what;
      continue;
    }
    for (int u : used)
      EXPECT_TRUE(n.cpus.size() < cpus_of[u] || (n.cpus.size() == cpus_of[u] && n.id > u))
          << what << ": node " << n.id << " left out for node " << u;
  }
  std::vector<size_t> cpus;
  for (int id : p.nodes) cpus.push_back(cpus_of[id]);
  // One crawler per node.
  ASSERT_EQ(p.crawler_node.size(), k) << what;
  for (size_t i = 0; i < k; i++) EXPECT_EQ(p.crawler_node[i], static_cast<int>(i)) << what;
  expect_shared_by_cores(per_node(p.reader_node, k), cpus, 1, what + " readers");
  expect_shared_by_cores(per_node(p.indexer_node, k), cpus, 1, what + " indexers");
  expect_shared_by_cores(per_node(p.writer_node, k), cpus, 0, what + " writers");
  // Numbered node by node.
  for (const auto* v : {&p.reader_node, &p.indexer_node, &p.writer_node})
    EXPECT_TRUE(std::is_sorted(v->begin(), v->end())) << what;
  for (int n = 0; n < static_cast<int>(k); n++) {
    EXPECT_FALSE(p.on_node(NumaRole::kReader, n).empty()) << what;
    EXPECT_FALSE(p.on_node(NumaRole::kIndexer, n).empty()) << what;
  }
}

}  // namespace

TEST(NumaPlan, OverSuppliedTopologies) {
  for (const auto& t : kTopologies)
    for (int r : {1, 2, 3, 4, 8, 16})
      for (int i : {1, 2, 5, 8, 16})
        for (int w : {1, 2, 3}) check_plan(topology(t), r, i, w);
}

TEST(NumaPlan, OneNodeRunsAsBefore) {
  NumaPlan p = scipis::plan_numa(topology({8}), 4, 6, 2);
  EXPECT_FALSE(p.pinned());
  EXPECT_EQ(p.nodes, std::vector<int>{0});
  // Two nodes but one indexer: one node does all, unpinned too.
  EXPECT_FALSE(scipis::plan_numa(topology({4, 4}), 4, 1, 1).pinned());
  // No node with CPUs at all (a broken report): one node, unpinned.
  EXPECT_FALSE(scipis::plan_numa(topology({0, 0}), 2, 2, 1).pinned());
}

TEST(NumaPlan, DetectsThisMachine) {
  NumaTopology t = NumaTopology::detect();
  ASSERT_FALSE(t.nodes.empty());
  cpu_set_t allowed;
  ASSERT_EQ(sched_getaffinity(0, sizeof(allowed), &allowed), 0);
  std::set<int> cpus;
  for (const auto& n : t.nodes)
    for (int c : n.cpus) {
      EXPECT_TRUE(CPU_ISSET(c, &allowed)) << c;
      EXPECT_TRUE(cpus.insert(c).second) << "cpu " << c << " on two nodes";
    }
  EXPECT_EQ(cpus.size(), static_cast<size_t>(CPU_COUNT(&allowed)));
}

namespace {

// Records what placement would do, per thread, instead of doing it.
class RecordingPlacer final : public scipis::NumaPlacer {
 public:
  struct Bind {
    bool placed;  // by a pinned pipeline thread (else the build's coordinator)
    NumaRole role;
    int index;
    size_t bytes;
    int node;
  };
  void run_on(NumaRole role, int index, int node) override {
    std::lock_guard<std::mutex> lk(mu_);
    placed_ = true;
    role_ = role;
    index_ = index;
    runs.push_back({true, role, index, 0, node});
  }
  void bind(void*, size_t bytes, int node) override {
    std::lock_guard<std::mutex> lk(mu_);
    binds.push_back({placed_, role_, index_, bytes, node});
  }
  std::vector<Bind> runs, binds;

 private:
  std::mutex mu_;
  static thread_local bool placed_;
  static thread_local NumaRole role_;
  static thread_local int index_;
};
thread_local bool RecordingPlacer::placed_ = false;
thread_local NumaRole RecordingPlacer::role_ = NumaRole::kCrawler;
thread_local int RecordingPlacer::index_ = -1;

struct NumaCorpus {
  std::string root = testutil::scratch_dir();
  std::vector<brute::Doc> docs;
  NumaCorpus() {
    // Directories of small files (packed) and big ones (streamed in blocks).
    for (int d = 0; d < 12; d++) {
      std::string dir = root + "/d" + std::to_string(d);
      mkdir(dir.c_str(), 0755);
      for (int f = 0; f < 40; f++) {
        const int words = f % 9 == 4 ? 40000 : 20 + (d * 31 + f * 17) % 400;
        std::string body;
        for (int i = 0; i < words; i++)
          body += "t" + std::to_string((d * 7919 + f * 104729 + i * 13) % (f % 9 == 4 ? 50000 : 900)) +
                  (i % 11 == 0 ? "\n" : " ");
        const std::string path = dir + "/f" + std::to_string(f) + ".log";
        testutil::write(path, body);
        brute::Doc doc;
        doc.path = path;
        for (const auto& t : brute::tokenize(body)) {
          doc.tf[t]++;
          doc.len++;
        }
        docs.push_back(std::move(doc));
      }
    }
  }
  ~NumaCorpus() { testutil::rm_rf(root); }
};

scipis_options numa_options() {
  scipis_options o;
  scipis_options_init(&o);
  o.reader_threads = 8;
  o.indexer_threads = 8;
  o.writer_threads = 2;
  o.tfidf_index_size = 4 << 20;  // mapped on its own (huge_alloc), so bound
  o.block_size = 64 << 10;
  return o;
}

struct Override {
  Override(const NumaTopology& t, scipis::NumaPlacer* p) {
    scipis::set_numa_override(std::make_shared<NumaTopology>(t), p);
  }
  ~Override() { scipis::set_numa_override(nullptr, nullptr); }
};

}  // namespace

TEST(NumaPlan, BuildsPlaceEveryThreadAndRegion) {
  NumaCorpus corpus;
  size_t grid = 0;
  for (const auto& cpus : std::vector<std::vector<int>>{{4, 4, 4, 4, 0, 1, 16, 2}, {3, 1}, {1, 3, 2, 6}}) {
    if (!testutil::sampled(grid++, 3)) continue;
    const NumaTopology topo = topology(cpus);
    const std::string what = std::to_string(cpus.size()) + " nodes";
    RecordingPlacer placer;
    Override over(topo, &placer);
    const std::string gen = testutil::scratch_dir();
    scipis::PipelineConfig cfg;
    cfg.root = corpus.root;
    cfg.gen_dir = gen;
    cfg.opts = numa_options();
    scipis::Pipeline pipeline(cfg);
    ASSERT_NO_THROW(pipeline.run()) << what;
    const NumaPlan& plan = pipeline.numa_plan();
    ASSERT_TRUE(plan.pinned()) << what;
    EXPECT_EQ(pipeline.totals().files.load(), corpus.docs.size()) << what;
    EXPECT_EQ(pipeline.cross_node_handoffs(), 0u) << what;

    // Thread by thread: each ran once, on its planned node.
    std::map<std::pair<NumaRole, int>, std::vector<int>> ran;
    for (const auto& r : placer.runs) ran[{r.role, r.index}].push_back(r.node);
    size_t threads = 0;
    for (NumaRole role : {NumaRole::kCrawler, NumaRole::kReader, NumaRole::kIndexer, NumaRole::kWriter}) {
      const auto& nodes = plan.of(role);
      for (size_t i = 0; i < nodes.size(); i++, threads++) {
        const std::vector<int> planned{plan.nodes[static_cast<size_t>(nodes[i])]};
        const auto key = std::make_pair(role, static_cast<int>(i));
        EXPECT_EQ(ran[key], planned) << what << " role " << static_cast<int>(role) << " thread " << i;
      }
    }
    EXPECT_EQ(placer.runs.size(), threads) << what;

    // Region by region: everything a thread maps on its own node (a
    // node's read buffers are bound by the first of its readers that needs
    // each, up to the pool's size), and each indexer's term table and
    // arena among them.
    std::map<int, size_t> buffers_on;
    std::map<int, size_t> indexer_bytes;
    const size_t buffer_bytes =
        scipis::BufferPool::buffer_bytes_for(static_cast<size_t>(cfg.opts.block_size));
    for (const auto& b : placer.binds) {
      EXPECT_TRUE(b.placed) << what << " a region bound outside a pipeline thread";
      if (!b.placed) continue;
      const int planned = plan.nodes[static_cast<size_t>(plan.of(b.role)[static_cast<size_t>(b.index)])];
      EXPECT_EQ(b.node, planned) << what << " a region of role " << static_cast<int>(b.role) << " "
                                 << b.index;
      if (b.role == NumaRole::kReader && b.bytes == buffer_bytes) buffers_on[b.node]++;
      if (b.role == NumaRole::kIndexer) indexer_bytes[b.index] += b.bytes;
    }
    size_t buffers = 0;
    for (size_t n = 0; n < plan.nodes.size(); n++) {
      const size_t readers = plan.on_node(NumaRole::kReader, static_cast<int>(n)).size();
      const size_t indexers = plan.on_node(NumaRole::kIndexer, static_cast<int>(n)).size();
      buffers += buffers_on[plan.nodes[n]];
      EXPECT_LE(buffers_on[plan.nodes[n]], readers * 2 + indexers * 6) << what << " node " << n;
    }
    EXPECT_GE(buffers, 1u) << what;
    for (int i = 0; i < cfg.opts.indexer_threads; i++)
      EXPECT_GE(indexer_bytes[i], size_t{4} << 20) << what << " indexer " << i;
    testutil::rm_rf(gen);

    // The same placement through the engine's door: answers as the oracle.
    const std::string dir = testutil::scratch_dir();
    scipis_build_stats st;
    scipis_error err;
    ASSERT_EQ(testutil::build(dir, corpus.root, numa_options(), &st, &err), 0) << err.message;
    EXPECT_EQ(st.files, corpus.docs.size());
    for (const std::string q : {"t1", "t7 t899", "t13 t49999 t42", "t100 t200 t300 t400"})
      for (bool bm25 : {false, true}) {
        auto want = brute::search(corpus.docs, q, bm25, false);
        auto got = testutil::search(dir, q, -1, bm25 ? SCIPIS_BM25 : SCIPIS_TFIDF);
        ASSERT_EQ(got.size(), want.size()) << what << " " << q;
        for (size_t i = 0; i < got.size(); i++) {
          ASSERT_EQ(got[i].path, want[i].path) << what << " " << q << " rank " << i;
          ASSERT_NEAR(got[i].score, want[i].score, 1e-9 * std::abs(want[i].score)) << what << " " << q;
        }
      }
    testutil::rm_rf(dir);
  }
}

TEST(NumaPlan, OneNodeBuildPlacesNothing) {
  NumaCorpus corpus;
  RecordingPlacer placer;
  Override over(topology({2}), &placer);
  const std::string dir = testutil::scratch_dir();
  scipis_build_stats st;
  scipis_error err;
  ASSERT_EQ(testutil::build(dir, corpus.root, numa_options(), &st, &err), 0) << err.message;
  EXPECT_EQ(st.files, corpus.docs.size());
  EXPECT_TRUE(placer.runs.empty());
  EXPECT_TRUE(placer.binds.empty());
  testutil::rm_rf(dir);
}

// Several crawlers share one walk: every file is handed out once, to the
// queue of the crawler that listed its directory, largest first within a
// batch when asked.
TEST(NumaPlan, CrawlersShareTheWalk) {
  const std::string root = testutil::scratch_dir();
  std::set<std::string> want;
  for (int a = 0; a < 6; a++) {
    const std::string da = root + "/a" + std::to_string(a);
    mkdir(da.c_str(), 0755);
    for (int b = 0; b < 5; b++) {
      const std::string db = da + "/b" + std::to_string(b);
      mkdir(db.c_str(), 0755);
      for (int f = 0; f < 300; f++) {  // more than one batch per directory
        const std::string p = db + "/f" + std::to_string(f);
        testutil::write(p, std::string(static_cast<size_t>((f * 7919) % 997), 'x'));
        want.insert(p);
      }
    }
  }
  for (int crawlers : {1, 3, 4}) {
    std::atomic<bool> stop{false};
    scipis::CrawlCounters found;
    scipis::CrawlRules rules;
    rules.largest_first = crawlers > 1;
    scipis::CrawlWork work(root);
    std::vector<std::unique_ptr<scipis::BoundedQueue<scipis::FileBatch>>> queues;
    for (int c = 0; c < crawlers; c++)
      queues.push_back(std::make_unique<scipis::BoundedQueue<scipis::FileBatch>>(2, &stop));
    std::mutex mu;
    std::multiset<std::string> got;
    bool wrong_node = false, unsorted = false;
    std::vector<std::thread> threads;
    std::atomic<uint64_t> skipped{0};
    for (int c = 0; c < crawlers; c++) {
      threads.emplace_back([&, c] {
        scipis::Crawler(rules, *queues[static_cast<size_t>(c)], stop, found, c).run(work, skipped);
      });
    }
    std::vector<std::thread> consumers;
    for (int c = 0; c < crawlers; c++)
      consumers.emplace_back([&, c] {
        while (auto b = queues[static_cast<size_t>(c)]->pop()) {
          std::lock_guard<std::mutex> lk(mu);
          wrong_node = wrong_node || b->node != c;
          for (size_t i = 0; i < b->files.size(); i++) {
            got.insert(b->dir->path + "/" + b->name(b->files[i]));
            if (rules.largest_first && i > 0 && b->files[i - 1].size < b->files[i].size) unsorted = true;
          }
        }
      });
    for (auto& t : threads) t.join();
    for (auto& q : queues) q->close();
    for (auto& t : consumers) t.join();
    EXPECT_FALSE(wrong_node) << crawlers;
    EXPECT_FALSE(unsorted) << crawlers;
    EXPECT_EQ(skipped.load(), 0u);
    EXPECT_EQ(got.size(), want.size()) << crawlers;
    EXPECT_EQ(std::set<std::string>(got.begin(), got.end()), want) << crawlers;
  }
  testutil::rm_rf(root);
}
