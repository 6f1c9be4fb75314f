// The write index (traces/trace.capnp: Chunk.writeIndex): what the recorder notes per chunk, and
// that every search that uses it finds exactly what the same search finds without it, while
// skipping the chunks it rules out.
#include <gtest/gtest.h>

#include <cstring>

#include "replayer/replayer.h"
#include "tests/support/trace_support.h"
#include "traces/trace_codec.h"
#include "traces/trace_reader.h"
#include "traces/trace_writer.h"
#include "vm/runtime/values.h"

using namespace scanback;
using replay::Position;

namespace {

// `rare` changes in two cycles only (n = 25 and n = 171); `n` every cycle; `level` stays put
// except for a step in one cycle and back in the next. The spacers keep them further apart than
// the recorder's merge distance.
constexpr const char* kRareWrites = R"(
PROGRAM Main
VAR
  n : INT;
  spacer1 : ARRAY[0..3] OF LINT;
  rare : INT;
  spacer2 : ARRAY[0..3] OF LINT;
  level : BOOL;
  spacer3 : ARRAY[0..3] OF LINT;
  untouched : DINT := 7;
END_VAR
n := n + 1;
IF n = 25 OR n = 171 THEN
  rare := rare + 10;
END_IF
level := n = 90;
END_PROGRAM
)";

class WriteIndex : public ::testing::Test {
 protected:
  void SetUp() override {
    program_ = test::mustCompile(kRareWrites);
    ASSERT_TRUE(program_);
    test::recordCycles(program_, path_, kCycles, 10);
    std::string error;
    indexed_ = replay::Replayer::open(path_.string(), {}, error);
    ASSERT_TRUE(indexed_) << error;
    replay::ReplayOptions without;
    without.useWriteIndex = false;
    plain_ = replay::Replayer::open(path_.string(), without, error);
    ASSERT_TRUE(plain_) << error;
  }
  replay::Watch watchOf(const char* name) {
    std::string error;
    const std::optional<VariableLocation> v = findVariable(*program_, name, error);
    EXPECT_TRUE(v) << error;
    return v ? replay::Watch{v->offset, std::max<uint32_t>(v->type->size, 1), v->bit} : replay::Watch{};
  }

  static constexpr uint64_t kCycles = 200;
  std::shared_ptr<const Program> program_;
  const test::TempTrace path_{::testing::UnitTest::GetInstance()->current_test_info()->name()};
  std::unique_ptr<replay::Replayer> indexed_, plain_;
};

TEST_F(WriteIndex, TheRecorderNotesTheBytesThatChangedInEachChunk) {
  std::string error;
  auto reader = trace::TraceReader::open(path_.string(), error);
  ASSERT_TRUE(reader) << error;
  const replay::Watch n = watchOf("Main.n"), rare = watchOf("Main.rare"), untouched = watchOf("Main.untouched");
  size_t chunks = 0;
  for (const trace::BlockInfo& b : reader->blocks()) {
    if (b.kind != trace::BlockKind::Chunk) continue;
    ++chunks;
    // The index block carries a copy; the chunk itself holds the same.
    ASSERT_TRUE(b.writeIndex) << "chunk at cycle " << b.firstCycle;
    trace::ChunkData chunk;
    ASSERT_TRUE(reader->readChunk(b, chunk, error)) << error;
    ASSERT_TRUE(chunk.writeIndex);
    EXPECT_EQ(*chunk.writeIndex, *b.writeIndex);
    const trace::WriteIndex& index = *b.writeIndex;
    EXPECT_TRUE(trace::writeIndexTouches(index, n.offset, n.size));
    EXPECT_FALSE(trace::writeIndexTouches(index, untouched.offset, untouched.size));
    // n = 25 and 171 are cycles 24 and 170.
    const bool holdsRareWrite = (b.firstCycle <= 24 && 24 < b.firstCycle + b.cycleCount) ||
                                (b.firstCycle <= 170 && 170 < b.firstCycle + b.cycleCount);
    EXPECT_EQ(trace::writeIndexTouches(index, rare.offset, rare.size), holdsRareWrite)
        << "chunk at cycle " << b.firstCycle;
  }
  EXPECT_EQ(chunks, kCycles / 10);
}

