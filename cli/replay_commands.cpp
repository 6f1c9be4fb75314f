// `scanback replay` and `scanback trace verify | why`: the replayer (replayer/replayer.h) on the
// command line. Every error names what was wrong and exits with kExitUsage (bad input: an unknown
// position or variable, a gap, a corrupt chunk, a program the trace was not recorded with);
// `verify` exits with kExitDivergence when the replay does not match the recording.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <iostream>

#include "cli/commands.h"
#include "cli/trace_inspect.h"
#include "replayer/replayer.h"
#include "replayer/why.h"
#include "vm/exec/iec_text.h"
#include "vm/runtime/state_json.h"
#include "vm/runtime/values.h"

namespace scanback::cli {

namespace {

using replay::Position;
using replay::Replayer;

// A position as the user wrote it: "end", "CYCLE" (the end of that cycle) or "CYCLE:STEP".
struct Target {
  bool end = false;
  uint64_t cycle = 0;
  std::optional<uint64_t> step;
};

bool parseNumber(const std::string& text, uint64_t& out) {
  if (text.empty() || text.size() > 19) return false;
  out = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    out = out * 10 + static_cast<uint64_t>(c - '0');
  }
  return true;
}

[[nodiscard]] bool parseTarget(const std::string& option, const std::string& text, Target& out, std::string& error) {
  if (text == "end") {
    out.end = true;
    return true;
  }
  const size_t colon = text.find(':');
  uint64_t step = 0;
  if (!parseNumber(text.substr(0, colon), out.cycle) ||
      (colon != std::string::npos && !parseNumber(text.substr(colon + 1), step))) {
    error = fmt::format("{} {}: expected CYCLE, CYCLE:STEP or end (e.g. 41, 41:3)", option, text);
    return false;
  }
  if (colon != std::string::npos) out.step = step;
  return true;
}

// The recorded facts of `cycle` that decide where its end is.
struct CycleExtent {
  uint32_t stepCount = 0;
  bool faulted = false;
  bool open = false;  // the recording finished inside it (see trace::OpenCycleData)
};

[[nodiscard]] std::optional<CycleExtent> extentOf(Replayer& r, uint64_t cycle, std::string& error) {
  std::shared_ptr<const trace::ChunkData> held;
  replay::CycleRecord record;
  if (!r.history().cycle(cycle, held, record, error)) return std::nullopt;
  const auto& fault = r.history().fault();
  return CycleExtent{record.stepCount, fault && fault->cycle == cycle, record.open};
}

// The position a target names. A cycle that ends in a fault has no end: its last position is the
// faulting statement (where `run --print-state` shows the state too), and `note` says so.
[[nodiscard]] std::optional<Position> resolve(Replayer& r, const Target& t, std::string& note, std::string& error) {
  if (t.step) return Position{t.cycle, *t.step};
  uint64_t cycle = t.cycle;
  if (t.end) {
    if (r.history().empty()) {
      error = r.history().reader().corruptOffset()
                  ? fmt::format("the trace has no readable cycle: {}", r.history().reader().corruptError())
                  : std::string("the trace has no recorded cycle");
      return std::nullopt;
    }
    cycle = r.history().endCycle() - 1;
  }
  const std::optional<CycleExtent> extent = extentOf(r, cycle, error);
  if (!extent) return std::nullopt;
  if (extent->faulted && extent->stepCount > 0) {
    if (!t.end)
      note = fmt::format("cycle {} ends in a fault: showing the faulting statement (step {})", cycle,
                         extent->stepCount - 1);
    return Position{cycle, extent->stepCount - 1};
  }
  if (extent->open && extent->stepCount > 0) {
    if (!t.end)
      note = fmt::format("cycle {} did not end: the recording finished while the task was paused at step {}", cycle,
                         extent->stepCount - 1);
    return Position{cycle, extent->stepCount - 1};
  }
  return Position{cycle, extent->stepCount};
}

std::string location(const Program& program, uint32_t statement) {
  if (statement >= program.statements.size()) return "?";
  const SourceSpan& s = program.statements[statement].span;
  const std::string& file = s.file < program.sources.size() ? program.sources.file(s.file).path : "?";
  return fmt::format("{}:{}:{}", file, s.line, s.column);
}

// The statement's first source line, trimmed (what a human recognises it by).
std::string sourceText(const Program& program, uint32_t statement) {
  if (statement >= program.statements.size()) return "";
  const SourceSpan& s = program.statements[statement].span;
  if (s.file >= program.sources.size()) return "";
  const std::string& text = program.sources.file(s.file).text;
  size_t begin = 0;
  for (uint32_t line = 1; line < s.line && begin != std::string::npos; ++line) {
    begin = text.find('\n', begin);
    if (begin != std::string::npos) ++begin;
  }
  if (begin == std::string::npos) return "";
  size_t end = text.find('\n', begin);
  std::string out = text.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
  const size_t first = out.find_first_not_of(" \t");
  if (first == std::string::npos) return "";
  const size_t last = out.find_last_not_of(" \t\r");
  return out.substr(first, last - first + 1);
}

std::string positionText(Position p) { return fmt::format("{}:{}", p.cycle, p.step); }

// Opens the trace and prints the reader's warnings; null (error printed) when it cannot be replayed.
std::unique_ptr<Replayer> openReplayer(const std::string& path) {
  std::string error;
  std::unique_ptr<Replayer> r = Replayer::open(path, replay::ReplayOptions{}, error);
  if (!r) {
    std::cerr << fmt::format("scanback: {}: {}\n", path, error);
    return nullptr;
  }
  for (const std::string& w : r->history().warnings()) std::cerr << fmt::format("scanback: warning: {}: {}\n", path, w);
  return r;
}

// Divergences met while seeking are not errors of the command, but the user must know: the state
// shown may not be what the recording saw.
void reportDivergences(const Replayer& r, const std::string& path) {
  for (const replay::Divergence& d : r.divergences())
    std::cerr << fmt::format("scanback: warning: {}: replay diverges from the recording at cycle {}: {}\n", path,
                             d.position.cycle, d.what);
}

void printSummary(Replayer& r, Position at, const CycleExtent& extent) {
  const Program& program = r.program();
  const Vm& vm = r.vm();
  const uint32_t task = r.task();
  std::cout << "position   ";
  if (at.step >= extent.stepCount)
    std::cout << fmt::format("end of cycle {} (after its {} steps)\n", at.cycle, extent.stepCount);
  else if (extent.open)
    std::cout << fmt::format("cycle {}, step {} of the {} it reached ({})\n", at.cycle, at.step, extent.stepCount,
                             positionText(at));
  else
    std::cout << fmt::format("cycle {}, step {} of {} ({})\n", at.cycle, at.step, extent.stepCount, positionText(at));
  if (task < program.tasks.size())
    std::cout << fmt::format("task       {} (interval {})\n", program.tasks[task].name,
                             formatDuration(program.tasks[task].intervalNs));
  // A unit test moves its cycle's time with ADVANCE_TIME: the time there is what its timers see.
  std::cout << fmt::format(
      "time       {} ({})\n", formatDuration(vm.cycleTime()),
      program.test.empty() ? "the cycle's virtual start time" : "the test's virtual time there, ADVANCE_TIME included");
  const uint32_t statement = r.statement();
  if (statement != UINT32_MAX)
    std::cout << fmt::format("statement  {}  {}\n", location(program, statement), sourceText(program, statement));
  const auto& fault = r.history().fault();
  if (extent.faulted && at.step + 1 == extent.stepCount && fault)
    std::cout << fmt::format("fault      the recording faulted at this statement: {}\n", fault->message);
  if (extent.open && at.step + 1 == extent.stepCount)
    std::cout << "end        the recording finished here, with the task paused before this statement\n";
  const std::vector<Frame> frames = vm.frames();
  if (frames.empty()) {
    std::cout << "call stack empty (between cycles)\n";
    return;
  }
  std::cout << "call stack (innermost first)\n";
  std::vector<std::string> names;
  size_t width = 0;
  for (const Frame& f : frames) {
    names.push_back(frameName(program, f));
    width = std::max(width, names.back().size());
  }
  for (size_t i = frames.size(); i-- > 0;) {
    std::cout << fmt::format("  #{:<3} {:<{}}  {}\n", frames.size() - 1 - i, names[i], width,
                             location(program, vm.frameStatement(frames, i)));
  }
}

}  // namespace

