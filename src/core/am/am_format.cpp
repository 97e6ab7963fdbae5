#include "am/am_format.h"

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

Footer decode_footer(std::string_view raw, uint64_t bytes, const std::string& what) {
  if (raw.size() != kFooterBytes) fail_corrupt(what, "segment footer missing");
  const auto* p = reinterpret_cast<const unsigned char*>(raw.data());
  if (get_u32(p) != kSegMagic) fail_corrupt(what, "not a scipis segment (bad magic number)");
  const uint32_t version = get_u32(p + 4);
  if (version != 1 && version != kSegVersion)
    fail(SCIPIS_E_CORRUPT, "%s: segment format version %u, this build reads versions 1 and %u; REINDEX it",
         what.c_str(), version, kSegVersion);
  const size_t crc_at = version == 1 ? 56 : 60;
  if (get_u32(p + crc_at) != crc32c(p, crc_at)) fail_corrupt(what, "segment footer checksum mismatch");
  Footer f;
  if (version > 1) f.flags = get_u32(p + 56);
  if (f.flags & ~kSegFlagTidsAscend) fail_corrupt(what, "segment footer has unknown flags");
  uint64_t* v[] = {&f.ndocs, &f.counted, &f.tokens, &f.nterms, &f.index_off, &f.groups};
  for (int i = 0; i < 6; i++) *v[i] = get_u64(p + 8 + 8 * i);
  const bool ok = bytes >= kFooterBytes && f.counted <= f.ndocs && f.ndocs <= UINT32_MAX &&
                  f.ndocs * kDocBytes <= f.index_off && f.groups <= bytes / kIndexEntry &&
                  f.index_off + f.groups * kIndexEntry == bytes - kFooterBytes &&
                  f.groups * kGroupTerms >= f.nterms && f.nterms + kGroupTerms > f.groups * kGroupTerms;
  if (!ok) fail_corrupt(what, "segment footer out of range");
  return f;
}

}  // namespace scipis::am
