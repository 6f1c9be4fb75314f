#include <fmt/format.h>

#include <filesystem>

#include "dap/handlers/handlers.h"
#include "dap/handlers/history.h"
#include "dap/session/session.h"
#include "replayer/signals.h"

namespace scanback::dap {

// scanback/signals (docs/timeline-protocol.md): the changes of variables over a range of cycles,
// for the Scan Timeline's lanes. Read from the session's own reader of the history, so it answers
// whether the target runs or is paused, without moving the position. The signals themselves come
// from replayer/signals.h; here, the arguments and the reply. With `trace` (another recording,
// relative to the session's directory: the compare's other side), the same variables are read from
// that recording instead, by a reader of its own kept beside the session's, with that recording's
// program (its own sources), so a lane can draw both recordings' values.
Reply signalsRequest(Session& session, const json& args) {
  if (!args.is_object() || !args.contains("variables") || !args["variables"].is_array())
    throw DapError("scanback/signals needs 'variables': a list of variable paths");
  std::vector<std::string> names;
  for (const json& v : args["variables"]) {
    if (!v.is_string()) throw DapError("scanback/signals: every entry of 'variables' must be a string");
    names.push_back(v.get<std::string>());
  }
  const std::optional<int64_t> firstArg = optionalMember<int64_t>(args, "firstCycle");
  const std::optional<int64_t> lastArg = optionalMember<int64_t>(args, "lastCycle");
  const std::optional<int64_t> maxArg = optionalMember<int64_t>(args, "maxPoints");
  if ((firstArg && *firstArg < 0) || (lastArg && *lastArg < 0) || (maxArg && *maxArg < 1))
    throw DapError("scanback/signals: 'firstCycle' and 'lastCycle' must not be negative, 'maxPoints' at least 1");

  std::string error;
  replay::Replayer* r = nullptr;
  if (args.contains("trace")) {
    if (!args["trace"].is_string() || args["trace"].get<std::string>().empty())
      throw DapError("scanback/signals: 'trace' must be the path of a recording");
    std::filesystem::path other(args["trace"].get<std::string>());
    if (other.is_relative() && !session.baseDirectory().empty()) other = session.baseDirectory() / other;
    r = session.comparedReader().at(other.string(), nullptr, error);
    if (!r) throw DapError(fmt::format("scanback/signals: 'trace' {}: {}", other.string(), error));
  } else {
    TargetHistory& history = historyOf(session.target());
    r = session.historyReader().at(history.traceFile(), session.programPtr(), error);
    if (!r) throw DapError(error);
  }
  auto unsignedOf = [](std::optional<int64_t> n) {
    return n ? std::optional<uint64_t>(static_cast<uint64_t>(*n)) : std::nullopt;
  };
  const std::optional<replay::CycleRange> range =
      replay::recordedRange(r->history(), unsignedOf(firstArg), unsignedOf(lastArg), error);
  if (!range) throw DapError(error);
  const uint64_t maxPoints = maxArg ? static_cast<uint64_t>(*maxArg) : replay::kDefaultMaxPoints;

  // Each lane: its signal (an index into `signals`), or why it has none.
  const Program& program = r->program();
  std::vector<replay::Signal> signals;
  std::vector<std::optional<size_t>> signalOfLane;
  std::vector<std::string> laneErrors(names.size());
  for (size_t i = 0; i < names.size(); ++i) {
    std::optional<replay::Signal> s = replay::resolveSignal(program, names[i], laneErrors[i]);
    signalOfLane.push_back(s ? std::optional<size_t>(signals.size()) : std::nullopt);
    if (s) signals.push_back(std::move(*s));
  }
  std::vector<replay::SignalChanges> changes;
  if (!replay::signalChanges(*r, signals, *range, maxPoints, changes, error)) throw DapError(error);

  replay::SignalValues values(program);
  auto value = [&values](const replay::Signal& s, const std::vector<uint8_t>& bytes) {
    json out{{"text", values.text(s, bytes)}};
    if (const std::optional<double> n = values.number(s, bytes)) out["number"] = *n;
    return out;
  };
  json lanes = json::array();
  for (size_t i = 0; i < names.size(); ++i) {
    json lane{{"variable", names[i]}};
    if (!signalOfLane[i]) {
      lane["error"] = laneErrors[i];
      lanes.push_back(std::move(lane));
      continue;
    }
    const replay::Signal& s = signals[*signalOfLane[i]];
    const replay::SignalChanges& c = changes[*signalOfLane[i]];
    lane["type"] = s.where.type->name;
    lane["kind"] = signalKindName(s.kind);
    lane["initial"] = value(s, c.initial);
    json points = json::array();
    for (const replay::SignalChanges::Point& p : c.points)
      points.push_back(json{{"cycle", p.change.position.cycle},
                            {"step", p.change.position.step},
                            {"timeNs", p.timeNs},
                            {"value", value(s, p.change.after)}});
    lane["changes"] = std::move(points);
    lane["complete"] = c.complete;
    lanes.push_back(std::move(lane));
  }
  return Reply{json{{"firstCycle", range->first}, {"lastCycle", range->last}, {"signals", std::move(lanes)}}};
}

}  // namespace scanback::dap
