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
                                             std::span<const uint8_t> message, std::string& error,
                                             std::span<const uint8_t> prefix) {
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
  const size_t needed = kFrameHeaderBytes + std::max(bound, message.size());
  if (bufferSize_ < needed) {
    // Not zero-filled: pages the compressor never writes (a large keyframe that compresses well)
    // cost no memory.
    buffer_.reset(new uint8_t[needed]);
    bufferSize_ = needed;
  }
  uint8_t* payload = buffer_.get() + kFrameHeaderBytes;
  FrameHeader h;
  h.kind = kind;
  h.rawSize = static_cast<uint32_t>(message.size());
  h.firstCycle = firstCycle;
  h.cycleCount = cycleCount;
  auto* cctx = static_cast<ZSTD_CCtx*>(cctx_);
  size_t stored;
  if (prefix.empty()) {
    stored = ZSTD_compressCCtx(cctx, payload, bound, message.data(), message.size(), zstdLevel_);
  } else {
    ZSTD_CCtx_reset(cctx, ZSTD_reset_session_and_parameters);
    ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, zstdLevel_);
    ZSTD_CCtx_refPrefix(cctx, prefix.data(), prefix.size());  // for this frame only
    stored = ZSTD_compress2(cctx, payload, bound, message.data(), message.size());
  }
  if (ZSTD_isError(stored) || stored >= message.size()) {
    // Incompressible (or a compressor error): store the message as it is.
    if (!message.empty()) std::memcpy(payload, message.data(), message.size());
    stored = message.size();
    h.compression = kStored;
  } else {
    h.compression = prefix.empty() ? kZstd : kZstdWithChunkPrefix;
  }
  if (stored > kMaxStoredBlockBytes) {
    error = fmt::format("{} block stores {} bytes, over the limit of {}", blockKindName(kind), stored,
                        kMaxStoredBlockBytes);
    return {};
  }
  h.storedSize = static_cast<uint32_t>(stored);
  h.payloadHash = payloadHash(payload, stored);
  encodeFrameHeader(h, buffer_.get());
  return {buffer_.get(), kFrameHeaderBytes + stored};
}

bool BlockEncoder::encodeChunk(const ChunkData& chunk, const ChunkLimits& limits, EncodedChunk& out, std::string& error,
                               std::span<const uint8_t> prefix, std::vector<uint8_t>* kept) {
  std::string why;
  if (!validateChunk(chunk, limits, why)) {
    error = fmt::format("invalid chunk at cycle {}: {}", chunk.firstCycle, why);
    return false;
  }
  std::vector<uint8_t> message = trace::encodeChunk(chunk);  // the free function (this member hides it)
  const BlockKind kind = chunk.continuation ? BlockKind::Continuation : BlockKind::Chunk;
  const std::span<const uint8_t> block = frame(kind, chunk.firstCycle, chunk.cycleCount(), message, why,
                                               chunk.continuation ? prefix : std::span<const uint8_t>{});
  if (block.empty()) {
    error = fmt::format("chunk at cycle {}: {}", chunk.firstCycle, why);
    return false;
  }
  // A fresh vector, so that its capacity is the block's size: a flight recorder's memory limit
  // counts these bytes.
  out.bytes_ = std::vector<uint8_t>(block.begin(), block.end());
  // The block is out: a buffer grown for a large image's keyframe is not kept for the small blocks
  // that follow (a recorder's memory stays a small multiple of the image).
  if (bufferSize_ > (16u << 20)) {
    buffer_.reset();
    bufferSize_ = 0;
  }
  out.kind_ = kind;
  out.pathBase_ = chunk.pathBase;
  out.pathEnd_ = chunk.pathBase + static_cast<uint32_t>(chunk.pathTable.size());
  out.firstCycle_ = chunk.firstCycle;
  out.cycleCount_ = chunk.cycleCount();
  out.rawSize_ = static_cast<uint32_t>(message.size());
  out.limits_ = limits;
  out.writeIndex_ = chunk.writeIndex;
  if (kept) *kept = std::move(message);
  return true;
}

}  // namespace scanback::trace
