// The recorder: what it writes equals what ran, it never blocks the scan thread, and it survives
// faults, slow disks and flight-recorder limits.
#include "recorder/recorder.h"

#include <gtest/gtest.h>
#include <xxhash.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "traces/trace_reader.h"
#include "vm/compiler/compiler.h"
#include "vm/runtime/stimulus.h"
#include "vm/runtime/values.h"

namespace fs = std::filesystem;
using namespace scanback;

namespace {

std::shared_ptr<const Program> compileText(const std::string& text) {
  SourceSet sources;
  sources.add("test.st", text);
  Diagnostics d;
  auto p = compileProject(sources, d);
  EXPECT_TRUE(p) << d.format(sources);
  return p;
}

std::shared_ptr<const Program> compilePlant() {
  const fs::path dir = fs::path(SCANBACK_SOURCE_DIR) / "examples" / "plant";
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".st") files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  Diagnostics d;
  SourceSet sources = loadSourceFiles(files, d);
  auto p = compileProject(sources, d);
  EXPECT_TRUE(p) << d.format(sources);
  return p;
}

fs::path tempTrace(const std::string& name) {
  fs::path p = fs::temp_directory_path() / ("scanback_rec_" + name + "_" + std::to_string(::getpid()) + ".trace");
  fs::remove(p);
  fs::remove(p.string() + ".partial");
  return p;
}

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
  std::string error;
  auto reader = trace::TraceReader::open(path.string(), error);
  EXPECT_TRUE(reader) << error;
  std::vector<trace::ChunkData> chunks;
  if (!reader) return chunks;
  for (const trace::BlockInfo& b : reader->blocks()) {
    if (blocks) blocks->push_back(b);
    if (b.kind != trace::BlockKind::Chunk) continue;
    trace::ChunkData c;
    EXPECT_TRUE(reader->readChunk(b, c, error)) << error;
    chunks.push_back(std::move(c));
  }
  return chunks;
}

TEST(Recorder, RecordsEveryCycleExactlyAsItRan) {
  auto program = compilePlant();
  ASSERT_TRUE(program);
  const fs::path csv = fs::path(SCANBACK_SOURCE_DIR) / "examples" / "plant" / "stimulus.csv";
  std::string error;
  auto stimulus = Stimulus::load(csv.string(), *program, error);
  ASSERT_TRUE(stimulus) << error;
  auto stimulus2 = *stimulus;
  const uint64_t kCycles = 700;
  const std::vector<Observed> expected = referenceRun(program, kCycles, &stimulus2);

  const fs::path path = tempTrace("roundtrip");
  Runtime rt(program);
  recorder::RecorderOptions options;
  options.path = path.string();
  options.keyframeEvery = 100;
  auto rec = recorder::Recorder::start(rt, options, error);
  ASSERT_TRUE(rec) << error;
  std::vector<std::vector<uint8_t>> imagesBefore;  // the image at each cycle boundary
  for (uint64_t c = 0; c < kCycles; ++c) {
    stimulus->apply(c, rt);
    imagesBefore.emplace_back(rt.vm().image(), rt.vm().image() + rt.vm().imageSize());
    ASSERT_EQ(rt.runCycle(), RunStatus::CycleDone);
  }
  ASSERT_TRUE(rec->finish(error)) << error;
  EXPECT_EQ(rec->stats().cyclesRecorded, kCycles);
  EXPECT_EQ(rec->stats().cyclesDropped, 0u);
  EXPECT_EQ(rec->stats().divergences, 0u) << rec->firstDivergence();
  EXPECT_TRUE(fs::exists(path));
  EXPECT_FALSE(fs::exists(path.string() + ".partial"));

  const std::vector<trace::ChunkData> chunks = readChunks(path);
  ASSERT_EQ(chunks.size(), 7u);
  uint64_t cycle = 0;
  for (const trace::ChunkData& chunk : chunks) {
    ASSERT_EQ(chunk.firstCycle, cycle);
    EXPECT_EQ(chunk.keyframe, imagesBefore[cycle]) << "keyframe of the chunk at cycle " << cycle;
    for (uint32_t i = 0; i < chunk.cycleCount(); ++i, ++cycle) {
      const Observed& e = expected[cycle];
      EXPECT_EQ(chunk.tasks[i], e.task) << "cycle " << cycle;
      EXPECT_EQ(chunk.startTimes[i], e.startNs) << "cycle " << cycle;
      EXPECT_EQ(chunk.stepCounts[i], e.steps) << "cycle " << cycle;
      EXPECT_EQ(chunk.imageHashes[i], e.hash) << "cycle " << cycle;
      ASSERT_LT(chunk.paths[i], chunk.pathTable.size());
      EXPECT_EQ(chunk.pathTable[chunk.paths[i]], e.path) << "cycle " << cycle;
    }
  }
  EXPECT_EQ(cycle, kCycles);
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
  fs::remove(path);
}

