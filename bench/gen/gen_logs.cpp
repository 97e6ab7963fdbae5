// gen_logs: a deterministic generator of realistic log corpora.
//
// Every line of the loghub samples (data/loghub-2k/*.log) becomes a template:
// words and punctuation are kept, numbers and hex identifiers are variable
// fields that get fresh values from a seeded PRNG on every use. The output is
// a tree of log files, one source system per file, laid out per system, node
// and day, with log-normally distributed sizes (a few KiB to tens of MiB).
//
//   gen_logs --out DIR --size-mib 1024 --seed 42
//            [--templates data/loghub-2k] [--threads 2]
//            [--median-kib 256] [--sigma 1.6] [--min-kib 4] [--max-mib 48]
//
// The same options (and the same template files) give the same bytes, with
// any number of threads: the file list comes from one seeded stream and each
// file's content from its own stream derived from (seed, file number).
// Output is ASCII only (valid UTF-8): control bytes and bytes >= 0x80 of the
// samples are replaced.
//
// Build: g++ -std=c++17 -O2 -pthread -o gen_logs gen_logs.cpp (with log_templates.h)

#include "log_templates.h"

namespace {

[[noreturn]] void usage() {
    std::fprintf(stderr,
                 "usage: gen_logs --out DIR --size-mib N [--seed S] [--templates DIR]\n"
                 "                [--threads T] [--median-kib K] [--sigma X] [--min-kib K]\n"
                 "                [--max-mib M] [--list]\n");
    std::exit(2);
}

}  // namespace

int main(int argc, char **argv) {
    std::string out, templates = "data/loghub-2k";
    double size_mib = -1, median_kib = 256, sigma = 1.6, min_kib = 4, max_mib = 48;
    uint64_t seed = 42;
    int threads = (int)std::max(1u, std::thread::hardware_concurrency());
    bool list_only = false;
    for (int i = 1; i < argc; i++) {
        std::string a = argv[i];
        auto val = [&]() -> const char * {
            if (i + 1 >= argc) usage();
            return argv[++i];
        };
        if (a == "--out") out = val();
        else if (a == "--size-mib") size_mib = std::atof(val());
        else if (a == "--seed") seed = std::strtoull(val(), nullptr, 10);
        else if (a == "--templates") templates = val();
        else if (a == "--threads") threads = std::max(1, std::atoi(val()));
        else if (a == "--median-kib") median_kib = std::atof(val());
        else if (a == "--sigma") sigma = std::atof(val());
        else if (a == "--min-kib") min_kib = std::atof(val());
        else if (a == "--max-mib") max_mib = std::atof(val());
        else if (a == "--list") list_only = true;
        else usage();
    }
    if (out.empty() || size_mib <= 0 || median_kib <= 0 || min_kib <= 0 || max_mib * 1024 < min_kib) usage();

    std::vector<System> systems = load_systems(templates);

    // The file list: one stream, independent of threads.
    Rng plan(seed);
    const uint64_t target = (uint64_t)(size_mib * 1048576.0);
    const double lo = min_kib * 1024, hi = max_mib * 1048576.0;
    std::vector<FileSpec> files;
    uint64_t total = 0;
    std::vector<uint32_t> per_system_count(systems.size(), 0);
    while (total < target) {
        FileSpec fs;
        fs.system = (uint32_t)plan.below(systems.size());
        double sz = median_kib * 1024 * std::exp(sigma * plan.normal());
        sz = std::min(hi, std::max(lo, sz));
        fs.size = std::min<uint64_t>((uint64_t)sz, target - total);
        if (fs.size < 1024) fs.size = 1024;
        unsigned node = (unsigned)plan.below(12);
        unsigned day = 1 + (unsigned)plan.below(28);
        uint32_t nth = per_system_count[fs.system]++;
        char p[256];
        std::snprintf(p, sizeof p, "%s/node%02u/2026-02-%02u/%s.%u.log", systems[fs.system].name.c_str(),
                      node, day, systems[fs.system].name.c_str(), nth);
        fs.path = p;
        total += fs.size;
        files.push_back(std::move(fs));
    }
    if (list_only) {
        for (const auto &f : files) std::printf("%llu\t%s\n", (unsigned long long)f.size, f.path.c_str());
        return 0;
    }
    if (!mkdirs(out)) {
        std::fprintf(stderr, "gen_logs: mkdir %s: %s\n", out.c_str(), std::strerror(errno));
        return 1;
    }

    // Biggest files first so the threads finish together.
    std::vector<uint32_t> order(files.size());
    for (uint32_t i = 0; i < order.size(); i++) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return files[a].size > files[b].size; });
    std::atomic<size_t> next{0};
    std::atomic<bool> failed{false};
    auto work = [&]() {
        for (;;) {
            size_t k = next.fetch_add(1);
            if (k >= order.size() || failed) return;
            uint32_t i = order[k];
            if (!write_file(out, files[i], i, seed, systems)) failed = true;
        }
    };
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; t++) pool.emplace_back(work);
    for (auto &t : pool) t.join();
    if (failed) return 1;
    std::fprintf(stderr, "gen_logs: %zu files, target %.1f MiB, seed %llu, in %s\n", files.size(),
                 (double)total / 1048576.0, (unsigned long long)seed, out.c_str());
    return 0;
}
