#include "am/am_format.h"

#include <algorithm>
#include <numeric>

#include "index/postings_codec.h"
#include "util/bytes.h"
#include "util/crc32c.h"
#include "util/error.h"

namespace scipis::am {

std::string encode_footer(const Footer& f) {
  std::string out;
  put_u32(out, kSegMagic);
  put_u32(out, kSegVersion);
  for (uint64_t v : {f.ndocs, f.counted, f.tokens, f.nterms, f.index_off, f.groups}) put_u64(out, v);
  put_u32(out, f.flags);
  put_u32(out, crc32c(out.data(), out.size()));
  out.resize(kFooterBytes, '\0');
  return out;
}

std::string encode_tids(const uint64_t* keys, size_t n) {
  const size_t groups = (n + kTidGroup - 1) / kTidGroup;
  std::string dir, bits;
  for (size_t g = 0; g < groups; g++) {
    const size_t lo = g * kTidGroup, hi = std::min(n, lo + kTidGroup);
    uint64_t bmin = UINT64_MAX, bmax = 0, omax = 0;
    for (size_t i = lo; i < hi; i++) {
      bmin = std::min(bmin, keys[i] >> 16);
      bmax = std::max(bmax, keys[i] >> 16);
      omax = std::max(omax, keys[i] & 0xffff);
    }
    if (bmax > UINT32_MAX) fail(SCIPIS_E_INTERNAL, "row identifier past 48 bits");
    const TidGroup tg{static_cast<uint32_t>(bmin), static_cast<uint8_t>(bit_width(bmax - bmin)),
                      static_cast<uint8_t>(bit_width(omax)), bits.size()};
    put_u32(dir, tg.base);
    dir.push_back(static_cast<char>(tg.block_bits));
    dir.push_back(static_cast<char>(tg.off_bits));
    for (int b = 0; b < 6; b++) dir.push_back(static_cast<char>(tg.at >> (8 * b)));
    uint64_t v[kTidGroup];
    for (size_t i = lo; i < hi; i++) v[i - lo] = (((keys[i] >> 16) - bmin) << tg.off_bits) | (keys[i] & 0xffff);
    const size_t at = bits.size();
    bits.resize(at + tg.bytes(hi - lo));
    pack_bits(bits.data() + at, v, hi - lo, tg.block_bits + tg.off_bits);
  }
  return dir + bits;
}

std::string encode_vals(const uint64_t* v, const uint8_t* nulls, size_t n, size_t stride) {
  const size_t groups = (n + kValGroup - 1) / kValGroup;
  std::string dir, bits;
  uint64_t d[kValGroup];
  for (size_t g = 0; g < groups; g++) {
    const size_t lo = g * kValGroup, hi = std::min(n, lo + kValGroup);
    ValGroup vg{UINT64_MAX, 0, 0, 0, 0, bits.size()};
    for (size_t i = lo; i < hi; i++) {
      if (nulls[i * stride]) {
        vg.nulls |= 1ull << (i - lo);
        continue;
      }
      vg.min = std::min(vg.min, v[i * stride]);
      vg.max = std::max(vg.max, v[i * stride]);
    }
    if (vg.min > vg.max) vg.min = vg.max = 0;  // every row NULL
    // Timestamps of whole seconds (or of any common step) pack their steps.
    for (size_t i = lo; i < hi; i++)
      if (!nulls[i * stride]) vg.step = std::gcd(vg.step, v[i * stride] - vg.min);
    if (vg.step == 0) vg.step = 1;
    vg.bits = static_cast<uint8_t>(bit_width(vg.top()));
    for (size_t i = lo; i < hi; i++) d[i - lo] = nulls[i * stride] ? 0 : (v[i * stride] - vg.min) / vg.step;
    put_u64(dir, vg.min);
    put_u64(dir, vg.max);
    put_u64(dir, vg.nulls);
    put_u64(dir, vg.step);
    dir.push_back(static_cast<char>(vg.bits));
    for (int b = 0; b < 6; b++) dir.push_back(static_cast<char>(vg.at >> (8 * b)));
    const size_t at = bits.size();
    bits.resize(at + vg.bytes(hi - lo));
    pack_bits(bits.data() + at, d, hi - lo, vg.bits);
  }
  return dir + bits;
}

ValGroup get_val_group(const unsigned char* p) {
  ValGroup g{get_u64(p), get_u64(p + 8), get_u64(p + 16), get_u64(p + 24), p[32], 0};
  for (int b = 0; b < 6; b++) g.at |= static_cast<uint64_t>(p[33 + b]) << (8 * b);
  return g;
}

TidGroup get_tid_group(const unsigned char* p) {
  TidGroup g{get_u32(p), p[4], p[5], 0};
  for (int b = 0; b < 6; b++) g.at |= static_cast<uint64_t>(p[6 + b]) << (8 * b);
  return g;
}

Footer decode_footer(std::string_view raw, uint64_t bytes, const std::string& what) {
  if (raw.size() != kFooterBytes) fail_corrupt(what, "segment footer missing");
  const auto* p = reinterpret_cast<const unsigned char*>(raw.data());
  if (get_u32(p) != kSegMagic) fail_corrupt(what, "not a scipis segment (bad magic number)");
  const uint32_t version = get_u32(p + 4);
  if (version < 1 || version > kSegVersion)
    fail(SCIPIS_E_CORRUPT, "%s: segment format version %u, this build reads versions 1 to %u; REINDEX it",
         what.c_str(), version, kSegVersion);
  const size_t crc_at = version == 1 ? 56 : 60;
  if (get_u32(p + crc_at) != crc32c(p, crc_at)) fail_corrupt(what, "segment footer checksum mismatch");
  Footer f;
  f.version = version;
  if (version > 1) f.flags = get_u32(p + 56);
  const uint32_t known =
      kSegFlagTidsAscend | (version >= 3 ? kSegLenMask : 0u) | (version >= 4 ? kSegValsMask : 0u);
  if ((f.flags & ~known) || f.len_bytes() > 4 || f.nvals() > kMaxVals) fail_corrupt(what, "segment footer has unknown flags");
  uint64_t* v[] = {&f.ndocs, &f.counted, &f.tokens, &f.nterms, &f.index_off, &f.groups};
  for (int i = 0; i < 6; i++) *v[i] = get_u64(p + 8 + 8 * i);
  const bool ok = bytes >= kFooterBytes && f.counted <= f.ndocs && f.ndocs <= UINT32_MAX &&
                  f.docs_fixed_bytes() <= f.index_off && f.groups <= bytes / kIndexEntry &&
                  f.index_off + f.groups * kIndexEntry == bytes - kFooterBytes &&
                  f.groups * kGroupTerms >= f.nterms && f.nterms + kGroupTerms > f.groups * kGroupTerms;
  if (!ok) fail_corrupt(what, "segment footer out of range");
  return f;
}

}  // namespace scipis::am
