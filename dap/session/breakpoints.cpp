#include "dap/session/breakpoints.h"

#include <fmt/format.h>

#include <cctype>

#include "dap/session/expressions.h"

namespace scanback::dap {

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

std::vector<Breakpoint> BreakpointManager::set(const SourceMap& sources, FileId file,
                                               const std::vector<SourceBreakpoint>& requested) {
  std::vector<Breakpoint> response;
  std::vector<std::shared_ptr<ResolvedBreakpoint>> kept;
  for (const SourceBreakpoint& want : requested) {
    Breakpoint b;
    b.id = newId();
    // An unverified breakpoint: it is reported with why, and not kept.
    auto failed = [&](std::string message) {
      b.verified = false;
      b.message = std::move(message);
      b.reason = "failed";
      response.push_back(std::move(b));
    };
    b.source = sources.source(file);
    b.line = want.line;
    b.column = want.column;
    const std::optional<uint32_t> statement =
        want.line > 0 ? sources.resolve(file, static_cast<uint32_t>(want.line),
                                        want.column ? std::optional<uint32_t>(static_cast<uint32_t>(*want.column))
                                                    : std::nullopt)
                      : std::nullopt;
    if (!statement) {
      failed(fmt::format("no statement at or after line {} of {}", want.line, sources.source(file).name));
      continue;
    }
    const SourceSpan& span = program_.statements[*statement].span;
    b.line = span.line;
    b.column = span.column;
    b.endLine = span.endLine;
    b.endColumn = span.endColumn;
    auto resolved = std::make_shared<ResolvedBreakpoint>();
    resolved->id = *b.id;
    resolved->statement = *statement;
    std::string error;
    if (want.condition && !want.condition->empty()) {
      resolved->condition = compileCondition(program_, *statement, *want.condition, error);
      if (!resolved->condition) {
        failed(fmt::format("condition '{}': {}", *want.condition, error));
        continue;
      }
    }
    if (want.hitCondition && !want.hitCondition->empty()) {
      std::optional<std::function<bool(uint64_t)>> hit = parseHitCondition(*want.hitCondition, error);
      if (!hit) {
        failed(error);
        continue;
      }
      resolved->hitCondition = std::move(*hit);
    }
    if (want.logMessage) {
      resolved->logMessage = compileLogMessage(program_, *statement, *want.logMessage, error);
      if (!resolved->logMessage) {
        failed(fmt::format("log message: {}", error));
        continue;
      }
    }
    b.verified = true;
    kept.push_back(std::move(resolved));
    response.push_back(std::move(b));
  }
  if (kept.empty())
    byFile_.erase(file);
  else
    byFile_[file] = std::move(kept);
  return response;
}

std::shared_ptr<const StopSet> BreakpointManager::stopSet() {
  auto set = std::make_shared<StopSet>();
  set->generation = ++generation_;
  set->statementHasBreakpoint.assign(program_.statements.size(), 0);
  for (const auto& [file, list] : byFile_) {
    for (const auto& bp : list) {
      set->breakpoints.push_back(bp);
      set->statementHasBreakpoint[bp->statement] = 1;
    }
  }
  set->dataWatches = dataWatches_;
  set->stopOnFaults = stopOnFaults_;
  return set;
}

bool BreakpointManager::anyActive() const {
  for (const auto& [file, list] : byFile_)
    for (const auto& bp : list)
      if (!bp->logMessage) return true;
  return !dataWatches_.empty();
}

}  // namespace scanback::dap
