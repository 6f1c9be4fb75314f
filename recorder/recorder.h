// The recorder: turns a running Runtime into a trace without ever slowing its scan thread down
// (docs/architecture.md: the live task never waits).
//
// The scan thread records only what the determinism contract (invariant 1) says a cycle depends
// on: the task, the start time, the %I bytes that changed, the external writes, plus the live
// statement count and any fault. At a chunk start it also copies the image as the keyframe.
// Records are staged in a small buffer and handed to a bounded lock-free queue in batches; when
// the queue is full the batch is dropped and counted, and the next recorded cycle starts a new
// chunk (with a fresh keyframe) after a gap record.
//
// The writer thread re-executes each recorded cycle from those scan inputs on its own VM over the
// same immutable program (invariant 3). That run yields the statement path and the image hash of
// the cycle's digest, so the scan thread never logs statements or hashes the image. The writer
// checks itself against the live task: the statement count and the fault of every cycle, and the
// image at every keyframe (the live keyframe must equal the re-executed image). A mismatch is a
// divergence: it is counted and reported, and the live keyframe wins.
//
// Bounded loss (docs/architecture.md: traces are self-contained and crash-safe): the writer puts
// the cycles it has taken into a block of the chunk being filled at least once per flush window
// (flushEveryNs, 1 s by default: the first block of a chunk holds its keyframe, the later ones are
// continuations without one), and asks the scan thread, through one flag it reads per cycle, to
// hand its staged cycles over as often. With fsync, the file is synced after each such block. A
// kill -9 or a power cut costs at most the window's cycles (plus the time a sync takes).
//
// Flight recorder (ringBytes / ringDurationNs): the writer keeps each block of the newest chunks
// in memory as it will be in the file (trace::EncodedChunk) and forgets the oldest chunks beyond
// the limit. With a `path`, the blocks also go to the file as they are kept, and the file is
// rewritten from memory whenever it holds about twice the limit, so its size on disk stays bounded
// and a crash leaves the history held; when the recording finishes the file holds exactly the
// history held. requestSnapshot() writes the same history to another file while recording goes
// on, and a HistorySink (a control client streaming it, control/) is handed each block as it is
// kept. A flight recorder needs no `path`: then its history lives in memory only. A recording to a
// file that also keeps its newest chunks in memory (keepHistoryBytes: a runtime with a control
// endpoint) serves snapshots and sinks the same way.
//
// Failures are reported at once (RecorderOptions::onEvent, health()): the task goes on, and the
// writer tries again once per flush window; when writing works again, the cycles lost meanwhile are
// a gap (a flight recorder rewrites its file from memory instead, losing nothing it holds).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "recorder/spsc_ring.h"
#include "traces/block_encoder.h"
#include "traces/trace_model.h"
#include "vm/bytecode/write_sets.h"
#include "vm/runtime/runtime.h"

namespace scanback::trace {
class TraceWriter;
}

