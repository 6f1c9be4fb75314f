#include "compare/trace_diff.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <unordered_map>

#include "compare/cycle_stream.h"
#include "compare/statement_map.h"
#include "replayer/replayer.h"
#include "vm/base/xml_text.h"
#include "vm/exec/iec_text.h"

namespace scanback::compare {

namespace {

using replay::Position;
using replay::Replayer;

const char* sideName(size_t side) { return side == 0 ? "A" : "B"; }

// Opens a trace to compare: it must be whole (closed, nothing missing, nothing corrupt), since a
// comparison of a part would pass for a comparison of the whole.
[[nodiscard]] std::unique_ptr<Replayer> openWhole(const std::string& path, size_t side, bool useWriteIndex,
                                                  std::string& error) {
  const std::string name = fmt::format("trace {} ({})", sideName(side), path);
  std::string why;
  std::unique_ptr<trace::TraceReader> reader = trace::TraceReader::open(path, why);
  if (!reader) {
    error = fmt::format("{}: {}", name, why);
    return nullptr;
  }
  if (reader->corruptOffset()) {
    error = fmt::format("{} is corrupt at byte offset {}: {}", name, *reader->corruptOffset(), reader->corruptError());
    return nullptr;
  }
  if (!reader->damage().empty()) {
    error = fmt::format("{} is damaged: {}", name, reader->damage().front().what);
    return nullptr;
  }
  if (reader->unusableIndex()) {
    error = fmt::format("{}: its index at byte offset {} cannot be used: {}", name, reader->unusableIndex()->offset,
                        reader->unusableIndex()->why);
    return nullptr;
  }
  if (!reader->complete()) {
    error = fmt::format(
        "{} is cut off after byte {}: it was not closed (a recording that crashed or is still going on); a "
        "comparison needs the whole recording",
        name, reader->fileSize());
    return nullptr;
  }
  replay::ReplayOptions options;
  options.useWriteIndex = useWriteIndex;
  std::unique_ptr<Replayer> r = Replayer::open(std::move(reader), options, why);
  if (!r) {
    error = fmt::format("{}: {}", name, why);
    return nullptr;
  }
  if (r->history().empty()) {
    error = fmt::format("{} holds no recorded cycle", name);
    return nullptr;
  }
  return r;
}

StatementRef statementRef(const Program& program, uint32_t id) {
  StatementRef s;
  if (id >= program.statements.size()) return s;
  s.id = id;
  s.location = statementLocation(program, id);
  s.text = statementText(program, id);
  return s;
}

std::string taskName(const Program& program, uint32_t task) {
  return task < program.tasks.size() ? program.tasks[task].name : fmt::format("#{}", task);
}

// Whether the recorded paths of two cycles run the same statements: compared once per pair of
// distinct paths of the two chunks they are in.
class PathCompare {
 public:
  explicit PathCompare(const StatementMap& map) : map_(map) {}
  // nullopt: a path was not recorded.
  std::optional<bool> same(const trace::ChunkData& a, uint32_t ia, const trace::ChunkData& b, uint32_t ib) {
    if (ia >= a.paths.size() || ib >= b.paths.size()) return std::nullopt;
    const uint32_t pa = a.paths[ia], pb = b.paths[ib];
    if (pa >= a.pathTable.size() || pb >= b.pathTable.size()) return std::nullopt;
    if (&a != chunk_[0] || &b != chunk_[1]) {
      chunk_[0] = &a;
      chunk_[1] = &b;
      known_.clear();
    }
    const uint64_t key = (uint64_t{pa} << 32) | pb;
    const auto it = known_.find(key);
    if (it != known_.end()) return it->second;
    const bool equal = map_.samePath(a.pathTable[pa], b.pathTable[pb]);
    known_.emplace(key, equal);
    return equal;
  }

