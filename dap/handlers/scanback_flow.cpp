#include <fmt/format.h>

#include <set>

#include "dap/handlers/handlers.h"
#include "dap/handlers/history.h"
#include "dap/session/session.h"

namespace scanback::dap {

// scanback/flow (docs/explain.md): which statements of the frame's POU ran in the current cycle,
// up to the position (the statement there included: the editor marks it anyway), and which did
// not: the editor marks the first and dims the second, as CODESYS's flow control does. From the
// cycle's statement boundaries as the session's own reader of the history re-executes them, so
// the position does not move. By line: a line is `ran` when any statement on it ran.
Reply flowRequest(Session& session, const json& args) {
  const int64_t frameId = requiredMember<int64_t>(args, "frameId");
  Target& target = session.pausedTarget();
  TargetHistory& history = historyOf(target);
  const Frame frame = session.frame(frameId);
  std::string error;
  const std::optional<Timeline> t = history.timeline(error);
  if (!t) throw DapError(error);
  replay::Replayer* r = session.historyReader().at(history.traceFile(), session.programPtr(), error);
  if (!r) throw DapError(error);
  // At a live task's pause, the cycle under way (not in the file yet) as the target holds it.
  r->setOpenCycle(history.openCycle());
  const replay::CycleSteps* steps = r->steps(t->cycle, error);
  if (!steps) throw DapError(fmt::format("scanback/flow: cycle {}: {}", t->cycle, error));
  const Program& program = r->program();
  std::set<uint32_t> ran;
  const uint64_t upTo = std::min<uint64_t>(t->step + 1, steps->count());
  for (uint64_t s = 0; s < upTo; ++s)
    if (steps->statements[s] < program.statements.size() && program.statements[steps->statements[s]].pou == frame.pou)
      ran.insert(steps->statements[s]);
  // (file, line) of each statement of the POU, ran or not.
  std::set<std::pair<uint32_t, uint32_t>> ranLines, notRanLines;
  for (uint32_t id = 0; id < program.statements.size(); ++id) {
    const StatementInfo& s = program.statements[id];
    if (s.pou != frame.pou) continue;
    (ran.count(id) ? ranLines : notRanLines).insert({s.span.file, s.span.line});
  }
  auto lines = [&](const std::set<std::pair<uint32_t, uint32_t>>& set, bool skipRan) {
    json out = json::array();
    for (const auto& [file, line] : set) {
      if (skipRan && ranLines.count({file, line})) continue;
      const Source source = session.sources().sourceOf(program, file);
      out.push_back(json{{"file", source.path.empty() ? source.name : source.path}, {"line", session.lineOut(line)}});
    }
    return out;
  };
  return Reply{json{{"cycle", t->cycle}, {"ran", lines(ranLines, false)}, {"notRan", lines(notRanLines, true)}}};
}

}  // namespace scanback::dap
