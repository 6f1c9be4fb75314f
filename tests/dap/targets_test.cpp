// The parts every target is built from, on their own: the state machine (RunControl: moves,
// pauses, the generation rule) and the stop checker (breakpoints with conditions, hit counts and
// logpoints, data watches; live at every boundary, and as a replayer's search terms).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "dap/targets/run_control.h"
#include "dap/targets/stop_checker.h"
#include "tests/vm/test_support.h"

namespace scanback::dap {
namespace {

using namespace std::chrono_literals;

// Remembers what a target reports.
class Reports final : public TargetListener {
 public:
  void stopped(const StopInfo& stop) override {
    std::lock_guard lock(mutex_);
    stops.push_back(stop);
  }
  void output(std::string_view, const std::string& text) override {
    std::lock_guard lock(mutex_);
    outputs.push_back(text);
  }
  void exited(int) override {}
  std::vector<StopInfo> stops;
  std::vector<std::string> outputs;

 private:
  std::mutex mutex_;
};

std::shared_ptr<StopSet> stopSet(uint64_t generation) {
  auto s = std::make_shared<StopSet>();
  s->generation = generation;
  return s;
}

// A RunControl whose thread hands each move to the test and publishes what the test says.
class DapRunControl : public ::testing::Test {
 protected:
  void TearDown() override { control_.terminate(); }
  // Starts the thread; each move it takes is queued for nextMoveTaken().
  void start() {
    ASSERT_TRUE(control_.start(Move::start(false), [this] {
      while (std::optional<Move> move = control_.nextMove()) {
        std::lock_guard lock(mutex_);
        moves_.push_back(*move);
        taken_.notify_all();
      }
    }));
  }
  Move nextMoveTaken() {
    std::unique_lock lock(mutex_);
    EXPECT_TRUE(taken_.wait_for(lock, 10s, [&] { return !moves_.empty(); }));
    if (moves_.empty()) return Move{};
    const Move m = moves_.front();
    moves_.erase(moves_.begin());
    return m;
  }

