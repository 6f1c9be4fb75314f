// `scanback trace log TRACE FILE:LINE 'text {expr}'`: a logpoint over the whole recording (docs/
// explain.md). The message of every run of the statement on that line, with its position; the
// {expressions} are evaluated with the debugger's evaluator, exactly as a logpoint of a debug
// session evaluates them (dap/session/expressions.h). The runs are found with the trace's statement
// paths (Replayer::statementHits): chunks in which the statement never ran are not re-executed.
#include <fmt/format.h>

#include <charconv>
#include <filesystem>
#include <iostream>

#include "cli/commands.h"
#include "cli/trace_inspect.h"
#include "dap/session/expressions.h"
#include "replayer/replayer.h"

namespace scanback::cli {

namespace {

// Whether `given` (as typed) names the trace's source `recorded`: the same path, or the same
// trailing components (`main.st` names `src/main.st`).
bool sameFile(const std::string& recorded, const std::string& given) {
  if (recorded == given) return true;
  const std::filesystem::path r = std::filesystem::path(recorded).lexically_normal();
  const std::filesystem::path g = std::filesystem::path(given).lexically_normal();
  auto ri = std::distance(r.begin(), r.end()), gi = std::distance(g.begin(), g.end());
  if (gi == 0 || gi > ri) return false;
  auto it = r.begin();
  std::advance(it, ri - gi);
  return std::equal(g.begin(), g.end(), it);
}

// The first statement on FILE:LINE (the one a breakpoint there binds to).
std::optional<uint32_t> statementAt(const Program& program, const std::string& where, std::string& error) {
  const size_t colon = where.rfind(':');
  uint32_t line = 0;
  if (colon == std::string::npos || colon == 0 ||
      std::from_chars(where.data() + colon + 1, where.data() + where.size(), line).ptr != where.data() + where.size() ||
      line == 0) {
    error = fmt::format("{}: expected FILE:LINE (a source file of the trace and a line number from 1)", where);
    return std::nullopt;
  }
  const std::string file = where.substr(0, colon);
  std::optional<FileId> fileId;
  for (FileId f = 0; f < program.sources.size(); ++f) {
    if (!sameFile(program.sources.file(f).path, file)) continue;
    if (fileId) {
      error = fmt::format("{} names more than one source of the trace ({} and {}): give more of its path", file,
                          program.sources.file(*fileId).path, program.sources.file(f).path);
      return std::nullopt;
    }
    fileId = f;
  }
  if (!fileId) {
    std::string names;
    for (const SourceFile& f : program.sources.files()) names += (names.empty() ? "" : ", ") + f.path;
    error = fmt::format("{} is not a source of the trace (its sources: {})", file, names);
    return std::nullopt;
  }
  std::optional<uint32_t> best;
  for (uint32_t id = 0; id < program.statements.size(); ++id) {
    const SourceSpan& s = program.statements[id].span;
    if (s.file != *fileId || s.line != line) continue;
    if (!best || s.column < program.statements[*best].span.column) best = id;
  }
  if (!best) error = fmt::format("{}:{}: no statement starts on that line", program.sources.file(*fileId).path, line);
  return best;
}

}  // namespace

int traceLogCommand(const LogArgs& args) {
  std::string error;
  std::unique_ptr<replay::Replayer> r = replay::Replayer::open(args.trace, replay::ReplayOptions{}, error);
  if (!r) {
    std::cerr << fmt::format("scanback: {}: {}\n", args.trace, error);
    return kExitUsage;
  }
  for (const std::string& w : r->history().warnings())
    std::cerr << fmt::format("scanback: warning: {}: {}\n", args.trace, w);
  if (r->history().empty()) {
    std::cerr << fmt::format("scanback: {}: the trace holds no recorded cycle\n", args.trace);
    return kExitUsage;
  }
  const Program& program = r->program();
  const std::optional<uint32_t> statement = statementAt(program, args.location, error);
  if (!statement) {
    std::cerr << fmt::format("scanback: {}: {}\n", args.trace, error);
    return kExitUsage;
  }
  const std::function<std::string(const Vm&)> message =
      dap::compileLogMessage(program, *statement, args.message, error);
  if (!message) {
    std::cerr << fmt::format("scanback: {}: '{}': {}\n", args.trace, args.message, error);
    return kExitUsage;
  }
  uint64_t first = r->history().firstCycle(), last = r->history().endCycle() - 1;
  if (!narrowToCycles(args.cycles, args.trace, first, last, error)) {
    std::cerr << "scanback: " << error << "\n";
    return kExitUsage;
  }
  uint64_t printed = 0;
  std::string out;
  const bool stopped = !r->statementHits(
      {*statement}, first, last,
      [&](replay::Position p, uint32_t, const Vm& vm) {
        out += fmt::format("{}:{}  {}\n", p.cycle, p.step, message(vm));
        if (out.size() > (1u << 16)) {
          std::cout << out;
          out.clear();
        }
        return ++printed < args.limit;
      },
      error);
  std::cout << out << std::flush;
  if (stopped && !error.empty()) {
    std::cerr << fmt::format("scanback: {}: {}\n", args.trace, error);
    return kExitUsage;
  }
  if (printed == args.limit)
    std::cerr << fmt::format("scanback: note: stopped after {} message{} (--limit)\n", printed,
                             printed == 1 ? "" : "s");
  else if (printed == 0)
    std::cerr << fmt::format("scanback: note: {} did not run in cycles {}..{}\n", args.location, first, last);
  return kExitOk;
}

}  // namespace scanback::cli