TEST_F(WriteIndex, SearchesFindTheSameWithAndWithoutItAndSkipChunks) {
  std::string error;
  const replay::Watch rare = watchOf("Main.rare");
  const replay::Watch level = watchOf("Main.level");
  for (const replay::Watch& w : {rare, level}) {
    for (const Position at : {Position{199, 3}, Position{150, 0}, Position{30, 2}, Position{24, 1}}) {
      auto positions = [&](replay::Replayer& r) {
        std::vector<Position> out;
        for (const replay::Change& c : r.lastChanges(w, at, 5, error)) out.push_back(c.position);
        return out;
      };
      const std::vector<Position> expected = positions(*plain_);
      ASSERT_TRUE(error.empty()) << error;
      EXPECT_EQ(positions(*indexed_), expected) << "before " << at.cycle << ":" << at.step;
      ASSERT_TRUE(error.empty()) << error;
    }
    // Reverse and forward data breakpoints.
    for (replay::Replayer* r : {plain_.get(), indexed_.get()}) ASSERT_TRUE(r->seek({199, 2}, error)) << error;
    const auto back = plain_->reverseContinue({}, {w}, error);
    ASSERT_TRUE(back) << error;
    const auto backIndexed = indexed_->reverseContinue({}, {w}, error);
    ASSERT_TRUE(backIndexed) << error;
    EXPECT_EQ(backIndexed->position, back->position);
    EXPECT_EQ(backIndexed->reason, replay::StopReason::DataWrite);
    for (replay::Replayer* r : {plain_.get(), indexed_.get()}) ASSERT_TRUE(r->seek({31, 0}, error)) << error;
    const auto fwd = plain_->continueForward({}, {w}, error);
    ASSERT_TRUE(fwd) << error;
    const auto fwdIndexed = indexed_->continueForward({}, {w}, error);
    ASSERT_TRUE(fwdIndexed) << error;
    EXPECT_EQ(fwdIndexed->position, fwd->position);
  }
  EXPECT_GT(indexed_->chunksSkipped(), 10u);
  EXPECT_EQ(plain_->chunksSkipped(), 0u);
}

TEST_F(WriteIndex, ChangesFromAndCycleEndsMatchTheReplayedValues) {
  std::string error;
  const replay::Watch rare = watchOf("Main.rare");
  const replay::Watch n = watchOf("Main.n");
  for (replay::Replayer* r : {plain_.get(), indexed_.get()}) {
    std::vector<std::vector<uint8_t>> initial;
    std::vector<std::pair<size_t, Position>> changes;
    ASSERT_TRUE(r->changesFrom(
        {rare, n}, 20, Position{180, 0}, initial,
        [&](size_t watch, replay::Change&& c) {
          changes.push_back({watch, c.position});
          return true;
        },
        error))
        << error;
    ASSERT_EQ(initial.size(), 2u);
    int16_t n0;
    std::memcpy(&n0, initial[1].data(), 2);
    EXPECT_EQ(n0, 20);  // before cycle 20, 20 cycles have counted
    size_t rareChanges = 0, nChanges = 0;
    for (const auto& [watch, at] : changes) (watch == 0 ? rareChanges : nChanges)++;
    EXPECT_EQ(rareChanges, 2u);
    EXPECT_EQ(nChanges, 160u);

    // Cycle ends against a seek to each cycle's end.
    uint64_t seen = 0;
    ASSERT_TRUE(r->cycleEnds(
        {rare}, 5, 195,
        [&](uint64_t cycle, int64_t, const uint8_t* image) {
          std::string seekError;
          EXPECT_TRUE(r->seek({cycle, r->steps(cycle, seekError)->count()}, seekError)) << seekError;
          EXPECT_EQ(std::memcmp(image + rare.offset, r->vm().image() + rare.offset, rare.size), 0) << "cycle " << cycle;
          ++seen;
          return true;
        },
        error))
        << error;
    EXPECT_EQ(seen, 191u);
  }
}

