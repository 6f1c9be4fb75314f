// Reads a trace file (traces/trace.capnp, traces/framing.h) without trusting it.
//
// open() reads the header, then finds the blocks: from the trailer + index when both are valid
// and agree with the file size, otherwise by scanning block by block (frame header checks and
// payload hashes verified). A file cut off at any byte yields every block before the cut, with a
// warning; the first corrupt block found by a scan stops it (corruptOffset()), and the blocks
// before it stay usable. Nothing is allocated from a length before it is checked against the
// limits in framing.h and the file size; no input crashes it.
//
// The read* functions are const and use pread(): several threads may read blocks at once.
// refresh() is not thread-safe against them.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "traces/framing.h"
#include "traces/trace_codec.h"
#include "traces/trace_model.h"

namespace scanback::trace {

class TraceReader {
 public:
  // `path` may be a finished trace or a `*.partial` file (a recorder still writing, or one that
  // crashed). Null when the file is no trace or its header block is incomplete or corrupt.
  [[nodiscard]] static std::unique_ptr<TraceReader> open(const std::string& path, std::string& error);
  // The same over bytes in memory (tests, fuzzing).
  [[nodiscard]] static std::unique_ptr<TraceReader> openBytes(std::vector<uint8_t> bytes, std::string& error);
  ~TraceReader();
  TraceReader(const TraceReader&) = delete;
  TraceReader& operator=(const TraceReader&) = delete;

  const HeaderData& header() const { return header_; }
  const BlockInfo& headerBlock() const { return headerBlock_; }
  // Every block after the header in file order (chunks, gaps, program changes, faults), up to the
  // end, the cut or the first corrupt block. The Index block is not listed (see indexBlock()). A
  // chunk stored as several blocks is listed once, by its first block, its cycle count that of all
  // of them and its continuation blocks in BlockInfo::continuations.
  const std::vector<BlockInfo>& blocks() const { return blocks_; }
  // The blocks behind blocks(), continuations counted one by one.
  size_t physicalBlockCount() const { return physicalBlocks_; }
  // The Index block, when the file has one (found through the trailer or by the scan).
  const std::optional<BlockInfo>& indexBlock() const { return indexBlock_; }
  // True when the blocks came from a valid trailer + index (a trace closed cleanly).
  bool usedIndex() const { return usedIndex_; }
  // True when the file ends with a valid trailer: the writer closed it.
  bool complete() const { return complete_; }

  // Problems that did not stop open(): a cut-off end, an unusable index, a corrupt block, damage.
  const std::vector<std::string>& warnings() const { return warnings_; }
  // Parts missing from the middle of the trace or present twice, in file order: cycles that no
  // chunk or gap holds, blocks missing from the numbering (format version 2), copies of blocks
  // (left out of blocks()). The blocks around a hole stay readable: each chunk has its keyframe.
  const std::vector<DamageData>& damage() const { return damage_; }
  // The first corrupt block found while scanning, and why.
  std::optional<uint64_t> corruptOffset() const { return corruptOffset_; }
  const std::string& corruptError() const { return corruptError_; }
  // An index the trailer points at that could not be used (a corrupt block, entries that do not
  // match the file): where the trailer says it is, and why. The blocks were then found by scanning;
  // when the scan stopped at that same block (corruptOffset()), only the index is lost.
  struct UnusableIndex {
    uint64_t offset = 0;
    std::string why;
  };
  const std::optional<UnusableIndex>& unusableIndex() const { return unusableIndex_; }
  // The corrupt block the scan stopped at is the unusable index itself: every block before it was
  // found, nothing recorded is lost.
  bool onlyTheIndexIsCorrupt() const {
    return corruptOffset_ && unusableIndex_ && *corruptOffset_ == unusableIndex_->offset;
  }

