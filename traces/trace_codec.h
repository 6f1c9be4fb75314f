// Cap'n Proto <-> model structs (traces/trace_model.h) for each block kind. An encoded block is
// one capnp `Block` message as a flat array (a whole number of 8-byte words), before compression
// and framing (traces/framing.h).
//
// Decoding treats the bytes as untrusted: reader limits are set explicitly (traversal limit from
// the message size, nesting limit 16), every kj::Exception becomes an error naming the block's
// file offset, and the decoded data is validated (see validateChunk) before it is returned.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "traces/trace_model.h"

namespace scanback::trace {

// What a chunk is checked against: the program in effect for it (the header's, or the last
// ProgramChange before it in the file).
struct ChunkLimits {
  uint32_t imageSize = 0;
  uint32_t statementCount = 0;
};

std::vector<uint8_t> encodeHeader(const HeaderData& header);
// A chunk's first block, or with chunk.continuation one of its continuations.
std::vector<uint8_t> encodeChunk(const ChunkData& chunk);
std::vector<uint8_t> encodeGap(const GapData& gap);
std::vector<uint8_t> encodeProgramChange(const ProgramChangeData& change);
std::vector<uint8_t> encodeFault(const FaultData& fault);
std::vector<uint8_t> encodeOpenCycle(const OpenCycleData& open);
// The Index lists `blocks` (offset, kind, cycles, sizes) in order.
std::vector<uint8_t> encodeIndex(const std::vector<BlockInfo>& blocks);

// Column lengths equal cycleCount (paths may also be empty: not recorded), path indices are
// < pathTable size (or kNoPath), statement ids < statementCount, scan inputs are sorted by
// cycleIndex with cycleIndex < cycleCount, offset + size <= imageSize, bit in -1..7 (at most one
// byte when >= 0, the bit is set when it is nonzero, as the runtime applies it), keyframe size == imageSize, firstCycle
// + cycleCount does not overflow, start times are not negative and never decrease.
[[nodiscard]] bool validateChunk(const ChunkData& chunk, const ChunkLimits& limits, std::string& error);
// A write index (ChunkData::writeIndex): (offset, size) pairs, sorted, disjoint, non-empty, inside
// an image of `imageSize` bytes.
[[nodiscard]] bool validateWriteIndex(const WriteIndex& index, uint32_t imageSize, std::string& error);

// `message` is the decompressed payload of the block at file offset `offset` (used in errors).
// It is read in place when 8-byte aligned, otherwise from an aligned copy. On failure `error`
// reads "block at offset N: ..." and `out` is unspecified.
[[nodiscard]] bool decodeHeader(std::span<const uint8_t> message, uint64_t offset, HeaderData& out, std::string& error);
[[nodiscard]] bool decodeChunk(std::span<const uint8_t> message, uint64_t offset, const ChunkLimits& limits,
                               ChunkData& out, std::string& error);
// A continuation (ChunkData::continuation set), checked on its own: its paths against its path
// base and table; appendContinuation checks that it follows on.
[[nodiscard]] bool decodeContinuation(std::span<const uint8_t> message, uint64_t offset, const ChunkLimits& limits,
                                      ChunkData& out, std::string& error);
[[nodiscard]] bool decodeChunkOrContinuation(std::span<const uint8_t> message, uint64_t offset,
                                             const ChunkLimits& limits, bool continuation, ChunkData& out,
                                             std::string& error);
[[nodiscard]] bool decodeGap(std::span<const uint8_t> message, uint64_t offset, GapData& out, std::string& error);
[[nodiscard]] bool decodeProgramChange(std::span<const uint8_t> message, uint64_t offset, ProgramChangeData& out,
                                       std::string& error);
[[nodiscard]] bool decodeFault(std::span<const uint8_t> message, uint64_t offset, FaultData& out, std::string& error);
// Checked as a one-cycle chunk would be: keyframe size == imageSize, scan inputs inside the image.
[[nodiscard]] bool decodeOpenCycle(std::span<const uint8_t> message, uint64_t offset, const ChunkLimits& limits,
                                   OpenCycleData& out, std::string& error);
// Entries come back as BlockInfo (kinds are checked to be valid BlockKind values).
[[nodiscard]] bool decodeIndex(std::span<const uint8_t> message, uint64_t offset, std::vector<BlockInfo>& out,
                               std::string& error);

}  // namespace scanback::trace