 private:
  const StatementMap& map_;
  const trace::ChunkData* chunk_[2] = {nullptr, nullptr};
  std::unordered_map<uint64_t, bool> known_;
};

// The first divergence inside `cycle`: re-executes it on both sides, boundary by boundary.
[[nodiscard]] bool locate(Replayer* r[2], const ComparedSet& set, const StatementMap& map, uint64_t cycle,
                          FirstDivergence& d, std::string& error) {
  std::vector<uint32_t> statements[2];
  bool faulted[2];
  for (size_t s = 0; s < 2; ++s) {
    const replay::CycleSteps* steps = r[s]->steps(cycle, error);
    if (!steps) {
      error = fmt::format("trace {}: {}", sideName(s), error);
      return false;
    }
    statements[s] = steps->statements;
    faulted[s] = steps->faulted;
  }
  size_t split = 0;
  const bool samePath = map.samePath(statements[0], statements[1], &split);
  // Every change of a compared value in the cycle, on each side.
  std::vector<replay::Change> changes[2];
  std::vector<uint8_t> now[2];
  for (size_t s = 0; s < 2; ++s) {
    std::vector<std::vector<uint8_t>> initial;
    const std::vector<Watch> watches = set.watches(static_cast<Side>(s));
    if (!r[s]->changesFrom(
            watches, cycle, Position{cycle + 1, 0}, initial,
            [&](size_t, replay::Change&& c) {
              changes[s].push_back(std::move(c));
              return true;
            },
            error)) {
      error = fmt::format("trace {}: {}", sideName(s), error);
      return false;
    }
    now[s].assign(set.width, 0);
    for (size_t i = 0; i < set.values.size(); ++i)
      if (initial[i].size() == set.values[i].width)
        std::memcpy(now[s].data() + set.values[i].offset, initial[i].data(), set.values[i].width);
  }
  const uint64_t end = std::max(statements[0].size(), statements[1].size());
  const uint64_t limit = samePath ? end : split;  // boundaries beyond a split do not correspond
  size_t next[2] = {0, 0};
  std::optional<uint64_t> valueStep;
  std::vector<size_t> differing;
  for (uint64_t k = 0; k <= limit && !valueStep; ++k) {
    for (size_t s = 0; s < 2; ++s) {
      for (; next[s] < changes[s].size() && changes[s][next[s]].position.step <= k; ++next[s]) {
        const replay::Change& c = changes[s][next[s]];
        const ComparedValue& v = set.values[c.watch];
        if (c.after.size() == v.width) std::memcpy(now[s].data() + v.offset, c.after.data(), v.width);
      }
    }
    for (size_t i = 0; i < set.values.size(); ++i)
      if (!set.same(i, now[0].data(), now[1].data())) differing.push_back(i);
    if (!differing.empty()) valueStep = k;
  }
  d.cycle = cycle;
  const Program* programs[2] = {&r[0]->program(), &r[1]->program()};
  if (faulted[0] != faulted[1] || (faulted[0] && faulted[1] && (!valueStep || !samePath))) {
    d.kind = FirstDivergence::Kind::Fault;
    for (size_t s = 0; s < 2; ++s) {
      const auto& f = r[s]->history().fault();
      if (faulted[s] && f) d.fault[s] = f->message;
    }
    const size_t side = faulted[0] ? 0 : 1;
    d.step = statements[side].empty() ? 0 : statements[side].size() - 1;
    for (size_t s = 0; s < 2; ++s)
      if (d.step < statements[s].size()) d.statement[s] = statementRef(*programs[s], statements[s][d.step]);
    return true;
  }
  if (!samePath && (!valueStep || split < *valueStep)) {
    d.kind = FirstDivergence::Kind::PathsSplit;
    d.step = split;
    for (size_t s = 0; s < 2; ++s)
      if (split < statements[s].size()) d.statement[s] = statementRef(*programs[s], statements[s][split]);
    return true;
  }
  d.kind = FirstDivergence::Kind::Value;
  d.step = valueStep.value_or(end);
  if (!valueStep) {  // only the end differs (a value not seen changing: the cycle's end itself)
    for (size_t i = 0; i < set.values.size(); ++i) differing.push_back(i);
  }
  for (size_t s = 0; s < 2; ++s)
    if (d.step > 0 && d.step - 1 < statements[s].size())
      d.statement[s] = statementRef(*programs[s], statements[s][d.step - 1]);
  for (size_t i : differing) d.values.push_back(set.values[i].name);
  if (!differing.empty()) {
    d.detail[0] = set.format(Side::A, differing.front(), now[0].data());
    d.detail[1] = set.format(Side::B, differing.front(), now[1].data());
  }
  return true;
}

TraceSummary summarize(const std::string& path, Replayer& r) {
  TraceSummary t;
  t.path = path;
  t.programHash = r.header().programHash;
  const replay::History& h = r.history();
  t.firstCycle = h.firstCycle();
  t.endCycle = h.endCycle();
  for (size_t i = 0; i < h.chunkCount(); ++i) t.cycles += h.chunkBlock(i).cycleCount;
  if (h.fault()) t.fault = h.fault()->message;
  return t;
}

}  // namespace

uint64_t DiffReport::differingValues() const {
  uint64_t n = 0;
  for (const ValueDifference& v : values) n += v.cycles ? 1 : 0;
  return n;
}

bool diffTraces(const std::string& pathA, const std::string& pathB, const DiffOptions& options, DiffReport& report,
                std::string& error) {
  report = DiffReport{};
  std::unique_ptr<Replayer> owned[2];
  const std::string paths[2] = {pathA, pathB};
  for (size_t s = 0; s < 2; ++s) {
    owned[s] = openWhole(paths[s], s, options.useWriteIndex, error);
    if (!owned[s]) return false;
    report.trace[s] = summarize(paths[s], *owned[s]);
  }
  Replayer* r[2] = {owned[0].get(), owned[1].get()};
  const Program& pa = r[0]->program();
  const Program& pb = r[1]->program();
  ComparedSet set;
  if (!makeComparedSet(pa, pb, options.choice, set, error)) return false;
  report.onlyInA = set.onlyInA;
  report.onlyInB = set.onlyInB;
  report.differentType = set.differentType;
  report.constants = set.constants;
  for (const ComparedValue& v : set.values) {
    report.values.push_back(ValueDifference{v.name, v.output, 0, 0, 0, {}});
    report.outputs += v.output ? 1 : 0;
  }
  const StatementMap map(pa, pb);

  const uint64_t first = std::max(report.trace[0].firstCycle, report.trace[1].firstCycle);
  const uint64_t endCycle = std::min(report.trace[0].endCycle, report.trace[1].endCycle);
  if (first >= endCycle) {
    error = fmt::format("the traces have no cycle in common: A recorded cycles {}..{}, B cycles {}..{}",
                        report.trace[0].firstCycle, report.trace[0].endCycle - 1, report.trace[1].firstCycle,
                        report.trace[1].endCycle - 1);
    return false;
  }
  const uint64_t last = endCycle - 1;
  std::optional<uint64_t> faultCycle[2];
  for (size_t s = 0; s < 2; ++s)
    if (r[s]->history().fault()) faultCycle[s] = r[s]->history().fault()->cycle;

  std::optional<uint64_t> firstValueCycle, firstFaultCycle;
  {
    std::mutex turns;
    std::mutex* oneAtATime = options.parallelReaders ? nullptr : &turns;
    CycleStream streams[2] = {CycleStream(*r[0], set, Side::A, first, last, options.useWriteIndex, oneAtATime),
                              CycleStream(*r[1], set, Side::B, first, last, options.useWriteIndex, oneAtATime)};
    std::shared_ptr<const CycleBatch> batch[2] = {streams[0].next(), streams[1].next()};
    uint32_t at[2] = {0, 0};
    PathCompare pathCompare(map);
    // The constant batches last compared and which values differed between them: a run of cycles
    // with the same samples (chunks the write index ruled out on both sides) is compared once.
    std::shared_ptr<const CycleBatch> lastConstant[2];
    std::vector<size_t> lastDiffering;
    auto advance = [&](size_t s) {
      if (++at[s] >= batch[s]->count) {
        batch[s] = streams[s].next();
        at[s] = 0;
      }
    };
    while (batch[0] && batch[1]) {
      const uint64_t c0 = batch[0]->first + at[0], c1 = batch[1]->first + at[1];
      if (c0 != c1) {  // a gap on one side: the cycle is only in the other
        advance(c0 < c1 ? 0 : 1);
        continue;
      }
      const uint64_t cycle = c0;
      const trace::ChunkData& ca = *batch[0]->chunk;
      const trace::ChunkData& cb = *batch[1]->chunk;
      const uint32_t ia = batch[0]->index(cycle), ib = batch[1]->index(cycle);
      const std::string taskA = taskName(pa, ca.tasks[ia]), taskB = taskName(pb, cb.tasks[ib]);
      if (!equalsIgnoreCase(taskA, taskB) || ca.startTimes[ia] != cb.startTimes[ib]) {
        report.schedule = ScheduleSplit{cycle, {taskA, taskB}, {ca.startTimes[ia], cb.startTimes[ib]}};
        break;
      }
      if (report.comparedCycles == 0) report.firstCompared = cycle;
      report.lastCompared = cycle;
      ++report.comparedCycles;
      if (std::optional<bool> same = pathCompare.same(ca, ia, cb, ib); same && !*same) {
        ++report.splitCycles;
        if (!report.pathsSplit) {
          PathSplit p;
          p.cycle = cycle;
          size_t k = 0;
          const std::vector<uint32_t>& a = ca.pathTable[ca.paths[ia]];
          const std::vector<uint32_t>& b = cb.pathTable[cb.paths[ib]];
          map.samePath(a, b, &k);
          p.step = k;
          if (k < a.size()) p.statement[0] = statementRef(pa, a[k]);
          if (k < b.size()) p.statement[1] = statementRef(pb, b[k]);
          report.pathsSplit = p;
        }
      }
      const bool faulted[2] = {faultCycle[0] == cycle, faultCycle[1] == cycle};
      if ((faulted[0] || faulted[1]) && !firstFaultCycle &&
          (faulted[0] != faulted[1] || r[0]->history().fault()->code != r[1]->history().fault()->code))
        firstFaultCycle = cycle;
      const uint8_t* sa = batch[0]->sample(at[0]);
      const uint8_t* sb = batch[1]->sample(at[1]);
      const bool constant = batch[0]->constant && batch[1]->constant;
      if (!constant || batch[0] != lastConstant[0] || batch[1] != lastConstant[1]) {
        lastConstant[0] = constant ? batch[0] : nullptr;
        lastConstant[1] = constant ? batch[1] : nullptr;
        lastDiffering.clear();
        if (std::memcmp(sa, sb, set.width) != 0) {
          for (size_t i = 0; i < set.values.size(); ++i) {
            if (set.same(i, sa, sb)) continue;
            lastDiffering.push_back(i);
            ValueDifference& v = report.values[i];
            if (v.cycles == 0) {
              v.firstCycle = cycle;
              v.first[0] = set.format(Side::A, i, sa);
              v.first[1] = set.format(Side::B, i, sb);
            }
          }
        }
      }
      for (size_t i : lastDiffering) {
        ValueDifference& v = report.values[i];
        ++v.cycles;
        v.lastCycle = cycle;
      }
      if (!lastDiffering.empty() && !firstValueCycle) firstValueCycle = cycle;
      advance(0);
      advance(1);
    }
    for (size_t s = 0; s < 2; ++s) {
      streams[s].stop();
      report.chunksSkipped[s] = streams[s].chunksSkipped();
      if (!streams[s].error().empty() && !report.schedule) {
        error = fmt::format("trace {} ({}): {}", sideName(s), paths[s], streams[s].error());
        return false;
      }
    }
  }
  for (size_t s = 0; s < 2; ++s) {
    // Recorded cycles not compared: outside the other's range, in the other's gaps, or after a
    // schedule split.
    report.onlyIn[s] = report.trace[s].cycles - report.comparedCycles - (report.schedule ? 1 : 0);
    report.chunksSkipped[s] += r[s]->chunksSkipped();
    for (const replay::Divergence& d : r[s]->divergences())
      report.warnings.push_back(
          fmt::format("trace {} does not replay as recorded at cycle {}: {}", sideName(s), d.position.cycle, d.what));
  }
  if (firstFaultCycle) {
    report.faultCycle = firstFaultCycle;
    for (size_t s = 0; s < 2; ++s)
      if (faultCycle[s] == firstFaultCycle) report.fault[s] = r[s]->history().fault()->message;
  }
  std::optional<uint64_t> divergent = firstValueCycle;
  if (firstFaultCycle && (!divergent || *firstFaultCycle < *divergent)) divergent = firstFaultCycle;
  if (divergent) {
    FirstDivergence d;
    if (!locate(r, set, map, *divergent, d, error)) return false;
    std::shared_ptr<const trace::ChunkData> held;
    replay::CycleRecord record;
    std::string ignored;
    if (r[0]->history().cycle(*divergent, held, record, ignored)) {
      d.task = taskName(pa, record.task);
      d.startNs = record.startNs;
    }
    report.divergence = std::move(d);
  }
  return true;
}

// ---------------------------------------------------------------- the report

namespace {

using json = nlohmann::ordered_json;

std::string statementLine(const char* side, const StatementRef& s, const char* none) {
  if (s.id == UINT32_MAX) return fmt::format("    {}  {}\n", side, none);
  return fmt::format("    {}  {}  {}\n", side, s.location, s.text);
}

std::string plural(uint64_t n, const char* one, const char* many) {
  return fmt::format("{} {}", n, n == 1 ? one : many);
}

std::string listed(const std::vector<std::string>& names, size_t most) {
  std::string out;
  for (size_t i = 0; i < names.size() && i < most; ++i) out += (i ? ", " : "") + names[i];
  if (names.size() > most) out += fmt::format(" and {} more", names.size() - most);
  return out;
}

json valueJson(const ValueDifference& v) {
  json j{{"name", v.name}, {"output", v.output}, {"equal", v.cycles == 0}};
  if (v.cycles) {
    j["firstCycle"] = v.firstCycle;
    j["lastCycle"] = v.lastCycle;
    j["cycles"] = v.cycles;
    j["first"] = json{{"a", v.first[0]}, {"b", v.first[1]}};
  }
  return j;
}

json statementJson(const StatementRef& s) {
  if (s.id == UINT32_MAX) return nullptr;
  return json{{"statement", s.id}, {"location", s.location}, {"text", s.text}};
}

}  // namespace

std::string formatDiff(const DiffReport& r) {
  std::string out;
  for (size_t s = 0; s < 2; ++s) {
    const TraceSummary& t = r.trace[s];
    out += fmt::format("{}  {}  (program {}, cycles {}..{}{})\n", sideName(s), t.path, t.programHash.substr(0, 12),
                       t.firstCycle, t.endCycle - 1, t.fault ? ", ends in a fault" : "");
  }
  out += fmt::format("compared   {} ({}..{}): {} and {}\n", plural(r.comparedCycles, "cycle", "cycles"),
                     r.firstCompared, r.lastCompared, plural(r.outputs, "output", "outputs"),
                     plural(r.values.size() - r.outputs, "variable", "variables"));
  if (r.onlyIn[0] || r.onlyIn[1])
    out += fmt::format("           not compared: {} of A's recorded cycles, {} of B's\n", r.onlyIn[0], r.onlyIn[1]);
  if (!r.onlyInA.empty()) out += fmt::format("           only in A: {}\n", listed(r.onlyInA, 8));
  if (!r.onlyInB.empty()) out += fmt::format("           only in B: {}\n", listed(r.onlyInB, 8));
  if (!r.differentType.empty()) out += fmt::format("           another type: {}\n", listed(r.differentType, 8));
  if (r.schedule) {
    const ScheduleSplit& s = r.schedule.value();
    out += fmt::format(
        "schedules  differ at cycle {}: A runs task {} at {}, B runs task {} at {}; the comparison stops there\n",
        s.cycle, s.task[0], formatDuration(s.startNs[0]), s.task[1], formatDuration(s.startNs[1]));
  }
  if (r.divergence) {
    const FirstDivergence& d = r.divergence.value();
    out += fmt::format("first divergence  cycle {} (task {}, {}), step {}\n", d.cycle, d.task,
                       formatDuration(d.startNs), d.step);
    switch (d.kind) {
      case FirstDivergence::Kind::PathsSplit:
        out += "  the statement paths split there: next,\n";
        out += statementLine("A", d.statement[0], "(the cycle ends)");
        out += statementLine("B", d.statement[1], "(the cycle ends)");
        break;
      case FirstDivergence::Kind::Value:
        if (d.step == 0) {
          out += fmt::format("  {} differ{} at the start of the cycle (its scan inputs, or the values it began with)\n",
                             listed(d.values, 4), d.values.size() == 1 ? "s" : "");
        } else {
          out += fmt::format("  {} differ{} after the statement (the paths are the same up to there)\n",
                             listed(d.values, 4), d.values.size() == 1 ? "s" : "");
          out += statementLine("A", d.statement[0], "?");
          out += statementLine("B", d.statement[1], "?");
        }
        if (!d.values.empty()) out += fmt::format("  {}: A {}, B {}\n", d.values.front(), d.detail[0], d.detail[1]);
        break;
      case FirstDivergence::Kind::Fault:
        for (size_t s = 0; s < 2; ++s)
          out += fmt::format("  {} {}\n", sideName(s), d.fault[s].empty() ? "does not fault" : "faults: " + d.fault[s]);
        break;
    }
  }
  if (r.faultCycle && (!r.divergence || r.divergence->kind != FirstDivergence::Kind::Fault)) {
    out += fmt::format("faults     in cycle {}: ", *r.faultCycle);
    for (size_t s = 0; s < 2; ++s)
      out += fmt::format("{}{} {}", s ? "; " : "", sideName(s),
                         r.fault[s].empty() ? "does not fault" : "faults: " + r.fault[s]);
    out += "\n";
  }
  if (r.pathsSplit && (!r.divergence || r.pathsSplit->cycle < r.divergence->cycle ||
                       r.divergence->kind != FirstDivergence::Kind::PathsSplit)) {
    const PathSplit& p = r.pathsSplit.value();
    out += fmt::format("statement paths first split  cycle {}, step {} ({} split){}: next,\n", p.cycle, p.step,
                       plural(r.splitCycles, "cycle's paths", "cycles' paths"),
                       r.divergence && p.cycle < r.divergence->cycle ? ", before the first divergence" : "");
    out += statementLine("A", p.statement[0], "(the cycle ends)");
    out += statementLine("B", p.statement[1], "(the cycle ends)");
  }
  const uint64_t differing = r.differingValues();
  if (differing) {
    out += "differences\n";
    size_t shown = 0;
    for (const ValueDifference& v : r.values) {
      if (!v.cycles) continue;
      if (++shown > 20) break;
      out += fmt::format("  {}  in {} ({}..{}); first: A {}, B {}\n", v.name, plural(v.cycles, "cycle", "cycles"),
                         v.firstCycle, v.lastCycle, v.first[0], v.first[1]);
    }
    if (differing > 20) out += fmt::format("  ... and {} more\n", differing - 20);
  }
  for (const std::string& w : r.warnings) out += "warning: " + w + "\n";
  if (r.equal()) {
    out += fmt::format("result     EQUAL: the {} compared values are the same at the end of all {}\n", r.values.size(),
                       plural(r.comparedCycles, "cycle", "cycles"));
  } else if (r.schedule && !r.divergence) {
    out += fmt::format("result     DIFFERENT: the schedules differ at cycle {} (the {} before are equal)\n",
                       r.schedule->cycle, plural(r.comparedCycles, "cycle", "cycles"));
  } else {
    out += fmt::format("result     DIFFERENT: {} of {} compared values differ, from cycle {} on\n", differing,
                       r.values.size(), r.divergence->cycle);
  }
  return out;
}

nlohmann::ordered_json diffToJson(const DiffReport& r) {
  json j;
  j["equal"] = r.equal();
  for (size_t s = 0; s < 2; ++s) {
    const TraceSummary& t = r.trace[s];
    json tj{{"path", t.path},
            {"programHash", t.programHash},
            {"firstCycle", t.firstCycle},
            {"lastCycle", t.endCycle - 1},
            {"cycles", t.cycles}};
    if (t.fault) tj["fault"] = *t.fault;
    j[s == 0 ? "a" : "b"] = tj;
  }
  j["compared"] = json{{"firstCycle", r.firstCompared},
                       {"lastCycle", r.lastCompared},
                       {"cycles", r.comparedCycles},
                       {"notComparedInA", r.onlyIn[0]},
                       {"notComparedInB", r.onlyIn[1]}};
  if (r.schedule)
    j["schedule"] = json{{"cycle", r.schedule->cycle},
                         {"a", json{{"task", r.schedule->task[0]}, {"startNs", r.schedule->startNs[0]}}},
                         {"b", json{{"task", r.schedule->task[1]}, {"startNs", r.schedule->startNs[1]}}}};
  if (r.divergence) {
    const FirstDivergence& d = r.divergence.value();
    static constexpr const char* kKinds[] = {"pathsSplit", "value", "fault"};
    json dj{{"cycle", d.cycle},
            {"task", d.task},
            {"startNs", d.startNs},
            {"step", d.step},
            {"kind", kKinds[static_cast<int>(d.kind)]},
            {"a", statementJson(d.statement[0])},
            {"b", statementJson(d.statement[1])}};
    if (d.kind == FirstDivergence::Kind::Value) {
      dj["values"] = d.values;
      if (!d.values.empty()) dj["first"] = json{{"name", d.values.front()}, {"a", d.detail[0]}, {"b", d.detail[1]}};
    }
    if (d.kind == FirstDivergence::Kind::Fault)
      dj["faults"] = json{{"a", d.fault[0].empty() ? json(nullptr) : json(d.fault[0])},
                          {"b", d.fault[1].empty() ? json(nullptr) : json(d.fault[1])}};
    j["firstDivergence"] = dj;
  }
  if (r.pathsSplit)
    j["pathsSplit"] = json{{"cycle", r.pathsSplit->cycle},
                           {"step", r.pathsSplit->step},
                           {"cycles", r.splitCycles},
                           {"a", statementJson(r.pathsSplit->statement[0])},
                           {"b", statementJson(r.pathsSplit->statement[1])}};
  if (r.faultCycle)
    j["fault"] = json{{"cycle", *r.faultCycle},
                      {"a", r.fault[0].empty() ? json(nullptr) : json(r.fault[0])},
                      {"b", r.fault[1].empty() ? json(nullptr) : json(r.fault[1])}};
  json values = json::array();
  for (const ValueDifference& v : r.values) values.push_back(valueJson(v));
  j["values"] = values;
  j["differing"] = r.differingValues();
  j["notCompared"] = json{
      {"onlyInA", r.onlyInA}, {"onlyInB", r.onlyInB}, {"differentType", r.differentType}, {"constants", r.constants}};
  j["chunksSkipped"] = json{{"a", r.chunksSkipped[0]}, {"b", r.chunksSkipped[1]}};
  j["warnings"] = r.warnings;
  return j;
}

std::string diffToJunit(const DiffReport& r) {
  const uint64_t differing = r.differingValues();
  const uint64_t tests = r.values.size() + 2;
  const uint64_t failures = differing + (r.schedule ? 1 : 0) + (r.faultCycle ? 1 : 0);
  const std::string suite = xmlEscaped(fmt::format("scanback trace diff {} {}", r.trace[0].path, r.trace[1].path));
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += fmt::format("<testsuites name=\"scanback trace diff\" tests=\"{}\" failures=\"{}\" errors=\"0\">\n", tests,
                     failures);
  out += fmt::format("  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"0\" skipped=\"0\">\n", suite,
                     tests, failures);
  out += "    <testcase name=\"schedule\" classname=\"schedule\"";
  if (r.schedule) {
    const ScheduleSplit& s = r.schedule.value();
    const std::string message =
        fmt::format("the schedules differ at cycle {}: A runs task {} at {}, B runs task {} at {}", s.cycle, s.task[0],
                    formatDuration(s.startNs[0]), s.task[1], formatDuration(s.startNs[1]));
    out += fmt::format(">\n      <failure message=\"{}\" type=\"schedule\"/>\n    </testcase>\n", xmlEscaped(message));
  } else {
    out += "/>\n";
  }
  out += "    <testcase name=\"faults\" classname=\"faults\"";
  if (r.faultCycle) {
    std::string message = fmt::format("in cycle {}:", *r.faultCycle);
    for (size_t s = 0; s < 2; ++s)
      message += fmt::format(" {} {}{}", sideName(s), r.fault[s].empty() ? "does not fault" : "faults: " + r.fault[s],
                             s ? "" : ";");
    out += fmt::format(">\n      <failure message=\"{}\" type=\"fault\"/>\n    </testcase>\n", xmlEscaped(message));
  } else {
    out += "/>\n";
  }
  for (const ValueDifference& v : r.values) {
    out += fmt::format("    <testcase name=\"{}\" classname=\"{}\"", xmlEscaped(v.name),
                       v.output ? "outputs" : "variables");
    if (!v.cycles) {
      out += "/>\n";
      continue;
    }
    const std::string message =
        fmt::format("differs in {} ({}..{}); first at cycle {}: A {}, B {}", plural(v.cycles, "cycle", "cycles"),
                    v.firstCycle, v.lastCycle, v.firstCycle, v.first[0], v.first[1]);
    out += fmt::format(">\n      <failure message=\"{}\" type=\"value\"/>\n    </testcase>\n", xmlEscaped(message));
  }
  out += "  </testsuite>\n</testsuites>\n";
  return out;
}

}  // namespace scanback::compare
