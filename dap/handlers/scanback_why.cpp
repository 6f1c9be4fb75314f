#include <fmt/format.h>

#include "dap/handlers/handlers.h"
#include "dap/handlers/history.h"
#include "dap/session/session.h"
#include "replayer/why.h"
#include "vm/debug/evaluator.h"
#include "vm/runtime/state_json.h"
#include "vm/runtime/values.h"

namespace scanback::dap {

namespace {

// How deep a why-chain goes when the request does not say (docs/explain.md).
constexpr int64_t kDefaultWhyDepth = 4;

// The storage `name` designates: an expression in the innermost frame where the target is paused
// (what the Variables and Watch views show), else a global or program-instance path.
replay::WhyTarget whyTargetOf(const Vm& vm, const std::string& name) {
  const Program& program = vm.program();
  std::string error;
  if (const Frame* frame = vm.innermostFrame()) {
    std::unique_ptr<debug::Expression> e = debug::Expression::compile(program, frame->pou, name, error);
    debug::EvalResult r;
    if (e &&
        e->evaluate(vm.memory(), vm.memorySize(),
                    debug::EvalContext{frame->pou, frame->thisOffset, frame->frameOffset, vm.cycleTime()}, r, error)) {
      if (!r.offset) throw DapError(fmt::format("scanback/why: {} is a value, not a variable", name));
      // Named by its path where it has one (`Main.x` for `x`), as the reads below it are.
      std::string path = *r.offset < program.imageSize() && r.bit < 0 ? pathOfOffset(program, *r.offset, r.type) : "";
      return replay::WhyTarget{path.empty() ? name : path, *r.offset, r.bit, r.type};
    }
  }
  const std::optional<VariableLocation> v =
      name.starts_with('%') ? findAddress(program, name, error) : findVariable(program, name, error);
  if (!v || !v->type) throw ArgumentError(fmt::format("scanback/why: unknown variable {}: {}", name, error));
  return replay::WhyTarget{v->path, v->offset, v->bit, v->type};
}

// The node's file and line as the client sees them (its paths, its line base), the same for the
// reads below it.
void toClient(Session& session, const Program& program, json& node) {
  if (node.contains("file")) {
    for (FileId f = 0; f < program.sources.size(); ++f) {
      if (program.sources.file(f).path != node["file"].get<std::string>()) continue;
      const Source source = session.sources().sourceOf(program, f);
      node["file"] = source.path.empty() ? source.name : source.path;
      break;
    }
    node["line"] = session.lineOut(node["line"].get<uint32_t>());
  }
  for (json& read : node["reads"]) toClient(session, program, read);
}

}  // namespace

// scanback/why (docs/explain.md): why `variable` has its value at the current position (or at
// `cycle`/`step`): the tree of replayer/why.h, as `scanback trace why --json` prints it. Answered
// by the session's own reader of the history, so the position does not move.
Reply whyRequest(Session& session, const json& args) {
  const std::string variable = requiredMember<std::string>(args, "variable");
  const std::optional<int64_t> depth = optionalMember<int64_t>(args, "depth");
  const std::optional<int64_t> cycle = optionalMember<int64_t>(args, "cycle");
  const std::optional<int64_t> step = optionalMember<int64_t>(args, "step");
  if (depth && (*depth < 1 || *depth > 1000)) throw ArgumentError("scanback/why: 'depth' must be 1 to 1000");
  if ((cycle && *cycle < 0) || (step && *step < 0)) throw ArgumentError("'cycle' and 'step' must not be negative");
  if (step && !cycle) throw ArgumentError("scanback/why: 'step' needs 'cycle'");
  Target& target = session.pausedTarget();
  TargetHistory& history = historyOf(target);
  std::string error;
  replay::Position at;
  if (cycle) {
    const std::optional<HistoryPosition> p =
        history.recordedPosition(static_cast<uint64_t>(*cycle),
                                 step ? std::optional<uint64_t>(static_cast<uint64_t>(*step)) : std::nullopt, error);
    if (!p) throw DapError(error);
    at = replay::Position{p->cycle, p->step};
  } else {
    const std::optional<Timeline> t = history.timeline(error);
    if (!t) throw DapError(error);
    at = replay::Position{t->cycle, t->step};
  }
  const replay::WhyTarget whyTarget = whyTargetOf(target.vm(), variable);
  replay::Replayer* r = session.historyReader().at(history.traceFile(), session.programPtr(), error);
  if (!r) throw DapError(error);
  // At a live task's pause, the cycle under way (not in the file yet) as the target holds it.
  r->setOpenCycle(history.openCycle());
  const std::optional<replay::WhyNode> root =
      replay::explainValue(*r, whyTarget, at, static_cast<unsigned>(depth.value_or(kDefaultWhyDepth)), error);
  if (!root) throw DapError(fmt::format("scanback/why: {}", error));
  json body = json::parse(replay::whyToJson(*root).dump());
  toClient(session, r->program(), body);
  return Reply{json{{"root", std::move(body)}}};
}

}  // namespace scanback::dap
