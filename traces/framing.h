// Blocks on disk. A block is a 48-byte frame header followed by `storedSize` payload bytes (a
// zstd frame holding one capnp `Block` message, or the message itself when uncompressed):
//
//   offset size field
//   0      4    magic 0x4B425342 ("SBBK")
//   4      1    kind (BlockKind)
//   5      1    compression (0 none, 1 zstd, 2 zstd with the decompressed payload of the block
//                                before it, of its chunk, as a prefix: continuations only, format 3)
//   6      2    reserved (0)
//   8      4    storedSize
//   12     4    rawSize            (after decompression; <= kMaxRawBlockBytes)
//   16     8    firstCycle         (chunks and gaps; 0 otherwise)
//   24     8    cycleCount
//   32     8    payloadHash        (XXH3-64 of the stored payload)
//   40     4    sequence           (format version 2: the block's number in the file, the header's
//                                    is 0 and each later block's one more; 0 in version 1 traces)
//   44     4    headerCheck        (low 32 bits of XXH3-64 of bytes 0..43)
//
// The file starts with the 8 bytes "SCANBACK" and may end with a 32-byte trailer:
//   "SBTRAILR", u64 index block offset, u64 file size before the trailer, u64 check (XXH3-64 of the
//   previous 24 bytes). All integers little-endian.
#pragma once

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>

#include "traces/trace_model.h"

namespace scanback::trace {

inline constexpr char kFileMagic[8] = {'S', 'C', 'A', 'N', 'B', 'A', 'C', 'K'};
inline constexpr uint32_t kBlockMagic = 0x4B425342u;
inline constexpr char kTrailerMagic[8] = {'S', 'B', 'T', 'R', 'A', 'I', 'L', 'R'};
inline constexpr size_t kFrameHeaderBytes = 48;
inline constexpr size_t kTrailerBytes = 32;
// Nothing is allocated from a length in the file before it is checked against these.
inline constexpr uint32_t kMaxStoredBlockBytes = 512u << 20;
inline constexpr uint32_t kMaxRawBlockBytes = 1024u << 20;

inline constexpr uint8_t kStored = 0;
inline constexpr uint8_t kZstd = 1;
// A continuation compressed against the message of its chunk's block before it (a small block
// compresses better with the context of the one before): it is read only after that block anyway.
inline constexpr uint8_t kZstdWithChunkPrefix = 2;

struct FrameHeader {
  BlockKind kind = BlockKind::Chunk;
  uint8_t compression = kZstd;
  uint32_t storedSize = 0;
  uint32_t rawSize = 0;
  uint64_t firstCycle = 0;
  uint64_t cycleCount = 0;
  uint64_t payloadHash = 0;
  // Numbers the blocks of a file (format version 2), so that a reader notices a block missing from
  // the middle or present twice (docs/architecture.md: self-contained traces).
  uint32_t sequence = 0;
};

void encodeFrameHeader(const FrameHeader& h, uint8_t out[kFrameHeaderBytes]);
// Checks magic, header check, kind, compression, reserved bytes and size limits (and that the raw
// size is a whole number of capnp words); on failure `error` says which.
[[nodiscard]] std::optional<FrameHeader> decodeFrameHeader(const uint8_t in[kFrameHeaderBytes], std::string& error);

// Rewrites the sequence number of an encoded frame header (and its header check).
void setFrameSequence(uint8_t frame[kFrameHeaderBytes], uint32_t sequence);

uint64_t payloadHash(const void* data, size_t size);
bool validBlockKind(uint8_t kind);

struct Trailer {
  uint64_t indexOffset = 0;        // the Index block's frame header
  uint64_t sizeBeforeTrailer = 0;  // == file size - kTrailerBytes in a valid trace
};

void encodeTrailer(const Trailer& t, uint8_t out[kTrailerBytes]);
// Checks magic and check only; the reader checks the offsets against the file.
[[nodiscard]] std::optional<Trailer> decodeTrailer(const uint8_t in[kTrailerBytes], std::string& error);

}  // namespace scanback::trace
