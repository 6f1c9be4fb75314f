// The recorder: what it writes equals what ran, it never blocks the scan thread, and it survives
// faults, slow disks and flight-recorder limits.
#include "recorder/recorder.h"

#include <gtest/gtest.h>
#include <xxhash.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <future>
#include <numeric>
#include <sstream>
#include <thread>

#include "tests/support/trace_support.h"
#include "traces/framing.h"
#include "traces/trace_reader.h"
#include "vm/runtime/stimulus.h"
#include "vm/runtime/values.h"

namespace fs = std::filesystem;
using namespace scanback;

namespace {

using test::compilePlant;
using test::finishRecording;
using test::mustCompile;
using test::openTrace;
using test::plantStimulus;
using test::recordingTo;
using test::runCycles;
using test::startRecording;
using test::TempTrace;

// Divides by zero in cycle 41, the one in which n reaches 42 (the division is on line 12).
const char* kFaultsInCycle41 = R"(
PROGRAM Main
VAR
  n : INT;
  d : INT := 5;
  q : INT;
END_VAR
n := n + 1;
IF n = 42 THEN
  d := 0;
END_IF;
q := 100 / d;
END_PROGRAM
)";

// What an independent run observes per cycle: the reference the trace must equal.
struct Observed {
  uint16_t task;
  int64_t startNs;
  uint32_t steps;
  uint32_t hash;
  std::vector<uint32_t> path;
};

class PathObserver : public VmObserver {
 public:
  std::vector<uint32_t> path;
  bool onStatement(uint32_t statement, uint64_t) override {
    path.push_back(statement);
    return false;
  }
};

std::vector<Observed> referenceRun(std::shared_ptr<const Program> program, uint64_t cycles, Stimulus* stimulus) {
  Runtime rt(program);
  PathObserver obs;
  rt.vm().setObserver(&obs);
  std::vector<Observed> out;
  for (uint64_t c = 0; c < cycles; ++c) {
    if (stimulus) stimulus->apply(c, rt);
    obs.path.clear();
    const CycleStart next = rt.nextCycle();
    const RunStatus st = rt.runCycle();
    out.push_back({static_cast<uint16_t>(next.task), next.startNs, static_cast<uint32_t>(rt.vm().steps()),
                   static_cast<uint32_t>(XXH3_64bits(rt.vm().image(), rt.vm().imageSize())), obs.path});
    if (st == RunStatus::Faulted) break;
  }
  return out;
}

std::vector<trace::ChunkData> readChunks(const fs::path& path, std::vector<trace::BlockInfo>* blocks = nullptr) {
  auto reader = openTrace(path);
  std::vector<trace::ChunkData> chunks;
  if (!reader) return chunks;
  std::string error;
  for (const trace::BlockInfo& b : reader->blocks()) {
    if (blocks) blocks->push_back(b);
    if (b.kind != trace::BlockKind::Chunk) continue;
    trace::ChunkData c;
    EXPECT_TRUE(reader->readChunk(b, c, error)) << error;
    chunks.push_back(std::move(c));
  }
  return chunks;
}

// Each chunk is what ran: its keyframe is the image before its first cycle, and each of its cycles
// is what the independent run observed.
void expectChunksAsRan(const std::vector<trace::ChunkData>& chunks, const std::vector<Observed>& expected,
                       const std::vector<std::vector<uint8_t>>& imagesBefore) {
  for (const trace::ChunkData& chunk : chunks) {
    ASSERT_LE(chunk.firstCycle + chunk.cycleCount(), expected.size()) << "chunk at cycle " << chunk.firstCycle;
    ASSERT_LT(chunk.firstCycle, imagesBefore.size()) << "chunk at cycle " << chunk.firstCycle;
    EXPECT_EQ(chunk.keyframe, imagesBefore[chunk.firstCycle]) << "keyframe of the chunk at cycle " << chunk.firstCycle;
    ASSERT_EQ(chunk.paths.size(), chunk.cycleCount()) << "chunk at cycle " << chunk.firstCycle;
    for (uint32_t i = 0; i < chunk.cycleCount(); ++i) {
      const uint64_t cycle = chunk.firstCycle + i;
      const Observed& e = expected[cycle];
      EXPECT_EQ(chunk.tasks[i], e.task) << "cycle " << cycle;
      EXPECT_EQ(chunk.startTimes[i], e.startNs) << "cycle " << cycle;
      EXPECT_EQ(chunk.stepCounts[i], e.steps) << "cycle " << cycle;
      EXPECT_EQ(chunk.imageHashes[i], e.hash) << "cycle " << cycle;
      ASSERT_LT(chunk.paths[i], chunk.pathTable.size()) << "cycle " << cycle;
      EXPECT_EQ(chunk.pathTable[chunk.paths[i]], e.path) << "cycle " << cycle;
    }
  }
}

// The chunks cover cycles first .. end - 1 without a hole.
void expectContiguous(const std::vector<trace::ChunkData>& chunks, uint64_t first, uint64_t end) {
  uint64_t next = first;
  for (const trace::ChunkData& chunk : chunks) {
    EXPECT_EQ(chunk.firstCycle, next);
    next = chunk.firstCycle + chunk.cycleCount();
  }
  EXPECT_EQ(next, end);
}

// Frame header + payload of every chunk block: what a flight recorder held of them in memory.
struct ChunkBlockSizes {
  uint64_t total = 0;
  uint64_t largest = 0;
  uint64_t raw = 0;  // before compression
};
ChunkBlockSizes chunkBlockSizes(const std::vector<trace::BlockInfo>& blocks) {
  ChunkBlockSizes s;
  for (const trace::BlockInfo& b : blocks) {
    if (b.kind != trace::BlockKind::Chunk) continue;
    const uint64_t size = trace::kFrameHeaderBytes + b.storedSize;
    s.total += size;
    s.largest = std::max(s.largest, size);
    s.raw += b.rawSize;
  }
  return s;
}

// The plant example driven by its stimulus, and what an independent run of it observes.
struct Plant {
  std::shared_ptr<const Program> program;
  std::optional<Stimulus> stimulus;
  std::vector<Observed> expected;
  std::vector<std::vector<uint8_t>> imagesBefore;  // the recorded run's image before each cycle
};