namespace scanback::recorder {

struct RecordHeader;

struct RecorderOptions {
  std::string path;  // final trace path; written as path + ".partial" until finished
                     // (a flight recorder may have none: its history stays in memory)
  // The run's I/O configuration (its text and file), carried by the trace's header; empty: none.
  std::string ioConfig;
  std::string ioConfigPath;
  uint32_t keyframeEvery = 1000;  // cycles per chunk
  int zstdLevel = 3;
  bool statements = true;      // record statement paths
  bool writeIndex = true;      // record each chunk's write index (trace::ChunkData)
  uint64_t ringBytes = 0;      // flight recorder: keep this many bytes of compressed chunks (0: off)
  int64_t ringDurationNs = 0;  // flight recorder: keep about this much virtual time (0: off)
  // Capacity of the scan -> writer queue; 0: 256 KiB, small enough to stay in the two cores'
  // caches. (Keyframes do not cross it: two slots of the image's size hold them.)
  size_t queueBytes = 0;
  uint32_t maxStatementsPerCycle = 1u << 20;  // longer paths are recorded as "not recorded"
  // The flush window (wall time): every cycle that has ended is in a block of the trace (written to
  // the file, or kept by a flight recorder and handed to its sinks) at most this long after it
  // ended. 0: blocks are written when chunks are complete (every keyframeEvery cycles) only.
  int64_t flushEveryNs = 1'000'000'000;
  // And in cycles: a block is written once it holds this many (0: only the window and the chunk's
  // end, keyframeEvery, bound it).
  uint32_t flushEveryCycles = 0;
  // How often (wall time) the scan thread hands its staged cycles to the writer; 0: four times per
  // flush window.
  int64_t handOverEveryNs = 0;
  // The flush window while a history sink follows the recording (an attached debugger wants the
  // present within ~100 ms; a file alone does not need blocks that small). 0: flushEveryNs.
  int64_t followedFlushEveryNs = 0;
  // fdatasync the file after each block written on time (at most once per flush window): a power
  // cut then costs no more than a kill -9 does. Off: the kernel writes the file back when it will.
  bool fsync = true;
  // Keep this many bytes of the newest chunks in memory too (snapshots, history sinks) while
  // recording everything to `path` (0: only a flight recorder keeps chunks in memory).
  uint64_t keepHistoryBytes = 0;
};

// What happened to the recording, as it happens (RecorderOptions::onEvent).
struct RecordingEvent {
  enum class Kind {
    Failed,   // writing failed: cycles from `cycle` on are not in the file until it resumes
    Resumed,  // writing works again: from `cycle` on; `lostCycles` before it are a gap in the file
  } kind = Kind::Failed;
  uint64_t cycle = 0;
  uint64_t lostCycles = 0;
  std::string message;  // what failed (the path and the system's reason), or how it resumed
};

// The recording's state for those who ask (`scanback ctl status`, a debugger's timeline).
struct RecordingHealth {
  bool failing = false;     // writing fails now
  uint64_t sinceCycle = 0;  // (failing) the first cycle not written
  std::string error;        // (failing) why
  uint64_t lostCycles = 0;  // cycles lost to failures so far (gaps in the file)
  uint32_t failures = 0;    // times writing failed
};

struct RecorderStats {
  uint64_t cyclesRecorded = 0;
  uint64_t cyclesDropped = 0;
  uint64_t gaps = 0;
  uint64_t chunks = 0;
  uint64_t bytesWritten = 0;  // file bytes
  uint64_t rawBytes = 0;      // uncompressed payload bytes
  uint64_t divergences = 0;   // cycles where the writer's re-execution disagreed with the live task
  uint64_t heldBytes = 0;     // flight recorder: compressed bytes of finished chunks held in memory
};

// What sync() made readable.
struct SyncResult {
  bool ok = false;
  std::string error;
  uint64_t endCycle = 0;       // the trace file holds every recorded cycle before this one
  std::vector<uint8_t> image;  // the image before cycle endCycle, as re-executed; empty when the
                               // cycles right before it were dropped (nothing to re-execute from)
};

// The scan inputs of the cycle under way, decoded: what replaying a cycle that has not ended yet
// starts from.
struct CycleInputs {
  std::vector<trace::ImageWriteData> inputChanges;
  std::vector<trace::ImageWriteData> writes;
};

// What requestSnapshot() did.
struct SnapshotResult {
  bool ok = false;
  std::string path;         // the requested trace path
  std::string error;        // why no snapshot was written (when !ok), naming the path
  uint64_t firstCycle = 0;  // the snapshot holds cycles firstCycle .. endCycle - 1 (gaps included)
  uint64_t endCycle = 0;
  uint64_t bytes = 0;  // file size
};

// Follows a flight recorder's history as the writer keeps it (a control client streaming it). Its
// calls come from the writer thread — or, for the history held when it is added, from the thread
// that adds it — under the recorder's history lock, in cycle order: they must return at once.
class HistorySink {
 public:
  virtual ~HistorySink() = default;
  // A block of a chunk: its first block, or one of its continuations (chunk->continuation()),
  // which only ever follows the blocks of its own chunk.
  virtual void chunk(std::shared_ptr<const trace::EncodedChunk> chunk) = 0;
  virtual void gap(const trace::GapData& gap) = 0;
  // The last of the history: nothing follows it while the task stays faulted.
  virtual void fault(const trace::FaultData& fault) = 0;
};

// What a flight recorder holds in memory.
struct HeldHistory {
  uint64_t chunks = 0;
  uint64_t firstCycle = 0;  // the held chunks hold cycles firstCycle .. endCycle - 1 (when chunks > 0)
  uint64_t endCycle = 0;
  uint64_t bytes = 0;  // compressed
};

class Recorder final : public CycleHooks {
 public:
  // Called on the writer thread for each event: must return soon (print, queue, notify).
  using EventHandler = std::function<void(const RecordingEvent&)>;
  // Attaches to `runtime` (between cycles) and starts the writer thread; null with `error` set
  // when the trace cannot be created.
  static std::unique_ptr<Recorder> start(Runtime& runtime, const RecorderOptions& options, std::string& error,
                                         EventHandler onEvent = {});
  ~Recorder() override;

