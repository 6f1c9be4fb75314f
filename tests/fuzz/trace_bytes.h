// Shared by the trace fuzz targets: recomputing a mutated trace's checksums, so that mutations get
// past the frame header checks, payload hashes and the trailer check into zstd, the capnp decoder
// and the validation behind them.
#pragma once

#include <xxhash.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "traces/framing.h"

namespace scanback::fuzz {

inline void fixTraceChecks(std::vector<uint8_t>& b) {
  using namespace scanback::trace;
  size_t off = sizeof kFileMagic;
  while (b.size() >= kFrameHeaderBytes && off <= b.size() - kFrameHeaderBytes) {
    uint8_t* frame = b.data() + off;
    uint32_t stored;
    std::memcpy(&stored, frame + 8, 4);
    const bool fits = stored <= b.size() - off - kFrameHeaderBytes;
    if (fits) {
      const uint64_t hash = payloadHash(frame + kFrameHeaderBytes, stored);
      std::memcpy(frame + 32, &hash, 8);
    }
    const uint32_t check = static_cast<uint32_t>(XXH3_64bits(frame, 44));
    std::memcpy(frame + 44, &check, 4);
    if (!fits) break;
    off += kFrameHeaderBytes + stored;
  }
  if (b.size() >= kTrailerBytes && std::memcmp(b.data() + b.size() - kTrailerBytes, kTrailerMagic, 8) == 0) {
    uint8_t* t = b.data() + b.size() - kTrailerBytes;
    const uint64_t check = XXH3_64bits(t, 24);
    std::memcpy(t + 24, &check, 8);
  }
}

}  // namespace scanback::fuzz