  // Each reads and checks the block's frame (kind, payload hash), decompresses it, decodes and
  // validates it. On failure, `error` names the block's offset. readChunk reads a chunk with its
  // continuations (one ChunkData).
  [[nodiscard]] bool readChunk(const BlockInfo& block, ChunkData& out, std::string& error) const;
  [[nodiscard]] bool readGap(const BlockInfo& block, GapData& out, std::string& error) const;
  [[nodiscard]] bool readFault(const BlockInfo& block, FaultData& out, std::string& error) const;
  [[nodiscard]] bool readOpenCycle(const BlockInfo& block, OpenCycleData& out, std::string& error) const;
  [[nodiscard]] bool readProgramChange(const BlockInfo& block, ProgramChangeData& out, std::string& error) const;
  // The program in effect for the block at `offset`: the header's, or that of the last program
  // change before it (what its keyframe size and statement ids are checked against).
  ChunkLimits limitsAt(uint64_t offset) const;

  // Picks up blocks appended since the last scan (a recorder still writing): scans on from the
  // end of the last complete block. Returns true when blocks() grew, or its last chunk did (a
  // continuation). Does nothing for a complete trace or after a corrupt block.
  bool refresh();
  // The file size as of open() or the last refresh().
  uint64_t fileSize() const { return fileSize_; }

  class Source;

 private:
  explicit TraceReader(std::unique_ptr<Source> source);
  [[nodiscard]] bool init(std::string& error);
  [[nodiscard]] bool tryIndex(std::string& why);
  void scan(uint64_t from);
  // Reads and checks the block at `offset` (whose frame must be of `kind`), returning its
  // decompressed message in `words`.
  [[nodiscard]] bool loadBlock(uint64_t offset, BlockKind kind, std::vector<uint64_t>& words, size_t& size,
                               FrameHeader* frame, std::string& error, std::span<const uint8_t> prefix = {}) const;
  [[nodiscard]] bool addProgramChange(const BlockInfo& block, std::string& error);
  // Lists an admitted block: a continuation goes to its chunk (or is damage without one).
  void addBlock(const BlockInfo& block);
  // `words` and `size` receive the block's message; a continuation is read against `prefix`.
  [[nodiscard]] bool readBlockOfChunk(const BlockInfo& block, BlockKind kind, ChunkData& out, std::string& error,
                                      std::vector<uint64_t>& words, size_t& size,
                                      std::span<const uint8_t> prefix) const;
  // Checks a block's number (format version 2: one more than the block before it) and its cycles
  // (following on from the chunks and gaps before it), recording damage. False when the block is
  // left out: a copy of an earlier one.
  bool admit(const BlockInfo& block, uint32_t sequence);
  bool admitSequence(const BlockInfo& block, uint32_t sequence);
  void rebuildWarnings();

  std::unique_ptr<Source> source_;
  HeaderData header_;
  BlockInfo headerBlock_;
  std::vector<BlockInfo> blocks_;
  size_t physicalBlocks_ = 0;
  std::optional<BlockInfo> indexBlock_;
  std::vector<std::pair<uint64_t, ChunkLimits>> limits_;  // (block offset, program from there on)
  uint64_t fileSize_ = 0;
  uint64_t scanEnd_ = 0;                                        // end of the last complete block
  uint64_t nextCycle_ = 0;                                      // end of the last chunk or gap
  bool sawCycles_ = false;                                      // a chunk or gap was admitted
  bool numbered_ = false;                                       // the frames carry sequence numbers (format version 2)
  uint64_t nextSequence_ = 1;                                   // the number the next block must have
  std::optional<std::pair<uint64_t, uint64_t>> missingBlocks_;  // numbers missing before the block admitted
  std::vector<DamageData> damage_;
  bool usedIndex_ = false;
  bool complete_ = false;
  std::vector<std::string> notes_;  // lasting warnings (unusable index, corrupt block)
  std::string tailWarning_;         // the cut-off end, re-evaluated by refresh()
  std::vector<std::string> warnings_;
  std::optional<uint64_t> corruptOffset_;
  std::string corruptError_;
  std::optional<uint64_t> trailerIndexOffset_;  // from a valid trailer
  std::optional<UnusableIndex> unusableIndex_;
};

}  // namespace scanback::trace