  void beforeCycle(const Runtime& runtime) override;
  void afterCycle(const Runtime& runtime, RunStatus status) override;

  // Detaches, drains the queue, writes the index and renames the trace to its final name.
  // False (with `error`) when writing failed at any point. `open`: the cycle under way, when the
  // task is paused inside it (see sync() and currentInputs()), kept as the trace's last block.
  bool finish(std::string& error, const trace::OpenCycleData* open = nullptr);

  // A debugger's write made now, with the task paused inside the cycle under way at statement
  // boundary `step` (already applied to the live image): recorded with that cycle, so that replay
  // applies it at the same boundary. Only while the scan thread is parked inside the cycle.
  void noteWrite(const ExternalWrite& write, uint64_t step);

  RecorderStats stats() const;
  RecordingHealth health() const;
  // The first divergence, described (cycle, what differed); empty when there was none. Valid
  // after finish().
  const std::string& firstDivergence() const { return firstDivergence_; }
  // True while the queue to the writer is more than three quarters full. A simulation that runs
  // faster than real time may wait between cycles while this holds (never inside a cycle), so
  // that it records every cycle; a real-time task just lets the recorder drop.
  // (Or while the next chunk's keyframe has no free slot: the writer is more than a chunk behind.)
  bool backlogged() const { return ring_.used() > ring_.capacity() / 4 * 3 || (needKeyframe_ && !keyframeSlotFree()); }
  // Bytes handed to the writer and not yet processed.
  size_t queuedBytes() const { return ring_.used(); }
  // Waits until the writer has processed all but at most `bytes` of what was handed to it, or
  // `timeout` has passed; true when it has. For those who may wait for the writer: a simulation
  // faster than real time, between its cycles (a real-time task never waits), and tests. The
  // writer wakes a waiter as it takes records from the queue.
  bool waitForWriter(size_t bytes, std::chrono::nanoseconds timeout) const;
  // backlogged() no more: the queue half empty, so that the next cycles do not wait again at once.
  bool waitUntilNotBacklogged(std::chrono::nanoseconds timeout) const {
    if (needKeyframe_ && !keyframeSlotFree()) return waitForWriter(0, timeout);  // (the writer frees it as it goes)
    return waitForWriter(ring_.capacity() / 2, timeout);
  }
  // Flight recorder: asks the writer thread to write the history it holds (the kept chunks, the
  // gaps among them, the chunk being filled and the fault, if any) to a complete trace at `path`
  // (written as `path.partial`, then renamed, with the recording's header and an index), while
  // recording goes on. Callable from any thread, the scan thread included (between cycles or
  // not): it never blocks and takes no lock; it allocates the request.
  //
  // Of that history, the snapshot holds every cycle that ended before the call: the scan thread
  // notices the request when its next cycle starts and hands over the cycles it has staged with a
  // mark; the writer takes the snapshot when it reaches the mark. A request the scan thread has not marked when
  // the recording finishes is taken at the end, with everything. So the future is ready after the
  // next cycle starts and the writer has written the file, or by the end of finish().
  //
  // Refused (a ready future with `error`) for a recording that keeps no history in memory (its
  // history is already in `path.partial`), for the recording's own path, and after finish().
  // While the writer writes a snapshot it processes no records: a long one can make the task drop
  // cycles (counted as usual), never wait.
  std::future<SnapshotResult> requestSnapshot(std::string path);
  // Makes the trace file hold every cycle that has ended, so that a reader (a debugger stepping
  // back from a paused live task) can replay up to the cycle under way. Hands the staged cycles to
  // the writer and waits until it has written them: the chunk being filled is closed early, and
  // the next one starts from the writer's re-executed image. Call it from the task's thread, or
  // from another while the task's thread is parked behind a lock the call holds (a debugger's
  // pause): only when the task is not scanning, since it waits. Refused for a flight recorder,
  // whose history is in memory (requestSnapshot() writes it), and after finish().
  SyncResult sync();
  // The scan inputs of the cycle under way (same threads as sync(); inside a cycle).
  CycleInputs currentInputs() const;
  // For a task that runs no cycle for now (it faulted, an operator paused it, a debugger stopped it
  // inside a cycle): does what the next cycle's start would, marking the snapshot requests made so
  // far, so that they are served, and hands the staged cycles (all ended) to the writer, so that
  // readers of the history get every cycle run. The scan thread, between cycles or held inside one.
  void idle();
  // Asks the writer to put every cycle it has taken into a block now rather than at the end of the
  // flush window (a task that holds for a while: an operator's pause, a fault). Any thread; never waits.
  void flushSoon() { flushWanted_.store(true, std::memory_order_relaxed); }

