// The replayer against independent runs: every sought position equals the live state at that
// position, the backward moves mirror the forward ones, and the searches find exactly what a
// brute-force walk over every boundary finds.
#include "replayer/replayer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <thread>

#include "recorder/recorder.h"
#include "tests/support/crafted_traces.h"
#include "tests/support/golden_cases.h"
#include "tests/support/trace_support.h"
#include "vm/runtime/state_json.h"
#include "vm/runtime/stimulus.h"
#include "vm/runtime/values.h"

namespace fs = std::filesystem;
using namespace scanback;
using replay::Position;

namespace {

using test::compilePlant;
using test::mustCompile;
using test::mustCompileSourceFiles;
using test::plantStimulus;
using test::recordCycles;
using test::statementOnLine;
using test::stFilesIn;
using test::TempTrace;

// What a live run shows at a position: the image, the frames and their declared variables.
struct Snapshot {
  std::vector<uint8_t> image;
  std::vector<std::tuple<uint32_t, uint32_t, uint32_t>> frames;  // pou, instance, frame offset
  std::vector<std::vector<uint8_t>> frameVariables;
  uint32_t statement = UINT32_MAX;
};

Snapshot snapshot(const Vm& vm) {
  Snapshot s;
  s.image.assign(vm.image(), vm.image() + vm.imageSize());
  s.statement = vm.inCycle() ? vm.pausedStatement() : UINT32_MAX;
  if (!vm.inCycle()) return s;
  for (const Frame& f : vm.frames()) {
    s.frames.emplace_back(f.pou, f.thisOffset, f.frameOffset);
    for (const Variable& v : vm.program().pous[f.pou].frameVariables) {
      if (!v.type || v.type->size == 0) continue;
      const uint8_t* at = vm.memory() + f.frameOffset + v.offset;
      s.frameVariables.emplace_back(at, at + v.type->size);
    }
  }
  return s;
}

// Pauses a live run at each of a sorted list of positions.
class PauseAtPositions final : public VmObserver {
 public:
  PauseAtPositions(const std::vector<Position>& targets, const uint64_t& cycle) : targets_(targets), cycle_(cycle) {}
  bool onStatement(uint32_t, uint64_t step) override {
    return next_ < targets_.size() && targets_[next_].cycle == cycle_ && targets_[next_].step == step;
  }
  size_t next_ = 0;

 private:
  const std::vector<Position>& targets_;
  const uint64_t& cycle_;
};

std::vector<Snapshot> liveSnapshots(std::shared_ptr<const Program> program, const std::vector<Position>& targets,
                                    uint64_t cycles, Stimulus* stimulus) {
  Runtime rt(program);
  uint64_t cycle = 0;
  PauseAtPositions pause(targets, cycle);
  rt.vm().setObserver(&pause);
  std::vector<Snapshot> out;
  for (cycle = 0; cycle < cycles; ++cycle) {
    if (stimulus) stimulus->apply(cycle, rt);
    rt.startCycle();
    for (;;) {
      const RunStatus status = rt.run();
      if (status == RunStatus::Paused) {
        out.push_back(snapshot(rt.vm()));
        ++pause.next_;
        continue;
      }
      if (status == RunStatus::Faulted) return out;
      break;
    }
  }
  return out;
}

std::function<std::string(uint32_t)> debugPath = [](uint32_t) { return std::string(); };
void expectSame(const Snapshot& live, const Snapshot& replayed, Position at) {
  const std::string where = "at cycle " + std::to_string(at.cycle) + " step " + std::to_string(at.step);
  EXPECT_EQ(live.statement, replayed.statement) << where;
  EXPECT_EQ(live.frames, replayed.frames) << where;
  EXPECT_EQ(live.frameVariables, replayed.frameVariables) << where;
  if (live.image != replayed.image) {
    size_t k = 0;
    while (live.image[k] == replayed.image[k]) ++k;
    ADD_FAILURE() << "image differs " << where << " first at byte " << k << ": live " << int(live.image[k])
                  << ", replayed " << int(replayed.image[k]) << " " << debugPath(static_cast<uint32_t>(k));
  }
}

const char* kCalls = R"(
FUNCTION Twice : INT
VAR_INPUT x : INT; END_VAR
Twice := x * 2;
END_FUNCTION

FUNCTION_BLOCK Counter
VAR_INPUT step : INT; END_VAR
VAR count : INT; END_VAR
count := count + step;
IF count > 50 THEN
  count := 0;
END_IF
END_FUNCTION_BLOCK

PROGRAM Main
VAR
  n : INT;
  a : INT;
  b : INT;
  c1 : Counter;
  c2 : Counter;
END_VAR
n := n + 1;
a := Twice(n) + Twice(a MOD 7);
c1(step := n MOD 5);
IF n MOD 3 = 0 THEN
  c2(step := 1);
  b := b + c2.count;
END_IF
a := a MOD 100;
END_PROGRAM
)";

class ReplayerFixture : public ::testing::Test {
 protected:
  void open(std::shared_ptr<const Program> program, uint64_t cycles, uint32_t keyframeEvery,
            std::optional<Stimulus> stimulus = std::nullopt, bool statementPaths = true) {
    program_ = program;
    recordCycles(program, path_, cycles, keyframeEvery, stimulus, statementPaths);
    std::string error;
    replayer_ = replay::Replayer::open(path_.string(), {}, error);
    ASSERT_TRUE(replayer_) << error;
  }

  std::shared_ptr<const Program> program_;
  const TempTrace path_{::testing::UnitTest::GetInstance()->current_test_info()->name()};
  std::unique_ptr<replay::Replayer> replayer_;
};

