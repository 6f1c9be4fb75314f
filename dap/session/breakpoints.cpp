#include "dap/session/breakpoints.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "dap/session/expressions.h"

namespace scanback::dap {

namespace {

// A client's Source for messages: its path, its name or its sourceReference.
std::string describeSource(const json& source) {
  if (source.contains("path") && source["path"].is_string()) return source["path"];
  if (source.contains("name") && source["name"].is_string()) return source["name"];
  if (source.contains("sourceReference")) return fmt::format("sourceReference {}", source["sourceReference"].dump());
  return "the source";
}

}  // namespace

std::optional<std::function<bool(uint64_t)>> parseHitCondition(const std::string& text, std::string& error) {
  size_t i = 0;
  auto skipBlanks = [&] {
    while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
  };
  skipBlanks();
  std::string op;
  while (i < text.size() && (text[i] == '=' || text[i] == '>' || text[i] == '%')) op += text[i++];
  skipBlanks();
  const size_t digits = i;
  uint64_t n = 0;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
    if (n > (UINT64_MAX - 9) / 10) {
      error = fmt::format("hit condition '{}': the number is too large", text);
      return std::nullopt;
    }
    n = n * 10 + static_cast<uint64_t>(text[i++] - '0');
  }
  const bool hasNumber = i > digits;
  skipBlanks();
  if (!hasNumber || i != text.size()) {
    error = fmt::format("hit condition '{}' is not one of N, =N, ==N, >=N, >N, %N", text);
    return std::nullopt;
  }
  if (op.empty() || op == ">=") return [n](uint64_t hit) { return hit >= n; };
  if (op == "=" || op == "==") return [n](uint64_t hit) { return hit == n; };
  if (op == ">") return [n](uint64_t hit) { return hit > n; };
  if (op == "%") {
    if (n == 0) {
      error = fmt::format("hit condition '{}': %0 would never stop", text);
      return std::nullopt;
    }
    return [n](uint64_t hit) { return hit % n == 0; };
  }
  error = fmt::format("hit condition '{}' is not one of N, =N, ==N, >=N, >N, %N", text);
  return std::nullopt;
}

std::pair<Breakpoint, std::shared_ptr<ResolvedBreakpoint>> BreakpointManager::resolve(const SourceMap& sources,
                                                                                      std::optional<FileId> file,
                                                                                      const std::string& sourceName,
                                                                                      const SourceBreakpoint& want,
                                                                                      int64_t id) const {
  Breakpoint b;
  b.id = id;
  b.line = std::max<int64_t>(want.line, 1);
  b.column = want.column;
  // An unverified breakpoint: reported with why; the target does not see it.
  auto failed = [&](std::string message) {
    b.verified = false;
    b.message = std::move(message);
    b.reason = "failed";
    return std::pair<Breakpoint, std::shared_ptr<ResolvedBreakpoint>>{std::move(b), nullptr};
  };
  if (!file) return failed(fmt::format("{} is not a source file of the launched program", sourceName));
  b.source = sources.source(*file);
  const std::optional<uint32_t> statement =
      want.line > 0
          ? sources.resolve(*file, static_cast<uint32_t>(want.line),
                            want.column ? std::optional<uint32_t>(static_cast<uint32_t>(*want.column)) : std::nullopt)
          : std::nullopt;
  if (!statement)
    return failed(fmt::format("no statement at or after line {} of {}", want.line, sources.source(*file).name));
  const Program& program = *program_;
  const SourceSpan& span = program.statements[*statement].span;
  b.line = span.line;
  b.column = span.column;
  b.endLine = span.endLine;
  b.endColumn = span.endColumn;
  auto resolved = std::make_shared<ResolvedBreakpoint>();
  resolved->id = id;
  resolved->statement = *statement;
  std::string error;
  if (want.condition && !want.condition->empty()) {
    resolved->condition = compileCondition(program, *statement, *want.condition, error);
    if (!resolved->condition) return failed(fmt::format("condition '{}': {}", *want.condition, error));
  }
  if (want.hitCondition && !want.hitCondition->empty()) {
    std::optional<std::function<bool(uint64_t)>> hit = parseHitCondition(*want.hitCondition, error);
    if (!hit) return failed(error);
    resolved->hitCondition = std::move(*hit);
  }
  if (want.logMessage) {
    resolved->logMessage = compileLogMessage(program, *statement, *want.logMessage, error);
    if (!resolved->logMessage) return failed(fmt::format("log message: {}", error));
  }
  b.verified = true;
  return {std::move(b), std::move(resolved)};
}

std::vector<Breakpoint> BreakpointManager::set(const SourceMap& sources, const json& source, std::optional<FileId> file,
                                               const std::vector<SourceBreakpoint>& requested) {
  const std::string name = describeSource(source);
  FileBreakpoints entry{source, file, requested, {}, {}};
  for (const SourceBreakpoint& want : requested) {
    auto [report, resolved] = resolve(sources, file, name, want, newId());
    entry.reported.push_back(std::move(report));
    if (resolved) entry.resolved.push_back(std::move(resolved));
  }
  std::vector<Breakpoint> response = entry.reported;
  // The same file named again (by path, reference or name): its entry is replaced.
  auto same = [&](const FileBreakpoints& f) {
    return file ? f.file == file
                : (!f.file && f.source.value("path", "") == source.value("path", "") &&
                   f.source.value("name", "") == source.value("name", ""));
  };
  std::erase_if(files_, same);
  if (!requested.empty()) files_.push_back(std::move(entry));
  return response;
}

std::vector<Breakpoint> BreakpointManager::rebind(std::shared_ptr<const Program> program, const SourceMap& sources) {
  program_ = std::move(program);
  std::vector<Breakpoint> changed;
  for (FileBreakpoints& f : files_) {
    f.file = sources.find(f.source);
    const std::string name = describeSource(f.source);
    f.resolved.clear();
    for (size_t i = 0; i < f.requested.size(); ++i) {
      auto [report, resolved] = resolve(sources, f.file, name, f.requested[i], *f.reported[i].id);
      if (json(report) != json(f.reported[i])) changed.push_back(report);
      f.reported[i] = std::move(report);
      if (resolved) f.resolved.push_back(std::move(resolved));
    }
  }
  std::vector<DataWatch> kept;
  for (const DataWatch& w : dataWatches_) {
    std::string error;
    std::optional<DataWatch> again = locateWatch(*program_, w.name, error);
    if (!again) {
      Breakpoint gone;
      gone.id = w.id;
      gone.verified = false;
      gone.message = fmt::format("{} is no longer watched: {}", w.name, error);
      changed.push_back(std::move(gone));
      continue;
    }
    again->id = w.id;
    kept.push_back(std::move(*again));
  }
  dataWatches_ = std::move(kept);
  return changed;
}

std::shared_ptr<const StopSet> BreakpointManager::stopSet() {
  auto set = std::make_shared<StopSet>();
  set->generation = ++generation_;
  set->program = program_;
  set->statementHasBreakpoint.assign(program_->statements.size(), 0);
  for (const FileBreakpoints& f : files_) {
    for (const auto& bp : f.resolved) {
      set->breakpoints.push_back(bp);
      set->statementHasBreakpoint[bp->statement] = 1;
    }
  }
  set->dataWatches = dataWatches_;
  set->stopOnFaults = stopOnFaults_;
  return set;
}

bool BreakpointManager::anyActive() const {
  for (const FileBreakpoints& f : files_)
    for (const auto& bp : f.resolved)
      if (!bp->logMessage) return true;
  return !dataWatches_.empty();
}

}  // namespace scanback::dap
