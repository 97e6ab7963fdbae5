// The build door's state, shared by a full build (build.cpp) and a
// refresh (refresh.cpp): a pipeline on engine threads that the caller
// polls, then a commit that replaces the manifest.
#pragma once

#include <chrono>
#include <condition_variable>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "index/deletes.h"
#include "index/journal.h"
#include "index/manifest.h"
#include "pipeline/compact.h"
#include "pipeline/dir_records.h"
#include "pipeline/pipeline.h"
#include "pipeline/refresh.h"
#include "scipis_engine.h"
#include "util/engine_thread.h"

// What a refresh knows beyond a build.
struct RefreshState {
  scipis::CurrentState state;     // what readers saw when it started (its lists)
  scipis::Manifest current;       // the generation refreshed, its journal applied
  std::string current_gen;        // its directory
  std::vector<std::string> scope;  // the paths refreshed; empty: the whole tree
  scipis::RefreshCatalog catalog;
  scipis::DeadSeqs dead;          // current's tombstones, then the new ones too
  uint64_t new_dead = 0;          // tombstoned by this refresh
  uint64_t files_gone = 0;        // held files neither unchanged nor appended to
  uint64_t files_deleted = 0;     // of those, files gone (not changed)
  std::vector<scipis::ChainLink> links;  // current's chains, then the new links too
  scipis::DeadSeqs racy;          // current's racy list (pipeline/compact.h)
  scipis::DirRecords dirs;        // current's, when the walk skips unchanged ones
  scipis::DistinctTerms::Shared old_registers;  // current's TERMS, when it has a sound one
  scipis::DistinctTerms::Shared registers;  // the new generation's
  bool registers_unmoved = false;  // registers equal a sound old_registers
  // The indexers' start, shared with the pipeline: refresh_prepare adds
  // the small last segments they may take in.
  std::shared_ptr<scipis::ResumeState> resume;
  // The collection those are decoded from, when an indexer first needs
  // them (one at a time), and what each indexer took in.
  std::unique_ptr<scipis::Collection> collection;
  std::mutex absorb_mu;
  std::vector<std::vector<std::shared_ptr<const scipis::AbsorbDocs>>> absorbed_docs;
  // On a merged generation not yet published (pipeline/merge_renumber.cpp):
  // it commits a generation of its own (not into a journal) even when
  // nothing changed, and removes no garbage (readers are on another).
  bool on_merged = false;
  // SCIPIS_REFRESH_DEFER_SYNC: its journal record may stay unsynced.
  bool defer_sync = false;
  // SCIPIS_REFRESH_KEEP_FRESH: fresh_as_of is left as it was.
  bool keep_fresh = false;
};

struct scipis_build {
  std::string dir;
  scipis::PipelineConfig cfg;
  scipis::Manifest next;
  std::unique_ptr<scipis::Pipeline> pipeline;
  scipis::EngineThread coordinator;
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  bool aborted = false;  // never commit, even if the pipeline finished
  bool prepared = false;  // refresh_prepare ran (on the calling thread)
  std::exception_ptr error;
  std::vector<std::string> garbage;
  std::chrono::steady_clock::time_point started;
  uint64_t resumed_files = 0, resumed_bytes = 0;
  int64_t started_ns = 0;  // real time when the walk began
  std::unique_ptr<RefreshState> refresh;
  std::unique_ptr<scipis::CompactState> compact;  // a compaction: no pipeline
  // A walk of the whole tree records its directories (pipeline/dir_records.h).
  std::unique_ptr<scipis::DirRecorder> dirs;
  uint64_t rules_id = 0;
};

// Starts a refresh of paths (absolute, under root; none: the whole tree)
// on top of base, a merged generation not yet published (the caller holds
// the collection's lock).
scipis_build* refresh_on_merged(const std::string& dir, const std::string& root, const scipis_options& opts,
                                scipis::CurrentState base, const std::vector<std::string>& paths);

// Generations are directories g<N>: the number a new one takes.
uint64_t next_generation(const std::string& dir, const scipis::Manifest* current);
// Entries of dir that neither current (its generation and those holding
// its segments) nor the generation being resumed names: left-overs of a
// build that did not commit. Thorough: also what older generations that
// hold current's segments keep beyond them (a commit cut short).
// next_gen, when given, is set to next_generation's answer (one scan).
std::vector<std::string> list_garbage(const std::string& dir, const scipis::Manifest* current,
                                      const std::string& resumed, bool thorough,
                                      uint64_t* next_gen = nullptr);
// The root without trailing slashes, checked to be a readable directory.
std::string checked_root(const char* root);
// Thread counts left at 0 chosen from the machine.
void resolve_threads(scipis_options& o);
// The pipeline's root, options (threads resolved), crawl rules and byte
// counting from the door's arguments.
void configure(scipis_build& b, const std::string& root, const scipis_options& opts, int flags);

// Links (or copies) from/name to to/name if from has it: a generation's
// list carried over to the next one.
void copy_side_file(const std::string& from, const std::string& to, const char* name);

// The files of segment s, relative to its home generation's directory: its two
// data files first, then its dictionaries and path trigrams.
std::vector<std::string> segment_files(const scipis::SegmentRef& s, uint32_t splits);
// Sets meta_bytes of m's segments where it is unknown (a manifest before
// version 3, a resumed flush) from the sizes of their files.
void fill_meta_bytes(const std::string& dir, scipis::Manifest& m);

// Where a walk of the whole tree records its directories (not when it
// follows symlinks: a link's target changes no directory of the tree).
void record_dirs(scipis_build& b);
// Writes them into gen (when recorded).
void write_dirs(scipis_build& b, const std::string& gen);

// Syncs gen's index directories, gen and dir: every file written in gen
// (each synced itself) is found after a crash.
void sync_generation(const std::string& dir, const std::string& gen);
// Makes gen, which holds the new segments and lists of m, live: its
// directory and dir synced, the manifest m (its index_bytes counting every
// segment it refers to) replaced atomically, then drop_replaced.
void publish_generation(const std::string& dir, const std::string& gen, scipis::Manifest& m,
                        const scipis::Manifest& old);
// What old held that m, which replaced it, does not: segments merged away
// (their home generation too once it holds none of m's) and old's own
// tombstones and lists, as files and trees to remove.
std::vector<std::string> replaced_paths(const std::string& dir, const scipis::Manifest& old,
                                        const scipis::Manifest& m);
// Removes them.
void drop_replaced(const std::string& dir, const scipis::Manifest& old, const scipis::Manifest& m);

// Records the start and runs coordinate() on a thread with every signal
// blocked.
void launch_build(scipis_build& b);

// The refresh's part of the coordinator: before the pipeline runs (its
// catalog) and after (tombstones and totals of the next manifest).
void refresh_prepare(scipis_build* b);
void refresh_conclude(scipis_build* b);
// Commits a refresh that ran to completion; fills the counts of stats.
void refresh_commit(scipis_build* b, scipis_build_stats* stats);
