// pick_queries: a deterministic query set for the scipis benchmark, chosen
// from the corpus itself and independent of every system under test.
//
// It tokenizes every file of the corpus exactly like scipis's default `word`
// tokenizer (token bytes: ASCII A-Z a-z 0-9 _ and bytes >= 0x80; maximal
// runs; ASCII letters lower-cased; runs cut into 255-byte pieces) and
// computes the exact document frequency (number of files containing the
// term) of a hash-selected sample of the vocabulary (1 term in --sample;
// the sample is fixed by --seed, so it never depends on file order).
// Terms are then bucketed by df on a log2 scale and queries are drawn from
// the buckets evenly, so the set spans rare ids to words in every file:
//
//   t1: --single single-term queries, round robin over the df buckets
//   t3: --multi 3-term queries, each term from a randomly chosen bucket
//
// Output (stdout, TSV): id, kind (t1|t3), query (terms separated by one
// space), dfs (comma separated), N (files with at least one token).
//
//   pick_queries --corpus DIR [--seed 42] [--single 200] [--multi 200]
//                [--sample 16] > queries.tsv
//
// Build: g++ -std=c++17 -O2 -o pick_queries pick_queries.cpp

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <ftw.h>
#include <string>
#include <string_view>
#include <unistd.h>
#include <unordered_map>
#include <vector>

