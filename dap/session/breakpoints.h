// The breakpoints of a session: resolved to statements, with conditions, hit conditions and
// logpoints compiled, versioned by generation, and handed to the target as one immutable StopSet.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "dap/protocol/protocol.h"
#include "dap/session/sources.h"
#include "dap/targets/target.h"

namespace scanback::dap {

// "N" (the same as ">=N"), "=N", "==N", ">=N", ">N", "%N" (every Nth hit). Nullopt with `error`
// for anything else.
std::optional<std::function<bool(uint64_t)>> parseHitCondition(const std::string& text, std::string& error);

class BreakpointManager {
 public:
  explicit BreakpointManager(const Program& program) : program_(program) {}

  // Replaces every breakpoint of `file`; the response's breakpoints, in request order.
  std::vector<Breakpoint> set(const SourceMap& sources, FileId file, const std::vector<SourceBreakpoint>& requested);
  // Replaces every data breakpoint.
  void setDataWatches(std::vector<DataWatch> watches) { dataWatches_ = std::move(watches); }
  // An id for a new breakpoint of any kind (unique within the session).
  int64_t newId() { return nextId_++; }
  void setStopOnFaults(bool on) { stopOnFaults_ = on; }
  bool stopOnFaults() const { return stopOnFaults_; }

  // The set to hand to the target: a new generation each time.
  std::shared_ptr<const StopSet> stopSet();
  uint64_t generation() const { return generation_; }
  // Whether any breakpoint, logpoint aside, or data breakpoint is set.
  bool anyActive() const;

 private:
  const Program& program_;
  std::map<FileId, std::vector<std::shared_ptr<ResolvedBreakpoint>>> byFile_;
  std::vector<DataWatch> dataWatches_;
  bool stopOnFaults_ = true;
  int64_t nextId_ = 1;
  uint64_t generation_ = 0;
};

}  // namespace scanback::dap
