// gen_tree: a deterministic tree of many small log files, shaped like HPC
// job-output directories or a source tree (the small-file benchmark,
// bench/smallfiles/run.sh).
//
// Sizes are log-normal around a median of a few KiB with a long tail (a few
// files of hundreds of KiB) and some empty files; directories are nested two
// to five levels deep (project / job / step / rank) and hold a geometric
// number of files each (mean --per-dir). Content: the log templates of
// gen_logs (log_templates.h), one source system per file.
//
//   gen_tree --out DIR --files 80000 --seed 42
//            [--templates data/loghub-2k] [--threads 2]
//            [--median-kib 4] [--sigma 1.5] [--max-kib 512] [--empty-permille 5]
//            [--per-dir 24] [--list]
//
// The same options give the same bytes with any number of threads: the file
// list (paths, sizes, systems) comes from one seeded stream, each file's
// content from its own stream derived from (seed, file number).
//
// Build: g++ -std=c++17 -O2 -pthread -o gen_tree gen_tree.cpp (with log_templates.h)

#include "log_templates.h"

namespace {

[[noreturn]] void usage() {
    std::fprintf(stderr,
                 "usage: gen_tree --out DIR --files N [--seed S] [--templates DIR] [--threads T]\n"
                 "                [--median-kib K] [--sigma X] [--max-kib K] [--empty-permille P]\n"
                 "                [--per-dir N] [--list]\n");
    std::exit(2);
}

const char *const kExt[] = {"out", "err", "log", "txt"};

}  // namespace

int main(int argc, char **argv) {
    std::string out, templates = "data/loghub-2k";
    double median_kib = 4, sigma = 1.5, max_kib = 512, per_dir = 24;
    uint64_t files_wanted = 0, seed = 42, empty_permille = 5;
    int threads = (int)std::max(1u, std::thread::hardware_concurrency());
    bool list_only = false;
    for (int i = 1; i < argc; i++) {
        std::string a = argv[i];
        auto val = [&]() -> const char * {
            if (i + 1 >= argc) usage();
            return argv[++i];
        };
        if (a == "--out") out = val();
        else if (a == "--files") files_wanted = std::strtoull(val(), nullptr, 10);
        else if (a == "--seed") seed = std::strtoull(val(), nullptr, 10);
        else if (a == "--templates") templates = val();
        else if (a == "--threads") threads = std::max(1, std::atoi(val()));
        else if (a == "--median-kib") median_kib = std::atof(val());
        else if (a == "--sigma") sigma = std::atof(val());
        else if (a == "--max-kib") max_kib = std::atof(val());
        else if (a == "--empty-permille") empty_permille = std::strtoull(val(), nullptr, 10);
        else if (a == "--per-dir") per_dir = std::atof(val());
        else if (a == "--list") list_only = true;
        else usage();
    }
    if ((out.empty() && !list_only) || files_wanted == 0 || median_kib <= 0 || max_kib <= 0 ||
        per_dir < 1 || empty_permille > 1000)
        usage();

    std::vector<System> systems = load_systems(templates);

    // The plan: one stream, independent of threads. A directory is
    // p<project>/job<n>[/step<k>[/rank<r>]]; each holds a geometric number
    // of files, all of one source system (one job's output).
    Rng plan(seed);
    std::vector<FileSpec> files;
    files.reserve(files_wanted);
    uint64_t total = 0, jobs = 0, dirs = 0;
    std::string dir;
    uint32_t sys = 0;
    uint64_t left_in_dir = 0, nth = 0;
    while (files.size() < files_wanted) {
        if (left_in_dir == 0) {
            char p[128];
            unsigned depth = (unsigned)plan.below(4);  // 0..3 levels below the job
            int n = std::snprintf(p, sizeof p, "p%02u/job%06llu", (unsigned)plan.below(16),
                                  (unsigned long long)jobs++);
            if (depth >= 1) n += std::snprintf(p + n, sizeof p - n, "/step%u", (unsigned)plan.below(6));
            if (depth >= 2) n += std::snprintf(p + n, sizeof p - n, "/rank%03u", (unsigned)plan.below(512));
            if (depth >= 3) std::snprintf(p + n, sizeof p - n, "/attempt%u", (unsigned)plan.below(3));
            dir = p;
            dirs++;
            sys = (uint32_t)plan.below(systems.size());
            // Geometric with mean per_dir: -mean * ln(U), at least 1.
            left_in_dir = 1 + (uint64_t)(-(per_dir - 1) * std::log(1.0 - plan.unit()));
            nth = 0;
        }
        FileSpec fs;
        fs.system = sys;
        double sz = median_kib * 1024 * std::exp(sigma * plan.normal());
        fs.size = (uint64_t)std::min(max_kib * 1024, std::max(1.0, sz));
        if (plan.below(1000) < empty_permille) fs.size = 0;
        char name[96];
        std::snprintf(name, sizeof name, "/%s.%llu.%s", systems[sys].name.c_str(),
                      (unsigned long long)nth++, kExt[plan.below(4)]);
        fs.path = dir + name;
        total += fs.size;
        files.push_back(std::move(fs));
        left_in_dir--;
    }
    if (list_only) {
        for (const auto &f : files) std::printf("%llu\t%s\n", (unsigned long long)f.size, f.path.c_str());
        return 0;
    }
    if (!mkdirs(out)) {
        std::fprintf(stderr, "gen_tree: mkdir %s: %s\n", out.c_str(), std::strerror(errno));
        return 1;
    }

    std::atomic<size_t> next{0};
    std::atomic<bool> failed{false};
    auto work = [&]() {
        for (;;) {
            size_t i = next.fetch_add(1);
            if (i >= files.size() || failed) return;
            const FileSpec &fs = files[i];
            if (fs.size > 0) {
                // write_file writes whole lines: at least one, at most fs.size.
                if (!write_file(out, fs, i, seed, systems)) failed = true;
                continue;
            }
            std::string full = out + "/" + fs.path;
            FILE *f = nullptr;
            if (mkdirs(full.substr(0, full.rfind('/')))) f = std::fopen(full.c_str(), "wb");
            if (!f || std::fclose(f) != 0) {
                std::fprintf(stderr, "gen_tree: create %s: %s\n", full.c_str(), std::strerror(errno));
                failed = true;
            }
        }
    };
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; t++) pool.emplace_back(work);
    for (auto &t : pool) t.join();
    if (failed) return 1;
    std::fprintf(stderr, "gen_tree: %zu files in %llu directories, target %.1f MiB, seed %llu, in %s\n",
                 files.size(), (unsigned long long)dirs, (double)total / 1048576.0,
                 (unsigned long long)seed, out.c_str());
    return 0;
}
