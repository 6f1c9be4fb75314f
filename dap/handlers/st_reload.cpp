#include <fmt/format.h>

#include <filesystem>

#include "dap/handlers/handlers.h"
#include "dap/session/program_loader.h"
#include "dap/session/session.h"

namespace scanback::dap {

namespace fs = std::filesystem;

namespace {

std::string listed(const std::vector<std::string>& names) {
  constexpr size_t kShown = 20;
  std::string out;
  for (size_t i = 0; i < names.size() && i < kShown; ++i) out += (i ? ", " : "") + names[i];
  if (names.size() > kShown) out += fmt::format(" and {} more", names.size() - kShown);
  return out;
}

}  // namespace

// Custom request: recompiles the program (`program` as in launch; by default the launch's) and
// swaps it in at the next cycle start, keeping the values of the variables whose name and type
// are unchanged. Breakpoints are resolved again with their ids (a `breakpoint` event for each that
// changed). A running program runs on; a paused one stays where it is (the cycle under way
// finishes on the code it began with) and reports `stopped` (pause) so the client refreshes —
// unless the stop is a step's, which stands as it is.
Reply stReloadRequest(Session& session, const json& args) {
  Target& target = session.target();
  if (target.readOnly()) throw DapError(target.readOnlyReason());
  if (target.finished()) throw DapError("the program has ended: launch it again to run the new version");
  const std::optional<StopInfo> stop = target.paused() ? target.lastStop() : std::nullopt;
  if (stop && stop->reason == StopReason::Exception)
    throw DapError(
        "the program is stopped at a fault and ends when it goes on: launch it again to run the new version");
  // Defaults from the launch (none for a replayed or attached session, which is read-only anyway).
  const std::optional<LaunchArguments>& launch = session.launchArguments;
  const fs::path cwd = launch ? launch->cwd : fs::current_path().string();
  const std::vector<std::string> programArgument = args.contains("program") || !launch || launch->program.empty()
                                                       ? readProgramArgument(args.value("program", json()))
                                                       : launch->program;
  std::shared_ptr<const Program> program =
      compileProgramArgument(session, programArgument, cwd, launch ? launch->dialect : Dialect::Codesys);

  // Planned from the newest version: the one the target runs when this takes effect.
  const Program& current = session.program();
  if (const std::string why = reloadBlocker(current, *program); !why.empty())
    throw DapError(fmt::format("cannot reload: {}; restart the session to run the new version", why));
  ReloadRequest request{program, planReload(current, *program), std::nullopt};
  if (launch && launch->inputs) request.stimulus = loadInputsArgument(*launch->inputs, cwd, *program);
  const ReloadPlan& plan = request.plan;
  json body{{"programHash", program->hash}, {"kept", plan.kept}, {"reset", plan.reset}, {"removed", plan.removed}};
  std::string summary =
      fmt::format("reloaded the program (version {}): {} value(s) kept", program->hash.substr(0, 12), plan.kept);
  if (!plan.reset.empty()) summary += fmt::format("; from their initial value: {}", listed(plan.reset));
  if (!plan.removed.empty()) summary += fmt::format("; removed: {}", listed(plan.removed));
  summary += stop ? "; the cycle under way finishes on the previous version\n" : "\n";

  std::vector<Breakpoint> changed = session.replaceProgram(program);
  session.applyStops();  // resolved for the new version (off for the rest of a cycle of the old)
  std::string error;
  if (!target.reload(std::move(request), error)) throw DapError(error);
  session.output("console", summary);
  return Reply{std::move(body), [&session, changed = std::move(changed), stop] {
                 for (const Breakpoint& b : changed)
                   session.sendEvent("breakpoint", json{{"reason", "changed"}, {"breakpoint", b}});
                 if (stop && !stop->endsStep) {
                   StopInfo refresh;
                   refresh.reason = StopReason::Pause;
                   refresh.task = stop->task;
                   session.targetListener().stopped(refresh);
                 }
               }};
}

}  // namespace scanback::dap
