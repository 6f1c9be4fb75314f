// The write index (traces/trace.capnp: Chunk.writeIndex): what the recorder notes per chunk, and
// that every search that uses it finds exactly what the same search finds without it, while
// skipping the chunks it rules out.
#include <gtest/gtest.h>

#include <cstring>

#include "replayer/replayer.h"
#include "tests/support/trace_support.h"
#include "traces/trace_codec.h"
#include "traces/trace_reader.h"
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

}  // namespace
