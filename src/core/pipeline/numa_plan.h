// NUMA placement of a build's threads and memory, as the SCIPIS paper
// groups them: one crawler per node feeding that node's readers, which
// hand files to indexers on the same node; each node's read buffers and
// each indexer's term table, arena and flush buffers live on its node.
// The plan is computed from a topology object so that tests can supply
// machines this one is not (pipeline/numa_plan.cpp).
#pragma once

#include <sched.h>

#include <cstddef>
#include <memory>
#include <vector>

#include "util/mem_node.h"

namespace scipis {

struct NumaTopology {
  struct Node {
    int id = 0;
    std::vector<int> cpus;  // the CPUs this process may run on
  };
  std::vector<Node> nodes;
  // This machine as libnuma reports it, limited to the CPUs the process
  // may use; one node holding every allowed CPU where libnuma is absent.
  static NumaTopology detect();

 private:
  static NumaTopology detect_for(const cpu_set_t& allowed);
};

enum class NumaRole { kCrawler, kReader, kIndexer, kWriter };

// Threads of each role numbered from 0; node values index plan.nodes.
struct NumaPlan {
  std::vector<int> nodes;  // topology node ids in use, ascending
  std::vector<int> crawler_node, reader_node, indexer_node, writer_node;
  // With one node in use nothing is pinned or bound: the build runs as it
  // would on a machine without NUMA.
  bool pinned() const { return nodes.size() > 1; }
  size_t node_count() const { return nodes.empty() ? 1 : nodes.size(); }
  const std::vector<int>& of(NumaRole role) const;
  // Threads of a role on a node, in ascending number.
  std::vector<int> on_node(NumaRole role, int node) const;
};

// Nodes in use: those with CPUs, at most one per reader and per indexer
// (every node in use gets at least one of each), the ones with the most
// CPUs first. Readers, indexers and writers are shared out in proportion
// to the nodes' CPUs.
NumaPlan plan_numa(const NumaTopology& topo, int readers, int indexers, int writers);

// What placement does to the machine; tests supply one that records.
class NumaPlacer : public MemoryBinder {
 public:
  // Pins the calling thread (of that role and number) to a topology node.
  virtual void run_on(NumaRole role, int index, int node) = 0;
};

// libnuma's placer: numa_run_on_node and numa_set_preferred for threads,
// mbind(MPOL_PREFERRED) for regions. Failures are ignored: placement is
// advice, never a reason for a build to fail.
NumaPlacer& libnuma_placer();

// Tests: builds from now on use this topology and placer (nullptr topology:
// detect again). Not for concurrent builds.
void set_numa_override(std::shared_ptr<const NumaTopology> topo, NumaPlacer* placer);
std::shared_ptr<const NumaTopology> numa_override_topology();
NumaPlacer* numa_override_placer();

}  // namespace scipis
