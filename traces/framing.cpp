#include "traces/framing.h"

#include <xxhash.h>

#include <fmt/format.h>

namespace scanback::trace {

namespace {

void put32(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}
void put64(uint8_t* p, uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}
uint32_t get32(const uint8_t* p) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}
uint64_t get64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

uint32_t headerCheck(const uint8_t* in) { return static_cast<uint32_t>(XXH3_64bits(in, 44)); }

}  // namespace

const char* blockKindName(BlockKind kind) {
  switch (kind) {
    case BlockKind::Header: return "header";
    case BlockKind::Chunk: return "chunk";
    case BlockKind::Gap: return "gap";
    case BlockKind::ProgramChange: return "program change";
    case BlockKind::Fault: return "fault";
    case BlockKind::Index: return "index";
    case BlockKind::OpenCycle: return "open cycle";
    case BlockKind::Continuation: return "continuation";
  }
  return "unknown";
}

bool validBlockKind(uint8_t kind) {
  return kind >= static_cast<uint8_t>(BlockKind::Header) && kind <= static_cast<uint8_t>(BlockKind::Continuation);
}

uint64_t payloadHash(const void* data, size_t size) { return XXH3_64bits(data, size); }

void encodeFrameHeader(const FrameHeader& h, uint8_t out[kFrameHeaderBytes]) {
  std::memset(out, 0, kFrameHeaderBytes);
  put32(out + 0, kBlockMagic);
  out[4] = static_cast<uint8_t>(h.kind);
  out[5] = h.compression;
  put32(out + 8, h.storedSize);
  put32(out + 12, h.rawSize);
  put64(out + 16, h.firstCycle);
  put64(out + 24, h.cycleCount);
  put64(out + 32, h.payloadHash);
  put32(out + 40, h.sequence);
  put32(out + 44, headerCheck(out));
}

void setFrameSequence(uint8_t frame[kFrameHeaderBytes], uint32_t sequence) {
  put32(frame + 40, sequence);
  put32(frame + 44, headerCheck(frame));
}

std::optional<FrameHeader> decodeFrameHeader(const uint8_t in[kFrameHeaderBytes], std::string& error) {
  const uint32_t magic = get32(in);
  if (magic != kBlockMagic) {
    error = fmt::format("bad block magic 0x{:08x} (expected 0x{:08x})", magic, kBlockMagic);
    return std::nullopt;
  }
  const uint32_t check = get32(in + 44);
  const uint32_t expected = headerCheck(in);
  if (check != expected) {
    error = fmt::format("bad frame header check 0x{:08x} (computed 0x{:08x})", check, expected);
    return std::nullopt;
  }
  if (!validBlockKind(in[4])) {
    error = fmt::format("unknown block kind {}", in[4]);
    return std::nullopt;
  }
  FrameHeader h;
  h.kind = static_cast<BlockKind>(in[4]);
  h.compression = in[5];
  if (h.compression > kZstdWithChunkPrefix) {
    error = fmt::format("unknown compression {}", h.compression);
    return std::nullopt;
  }
  if (h.compression == kZstdWithChunkPrefix && h.kind != BlockKind::Continuation) {
    error = fmt::format("a {} block compressed against the block before it", blockKindName(h.kind));
    return std::nullopt;
  }
  if (in[6] != 0 || in[7] != 0) {
    error = "reserved frame header bytes are not zero";
    return std::nullopt;
  }
  h.storedSize = get32(in + 8);
  h.rawSize = get32(in + 12);
  h.firstCycle = get64(in + 16);
  h.cycleCount = get64(in + 24);
  h.payloadHash = get64(in + 32);
  h.sequence = get32(in + 40);
  if (h.storedSize > kMaxStoredBlockBytes) {
    error = fmt::format("stored size {} exceeds the limit {}", h.storedSize, kMaxStoredBlockBytes);
    return std::nullopt;
  }
  if (h.rawSize > kMaxRawBlockBytes) {
    error = fmt::format("raw size {} exceeds the limit {}", h.rawSize, kMaxRawBlockBytes);
    return std::nullopt;
  }
  if (h.compression == 0 && h.rawSize != h.storedSize) {
    error = fmt::format("uncompressed block with raw size {} != stored size {}", h.rawSize, h.storedSize);
    return std::nullopt;
  }
  if (h.rawSize % 8 != 0) {
    error = fmt::format("raw size {} is not a whole number of 8-byte words", h.rawSize);
    return std::nullopt;
  }
  return h;
}

void encodeTrailer(const Trailer& t, uint8_t out[kTrailerBytes]) {
  std::memcpy(out, kTrailerMagic, 8);
  put64(out + 8, t.indexOffset);
  put64(out + 16, t.sizeBeforeTrailer);
  put64(out + 24, XXH3_64bits(out, 24));
}

std::optional<Trailer> decodeTrailer(const uint8_t in[kTrailerBytes], std::string& error) {
  if (std::memcmp(in, kTrailerMagic, 8) != 0) {
    error = "no trailer magic";
    return std::nullopt;
  }
  if (get64(in + 24) != XXH3_64bits(in, 24)) {
    error = "bad trailer check";
    return std::nullopt;
  }
  Trailer t;
  t.indexOffset = get64(in + 8);
  t.sizeBeforeTrailer = get64(in + 16);
  return t;
}

}  // namespace scanback::trace
