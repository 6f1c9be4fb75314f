#include "dap/handlers/handlers.h"
#include "dap/handlers/history.h"
#include "dap/session/session.h"

namespace scanback::dap {

// scanback/timeline: what the history holds (first and last cycle, their virtual times, gaps, the
// fault it ends in), the current position and the tasks.
Reply timelineRequest(Session& session, const json&) {
  TargetHistory& history = historyOf(session.pausedTarget());
  std::string error;
  const std::optional<Timeline> t = history.timeline(error);
  if (!t) throw DapError(error);
  json tasks = json::array();
  const Program& program = session.program();
  for (size_t i = 0; i < program.tasks.size(); ++i)
    tasks.push_back(
        json{{"threadId", i + 1}, {"name", program.tasks[i].name}, {"intervalNs", program.tasks[i].intervalNs}});
  json gaps = json::array();
  for (const Timeline::Gap& g : t->gaps)
    gaps.push_back(json{{"firstCycle", g.firstCycle}, {"cycleCount", g.cycleCount}});
  json body{{"firstCycle", t->firstCycle},
            {"lastCycle", t->lastCycle},
            {"firstTimeNs", t->firstTimeNs},
            {"lastTimeNs", t->lastTimeNs},
            {"cycle", t->cycle},
            {"step", t->step},
            {"timeNs", t->timeNs},
            {"tasks", std::move(tasks)},
            {"gaps", std::move(gaps)},
            {"live", t->live}};
  if (!t->fault.empty()) body["fault"] = t->fault;
  if (t->cycleTime)
    body["cycleTime"] = json{{"cycles", t->cycleTime->cycles},
                             {"medianNs", t->cycleTime->medianNs},
                             {"p99Ns", t->cycleTime->p99Ns},
                             {"maxNs", t->cycleTime->maxNs}};
  return Reply{std::move(body)};
}

}  // namespace scanback::dap