Plant plant(uint64_t cycles) {
  Plant p;
  p.program = compilePlant();
  if (!p.program) return p;
  p.stimulus = plantStimulus(*p.program);
  if (!p.stimulus) return p;
  Stimulus copy = *p.stimulus;
  p.expected = referenceRun(p.program, cycles, &copy);
  return p;
}

// Runs the recorded plant up to cycle `end`. Between cycles it waits while the writer is behind,
// as `scanback run` does without --realtime, so that no cycle is dropped.
void runPlant(Plant& p, Runtime& rt, const recorder::Recorder& rec, uint64_t end) {
  ASSERT_EQ(p.imagesBefore.size(), rt.cycle());
  while (rt.cycle() < end) {
    while (rec.backlogged()) rec.waitUntilNotBacklogged(std::chrono::seconds(1));
    p.stimulus->apply(rt.cycle(), rt);
    p.imagesBefore.emplace_back(rt.vm().image(), rt.vm().image() + rt.vm().imageSize());
    ASSERT_EQ(rt.runCycle(), RunStatus::CycleDone) << "cycle " << rt.cycle() - 1;
  }
}

TEST(Recorder, RecordsEveryCycleExactlyAsItRan) {
  auto program = compilePlant();
  ASSERT_TRUE(program);
  auto stimulus = plantStimulus(*program);
  ASSERT_TRUE(stimulus);
  auto stimulus2 = *stimulus;
  const uint64_t kCycles = 700;
  const std::vector<Observed> expected = referenceRun(program, kCycles, &stimulus2);

  const TempTrace path("roundtrip");
  Runtime rt(program);
  auto rec = startRecording(rt, recordingTo(path, 100));
  ASSERT_TRUE(rec);
  std::vector<std::vector<uint8_t>> imagesBefore;  // the image at each cycle boundary
  for (uint64_t c = 0; c < kCycles; ++c) {
    stimulus->apply(c, rt);
    imagesBefore.emplace_back(rt.vm().image(), rt.vm().image() + rt.vm().imageSize());
    ASSERT_EQ(rt.runCycle(), RunStatus::CycleDone);
  }
  ASSERT_TRUE(finishRecording(*rec));
  EXPECT_EQ(rec->stats().cyclesRecorded, kCycles);
  EXPECT_EQ(rec->stats().cyclesDropped, 0u);
  EXPECT_EQ(rec->stats().divergences, 0u) << rec->firstDivergence();
  EXPECT_TRUE(fs::exists(path));
  EXPECT_FALSE(fs::exists(path.string() + ".partial"));

  const std::vector<trace::ChunkData> chunks = readChunks(path);
  ASSERT_EQ(chunks.size(), 7u);
  expectContiguous(chunks, 0, kCycles);
  expectChunksAsRan(chunks, expected, imagesBefore);
  // The stimulus changes inputs: some input changes are recorded, each inside the %I area.
  size_t changes = 0;
  for (const trace::ChunkData& chunk : chunks) {
    for (const trace::ImageWriteData& w : chunk.inputChanges) {
      EXPECT_GE(w.offset, program->input.offset);
      EXPECT_LE(w.offset + w.bytes.size(), program->input.offset + program->input.size);
      ++changes;
    }
  }
  EXPECT_GT(changes, 0u);
}

// A change to the live image that bypasses the scan inputs breaks the determinism contract: the
// writer's re-execution can no longer follow, the recorder says so, and the next keyframe is the
// live image, so the trace stays true to what ran.
TEST(Recorder, StateChangedBehindTheRecordersBackIsADivergence) {
  auto program = mustCompile(R"(
PROGRAM Main
VAR
  n : DINT;
  mode : INT;
  out : DINT;
END_VAR
n := n + 1;
IF mode = 7 THEN
  out := out + 100;
ELSE
  out := out + 1;
END_IF
END_PROGRAM
)");
  ASSERT_TRUE(program);
  const TempTrace path("divergence");
  Runtime rt(program);
  auto rec = startRecording(rt, recordingTo(path, 10));
  ASSERT_TRUE(rec);
  std::string error;
  auto modeVar = findVariable(*program, "Main.mode", error);
  ASSERT_TRUE(modeVar) << error;
  const uint32_t mode = modeVar->offset;
  for (uint64_t c = 0; c < 30; ++c) {
    if (c == 14) rt.vm().image()[mode] = 7;  // not through queueWrite: no scan input records it
    ASSERT_EQ(rt.runCycle(), RunStatus::CycleDone);
  }
  ASSERT_TRUE(finishRecording(*rec));
  EXPECT_GE(rec->stats().divergences, 1u);
  EXPECT_NE(rec->firstDivergence().find("cycle 20"), std::string::npos) << rec->firstDivergence();
  const std::vector<trace::ChunkData> chunks = readChunks(path);
  ASSERT_EQ(chunks.size(), 3u);
  int16_t keyframeMode = 0;
  std::memcpy(&keyframeMode, chunks[2].keyframe.data() + mode, 2);
  EXPECT_EQ(keyframeMode, 7) << "the keyframe after the divergence is the live image";
}

// A %I word and a variable only external writes change (the tests of writes and their authors).
constexpr const char* kSensorAndSetpoint = R"(
PROGRAM Main
VAR
  sensor AT %IW1 : WORD;
  setpoint : INT;
  seen : INT;
END_VAR
seen := WORD_TO_INT(sensor) + setpoint;
END_PROGRAM
)";

