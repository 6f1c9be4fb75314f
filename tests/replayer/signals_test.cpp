// replayer/signals.h: which variable a signal names, the recorded range a request asks for, a
// signal's changes over a range, and their downsampling at its edges (one cycle, more buckets
// than cycles, a value that never changes, a lane naming no variable).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>

#include "replayer/signals.h"
#include "tests/support/trace_support.h"
#include "vm/runtime/values.h"

using namespace scanback;
using replay::Change;
using replay::CycleRange;
using replay::Downsampler;
using replay::Position;

namespace {

// `n` counts the cycles (1 in cycle 0); `spike` is 100 in cycle 49 alone; `steady` is never
// written; `pair` is a structure, `flag` a BOOL that follows n's parity.
constexpr const char* kSignalsProgram = R"(
TYPE Pair : STRUCT a : INT; b : INT; END_STRUCT; END_TYPE
PROGRAM Main
VAR
  n : INT;
  spike : INT;
  steady : DINT := 7;
  flag : BOOL;
  pair : Pair;
END_VAR
n := n + 1;
IF n = 50 THEN
  spike := 100;
ELSE
  spike := 0;
END_IF
flag := (n MOD 2) = 1;
END_PROGRAM
)";

class Signals : public ::testing::Test {
 protected:
  void SetUp() override {
    program_ = test::mustCompile(kSignalsProgram);
    ASSERT_TRUE(program_);
    test::recordCycles(program_, path_, kCycles, 10);
    std::string error;
    replayer_ = replay::Replayer::open(path_.string(), {}, error);
    ASSERT_TRUE(replayer_) << error;
  }
  replay::Signal signal(const std::string& name) {
    std::string error;
    std::optional<replay::Signal> s = replay::resolveSignal(*program_, name, error);
    EXPECT_TRUE(s) << name << ": " << error;
    return s ? *s : replay::Signal{};
  }
  std::vector<replay::SignalChanges> changes(const std::vector<replay::Signal>& signals, CycleRange range,
                                             uint64_t maxPoints) {
    std::vector<replay::SignalChanges> out;
    std::string error;
    EXPECT_TRUE(replay::signalChanges(*replayer_, signals, range, maxPoints, out, error)) << error;
    return out;
  }
  std::string text(const replay::Signal& s, const std::vector<uint8_t>& bytes) {
    return replay::SignalValues(*program_).text(s, bytes);
  }

  static constexpr uint64_t kCycles = 100;
  std::shared_ptr<const Program> program_;
  const test::TempTrace path_{::testing::UnitTest::GetInstance()->current_test_info()->name()};
  std::unique_ptr<replay::Replayer> replayer_;
};

// A change at (cycle, step) whose new value is `value` (as a 2-byte INT).
Change changeAt(uint64_t cycle, uint64_t step, int16_t value) {
  Change c;
  c.position = Position{cycle, step};
  c.after.resize(2);
  std::memcpy(c.after.data(), &value, 2);
  return c;
}

std::vector<Position> positionsOf(const std::vector<Change>& changes) {
  std::vector<Position> out;
  for (const Change& c : changes) out.push_back(c.position);
  return out;
}

TEST_F(Signals, ANameResolvesToOneValueAndItsWatchOrToAnErrorSayingWhy) {
  const replay::Signal n = signal("Main.n");
  EXPECT_EQ(n.where.path, "Main.n");
  EXPECT_EQ(n.kind, SignalKind::Integer);
  EXPECT_EQ(n.watch().offset, n.where.offset);
  EXPECT_EQ(n.watch().size, 2u);
  const replay::Signal flag = signal("Main.flag");
  EXPECT_EQ(flag.kind, SignalKind::Bool);
  EXPECT_EQ(flag.watch().size, 1u);
  EXPECT_EQ(flag.watch().bit, flag.where.bit);

  std::string error;
  EXPECT_FALSE(replay::resolveSignal(*program_, "Main.nosuch", error));
  EXPECT_NE(error.find("nosuch"), std::string::npos) << error;
  error.clear();
  EXPECT_FALSE(replay::resolveSignal(*program_, "Main.pair", error));
  EXPECT_EQ(error, "'Main.pair' is a structure (Pair), not one value: add one of its members or elements");
  error.clear();
  EXPECT_FALSE(replay::resolveSignal(*program_, "%IX99999.0", error));
  EXPECT_FALSE(error.empty());
  // A member of the structure is one value.
  EXPECT_EQ(signal("Main.pair.b").kind, SignalKind::Integer);
}