// A change to the live image that bypasses the scan inputs breaks the determinism contract: the
// writer's re-execution can no longer follow, the recorder says so, and the next keyframe is the
// live image, so the trace stays true to what ran.
TEST(Recorder, StateChangedBehindTheRecordersBackIsADivergence) {
  auto program = compileText(R"(
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
  const fs::path path = tempTrace("divergence");
  Runtime rt(program);
  recorder::RecorderOptions options;
  options.path = path.string();
  options.keyframeEvery = 10;
  std::string error;
  auto rec = recorder::Recorder::start(rt, options, error);
  ASSERT_TRUE(rec) << error;
  auto modeVar = findVariable(*program, "Main.mode", error);
  ASSERT_TRUE(modeVar) << error;
  const uint32_t mode = modeVar->offset;
  for (uint64_t c = 0; c < 30; ++c) {
    if (c == 14) rt.vm().image()[mode] = 7;  // not through queueWrite: no scan input records it
    ASSERT_EQ(rt.runCycle(), RunStatus::CycleDone);
  }
  ASSERT_TRUE(rec->finish(error)) << error;
  EXPECT_GE(rec->stats().divergences, 1u);
  EXPECT_NE(rec->firstDivergence().find("cycle 20"), std::string::npos) << rec->firstDivergence();
  const std::vector<trace::ChunkData> chunks = readChunks(path);
  ASSERT_EQ(chunks.size(), 3u);
  int16_t keyframeMode = 0;
  std::memcpy(&keyframeMode, chunks[2].keyframe.data() + mode, 2);
  EXPECT_EQ(keyframeMode, 7) << "the keyframe after the divergence is the live image";
  fs::remove(path);
}

TEST(Recorder, ExternalWritesAndInputChangesLandInTheirCycle) {
  auto program = compileText(R"(
PROGRAM Main
VAR
  sensor AT %IW1 : WORD;
  setpoint : INT;
  seen : INT;
END_VAR
seen := WORD_TO_INT(sensor) + setpoint;
END_PROGRAM
)");
  ASSERT_TRUE(program);
  const fs::path path = tempTrace("writes");
  Runtime rt(program);
  recorder::RecorderOptions options;
  options.path = path.string();
  std::string error;
  auto rec = recorder::Recorder::start(rt, options, error);
  ASSERT_TRUE(rec) << error;
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
  ASSERT_TRUE(rec->finish(error)) << error;
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
  fs::remove(path);
}

TEST(Recorder, FaultEndsTheTraceWithTheFaultingCycle) {
  auto program = compileText(R"(
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
)");
  ASSERT_TRUE(program);
  const fs::path path = tempTrace("fault");
  Runtime rt(program);
  recorder::RecorderOptions options;
  options.path = path.string();
  options.keyframeEvery = 10;
  std::string error;
  auto rec = recorder::Recorder::start(rt, options, error);
  ASSERT_TRUE(rec) << error;
  RunStatus st = RunStatus::CycleDone;
  for (int c = 0; c < 100 && st != RunStatus::Faulted; ++c) st = rt.runCycle();
  ASSERT_EQ(st, RunStatus::Faulted);
  ASSERT_TRUE(rec->finish(error)) << error;
  std::vector<trace::BlockInfo> blocks;
  const auto chunks = readChunks(path, &blocks);
  ASSERT_FALSE(blocks.empty());
  EXPECT_EQ(blocks.back().kind, trace::BlockKind::Fault);
  ASSERT_FALSE(chunks.empty());
  const trace::ChunkData& last = chunks.back();
  EXPECT_EQ(last.firstCycle + last.cycleCount() - 1, 41u);  // cycle 41 (n = 42) faulted
  auto reader = trace::TraceReader::open(path.string(), error);
  ASSERT_TRUE(reader);
  trace::FaultData f;
  ASSERT_TRUE(reader->readFault(blocks.back(), f, error)) << error;
  EXPECT_EQ(f.cycle, 41u);
  EXPECT_EQ(f.code, static_cast<uint32_t>(FaultCode::DivisionByZero));
  EXPECT_NE(f.message.find("division by zero"), std::string::npos) << f.message;
  EXPECT_NE(f.message.find("test.st:12:1"), std::string::npos) << f.message;
  fs::remove(path);
}

TEST(Recorder, SlowWriterDropsCyclesWithGapsAndNeverBlocksTheScan) {
  auto program = compilePlant();
  ASSERT_TRUE(program);
  const fs::path path = tempTrace("slow");
  Runtime rt(program);
  recorder::RecorderOptions options;
  options.path = path.string();
  options.keyframeEvery = 50;
  options.queueBytes = 64 * 1024;  // room for a few dozen cycles
  std::string error;
  auto rec = recorder::Recorder::start(rt, options, error);
  ASSERT_TRUE(rec) << error;
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
  ASSERT_TRUE(rec->finish(error)) << error;
  const recorder::RecorderStats s = rec->stats();
  EXPECT_EQ(s.cyclesRecorded + s.cyclesDropped, kCycles);
  EXPECT_GT(s.gaps, 0u);

  std::vector<trace::BlockInfo> blocks;
  const auto chunks = readChunks(path, &blocks);
  size_t gapBlocks = 0;
  uint64_t droppedInGaps = 0;
  std::string why;
  auto reader = trace::TraceReader::open(path.string(), why);
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
  fs::remove(path);
}

TEST(Recorder, PartialTraceIsReadableWhileRecording) {
  auto program = compilePlant();
  ASSERT_TRUE(program);
  const fs::path path = tempTrace("partial");
  Runtime rt(program);
  recorder::RecorderOptions options;
  options.path = path.string();
  options.keyframeEvery = 20;
  std::string error;
  auto rec = recorder::Recorder::start(rt, options, error);
  ASSERT_TRUE(rec) << error;
  for (int c = 0; c < 205; ++c) ASSERT_EQ(rt.runCycle(), RunStatus::CycleDone);
  // The writer is asynchronous; wait until it wrote the ten complete chunks.
  for (int i = 0; i < 2000 && rec->stats().chunks < 10; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  const auto chunks = readChunks(path.string() + ".partial");
  EXPECT_GE(chunks.size(), 10u);
  ASSERT_TRUE(rec->finish(error)) << error;
  EXPECT_EQ(readChunks(path).size(), 11u);
  fs::remove(path);
}

TEST(Recorder, FlightRecorderKeepsOnlyTheLatestHistory) {
  auto program = compilePlant();
  ASSERT_TRUE(program);
  const fs::path path = tempTrace("ring");
  Runtime rt(program);
  recorder::RecorderOptions options;
  options.path = path.string();
  options.keyframeEvery = 100;
  options.ringDurationNs = 2'000'000'000;  // 2 s of virtual time
  std::string error;
  auto rec = recorder::Recorder::start(rt, options, error);
  ASSERT_TRUE(rec) << error;
  for (int c = 0; c < 3000; ++c) ASSERT_EQ(rt.runCycle(), RunStatus::CycleDone);
  ASSERT_TRUE(rec->finish(error)) << error;
  const auto chunks = readChunks(path);
  ASSERT_FALSE(chunks.empty());
  EXPECT_GT(chunks.front().firstCycle, 0u);
  EXPECT_EQ(chunks.back().firstCycle + chunks.back().cycleCount(), 3000u);
  const int64_t span = chunks.back().startTimes.back() - chunks.front().startTimes.front();
  const int64_t oneChunk = chunks.back().startTimes.back() - chunks.back().startTimes.front();
  EXPECT_LE(span, int64_t{2'000'000'000} + oneChunk + 100'000'000);  // the limit plus at most one chunk
  EXPECT_GE(span, int64_t{2'000'000'000} - oneChunk);
  fs::remove(path);
}

TEST(Recorder, WithoutStatementsNoPathsAreRecorded) {
  auto program = compilePlant();
  ASSERT_TRUE(program);
  const fs::path path = tempTrace("nostmt");
  Runtime rt(program);
  recorder::RecorderOptions options;
  options.path = path.string();
  options.statements = false;
  std::string error;
  auto rec = recorder::Recorder::start(rt, options, error);
  ASSERT_TRUE(rec) << error;
  for (int c = 0; c < 50; ++c) ASSERT_EQ(rt.runCycle(), RunStatus::CycleDone);
  ASSERT_TRUE(rec->finish(error)) << error;
  const auto chunks = readChunks(path);
  ASSERT_EQ(chunks.size(), 1u);
  EXPECT_TRUE(chunks[0].pathTable.empty());
  EXPECT_EQ(chunks[0].stepCounts.size(), 50u);
  fs::remove(path);
}

}  // namespace
