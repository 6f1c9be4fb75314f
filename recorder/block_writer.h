// The recorder's writer thread (docs/architecture.md: the live task never waits; traces are
// self-contained and crash-safe). It takes the scan thread's records from the queue
// (recorder/scan_handoff.h) and re-executes each recorded cycle from its scan inputs on its own VM
// over the same immutable program. That run yields the statement path and the image hash of the
// cycle's digest, so the scan thread never logs statements or hashes the image. It checks itself
// against the live task: the statement count and the fault of every cycle, and the image at every
// keyframe (the live keyframe must equal the re-executed image). A mismatch is a divergence: it is
// counted and reported, and the live keyframe wins.
//
// Blocks and the flush window: the cycles taken go into a block of the chunk being filled (its
// first block, with the keyframe, then continuations) at least once per flush window, and the
// scan thread is asked twice as often to hand its staged cycles over. With fsync, the file is
// synced (fdatasync) after each block written on time, at most once per window.
//
// Health: a write that fails is reported at once (the EventHandler, health()); the writer tries
// again once per flush window, and the cycles lost meanwhile become a gap (a flight recorder
// rewrites its file from the history held instead: recorder/history_ring.h).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "recorder/recording.h"
#include "recorder/records.h"
#include "traces/block_encoder.h"
#include "traces/trace_model.h"
#include "vm/bytecode/write_sets.h"
#include "vm/exec/vm.h"

namespace scanback::trace {
class TraceWriter;
}

namespace scanback::recorder {

class HistoryRing;
class ScanHandoff;

class BlockWriter {
 public:
  using EventHandler = std::function<void(const RecordingEvent&)>;
  // For `program` run with `statementBudget`, recorded as `header` says; `ring`: the history held
  // in memory, when the recording keeps one (null otherwise).
  BlockWriter(std::shared_ptr<const Program> program, uint64_t statementBudget, const RecorderOptions& options,
              const trace::HeaderData& header, ScanHandoff& handoff, HistoryRing* ring, EventHandler onEvent);
  ~BlockWriter();
  // Creates the trace (when the recording has a file) and the compression context. False with `error`.
  [[nodiscard]] bool open(std::string& error);
  void start();
  // Stops the thread once it has taken everything handed over.
  void stop();
  bool running() const { return thread_.joinable(); }
  // After stop(): `open` (the cycle under way) as the trace's last block, the index, the rename.
  // False with `error` when writing failed at any point.
  [[nodiscard]] bool finish(std::string& error, const trace::OpenCycleData* open);

  // ---- any thread
  // Recorder::sync(): set before the mark crosses the queue; the future is ready once the writer
  // has reached the mark. kick() wakes the idle writer.
  std::future<SyncResult> expectSync();
  void kick();
  std::future<SnapshotResult> requestSnapshot(std::string path, uint64_t ticket, std::string refusal);
  void flushSoon() { flushWanted_.store(true, std::memory_order_relaxed); }
  void setDelay(std::chrono::microseconds delay) { delayUs_ = delay.count(); }
  uint64_t chunks() const { return chunks_.load(std::memory_order_acquire); }
  uint64_t bytesWritten() const { return bytesWritten_.load(std::memory_order_relaxed); }
  uint64_t rawBytes() const { return rawBytes_.load(std::memory_order_relaxed); }
  uint64_t divergences() const { return divergences_.load(std::memory_order_relaxed); }
  RecordingHealth health() const;
  // Valid after stop().
  const std::string& firstDivergence() const { return firstDivergence_; }

 private:
  struct SnapshotRequest;
  bool ringMode() const;
  bool keepsHistory() const { return ring_ != nullptr; }
  void loop();
  void processRecord(const RecordHeader& header, const uint8_t* payload);
  void serveSync(const RecordHeader& mark);
  void checkFlushWindow();
  void noteDivergence(std::string what);
  void emit(RecordingEvent event);
  // ---- chunks and blocks
  // The chunk being filled: its cycles not yet in a block go into one (the chunk's first block, or
  // a continuation); `onTime`: because the flush window is up.
  void flushPart(bool onTime);
  // The chunk being filled is complete (its last part flushed); the next cycle starts another.
  void closeChunk();
  void startChunk(uint64_t firstCycle, const uint8_t* keyframe);
  void startWriteIndex();
  void noteBoundary();
  trace::WriteIndex takeWriteIndex(const trace::ChunkData& part);
  // ---- the file: writing, retrying, syncing, health
  void writePart(const trace::EncodedChunk& block);
  void writeGapToFile(const trace::GapData& gap);
  void writeFaultToFile(const trace::FaultData& fault);
  bool fileUsable();
  void fileFailed(uint64_t fromCycle, const std::string& why);
  void syncFile(bool onTime);
  // Flight recorder with a file: rewrites it from the history held (bounding its size, or after
  // writing failed); the file then holds exactly that history.
  [[nodiscard]] bool rewriteRingFile(std::string& error);
  void publishSizes();
  // ---- snapshots
  void serveSnapshots(bool all);
  SnapshotResult writeSnapshot(const std::string& path);

