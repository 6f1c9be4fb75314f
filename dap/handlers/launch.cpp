#include <fmt/format.h>

#include <filesystem>

#include "dap/handlers/handlers.h"
#include "dap/session/program_loader.h"
#include "dap/session/session.h"
#include "dap/targets/live_target.h"

namespace scanback::dap {

namespace fs = std::filesystem;

Reply launchRequest(Session& session, const json& args) {
  if (session.launched()) throw DapError("a program is launched already");
  if (args.contains("trace") && !args.contains("program"))
    throw DapError("replaying a trace ('trace') is not supported yet: launch a 'program'");
  const fs::path cwd = optionalMember<std::string>(args, "cwd").value_or(fs::current_path().string());
  std::error_code ec;
  if (!fs::is_directory(cwd, ec)) throw DapError(fmt::format("'cwd' {} is not a directory", cwd.string()));
  if (!args.contains("program")) throw DapError("missing argument 'program' (the ST file, or an array of files)");
  std::shared_ptr<const Program> program = compileProgramArgument(session, args["program"], cwd);

  LiveOptions options;
  if (const auto cycles = optionalMember<int64_t>(args, "cycles")) {
    if (*cycles < 0) throw DapError("'cycles' must not be negative");
    options.cycles = static_cast<uint64_t>(*cycles);
  }
  options.realtime = optionalMember<bool>(args, "realtime").value_or(true);
  if (const auto inputs = optionalMember<std::string>(args, "inputs"))
    options.stimulus = loadInputsArgument(*inputs, cwd, *program);
  session.stopOnEntry = optionalMember<bool>(args, "stopOnEntry").value_or(false);
  session.launchArguments = args;
  session.setTarget(std::make_unique<LiveTarget>(program, std::move(options), session.targetListener()), program,
                    cwd.string());
  session.applyStops();
  // Ready for configuration requests (breakpoints resolve against this program): `initialized`.
  return Reply{json(), [&session] { session.sendEvent("initialized"); }};
}

}  // namespace scanback::dap
