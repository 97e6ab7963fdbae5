#include "pipeline/numa_plan.h"

#include <numa.h>
#include <numaif.h>
#include <sched.h>

#include <algorithm>
#include <mutex>
#include <optional>
#include <utility>

namespace scipis {

NumaTopology NumaTopology::detect() {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0)
    for (int c = 0; c < CPU_SETSIZE; c++) CPU_SET(c, &allowed);
  // The last answer, for the same CPUs allowed: every refresh makes a
  // pipeline, and walking libnuma's masks was a few percent of an append's.
  // (libnuma keeps its node-to-CPU maps for the process's life too.)
  static std::mutex mu;
  static std::optional<std::pair<cpu_set_t, NumaTopology>> last;
  {
    std::lock_guard<std::mutex> lk(mu);
    if (last && CPU_EQUAL(&last->first, &allowed)) return last->second;
  }
  NumaTopology t = detect_for(allowed);
  std::lock_guard<std::mutex> lk(mu);
  last.emplace(allowed, t);
  return t;
}

NumaTopology NumaTopology::detect_for(const cpu_set_t& allowed) {
  NumaTopology t;
  if (numa_available() >= 0) {
    struct bitmask* mask = numa_allocate_cpumask();
    for (int n = 0; n <= numa_max_node(); n++) {
      if (!numa_bitmask_isbitset(numa_all_nodes_ptr, static_cast<unsigned>(n))) continue;
      numa_bitmask_clearall(mask);
      if (numa_node_to_cpus(n, mask) != 0) continue;
      Node node;
      node.id = n;
      for (unsigned c = 0; c < mask->size && c < CPU_SETSIZE; c++)
        if (numa_bitmask_isbitset(mask, c) && CPU_ISSET(c, &allowed))
          node.cpus.push_back(static_cast<int>(c));
      t.nodes.push_back(std::move(node));
    }
    numa_free_cpumask(mask);
  }
  bool any = false;
  for (const auto& n : t.nodes) any = any || !n.cpus.empty();
  if (!any) {
    t.nodes.assign(1, Node{});
    for (int c = 0; c < CPU_SETSIZE; c++)
      if (CPU_ISSET(c, &allowed)) t.nodes[0].cpus.push_back(c);
  }
  return t;
}

const std::vector<int>& NumaPlan::of(NumaRole role) const {
  switch (role) {
    case NumaRole::kCrawler: return crawler_node;
    case NumaRole::kReader: return reader_node;
    case NumaRole::kIndexer: return indexer_node;
    case NumaRole::kWriter: break;
  }
  return writer_node;
}

std::vector<int> NumaPlan::on_node(NumaRole role, int node) const {
  std::vector<int> out;
  const auto& v = of(role);
  for (size_t i = 0; i < v.size(); i++)
    if (v[i] == node) out.push_back(static_cast<int>(i));
  return out;
}

namespace {

// Highest averages (D'Hondt): each thread after the first `floor` per node
// goes where the threads per CPU would be lowest with it; ties to the
// earlier node. Threads are numbered node by node.
std::vector<int> apportion(int threads, const std::vector<size_t>& cpus, int floor) {
  const size_t k = cpus.size();
  std::vector<int> count(k, 0);
  int left = threads;
  for (size_t i = 0; i < k && left > 0; i++) {
    count[i] = std::min(floor, left);
    left -= count[i];
  }
  for (; left > 0; left--) {
    size_t best = 0;
    for (size_t i = 1; i < k; i++) {
      // (count[i] + 1) / cpus[i] < (count[best] + 1) / cpus[best]
      if (static_cast<size_t>(count[i] + 1) * cpus[best] <
          static_cast<size_t>(count[best] + 1) * cpus[i])
        best = i;
    }
    count[best]++;
  }
  std::vector<int> node_of;
  for (size_t i = 0; i < k; i++) node_of.insert(node_of.end(), static_cast<size_t>(count[i]), static_cast<int>(i));
  return node_of;
}

}  // namespace

NumaPlan plan_numa(const NumaTopology& topo, int readers, int indexers, int writers) {
  std::vector<const NumaTopology::Node*> usable;
  for (const auto& n : topo.nodes)
    if (!n.cpus.empty()) usable.push_back(&n);
  std::stable_sort(usable.begin(), usable.end(), [](const auto* a, const auto* b) {
    return a->cpus.size() != b->cpus.size() ? a->cpus.size() > b->cpus.size() : a->id < b->id;
  });
  const size_t k = std::min({usable.size(), static_cast<size_t>(std::max(readers, 1)),
                             static_cast<size_t>(std::max(indexers, 1))});
  usable.resize(k);
  std::sort(usable.begin(), usable.end(), [](const auto* a, const auto* b) { return a->id < b->id; });

  NumaPlan p;
  if (usable.size() <= 1) {
    // Nothing to place: every thread on the one node, nothing pinned.
    p.nodes.assign(1, usable.empty() ? 0 : usable[0]->id);
    p.crawler_node.assign(1, 0);
    p.reader_node.assign(static_cast<size_t>(readers), 0);
    p.indexer_node.assign(static_cast<size_t>(indexers), 0);
    p.writer_node.assign(static_cast<size_t>(writers), 0);
    return p;
  }
  std::vector<size_t> cpus;
  for (const auto* n : usable) {
    p.nodes.push_back(n->id);
    cpus.push_back(n->cpus.size());
  }
  for (size_t i = 0; i < usable.size(); i++) p.crawler_node.push_back(static_cast<int>(i));
  p.reader_node = apportion(readers, cpus, 1);
  p.indexer_node = apportion(indexers, cpus, 1);
  p.writer_node = apportion(writers, cpus, 0);
  return p;
}

namespace {

class LibnumaPlacer final : public NumaPlacer {
 public:
  void run_on(NumaRole, int, int node) override {
    (void)numa_run_on_node(node);
    numa_set_preferred(node);
  }
  void bind(void* p, size_t bytes, int node) override {
    struct bitmask* nodes = numa_allocate_nodemask();
    numa_bitmask_setbit(nodes, static_cast<unsigned>(node));
    (void)mbind(p, bytes, MPOL_PREFERRED, nodes->maskp, nodes->size + 1, 0);
    numa_free_nodemask(nodes);
  }
};

std::mutex override_mu;
std::shared_ptr<const NumaTopology> override_topo;
NumaPlacer* override_placer = nullptr;

}  // namespace

NumaPlacer& libnuma_placer() {
  static LibnumaPlacer placer;
  return placer;
}

void set_numa_override(std::shared_ptr<const NumaTopology> topo, NumaPlacer* placer) {
  std::lock_guard<std::mutex> lk(override_mu);
  override_topo = std::move(topo);
  override_placer = placer;
}

std::shared_ptr<const NumaTopology> numa_override_topology() {
  std::lock_guard<std::mutex> lk(override_mu);
  return override_topo;
}

NumaPlacer* numa_override_placer() {
  std::lock_guard<std::mutex> lk(override_mu);
  return override_placer;
}

}  // namespace scipis