TEST(Recorder, ExternalWritesAndInputChangesLandInTheirCycle) {
  auto program = mustCompile(kSensorAndSetpoint);
  ASSERT_TRUE(program);
  const TempTrace path("writes");
  Runtime rt(program);
  auto rec = startRecording(rt, recordingTo(path));
  ASSERT_TRUE(rec);
  for (int c = 0; c < 10; ++c) {
    if (c == 3) {
      rt.inputs()[2] = 0x34;  // %IW1 is bytes 2..3
      rt.inputs()[3] = 0x12;
    }
    if (c == 6) {
      std::string why;
      auto loc = findVariable(*program, "Main.setpoint", why);
      ASSERT_TRUE(loc) << why;
      ExternalWrite w;
      w.offset = loc->offset;
      w.bytes = {7, 0};
      rt.queueWrite(w);
    }
    ASSERT_EQ(rt.runCycle(), RunStatus::CycleDone);
  }
  ASSERT_TRUE(finishRecording(*rec));
  const auto chunks = readChunks(path);
  ASSERT_EQ(chunks.size(), 1u);
  const trace::ChunkData& c = chunks[0];
  ASSERT_EQ(c.inputChanges.size(), 1u);
  EXPECT_EQ(c.inputChanges[0].cycleIndex, 3u);
  EXPECT_EQ(c.inputChanges[0].offset, program->input.offset + 2);
  EXPECT_EQ(c.inputChanges[0].bytes, (std::vector<uint8_t>{0x34, 0x12}));
  ASSERT_EQ(c.writes.size(), 1u);
  EXPECT_EQ(c.writes[0].cycleIndex, 6u);
  EXPECT_EQ(c.writes[0].bytes, (std::vector<uint8_t>{7, 0}));
}

// Who made a write or a %I change is recorded with it (ImageWrite.author): two writes of one cycle
// by different authors over the same variable stay two records, in their order, and adjacent %I
// bytes changed by different authors become two input changes (one run, where no author was noted).
TEST(Recorder, EachWriteAndInputChangeKeepsItsAuthor) {
  auto program = mustCompile(kSensorAndSetpoint);
  ASSERT_TRUE(program);
  std::string why;
  auto setpoint = findVariable(*program, "Main.setpoint", why);
  ASSERT_TRUE(setpoint) << why;
  const TempTrace path("authors");
  Runtime rt(program);
  auto rec = startRecording(rt, recordingTo(path));
  ASSERT_TRUE(rec);
  for (int c = 0; c < 4; ++c) {
    if (c == 1) {
      rt.queueWrite(ExternalWrite{setpoint->offset, -1, {7, 0}, WriteAuthor::Stimulus});
      rt.queueWrite(ExternalWrite{setpoint->offset, -1, {9, 0}, WriteAuthor::Debugger});
      rt.inputs()[2] = 0x34;  // %IW1 is bytes 2..3: its low byte a peer's, its high byte a stimulus's
      rt.noteInputAuthor(2, 1, WriteAuthor::ModbusPeer);
      rt.inputs()[3] = 0x12;
      rt.noteInputAuthor(3, 1, WriteAuthor::Stimulus);
    }
    if (c == 2) {  // the notes went with the latch: the same bytes changed again are nobody's
      rt.inputs()[2] = 0x35;
      rt.inputs()[3] = 0x13;
    }
    ASSERT_EQ(rt.runCycle(), RunStatus::CycleDone);
  }
  auto seen = findVariable(*program, "Main.seen", why);
  ASSERT_TRUE(seen) << why;
  int16_t seenValue = 0;
  std::memcpy(&seenValue, rt.vm().image() + seen->offset, 2);
  EXPECT_EQ(seenValue, 0x1335 + 9) << "the debugger's write came last";
  ASSERT_TRUE(finishRecording(*rec));
  const auto chunks = readChunks(path);
  ASSERT_EQ(chunks.size(), 1u);
  const trace::ChunkData& c = chunks[0];
  ASSERT_EQ(c.writes.size(), 2u);
  EXPECT_EQ(c.writes[0].bytes, (std::vector<uint8_t>{7, 0}));
  EXPECT_EQ(c.writes[0].author, WriteAuthor::Stimulus);
  EXPECT_EQ(c.writes[1].bytes, (std::vector<uint8_t>{9, 0}));
  EXPECT_EQ(c.writes[1].author, WriteAuthor::Debugger);
  ASSERT_EQ(c.inputChanges.size(), 3u);
  EXPECT_EQ(c.inputChanges[0].offset, program->input.offset + 2);
  EXPECT_EQ(c.inputChanges[0].bytes, (std::vector<uint8_t>{0x34}));
  EXPECT_EQ(c.inputChanges[0].author, WriteAuthor::ModbusPeer);
  EXPECT_EQ(c.inputChanges[1].offset, program->input.offset + 3);
  EXPECT_EQ(c.inputChanges[1].bytes, (std::vector<uint8_t>{0x12}));
  EXPECT_EQ(c.inputChanges[1].author, WriteAuthor::Stimulus);
  EXPECT_EQ(c.inputChanges[2].cycleIndex, 2u);
  EXPECT_EQ(c.inputChanges[2].bytes, (std::vector<uint8_t>{0x35, 0x13}));
  EXPECT_EQ(c.inputChanges[2].author, WriteAuthor::Unknown);
}

TEST(Recorder, FaultEndsTheTraceWithTheFaultingCycle) {
  auto program = mustCompile(kFaultsInCycle41, "test.st");
  ASSERT_TRUE(program);
  const TempTrace path("fault");
  Runtime rt(program);
  auto rec = startRecording(rt, recordingTo(path, 10));
  ASSERT_TRUE(rec);
  ASSERT_EQ(runCycles(rt, 100), RunStatus::Faulted);
  ASSERT_TRUE(finishRecording(*rec));
  std::vector<trace::BlockInfo> blocks;
  const auto chunks = readChunks(path, &blocks);
  ASSERT_FALSE(blocks.empty());
  EXPECT_EQ(blocks.back().kind, trace::BlockKind::Fault);
  ASSERT_FALSE(chunks.empty());
  const trace::ChunkData& last = chunks.back();
  EXPECT_EQ(last.firstCycle + last.cycleCount() - 1, 41u);  // cycle 41 (n = 42) faulted
  auto reader = openTrace(path);
  ASSERT_TRUE(reader);
  trace::FaultData f;
  std::string error;
  ASSERT_TRUE(reader->readFault(blocks.back(), f, error)) << error;
  EXPECT_EQ(f.cycle, 41u);
  EXPECT_EQ(f.code, static_cast<uint32_t>(FaultCode::DivisionByZero));
  EXPECT_NE(f.message.find("division by zero"), std::string::npos) << f.message;
  EXPECT_NE(f.message.find("test.st:12:1"), std::string::npos) << f.message;
}