  // ---- flight recorder: its history, from any thread
  // Hands `sink` the history held from the chunk that holds `fromCycle` on — only the newest
  // chunks whose bytes fit in `maxBytes` (at least one) — with the gaps among and after them and
  // the fault, then each chunk, gap and fault as the writer keeps it, until removeHistorySink().
  // False for a recording that keeps no history in memory.
  bool addHistorySink(std::shared_ptr<HistorySink> sink, uint64_t fromCycle, uint64_t maxBytes);
  void removeHistorySink(const HistorySink* sink);
  HeldHistory held() const;
  // The header of the recording (and of its snapshots and streams).
  const trace::HeaderData& header() const { return header_; }
  // Makes the writer sleep this long per record: tests the never-blocking path.
  void setWriterDelayForTesting(std::chrono::microseconds delay) { writerDelayUs_ = delay.count(); }

 private:
  Recorder(Runtime& runtime, const RecorderOptions& options);
  void writerLoop();
  void processRecord(const RecordHeader& header, const uint8_t* payload);
  struct SnapshotRequest;
  // The blocks of one chunk held in memory: its first block (with the keyframe), then its
  // continuations; the newest chunk grows while it is being filled.
  struct HeldChunk {
    std::vector<std::shared_ptr<const trace::EncodedChunk>> blocks;  // shared with the history sinks
    int64_t lastStartNs = 0;                                         // its last cycle's start time (for ringDurationNs)
    uint64_t bytes = 0;
    uint64_t firstCycle() const { return blocks.front()->firstCycle(); }
    uint64_t endCycle() const { return blocks.back()->firstCycle() + blocks.back()->cycleCount(); }
  };
  bool ringMode() const { return options_.ringBytes || options_.ringDurationNs; }
  bool keyframeSlotFree() const {
    for (uint8_t slot = 0; slot < keyframeSlots_; ++slot)
      if (!keyframeBusy_[slot].load(std::memory_order_acquire)) return true;
    return false;
  }
  bool keepsHistory() const { return ringMode() || options_.keepHistoryBytes; }
  void markSnapshot(uint64_t tickets);
  void serveSync(const RecordHeader& mark);
  // The chunk being filled: its cycles not yet in a block go into one (the chunk's first block, or
  // a continuation); `onTime`: because the flush window is up.
  void flushPart(bool onTime);
  // The chunk being filled is complete (its last part flushed); the next cycle starts another.
  void closeChunk();
  void startChunk(uint64_t firstCycle, const uint8_t* keyframe);
  void keepPart(std::shared_ptr<const trace::EncodedChunk> block);
  void writePart(const trace::EncodedChunk& block);
  void writeGapToFile(const trace::GapData& gap);
  void writeFaultToFile(const trace::FaultData& fault);
  bool fileUsable();
  void fileFailed(uint64_t fromCycle, const std::string& why);
  void syncFile(bool onTime);
  // Flight recorder with a file: rewrites it from the history held (bounding its size, or after
  // writing failed); the file then holds exactly that history.
  bool rewriteRingFile(std::string& error);
  bool writeHistory(trace::TraceWriter& writer);
  void serveSnapshots(bool all);
  SnapshotResult writeSnapshot(const std::string& path);
  void publishSizes();
  void noteDivergence(std::string what);
  void emit(RecordingEvent event);
  void checkFlushWindow();
  uint8_t* reserve(size_t size, bool mayWait);
  void dropCycles(uint64_t count);
  bool flushStaged(bool mayWait);
  void encodeWrite(const ExternalWrite& write, int64_t atStep);

  Runtime& runtime_;
  RecorderOptions options_;
  EventHandler onEvent_;
  SpscRing ring_;
  std::unique_ptr<trace::TraceWriter> writer_;
  trace::HeaderData header_;  // also the header of snapshots
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::atomic<int64_t> writerDelayUs_{0};
  bool attached_ = false;

