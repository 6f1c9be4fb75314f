// The run loop of `scanback run` and the live target: limits, pacing (through the caller's waits,
// which never sleep here), restarting the pacing after a pause, the end.
#include "recorder/run_loop.h"

#include <gtest/gtest.h>

#include <vector>

#include "tests/vm/test_support.h"

namespace scanback::recorder {
namespace {

using namespace std::chrono_literals;

const char* kTenMs = R"(CONFIGURATION Cfg
  RESOURCE Cpu ON PLC
    TASK Fast (INTERVAL := T#10ms, PRIORITY := 1);
    PROGRAM Main WITH Fast : MainProg;
  END_RESOURCE
END_CONFIGURATION
PROGRAM MainProg
VAR n : INT; END_VAR
n := n + 1;
END_PROGRAM
)";

// Records each wait asked for and returns at once (or says it was cut short).
class Waits final : public RunLoopWaits {
 public:
  bool waitUntil(std::chrono::steady_clock::time_point due) override {
    dues.push_back(due);
    return cutShort;
  }
  bool ending() override { return end; }
  std::vector<std::chrono::steady_clock::time_point> dues;
  bool cutShort = false;
  bool end = false;
};

TEST(RunLoop, EndsAtTheCycleLimitOrBeforeTheFirstCycleAtTheTimeLimit) {
  auto program = test::mustCompile(kTenMs);
  ASSERT_TRUE(program);
  Waits waits;
  {
    Runtime rt(program);
    RunLoop loop(rt, RunLoopOptions{false, 3, std::nullopt});
    CycleStart next;
    for (int i = 0; i < 3; ++i) {
      ASSERT_EQ(loop.prepare(waits, next), RunLoop::Next::Cycle);
      EXPECT_EQ(next.cycle, static_cast<uint64_t>(i));
      ASSERT_EQ(rt.runCycle(), RunStatus::CycleDone);
    }
    EXPECT_TRUE(loop.cycleLimitReached());
    EXPECT_EQ(loop.prepare(waits, next), RunLoop::Next::CycleLimit);
  }
  {
    Runtime rt(program);
    RunLoop loop(rt, RunLoopOptions{false, std::nullopt, 25'000'000});
    CycleStart next;
    int cycles = 0;
    while (loop.prepare(waits, next) == RunLoop::Next::Cycle) {
      ASSERT_EQ(rt.runCycle(), RunStatus::CycleDone);
      ++cycles;
    }
    EXPECT_EQ(cycles, 3) << "at 0, 10 and 20 ms";
    EXPECT_EQ(loop.prepare(waits, next), RunLoop::Next::TimeLimit);
  }
  EXPECT_TRUE(waits.dues.empty()) << "faster than real time: no pacing";
}

TEST(RunLoop, RealTimePacesByTheVirtualStartAndStartsAgainFromNowAfterAPause) {
  auto program = test::mustCompile(kTenMs);
  ASSERT_TRUE(program);
  Runtime rt(program);
  RunLoop loop(rt, RunLoopOptions{true, std::nullopt, std::nullopt});
  Waits waits;
  CycleStart next;
  const auto before = std::chrono::steady_clock::now();
  ASSERT_EQ(loop.prepare(waits, next), RunLoop::Next::Cycle);  // the first cycle anchors the clock
  EXPECT_TRUE(waits.dues.empty());
  rt.runCycle();
  ASSERT_EQ(loop.prepare(waits, next), RunLoop::Next::Cycle);
  ASSERT_EQ(waits.dues.size(), 1u);
  EXPECT_GE(waits.dues[0], before + 10ms) << "the second cycle is due 10 ms after the first";
  EXPECT_LE(waits.dues[0], std::chrono::steady_clock::now() + 10ms);
  rt.runCycle();
  // Paused meanwhile: no wait for the missed time, and none for this cycle either.
  loop.restartPacing();
  ASSERT_EQ(loop.prepare(waits, next), RunLoop::Next::Cycle);
  EXPECT_EQ(waits.dues.size(), 1u);
  rt.runCycle();
  // A wait cut short (a pause asked for): the cycle starts now, pacing again from here.
  waits.cutShort = true;
  ASSERT_EQ(loop.prepare(waits, next), RunLoop::Next::Cycle);
  EXPECT_EQ(waits.dues.size(), 2u);
  rt.runCycle();
  waits.cutShort = false;
  ASSERT_EQ(loop.prepare(waits, next), RunLoop::Next::Cycle);
  EXPECT_EQ(waits.dues.size(), 2u) << "re-anchored: this cycle is the first of the new pacing";
  waits.end = true;
  EXPECT_EQ(loop.prepare(waits, next), RunLoop::Next::Ending);
}

}  // namespace
}  // namespace scanback::recorder
