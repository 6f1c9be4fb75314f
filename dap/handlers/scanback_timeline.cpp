#include <fmt/format.h>

#include "dap/handlers/handlers.h"
#include "dap/handlers/history.h"
#include "dap/session/session.h"

namespace scanback::dap {

namespace {

// What the history holds, read from the session's own reader: while the target runs (the
// extension polls a live session) or after it ended. The position is the newest recorded one,
// the end of the last recorded cycle.
[[nodiscard]] std::optional<Timeline> readTimeline(Session& session, TargetHistory& history, bool live,
                                                   std::string& error) {
  replay::Replayer* r = session.historyReader().at(history.traceFile(), session.programPtr(), error);
  if (!r) return std::nullopt;
  replay::History& h = r->history();
  if (h.empty()) {
    error = "the recording holds no cycle yet";
    return std::nullopt;
  }
  auto startOf = [&](uint64_t cycle, uint32_t* steps = nullptr) {
    std::shared_ptr<const trace::ChunkData> held;
    replay::CycleRecord record;
    std::string readError;
    if (!h.cycle(cycle, held, record, readError)) return int64_t{0};
    if (steps) *steps = record.stepCount;
    return record.startNs;
  };
  Timeline t;
  t.firstCycle = h.firstCycle();
  t.lastCycle = h.endCycle() - 1;
  t.firstTimeNs = startOf(t.firstCycle);
  uint32_t lastSteps = 0;
  t.lastTimeNs = startOf(t.lastCycle, &lastSteps);
  t.cycle = t.lastCycle;
  t.step = lastSteps;
  t.timeNs = t.lastTimeNs;
  for (const trace::GapData& g : h.gaps()) t.gaps.push_back(Timeline::Gap{g.firstCycle, g.cycleCount});
  if (h.fault()) {
    const trace::FaultData& f = *h.fault();
    t.fault = f.message;
    t.faultAt = Timeline::FaultPosition{f.cycle, f.step > 0 ? f.step - 1 : 0, f.statement};
    t.step = t.faultAt->step;
  }
  t.live = live;
  t.cycleTime = history.cycleTime();
  t.recording = history.recording();
  return t;
}

}  // namespace

// scanback/timeline: what the history holds (first and last cycle, their virtual times, gaps, the
// fault it ends in), the current position and the tasks. Answered while the target runs too (the
// position is then the newest recorded one).
Reply timelineRequest(Session& session, const json&) {
  Target& target = session.target();
  TargetHistory& history = historyOf(target);
  std::string error;
  const bool paused = !target.finished() && target.paused();
  const std::optional<Timeline> t =
      paused ? history.timeline(error) : readTimeline(session, history, !target.finished(), error);
  if (!t) throw DapError(error);
  // The newest position, which Go to Live goes to: where the session is when it runs (or ended).
  HistoryPosition newest{t->cycle, t->step};
  if (paused) {
    std::string newestError;
    if (const std::optional<HistoryPosition> p = history.newestPosition(newestError)) newest = *p;
  }
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
            {"live", t->live},
            {"newest", json{{"cycle", newest.cycle}, {"step", newest.step}}},
            {"running", target.runsOn()}};
  if (!t->fault.empty()) {
    // docs/timeline-protocol.md: {cycle, step, message, file?, line?}.
    json fault{{"message", t->fault}};
    fault["cycle"] = t->faultAt ? t->faultAt->cycle : t->lastCycle;
    fault["step"] = t->faultAt ? t->faultAt->step : t->step;
    if (t->faultAt && t->faultAt->statement < program.statements.size()) {
      const SourceSpan& span = program.statements[t->faultAt->statement].span;
      const Source source = session.sources().sourceOf(program, span.file);
      fault["file"] = source.path.empty() ? source.name : source.path;
      fault["line"] = session.lineOut(span.line);
    }
    body["fault"] = std::move(fault);
  }
  if (t->cycleTime)
    body["cycleTime"] = json{{"cycles", t->cycleTime->cycles},
                             {"medianNs", t->cycleTime->medianNs},
                             {"p99Ns", t->cycleTime->p99Ns},
                             {"maxNs", t->cycleTime->maxNs}};
  if (t->recording) {
    // docs/timeline-protocol.md: {path, state: "ok" | "failing", error?, sinceCycle?, lostCycles, failures}.
    json recording{{"path", t->recording->path},
                   {"state", t->recording->failing ? "failing" : "ok"},
                   {"lostCycles", t->recording->lostCycles},
                   {"failures", t->recording->failures}};
    if (t->recording->failing) {
      recording["error"] = t->recording->error;
      recording["sinceCycle"] = t->recording->sinceCycle;
    }
    body["recording"] = std::move(recording);
  }
  return Reply{std::move(body)};
}

}  // namespace scanback::dap