TEST(WriteIndexFormat, RoundTripsAndIsCheckedWhenDecoded) {
  trace::ChunkData chunk;
  chunk.firstCycle = 3;
  chunk.keyframe.assign(64, 0);
  chunk.tasks = {0};
  chunk.startTimes = {0};
  chunk.stepCounts = {1};
  chunk.imageHashes = {0};
  const trace::ChunkLimits limits{64, 10};
  trace::ChunkData back;
  std::string error;
  // Without an index it stays absent (a trace recorded before the index existed).
  ASSERT_TRUE(trace::decodeChunk(trace::encodeChunk(chunk), 0, limits, back, error)) << error;
  EXPECT_FALSE(back.writeIndex);
  chunk.writeIndex = trace::WriteIndex{0, 4, 10, 2};
  ASSERT_TRUE(trace::decodeChunk(trace::encodeChunk(chunk), 0, limits, back, error)) << error;
  EXPECT_EQ(back.writeIndex, chunk.writeIndex);
  EXPECT_TRUE(trace::writeIndexTouches(*back.writeIndex, 11, 1));
  EXPECT_FALSE(trace::writeIndexTouches(*back.writeIndex, 4, 6));
  // Overlapping, unsorted or outside the image: refused with the range named.
  for (const trace::WriteIndex& bad : {trace::WriteIndex{8, 4, 10, 2}, trace::WriteIndex{60, 8},
                                       trace::WriteIndex{0, 0}, trace::WriteIndex{1, 2, 3}}) {
    chunk.writeIndex = bad;
    error.clear();
    EXPECT_FALSE(trace::decodeChunk(trace::encodeChunk(chunk), 0, limits, back, error));
    EXPECT_NE(error.find("write index"), std::string::npos) << error;
  }
}

// ---------------------------------------------------------------- within one cycle (issue 27)

// Values that cycle 136 (n = 137) changes and restores before it ends, so that they differ at no
// cycle boundary: a variable, a function block's output set and cleared by its body, an array
// element. `quiet` is never written. Ten cycles per chunk: only the chunk of cycles 130-139 holds
// the writes.
constexpr const char* kWithinCycles = R"(
FUNCTION_BLOCK Pulse
VAR_INPUT fire : BOOL; END_VAR
VAR_OUTPUT q : BOOL; END_VAR
IF fire THEN
  q := TRUE;
  q := FALSE;
END_IF
END_FUNCTION_BLOCK

PROGRAM Main
VAR
  n : INT;
  spacer1 : ARRAY[0..3] OF LINT;
  x : INT;
  spacer2 : ARRAY[0..3] OF LINT;
  pulse : Pulse;
  spacer3 : ARRAY[0..3] OF LINT;
  arr : ARRAY[0..9] OF INT;
  spacer4 : ARRAY[0..3] OF LINT;
  quiet : DINT := 7;
END_VAR
n := n + 1;
pulse(fire := n = 137);
IF n = 137 THEN
  x := 5;
  x := 0;
  arr[n MOD 10] := 9;
  arr[n MOD 10] := 0;
END_IF
END_PROGRAM
)";

// The same through a pointer: a store through a reference read from a variable may write anywhere,
// so the chunk that runs it is searched whatever it watches.
constexpr const char* kWithinCyclesThroughPointer = R"(
PROGRAM Main
VAR
  n : INT;
  p : POINTER TO DINT;
  spacer : ARRAY[0..3] OF LINT;
  target : DINT;
END_VAR
n := n + 1;
p := ADR(target);
IF n = 137 THEN
  p^ := 3;
  p^ := 0;
END_IF
END_PROGRAM
)";

// `copy` holds the chunks of `trace` with a write index that misses every write (as an index
// built from cycle boundaries alone misses these), under a header that says whether the indexes
// are complete.
void withBlindIndexes(const std::string& trace, const std::string& copy, bool complete) {
  std::string error;
  auto reader = trace::TraceReader::open(trace, error);
  ASSERT_TRUE(reader) << error;
  trace::HeaderData header = reader->header();
  header.writeIndexComplete = complete;
  auto writer = trace::TraceWriter::create(copy, header, error);
  ASSERT_TRUE(writer) << error;
  for (const trace::BlockInfo& b : reader->blocks()) {
    if (b.kind != trace::BlockKind::Chunk) continue;
    trace::ChunkData chunk;
    ASSERT_TRUE(reader->readChunk(b, chunk, error)) << error;
    chunk.writeIndex = trace::WriteIndex{};
    ASSERT_TRUE(writer->writeChunk(chunk)) << writer->lastError();
  }
  ASSERT_TRUE(writer->close()) << writer->lastError();
}