namespace {

uint64_t splitmix64(uint64_t &x) {
    uint64_t z = (x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

struct Rng {
    uint64_t s;
    explicit Rng(uint64_t seed) : s(seed) {}
    uint64_t next() { return splitmix64(s); }
    uint64_t below(uint64_t n) { return n ? next() % n : 0; }
};

// FNV-1a then a finaliser, keyed by the seed.
uint64_t term_hash(std::string_view t, uint64_t key) {
    uint64_t h = 0xcbf29ce484222325ULL ^ key;
    for (unsigned char c : t) h = (h ^ c) * 0x100000001b3ULL;
    return splitmix64(h);
}

bool token_byte[256];

void init_token_bytes() {
    for (int c = 0; c < 256; c++)
        token_byte[c] = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                        c == '_' || c >= 0x80;
}

struct Stat {
    uint32_t df = 0;
    uint32_t last_file = UINT32_MAX;
};

std::vector<std::string> g_files;

int collect(const char *path, const struct stat *, int type, struct FTW *) {
    if (type == FTW_F) g_files.emplace_back(path);
    return 0;
}

[[noreturn]] void usage() {
    std::fprintf(stderr,
                 "usage: pick_queries --corpus DIR [--seed S] [--single N] [--multi N] [--sample K]\n");
    std::exit(2);
}

}  // namespace

int main(int argc, char **argv) {
    std::string corpus;
    uint64_t seed = 42;
    int n_single = 200, n_multi = 200;
    uint64_t sample = 16;
    for (int i = 1; i < argc; i++) {
        std::string a = argv[i];
        auto val = [&]() -> const char * {
            if (i + 1 >= argc) usage();
            return argv[++i];
        };
        if (a == "--corpus") corpus = val();
        else if (a == "--seed") seed = std::strtoull(val(), nullptr, 10);
        else if (a == "--single") n_single = std::atoi(val());
        else if (a == "--multi") n_multi = std::atoi(val());
        else if (a == "--sample") sample = std::max<uint64_t>(1, std::strtoull(val(), nullptr, 10));
        else usage();
    }
    if (corpus.empty()) usage();
    init_token_bytes();

    if (nftw(corpus.c_str(), collect, 64, FTW_PHYS) != 0) {
        std::fprintf(stderr, "pick_queries: cannot walk %s: %s\n", corpus.c_str(), std::strerror(errno));
        return 1;
    }
    std::sort(g_files.begin(), g_files.end());

    std::unordered_map<std::string, Stat> stats;
    stats.reserve(1 << 20);
    const uint64_t key = seed * 0x9e3779b97f4a7c15ULL + 1;
    uint32_t n_docs = 0;
    std::vector<char> buf(1 << 20);
    std::string term;
    for (uint32_t f = 0; f < g_files.size(); f++) {
        int fd = open(g_files[f].c_str(), O_RDONLY);
        if (fd < 0) {
            std::fprintf(stderr, "pick_queries: %s: %s\n", g_files[f].c_str(), std::strerror(errno));
            return 1;
        }
        bool any = false;
        term.clear();
        auto flush = [&]() {
            if (term.empty()) return;
            any = true;
            if (term_hash(term, key) % sample == 0) {
                Stat &s = stats[term];
                if (s.last_file != f) s.df++, s.last_file = f;
            }
            term.clear();
        };
        for (;;) {
            ssize_t n = read(fd, buf.data(), buf.size());
            if (n < 0) {
                std::fprintf(stderr, "pick_queries: read %s: %s\n", g_files[f].c_str(), std::strerror(errno));
                return 1;
            }
            if (n == 0) break;
            for (ssize_t i = 0; i < n; i++) {
                unsigned char c = (unsigned char)buf[i];
                if (token_byte[c]) {
                    if (c >= 'A' && c <= 'Z') c = (unsigned char)(c + 32);
                    term.push_back((char)c);
                    if (term.size() == 255) flush();
                } else {
                    flush();
                }
            }
        }
        flush();
        close(fd);
        if (any) n_docs++;
    }
    if (stats.empty()) {
        std::fprintf(stderr, "pick_queries: no terms in %s\n", corpus.c_str());
        return 1;
    }

    // Buckets by floor(log2(df)); terms sorted inside each for determinism.
    std::vector<std::vector<std::pair<std::string, uint32_t>>> buckets;
    for (auto &kv : stats) {
        int b = 63 - __builtin_clzll((unsigned long long)kv.second.df);
        if ((int)buckets.size() <= b) buckets.resize(b + 1);
        buckets[b].emplace_back(kv.first, kv.second.df);
    }
    std::vector<int> nonempty;
    for (int b = 0; b < (int)buckets.size(); b++) {
        std::sort(buckets[b].begin(), buckets[b].end());
        if (!buckets[b].empty()) nonempty.push_back(b);
    }
    Rng rng(seed ^ 0x5eed5eed5eedULL);
    // Draw without replacement inside a bucket while it lasts.
    std::vector<size_t> used(buckets.size(), 0);
    auto draw = [&](int b) -> const std::pair<std::string, uint32_t> & {
        auto &v = buckets[b];
        size_t left = v.size() - used[b];
        if (left == 0) {
            used[b] = 0;
            left = v.size();
        }
        size_t j = used[b] + rng.below(left);
        std::swap(v[used[b]], v[j]);
        return v[used[b]++];
    };

    // The df that the top 1% of the sampled terms reach, for splitting
    // latency into frequent terms and the rest.
    std::vector<uint32_t> dfs;
    for (auto &kv : stats) dfs.push_back(kv.second.df);
    std::sort(dfs.begin(), dfs.end());
    const uint32_t top1 = dfs[dfs.size() - 1 - dfs.size() / 100];
    std::fprintf(stderr,
                 "pick_queries: %zu files, %u with tokens, %zu sampled terms, %zu df buckets, top 1%% df >= %u\n",
                 g_files.size(), n_docs, stats.size(), nonempty.size(), top1);
    std::printf("id\tkind\tquery\tdfs\tN\n");
    int id = 1;
    for (int i = 0; i < n_single; i++) {
        const auto &t = draw(nonempty[i % nonempty.size()]);
        std::printf("%d\tt1\t%s\t%u\t%u\n", id++, t.first.c_str(), t.second, n_docs);
    }
    for (int i = 0; i < n_multi; i++) {
        std::vector<std::pair<std::string, uint32_t>> q;
        int guard = 0;
        while (q.size() < 3 && guard++ < 1000) {
            const auto &t = draw(nonempty[rng.below(nonempty.size())]);
            bool dup = false;
            for (auto &x : q) dup |= x.first == t.first;
            if (!dup) q.push_back(t);
        }
        std::string text, dfs;
        for (auto &x : q) {
            if (!text.empty()) text += ' ', dfs += ',';
            text += x.first;
            dfs += std::to_string(x.second);
        }
        std::printf("%d\tt3\t%s\t%s\t%u\n", id++, text.c_str(), dfs.c_str(), n_docs);
    }
    return 0;
}