  // ---- keyframes: the scan thread copies the image before a chunk's first cycle into a free slot,
  // the writer copies it out of there and frees the slot
  // As many slots as fit in 4 MiB, from 2 to 16: a small image's chunks may start while the writer
  // is several chunks behind (a fast simulation), a large image's never take more than two images.
  static constexpr uint8_t kMaxKeyframeSlots = 16;
  uint8_t keyframeSlots_ = 2;
  std::unique_ptr<uint8_t[]> keyframes_[kMaxKeyframeSlots];
  std::atomic<bool> keyframeBusy_[kMaxKeyframeSlots] = {};
  // ---- scan thread
  uint8_t keyframeSlot_ = 0;            // where the keyframe of the cycle under way is (haveKeyframe_)
  std::vector<uint8_t> inputChanges_;   // encoded (offset u32, length u16, bytes)
  std::vector<uint8_t> writes_;         // encoded (offset u32, bit i8, length u16, bytes)
  std::unique_ptr<uint8_t[]> staging_;  // records not yet handed to the writer (stays in L1)
  size_t stagedBytes_ = 0;
  uint32_t stagedCycles_ = 0;
  bool needKeyframe_ = true;
  bool haveKeyframe_ = false;  // keyframes_[keyframeSlot_] holds the image before the current cycle
  uint32_t cyclesInChunk_ = 0;
  uint64_t droppedRun_ = 0;  // cycles dropped since the last recorded one
  // The cycle of the last record staged or queued, and its start: a ShortRecord follows it. (The
  // first cycle recorded starts a chunk, a full record, whatever these say.)
  uint64_t queuedCycle_ = UINT64_MAX;
  int64_t queuedStartNs_ = 0;
  std::atomic<uint64_t> recorded_{0};
  std::atomic<uint64_t> dropped_{0};
  std::atomic<uint64_t> gaps_{0};
  uint64_t markedTickets_ = 0;  // snapshot requests covered by the last mark handed over

  // ---- writer -> scan thread: hand the staged cycles over now (the writer sets it twice per
  // flush window; the scan thread reads it once per cycle, on a line of its own that stays shared)
  alignas(64) std::atomic<bool> handOverWanted_{false};
  std::atomic<bool> flushWanted_{false};  // flushSoon()

  // ---- any thread: snapshot requests
  // Requests made so far; the scan thread reads it once per cycle (its own cache line: requests
  // are rare, so the line stays shared and the read stays cheap).
  alignas(64) std::atomic<uint64_t> snapshotTickets_{0};
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

  // ---- waitForWriter(): the waiters, woken by the writer as it takes records
  mutable std::mutex drainMutex_;
  mutable std::condition_variable drained_;
  mutable std::atomic<uint32_t> drainWaiters_{0};
  // The largest queue size a waiter waits for (set under drainMutex_ before it registers): the
  // writer wakes waiters only once the queue is that small.
  mutable std::atomic<size_t> drainBelow_{0};

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
  std::unique_ptr<const WriteSets> writeSets_;  // of the program, built by start()
  std::vector<uint8_t> ranStatements_;
  bool ranUnknown_ = false;  // a cycle's statements are not known (its log overflowed)
  void startWriteIndex();
  void noteBoundary();
  trace::WriteIndex takeWriteIndex(const trace::ChunkData& part);
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
  // History held in memory (flight recorder, keepHistoryBytes): the newest chunks, oldest first,
  // with the gaps among and after them.
  std::deque<HeldChunk> heldChunks_;
  uint64_t heldChunkBytes_ = 0;
  std::atomic<uint64_t> heldBytes_{0};
  std::deque<trace::GapData> heldGaps_;
  std::optional<trace::FaultData> fault_;
  // The writer changes heldChunks_, heldGaps_ and fault_ under it (and reads them without it);
  // others read them under it. It also guards the sinks, which are told under it.
  mutable std::mutex historyMutex_;
  std::vector<std::shared_ptr<HistorySink>> sinks_;
  std::atomic<size_t> sinkCount_{0};  // sinks_.size(), read by the writer without the lock
  // snapshot requests taken from the stack, oldest first, waiting for a mark that covers them
  std::vector<std::unique_ptr<SnapshotRequest>> waitingSnapshots_;
  uint64_t servableTickets_ = 0;  // requests with a ticket below this are covered by a mark
};

}  // namespace scanback::recorder