TEST(Recorder, SlowWriterDropsCyclesWithGapsAndNeverBlocksTheScan) {
  auto program = compilePlant();
  ASSERT_TRUE(program);
  const TempTrace path("slow");
  Runtime rt(program);
  recorder::RecorderOptions options = recordingTo(path, 50);
  options.queueBytes = 16 * 1024;  // room for several hundred cycles
  auto rec = startRecording(rt, options);
  ASSERT_TRUE(rec);
  // 50 ms per record: a scan thread that waited for the writer would need minutes for this loop.
  rec->setWriterDelayForTesting(std::chrono::milliseconds(50));
  std::vector<std::vector<uint8_t>> imagesBefore;
  const uint64_t kCycles = 3000;
  for (uint64_t c = 0; c < kCycles; ++c) {
    imagesBefore.emplace_back(rt.vm().image(), rt.vm().image() + rt.vm().imageSize());
    ASSERT_EQ(rt.runCycle(), RunStatus::CycleDone);
  }
  const recorder::RecorderStats during = rec->stats();
  EXPECT_GT(during.cyclesDropped, 0u);
  rec->setWriterDelayForTesting(std::chrono::microseconds(0));
  ASSERT_TRUE(finishRecording(*rec));
  const recorder::RecorderStats s = rec->stats();
  EXPECT_EQ(s.cyclesRecorded + s.cyclesDropped, kCycles);
  EXPECT_GT(s.gaps, 0u);

  std::vector<trace::BlockInfo> blocks;
  const auto chunks = readChunks(path, &blocks);
  size_t gapBlocks = 0;
  uint64_t droppedInGaps = 0;
  std::string why;
  auto reader = openTrace(path);
  ASSERT_TRUE(reader);
  for (const trace::BlockInfo& b : blocks) {
    if (b.kind != trace::BlockKind::Gap) continue;
    trace::GapData g;
    ASSERT_TRUE(reader->readGap(b, g, why)) << why;
    ++gapBlocks;
    droppedInGaps += g.cycleCount;
  }
  EXPECT_EQ(gapBlocks, s.gaps);
  EXPECT_EQ(droppedInGaps, s.cyclesDropped);
  // Every chunk, including those right after a gap, starts from the image its first cycle saw.
  for (const trace::ChunkData& c : chunks) EXPECT_EQ(c.keyframe, imagesBefore[c.firstCycle]) << c.firstCycle;
}

// Records `cycles` cycles of a fresh run of `program` (no stimulus) to `path` with the default
// options but `keyframeEvery`, waiting while the writer is behind so that none is dropped, and
// checks the trace against an independent run: every cycle recorded, no hole, every chunk as it ran.
// Returns the chunks.
std::vector<trace::ChunkData> recordAndExpectAsRan(const std::shared_ptr<const Program>& program, const TempTrace& path,
                                                   uint64_t cycles, uint32_t keyframeEvery) {
  const std::vector<Observed> expected = referenceRun(program, cycles, nullptr);
  Runtime rt(program);
  auto rec = startRecording(rt, recordingTo(path, keyframeEvery));
  if (!rec) return {};
  std::vector<std::vector<uint8_t>> imagesBefore;
  for (uint64_t c = 0; c < cycles; ++c) {
    while (rec->backlogged()) rec->waitUntilNotBacklogged(std::chrono::seconds(1));
    imagesBefore.emplace_back(rt.vm().image(), rt.vm().image() + rt.vm().imageSize());
    EXPECT_EQ(rt.runCycle(), RunStatus::CycleDone) << "cycle " << c;
  }
  EXPECT_TRUE(finishRecording(*rec));
  EXPECT_EQ(rec->stats().cyclesRecorded, cycles);
  EXPECT_EQ(rec->stats().cyclesDropped, 0u);
  std::vector<trace::ChunkData> chunks = readChunks(path);
  expectContiguous(chunks, 0, cycles);
  expectChunksAsRan(chunks, expected, imagesBefore);
  return chunks;
}

// An image of megabytes (buffers, recipes, logs) is recorded with the default options: the queue
// between the scan thread and the writer is sized to hold its keyframes, so none is dropped for
// being larger than the queue.
TEST(Recorder, ImageOfMegabytesIsRecordedWithTheDefaultOptions) {
  auto program = mustCompile(R"(
PROGRAM Main
VAR
  samples : ARRAY[0..599999] OF DINT;
  n : DINT;
END_VAR
n := n + 1;
samples[n * 7919 MOD 600000] := n;
END_PROGRAM
)");
  ASSERT_TRUE(program);
  ASSERT_GT(program->imageSize(), 2u << 20);
  const TempTrace path("megabytes");
  EXPECT_EQ(recordAndExpectAsRan(program, path, 40, 8).size(), 40u / 8);
}

