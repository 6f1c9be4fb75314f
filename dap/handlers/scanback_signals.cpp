#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "dap/handlers/handlers.h"
#include "dap/handlers/history.h"
#include "dap/session/session.h"
#include "vm/runtime/values.h"

namespace scanback::dap {

namespace {

// Without a maxPoints hint: about this many changes per signal at most.
constexpr uint64_t kDefaultMaxPoints = 5000;

// One requested variable: where it is, and its changes as they come (oldest first).
struct Lane {
  std::string variable;
  std::optional<VariableLocation> where;
  std::string error;
  SignalKind kind = SignalKind::Integer;
  size_t watch = 0;  // index into the watches searched
  // Every change while they fit in maxPoints; `all` is dropped once they do not.
  std::vector<replay::Change> all;
  bool complete = true;
  // Per bucket of the range: its first change, and those with the smallest and largest value.
  struct Bucket {
    std::optional<replay::Change> first, min, max;
    double minValue = 0, maxValue = 0;
  };
  std::vector<Bucket> buckets;
};

// Values as the Variables view shows them: read from a scratch image holding the watched bytes.
class ValueReader {
 public:
  ValueReader(const Program& program) : program_(program), image_(program.initialImage) {}
  const uint8_t* place(const VariableLocation& v, const std::vector<uint8_t>& bytes) {
    if (v.bit >= 0) {
      const uint8_t mask = static_cast<uint8_t>(1u << v.bit);
      image_[v.offset] = static_cast<uint8_t>((image_[v.offset] & ~mask) | (!bytes.empty() && bytes[0] ? mask : 0));
    } else {
      std::memcpy(image_.data() + v.offset, bytes.data(), std::min<size_t>(bytes.size(), v.type->size));
    }
    return image_.data();
  }
  json value(const VariableLocation& v, const std::vector<uint8_t>& bytes) {
    const uint8_t* image = place(v, bytes);
    json out{{"text", formatValue(program_, image, v.offset, v.bit, *v.type)}};
    if (const std::optional<double> n = numericValue(image, v.offset, v.bit, *v.type)) out["number"] = *n;
    return out;
  }
  std::optional<double> number(const VariableLocation& v, const std::vector<uint8_t>& bytes) {
    return numericValue(place(v, bytes), v.offset, v.bit, *v.type);
  }