int replayCommand(const ReplayArgs& args) {
  Target target;
  std::string error;
  if (!parseTarget("--to", args.to, target, error)) {
    std::cerr << "scanback: " << error << "\n";
    return kExitUsage;
  }
  std::unique_ptr<Replayer> r = openReplayer(args.trace);
  if (!r) return kExitUsage;
  std::string note;
  const std::optional<Position> at = resolve(*r, target, note, error);
  if (!at || !r->seek(*at, error)) {
    std::cerr << fmt::format("scanback: {}: {}\n", args.trace, error);
    return kExitUsage;
  }
  if (!note.empty()) std::cerr << "scanback: note: " << note << "\n";
  reportDivergences(*r, args.trace);
  if (args.printState) {
    // Exactly what `run --print-state` prints, so that the two can be compared byte for byte.
    std::cout
        << stateToJson(r->program(), r->vm().image()).dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
        << "\n";
    return kExitOk;
  }
  const std::optional<CycleExtent> extent = extentOf(*r, at->cycle, error);
  if (!extent) {
    std::cerr << fmt::format("scanback: {}: {}\n", args.trace, error);
    return kExitUsage;
  }
  printSummary(*r, *at, *extent);
  return kExitOk;
}

int traceVerifyCommand(const std::string& path) {
  std::unique_ptr<Replayer> r = openReplayer(path);
  if (!r) return kExitUsage;
  const replay::History& h = r->history();
  uint64_t recorded = 0;
  for (size_t i = 0; i < h.chunkCount(); ++i) recorded += h.chunkBlock(i).cycleCount;

  // Progress only for a person watching (a terminal) or a run long enough to look stuck; tests and
  // pipelines get the summary alone.
  const bool tty = ::isatty(STDERR_FILENO) != 0;
  const auto started = std::chrono::steady_clock::now();
  auto lastShown = started;
  bool shown = false;
  auto progress = [&](uint64_t done, uint64_t total) {
    const auto now = std::chrono::steady_clock::now();
    if (!tty && now - started < std::chrono::seconds(5)) return;
    if (shown && now - lastShown < std::chrono::milliseconds(500)) return;
    lastShown = now;
    shown = true;
    const double percent = total ? 100.0 * static_cast<double>(done) / static_cast<double>(total) : 100.0;
    if (tty)
      std::cerr << fmt::format("\rverifying: {} of {} cycles ({:.0f}%)", done, total, percent) << std::flush;
    else
      std::cerr << fmt::format("scanback: verifying: {} of {} cycles ({:.0f}%)\n", done, total, percent);
  };
  std::string error;
  // On an error verify() stops early; the divergences met up to there are still worth reporting.
  const std::vector<replay::Divergence> divergences = r->verify(progress, error);
  if (tty && shown) std::cerr << "\r\033[K" << std::flush;

  size_t keyframeMismatches = 0;
  for (const replay::Divergence& d : divergences)
    if (d.kind == replay::DivergenceKind::Keyframe) ++keyframeMismatches;
  uint64_t dropped = 0;
  for (const trace::GapData& g : h.gaps()) dropped += g.cycleCount;

  auto line = [](std::string_view label, const std::string& text) {
    std::cout << fmt::format("{:<20}{}\n", label, text);
  };
  const trace::TraceReader& reader = h.reader();
  const uint64_t checked = r->verifiedCycles();
  line("trace", path);
  if (h.empty()) {
    line("cycles", "none recorded");
  } else {
    line("cycles", fmt::format("{} checked of the {} recorded in cycles {}..{}, in {} chunk{}", checked, recorded,
                               h.firstCycle(), h.endCycle() - 1, h.chunkCount(), h.chunkCount() == 1 ? "" : "s"));
  }
  if (!h.gaps().empty()) line("gaps", fmt::format("{} ({} cycles were not recorded)", h.gaps().size(), dropped));
  uint64_t missing = 0;
  for (const trace::DamageData& d : h.damage()) missing += d.cycleCount;
  // As `trace info` reports it (cli/trace_inspect.h).
  const std::vector<std::string> damage = cli::damageLines(reader);
  for (const std::string& d : damage) line("damage", d);
  if (h.fault()) line("fault", fmt::format("cycle {}: {}", h.fault()->cycle, h.fault()->message));
  line("divergences", std::to_string(divergences.size() - keyframeMismatches));
  line("keyframe mismatches", std::to_string(keyframeMismatches));
  // The first few say where replay and recording part; the rest mostly follow from them.
  constexpr size_t kShown = 10;
  for (size_t i = 0; i < divergences.size() && i < kShown; ++i) {
    const replay::Divergence& d = divergences[i];
    std::cout << fmt::format("  cycle {} (at {}): {}\n", d.position.cycle, positionText(d.position), d.what);
  }
  if (divergences.size() > kShown)
    std::cout << fmt::format("  ... and {} more (the first {} of {} are shown)\n", divergences.size() - kShown, kShown,
                             divergences.size());
  if (!divergences.empty()) {
    line("result", "DIVERGES: the replay does not match the recording");
    if (!error.empty()) std::cerr << fmt::format("scanback: {}: {}\n", path, error);
    return kExitDivergence;
  }
  // Faithful only when every part of the trace was there and checked; otherwise say what was.
  const std::string upTo =
      checked ? fmt::format("the {} cycle{} checked replay as recorded", checked, checked == 1 ? "" : "s")
              : std::string("no cycle was checked");
  if (!error.empty()) {
    line("result", fmt::format("DAMAGED: not verified to the end; {}", upTo));
    std::cerr << fmt::format("scanback: {}: {}\n", path, error);
    return kExitDamaged;
  }
  if (!damage.empty()) {
    std::vector<std::string> what;
    if (missing) what.push_back(fmt::format("{} cycle{} missing", missing, missing == 1 ? " is" : "s are"));
    if (reader.onlyTheIndexIsCorrupt())
      what.push_back("the index block is corrupt (the blocks were found by scanning)");
    else if (reader.corruptOffset())
      what.push_back("what follows the corrupt block is unreadable");
    else if (reader.unusableIndex())
      what.push_back("the index is unusable (the blocks were found by scanning)");
    if (what.empty()) what.push_back("blocks are missing or repeated");
    line("result", fmt::format("DAMAGED: {}; {}", fmt::join(what, ", and "), upTo));
    return kExitDamaged;
  }
  if (checked == 0) {
    line("result", "NOTHING CHECKED: the trace holds no complete chunk");
    return kExitDamaged;
  }
  if (!reader.complete()) {
    line("result", fmt::format("faithful as far as it goes: {}; the trace was not closed (cut off, or still being "
                               "recorded), so later cycles may be missing",
                               upTo));
    return kExitOk;
  }
  line("result", "faithful: every cycle replays as recorded");
  return kExitOk;
}