class WithinCycles : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    program_ = test::mustCompile(GetParam());
    ASSERT_TRUE(program_);
    test::recordCycles(program_, path_, kCycles, 10);
  }
  replay::Watch watchOf(const char* name) {
    std::string error;
    const std::optional<VariableLocation> v = findVariable(*program_, name, error);
    EXPECT_TRUE(v) << error;
    return v ? replay::Watch{v->offset, std::max<uint32_t>(v->type->size, 1), v->bit} : replay::Watch{};
  }
  std::unique_ptr<replay::Replayer> open(const std::string& path, bool useIndex = true) {
    replay::ReplayOptions options;
    options.useWriteIndex = useIndex;
    std::string error;
    auto r = replay::Replayer::open(path, options, error);
    EXPECT_TRUE(r) << error;
    return r;
  }
  static std::vector<Position> positions(const std::vector<replay::Change>& changes) {
    std::vector<Position> out;
    for (const replay::Change& c : changes) out.push_back(c.position);
    return out;
  }
  // The two changes of `w` in cycle 136: set, then restored.
  void expectSetAndRestored(const std::vector<replay::Change>& changes, const replay::Watch& w, const char* name) {
    ASSERT_EQ(changes.size(), 2u) << name;
    for (const replay::Change& c : changes) EXPECT_EQ(c.position.cycle, 136u) << name;
    EXPECT_LT(changes[1].position, changes[0].position) << name;  // newest first
    EXPECT_EQ(changes[0].after, std::vector<uint8_t>(w.size, 0)) << name;
    EXPECT_EQ(changes[1].before, std::vector<uint8_t>(w.size, 0)) << name;
    EXPECT_NE(changes[1].after, std::vector<uint8_t>(w.size, 0)) << name;
  }
  // Each chunk's index holds the writes exactly when the chunk holds cycle 136.
  void checkIndexes(const std::string& path);
  const char* watchedName() const { return GetParam() == kWithinCycles ? "Main.x" : "Main.target"; }

  static constexpr uint64_t kCycles = 200;
  std::shared_ptr<const Program> program_;
  const test::TempTrace path_{::testing::UnitTest::GetInstance()->current_test_info()->name()};
};

TEST_P(WithinCycles, TheIndexOfTheChunkThatRanTheWritesHoldsThem) {
  checkIndexes(path_.string());
  // Without statement paths, the writer's statement log says which statements ran.
  const test::TempTrace withoutPaths{"within_cycles_no_paths"};
  test::recordCycles(program_, withoutPaths, kCycles, 10, std::nullopt, false);
  checkIndexes(withoutPaths.string());
}

void WithinCycles::checkIndexes(const std::string& path) {
  std::string error;
  auto reader = trace::TraceReader::open(path, error);
  ASSERT_TRUE(reader) << error;
  EXPECT_TRUE(reader->header().writeIndexComplete);
  const replay::Watch w = watchOf(watchedName());
  size_t chunks = 0;
  for (const trace::BlockInfo& b : reader->blocks()) {
    if (b.kind != trace::BlockKind::Chunk) continue;
    ++chunks;
    ASSERT_TRUE(b.writeIndex);
    const bool holds = b.firstCycle <= 136 && 136 < b.firstCycle + b.cycleCount;
    EXPECT_EQ(trace::writeIndexTouches(*b.writeIndex, w.offset, w.size), holds) << "chunk at " << b.firstCycle;
    if (GetParam() == kWithinCycles) {
      for (const char* name : {"Main.pulse.q", "Main.arr[7]"}) {
        const replay::Watch other = watchOf(name);
        EXPECT_EQ(trace::writeIndexTouches(*b.writeIndex, other.offset, other.size), holds)
            << name << ", chunk at " << b.firstCycle;
      }
      const replay::Watch quiet = watchOf("Main.quiet");
      EXPECT_FALSE(trace::writeIndexTouches(*b.writeIndex, quiet.offset, quiet.size));
    }
  }
  EXPECT_EQ(chunks, kCycles / 10);
}

