#include <fmt/format.h>

#include "dap/handlers/handlers.h"
#include "dap/session/session.h"
#include "vm/runtime/state_json.h"

namespace scanback::dap {

namespace {

// Where a POU's body ends: the line of its END_PROGRAM (END_FUNCTION_BLOCK, ...) keyword, as the
// parser found it; its last statement's line when it has none (a body cut short by an error).
std::pair<FileId, uint32_t> endOfPou(const Program& program, uint32_t pou) {
  const PouInfo& info = program.pous[pou];
  if (info.endSpan.line) return {info.endSpan.file, info.endSpan.line};
  const StatementInfo* last = nullptr;
  for (const StatementInfo& s : program.statements)
    if (s.pou == pou && (!last || s.span.endLine > last->span.endLine)) last = &s;
  const SourceSpan span = last ? last->span : info.span;
  return {span.file, span.endLine ? span.endLine : span.line};
}

}  // namespace

// One frame per active call, innermost first, each at its own statement (the paused one for the
// innermost, the calling one for the others) in its own file.
Reply stackTraceRequest(Session& session, const json& args) {
  const int64_t threadId = requiredMember<int64_t>(args, "threadId");
  Target& target = session.pausedTarget();
  const Vm& vm = target.vm();
  // The version the VM runs: after a reload, the cycle under way finishes on the code it began with.
  const Program& program = vm.program();
  if (threadId < 1 || static_cast<uint64_t>(threadId) > program.tasks.size())
    throw DapError(fmt::format("no thread with id {}", threadId));
  json frames = json::array();
  std::vector<Frame> calls;
  // Only the task whose cycle is under way has a call stack; the others are between cycles.
  if (vm.inCycle() && int64_t{vm.currentTask()} + 1 == threadId) calls = vm.frames();
  // A stop at the end of a cycle: one frame, the task's last program at its END_PROGRAM line.
  std::optional<Frame> endOfCycle;
  if (calls.empty()) endOfCycle = session.endOfCycleFrame(threadId);
  if (endOfCycle) {
    const PouInfo& pou = program.pous[endOfCycle->pou];
    StackFrame f;
    f.id = 1;
    f.name = frameName(program, *endOfCycle) + ": end of cycle";
    const auto [file, line] = endOfPou(program, endOfCycle->pou);
    f.source = session.sources().sourceOf(program, file);
    f.line = session.lineOut(line ? line : pou.span.line);
    f.column = session.columnOut(1);
    frames.push_back(f);
    return Reply{json{{"stackFrames", frames}, {"totalFrames", 1}}};
  }
  const int64_t total = static_cast<int64_t>(calls.size());
  const int64_t start = std::max<int64_t>(optionalMember<int64_t>(args, "startFrame").value_or(0), 0);
  const int64_t levels = optionalMember<int64_t>(args, "levels").value_or(0);
  for (int64_t k = start; k < total && (levels <= 0 || k < start + levels); ++k) {
    const size_t index = static_cast<size_t>(total - 1 - k);
    const uint32_t statement = vm.frameStatement(calls, index);
    StackFrame f;
    f.id = k + 1;
    f.name = frameName(program, calls[index]);
    if (statement < program.statements.size()) {
      const SourceSpan& span = program.statements[statement].span;
      f.source = session.sources().sourceOf(program, span.file);
      f.line = session.lineOut(span.line);
      f.column = session.columnOut(span.column);
      if (span.endLine) {
        f.endLine = session.lineOut(span.endLine);
        f.endColumn = session.columnOut(span.endColumn);
      }
    } else {
      f.line = session.lineOut(1);
      f.column = session.columnOut(1);
      f.presentationHint = "subtle";
    }
    frames.push_back(f);
  }
  return Reply{json{{"stackFrames", frames}, {"totalFrames", total}}};
}

}  // namespace scanback::dap