namespace {

// Who made an external write at a cycle start, as `trace why` names it.
const char* whyAuthorText(WriteAuthor author) {
  switch (author) {
    case WriteAuthor::Stimulus: return "stimulus";
    case WriteAuthor::Debugger: return "debugger";
    case WriteAuthor::Force: return "a force of the rerun recording";
    case WriteAuthor::ModbusPeer: return "Modbus peer";
    case WriteAuthor::Unknown: break;
  }
  // A trace recorded before writes said who made them.
  return "stimulus or a write between cycles";
}

// One line per node, its reads indented below it:
//   Main.y = 42  <- main.st:12  y := p^ + fb.out;  at 3:4
std::string whyOriginText(const replay::WhyNode& n) {
  switch (n.origin) {
    case replay::WhyOrigin::Statement: return fmt::format("{}:{}  {}", n.file, n.line, n.text);
    case replay::WhyOrigin::Input:
      return n.author == WriteAuthor::Unknown ? "scan input (%I)"
                                              : fmt::format("scan input (%I, {})", whyAuthorText(n.author));
    case replay::WhyOrigin::Force: return "forced";
    case replay::WhyOrigin::Stimulus:
      return fmt::format("external write at the cycle start ({})", whyAuthorText(n.author));
    case replay::WhyOrigin::Write: return "debugger write";
    case replay::WhyOrigin::Initial: return "the value it started with";
    case replay::WhyOrigin::Constant: return "constant";
  }
  return "";
}

void printWhyNode(const replay::WhyNode& n, size_t indent) {
  std::string line = fmt::format("{:{}}{} = {}  <- {}", "", indent, n.variable, n.value,
                                 n.error.empty() ? whyOriginText(n) : "cannot be evaluated here: " + n.error);
  if (n.origin != replay::WhyOrigin::Constant) line += fmt::format("  at {}", positionText(n.position));
  if (n.repeated) line += "  (repeated: followed above)";
  std::cout << line << "\n";
  for (const replay::WhyNode& r : n.reads) printWhyNode(r, indent + 2);
}

void printWhyTree(const replay::WhyNode& root) { printWhyNode(root, 0); }

}  // namespace