 private:
  const Program& program_;
  std::vector<uint8_t> image_;
};

}  // namespace

// scanback/signals (docs/timeline-protocol.md): the changes of variables over a range of cycles,
// for the Scan Timeline's lanes. Read from the session's own reader of the history, so it answers
// whether the target runs or is paused, without moving the position.
Reply signalsRequest(Session& session, const json& args) {
  if (!args.is_object() || !args.contains("variables") || !args["variables"].is_array())
    throw DapError("scanback/signals needs 'variables': a list of variable paths");
  std::vector<Lane> lanes;
  for (const json& v : args["variables"]) {
    if (!v.is_string()) throw DapError("scanback/signals: every entry of 'variables' must be a string");
    lanes.push_back(Lane{v.get<std::string>(), std::nullopt, {}, SignalKind::Integer, 0, {}, true, {}});
  }
  const std::optional<int64_t> firstArg = optionalMember<int64_t>(args, "firstCycle");
  const std::optional<int64_t> lastArg = optionalMember<int64_t>(args, "lastCycle");
  const std::optional<int64_t> maxArg = optionalMember<int64_t>(args, "maxPoints");
  if ((firstArg && *firstArg < 0) || (lastArg && *lastArg < 0) || (maxArg && *maxArg < 1))
    throw DapError("scanback/signals: 'firstCycle' and 'lastCycle' must not be negative, 'maxPoints' at least 1");

  TargetHistory& history = historyOf(session.target());
  std::string error;
  replay::Replayer* r = session.historyReader().at(history.traceFile(), session.programPtr(), error);
  if (!r) throw DapError(error);
  replay::History& h = r->history();
  if (h.empty()) throw DapError("the recording holds no cycle yet");
  const uint64_t first = std::max<uint64_t>(h.firstCycle(), firstArg ? static_cast<uint64_t>(*firstArg) : 0);
  const uint64_t last = std::min<uint64_t>(h.endCycle() - 1, lastArg ? static_cast<uint64_t>(*lastArg) : UINT64_MAX);
  if (first > last)
    throw DapError(fmt::format("cycles {}..{} are outside the recorded cycles {}..{}", firstArg.value_or(0),
                               lastArg.value_or(0), h.firstCycle(), h.endCycle() - 1));
  const uint64_t maxPoints = maxArg ? static_cast<uint64_t>(*maxArg) : kDefaultMaxPoints;
  // Three points a bucket (first, min, max), so that about maxPoints are sent.
  const uint64_t bucketCount = std::max<uint64_t>(1, std::min<uint64_t>(maxPoints / 3, last - first + 1));

  const Program& program = r->program();
  std::vector<replay::Watch> watches;
  for (Lane& lane : lanes) {
    std::string why;
    std::optional<VariableLocation> v = lane.variable.starts_with('%') ? findAddress(program, lane.variable, why)
                                                                       : findVariable(program, lane.variable, why);
    if (v && v->type && !(v->type->isScalar() || v->type->kind == TypeKind::String))
      why = fmt::format("'{}' is a {} ({}), not one value: add one of its members or elements", lane.variable,
                        v->type->kind == TypeKind::Array ? "array" : "structure", v->type->name);
    else if (v && v->type && v->type->kind == TypeKind::Ref)
      why = fmt::format("'{}' is a reference: add what it refers to", lane.variable);
    if (!v || !v->type || !why.empty()) {
      lane.error = why.empty() ? fmt::format("'{}' cannot be found", lane.variable) : why;
      continue;
    }
    lane.where = std::move(v);
    lane.kind = signalKind(*lane.where->type);
    lane.watch = watches.size();
    lane.buckets.resize(bucketCount);
    watches.push_back(replay::Watch{lane.where->offset,
                                    lane.where->bit >= 0 ? 1u : std::max<uint32_t>(lane.where->type->size, 1),
                                    lane.where->bit});
  }

  ValueReader values(program);
  std::vector<std::vector<uint8_t>> initial;
  if (!watches.empty()) {
    std::vector<Lane*> laneOfWatch(watches.size());
    for (Lane& lane : lanes)
      if (lane.where) laneOfWatch[lane.watch] = &lane;
    const uint64_t span = last - first + 1;
    const bool ok = r->changesFrom(
        watches, first, replay::Position{last + 1, 0}, initial,
        [&](size_t watch, replay::Change&& c) {
          Lane& lane = *laneOfWatch[watch];
          Lane::Bucket& b = lane.buckets[(c.position.cycle - first) * bucketCount / span];
          if (!b.first) b.first = c;
          if (const std::optional<double> n = values.number(*lane.where, c.after)) {
            if (!b.min || *n < b.minValue) {
              b.min = c;
              b.minValue = *n;
            }
            if (!b.max || *n > b.maxValue) {
              b.max = c;
              b.maxValue = *n;
            }
          }
          if (lane.complete) {
            if (lane.all.size() < maxPoints) {
              lane.all.push_back(std::move(c));
            } else {
              lane.complete = false;
              lane.all.clear();
              lane.all.shrink_to_fit();
            }
          }
          return true;
        },
        error);
    if (!ok) throw DapError(error);
  }

  // The virtual start time of each cycle a change is in (in order: the chunk stays cached).
  auto startOf = [&h](uint64_t cycle) {
    std::shared_ptr<const trace::ChunkData> held;
    replay::CycleRecord record;
    std::string ignored;
    return h.cycle(cycle, held, record, ignored) ? record.startNs : int64_t{0};
  };
  json signals = json::array();
  for (Lane& lane : lanes) {
    json s{{"variable", lane.variable}};
    if (!lane.where) {
      s["error"] = lane.error;
      signals.push_back(std::move(s));
      continue;
    }
    const VariableLocation& v = *lane.where;
    s["type"] = v.type->name;
    s["kind"] = signalKindName(lane.kind);
    s["initial"] = values.value(v, initial[lane.watch]);
    std::vector<replay::Change> kept;
    if (lane.complete) {
      kept = std::move(lane.all);
    } else {
      for (Lane::Bucket& b : lane.buckets) {
        std::vector<replay::Change> here;
        for (std::optional<replay::Change>* c : {&b.first, &b.min, &b.max})
          if (*c && std::none_of(here.begin(), here.end(),
                                 [&](const replay::Change& k) { return k.position == (*c)->position; }))
            here.push_back(std::move(**c));
        std::sort(here.begin(), here.end(),
                  [](const replay::Change& a, const replay::Change& b2) { return a.position < b2.position; });
        for (replay::Change& c : here) kept.push_back(std::move(c));
      }
    }
    json changes = json::array();
    uint64_t timeCycle = UINT64_MAX;
    int64_t timeNs = 0;
    for (const replay::Change& c : kept) {
      if (c.position.cycle != timeCycle) {
        timeCycle = c.position.cycle;
        timeNs = startOf(timeCycle);
      }
      changes.push_back(json{{"cycle", c.position.cycle},
                             {"step", c.position.step},
                             {"timeNs", timeNs},
                             {"value", values.value(v, c.after)}});
    }
    s["changes"] = std::move(changes);
    s["complete"] = lane.complete;
    signals.push_back(std::move(s));
  }
  return Reply{json{{"firstCycle", first}, {"lastCycle", last}, {"signals", std::move(signals)}}};
}

}  // namespace scanback::dap