TEST_F(Signals, TheRangeIsClampedToTheRecordedCyclesAndOneOutsideThemIsAnError) {
  std::string error;
  std::optional<CycleRange> r = replay::recordedRange(replayer_->history(), std::nullopt, std::nullopt, error);
  ASSERT_TRUE(r) << error;
  EXPECT_EQ(r->first, 0u);
  EXPECT_EQ(r->last, kCycles - 1);
  r = replay::recordedRange(replayer_->history(), 50, 1000, error);
  ASSERT_TRUE(r) << error;
  EXPECT_EQ(r->first, 50u);
  EXPECT_EQ(r->last, kCycles - 1);
  EXPECT_FALSE(replay::recordedRange(replayer_->history(), 500, 600, error));
  EXPECT_EQ(error, "cycles 500..600 are outside the recorded cycles 0..99");
  EXPECT_FALSE(replay::recordedRange(replayer_->history(), 5, 4, error));
  EXPECT_EQ(error, "cycles 5..4 are outside the recorded cycles 0..99");
}

TEST_F(Signals, AnEmptyRangeIsAnErrorNotAnAnswer) {
  std::vector<replay::SignalChanges> out;
  std::string error;
  EXPECT_FALSE(replay::signalChanges(*replayer_, {signal("Main.n")}, CycleRange{5, 4}, 10, out, error));
  EXPECT_EQ(error, "cycles 5..4 are an empty range");
  EXPECT_TRUE(out.empty());
}

TEST_F(Signals, OneCycleGivesItsChangesTheValueBeforeAndItsStartTime) {
  const replay::Signal n = signal("Main.n");
  const std::vector<replay::SignalChanges> c = changes({n}, CycleRange{10, 10}, replay::kDefaultMaxPoints);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_TRUE(c[0].complete);
  EXPECT_EQ(text(n, c[0].initial), "10");
  ASSERT_EQ(c[0].points.size(), 1u);
  EXPECT_EQ(c[0].points[0].change.position.cycle, 10u);
  EXPECT_GT(c[0].points[0].change.position.step, 0u);
  EXPECT_EQ(text(n, c[0].points[0].change.after), "11");
  std::shared_ptr<const trace::ChunkData> held;
  replay::CycleRecord record;
  std::string error;
  ASSERT_TRUE(replayer_->history().cycle(10, held, record, error)) << error;
  EXPECT_EQ(c[0].points[0].timeNs, record.startNs);
}

TEST_F(Signals, AValueThatNeverChangesHasItsInitialValueAndNoChange) {
  const replay::Signal steady = signal("Main.steady");
  const std::vector<replay::SignalChanges> c =
      changes({steady, signal("Main.n")}, CycleRange{0, kCycles - 1}, replay::kDefaultMaxPoints);
  ASSERT_EQ(c.size(), 2u);
  EXPECT_TRUE(c[0].complete);
  EXPECT_TRUE(c[0].points.empty());
  EXPECT_EQ(text(steady, c[0].initial), "7");
  EXPECT_EQ(c[1].points.size(), kCycles) << "n changes in every cycle";
}

