// Blocks encoded in memory: the compression and framing layer of the trace format
// (traces/framing.h) without the file. TraceWriter frames every block it writes through a
// BlockEncoder; the flight recorder keeps finished chunks as EncodedChunks (exactly the bytes the
// file will hold) and appends them later with TraceWriter::writeEncodedChunk.
//
//   BlockEncoder encoder(3);
//   EncodedChunk kept;
//   if (!encoder.encodeChunk(chunk, limits, kept, error)) ...   // validated, compressed, framed
//   writer->writeEncodedChunk(kept);                            // appended as it is
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "traces/trace_codec.h"
#include "traces/trace_model.h"

namespace scanback::trace {

// One chunk block, or one continuation of a chunk, encoded: frame header + payload, exactly as in
// a trace file. Only BlockEncoder::encodeChunk fills one, and only with a chunk that passed
// validateChunk against limits(), so a writer may append it without decoding it again.
class EncodedChunk {
 public:
  EncodedChunk() = default;

  bool empty() const { return bytes_.empty(); }
  // Chunk (the chunk's first block, with its keyframe) or Continuation.
  BlockKind kind() const { return kind_; }
  bool continuation() const { return kind_ == BlockKind::Continuation; }
  // The chunk's paths this block numbers: pathBase() .. pathEnd() - 1 (its pathTable).
  uint32_t pathBase() const { return pathBase_; }
  uint32_t pathEnd() const { return pathEnd_; }
  uint64_t firstCycle() const { return firstCycle_; }
  uint32_t cycleCount() const { return cycleCount_; }
  uint32_t rawSize() const { return rawSize_; }  // the capnp message before compression
  // What the chunk was validated against: the program in effect for it.
  const ChunkLimits& limits() const { return limits_; }
  // The chunk's write index, for the trace's index block.
  const std::optional<WriteIndex>& writeIndex() const { return writeIndex_; }
  // The whole block; size() is also the memory it holds (the buffer is allocated to fit).
  std::span<const uint8_t> bytes() const { return bytes_; }
  size_t size() const { return bytes_.size(); }

 private:
  friend class BlockEncoder;
  std::vector<uint8_t> bytes_;
  BlockKind kind_ = BlockKind::Chunk;
  uint32_t pathBase_ = 0;
  uint32_t pathEnd_ = 0;
  uint64_t firstCycle_ = 0;
  uint32_t cycleCount_ = 0;
  uint32_t rawSize_ = 0;
  ChunkLimits limits_;
  std::optional<WriteIndex> writeIndex_;
};

// Compresses and frames blocks. Owns one zstd context; not thread-safe (one per thread).
class BlockEncoder {
 public:
  // `zstdLevel` is used as given (TraceWriter::create checks its range).
  explicit BlockEncoder(int zstdLevel);
  ~BlockEncoder();
  BlockEncoder(const BlockEncoder&) = delete;
  BlockEncoder& operator=(const BlockEncoder&) = delete;

  // False when the zstd context could not be created (out of memory).
  bool ok() const { return cctx_ != nullptr; }

  // Frames `message` (one encoded capnp Block, traces/trace_codec.h) as one block: the frame
  // header, then the zstd-compressed message, or the message itself when it does not compress.
  // The bytes live in this encoder until its next call. Empty, with `error` set, when the block is
  // over the size limits of framing.h.
  // With a `prefix` (a continuation: the message of its chunk's block before it), compressed against it.
  [[nodiscard]] std::span<const uint8_t> frame(BlockKind kind, uint64_t firstCycle, uint64_t cycleCount,
                                               std::span<const uint8_t> message, std::string& error,
                                               std::span<const uint8_t> prefix = {});

  // validateChunk against `limits`, encodeChunk and frame, into `out` (which owns exactly the
  // block's bytes): a chunk block, or a continuation block when chunk.continuation is set. False
  // with `error` set ("chunk at cycle N: ...") and `out` unchanged.
  // A continuation is compressed against `prefix`, the message of its chunk's block before it; every
  // block leaves its message in `message` (when given) for the next.
  [[nodiscard]] bool encodeChunk(const ChunkData& chunk, const ChunkLimits& limits, EncodedChunk& out,
                                 std::string& error, std::span<const uint8_t> prefix = {},
                                 std::vector<uint8_t>* message = nullptr);

 private:
  int zstdLevel_;
  void* cctx_ = nullptr;               // ZSTD_CCtx
  std::unique_ptr<uint8_t[]> buffer_;  // the last framed block (grows to the largest one)
  size_t bufferSize_ = 0;
};

}  // namespace scanback::trace