TEST_P(WithinCycles, SearchesFindTheWritesUndoneWithinTheCycleAndSkipTheOtherChunks) {
  std::string error;
  auto indexed = open(path_.string());
  auto plain = open(path_.string(), false);
  ASSERT_TRUE(indexed && plain);
  std::vector<const char*> names{watchedName()};
  if (GetParam() == kWithinCycles) names = {"Main.x", "Main.pulse.q", "Main.arr[7]"};
  for (const char* name : names) {
    const replay::Watch w = watchOf(name);
    const Position end = *indexed->end();
    const std::vector<replay::Change> changes = indexed->lastChanges(w, end, 5, error);
    ASSERT_TRUE(error.empty()) << error;
    expectSetAndRestored(changes, w, name);
    EXPECT_EQ(positions(plain->lastChanges(w, end, 5, error)), positions(changes)) << name;
    // A reverse data breakpoint from the end stops at the restoring write, a forward one from the
    // start at the setting one.
    ASSERT_TRUE(indexed->seek(end, error)) << error;
    const auto back = indexed->reverseContinue({}, {w}, error);
    ASSERT_TRUE(back) << error;
    EXPECT_EQ(back->reason, replay::StopReason::DataWrite) << name;
    EXPECT_EQ(back->position, changes[0].position) << name;
    ASSERT_TRUE(indexed->seek({0, 0}, error)) << error;
    const auto forward = indexed->continueForward({}, {w}, error);
    ASSERT_TRUE(forward) << error;
    EXPECT_EQ(forward->reason, replay::StopReason::DataWrite) << name;
    EXPECT_EQ(forward->position, changes[1].position) << name;
    // Exported values are those at cycle ends: the value restored in its cycle is no sample.
    ASSERT_TRUE(indexed->cycleEnds(
        {w}, 130, 139,
        [&](uint64_t, int64_t, const uint8_t* image) {
          EXPECT_EQ(std::vector<uint8_t>(image + w.offset, image + w.offset + w.size), std::vector<uint8_t>(w.size, 0));
          return true;
        },
        error))
        << error;
  }
  // 19 of the 20 chunks hold none of these writes.
  EXPECT_GT(indexed->chunksSkipped(), 19u * names.size());
  EXPECT_EQ(plain->chunksSkipped(), 0u);
}

