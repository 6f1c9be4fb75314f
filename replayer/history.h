// What a trace recorded, indexed by cycle: its chunks (decoded on demand, a few kept), gaps and
// fault, and the scan inputs of any recorded cycle. Follows a trace that is still being written.
#pragma once

#include <cstdint>
#include <list>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "traces/trace_reader.h"

namespace scanback::replay {

class ChunkReadAhead;

// The recorded facts of one cycle (docs/architecture.md: determinism: everything its execution depends on,
// plus its digest).
struct CycleRecord {
  uint64_t cycle = 0;
  uint32_t task = 0;
  int64_t startNs = 0;
  uint32_t stepCount = 0;
  uint32_t imageHash = 0;
  const std::vector<uint32_t>* path = nullptr;  // null when not recorded
  // The open cycle (History::setOpenChunk): it has begun and not ended, so it has positions up to
  // step stepCount - 1 only, no end and no digest to check.
  bool open = false;
  std::vector<const trace::ImageWriteData*> inputChanges;
  std::vector<const trace::ImageWriteData*> writes;
  // Every force held in the cycle (set at its start or before), in the order they were set:
  // applied after the writes (vm/runtime/forces.h).
  std::vector<const trace::ForceData*> forces;
};

// The forces held in cycle `cycleIndex` of `chunk` (its restated ones and its changes up to that
// cycle's start), in the order they were set.
std::vector<const trace::ForceData*> forcesHeld(const trace::ChunkData& chunk, uint32_t cycleIndex);
// The same into `held` (cleared first), reusing its storage.
void forcesHeld(const trace::ChunkData& chunk, uint32_t cycleIndex, std::vector<const trace::ForceData*>& held);

class History {
 public:
  explicit History(std::unique_ptr<trace::TraceReader> reader);
  ~History();
  History(const History&) = delete;
  History& operator=(const History&) = delete;

  const trace::TraceReader& reader() const { return *reader_; }
  const trace::HeaderData& header() const { return reader_->header(); }

  // Picks up blocks appended since (a `.partial` trace being recorded). True when anything new.
  // The open chunk stays when it still follows the recorded cycles, and is dropped otherwise.
  bool refresh();
  // A cycle under way in the task being recorded (paused there by a debugger), as a one-cycle
  // chunk after the recorded ones: its keyframe is the image before it, its step count the
  // positions it has reached. Replaces the previous one; null removes it.
  void setOpenChunk(std::shared_ptr<const trace::ChunkData> chunk);
  // An open cycle as such a chunk.
  static std::shared_ptr<const trace::ChunkData> openChunk(const trace::OpenCycleData& open);
  bool hasOpenChunk() const { return open_ != nullptr; }

  bool empty() const { return chunks_.empty(); }
  uint64_t firstCycle() const { return chunks_.empty() ? 0 : chunks_.front().firstCycle; }
  // One past the last recorded cycle.
  uint64_t endCycle() const { return chunks_.empty() ? 0 : chunks_.back().firstCycle + chunks_.back().cycleCount; }
  const std::vector<trace::GapData>& gaps() const { return gaps_; }
  const std::optional<trace::FaultData>& fault() const { return fault_; }
  // Parts of the trace missing or present twice (the reader's): their cycles do not replay.
  const std::vector<trace::DamageData>& damage() const { return reader_->damage(); }
  // The reader's warnings (cut-off end, unusable index, corrupt block).
  const std::vector<std::string>& warnings() const { return reader_->warnings(); }

  // Index of the chunk holding `cycle`, or an error saying why there is none (in a gap, in a
  // damaged part, before the recording, after its end, behind a corrupt block).
  [[nodiscard]] std::optional<size_t> chunkOf(uint64_t cycle, std::string& error) const;
  size_t chunkCount() const { return chunks_.size(); }
  const trace::BlockInfo& chunkBlock(size_t index) const { return chunks_[index]; }
  // True when chunk `index + 1` continues chunk `index` without a gap.
  bool contiguous(size_t index) const;

  // The decoded chunk (cached). Null with `error` when it cannot be read.
  [[nodiscard]] std::shared_ptr<const trace::ChunkData> chunk(size_t index, std::string& error);
  // The write index of chunk `index` (trace::ChunkData::writeIndex): from the trace's index block,
  // else from the chunk itself (decoding it the first time). Null when the chunk has none (recorded
  // without one, the open chunk), cannot be read, or when the trace's indexes are not complete (the
  // header's writeIndexComplete: a trace recorded before they held every statement's writes):
  // then every cycle of it must be searched.
  const trace::WriteIndex* writeIndex(size_t index);
  // The recorded facts of `cycle`; the pointers stay valid while `chunkData` is held. Reading the
  // cycles in order with the same `chunkData` and `out` is cheap: the chunk read last is searched
  // first (no lookup, no reference count changed) and `out`'s lists keep their storage.
  [[nodiscard]] bool cycle(uint64_t cycle, std::shared_ptr<const trace::ChunkData>& chunkData, CycleRecord& out,
                           std::string& error);

  // With `on`, each chunk read (chunk(), cycle()) has the one after it decoded on a second thread
  // (replayer/read_ahead.h), for a caller that reads the chunks in order (a rerun). Off by default:
  // one who seeks back and forth would have chunks decoded for nothing.
  void readAhead(bool on);
  // (tests) Waits until the chunk asked for ahead is decoded; the chunks handed over decoded.
  void waitForReadAhead();
  uint64_t readAheadTaken() const;

 private:
  void index();

  void appendOpenChunk();
  // Asks the read-ahead for the chunk after `index`, when there is one to decode and it is not cached.
  void askAhead(size_t index);

  std::unique_ptr<trace::TraceReader> reader_;
  std::vector<trace::BlockInfo> chunks_;  // the open chunk last, when there is one
  std::shared_ptr<const trace::ChunkData> open_;
  std::vector<trace::GapData> gaps_;
  std::optional<trace::FaultData> fault_;
  std::list<std::pair<size_t, std::shared_ptr<const trace::ChunkData>>> cache_;  // most recent first
  // Write indexes read from decoded chunks (those the index block does not carry), by chunk.
  std::map<size_t, std::optional<trace::WriteIndex>> writeIndexes_;
  // The chunk cycle() read last, and where in it: the next cycle is looked up there first. Held, so
  // that a caller's `chunkData` equal to it is that chunk; reset when the chunks are listed anew.
  struct Cursor {
    std::shared_ptr<const trace::ChunkData> chunk;
    uint32_t cycleIndex = UINT32_MAX;     // the cycle served last (none yet: UINT32_MAX)
    size_t inputsEnd = 0, writesEnd = 0;  // its input changes and writes end there
  } cursor_;
  // After reader_: it uses the reader from its thread, so it goes first.
  std::unique_ptr<ChunkReadAhead> readAhead_;
};

}  // namespace scanback::replay