// Most cycles are queued as a short record that stores its start as the time since the cycle
// before it; cycles further apart than that field holds (about 4.3 s: here the two tasks' cycles
// are 0 to 5 s apart) are queued in full, and every start time in the trace is the one the cycle
// ran at.
TEST(Recorder, CyclesSecondsApartKeepTheirStartTimes) {
  auto program = mustCompile(R"(CONFIGURATION Cfg
  RESOURCE Cpu ON PLC
    TASK Fast (INTERVAL := T#5s, PRIORITY := 1);
    TASK Slow (INTERVAL := T#7s, PRIORITY := 2);
    PROGRAM S WITH Slow : Count;
    PROGRAM F WITH Fast : Count;
  END_RESOURCE
END_CONFIGURATION

PROGRAM Count
VAR
  n : DINT;
END_VAR
n := n + 1;
END_PROGRAM
)");
  ASSERT_TRUE(program);
  const TempTrace path("seconds_apart");
  const std::vector<trace::ChunkData> chunks = recordAndExpectAsRan(program, path, 60, 25);
  // Both kinds of record were taken: cycles closer than the short record's limit, and further.
  std::vector<int64_t> starts;
  for (const trace::ChunkData& chunk : chunks)
    starts.insert(starts.end(), chunk.startTimes.begin(), chunk.startTimes.end());
  ASSERT_EQ(starts.size(), 60u);
  std::vector<int64_t> apart(starts.size());
  std::adjacent_difference(starts.begin(), starts.end(), apart.begin());
  apart.erase(apart.begin());
  EXPECT_LT(*std::min_element(apart.begin(), apart.end()), int64_t{UINT32_MAX});
  EXPECT_GT(*std::max_element(apart.begin(), apart.end()), int64_t{UINT32_MAX});
}

TEST(Recorder, PartialTraceIsReadableWhileRecording) {
  auto program = compilePlant();
  ASSERT_TRUE(program);
  const TempTrace path("partial");
  Runtime rt(program);
  auto rec = startRecording(rt, recordingTo(path, 20));
  ASSERT_TRUE(rec);
  for (int c = 0; c < 205; ++c) ASSERT_EQ(rt.runCycle(), RunStatus::CycleDone);
  // The writer is asynchronous; wait until it has taken every record handed to it: the ten
  // complete chunks are written then (the last cycles stay staged on the scan thread's side).
  ASSERT_TRUE(rec->waitForWriter(0, std::chrono::seconds(10)));
  EXPECT_EQ(rec->stats().chunks, 10u);
  const auto chunks = readChunks(path.string() + ".partial");
  EXPECT_GE(chunks.size(), 10u);
  ASSERT_TRUE(finishRecording(*rec));
  EXPECT_EQ(readChunks(path).size(), 11u);
}

TEST(Recorder, FlightRecorderKeepsOnlyTheLatestHistory) {
  auto program = compilePlant();
  ASSERT_TRUE(program);
  const TempTrace path("ring");
  Runtime rt(program);
  recorder::RecorderOptions options = recordingTo(path, 100);
  options.ringDurationNs = 2'000'000'000;  // 2 s of virtual time
  auto rec = startRecording(rt, options);
  ASSERT_TRUE(rec);
  for (int c = 0; c < 3000; ++c) ASSERT_EQ(rt.runCycle(), RunStatus::CycleDone);
  ASSERT_TRUE(finishRecording(*rec));
  const auto chunks = readChunks(path);
  ASSERT_FALSE(chunks.empty());
  EXPECT_GT(chunks.front().firstCycle, 0u);
  EXPECT_EQ(chunks.back().firstCycle + chunks.back().cycleCount(), 3000u);
  const int64_t span = chunks.back().startTimes.back() - chunks.front().startTimes.front();
  // The ring drops whole chunks: the history may exceed the limit by the longest one (the last
  // chunk is often short: the one being filled at the end).
  int64_t oneChunk = 0;
  for (const auto& c : chunks) oneChunk = std::max(oneChunk, c.startTimes.back() - c.startTimes.front());
  EXPECT_LE(span, int64_t{2'000'000'000} + oneChunk + 100'000'000);  // the limit plus at most one chunk
  EXPECT_GE(span, int64_t{2'000'000'000} - oneChunk);
  expectContiguous(chunks, chunks.front().firstCycle, 3000);
}

// The limit counts what memory holds: each finished chunk as its compressed block, exactly the
// bytes the file gets.
TEST(Recorder, FlightRecorderLimitCountsCompressedBytes) {
  const uint64_t kCycles = 6000;
  const uint64_t kLimit = 40'000;
  Plant p = plant(kCycles);
  ASSERT_TRUE(p.stimulus);
  const TempTrace path("ring_bytes");
  Runtime rt(p.program);
  recorder::RecorderOptions options = recordingTo(path, 100);
  options.ringBytes = kLimit;
  auto rec = startRecording(rt, options);
  ASSERT_TRUE(rec);
  runPlant(p, rt, *rec, kCycles);
  ASSERT_TRUE(finishRecording(*rec));
  const recorder::RecorderStats stats = rec->stats();
  EXPECT_EQ(stats.cyclesDropped, 0u);
  EXPECT_EQ(stats.divergences, 0u) << rec->firstDivergence();

  std::vector<trace::BlockInfo> blocks;
  const auto chunks = readChunks(path, &blocks);
  ASSERT_FALSE(chunks.empty());
  const ChunkBlockSizes sizes = chunkBlockSizes(blocks);
  // At most the limit (the oldest chunk goes as soon as the total is over it), and less than two
  // chunks below it (it goes only then).
  EXPECT_LE(sizes.total, kLimit);
  EXPECT_GT(sizes.total + 2 * sizes.largest, kLimit);
  EXPECT_EQ(stats.heldBytes, sizes.total) << "memory held exactly the blocks written";
  // Uncompressed, the same history is far over the limit: an uncompressed count would keep less.
  EXPECT_GT(sizes.raw, 2 * kLimit);
  EXPECT_GT(chunks.front().firstCycle, 0u);
  expectContiguous(chunks, chunks.front().firstCycle, kCycles);
  expectChunksAsRan(chunks, p.expected, p.imagesBefore);
}

TEST(Recorder, FlightRecorderSnapshotHoldsTheHistoryUpToTheRequest) {
  const uint64_t kCycles = 5000;
  const uint64_t kAt = 2345;  // the snapshot is asked for before this cycle
  const uint64_t kLimit = 40'000;
  Plant p = plant(kCycles);
  ASSERT_TRUE(p.stimulus);
  const TempTrace path("ring_snapshot");
  const TempTrace snapshot("ring_snapshot_2345");
  Runtime rt(p.program);
  recorder::RecorderOptions options = recordingTo(path, 100);
  options.ringBytes = kLimit;
  auto rec = startRecording(rt, options);
  ASSERT_TRUE(rec);
  runPlant(p, rt, *rec, kAt);
  // From the scan thread, between cycles, as `scanback run` does on SIGUSR1.
  std::future<recorder::SnapshotResult> requested = rec->requestSnapshot(snapshot.string());
  runPlant(p, rt, *rec, kAt + 1);  // the next cycle start hands the history over
  ASSERT_EQ(requested.wait_for(std::chrono::seconds(20)), std::future_status::ready)
      << "the snapshot is written while recording goes on";
  const recorder::SnapshotResult r = requested.get();
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.path, snapshot.string());
  EXPECT_GE(r.endCycle, kAt) << "every cycle that ran before the request";
  EXPECT_LE(r.endCycle, kAt + 1);
  EXPECT_EQ(r.bytes, fs::file_size(snapshot));
  EXPECT_FALSE(fs::exists(snapshot.string() + ".partial"));

  auto reader = openTrace(snapshot);
  ASSERT_TRUE(reader);
  EXPECT_TRUE(reader->complete());
  EXPECT_TRUE(reader->usedIndex());
  EXPECT_TRUE(reader->warnings().empty());
  const trace::HeaderData snapshotHeader = reader->header();
  std::vector<trace::BlockInfo> blocks;
  const auto chunks = readChunks(snapshot, &blocks);
  ASSERT_FALSE(chunks.empty());
  EXPECT_GT(chunks.front().firstCycle, 0u) << "older history was forgotten";
  EXPECT_EQ(r.firstCycle, chunks.front().firstCycle);
  expectContiguous(chunks, chunks.front().firstCycle, r.endCycle);
  expectChunksAsRan(chunks, p.expected, p.imagesBefore);
  // The kept chunks and the one being filled (cycles 2300.. here: a chunk of its own).
  const ChunkBlockSizes sizes = chunkBlockSizes(blocks);
  EXPECT_LE(sizes.total, kLimit + sizes.largest);
  EXPECT_EQ(chunks.back().firstCycle, kAt / 100 * 100);

  // Recording went on: the final trace is as complete and true as without the snapshot.
  runPlant(p, rt, *rec, kCycles);
  ASSERT_TRUE(finishRecording(*rec));
  EXPECT_EQ(rec->stats().cyclesDropped, 0u);
  EXPECT_EQ(rec->stats().divergences, 0u) << rec->firstDivergence();
  const auto finalChunks = readChunks(path);
  ASSERT_FALSE(finalChunks.empty());
  expectContiguous(finalChunks, finalChunks.front().firstCycle, kCycles);
  expectChunksAsRan(finalChunks, p.expected, p.imagesBefore);
  auto finalReader = openTrace(path);
  ASSERT_TRUE(finalReader);
  EXPECT_EQ(snapshotHeader.programHash, finalReader->header().programHash);
  EXPECT_EQ(snapshotHeader.startWallTimeNs, finalReader->header().startWallTimeNs);
  EXPECT_EQ(snapshotHeader.options.ringBytes, kLimit);
  EXPECT_EQ(snapshotHeader.sources.size(), finalReader->header().sources.size());
}

// Any thread may ask; the snapshot holds every cycle that ended before it asked.
TEST(Recorder, FlightRecorderSnapshotFromAnotherThread) {
  const uint64_t kMaxCycles = 12000;
  Plant p = plant(kMaxCycles);
  ASSERT_TRUE(p.stimulus);
  const TempTrace path("ring_thread");
  const TempTrace snapshot("ring_thread_snapshot");
  Runtime rt(p.program);
  recorder::RecorderOptions options = recordingTo(path, 100);
  options.ringBytes = 40'000;
  auto rec = startRecording(rt, options);
  ASSERT_TRUE(rec);
  std::atomic<uint64_t> ran{0};
  std::atomic<bool> asked{false};
  std::future<recorder::SnapshotResult> requested;
  uint64_t ranBefore = 0;
  std::thread other([&] {
    for (uint64_t seen = ran.load(std::memory_order_acquire); seen < 1000; seen = ran.load(std::memory_order_acquire))
      ran.wait(seen, std::memory_order_acquire);
    ranBefore = ran.load(std::memory_order_acquire);
    requested = rec->requestSnapshot(snapshot.string());
    asked.store(true, std::memory_order_release);
    asked.notify_all();
  });
  while (rt.cycle() < kMaxCycles) {
    if (asked.load(std::memory_order_acquire) &&
        requested.wait_for(std::chrono::seconds(0)) == std::future_status::ready)
      break;
    // The request comes before the last cycle starts, whose start hands it to the writer.
    if (rt.cycle() == kMaxCycles - 1) asked.wait(false, std::memory_order_acquire);
    runPlant(p, rt, *rec, rt.cycle() + 1);
    ran.store(rt.cycle(), std::memory_order_release);
    ran.notify_all();
  }
  other.join();
  // The writer writes the snapshot when it reaches the request; on a loaded machine it may be far
  // behind the task.
  ASSERT_EQ(requested.wait_for(std::chrono::seconds(30)), std::future_status::ready)
      << "not written after " << rt.cycle() << " cycles";
  const uint64_t ranAtSnapshot = rt.cycle();
  const recorder::SnapshotResult r = requested.get();
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_GE(r.endCycle, ranBefore);
  EXPECT_LE(r.endCycle, ranAtSnapshot);
  const auto chunks = readChunks(snapshot);
  ASSERT_FALSE(chunks.empty());
  expectContiguous(chunks, r.firstCycle, r.endCycle);
  expectChunksAsRan(chunks, p.expected, p.imagesBefore);
  ASSERT_TRUE(finishRecording(*rec));
}

// A request still waiting for its mark when the recording finishes is served then, with everything.
TEST(Recorder, FlightRecorderSnapshotAskedAtTheEndHoldsEveryCycle) {
  Plant p = plant(250);
  ASSERT_TRUE(p.stimulus);
  const TempTrace path("ring_end");
  const TempTrace snapshot("ring_end_snapshot");
  Runtime rt(p.program);
  recorder::RecorderOptions options = recordingTo(path, 100);
  options.ringBytes = 1u << 20;
  auto rec = startRecording(rt, options);
  ASSERT_TRUE(rec);
  runPlant(p, rt, *rec, 250);
  auto requested = rec->requestSnapshot(snapshot.string());
  ASSERT_TRUE(finishRecording(*rec));
  ASSERT_EQ(requested.wait_for(std::chrono::seconds(0)), std::future_status::ready);
  const recorder::SnapshotResult r = requested.get();
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.firstCycle, 0u);
  EXPECT_EQ(r.endCycle, 250u);
  const auto chunks = readChunks(snapshot);
  expectContiguous(chunks, 0, 250);
  expectChunksAsRan(chunks, p.expected, p.imagesBefore);
  // The final trace holds the same.
  EXPECT_EQ(readChunks(path), chunks);
}

TEST(Recorder, SnapshotRequestsThatCannotBeServedSaySo) {
  auto program = compilePlant();
  ASSERT_TRUE(program);
  {
    // Not a flight recorder: refused at once.
    const TempTrace path("snap_full");
    Runtime rt(program);
    auto rec = startRecording(rt, recordingTo(path));
    ASSERT_TRUE(rec);
    auto requested = rec->requestSnapshot("/tmp/never-written.trace");
    ASSERT_EQ(requested.wait_for(std::chrono::seconds(0)), std::future_status::ready);
    const recorder::SnapshotResult r = requested.get();
    EXPECT_FALSE(r.ok);
    EXPECT_NE(r.error.find("no flight recorder (--ring)"), std::string::npos) << r.error;
    EXPECT_NE(r.error.find(path.string() + ".partial"), std::string::npos) << r.error;
    ASSERT_TRUE(finishRecording(*rec));
  }
  const TempTrace path("snap_refused");
  Runtime rt(program);
  recorder::RecorderOptions options = recordingTo(path, 50);
  options.ringBytes = 1u << 20;
  auto rec = startRecording(rt, options);
  ASSERT_TRUE(rec);
  for (int c = 0; c < 120; ++c) ASSERT_EQ(rt.runCycle(), RunStatus::CycleDone);
  auto ownPath = rec->requestSnapshot(path.string());
  auto noDirectory = rec->requestSnapshot("/nonexistent-dir/snap.trace");
  for (int c = 0; c < 120; ++c) ASSERT_EQ(rt.runCycle(), RunStatus::CycleDone);
  ASSERT_EQ(ownPath.wait_for(std::chrono::seconds(20)), std::future_status::ready);
  ASSERT_EQ(noDirectory.wait_for(std::chrono::seconds(20)), std::future_status::ready);
  recorder::SnapshotResult r = ownPath.get();
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("recording's own trace"), std::string::npos) << r.error;
  r = noDirectory.get();
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("cannot write a snapshot to /nonexistent-dir/snap.trace: cannot create its .partial file"),
            std::string::npos)
      << r.error;
  // The recording is unharmed.
  ASSERT_TRUE(finishRecording(*rec));
  auto late = rec->requestSnapshot("/tmp/too-late.trace");
  ASSERT_EQ(late.wait_for(std::chrono::seconds(0)), std::future_status::ready);
  r = late.get();
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("has finished"), std::string::npos) << r.error;
  EXPECT_FALSE(fs::exists("/tmp/too-late.trace"));
  const auto chunks = readChunks(path);
  expectContiguous(chunks, 0, 240);
}

// A fault still ends the flight recorder's trace, written to the recording's path at finish().
TEST(Recorder, FlightRecorderFaultIsWrittenAfterTheKeptHistory) {
  auto program = mustCompile(kFaultsInCycle41);
  ASSERT_TRUE(program);
  const TempTrace path("ring_fault");
  Runtime rt(program);
  recorder::RecorderOptions options = recordingTo(path, 10);
  options.ringBytes = 1;  // keeps only the newest chunk
  auto rec = startRecording(rt, options);
  ASSERT_TRUE(rec);
  ASSERT_EQ(runCycles(rt, 100), RunStatus::Faulted);
  ASSERT_TRUE(finishRecording(*rec));
  std::vector<trace::BlockInfo> blocks;
  const auto chunks = readChunks(path, &blocks);
  ASSERT_EQ(chunks.size(), 1u);
  EXPECT_EQ(chunks[0].firstCycle, 40u);
  EXPECT_EQ(chunks[0].cycleCount(), 2u);  // cycle 41 (n = 42) faulted
  ASSERT_EQ(blocks.size(), 2u);
  EXPECT_EQ(blocks.back().kind, trace::BlockKind::Fault);
}

// Cycles dropped while the writer is behind leave gaps; those inside the kept history stay in it,
// older ones go with the chunks around them.
TEST(Recorder, FlightRecorderKeepsTheGapsInsideItsHistory) {
  auto program = compilePlant();
  ASSERT_TRUE(program);
  auto record = [&](const std::string& name, uint64_t ringBytes, std::vector<trace::BlockInfo>& blocks,
                    std::vector<trace::GapData>& gaps, recorder::RecorderStats& stats) {
    const TempTrace path(name);
    Runtime rt(program);
    recorder::RecorderOptions options = recordingTo(path, 50);
    options.queueBytes = 64 * 1024;
    options.ringBytes = ringBytes;
    auto rec = startRecording(rt, options);
    ASSERT_TRUE(rec);
    // Phases in which the writer falls far behind (the queue holds a few thousand of the plant's
    // cycles), each followed by one in which it catches up: several gaps, spread over the run.
    for (int phase = 0; phase < 6; ++phase) {
      rec->setWriterDelayForTesting(std::chrono::milliseconds(50));
      for (int c = 0; c < 8000; ++c) ASSERT_EQ(rt.runCycle(), RunStatus::CycleDone);
      rec->setWriterDelayForTesting(std::chrono::microseconds(0));
      ASSERT_TRUE(rec->waitForWriter(0, std::chrono::seconds(30)));
      for (int c = 0; c < 100; ++c) ASSERT_EQ(rt.runCycle(), RunStatus::CycleDone);
    }
    ASSERT_TRUE(finishRecording(*rec));
    stats = rec->stats();
    readChunks(path, &blocks);
    auto reader = openTrace(path);
    ASSERT_TRUE(reader);
    for (const trace::BlockInfo& b : blocks) {
      if (b.kind != trace::BlockKind::Gap) continue;
      trace::GapData g;
      std::string error;
      ASSERT_TRUE(reader->readGap(b, g, error)) << error;
      gaps.push_back(g);
    }
  };
  {
    // Room for everything: every gap is in the trace.
    std::vector<trace::BlockInfo> blocks;
    std::vector<trace::GapData> gaps;
    recorder::RecorderStats stats;
    record("ring_gaps_all", 64u << 20, blocks, gaps, stats);
    EXPECT_GE(stats.gaps, 3u);  // one per phase, but a slow build may fill the queue less often
    EXPECT_EQ(gaps.size(), stats.gaps);
    uint64_t dropped = 0;
    for (const trace::GapData& g : gaps) dropped += g.cycleCount;
    EXPECT_EQ(dropped, stats.cyclesDropped);
  }
  {
    // Room for a few chunks: no gap before the oldest kept chunk.
    std::vector<trace::BlockInfo> blocks;
    std::vector<trace::GapData> gaps;
    recorder::RecorderStats stats;
    record("ring_gaps_some", 8'000, blocks, gaps, stats);
    ASSERT_FALSE(blocks.empty());
    EXPECT_EQ(blocks.front().kind, trace::BlockKind::Chunk);
    EXPECT_LE(chunkBlockSizes(blocks).total, 8'000u);
    // The gaps kept are those inside the history held (how many fell before it depends on how
    // often a loaded machine let the queue fill).
    EXPECT_LE(gaps.size(), stats.gaps);
    for (const trace::GapData& g : gaps) EXPECT_GT(g.firstCycle, blocks.front().firstCycle);
  }
}

TEST(Recorder, WithoutStatementsNoPathsAreRecorded) {
  auto program = compilePlant();
  ASSERT_TRUE(program);
  const TempTrace path("nostmt");
  Runtime rt(program);
  recorder::RecorderOptions options = recordingTo(path);
  options.statements = false;
  auto rec = startRecording(rt, options);
  ASSERT_TRUE(rec);
  for (int c = 0; c < 50; ++c) ASSERT_EQ(rt.runCycle(), RunStatus::CycleDone);
  ASSERT_TRUE(finishRecording(*rec));
  const auto chunks = readChunks(path);
  ASSERT_EQ(chunks.size(), 1u);
  EXPECT_TRUE(chunks[0].pathTable.empty());
  EXPECT_EQ(chunks[0].stepCounts.size(), 50u);
}

}  // namespace

namespace {
// Pauses the VM at step `at` of the next cycle it runs (a debugger's stop).
class PauseAtStep : public VmObserver {
 public:
  explicit PauseAtStep(uint64_t at) : at_(at) {}
  bool onStatement(uint32_t, uint64_t step) override { return step == at_; }

 private:
  uint64_t at_;
};
}  // namespace

TEST(Recorder, SyncWritesEveryEndedCycleAndTheImageBeforeTheNext) {
  auto program = compilePlant();
  ASSERT_TRUE(program);
  const TempTrace path("sync");
  Runtime rt(program);
  std::optional<Stimulus> stimulus = plantStimulus(*program);
  recorder::RecorderOptions options =
      recordingTo(path, 1000);  // far more than run: one chunk, which each sync() continues
  options.flushEveryNs = 0;     // (no block on time: each is a sync's)
  auto rec = startRecording(rt, options);
  ASSERT_TRUE(rec);
  uint64_t ran = 0;
  for (const uint64_t upTo : {37u, 38u, 90u}) {
    for (; ran < upTo; ++ran) {
      if (stimulus) stimulus->apply(ran, rt);
      ASSERT_EQ(rt.runCycle(), RunStatus::CycleDone);
    }
    const recorder::SyncResult synced = rec->sync();
    ASSERT_TRUE(synced.ok) << synced.error;
    EXPECT_EQ(synced.endCycle, upTo);
    // The image before the next cycle, as the writer re-executed it: the live one.
    ASSERT_EQ(synced.image.size(), rt.vm().imageSize());
    EXPECT_EQ(0, std::memcmp(synced.image.data(), rt.vm().image(), synced.image.size()));
    // Already in the file, without waiting for anything else.
    std::vector<trace::BlockInfo> blocks;
    const auto chunks = readChunks(path.string() + ".partial", &blocks);
    ASSERT_FALSE(chunks.empty());
    EXPECT_EQ(chunks.front().firstCycle, 0u);
    EXPECT_EQ(chunks.back().firstCycle + chunks.back().cycleCount(), upTo);
  }

  // Inside a cycle (a paused task): the cycles before it are written, and its scan inputs are at hand.
  rt.queueWrite(ExternalWrite{program->input.offset + program->input.size, -1, {7}});
  if (stimulus) stimulus->apply(ran, rt);
  PauseAtStep pause(3);
  rt.vm().setObserver(&pause);
  rt.startCycle();
  ASSERT_EQ(rt.run(), RunStatus::Paused);
  const recorder::SyncResult inCycle = rec->sync();
  ASSERT_TRUE(inCycle.ok) << inCycle.error;
  EXPECT_EQ(inCycle.endCycle, ran);
  const recorder::CycleInputs inputs = rec->currentInputs();
  ASSERT_EQ(inputs.writes.size(), 1u);
  EXPECT_EQ(inputs.writes[0].offset, program->input.offset + program->input.size);
  EXPECT_EQ(inputs.writes[0].bytes, std::vector<uint8_t>{7});
  rt.vm().setObserver(nullptr);
  ASSERT_EQ(rt.run(), RunStatus::CycleDone);
  ++ran;
  for (; ran < 150; ++ran) {
    if (stimulus) stimulus->apply(ran, rt);
    ASSERT_EQ(rt.runCycle(), RunStatus::CycleDone);
  }
  ASSERT_TRUE(finishRecording(*rec));
  EXPECT_EQ(rec->stats().divergences, 0u) << rec->firstDivergence();
  EXPECT_EQ(rec->stats().cyclesDropped, 0u);
  // Every cycle once, in one chunk: its first block and a continuation for each sync after the first
  // (no keyframe each time).
  std::vector<trace::BlockInfo> blocks;
  const auto chunks = readChunks(path, &blocks);
  ASSERT_EQ(chunks.size(), 1u);
  EXPECT_EQ(chunks[0].firstCycle, 0u);
  EXPECT_EQ(chunks[0].cycleCount(), 150u);
  ASSERT_EQ(blocks.size(), 1u);
  EXPECT_EQ(blocks[0].continuations.size(), 3u);  // 0..36 | 37 | 38..89 | 90..149 (the rest, at the end)
}

TEST(Recorder, SyncIsRefusedForAFlightRecorderAndAfterTheEnd) {
  auto program = compilePlant();
  ASSERT_TRUE(program);
  const TempTrace path("sync-refused");
  Runtime rt(program);
  recorder::RecorderOptions options = recordingTo(path);
  options.ringBytes = 1 << 20;
  auto ring = startRecording(rt, options);
  ASSERT_TRUE(ring);
  ASSERT_EQ(rt.runCycle(), RunStatus::CycleDone);
  const recorder::SyncResult refused = ring->sync();
  EXPECT_FALSE(refused.ok);
  EXPECT_NE(refused.error.find("flight recorder"), std::string::npos) << refused.error;
  ASSERT_TRUE(finishRecording(*ring));
  const recorder::SyncResult ended = ring->sync();
  EXPECT_FALSE(ended.ok);
}