// A trace recorded before the index held every statement's writes has indexes blind to these
// writes: it is searched without them (slower, correct). The same blind indexes under a header
// that calls them complete would skip the chunk that holds the writes.
TEST_P(WithinCycles, IndexesNotMarkedCompleteAreNotUsed) {
  const replay::Watch w = watchOf(watchedName());
  for (bool complete : {false, true}) {
    const test::TempTrace copy{complete ? "blind_complete" : "blind_old"};
    withBlindIndexes(path_.string(), copy.string(), complete);
    auto r = open(copy.string());
    ASSERT_TRUE(r);
    EXPECT_EQ(r->header().writeIndexComplete, complete);
    std::string error;
    const std::vector<replay::Change> changes = r->lastChanges(w, *r->end(), 5, error);
    ASSERT_TRUE(error.empty()) << error;
    if (complete) {
      EXPECT_TRUE(changes.empty());
      EXPECT_GT(r->chunksSkipped(), 0u);
    } else {
      expectSetAndRestored(changes, w, watchedName());
      EXPECT_EQ(r->chunksSkipped(), 0u);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Programs, WithinCycles, ::testing::Values(kWithinCycles, kWithinCyclesThroughPointer),
                         [](const ::testing::TestParamInfo<const char*>& param) {
                           return std::string(param.param == kWithinCycles ? "VariableBlockArray" : "ThroughAPointer");
                         });

}  // namespace

namespace {
// A copy of `trace` whose recorded image hashes are wrong from cycle `from` to the end of its chunk
// (a replay that diverges there and stays diverged to the chunk's end).
std::string withWrongHashes(const std::string& trace, const std::string& copy, uint64_t from) {
  return test::copyWithChunksEdited(trace, copy, [from](trace::ChunkData& chunk) {
    if (chunk.firstCycle <= from && from < chunk.firstCycle + chunk.cycleCount())
      for (uint64_t c = from; c < chunk.firstCycle + chunk.cycleCount(); ++c)
        chunk.imageHashes[c - chunk.firstCycle] ^= 0x5a5a5a5au;
  });
}

// cycleEnds hashes the image at a chunk's last cycle only; a hash that differs there has the chunk
// re-executed with every hash checked, so the divergences are those a check of every cycle finds.
TEST_F(WriteIndex, CycleEndsReportsTheFirstCycleThatDoesNotReplayAsRecorded) {
  const test::TempTrace copy{"wrong_hashes"};
  ASSERT_FALSE(withWrongHashes(path_.string(), copy.string(), 35).empty());
  std::string error;
  auto ends = replay::Replayer::open(copy.string(), {}, error);
  ASSERT_TRUE(ends) << error;
  uint64_t seen = 0;
  ASSERT_TRUE(ends->cycleEnds(
      {watchOf("Main.n")}, 0, kCycles - 1, [&](uint64_t, int64_t, const uint8_t*) { return ++seen, true; }, error))
      << error;
  EXPECT_EQ(seen, kCycles);
  auto every = replay::Replayer::open(copy.string(), {}, error);
  ASSERT_TRUE(every) << error;
  const std::vector<replay::Divergence> verified = every->verify({}, error);
  ASSERT_TRUE(error.empty()) << error;
  ASSERT_EQ(verified.size(), 5u);  // cycles 35..39
  ASSERT_EQ(ends->divergences().size(), verified.size());
  for (size_t i = 0; i < verified.size(); ++i) {
    EXPECT_EQ(ends->divergences()[i].position, verified[i].position) << i;
    EXPECT_EQ(ends->divergences()[i].kind, replay::DivergenceKind::ImageHash) << i;
    EXPECT_EQ(ends->divergences()[i].what, verified[i].what) << i;
  }
  EXPECT_EQ(ends->divergences().front().position.cycle, 35u);
}

// A copy of `trace` that says cycle `at` ran `more` statements more than it did.
std::string withMoreSteps(const std::string& trace, const std::string& copy, uint64_t at, uint32_t more) {
  return test::copyWithChunksEdited(trace, copy, [at, more](trace::ChunkData& chunk) {
    if (chunk.firstCycle <= at && at < chunk.firstCycle + chunk.cycleCount())
      chunk.stepCounts[at - chunk.firstCycle] += more;
  });
}

// A seek that fails after it moved the VM (the cycle replays shorter than recorded) leaves the
// replayer where it was: the position, its statement and its state.
TEST_F(WriteIndex, ASeekThatFailsMidwayLeavesTheReplayerWhereItWas) {
  const test::TempTrace copy{"more_steps"};
  ASSERT_FALSE(withMoreSteps(path_.string(), copy.string(), 120, 5).empty());
  std::string error;
  auto replayer = replay::Replayer::open(copy.string(), {}, error);
  ASSERT_TRUE(replayer) << error;
  ASSERT_TRUE(replayer->seek({60, 1}, error)) << error;
  const uint32_t statement = replayer->statement();
  ASSERT_NE(statement, UINT32_MAX);
  const auto imageOf = [&] {
    return std::vector<uint8_t>(replayer->vm().memory(), replayer->vm().memory() + replayer->vm().memorySize());
  };
  const std::vector<uint8_t> memory = imageOf();
  const replay::CycleSteps* recorded = replayer->steps(120, error);
  ASSERT_TRUE(recorded) << error;
  // A step the recording says cycle 120 has and its replay never reaches.
  EXPECT_FALSE(replayer->seek({120, recorded->count() + 2}, error));
  EXPECT_NE(error.find("the replay diverged"), std::string::npos) << error;
  EXPECT_EQ(replayer->position(), (replay::Position{60, 1}));
  EXPECT_EQ(replayer->statement(), statement);
  EXPECT_EQ(imageOf(), memory);  // the image and the paused frames' stack
}

}  // namespace