TEST_F(ReplayerFixture, EverySoughtPositionEqualsTheLiveState) {
  auto program = compilePlant();
  ASSERT_TRUE(program);
  auto stimulus = plantStimulus(*program);
  ASSERT_TRUE(stimulus);
  std::string error;
  const uint64_t kCycles = 1200;
  open(program, kCycles, 250, *stimulus);

  // Random positions, plus each chunk's first boundary and cycle ends.
  std::mt19937_64 rng(42);
  std::vector<Position> targets;
  for (int i = 0; i < 300; ++i) {
    const uint64_t cycle = rng() % kCycles;
    const replay::CycleSteps* s = replayer_->steps(cycle, error);
    ASSERT_TRUE(s) << error;
    targets.push_back({cycle, s->count() ? rng() % s->count() : 0});
  }
  for (uint64_t c : {0ull, 249ull, 250ull, 251ull, 999ull, 1000ull, 1199ull}) targets.push_back({c, 0});
  std::sort(targets.begin(), targets.end());
  targets.erase(std::unique(targets.begin(), targets.end()), targets.end());
  Stimulus liveStimulus = *stimulus;
  debugPath = [program](uint32_t k) { return pathOfOffset(*program, k, nullptr); };
  const std::vector<Snapshot> live = liveSnapshots(program, targets, kCycles, &liveStimulus);
  ASSERT_EQ(live.size(), targets.size());

  // Visit them out of order: forwards and backwards jumps, near and far.
  std::vector<size_t> order(targets.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::shuffle(order.begin(), order.end(), rng);
  for (size_t i : order) {
    ASSERT_TRUE(replayer_->seek(targets[i], error)) << error;
    EXPECT_EQ(replayer_->position(), targets[i]);
    expectSame(live[i], snapshot(replayer_->vm()), targets[i]);
  }
  EXPECT_TRUE(replayer_->divergences().empty()) << replayer_->divergences().front().what;
  EXPECT_GT(replayer_->checkpointCount(), 0u);
}

TEST_F(ReplayerFixture, EndOfCycleEqualsTheStateAfterIt) {
  auto program = mustCompile(kCalls);
  ASSERT_TRUE(program);
  open(program, 40, 16);
  std::string error;
  for (uint64_t k : {0ull, 15ull, 16ull, 39ull}) {
    Runtime rt(program);
    for (uint64_t c = 0; c <= k; ++c) ASSERT_EQ(rt.runCycle(), RunStatus::CycleDone);
    const replay::CycleSteps* s = replayer_->steps(k, error);
    ASSERT_TRUE(s) << error;
    ASSERT_TRUE(replayer_->seek({k, s->count()}, error)) << error;
    EXPECT_FALSE(replayer_->vm().inCycle());
    EXPECT_TRUE(std::equal(rt.vm().image(), rt.vm().image() + rt.vm().imageSize(), replayer_->vm().image()))
        << "after cycle " << k;
    EXPECT_EQ(replayer_->statement(), UINT32_MAX);
  }
  // One step past the end of a cycle is not a position.
  const replay::CycleSteps* s = replayer_->steps(3, error);
  ASSERT_TRUE(s);
  EXPECT_FALSE(replayer_->seek({3, s->count() + 1}, error));
  EXPECT_NE(error.find("cycle 3 has"), std::string::npos) << error;
  EXPECT_FALSE(replayer_->seek({40, 0}, error));
  EXPECT_NE(error.find("after the end of the recording"), std::string::npos) << error;
}

// stepBack is the exact reverse of stepOver: wherever stepping back stays in the same activation,
// stepping over from there comes back; and stepping back from a POU's first statement lands on
// the caller's call statement.
TEST_F(ReplayerFixture, StepBackMirrorsStepOver) {
  auto program = mustCompile(kCalls);
  ASSERT_TRUE(program);
  open(program, 30, 8);
  std::string error;
  size_t sameActivation = 0, toCaller = 0;
  for (uint64_t cycle = 1; cycle < 30; ++cycle) {
    const replay::CycleSteps s = *replayer_->steps(cycle, error);
    for (uint64_t q = 0; q < s.count(); ++q) {
      ASSERT_TRUE(replayer_->seek({cycle, q}, error)) << error;
      const auto back = replayer_->stepBack({}, error);
      ASSERT_TRUE(back) << error;
      const Position p = back->position;
      ASSERT_LT(p, (Position{cycle, q}));
      if (p.cycle != cycle) {
        EXPECT_EQ(q, 0u) << "only the first statement steps back into the previous cycle";
        continue;
      }
      if (s.activations[p.step] == s.activations[q]) {
        ++sameActivation;
        const auto over = replayer_->stepOver({}, {}, error);
        ASSERT_TRUE(over) << error;
        EXPECT_EQ(over->position, (Position{cycle, q})) << "stepOver after stepBack from step " << q;
      } else {
        ++toCaller;
        const uint32_t callee = s.activations[q];
        EXPECT_EQ(p.step, s.activationTable[callee].callStep) << "stepBack from a POU's first statement";
        EXPECT_EQ(s.activations[p.step], s.activationTable[callee].parent);
      }
    }
  }
  EXPECT_GT(sameActivation, 100u);
  EXPECT_GT(toCaller, 20u);
}

TEST_F(ReplayerFixture, StepOverSkipsCallsAndStepOutReturnsToTheCaller) {
  auto program = mustCompile(kCalls);
  ASSERT_TRUE(program);
  open(program, 10, 4);
  std::string error;
  const replay::CycleSteps s = *replayer_->steps(5, error);
  // Walk the top level of cycle 5 with stepOver: every stop is top-level, in order, and no
  // top-level boundary is skipped.
  ASSERT_TRUE(replayer_->seek({5, 0}, error)) << error;
  std::vector<uint64_t> visited{0};
  for (;;) {
    const auto stop = replayer_->stepOver({}, {}, error);
    ASSERT_TRUE(stop) << error;
    if (stop->position.cycle != 5) {
      EXPECT_EQ(stop->position, (Position{6, 0}));
      break;
    }
    visited.push_back(stop->position.step);
  }
  std::vector<uint64_t> topLevel;
  for (uint64_t q = 0; q < s.count(); ++q)
    if (s.activations[q] == 0) topLevel.push_back(q);
  EXPECT_EQ(visited, topLevel);

  // Step into each call and out again: back at the caller's next boundary.
  for (uint32_t a = 1; a < s.activationTable.size(); ++a) {
    uint64_t first = 0;
    while (s.activations[first] != a) ++first;
    ASSERT_TRUE(replayer_->seek({5, first}, error)) << error;
    const auto out = replayer_->stepOut({}, {}, error);
    ASSERT_TRUE(out) << error;
    uint64_t expected = first;
    while (expected < s.count() && !(s.activations[expected] != a && s.encloses(s.activations[expected], a)))
      ++expected;
    EXPECT_EQ(out->position, (Position{5, expected}));
    // And the reverse: back to the call statement.
    ASSERT_TRUE(
        replayer_->seek({5, first + 1 < s.count() && s.activations[first + 1] == a ? first + 1 : first}, error));
    const auto backOut = replayer_->reverseStepOut({}, error);
    ASSERT_TRUE(backOut) << error;
    EXPECT_EQ(backOut->position, (Position{5, s.activationTable[a].callStep}));
  }
}

// Reverse continue finds exactly the last boundary before here where a breakpoint (with its
// condition) would stop; continue finds the first one after. Checked against a walk over every
// boundary of every cycle.
TEST_F(ReplayerFixture, ContinueBothWaysFindsWhatABruteForceWalkFinds) {
  auto program = mustCompile(kCalls);
  ASSERT_TRUE(program);
  open(program, 60, 10);
  std::string error;
  // The statement `b := b + c2.count;` runs every third cycle; `count := 0;` rarely.
  const uint32_t addB = statementOnLine(*program, 29), resetCount = statementOnLine(*program, 12);
  ASSERT_NE(addB, UINT32_MAX);
  ASSERT_NE(resetCount, UINT32_MAX);
  std::string e2;
  auto nOffset = findVariable(*program, "Main.n", e2)->offset;
  auto evenN = [nOffset](const Vm& vm) {
    int16_t n;
    std::memcpy(&n, vm.image() + nOffset, 2);
    return n % 2 == 0;
  };
  std::vector<replay::Breakpoint> breakpoints{{addB, evenN, nullptr, {}}, {resetCount, nullptr, nullptr, {}}};

  // Every boundary, in order, with the breakpoint it would stop at.
  std::vector<std::pair<Position, int>> all;
  for (uint64_t c = 0; c < 60; ++c) {
    const replay::CycleSteps s = *replayer_->steps(c, error);
    for (uint64_t q = 0; q < s.count(); ++q) {
      int hit = -1;
      if (s.statements[q] == addB) {
        ASSERT_TRUE(replayer_->seek({c, q}, error)) << error;
        if (evenN(replayer_->vm())) hit = 0;
      } else if (s.statements[q] == resetCount) {
        hit = 1;
      }
      all.push_back({{c, q}, hit});
    }
  }
  size_t hits = 0;
  for (const auto& [p, hit] : all) hits += hit >= 0;
  ASSERT_GT(hits, 10u);

  std::mt19937_64 rng(7);
  for (int i = 0; i < 60; ++i) {
    const size_t from = rng() % all.size();
    ASSERT_TRUE(replayer_->seek(all[from].first, error)) << error;
    const auto back = replayer_->reverseContinue(breakpoints, {}, error);
    ASSERT_TRUE(back) << error;
    std::optional<std::pair<Position, int>> expectBack;
    for (size_t k = from; k-- > 0;)
      if (all[k].second >= 0) {
        expectBack = all[k];
        break;
      }
    if (expectBack) {
      EXPECT_EQ(back->reason, replay::StopReason::Breakpoint);
      EXPECT_EQ(back->position, expectBack->first);
      EXPECT_EQ(back->breakpoint, expectBack->second);
    } else {
      EXPECT_EQ(back->reason, replay::StopReason::Start);
      EXPECT_EQ(back->position, (Position{0, 0}));
    }

    ASSERT_TRUE(replayer_->seek(all[from].first, error)) << error;
    const auto fwd = replayer_->continueForward(breakpoints, {}, error);
    ASSERT_TRUE(fwd) << error;
    std::optional<std::pair<Position, int>> expectFwd;
    for (size_t k = from + 1; k < all.size(); ++k)
      if (all[k].second >= 0) {
        expectFwd = all[k];
        break;
      }
    if (expectFwd) {
      EXPECT_EQ(fwd->reason, replay::StopReason::Breakpoint);
      EXPECT_EQ(fwd->position, expectFwd->first);
    } else {
      EXPECT_EQ(fwd->reason, replay::StopReason::End);
    }
  }
}

// Hit conditions count the hits (runs with the condition holding) from the start of the
// recording, both ways, with and without statement paths in the trace: against a brute-force walk
// that numbers every hit.
class HitConditions : public ReplayerFixture, public ::testing::WithParamInterface<bool> {};

TEST_P(HitConditions, StopWhereTheNumberedHitPasses) {
  auto program = mustCompile(kCalls);
  ASSERT_TRUE(program);
  open(program, 60, 10, std::nullopt, GetParam());
  std::string error;
  const uint32_t addB = statementOnLine(*program, 29), addCount = statementOnLine(*program, 10);
  ASSERT_NE(addB, UINT32_MAX);
  ASSERT_NE(addCount, UINT32_MAX);
  const uint32_t nOffset = findVariable(*program, "Main.n", error)->offset;
  auto evenN = [nOffset](const Vm& vm) {
    int16_t n;
    std::memcpy(&n, vm.image() + nOffset, 2);
    return n % 2 == 0;
  };
  auto everySecond = [](uint64_t hit) { return hit % 2 == 0; };
  auto seventhOrEveryFifthFrom20 = [](uint64_t hit) { return hit == 7 || (hit >= 20 && hit % 5 == 0); };
  const std::vector<replay::Breakpoint> breakpoints{{addB, evenN, everySecond, {}},
                                                    {addCount, nullptr, seventhOrEveryFifthFrom20, {}}};

  // Every boundary with the breakpoint that stops there, numbering the hits as the walk goes.
  std::vector<std::pair<Position, int>> all;
  uint64_t hitsB = 0, hitsCount = 0;
  for (uint64_t c = 0; c < 60; ++c) {
    const replay::CycleSteps s = *replayer_->steps(c, error);
    for (uint64_t q = 0; q < s.count(); ++q) {
      int stop = -1;
      if (s.statements[q] == addB) {
        ASSERT_TRUE(replayer_->seek({c, q}, error)) << error;
        if (evenN(replayer_->vm()) && everySecond(++hitsB)) stop = 0;
      } else if (s.statements[q] == addCount) {
        if (seventhOrEveryFifthFrom20(++hitsCount)) stop = 1;
      }
      all.push_back({{c, q}, stop});
    }
  }
  size_t stops = 0;
  for (const auto& [p, stop] : all) stops += stop >= 0;
  ASSERT_GT(hitsB, 6u);
  ASSERT_GT(hitsCount, 40u);
  ASSERT_GT(stops, 8u);

  std::mt19937_64 rng(11);
  for (int i = 0; i < 50; ++i) {
    const size_t from = rng() % all.size();
    ASSERT_TRUE(replayer_->seek(all[from].first, error)) << error;
    const auto back = replayer_->reverseContinue(breakpoints, {}, error);
    ASSERT_TRUE(back) << error;
    std::optional<std::pair<Position, int>> expectBack;
    for (size_t k = from; k-- > 0;)
      if (all[k].second >= 0) {
        expectBack = all[k];
        break;
      }
    if (expectBack) {
      EXPECT_EQ(back->position, expectBack->first)
          << "back from " << all[from].first.cycle << ":" << all[from].first.step;
      EXPECT_EQ(back->breakpoint, expectBack->second);
    } else {
      EXPECT_EQ(back->reason, replay::StopReason::Start);
    }

    ASSERT_TRUE(replayer_->seek(all[from].first, error)) << error;
    const auto fwd = replayer_->continueForward(breakpoints, {}, error);
    ASSERT_TRUE(fwd) << error;
    std::optional<std::pair<Position, int>> expectFwd;
    for (size_t k = from + 1; k < all.size(); ++k)
      if (all[k].second >= 0) {
        expectFwd = all[k];
        break;
      }
    if (expectFwd) {
      EXPECT_EQ(fwd->position, expectFwd->first)
          << "forward from " << all[from].first.cycle << ":" << all[from].first.step;
      EXPECT_EQ(fwd->breakpoint, expectFwd->second);
    } else {
      EXPECT_EQ(fwd->reason, replay::StopReason::End);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Replayer, HitConditions, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& testInfo) {
                           return testInfo.param ? "WithStatementPaths" : "WithoutStatementPaths";
                         });

// The last writes of a variable, and reverse continue to a data write, against the values at
// every boundary.
TEST_F(ReplayerFixture, DataChangesMatchTheValuesAtEveryBoundary) {
  auto program = mustCompile(kCalls);
  ASSERT_TRUE(program);
  open(program, 40, 12);
  std::string error;
  auto b = findVariable(*program, "Main.b", error);
  ASSERT_TRUE(b) << error;
  const replay::Watch watch{b->offset, 2, -1};
  // The value at every boundary (and cycle end), in order.
  std::vector<std::pair<Position, int16_t>> values;
  for (uint64_t c = 0; c < 40; ++c) {
    const replay::CycleSteps s = *replayer_->steps(c, error);
    for (uint64_t q = 0; q <= s.count(); ++q) {
      ASSERT_TRUE(replayer_->seek({c, q}, error)) << error;
      int16_t v;
      std::memcpy(&v, replayer_->vm().image() + b->offset, 2);
      values.push_back({{c, q}, v});
    }
  }
  // Changes: where the value differs from the previous boundary (a cycle end and the next
  // cycle's start hold the same image).
  std::vector<Position> changes;
  for (size_t k = 1; k < values.size(); ++k)
    if (values[k].second != values[k - 1].second) changes.push_back(values[k].first);
  ASSERT_GT(changes.size(), 5u);

  const Position at{35, 3};
  const std::vector<replay::Change> last = replayer_->lastChanges(watch, at, 4, error);
  ASSERT_TRUE(error.empty()) << error;
  std::vector<Position> expected;
  for (auto it = changes.rbegin(); it != changes.rend() && expected.size() < 4; ++it)
    if (*it < at) expected.push_back(*it);
  std::vector<Position> got;
  for (const replay::Change& c : last) got.push_back(c.position);
  EXPECT_EQ(got, expected);
  for (const replay::Change& c : last) {
    EXPECT_EQ(c.before.size(), 2u);
    EXPECT_NE(c.before, c.after);
    EXPECT_NE(c.statement, UINT32_MAX);  // written by a statement, not by scan inputs
  }

  ASSERT_TRUE(replayer_->seek(at, error)) << error;
  const auto stop = replayer_->reverseContinue({}, {watch}, error);
  ASSERT_TRUE(stop) << error;
  EXPECT_EQ(stop->reason, replay::StopReason::DataWrite);
  EXPECT_EQ(stop->position, expected.front());

  ASSERT_TRUE(replayer_->seek({10, 0}, error)) << error;
  const auto fwd = replayer_->continueForward({}, {watch}, error);
  ASSERT_TRUE(fwd) << error;
  const Position firstAfter = *std::find_if(changes.begin(), changes.end(), [](Position p) {
    return p > Position{10, 0};
  });
  EXPECT_EQ(fwd->position, firstAfter);
}

// Forward steps stop where a live task's step stops: at the first change of a watched value on the
// way, the position the step ends at included (a change at the end of a cycle, made by its last
// statement, too), and report a breakpoint hit where they end as the breakpoint. Checked against
// the values at every boundary and against the same steps made without stops.
TEST_F(ReplayerFixture, ForwardStepsStopAtWatchedChangesOnTheWayAndAtBreakpointsWhereTheyEnd) {
  auto program = mustCompile(kCalls);
  ASSERT_TRUE(program);
  open(program, 70, 12);  // from cycle 49 on, a reaches 100: its last statement changes it
  std::string error;
  auto a = findVariable(*program, "Main.a", error);
  ASSERT_TRUE(a) << error;
  const replay::Watch watch{a->offset, 2, -1};
  std::vector<std::pair<Position, int16_t>> values;
  for (uint64_t c = 49; c < 60; ++c) {
    const replay::CycleSteps s = *replayer_->steps(c, error);
    for (uint64_t q = 0; q <= s.count(); ++q) {
      ASSERT_TRUE(replayer_->seek({c, q}, error)) << error;
      int16_t v;
      std::memcpy(&v, replayer_->vm().image() + a->offset, 2);
      values.push_back({{c, q}, v});
    }
  }
  std::vector<Position> changes;
  for (size_t k = 1; k < values.size(); ++k)
    if (values[k].second != values[k - 1].second) changes.push_back(values[k].first);
  int atCycleEnd = 0, stoppedEarly = 0, endedOnBreakpoint = 0;
  for (uint64_t c = 50; c < 57; ++c) {
    const replay::CycleSteps s = *replayer_->steps(c, error);
    if (std::find(changes.begin(), changes.end(), Position{c, s.count()}) != changes.end()) ++atCycleEnd;
    for (uint64_t q = 0; q < s.count(); ++q) {
      const Position from{c, q};
      for (int kind = 0; kind < 3; ++kind) {
        auto step = [&](const std::vector<replay::Breakpoint>& bps, const std::vector<replay::Watch>& ws) {
          EXPECT_TRUE(replayer_->seek(from, error)) << error;
          std::optional<replay::Stop> stop = kind == 0   ? replayer_->stepIn(bps, ws, error)
                                             : kind == 1 ? replayer_->stepOver(bps, ws, error)
                                                         : replayer_->stepOut(bps, ws, error);
          EXPECT_TRUE(stop) << error;
          return stop.value_or(replay::Stop{});
        };
        const replay::Stop plain = step({}, {});
        ASSERT_EQ(plain.reason, replay::StopReason::Step);
        const Position to = plain.position;
        // Watching a: the first change after `from`, up to `to` included.
        const auto change = std::find_if(changes.begin(), changes.end(), [&](Position p) { return p > from; });
        const replay::Stop watched = step({}, {watch});
        if (change != changes.end() && *change <= to) {
          EXPECT_EQ(watched.reason, replay::StopReason::DataWrite) << "step " << kind << " from " << c << ":" << q;
          EXPECT_EQ(watched.position, *change) << "step " << kind << " from " << c << ":" << q;
          stoppedEarly += *change < to;
        } else {
          EXPECT_EQ(watched.reason, replay::StopReason::Step) << "step " << kind << " from " << c << ":" << q;
          EXPECT_EQ(watched.position, to);
        }
        // A breakpoint on the statement where the step ends: reported there (or at an earlier run
        // of that statement on the way).
        const replay::CycleSteps t = *replayer_->steps(to.cycle, error);
        if (to.step >= t.count()) continue;
        const uint32_t statement = t.statements[to.step];
        const replay::Stop hit = step({replay::Breakpoint{statement, {}, {}, {}}}, {});
        EXPECT_EQ(hit.reason, replay::StopReason::Breakpoint) << "step " << kind << " from " << c << ":" << q;
        EXPECT_LE(hit.position, to);
        EXPECT_GT(hit.position, from);
        endedOnBreakpoint += hit.position == to;
      }
    }
  }
  EXPECT_GT(atCycleEnd, 0) << "some cycle's last statement changes a";
  EXPECT_GT(stoppedEarly, 5);
  EXPECT_GT(endedOnBreakpoint, 100);
}

// A breakpoint's hits numbered from where it was set (Breakpoint::countFrom): earlier hits do not
// count and a hit condition stops at none of them, forward or backward; without a hit condition
// it stops anywhere. Breakpoints stopping at the same position are all reported.
TEST_F(ReplayerFixture, HitsAreNumberedFromCountFromAndEveryBreakpointStoppingThereIsReported) {
  auto program = mustCompile(kCalls);
  ASSERT_TRUE(program);
  open(program, 40, 8);
  std::string error;
  const uint32_t incN = statementOnLine(*program, 24);  // n := n + 1; step 0 of every cycle
  auto third = [](uint64_t hit) { return hit == 3; };
  replay::Breakpoint fromTenOne{incN, {}, third, Position{10, 1}};
  ASSERT_TRUE(replayer_->seek({0, 0}, error)) << error;
  std::optional<replay::Stop> stop = replayer_->continueForward({fromTenOne}, {}, error);
  ASSERT_TRUE(stop) << error;
  EXPECT_EQ(stop->position, (Position{13, 0})) << "hits 11:0, 12:0, 13:0";
  ASSERT_TRUE(replayer_->seek({30, 0}, error)) << error;
  stop = replayer_->reverseContinue({fromTenOne}, {}, error);
  ASSERT_TRUE(stop) << error;
  EXPECT_EQ(stop->position, (Position{13, 0}));
  ASSERT_TRUE(replayer_->seek({12, 0}, error)) << error;
  stop = replayer_->reverseContinue({fromTenOne}, {}, error);
  ASSERT_TRUE(stop) << error;
  EXPECT_EQ(stop->reason, replay::StopReason::Start) << "no third hit before 12:0 counted from 10:1";
  replay::Breakpoint fromTen{incN, {}, third, Position{10, 0}};
  ASSERT_TRUE(replayer_->seek({0, 0}, error)) << error;
  stop = replayer_->continueForward({fromTen}, {}, error);
  ASSERT_TRUE(stop) << error;
  EXPECT_EQ(stop->position, (Position{12, 0})) << "hits 10:0, 11:0, 12:0";
  replay::Breakpoint plain{incN, {}, {}, Position{10, 1}};
  ASSERT_TRUE(replayer_->seek({5, 3}, error)) << error;
  stop = replayer_->reverseContinue({plain}, {}, error);
  ASSERT_TRUE(stop) << error;
  EXPECT_EQ(stop->position, (Position{5, 0})) << "a breakpoint without a hit condition stops anywhere";
  // Two breakpoints on one statement: the first and the others.
  ASSERT_TRUE(replayer_->seek({0, 2}, error)) << error;
  const replay::Breakpoint any{incN, {}, {}, {}};
  stop = replayer_->continueForward({any, fromTen, any}, {}, error);
  ASSERT_TRUE(stop) << error;
  EXPECT_EQ(stop->position, (Position{1, 0}));
  EXPECT_EQ(stop->breakpoint, 0);
  EXPECT_EQ(stop->others, std::vector<int>{2}) << "the one numbered from 10:0 does not stop at 1:0";
}

// A live task paused at the end of the last recorded cycle: end() is that cycle's end, where a
// forward move that finds nothing ends, and a change there is found.
TEST_F(ReplayerFixture, TheEndCanBeTheLastCyclesEnd) {
  auto program = mustCompile(kCalls);
  ASSERT_TRUE(program);
  open(program, 70, 8);
  std::string error;
  const uint32_t last = replayer_->steps(69, error)->count();
  EXPECT_EQ(replayer_->end(), (Position{69, last - 1}));
  replayer_->setEndAtCycleEnd(true);
  EXPECT_EQ(replayer_->end(), (Position{69, last}));
  ASSERT_TRUE(replayer_->seek({69, last - 1}, error)) << error;
  std::optional<replay::Stop> stop = replayer_->stepIn({}, {}, error);
  ASSERT_TRUE(stop) << error;
  EXPECT_EQ(stop->position, (Position{69, last}));
  EXPECT_EQ(stop->reason, replay::StopReason::End);
  // The cycle's last statement, a := a MOD 100, changes a in some cycle: found at that cycle's end.
  auto a = findVariable(*program, "Main.a", error);
  ASSERT_TRUE(a) << error;
  const replay::Watch watch{a->offset, 2, -1};
  std::optional<Position> endChange;
  for (uint64_t c = 0; c < 70 && !endChange; ++c) {
    const uint32_t n = replayer_->steps(c, error)->count();
    ASSERT_TRUE(replayer_->seek({c, n - 1}, error)) << error;
    const std::vector<uint8_t> before(replayer_->vm().image() + a->offset, replayer_->vm().image() + a->offset + 2);
    ASSERT_TRUE(replayer_->seek({c, n}, error)) << error;
    if (!std::equal(before.begin(), before.end(), replayer_->vm().image() + a->offset)) endChange = Position{c, n};
  }
  ASSERT_TRUE(endChange);
  ASSERT_TRUE(replayer_->seek({endChange->cycle, endChange->step - 1}, error)) << error;
  stop = replayer_->continueForward({}, {watch}, error);
  ASSERT_TRUE(stop) << error;
  EXPECT_EQ(stop->position, *endChange);
  EXPECT_EQ(stop->reason, replay::StopReason::DataWrite);
  replayer_->setEndAtCycleEnd(false);
  EXPECT_EQ(replayer_->end(), (Position{69, last - 1}));
}

// lastChanges searches back in windows (the recent cycles, then the rest of each chunk): every
// count from anywhere, across window and chunk borders, against the values at every boundary.
TEST_F(ReplayerFixture, LastChangesAcrossWindowsAndChunks) {
  auto program = mustCompile(kCalls);
  ASSERT_TRUE(program);
  constexpr uint64_t kCycles = 150;
  open(program, kCycles, 100);
  std::string error;
  auto b = findVariable(*program, "Main.b", error);
  ASSERT_TRUE(b) << error;
  const replay::Watch watch{b->offset, 2, -1};
  std::vector<Position> changes;
  std::optional<int16_t> previous;
  for (uint64_t c = 0; c < kCycles; ++c) {
    const replay::CycleSteps s = *replayer_->steps(c, error);
    for (uint64_t q = 0; q <= s.count(); ++q) {
      ASSERT_TRUE(replayer_->seek({c, q}, error)) << error;
      int16_t v;
      std::memcpy(&v, replayer_->vm().image() + b->offset, 2);
      if (previous && v != *previous) changes.push_back({c, q});
      previous = v;
    }
  }
  ASSERT_GT(changes.size(), 40u);
  for (const Position at :
       {Position{149, 5}, Position{120, 0}, Position{100, 0}, Position{99, 2}, Position{60, 1}, Position{33, 0}}) {
    for (const size_t count : {size_t{1}, size_t{3}, size_t{20}, changes.size()}) {
      std::vector<Position> expected;
      for (auto it = changes.rbegin(); it != changes.rend() && expected.size() < count; ++it)
        if (*it < at) expected.push_back(*it);
      std::vector<Position> got;
      for (const replay::Change& c : replayer_->lastChanges(watch, at, count, error)) got.push_back(c.position);
      ASSERT_TRUE(error.empty()) << error;
      EXPECT_EQ(got, expected) << "before " << at.cycle << ":" << at.step << ", " << count << " changes";
    }
  }
}

TEST_F(ReplayerFixture, VerifyFindsNoDivergenceInAFaithfulTrace) {
  auto program = mustCompile(kCalls);
  ASSERT_TRUE(program);
  open(program, 100, 7);
  std::string error;
  uint64_t lastDone = 0, lastTotal = 0;
  const auto found = replayer_->verify(
      [&](uint64_t done, uint64_t total) {
        lastDone = done;
        lastTotal = total;
      },
      error);
  EXPECT_TRUE(error.empty()) << error;
  EXPECT_TRUE(found.empty()) << found.front().what;
  EXPECT_EQ(lastDone, 100u);
  EXPECT_EQ(lastTotal, 100u);
}

TEST(Replayer, OpeningWithAnotherProgramNamesBothHashes) {
  auto program = mustCompile(kCalls);
  ASSERT_TRUE(program);
  const TempTrace path("mismatch");
  recordCycles(program, path, 5, 4);
  std::string text = kCalls;
  text.replace(text.find("a MOD 100"), 9, "a MOD 101");
  auto other = mustCompile(text);
  ASSERT_TRUE(other);
  replay::ReplayOptions options;
  options.program = other;
  std::string error;
  EXPECT_FALSE(replay::Replayer::open(path.string(), options, error));
  EXPECT_NE(error.find(program->hash), std::string::npos) << error;
  EXPECT_NE(error.find(other->hash), std::string::npos) << error;
}

TEST(Replayer, CraftedTracesBeyondTheImageLimitAreRefusedWithTheSizes) {
  // docs/language.md, "Limits". The sources are compiled to at most the image the header
  // recorded, so sources crafted to declare more never get their image allocated.
  const std::pair<test::CraftedTrace, std::string> cases[] = {
      {test::CraftedTrace::ImageBeyondLimit,
       "the header claims an image of 4294967295 bytes; scanback's limit is 268435456 bytes (256 MiB)"},
      {test::CraftedTrace::HugeSources,
       "main.st:2:3: error: the image would need 268435464 bytes with global 'g0'; the trace recorded an image of 72 "
       "bytes"},
      {test::CraftedTrace::SourcesBeyondHeader,
       "main.st:1:9: error: the image would need 200000008 bytes with program instance 'Main'; the trace recorded an "
       "image of 72 bytes"},
      {test::CraftedTrace::ImageMismatch,
       "the program compiles differently from the recording: image 24 bytes and 1 statements recorded, 16 bytes and "
       "1 statements now"},
  };
  for (const auto& [kind, message] : cases) {
    const TempTrace path(test::craftedTraceName(kind));
    std::string error;
    ASSERT_TRUE(test::writeCraftedTrace(kind, path.string(), error)) << error;
    EXPECT_FALSE(replay::Replayer::open(path.string(), replay::ReplayOptions{}, error));
    EXPECT_NE(error.find(message), std::string::npos) << error;
  }
}

TEST(Replayer, TracesOfTheOldStringLayoutReplayOnlyWithoutStrings) {
  // docs/replayer.md, "Traces of older format versions".
  std::string error;
  const TempTrace withStrings(test::craftedTraceName(test::CraftedTrace::OldLayoutWithStrings));
  ASSERT_TRUE(test::writeCraftedTrace(test::CraftedTrace::OldLayoutWithStrings, withStrings.string(), error)) << error;
  EXPECT_FALSE(replay::Replayer::open(withStrings.string(), replay::ReplayOptions{}, error));
  EXPECT_NE(error.find("recorded by scanback 0.9-old-layout (trace format version 3), which stored a STRING as a "
                       "2-byte length and then its characters"),
            std::string::npos)
      << error;
  EXPECT_NE(error.find("replay it with scanback 0.9-old-layout"), std::string::npos) << error;
  const TempTrace without(test::craftedTraceName(test::CraftedTrace::OldLayoutWithoutStrings));
  ASSERT_TRUE(test::writeCraftedTrace(test::CraftedTrace::OldLayoutWithoutStrings, without.string(), error)) << error;
  std::unique_ptr<replay::Replayer> replayer = replay::Replayer::open(without.string(), replay::ReplayOptions{}, error);
  ASSERT_TRUE(replayer) << error;
  EXPECT_EQ(replayer->program().storesStrings(), false);
}

TEST(Replayer, AStepWithNowhereToGoEndsAtTheFaultTheRecordingEndsInNeverGoingBack) {
  // Faults in its third cycle, inside the call of F.
  auto program = mustCompile(
      "FUNCTION F : INT\nVAR_INPUT x : INT; END_VAR\nF := 10 / (3 - x);\nEND_FUNCTION\n"
      "PROGRAM Main\nVAR n : INT; r : INT; END_VAR\nn := n + 1;\nr := F(n);\nn := n + 0;\nEND_PROGRAM\n");
  ASSERT_TRUE(program);
  const TempTrace path("edge");
  recordCycles(program, path, 10, 4);
  std::string error;
  auto replayer = replay::Replayer::open(path.string(), {}, error);
  ASSERT_TRUE(replayer) << error;
  const std::optional<replay::Position> end = replayer->end();
  ASSERT_TRUE(end);
  ASSERT_TRUE(replayer->history().fault());
  // At `r := F(n);` of the faulting cycle: `next` has no later statement in this frame.
  ASSERT_TRUE(replayer->seek(replay::Position{end->cycle, 1}, error)) << error;
  std::optional<replay::Stop> stop = replayer->stepOver({}, {}, error);
  ASSERT_TRUE(stop) << error;
  EXPECT_EQ(stop->reason, replay::StopReason::End);
  EXPECT_EQ(stop->position, *end);
  fs::remove(path);
  // Two cycles, no fault: from the end of the last cycle (past its last statement) a continue stays.
  recordCycles(program, path, 2, 4);
  replayer = replay::Replayer::open(path.string(), {}, error);
  ASSERT_TRUE(replayer) << error;
  const replay::Position last = *replayer->end();
  ASSERT_TRUE(replayer->seek(replay::Position{last.cycle, last.step + 1}, error)) << error;
  stop = replayer->continueForward({}, {}, error);
  ASSERT_TRUE(stop) << error;
  EXPECT_EQ(stop->position, (replay::Position{last.cycle, last.step + 1}));
}

}  // namespace

// Every golden program: record it, then every sought position (random ones, each cycle's first
// and last boundary) equals a fresh run stopped there.
TEST(ReplayerGolden, SeekEqualsAFreshRunForEveryGoldenProgram) {
  size_t programs = 0, positions = 0;
  for (const test::GoldenCase& g : test::goldenCases()) {
    if (g.expectExit == 1 || g.expectExit == 2) continue;  // nothing runs
    SCOPED_TRACE(g.name);
    auto program = mustCompileSourceFiles(g.files, g.options);
    ASSERT_TRUE(program);
    std::optional<Stimulus> stimulus;
    std::string error;
    if (!g.inputs.empty()) {
      auto s = Stimulus::load(g.inputs, *program, error);
      ASSERT_TRUE(s) << error;
      stimulus = *s;
    }
    const uint64_t cycles = test::goldenCycles(g, program);
    const TempTrace path("golden_" + g.name);
    recordCycles(program, path, cycles, 3, stimulus);
    auto replayer = replay::Replayer::open(path.string(), {}, error);
    ASSERT_TRUE(replayer) << error;
    const uint64_t recorded = replayer->history().endCycle();
    ASSERT_GT(recorded, 0u);
    if (g.expectExit == 3) {
      EXPECT_TRUE(replayer->history().fault().has_value());
    }

    std::mt19937_64 rng(std::hash<std::string>{}(g.name));
    std::vector<Position> targets;
    for (uint64_t c = 0; c < recorded; ++c) {
      const replay::CycleSteps* s = replayer->steps(c, error);
      ASSERT_TRUE(s) << error;
      if (s->count() == 0) continue;
      if (c < 4 || c + 2 >= recorded || rng() % 8 == 0) {
        if (s->count() <= 64) {  // short cycles: every boundary
          for (uint64_t q = 0; q < s->count(); ++q) targets.push_back({c, q});
          continue;
        }
        targets.push_back({c, 0});
        targets.push_back({c, s->count() - 1});
        for (int k = 0; k < 8; ++k) targets.push_back({c, rng() % s->count()});
      }
    }
    std::sort(targets.begin(), targets.end());
    targets.erase(std::unique(targets.begin(), targets.end()), targets.end());
    std::optional<Stimulus> forLive = stimulus;
    const std::vector<Snapshot> live = liveSnapshots(program, targets, recorded, forLive ? &*forLive : nullptr);
    ASSERT_EQ(live.size(), targets.size());
    std::vector<size_t> order(targets.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::shuffle(order.begin(), order.end(), rng);
    for (size_t i : order) {
      ASSERT_TRUE(replayer->seek(targets[i], error)) << error;
      expectSame(live[i], snapshot(replayer->vm()), targets[i]);
    }
    for (const replay::Divergence& dv : replayer->divergences()) ADD_FAILURE() << dv.what;
    positions += targets.size();
    ++programs;
  }
  EXPECT_GT(programs, 70u);
  EXPECT_GT(positions, 1000u);
}

// The array kernels of bench/ (issue 17: INT indexes, index plus constant, FOR with step 1):
// every sought position equals a fresh run stopped there, across keyframes.
TEST(ReplayerGolden, SeekEqualsAFreshRunForTheArrayKernels) {
  for (const char* name : {"sort", "ring", "sieve"}) {
    SCOPED_TRACE(name);
    auto program = mustCompileSourceFiles(
        {(fs::path(SCANBACK_SOURCE_DIR) / "bench" / "programs" / (std::string(name) + ".st")).string()});
    ASSERT_TRUE(program);
    const TempTrace path(std::string("kernel_") + name);
    const uint64_t cycles = 5;
    recordCycles(program, path, cycles, 2);
    std::string error;
    auto replayer = replay::Replayer::open(path.string(), {}, error);
    ASSERT_TRUE(replayer) << error;
    ASSERT_EQ(replayer->history().endCycle(), cycles);
    std::mt19937_64 rng(42);
    std::vector<Position> targets;
    for (uint64_t c = 0; c < cycles; ++c) {
      const replay::CycleSteps* s = replayer->steps(c, error);
      ASSERT_TRUE(s) << error;
      ASSERT_GT(s->count(), 1000u);
      targets.push_back({c, 0});
      targets.push_back({c, s->count() - 1});
      for (int k = 0; k < 12; ++k) targets.push_back({c, rng() % s->count()});
    }
    std::sort(targets.begin(), targets.end());
    targets.erase(std::unique(targets.begin(), targets.end()), targets.end());
    const std::vector<Snapshot> live = liveSnapshots(program, targets, cycles, nullptr);
    ASSERT_EQ(live.size(), targets.size());
    std::vector<size_t> order(targets.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::shuffle(order.begin(), order.end(), rng);
    for (size_t i : order) {
      ASSERT_TRUE(replayer->seek(targets[i], error)) << error;
      expectSame(live[i], snapshot(replayer->vm()), targets[i]);
    }
    for (const replay::Divergence& dv : replayer->divergences()) ADD_FAILURE() << dv.what;
    // And the whole trace re-executed from its keyframes (`trace verify`).
    auto fresh = replay::Replayer::open(path.string(), {}, error);
    ASSERT_TRUE(fresh) << error;
    for (const replay::Divergence& dv : fresh->verify({}, error)) ADD_FAILURE() << dv.what;
    EXPECT_TRUE(error.empty()) << error;
    EXPECT_EQ(fresh->verifiedCycles(), cycles);
  }
}

// A trace still being written: the replayer opens the `.partial` file and follows it.
TEST(Replayer, FollowsATraceStillBeingRecorded) {
  auto program = mustCompile(kCalls);
  ASSERT_TRUE(program);
  const TempTrace path("growing");
  Runtime rt(program);
  recorder::RecorderOptions options;
  options.path = path.string();
  options.keyframeEvery = 10;
  std::string error;
  auto rec = recorder::Recorder::start(rt, options, error);
  ASSERT_TRUE(rec) << error;
  auto runTo = [&](uint64_t cycles) {
    while (rt.cycle() < cycles) ASSERT_EQ(rt.runCycle(), RunStatus::CycleDone);
  };
  runTo(25);
  // Once the writer has taken every record handed to it, the two complete chunks are in the file
  // (the last cycles stay staged on the scan thread's side).
  ASSERT_TRUE(rec->waitForWriter(0, std::chrono::seconds(10)));
  std::unique_ptr<replay::Replayer> replayer = replay::Replayer::open(path.string() + ".partial", {}, error);
  ASSERT_TRUE(replayer) << error;
  ASSERT_EQ(replayer->history().endCycle(), 20u);  // two complete chunks
  EXPECT_FALSE(replayer->seek({30, 0}, error));
  runTo(55);
  ASSERT_TRUE(rec->waitForWriter(0, std::chrono::seconds(10)));
  EXPECT_TRUE(replayer->refresh());
  EXPECT_EQ(replayer->history().endCycle(), 50u);
  ASSERT_TRUE(replayer->seek({45, 2}, error)) << error;
  EXPECT_TRUE(replayer->divergences().empty());
  ASSERT_TRUE(rec->finish(error)) << error;
}

// A task paused inside a cycle: the recording up to it plus the cycle under way replay up to
// the paused position, which is the end, and equal the live state there at every step.
TEST(Replayer, OpenCycleReplaysUpToWhereTheLiveTaskIsPaused) {
  auto program = mustCompile(kCalls);
  ASSERT_TRUE(program);
  const TempTrace path("open-cycle");
  Runtime rt(program);
  recorder::RecorderOptions options;
  options.path = path.string();
  options.keyframeEvery = 16;
  std::string error;
  auto rec = recorder::Recorder::start(rt, options, error);
  ASSERT_TRUE(rec) << error;
  while (rt.cycle() < 40) ASSERT_EQ(rt.runCycle(), RunStatus::CycleDone);
  // Cycle 40, with a debugger write among its scan inputs, paused at step 3 and later at step 7.
  auto b = findVariable(*program, "Main.b", error);
  ASSERT_TRUE(b) << error;
  rt.queueWrite(ExternalWrite{b->offset, -1, {0x34, 0x12}});
  uint64_t cycle = 40;
  std::vector<Position> pauses{{40, 3}, {40, 7}};
  PauseAtPositions pause(pauses, cycle);
  rt.vm().setObserver(&pause);
  rt.startCycle();
  std::unique_ptr<replay::Replayer> replayer;
  for (const Position& at : pauses) {
    ASSERT_EQ(rt.run(), RunStatus::Paused);
    ++pause.next_;
    const recorder::SyncResult synced = rec->sync();
    ASSERT_TRUE(synced.ok) << synced.error;
    ASSERT_EQ(synced.endCycle, 40u);
    if (!replayer) {
      replayer = replay::Replayer::open(path.string() + ".partial", {}, error);
      ASSERT_TRUE(replayer) << error;
    }
    replayer->refresh();
    EXPECT_EQ(replayer->history().endCycle(), replayer->history().hasOpenChunk() ? 41u : 40u);
    replay::OpenCycle open;
    open.cycle = 40;
    open.task = rt.currentCycle().task;
    open.startNs = rt.currentCycle().startNs;
    open.keyframe = synced.image;
    recorder::CycleInputs inputs = rec->currentInputs();
    open.inputChanges = std::move(inputs.inputChanges);
    open.writes = std::move(inputs.writes);
    open.untilStep = at.step;
    replayer->setOpenCycle(&open);
    ASSERT_EQ(replayer->end(), at);
    ASSERT_TRUE(replayer->seek(at, error)) << error;
    expectSame(snapshot(rt.vm()), snapshot(replayer->vm()), at);
    EXPECT_FALSE(replayer->seek(Position{40, at.step + 1}, error)) << "past the live position";
    error.clear();
    // Forward moves end there: the live edge.
    ASSERT_TRUE(replayer->seek(Position{39, 0}, error)) << error;
    const std::optional<replay::Stop> edge = replayer->continueForward({}, {}, error);
    ASSERT_TRUE(edge) << error;
    EXPECT_EQ(edge->position, at);
    EXPECT_EQ(edge->reason, replay::StopReason::End);
    // And back from it step by step, through the cycle's start into the recorded ones.
    ASSERT_TRUE(replayer->seek(at, error)) << error;
    for (uint64_t k = at.step; k-- > 0;) {
      const std::optional<replay::Stop> back = replayer->stepBack({}, error);
      ASSERT_TRUE(back) << error;
      if (back->position.cycle != 40) break;
    }
    EXPECT_LE(replayer->position().cycle, 40u);
  }
  // A breakpoint in the open cycle is found going back from its end.
  const uint32_t callC1 = statementOnLine(*program, 26);  // c1(step := n MOD 5);
  ASSERT_TRUE(replayer->seek(Position{40, 7}, error)) << error;
  const std::optional<replay::Stop> hit =
      replayer->reverseContinue({replay::Breakpoint{callC1, {}, {}, {}}}, {}, error);
  ASSERT_TRUE(hit) << error;
  EXPECT_EQ(hit->reason, replay::StopReason::Breakpoint);
  EXPECT_EQ(hit->position.cycle, 40u);

  // The task goes on: once the cycle is recorded, the open one gives way to it.
  rt.vm().setObserver(nullptr);
  ASSERT_EQ(rt.run(), RunStatus::CycleDone);
  while (rt.cycle() < 45) ASSERT_EQ(rt.runCycle(), RunStatus::CycleDone);
  ASSERT_TRUE(rec->sync().ok);
  ASSERT_TRUE(replayer->refresh());
  EXPECT_EQ(replayer->history().endCycle(), 45u);
  EXPECT_FALSE(replayer->history().hasOpenChunk());
  ASSERT_TRUE(replayer->seek(Position{40, 9}, error)) << error;
  const std::vector<replay::Divergence> divergences = replayer->verify({}, error);
  EXPECT_TRUE(error.empty()) << error;
  EXPECT_TRUE(divergences.empty()) << divergences.front().what;
  ASSERT_TRUE(rec->finish(error)) << error;
}

// Replaying never touches the live VM, runs on any thread, and replayers share one program.
TEST(Replayer, ReplayersShareOneProgramOnSeveralThreads) {
  auto program = mustCompile(kCalls);
  ASSERT_TRUE(program);
  const TempTrace path("threads");
  recordCycles(program, path, 200, 16);
  replay::ReplayOptions options;
  options.program = program;
  std::vector<std::vector<uint8_t>> results[2];
  auto work = [&](int which) {
    std::string error;
    auto replayer = replay::Replayer::open(path.string(), options, error);
    ASSERT_TRUE(replayer) << error;
    std::mt19937_64 rng(99);  // the same positions on both threads
    for (int i = 0; i < 60; ++i) {
      const uint64_t cycle = rng() % 200;
      ASSERT_TRUE(replayer->seek({cycle, 3}, error)) << error;
      results[which].emplace_back(replayer->vm().image(), replayer->vm().image() + replayer->vm().imageSize());
    }
    EXPECT_TRUE(replayer->divergences().empty());
  };
  std::thread a(work, 0), b(work, 1);
  a.join();
  b.join();
  EXPECT_EQ(results[0].size(), 60u);
  EXPECT_TRUE(results[0] == results[1]);
}

TEST(Replayer, CheckpointsStayWithinTheBudget) {
  auto program = mustCompile(kCalls);
  ASSERT_TRUE(program);
  const TempTrace path("budget");
  recordCycles(program, path, 400, 200);
  std::string error;
  // What one checkpoint costs (the image and its bookkeeping), from an unlimited replayer.
  uint64_t each = 0;
  {
    auto unlimited = replay::Replayer::open(path.string(), {}, error);
    ASSERT_TRUE(unlimited) << error;
    ASSERT_TRUE(unlimited->seek({150, 1}, error)) << error;
    ASSERT_GT(unlimited->checkpointCount(), 0u);
    each = unlimited->checkpointBytes() / unlimited->checkpointCount();
    EXPECT_GT(each, uint64_t{program->imageSize()});
  }
  replay::ReplayOptions options;
  options.checkpointBudgetBytes = each * 12;
  auto replayer = replay::Replayer::open(path.string(), options, error);
  ASSERT_TRUE(replayer) << error;
  std::mt19937_64 rng(3);
  for (int i = 0; i < 100; ++i) {
    ASSERT_TRUE(replayer->seek({rng() % 400, 1}, error)) << error;
    EXPECT_LE(replayer->checkpointBytes(), options.checkpointBudgetBytes);
  }
  EXPECT_GT(replayer->checkpointCount(), 6u);
}
