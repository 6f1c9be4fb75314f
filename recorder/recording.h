// What a recording is asked for and what it tells (recorder/recorder.h): its options, the events
// and health of its writing, its statistics, what sync() and snapshots did, and the sink that
// follows its history.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "traces/block_encoder.h"
#include "traces/trace_model.h"

namespace scanback::recorder {

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
struct [[nodiscard]] SyncResult {
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
struct [[nodiscard]] SnapshotResult {
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

}  // namespace scanback::recorder
