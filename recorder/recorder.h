// The recorder: turns a running Runtime into a trace without ever slowing its scan thread down
// (DESIGN.md invariant 6).
//
// On the scan thread it only (1) lets the VM append statement ids to a preallocated log,
// (2) notes the cycle's scan inputs (changed %I bytes, external writes) and, at a chunk start, copies
// the image as the keyframe, and (3) at the end of the cycle hashes the image and copies one record
// into a bounded lock-free queue. When the queue is full the cycle is dropped and counted; the next
// recorded cycle starts a new chunk (with a fresh keyframe) after a gap record. A writer thread
// encodes, compresses and writes.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "recorder/spsc_ring.h"
#include "traces/trace_model.h"
#include "vm/runtime/runtime.h"

namespace scanback::trace {
class TraceWriter;
}

namespace scanback::recorder {

struct RecorderOptions {
  std::string path;                     // final trace path; written as path + ".partial" until finished
  uint32_t keyframeEvery = 1000;        // cycles per chunk
  int zstdLevel = 3;
  bool statements = true;               // record statement paths
  uint64_t ringBytes = 0;               // flight recorder: keep about this many bytes of history (0: off)
  int64_t ringDurationNs = 0;           // flight recorder: keep about this much virtual time (0: off)
  size_t queueBytes = 4u << 20;         // capacity of the scan -> writer queue (small: stays in cache)
  uint32_t maxStatementsPerCycle = 1u << 20;  // longer paths are recorded as "not recorded"
};

struct RecorderStats {
  uint64_t cyclesRecorded = 0;
  uint64_t cyclesDropped = 0;
  uint64_t gaps = 0;
  uint64_t chunks = 0;
  uint64_t bytesWritten = 0;  // file bytes
  uint64_t rawBytes = 0;      // uncompressed payload bytes
};

class Recorder final : public CycleHooks {
 public:
  // Attaches to `runtime` (between cycles) and starts the writer thread; null with `error` set
  // when the trace cannot be created.
  static std::unique_ptr<Recorder> start(Runtime& runtime, const RecorderOptions& options, std::string& error);
  ~Recorder() override;

  void beforeCycle(const Runtime& runtime) override;
  void afterCycle(const Runtime& runtime, RunStatus status) override;

  // Detaches, drains the queue, writes the index and renames the trace to its final name.
  // False (with `error`) when writing failed at any point.
  bool finish(std::string& error);

  RecorderStats stats() const;
  // True while the queue to the writer is more than three quarters full. A simulation that runs
  // faster than real time may wait between cycles while this holds (never inside a cycle), so
  // that it records every cycle; a real-time task just lets the recorder drop.
  bool backlogged() const { return ring_.used() > ring_.capacity() / 4 * 3; }
  // Makes the writer sleep this long per record: tests the never-blocking path.
  void setWriterDelayForTesting(std::chrono::microseconds delay) { writerDelayUs_ = delay.count(); }

 private:
  Recorder(Runtime& runtime, const RecorderOptions& options);
  void writerLoop();
  void processRecord(std::span<const uint8_t> record);
  void flushChunk();
  void writeFinalRing();
  void publishSizes();

  Runtime& runtime_;
  RecorderOptions options_;
  SpscRing ring_;
  std::unique_ptr<trace::TraceWriter> writer_;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::atomic<int64_t> writerDelayUs_{0};
  bool attached_ = false;

  // ---- scan thread
  std::vector<uint32_t> statementLog_;
  std::vector<uint8_t> keyframe_;
  std::vector<uint8_t> shadow_;        // the image as of the last record sent (deltas are against it)
  std::vector<uint8_t> inputChanges_;  // encoded (offset u32, length u16, bytes)
  std::vector<uint8_t> writes_;        // encoded (offset u32, bit i8, length u16, bytes)
  bool needKeyframe_ = true;
  bool haveKeyframe_ = false;          // keyframe_ holds the image before the current cycle
  uint32_t cyclesInChunk_ = 0;
  uint64_t droppedRun_ = 0;            // cycles dropped since the last recorded one
  std::atomic<uint64_t> recorded_{0};
  std::atomic<uint64_t> dropped_{0};
  std::atomic<uint64_t> gaps_{0};

  // ---- writer thread
  trace::ChunkData chunk_;
  std::vector<uint8_t> writerImage_;  // the image at the end of the last record processed
  std::vector<size_t> pathHashes_;
  bool chunkOpen_ = false;
  std::atomic<uint64_t> chunks_{0};
  std::atomic<uint64_t> bytesWritten_{0};
  std::atomic<uint64_t> rawBytes_{0};
  std::string writeError_;
  // flight recorder: finished chunks kept in memory, oldest first
  std::vector<trace::ChunkData> ringChunks_;
  uint64_t ringChunkBytes_ = 0;
  std::vector<uint64_t> ringChunkSizes_;
  std::vector<trace::GapData> ringGaps_;
  std::optional<trace::FaultData> fault_;
};

}  // namespace scanback::recorder