  Reports reports_;
  RunControl control_{reports_};
  std::mutex mutex_;
  std::condition_variable taken_;
  std::vector<Move> moves_;
};

TEST_F(DapRunControl, AMoveRunsUntilItsStopIsPublishedAndTheNextWaitsForPost) {
  EXPECT_EQ(control_.state(), RunControl::State::Configuring);
  EXPECT_FALSE(control_.post(Move::resumed(ResumeKind::Next, 0))) << "nothing to resume before the start";
  start();
  EXPECT_EQ(nextMoveTaken().kind, Move::Kind::Start);
  EXPECT_EQ(control_.state(), RunControl::State::Running);
  EXPECT_EQ(control_.publish(StopInfo{StopReason::Step, 1}, 0, {}), RunControl::Published::Stopped);
  EXPECT_TRUE(control_.paused());
  ASSERT_EQ(reports_.stops.size(), 1u);
  EXPECT_EQ(control_.lastStop()->task, 1u);
  EXPECT_FALSE(control_.pause(0)) << "paused already: no stop follows";
  EXPECT_TRUE(control_.post(Move::resumed(ResumeKind::StepOut, 1)));
  const Move m = nextMoveTaken();
  EXPECT_EQ(m.resume, ResumeKind::StepOut);
  EXPECT_TRUE(m.isStep());
  EXPECT_FALSE(control_.lastStop()) << "a move clears the last stop";
  EXPECT_FALSE(control_.post(Move::resumed(ResumeKind::Next, 0))) << "running: the move under way goes on";
}

TEST_F(DapRunControl, APauseIsOneFlagForTheTaskAskedAboutAndEndsAtTheStop) {
  start();
  nextMoveTaken();
  EXPECT_TRUE(control_.pause(2));
  EXPECT_TRUE(control_.pauseRequested());
  EXPECT_TRUE(control_.pauseRequestedFor(2));
  EXPECT_FALSE(control_.pauseRequestedFor(0));
  EXPECT_TRUE(control_.pauseFlag().load()) << "what a replayer's search checks";
  EXPECT_TRUE(control_.sleepUntil(std::chrono::steady_clock::now() + 10s)) << "a pause cuts a wait short";
  control_.publish(StopInfo{StopReason::Pause, 2}, 0, {});
  EXPECT_FALSE(control_.pauseRequested());
}

TEST_F(DapRunControl, ABreakpointOfAReplacedSetGoesOnOrStopsAsAStepOrAPause) {
  start();
  nextMoveTaken();
  control_.setStops(stopSet(2));
  const StopInfo hit{StopReason::Breakpoint, 0, {7}};
  // Live, running on: dropped, nothing reported.
  EXPECT_EQ(control_.publish(hit, 1, {.mayGoOn = true, .pauseWins = false}), RunControl::Published::GoOn);
  EXPECT_TRUE(reports_.stops.empty());
  // A move that has to end somewhere: a step, without the old ids.
  EXPECT_EQ(control_.publish(hit, 1, {}), RunControl::Published::Stopped);
  EXPECT_EQ(reports_.stops.back().reason, StopReason::Step);
  EXPECT_TRUE(reports_.stops.back().breakpointIds.empty());
  // With a pause asked for: a pause.
  control_.post(Move::resumed(ResumeKind::Continue, 0));
  nextMoveTaken();
  control_.pause(0);
  EXPECT_EQ(control_.publish(hit, 1, {.mayGoOn = true, .pauseWins = false}), RunControl::Published::Stopped);
  EXPECT_EQ(reports_.stops.back().reason, StopReason::Pause);
  // Found with the current set: reported as it is.
  control_.post(Move::resumed(ResumeKind::Continue, 0));
  nextMoveTaken();
  EXPECT_EQ(control_.publish(hit, 2, {.mayGoOn = true, .pauseWins = false}), RunControl::Published::Stopped);
  EXPECT_EQ(reports_.stops.back().reason, StopReason::Breakpoint);
  EXPECT_EQ(reports_.stops.back().breakpointIds, std::vector<int64_t>{7});
}

TEST_F(DapRunControl, APauseWinsOverAnyStopButAFaultWhenTheMoveSaysSo) {
  start();
  nextMoveTaken();
  control_.pause(0);
  control_.publish(StopInfo{StopReason::Breakpoint, 0, {3}}, 0, {.mayGoOn = false, .pauseWins = true});
  EXPECT_EQ(reports_.stops.back().reason, StopReason::Pause);
  control_.post(Move::resumed(ResumeKind::Continue, 0));
  nextMoveTaken();
  control_.pause(0);
  control_.publish(StopInfo{StopReason::Exception, 0, {}, "division by zero"}, 0,
                   {.mayGoOn = false, .pauseWins = true});
  EXPECT_EQ(reports_.stops.back().reason, StopReason::Exception);
}

TEST_F(DapRunControl, TerminateEndsTheThreadAndNothingIsReportedAfter) {
  start();
  nextMoveTaken();
  control_.terminate();
  EXPECT_TRUE(control_.finished());
  EXPECT_TRUE(control_.terminating());
  EXPECT_EQ(control_.publish(StopInfo{StopReason::Step, 0}, 0, {}), RunControl::Published::Terminating);
  EXPECT_TRUE(reports_.stops.empty());
  EXPECT_FALSE(control_.finish()) << "the end of the program is not reported either";
  EXPECT_TRUE(control_.sleepUntil(std::chrono::steady_clock::now() + 10s));
}

TEST_F(DapRunControl, SetStopsRunsItsWorkWhileTheThreadIsParkedOnly) {
  int parkedCalls = 0;
  auto count = [&](const std::shared_ptr<const StopSet>&) { ++parkedCalls; };
  control_.setStops(stopSet(1), count);  // configuring
  start();
  nextMoveTaken();
  control_.setStops(stopSet(2), count);  // running: not now
  EXPECT_EQ(control_.stopsGeneration(), 2u);
  control_.publish(StopInfo{StopReason::Step, 0}, 2, {});
  control_.setStops(stopSet(3), count);  // paused
  EXPECT_EQ(parkedCalls, 2);
  EXPECT_EQ(control_.stops()->generation, 3u);
}

// ---------------------------------------------------------------- the stop checker

// count's initial value is found in the image by its bytes: the watch needs no name resolver.
const char* kCounting = R"(PROGRAM Main
VAR
  count : DINT := 305419896;
  other : INT := 4321;
END_VAR
count := count + 1;
other := other + 1;
END_PROGRAM
)";
constexpr uint32_t kLineCount = 6, kLineOther = 7;

uint32_t offsetOfInitialCount(const Vm& vm) {
  const uint32_t marker = 305419896;
  for (uint32_t at = 0; at + sizeof marker <= vm.imageSize(); ++at)
    if (std::memcmp(vm.image() + at, &marker, sizeof marker) == 0) return at;
  ADD_FAILURE() << "count is not in the image";
  return 0;
}

// Runs cycles of a program with the checker asked at every statement boundary, as a live task does.
class DapStopChecker : public ::testing::Test, private VmObserver {
 protected:
  void SetUp() override {
    program_ = test::mustCompile(kCounting);
    ASSERT_TRUE(program_);
    vm_ = std::make_unique<Vm>(program_);
    vm_->setObserver(this);
    countAt_ = offsetOfInitialCount(*vm_);
  }
  std::shared_ptr<ResolvedBreakpoint> breakpoint(int64_t id, uint32_t line) {
    auto bp = std::make_shared<ResolvedBreakpoint>();
    bp->id = id;
    bp->statement = test::statementOnLine(*program_, line);
    return bp;
  }
  std::shared_ptr<ResolvedBreakpoint> logpoint(int64_t id, uint32_t line, std::string message) {
    auto bp = breakpoint(id, line);
    bp->logMessage = [message](const Vm&) { return message; };
    return bp;
  }
  // A breakpoint whose condition cannot be evaluated (`error`).
  std::shared_ptr<ResolvedBreakpoint> broken(int64_t id, uint32_t line, std::string error) {
    auto bp = breakpoint(id, line);
    bp->condition = [error](const Vm&, std::string& why) -> std::optional<bool> {
      why = error;
      return std::nullopt;
    };
    return bp;
  }
  DataWatch countWatch(int64_t id) const {
    DataWatch watch;
    watch.id = id;
    watch.offset = countAt_;
    watch.size = 4;
    return watch;
  }
  void use(std::shared_ptr<StopSet> set) {
    set->program = program_;
    set->statementHasBreakpoint.assign(program_->statements.size(), 0);
    for (const auto& bp : set->breakpoints) set->statementHasBreakpoint[bp->statement] = 1;
    checker_.take(set, vm_.get());
  }
  // Runs one cycle; the stops it met, with the cycle and step each was at (the end of the cycle:
  // its step count).
  void cycle() {
    vm_->beginCycle(0, static_cast<int64_t>(cycle_) * 10'000'000);
    EXPECT_EQ(vm_->run(), RunStatus::CycleDone);
    std::optional<StopInfo::DataChange> change;
    if (std::vector<int64_t> ids = checker_.atCycleEnd(*vm_, last_, change); !ids.empty()) {
      StopInfo stop{StopReason::DataBreakpoint, 0, std::move(ids), checker_.describe(*vm_, *change)};
      stop.change = change;
      stops_.push_back({cycle_, vm_->steps(), stop});
    }
    ++cycle_;
  }
  bool onStatement(uint32_t statement, uint64_t step) override {
    const uint32_t previous = std::exchange(last_, statement);
    if (std::optional<StopInfo> stop = checker_.atStatement(*vm_, statement, step, previous))
      stops_.push_back({cycle_, step, *stop});
    return false;
  }

