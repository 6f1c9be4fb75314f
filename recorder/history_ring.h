// The recorder's history held in memory (docs/architecture.md: the flight-recorder ring): the
// blocks of the newest chunks, each as it is in the file (trace::EncodedChunk), the gaps among and
// after them, and the fault that ended them. A flight recorder (RecorderOptions::ringBytes,
// ringDurationNs) forgets the oldest chunks beyond its limits; a recording to a file that also
// keeps history (keepHistoryBytes: a runtime with a control endpoint) does the same. From it come
// the history sinks (a control client streaming it), snapshots, and the flight recorder's file,
// rewritten from memory.
//
// The writer thread (recorder/block_writer.h) changes it, under its lock, and reads it without;
// every other thread reads it under the lock.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "traces/block_encoder.h"
#include "traces/trace_model.h"

namespace scanback::trace {
class TraceWriter;
}

namespace scanback::recorder {

class HistorySink;
struct HeldHistory;

class HistoryRing {
 public:
  // Keeps at most `limitBytes` of chunks (0: no limit) and about `durationNs` of virtual time (0:
  // no limit); the newest chunk always stays.
  HistoryRing(uint64_t limitBytes, int64_t durationNs) : limitBytes_(limitBytes), durationNs_(durationNs) {}

  // ---- the writer thread
  // A block of the chunk being filled (its first block starts a chunk here); `lastStartNs`: its
  // last cycle's start time, when it has cycles. The oldest chunks go beyond the limits.
  void keep(std::shared_ptr<const trace::EncodedChunk> block, std::optional<int64_t> lastStartNs);
  void keepGap(const trace::GapData& gap);
  void keepFault(const trace::FaultData& fault);
  // Writes the history held to `writer`: the blocks in cycle order, each chunk after the gaps before
  // it, then the fault. False with writer.lastError().
  [[nodiscard]] bool writeTo(trace::TraceWriter& writer) const;
  // A complete trace of the history held, written beside `path` (as `path.rewrite.partial`) and
  // renamed to `path.partial` over the file there: a crash at any moment leaves one of the two.
  // The writer of the new file, or null with `error`.
  [[nodiscard]] std::unique_ptr<trace::TraceWriter> rewrite(const std::string& path, const trace::HeaderData& header,
                                                            std::string& error) const;
  uint64_t bytes() const { return chunkBytes_; }  // compressed bytes of the chunks held
  bool followed() const { return sinkCount_.load(std::memory_order_relaxed) > 0; }

  // ---- any thread
  [[nodiscard]] bool addSink(std::shared_ptr<HistorySink> sink, uint64_t fromCycle, uint64_t maxBytes);
  void removeSink(const HistorySink* sink);
  HeldHistory held() const;
  uint64_t heldBytes() const { return heldBytes_.load(std::memory_order_relaxed); }

 private:
  // The blocks of one chunk held in memory: its first block (with the keyframe), then its
  // continuations; the newest chunk grows while it is being filled.
  struct HeldChunk {
    std::vector<std::shared_ptr<const trace::EncodedChunk>> blocks;  // shared with the history sinks
    int64_t lastStartNs = 0;                                         // its last cycle's start time (for durationNs)
    uint64_t bytes = 0;
    uint64_t firstCycle() const { return blocks.front()->firstCycle(); }
    uint64_t endCycle() const { return blocks.back()->firstCycle() + blocks.back()->cycleCount(); }
  };

  const uint64_t limitBytes_;
  const int64_t durationNs_;
  // The newest chunks, oldest first, with the gaps among and after them.
  std::deque<HeldChunk> chunks_;
  uint64_t chunkBytes_ = 0;
  std::atomic<uint64_t> heldBytes_{0};
  std::deque<trace::GapData> gaps_;
  std::optional<trace::FaultData> fault_;
  // The writer changes chunks_, gaps_ and fault_ under it (and reads them without it); others read
  // them under it. It also guards the sinks, which are told under it.
  mutable std::mutex mutex_;
  std::vector<std::shared_ptr<HistorySink>> sinks_;
  std::atomic<size_t> sinkCount_{0};  // sinks_.size(), read by the writer without the lock
};

}  // namespace scanback::recorder