  const RecorderOptions& options_;
  const trace::HeaderData& header_;
  ScanHandoff& handoff_;
  HistoryRing* const ring_;
  EventHandler onEvent_;
  std::unique_ptr<trace::TraceWriter> writer_;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::atomic<int64_t> delayUs_{0};
  std::atomic<bool> flushWanted_{false};  // flushSoon()

  // ---- any thread: snapshot requests
  // New requests, newest first (a lock-free stack the writer empties at once); &closedStack_ once
  // the writer has finished.
  alignas(64) std::atomic<SnapshotRequest*> snapshotRequests_{nullptr};
  static SnapshotRequest closedStack_;

  // ---- sync(): set by the caller before its mark crosses the queue, fulfilled by the writer;
  // the caller wakes the idle writer (the scan thread never does: it only ever polls)
  std::promise<SyncResult> syncDone_;
  std::mutex kickMutex_;
  std::condition_variable kick_;
  bool kicked_ = false;

  // ---- writer thread
  Vm vm_;  // re-executes the recorded cycles
  std::vector<uint32_t> statementLog_;
  bool vmValid_ = false;  // vm_ holds the image at the end of the last record
  // The cycle of the last cycle record taken from the queue, and its start (what a ShortRecord
  // counts from).
  uint64_t takenCycle_ = 0;
  int64_t takenStartNs_ = 0;
  // The chunk being filled: its keyframe until its first block is made, and all its cycles. Its
  // cycles, paths and scan inputs before these counts are in blocks already.
  trace::ChunkData chunk_;
  bool chunkOpen_ = false;
  uint32_t flushedCycles_ = 0;
  uint32_t flushedPaths_ = 0;
  size_t flushedInputs_ = 0;
  size_t flushedWrites_ = 0;
  size_t flushedForces_ = 0;
  // The forces held at the end of the last record's cycle start (trace::ForceData, cycleIndex where
  // each was set), applied after its writes in every re-executed cycle.
  std::vector<trace::ForceData> heldForces_;
  std::vector<ImageRange> releasedForces_;  // what forces released since the last block wrote
  void applyForces(std::vector<trace::ForceData> changes, uint32_t index);
  // The chunk must end at the next cycle, which then starts one from vm_ (the file lost a block of
  // this one, so its continuations cannot follow in the file).
  bool restartChunk_ = false;
  std::vector<uint8_t> chunkMessage_;  // its last block's message: what its next block is compressed against
  std::vector<size_t> pathHashes_;
  // The write index of the part of chunk_ not yet in a block (trace::ChunkData::writeIndex): the
  // image at the last cycle boundary, as 64-bit words, and the bytes that differed at any boundary
  // since that part began, one bit a byte; with the write sets of the statements that ran (from
  // the block's paths, or, without statement paths, from the statement log: ranStatements_) and
  // the scan inputs' bytes.
  std::vector<uint64_t> boundaryImage_;
  std::vector<uint8_t> changedBytes_;
  std::unique_ptr<const WriteSets> writeSets_;  // of the program, built by the constructor
  std::vector<uint8_t> ranStatements_;
  bool ranUnknown_ = false;                             // a cycle's statements are not known (its log overflowed)
  std::chrono::steady_clock::time_point partOpenedAt_;  // the first cycle of the part not yet flushed
  std::chrono::steady_clock::time_point lastHandOver_;  // the last request to the scan thread
  std::chrono::steady_clock::time_point lastSync_;
  bool unsynced_ = false;  // written since the last sync
  std::unique_ptr<trace::BlockEncoder> encoder_;
  trace::ChunkLimits limits_;
  std::atomic<uint64_t> chunks_{0};
  std::atomic<uint64_t> bytesWritten_{0};
  std::atomic<uint64_t> rawBytes_{0};
  std::atomic<uint64_t> divergences_{0};
  std::string firstDivergence_;
  std::string writeError_;  // a failure the recording did not recover from (finish() reports it)
  // Writing to the file failed from fileLostFrom_ on (the cycles since are not in it); tried again
  // once per flush window.
  std::optional<uint64_t> fileLostFrom_;
  std::chrono::steady_clock::time_point lastRetry_;
  uint64_t fileBlockBytes_ = 0;  // flight recorder: bytes of blocks in the file (to bound it)
  mutable std::mutex healthMutex_;
  RecordingHealth health_;
  // snapshot requests taken from the stack, oldest first, waiting for a mark that covers them
  std::vector<std::unique_ptr<SnapshotRequest>> waitingSnapshots_;
  uint64_t servableTickets_ = 0;  // requests with a ticket below this are covered by a mark
};

}  // namespace scanback::recorder