  struct Seen {
    uint64_t cycle = 0, step = 0;
    StopInfo stop;
  };
  Reports reports_;
  StopChecker checker_{reports_};
  uint32_t last_ = UINT32_MAX;  // the statement of the last boundary: the writer of a change seen next
  std::shared_ptr<const Program> program_;
  std::unique_ptr<Vm> vm_;
  uint32_t countAt_ = 0;
  uint64_t cycle_ = 0;
  std::vector<Seen> stops_;
};

TEST_F(DapStopChecker, HitConditionsCountHitsWhileLogpointsPrintAndABrokenConditionSaysSoOnce) {
  auto set = stopSet(1);
  auto everyOther = breakpoint(1, kLineCount);
  everyOther->hitCondition = [](uint64_t hit) { return hit % 2 == 0; };
  set->breakpoints = {everyOther, logpoint(2, kLineOther, "passing other"), broken(3, kLineOther, "no such variable")};
  use(set);
  for (int i = 0; i < 4; ++i) cycle();
  ASSERT_EQ(stops_.size(), 2u);
  EXPECT_EQ(stops_[0].cycle, 1u);
  EXPECT_EQ(stops_[1].cycle, 3u);
  for (const Seen& s : stops_) {
    EXPECT_EQ(s.stop.reason, StopReason::Breakpoint);
    EXPECT_EQ(s.stop.breakpointIds, std::vector<int64_t>{1});
  }
  EXPECT_EQ(everyOther->hits, 4u);
  EXPECT_EQ(std::count(reports_.outputs.begin(), reports_.outputs.end(), "passing other\n"), 4);
  EXPECT_EQ(std::count_if(reports_.outputs.begin(), reports_.outputs.end(),
                          [](const std::string& o) { return o.find("no such variable") != std::string::npos; }),
            1);
}

// Where the replayer reports a change (docs/replayer.md): right after the statement that made it,
// at step 0 when the scan inputs made it, at the end of the cycle when its last statement did.
TEST_F(DapStopChecker, ADataWatchStopsAfterTheStatementOrScanInputsThatChangedItAsTheReplayerDoes) {
  auto set = stopSet(1);
  DataWatch watch = countWatch(9);
  // The name the stop's description gives it (and the type its values are shown as).
  const std::string name = program_->instances.at(0).name + ".count";
  watch.name = name;
  const std::string file = std::filesystem::path(program_->sources.file(0).path).filename().string();
  set->dataWatches = {watch};
  use(set);
  cycle();
  ASSERT_EQ(stops_.size(), 1u);
  EXPECT_EQ(stops_[0].stop.description, fmt::format("{}: 305419896 \u2192 305419897 ({}:{})", name, file, kLineCount));
  EXPECT_EQ(stops_[0].step, 1u) << "the boundary after the statement that wrote it";
  EXPECT_EQ(stops_[0].stop.reason, StopReason::DataBreakpoint);
  EXPECT_EQ(stops_[0].stop.breakpointIds, std::vector<int64_t>{9});
  // A scan input writes it before the next cycle: a change at step 0, then the statement's.
  const int32_t fromOutside = 7;
  std::memcpy(vm_->image() + countAt_, &fromOutside, sizeof fromOutside);
  cycle();
  ASSERT_EQ(stops_.size(), 3u);
  EXPECT_EQ(stops_[1].cycle, 1u);
  EXPECT_EQ(stops_[1].step, 0u) << "the scan inputs'";
  EXPECT_EQ(stops_[2].step, 1u);
  // Each stop says what changed, from what to what, and who wrote it (issue 31).
  EXPECT_EQ(stops_[1].stop.description, name + ": 305419897 \u2192 7 (scan inputs)");
  EXPECT_EQ(stops_[2].stop.description, fmt::format("{}: 7 \u2192 8 ({}:{})", name, file, kLineCount));
  ASSERT_TRUE(stops_[2].stop.change);
  EXPECT_EQ(stops_[2].stop.change->statement, test::statementOnLine(*program_, kLineCount));
  // The values seen from are taken again (a debugger's own write): no change to stop at.
  const int32_t debugger = 100;
  std::memcpy(vm_->image() + countAt_, &debugger, sizeof debugger);
  checker_.rebase(vm_->image(), vm_->imageSize());
  cycle();
  ASSERT_EQ(stops_.size(), 4u);
  EXPECT_EQ(stops_[3].step, 1u);
  // The last statement of the cycle writes `other`: seen at the end of the cycle (step 2), not at
  // the next cycle's step 0, where it would be the scan inputs'.
  DataWatch other;
  other.id = 10;
  other.size = 2;
  const uint16_t marker = 4321;  // its initial value
  const Vm initial(program_);
  for (other.offset = 0; other.offset + 2 <= initial.imageSize(); ++other.offset)
    if (std::memcmp(initial.image() + other.offset, &marker, 2) == 0) break;
  ASSERT_LE(other.offset + 2, initial.imageSize()) << "other is not in the image";
  set = stopSet(2);
  set->dataWatches = {other};
  use(set);
  stops_.clear();
  cycle();
  cycle();
  ASSERT_EQ(stops_.size(), 2u);
  for (const Seen& seen : stops_) {
    EXPECT_EQ(seen.step, 2u) << "the end of cycle " << seen.cycle;
    EXPECT_EQ(seen.stop.breakpointIds, std::vector<int64_t>{10});
  }
  // One bit of it: only a change of that bit stops.
  DataWatch bit = watch;
  bit.bit = 4;
  bit.size = 1;
  set = stopSet(3);
  set->dataWatches = {bit};
  use(set);
  const size_t before = stops_.size();
  for (int i = 0; i < 16; ++i) cycle();
  EXPECT_EQ(stops_.size() - before, 1u) << "count goes from 103 to 119: bit 4 turns on at 112, once";
}

TEST_F(DapStopChecker, InReplayTheSameStopsAreSearchTermsAndTheReplayersStopsMapBackToIds) {
  auto set = stopSet(1);
  const auto printing = logpoint(2, kLineOther, "passing other");
  set->breakpoints = {breakpoint(1, kLineCount), printing, broken(3, kLineOther, "cannot evaluate")};
  set->dataWatches = {countWatch(9)};
  use(set);

  const StopChecker::Search forward = checker_.search(*program_, true);
  ASSERT_EQ(forward.breakpoints.size(), 3u) << "the two that stop, then the logpoint";
  ASSERT_EQ(forward.watches.size(), 1u);
  EXPECT_EQ(forward.watches[0].offset, countAt_);
  const replay::Position at{0, 1};
  EXPECT_EQ(forward.ids(replay::Stop{at, replay::StopReason::Breakpoint, 0, {}, {}, {}}), std::vector<int64_t>{1});
  EXPECT_EQ(forward.ids(replay::Stop{at, replay::StopReason::Breakpoint, 1, {}, {}, {}}), std::vector<int64_t>{3});
  EXPECT_EQ(forward.logpoint(replay::Stop{at, replay::StopReason::Breakpoint, 2, {}, {}, {}}), printing.get());
  EXPECT_EQ(forward.logpoint(replay::Stop{at, replay::StopReason::Breakpoint, 0, {}, {}, {}}), nullptr);
  EXPECT_EQ(forward.ids(replay::Stop{at, replay::StopReason::DataWrite, 0, {}, {}, {}}), std::vector<int64_t>{9});
  // A condition that cannot be evaluated does not hold, and says so once.
  ASSERT_TRUE(forward.breakpoints[1].condition);
  EXPECT_FALSE(forward.breakpoints[1].condition(*vm_));
  EXPECT_FALSE(forward.breakpoints[1].condition(*vm_));
  EXPECT_EQ(reports_.outputs.size(), 1u);

  EXPECT_EQ(checker_.search(*program_, false).breakpoints.size(), 2u) << "no logpoints but for a forward continue";
  const std::shared_ptr<const Program> other = test::mustCompile(kCounting);
  EXPECT_TRUE(checker_.search(*other, true).breakpoints.empty()) << "resolved for another program: none of ours";
}

}  // namespace
}  // namespace scanback::dap
