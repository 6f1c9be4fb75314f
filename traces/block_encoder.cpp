#include "traces/block_encoder.h"

#include <fmt/format.h>
#include <zstd.h>

#include <algorithm>
#include <cstring>

#include "traces/framing.h"

namespace scanback::trace {

BlockEncoder::BlockEncoder(int zstdLevel) : zstdLevel_(zstdLevel), cctx_(ZSTD_createCCtx()) {}

BlockEncoder::~BlockEncoder() { ZSTD_freeCCtx(static_cast<ZSTD_CCtx*>(cctx_)); }

std::span<const uint8_t> BlockEncoder::frame(BlockKind kind, uint64_t firstCycle, uint64_t cycleCount,
                                             std::span<const uint8_t> message, std::string& error) {
  if (!cctx_) {
    error = "no zstd compression context";
    return {};
  }
  if (message.size() > kMaxRawBlockBytes) {
    error = fmt::format("{} block of {} bytes exceeds the limit of {} bytes", blockKindName(kind), message.size(),
                        kMaxRawBlockBytes);
    return {};
  }
  const size_t bound = ZSTD_compressBound(message.size());
  buffer_.resize(kFrameHeaderBytes + std::max(bound, message.size()));
  uint8_t* payload = buffer_.data() + kFrameHeaderBytes;
  FrameHeader h;
  h.kind = kind;
  h.rawSize = static_cast<uint32_t>(message.size());
  h.firstCycle = firstCycle;
  h.cycleCount = cycleCount;
  size_t stored =
      ZSTD_compressCCtx(static_cast<ZSTD_CCtx*>(cctx_), payload, bound, message.data(), message.size(), zstdLevel_);
  if (ZSTD_isError(stored) || stored >= message.size()) {
    // Incompressible (or a compressor error): store the message as it is.
    if (!message.empty()) std::memcpy(payload, message.data(), message.size());
    stored = message.size();
    h.compression = 0;
  } else {
    h.compression = 1;
  }
  if (stored > kMaxStoredBlockBytes) {
    error = fmt::format("{} block stores {} bytes, over the limit of {}", blockKindName(kind), stored,
                        kMaxStoredBlockBytes);
    return {};
  }
  h.storedSize = static_cast<uint32_t>(stored);
  h.payloadHash = payloadHash(payload, stored);
  encodeFrameHeader(h, buffer_.data());
  return {buffer_.data(), kFrameHeaderBytes + stored};
}

bool BlockEncoder::encodeChunk(const ChunkData& chunk, const ChunkLimits& limits, EncodedChunk& out,
                               std::string& error) {
  std::string why;
  if (!validateChunk(chunk, limits, why)) {
    error = fmt::format("invalid chunk at cycle {}: {}", chunk.firstCycle, why);
    return false;
  }
  const std::vector<uint8_t> message = trace::encodeChunk(chunk);  // the free function (this member hides it)
  const std::span<const uint8_t> block = frame(BlockKind::Chunk, chunk.firstCycle, chunk.cycleCount(), message, why);
  if (block.empty()) {
    error = fmt::format("chunk at cycle {}: {}", chunk.firstCycle, why);
    return false;
  }
  // A fresh vector, so that its capacity is the block's size: a flight recorder's memory limit
  // counts these bytes.
  out.bytes_ = std::vector<uint8_t>(block.begin(), block.end());
  out.firstCycle_ = chunk.firstCycle;
  out.cycleCount_ = chunk.cycleCount();
  out.rawSize_ = static_cast<uint32_t>(message.size());
  out.limits_ = limits;
  out.writeIndex_ = chunk.writeIndex;
  return true;
}

}  // namespace scanback::trace
