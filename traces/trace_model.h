// The contents of a trace in memory: what the writer encodes and the reader decodes. The file
// format itself is traces/trace.capnp (records) and traces/framing.h (blocks on disk).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "vm/runtime/write_author.h"
#include "vm/source/source.h"

namespace scanback::trace {

// Version 2 numbers the blocks in their frame headers (traces/framing.h); version 1 traces, whose
// blocks are not numbered, are still read (cycle continuity alone finds a missing chunk there).
// A version 1 reader refuses any frame whose sequence bytes are not zero, hence the minimum.
// Version 3 adds continuations (a chunk stored as several blocks, so that a recording reaches the
// disk within its flush window without a keyframe each time); a version 2 reader would take one
// for an unknown block, so version 3 traces need a version 3 reader.
// Version 4 stores STRING and WSTRING as CODESYS does (n + 1 characters, 0-terminated; before, a
// 2-byte length and then the characters): the blocks are those of version 3, but the image of a
// program with strings is another, so a version 3 reader must refuse it rather than replay it
// wrongly. This reader replays a version 1 to 3 trace whose program stores no string and refuses
// one that does (replayer/replayer.cpp), naming the layout.
inline constexpr uint32_t kFormatVersion = 4;
inline constexpr uint32_t kMinReaderVersion = 4;
inline constexpr uint32_t kFirstCodesysStringsVersion = 4;
inline constexpr uint32_t kFirstNumberedVersion = 2;
inline constexpr uint32_t kNoPath = 0xFFFFFFFFu;

enum class BlockKind : uint8_t {
  Header = 1,
  Chunk = 2,
  Gap = 3,
  ProgramChange = 4,
  Fault = 5,
  Index = 6,
  OpenCycle = 7,
  // More cycles of the chunk before it (format version 3): no keyframe of its own, it replays from
  // that chunk's. A chunk is its first block and the continuations right after it.
  Continuation = 8,
};
const char* blockKindName(BlockKind kind);

struct TaskData {
  std::string name;
  int64_t intervalNs = 0;
  int32_t priority = 0;
};

struct RecordingOptions {
  uint32_t keyframeEvery = 1000;  // cycles per chunk
  int32_t zstdLevel = 3;
  bool statements = true;
  uint64_t ringBytes = 0;        // flight-recorder mode
  int64_t ringDurationNs = 0;    // flight-recorder mode
  uint64_t statementBudget = 0;  // 0: the VM's default
  std::string test;              // the unit test the program runs (CompileOptions::test); empty: none
};

struct HeaderData {
  uint32_t formatVersion = kFormatVersion;
  uint32_t minReaderVersion = kMinReaderVersion;
  std::string scanbackVersion;
  std::string programHash;
  std::vector<SourceFile> sources;
  std::vector<TaskData> tasks;
  RecordingOptions options;
  int64_t startWallTimeNs = 0;
  uint32_t imageSize = 0;
  uint32_t statementCount = 0;
  // Chunks' write indexes hold every byte their statements and scan inputs wrote (trace.capnp:
  // writeIndexComplete); only then may a search skip a chunk by its index.
  bool writeIndexComplete = false;
  // The I/O configuration of the run (trace.capnp: ioConfig), informational; empty: none.
  std::string ioConfig;
  std::string ioConfigPath;
};

// Image byte ranges as sorted, disjoint (offset, size) pairs, flattened: a chunk's write index.
using WriteIndex = std::vector<uint32_t>;
// Whether any range of `index` overlaps [offset, offset + size).
bool writeIndexTouches(const WriteIndex& index, uint32_t offset, uint32_t size);

// Bytes written into the image at a cycle start (input latch changes or external writes).
struct ImageWriteData {
  uint32_t cycleIndex = 0;  // within the chunk
  uint32_t offset = 0;
  int8_t bit = -1;
  std::vector<uint8_t> bytes;
  int64_t atStep = kAtCycleStart;  // a debugger write at a statement boundary (trace.capnp: atStep)
  static constexpr int64_t kAtCycleStart = -1;
  // Who made it (trace.capnp: author); Unknown in a trace written before it. Replay ignores it.
  WriteAuthor author = WriteAuthor::Unknown;
  bool operator==(const ImageWriteData&) const = default;
};

// A force set or released at a cycle start (trace.capnp: Force).
struct ForceData {
  uint32_t cycleIndex = 0;  // within the chunk
  uint32_t offset = 0;
  int8_t bit = -1;
  std::vector<uint8_t> bytes;  // empty for a release
  bool release = false;
  std::string target;
  uint64_t sinceCycle = 0;
  bool restated = false;  // held from before the chunk
  bool operator==(const ForceData&) const = default;
};

struct ChunkData {
  uint64_t firstCycle = 0;
  std::vector<uint8_t> keyframe;      // image before firstCycle
  std::vector<uint16_t> tasks;        // one per cycle
  std::vector<int64_t> startTimes;    // one per cycle
  std::vector<uint32_t> stepCounts;   // one per cycle
  std::vector<uint32_t> imageHashes;  // one per cycle
  std::vector<uint32_t> paths;        // one per cycle (kNoPath when not recorded), or empty
  std::vector<std::vector<uint32_t>> pathTable;
  std::vector<ImageWriteData> inputChanges;  // sorted by cycleIndex
  std::vector<ImageWriteData> writes;        // sorted by cycleIndex
  std::vector<ForceData> forces;             // sorted by cycleIndex
  // The bytes of the image whose value changed at any cycle boundary of the chunk, as sorted,
  // disjoint (offset, size) ranges (traces/trace.capnp: writeIndex); nullopt: not recorded.
  std::optional<WriteIndex> writeIndex;
  // A continuation (BlockKind::Continuation): more cycles of the chunk before it, with no keyframe.
  // Its scan inputs' cycleIndex counts from its own first cycle; its pathTable holds the paths it
  // adds to the chunk's, which number from pathBase on, and its paths index the chunk's table.
  bool continuation = false;
  uint32_t pathBase = 0;
  uint32_t cycleCount() const { return static_cast<uint32_t>(tasks.size()); }
  bool operator==(const ChunkData&) const = default;
};

// Appends continuation `part` to `chunk` (its chunk so far): columns, paths, scan inputs (their
// cycleIndex made the chunk's) and write index (the union; none when either has none). False with
// `error` when `part` does not follow on: its first cycle or path base is not where `chunk` ends.
[[nodiscard]] bool appendContinuation(ChunkData& chunk, const ChunkData& part, std::string& error);
// The union of two write indexes.
WriteIndex mergeWriteIndexes(const WriteIndex& a, const WriteIndex& b);

// (cycle, times the statement(s) ran in it) for every cycle of `chunk` that executed one of
// `statementIds` at least once, ascending. Computed from the path table: each distinct path is
// counted once, then cycles are mapped to their path. Cycles without a recorded path are skipped.
std::vector<std::pair<uint64_t, uint32_t>> cyclesExecuting(const ChunkData& chunk, uint32_t statementId);
std::vector<std::pair<uint64_t, uint32_t>> cyclesExecuting(const ChunkData& chunk,
                                                           std::span<const uint32_t> statementIds);

// A cycle begun and not ended when the recording finished (a task paused by a debugger): it
// replays up to step `untilStep`, the trace's last position.
struct OpenCycleData {
  uint64_t cycle = 0;
  uint32_t task = 0;
  int64_t startNs = 0;
  uint64_t untilStep = 0;
  std::vector<uint8_t> keyframe;  // the image before it
  std::vector<ImageWriteData> inputChanges;
  std::vector<ImageWriteData> writes;
  std::vector<ForceData> forces;  // every force held in the cycle
  bool operator==(const OpenCycleData&) const = default;
};

struct GapData {
  uint64_t firstCycle = 0;
  uint64_t cycleCount = 0;
  bool operator==(const GapData&) const = default;
};

struct ProgramChangeData {
  uint64_t atCycle = 0;
  std::string programHash;
  std::vector<SourceFile> sources;
  uint32_t imageSize = 0;
  uint32_t statementCount = 0;
};

struct FaultData {
  uint64_t cycle = 0;
  uint64_t step = 0;
  uint32_t statement = 0;
  uint32_t code = 0;
  std::string message;
  bool operator==(const FaultData&) const = default;
};

// A part of a trace that is missing or present twice: cycles that neither a chunk nor a gap holds,
// blocks missing from the numbered sequence, a block repeated. The reader finds it; replay refuses
// the cycles it covers and `trace verify` does not call the trace faithful.
struct DamageData {
  uint64_t firstCycle = 0;  // the cycles affected: firstCycle .. firstCycle + cycleCount - 1
  uint64_t cycleCount = 0;  // 0: no cycle is known to be lost (a block without cycles is missing)
  uint64_t offset = 0;      // the file offset where it was noticed (the block after the hole, the copy)
  std::string what;         // says what is missing or repeated, with the cycle range
};

// A continuation block of a chunk, in the file.
struct ContinuationInfo {
  uint64_t offset = 0;
  uint64_t firstCycle = 0;
  uint64_t cycleCount = 0;
  uint32_t storedSize = 0;
  uint32_t rawSize = 0;
};

// Where a block is in the file (from the index or a scan).
struct BlockInfo {
  uint64_t offset = 0;
  BlockKind kind = BlockKind::Chunk;
  uint64_t firstCycle = 0;
  uint64_t cycleCount = 0;               // a chunk's: its continuations' cycles included
  uint32_t storedSize = 0;               // bytes after the frame header
  uint32_t rawSize = 0;                  // bytes after decompression
  std::optional<WriteIndex> writeIndex;  // a chunk's, when the index block carries it
  // A chunk read through TraceReader: its continuation blocks, in order (their cycles follow on
  // from firstCycle). Empty everywhere else, and in what a writer lists.
  std::vector<ContinuationInfo> continuations;
};

}  // namespace scanback::trace
