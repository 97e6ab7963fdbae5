// The log-line templates and file writer shared by gen_logs and gen_tree:
// every line of the loghub samples becomes a template whose numbers and hex
// identifiers are redrawn from a seeded PRNG; a file's content comes from its
// own stream derived from (seed, file number), so any thread count gives the
// same bytes.
#pragma once

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <memory>
#include <string>
#include <sys/stat.h>
#include <thread>
#include <vector>

namespace {

// ---------------------------------------------------------------- PRNG ----

uint64_t splitmix64(uint64_t &x) {
    uint64_t z = (x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

// xoshiro256** (Blackman & Vigna), seeded through splitmix64.
struct Rng {
    uint64_t s[4];
    explicit Rng(uint64_t seed) {
        for (auto &w : s) w = splitmix64(seed);
    }
    static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
    uint64_t next() {
        const uint64_t result = rotl(s[1] * 5, 7) * 9;
        const uint64_t t = s[1] << 17;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = rotl(s[3], 45);
        return result;
    }
    // Uniform in [0, n); the tiny modulo bias does not matter here.
    uint64_t below(uint64_t n) { return n ? next() % n : 0; }
    double unit() { return (next() >> 11) * (1.0 / 9007199254740992.0); }
    double normal() {  // Box-Muller
        double u1 = unit(), u2 = unit();
        if (u1 < 1e-300) u1 = 1e-300;
        return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
    }
};

// ----------------------------------------------------------- templates ----

enum Kind : uint8_t {
    LIT,       // literal text
    SMALL,     // 1-2 digit number: kept half of the time, else redrawn
               // (two digits <= 59 stay <= 59)
    OCTET,     // 3-digit number <= 255 (IP octets, codes): 0..255
    DIGITS,    // longer number: same length, fresh or recently used value
    HEX,       // hex identifier: same length and case, fresh or recent
};

struct Seg {
    Kind kind;
    uint8_t len;          // for SMALL/DIGITS/HEX
    bool nonzero_first;   // DIGITS/SMALL: original did not start with '0'
    bool upper;           // HEX: original used A-F
    std::string text;     // LIT text, or the original value for SMALL
};

using Template = std::vector<Seg>;

struct System {
    std::string name;     // lower-case, from the file name ("hdfs")
    std::vector<Template> lines;
};

bool is_alnum(unsigned char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}
bool is_digit(unsigned char c) { return c >= '0' && c <= '9'; }
bool is_hex(unsigned char c) {
    return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

void push_lit(Template &t, const std::string &s) {
    if (s.empty()) return;
    if (!t.empty() && t.back().kind == LIT)
        t.back().text += s;
    else
        t.push_back(Seg{LIT, 0, false, false, s});
}

void push_number(Template &t, const std::string &run) {
    size_t n = run.size();
    if (n <= 2) {
        t.push_back(Seg{SMALL, (uint8_t)n, run[0] != '0' || n == 1, false, run});
    } else if (n == 3 && std::atoi(run.c_str()) <= 255 && run[0] != '0') {
        t.push_back(Seg{OCTET, 3, true, false, run});
    } else if (n == 4 && run >= "1990" && run <= "2030") {
        push_lit(t, run);  // years stay: a real corpus has only a few of them
    } else {
        t.push_back(Seg{DIGITS, (uint8_t)std::min<size_t>(n, 64), run[0] != '0', false, ""});
    }
}

// One alphanumeric run: a number, a hex identifier, or a word whose longer
// digit groups (>= 3 digits) are variable ("blk" stays, "ext4" stays).
void push_run(Template &t, const std::string &run) {
    bool all_digits = true, all_hex = true, has_alpha = false, has_digit = false, has_upper = false;
    for (unsigned char c : run) {
        if (!is_digit(c)) all_digits = false, has_alpha = true;
        else has_digit = true;
        if (!is_hex(c)) all_hex = false;
        if (c >= 'A' && c <= 'F') has_upper = true;
    }
    if (all_digits) {
        push_number(t, run);
        return;
    }
    if (all_hex && run.size() >= 6 && has_alpha && has_digit) {
        t.push_back(Seg{HEX, (uint8_t)std::min<size_t>(run.size(), 64), false, has_upper, ""});
        return;
    }
    size_t i = 0;
    while (i < run.size()) {
        size_t j = i;
        if (is_digit(run[i])) {
            while (j < run.size() && is_digit(run[j])) j++;
            std::string d = run.substr(i, j - i);
            if (d.size() >= 3)
                t.push_back(Seg{DIGITS, (uint8_t)std::min<size_t>(d.size(), 64), d[0] != '0', false, ""});
            else
                push_lit(t, d);
        } else {
            while (j < run.size() && !is_digit(run[j])) j++;
            push_lit(t, run.substr(i, j - i));
        }
        i = j;
    }
}

Template make_template(const std::string &raw) {
    std::string line;
    line.reserve(raw.size());
    for (unsigned char c : raw) {
        if (c == '\r' || c == '\n') continue;
        if (c == '\t') line.push_back('\t');
        else if (c < 0x20 || c == 0x7f) line.push_back(' ');
        else if (c >= 0x80) line.push_back('?');
        else line.push_back((char)c);
    }
    Template t;
    size_t i = 0;
    while (i < line.size()) {
        size_t j = i;
        if (is_alnum(line[i])) {
            while (j < line.size() && is_alnum(line[j])) j++;
            push_run(t, line.substr(i, j - i));
        } else {
            while (j < line.size() && !is_alnum(line[j])) j++;
            push_lit(t, line.substr(i, j - i));
        }
        i = j;
    }
    push_lit(t, "\n");
    return t;
}

std::vector<System> load_systems(const std::string &dir) {
    std::vector<std::string> names;
    DIR *d = opendir(dir.c_str());
    if (!d) {
        std::fprintf(stderr, "gen_logs: cannot open template directory %s: %s\n", dir.c_str(), std::strerror(errno));
        std::exit(1);
    }
    while (struct dirent *e = readdir(d)) {
        std::string n = e->d_name;
        if (n.size() > 4 && n.compare(n.size() - 4, 4, ".log") == 0) names.push_back(n);
    }
    closedir(d);
    std::sort(names.begin(), names.end());  // a fixed order: determinism
    std::vector<System> systems;
    for (const auto &n : names) {
        FILE *f = std::fopen((dir + "/" + n).c_str(), "rb");
        if (!f) {
            std::fprintf(stderr, "gen_logs: cannot read %s/%s\n", dir.c_str(), n.c_str());
            std::exit(1);
        }
        System s;
        std::string base = n.substr(0, n.size() - 4);
        size_t us = base.find('_');
        if (us != std::string::npos) base = base.substr(0, us);  // "HDFS_2k" -> "hdfs"
        for (auto &c : base) c = (char)std::tolower((unsigned char)c);
        s.name = base;
        std::string cur;
        int c;
        while ((c = std::fgetc(f)) != EOF) {
            if (c == '\n') {
                if (!cur.empty()) s.lines.push_back(make_template(cur));
                cur.clear();
            } else {
                cur.push_back((char)c);
            }
        }
        if (!cur.empty()) s.lines.push_back(make_template(cur));
        std::fclose(f);
        if (!s.lines.empty()) systems.push_back(std::move(s));
    }
    if (systems.empty()) {
        std::fprintf(stderr, "gen_logs: no *.log templates in %s\n", dir.c_str());
        std::exit(1);
    }
    return systems;
}

// ---------------------------------------------------------- generation ----

struct FileSpec {
    std::string path;     // relative to --out
    uint32_t system;
    uint64_t size;        // target bytes (whole lines, at most this, >= 1 line)
};

// Recently drawn values of each length, so identifiers repeat the way block
// ids, pids and request ids do within one log file.
struct Recent {
    static constexpr int kSlots = 8;
    std::string v[65][kSlots];
    uint8_t n[65] = {};
};

const char kLowerHex[] = "0123456789abcdef";
const char kUpperHex[] = "0123456789ABCDEF";

void emit_digits(std::string &out, Rng &r, int len, bool nonzero_first) {
    uint64_t x = r.next();
    int left = 19;
    for (int i = 0; i < len; i++) {
        if (left == 0) x = r.next(), left = 19;
        int dgt = (int)(x % 10);
        x /= 10, left--;
        if (i == 0 && nonzero_first && dgt == 0) dgt = 1 + (int)(r.below(9));
        out.push_back((char)('0' + dgt));
    }
}

void emit_seg(std::string &out, const Seg &s, Rng &r, Recent &rec) {
    switch (s.kind) {
    case LIT:
        out += s.text;
        return;
    case SMALL:
        if (r.below(2) == 0) {
            out += s.text;
        } else if (s.len == 2 && s.text <= "59") {
            // minutes, seconds, days, small counters: stay plausible
            unsigned v = (unsigned)r.below(60);
            if (s.nonzero_first && v < 10) v += 10;
            out.push_back((char)('0' + v / 10));
            out.push_back((char)('0' + v % 10));
        } else {
            emit_digits(out, r, s.len, s.nonzero_first);
        }
        return;
    case OCTET: {
        char b[8];
        int n = std::snprintf(b, sizeof b, "%u", (unsigned)r.below(256));
        out.append(b, (size_t)n);
        return;
    }
    case DIGITS:
    case HEX: {
        // HEX values live in slots [len] with a separate tag in the string.
        int len = s.len;
        auto &slots = rec.v[len];
        uint8_t &cnt = rec.n[len];
        bool want_hex = s.kind == HEX;
        if (cnt > 0 && r.below(2) == 0) {
            const std::string &v = slots[r.below(cnt)];
            // a recent value of the same shape; otherwise draw a fresh one
            bool v_hex = !v.empty() && v[0] == 'h';
            if (v_hex == want_hex && (!want_hex || (v[1] == 'U') == s.upper)) {
                out.append(v, 2, std::string::npos);
                return;
            }
        }
        std::string fresh;
        if (want_hex) {
            const char *tab = s.upper ? kUpperHex : kLowerHex;
            uint64_t x = r.next();
            int left = 16;
            for (int i = 0; i < len; i++) {
                if (left == 0) x = r.next(), left = 16;
                fresh.push_back(tab[x & 15]);
                x >>= 4, left--;
            }
        } else {
            emit_digits(fresh, r, len, s.nonzero_first);
        }
        out += fresh;
        std::string tagged = want_hex ? (s.upper ? "hU" : "hl") : "dd";
        tagged += fresh;
        if (cnt < Recent::kSlots) slots[cnt++] = std::move(tagged);
        else slots[r.below(Recent::kSlots)] = std::move(tagged);
        return;
    }
    }
}

uint64_t file_seed(uint64_t seed, uint64_t index) {
    uint64_t x = seed ^ (0xd1b54a32d192ed03ULL * (index + 1));
    return splitmix64(x);
}

bool mkdirs(const std::string &path) {
    std::string cur;
    for (size_t i = 0; i < path.size(); i++) {
        cur.push_back(path[i]);
        if ((path[i] == '/' && i > 0) || i + 1 == path.size()) {
            if (mkdir(cur.c_str(), 0755) != 0 && errno != EEXIST) return false;
        }
    }
    return true;
}

bool write_file(const std::string &root, const FileSpec &fs, uint64_t index, uint64_t seed,
                const std::vector<System> &systems) {
    std::string full = root + "/" + fs.path;
    std::string dir = full.substr(0, full.rfind('/'));
    if (!mkdirs(dir)) {
        std::fprintf(stderr, "gen_logs: mkdir %s: %s\n", dir.c_str(), std::strerror(errno));
        return false;
    }
    FILE *f = std::fopen(full.c_str(), "wb");
    if (!f) {
        std::fprintf(stderr, "gen_logs: create %s: %s\n", full.c_str(), std::strerror(errno));
        return false;
    }
    const System &sys = systems[fs.system];
    Rng r(file_seed(seed, index));
    auto rec = std::make_unique<Recent>();
    std::string buf, line;
    buf.reserve(1 << 20);
    uint64_t written = 0;
    size_t idx = r.below(sys.lines.size());
    for (;;) {
        // Mostly the next line of the sample (keeps its sequences), sometimes
        // a jump to a random one.
        if (r.below(4) == 0) idx = r.below(sys.lines.size());
        else idx = (idx + 1) % sys.lines.size();
        line.clear();
        for (const Seg &s : sys.lines[idx]) emit_seg(line, s, r, *rec);
        if (written > 0 && written + line.size() > fs.size) break;
        buf += line;
        written += line.size();
        if (buf.size() >= (1 << 20)) {
            if (std::fwrite(buf.data(), 1, buf.size(), f) != buf.size()) {
                std::fprintf(stderr, "gen_logs: write %s: %s\n", full.c_str(), std::strerror(errno));
                std::fclose(f);
                return false;
            }
            buf.clear();
        }
        if (written >= fs.size) break;
    }
    bool ok = std::fwrite(buf.data(), 1, buf.size(), f) == buf.size();
    ok = (std::fclose(f) == 0) && ok;
    if (!ok) std::fprintf(stderr, "gen_logs: write %s: %s\n", full.c_str(), std::strerror(errno));
    return ok;
}

}  // namespace
