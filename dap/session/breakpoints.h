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
[[nodiscard]] std::optional<std::function<bool(uint64_t)>> parseHitCondition(const std::string& text,
                                                                             std::string& error);

class BreakpointManager {
 public:
  explicit BreakpointManager(std::shared_ptr<const Program> program) : program_(std::move(program)) {}

  // Replaces every breakpoint of the file `source` names (`file`: that file in `sources`, nullopt
  // when it is not part of the program: the breakpoints are kept, unverified, for a later
  // version); the response's breakpoints, in request order. Lines and columns as scanback counts.
  std::vector<Breakpoint> set(const SourceMap& sources, const json& source, std::optional<FileId> file,
                              const std::vector<SourceBreakpoint>& requested);
  // A new program version (stReload): every breakpoint is resolved again in `sources`, keeping
  // its id; data watches are found again by name in the new layout (dropped when they are gone).
  // Returns the breakpoints whose verification, position or message changed.
  std::vector<Breakpoint> rebind(std::shared_ptr<const Program> program, const SourceMap& sources);
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
  // The breakpoints of one file, as requested and as resolved in the current version.
  struct FileBreakpoints {
    json source;                 // how the client named the file
    std::optional<FileId> file;  // in the current version
    std::vector<SourceBreakpoint> requested;
    std::vector<Breakpoint> reported;                           // per request
    std::vector<std::shared_ptr<ResolvedBreakpoint>> resolved;  // the verified ones
  };
  // Resolves `want` in `file` with id `id`: the report and, when verified, what the target checks.
  std::pair<Breakpoint, std::shared_ptr<ResolvedBreakpoint>> resolve(const SourceMap& sources,
                                                                     std::optional<FileId> file,
                                                                     const std::string& sourceName,
                                                                     const SourceBreakpoint& want, int64_t id) const;

  std::shared_ptr<const Program> program_;
  std::vector<FileBreakpoints> files_;
  std::vector<DataWatch> dataWatches_;
  bool stopOnFaults_ = true;
  int64_t nextId_ = 1;
  uint64_t generation_ = 0;
};

}  // namespace scanback::dap
