// The one stop checker: what a StopSet stops at — breakpoints with their conditions, hit counts
// and logpoints, and data breakpoints — checked the same way live and in replay.
//
// Live, it is asked at every statement boundary (atStatement). In replay the replayer searches
// history for the same stops, so the checker hands it the breakpoints and watches in its terms
// (search()) and turns what the replayer found back into the session's ids. Either way a
// condition is evaluated by holds() (an error is reported once and does not stop), a logpoint
// prints through log(), and a data breakpoint compares one Watch (vm/runtime/watch.h).
//
// Hit counts: live, a breakpoint's hits are counted since it was set (its ResolvedBreakpoint's
// counter, from the position the live task took it at: countedFrom); in replay, a hit's number is
// its place in the recording from countedFrom, or from the recording's start (the replayer's
// count, docs/replayer.md), so a search stops where the live task stopped, or where a breakpoint
// set before the recording began would have stopped, whichever way it goes.
//
// Data watches compare values at every statement boundary and at the end of each cycle, as the
// replayer does: a change is reported right after the statement that made it, at the end of the
// cycle when its last statement made it, at step 0 when the cycle's scan inputs made it.
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "dap/targets/target.h"
#include "replayer/replayer.h"

namespace scanback::dap {

class StopChecker {
 public:
  explicit StopChecker(TargetListener& listener) : listener_(listener), stops_(std::make_shared<StopSet>()) {}

  // Takes a new set. `vm`: where a live task is now, whose watched values a change is seen from.
  void take(std::shared_ptr<const StopSet> stops, const Vm* vm = nullptr);
  // Live: the watched values a change is seen from are read again from `image` (where the task
  // is, with the writes the next cycle start applies: the debugger's own are no change to stop at).
  void rebase(const uint8_t* image, uint32_t imageSize);
  // Live: the breakpoints of the set that no live task has counted hits of yet count them from
  // position (`cycle`, `step`) on (ResolvedBreakpoint::countedFrom).
  void countHitsFrom(uint64_t cycle, uint64_t step) const;
  const StopSet& stops() const { return *stops_; }
  uint64_t generation() const { return stops_->generation; }
  // Whether the set's statement ids and offsets are those of `program` (or it resolves none).
  bool resolvedFor(const Program& program) const { return !stops_->program || stops_->program.get() == &program; }

  // Whether `bp`'s condition holds at `vm` (true without one). One that cannot be evaluated does
  // not hold, and the first such error of the breakpoint is reported.
  bool holds(const ResolvedBreakpoint& bp, const Vm& vm) const;
  // Prints a logpoint's message, evaluated at `vm`.
  void log(const ResolvedBreakpoint& bp, const Vm& vm) const;

  // ---- live: at the boundary before `statement` of the cycle, with the set resolved for the
  // running program. The breakpoints on the statement first (their hit counts move and logpoints
  // print whether or not something stops here), then the data watches: a change since the last
  // boundary was made by the statement before this one (at step 0, by the cycle's scan inputs).
  // Nullopt when nothing stops.
  // `step` is the boundary's (0: before the cycle's first statement, after its scan inputs), and
  // `previous` the statement that ran since the last boundary (the writer of a change seen here).
  std::optional<StopInfo> atStatement(const Vm& vm, uint32_t statement, uint64_t step, uint32_t previous);
  // After a cycle ran to its end: the data watches its last statement (`last`) changed (empty:
  // none), and the first one's change in `change`.
  std::vector<int64_t> atCycleEnd(const Vm& vm, uint32_t last, std::optional<StopInfo::DataChange>& change);

  // The description of a data breakpoint stop at `vm`: the watch's name, its value before and
  // now, and the writing statement's file and line ("gMotor.run: FALSE → TRUE (programs.st:119)",
  // "… (scan inputs)"). Empty when the watch is not in the set.
  std::string describe(const Vm& vm, const StopInfo::DataChange& change) const;
  // Whether atStatement() has anything to look at there (asked first: most statements have not).
  bool watches(uint32_t statement) const {
    return !widths_.empty() ||
           (statement < stops_->statementHasBreakpoint.size() && stops_->statementHasBreakpoint[statement]);
  }
  // Whether the set has data watches (live: the end of each cycle is checked too).
  bool watchesData() const { return !widths_.empty(); }

  // ---- replay: the same stops as a replayer's search looks for them.
  struct Search {
    // Those that stop, then (withLogpoints) the logpoints, which print as a search passes them.
    std::vector<replay::Breakpoint> breakpoints;
    std::vector<replay::Watch> watches;
    // Whether a stop of the replayer is a logpoint's (then only logpoints stop there: print them
    // with log() and go on).
    const ResolvedBreakpoint* logpoint(const replay::Stop& stop) const;
    // Every logpoint that stops at a replayer's stop (with a breakpoint that stops there too, they
    // print as the live task prints them).
    std::vector<const ResolvedBreakpoint*> logpoints(const replay::Stop& stop) const;
    // The session's breakpoint or data breakpoint ids of a replayer's stop (every breakpoint that
    // stops there, logpoints aside).
    std::vector<int64_t> ids(const replay::Stop& stop) const;

   private:
    friend class StopChecker;
    std::vector<int64_t> breakpointIds_;  // per breakpoint that stops
    std::vector<const ResolvedBreakpoint*> logpoints_;
    std::vector<int64_t> watchIds_;
  };
  // For a replayer over `program`: none when the set is resolved for another program.
  Search search(const Program& program, bool withLogpoints) const;

 private:
  TargetListener& listener_;
  std::shared_ptr<const StopSet> stops_;
  // Live: per data watch, the value at the last boundary (one flat buffer; at_[i] is watch i's).
  std::vector<uint8_t> watched_;
  std::vector<size_t> at_;
  std::vector<uint32_t> widths_;

  // The ids of the data watches whose value differs from the last one seen (which they then take),
  // and the first one's value before in `change`.
  std::vector<int64_t> changedWatches(const uint8_t* image, std::optional<StopInfo::DataChange>& change);
};

}  // namespace scanback::dap