int traceWhyCommand(const WhyArgs& args) {
  Target target;
  std::string error;
  if (!parseTarget("--at", args.at, target, error)) {
    std::cerr << "scanback: " << error << "\n";
    return kExitUsage;
  }
  if (args.count == 0) {
    std::cerr << "scanback: --count must be at least 1\n";
    return kExitUsage;
  }
  std::unique_ptr<Replayer> r = openReplayer(args.trace);
  if (!r) return kExitUsage;
  const Program& program = r->program();
  std::optional<VariableLocation> variable = args.variable.starts_with('%')
                                                 ? findAddress(program, args.variable, error)
                                                 : findVariable(program, args.variable, error);
  if (!variable || !variable->type) {
    std::cerr << fmt::format("scanback: {}: unknown variable {}: {}\n", args.trace, args.variable, error);
    return kExitUsage;
  }
  std::string note;
  const std::optional<Position> at = resolve(*r, target, note, error);
  if (!at || !r->seek(*at, error)) {
    std::cerr << fmt::format("scanback: {}: {}\n", args.trace, error);
    return kExitUsage;
  }
  if (!note.empty()) std::cerr << "scanback: note: " << note << "\n";
  if (args.depth > 1 || args.json) {
    const replay::WhyTarget whyTarget{variable->path, variable->offset, variable->bit, variable->type};
    std::optional<replay::WhyNode> root = replay::explainValue(*r, whyTarget, *at, args.depth, error);
    if (!root) {
      std::cerr << fmt::format("scanback: {}: {}\n", args.trace, error);
      return kExitUsage;
    }
    reportDivergences(*r, args.trace);
    if (args.json)
      std::cout << replay::whyToJson(*root).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    else
      printWhyTree(*root);
    return kExitOk;
  }
  const replay::Watch watch{variable->offset, variable->bit >= 0 ? 1u : std::max<uint32_t>(variable->type->size, 1),
                            variable->bit};
  // The value at a position includes the change reported at that very position (made by the
  // statement just before it, or by the scan inputs at step 0), so search up to one step after it.
  const Position bound{at->cycle, at->step + 1};
  std::vector<replay::Change> changes = r->lastChanges(watch, bound, args.count, error);
  if (!error.empty()) {
    std::cerr << fmt::format("scanback: {}: {}\n", args.trace, error);
    return kExitUsage;
  }
  reportDivergences(*r, args.trace);

  // Values are printed as `run --print-state` prints them, read from a copy of the image at the
  // position with the watched bytes replaced.
  std::vector<uint8_t> scratch(r->vm().image(), r->vm().image() + r->vm().imageSize());
  auto format = [&](const std::vector<uint8_t>& bytes) -> std::string {
    if (bytes.empty()) return "?";
    if (watch.bit >= 0) {
      const uint8_t mask = static_cast<uint8_t>(1u << watch.bit);
      scratch[watch.offset] = static_cast<uint8_t>((scratch[watch.offset] & ~mask) | (bytes[0] ? mask : 0));
    } else {
      std::memcpy(scratch.data() + watch.offset, bytes.data(), std::min<size_t>(bytes.size(), watch.size));
    }
    return valueToJson(program, scratch.data(), watch.offset, watch.bit, *variable->type)
        .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  };
  const std::string now = valueToJson(program, r->vm().image(), watch.offset, watch.bit, *variable->type)
                              .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  std::cout << fmt::format("{} = {} at {}{}\n", variable->path, now, positionText(*at),
                           target.end    ? " (the end of the recording)"
                           : target.step ? ""
                                         : fmt::format(" (the end of cycle {})", at->cycle));
  if (changes.empty()) {
    std::cout << fmt::format(
        "no change recorded from cycle {} up to here: the value is the one the recording "
        "started with\n",
        r->history().firstCycle());
    return kExitOk;
  }
  std::cout << fmt::format("last {} change{}, newest first:\n", changes.size(), changes.size() == 1 ? "" : "s");
  struct Row {
    std::string position, where, values, text;
  };
  std::vector<Row> rows;
  size_t widths[3] = {0, 0, 0};
  for (const replay::Change& c : changes) {
    const bool byInputs = c.byScanInputs || c.statement == UINT32_MAX;
    std::string origin = "scan inputs";
    if (byInputs) {
      // A force held in that cycle over the watched bytes is the origin (it is applied last).
      std::shared_ptr<const trace::ChunkData> held;
      replay::CycleRecord record;
      std::string ignored;  // (the cycle replayed: its record is there)
      if (r->history().cycle(c.position.cycle, held, record, ignored)) {
        for (const trace::ForceData* f : record.forces) {
          const uint32_t size = f->bit >= 0 ? 1u : static_cast<uint32_t>(f->bytes.size());
          const bool overlaps = f->offset < watch.offset + watch.size && watch.offset < f->offset + size &&
                                (f->bit < 0 || watch.bit < 0 || f->bit == watch.bit);
          if (overlaps) origin = fmt::format("{} forced at cycle {}", f->target, f->sinceCycle);
        }
      }
    }
    Row row{positionText(c.position), byInputs ? origin : location(program, c.statement),
            format(c.before) + " -> " + format(c.after), byInputs ? "" : sourceText(program, c.statement)};
    widths[0] = std::max(widths[0], row.position.size());
    widths[1] = std::max(widths[1], row.where.size());
    widths[2] = std::max(widths[2], row.values.size());
    rows.push_back(std::move(row));
  }
  for (const Row& row : rows) {
    std::string line = fmt::format("  {:<{}}  {:<{}}  {:<{}}  {}", row.position, widths[0], row.where, widths[1],
                                   row.values, widths[2], row.text);
    line.erase(line.find_last_not_of(' ') + 1);
    std::cout << line << "\n";
  }
  return kExitOk;
}

}  // namespace scanback::cli