TEST_F(Signals, PastMaxPointsEachBucketKeepsItsFirstAndItsExtremes) {
  const replay::Signal spike = signal("Main.spike"), n = signal("Main.n");
  // Three buckets of 0..99: 0..33, 34..66, 67..99. spike changes in cycles 49 (to 100) and 50
  // (back to 0); n in every cycle.
  const std::vector<replay::SignalChanges> c = changes({spike, n}, CycleRange{0, kCycles - 1}, 9);
  ASSERT_EQ(c.size(), 2u);
  EXPECT_TRUE(c[0].complete) << "two changes fit in nine points";
  ASSERT_EQ(c[0].points.size(), 2u);
  EXPECT_EQ(text(spike, c[0].points[0].change.after), "100");
  EXPECT_FALSE(c[1].complete);
  std::vector<std::string> kept;
  for (const replay::SignalChanges::Point& p : c[1].points) kept.push_back(text(n, p.change.after));
  // n rises: per bucket its first change is its smallest, its last its largest.
  EXPECT_EQ(kept, (std::vector<std::string>{"1", "34", "35", "67", "68", "100"}));
}

TEST(SignalsDownsampler, EveryChangeIsKeptWhileTheyFitInMaxPoints) {
  Downsampler d(CycleRange{0, 9}, 4);
  EXPECT_EQ(d.bucketCount(), 1u) << "4 / 3 buckets, at least one";
  for (uint64_t cycle = 0; cycle < 4; ++cycle) d.add(changeAt(cycle, 1, static_cast<int16_t>(cycle)), cycle);
  EXPECT_TRUE(d.complete());
  EXPECT_EQ(d.take().size(), 4u);
}

TEST(SignalsDownsampler, OneBucketKeepsTheFirstTheSmallestAndTheLargestInPositionOrder) {
  Downsampler d(CycleRange{0, 9}, 1);
  EXPECT_EQ(d.bucketCount(), 1u);
  const int16_t values[] = {5, 9, 1, 7};
  for (uint64_t k = 0; k < 4; ++k) d.add(changeAt(k, 2, values[k]), values[k]);
  EXPECT_FALSE(d.complete());
  EXPECT_EQ(positionsOf(d.take()), (std::vector<Position>{{0, 2}, {1, 2}, {2, 2}}));
}

TEST(SignalsDownsampler, AChangeThatIsFirstAndExtremeIsKeptOnce) {
  Downsampler d(CycleRange{0, 0}, 1);
  d.add(changeAt(0, 1, 9), 9);
  d.add(changeAt(0, 2, 3), 3);
  d.add(changeAt(0, 3, 5), 5);
  EXPECT_EQ(positionsOf(d.take()), (std::vector<Position>{{0, 1}, {0, 2}}));
}

TEST(SignalsDownsampler, MoreBucketsThanCyclesMakesOneBucketACycle) {
  // 300 points would make 100 buckets; two cycles make two.
  Downsampler d(CycleRange{10, 11}, 300);
  EXPECT_EQ(d.bucketCount(), 2u);
  for (uint64_t step = 1; step <= 200; ++step) {
    const int16_t v = static_cast<int16_t>(step == 77 ? -50 : step);
    d.add(changeAt(10, step, v), v);
  }
  for (uint64_t step = 1; step <= 200; ++step) d.add(changeAt(11, step, 0), 0);
  EXPECT_FALSE(d.complete());
  EXPECT_EQ(positionsOf(d.take()), (std::vector<Position>{{10, 1}, {10, 77}, {10, 200}, {11, 1}}))
      << "cycle 10: first, smallest, largest; cycle 11: one value throughout";
}

TEST(SignalsDownsampler, ValuesThatAreNoNumbersKeepOnlyTheFirstOfEachBucket) {
  Downsampler d(CycleRange{0, 5}, 6);  // two buckets: 0..2, 3..5
  for (uint64_t cycle = 0; cycle < 6; ++cycle)
    for (uint64_t step = 1; step <= 3; ++step) d.add(changeAt(cycle, step, 0), std::nullopt);
  EXPECT_FALSE(d.complete());
  EXPECT_EQ(positionsOf(d.take()), (std::vector<Position>{{0, 1}, {3, 1}}));
}

}  // namespace
