#include <fmt/format.h>

#include <atomic>
#include <filesystem>

#include <unistd.h>

#include "dap/handlers/handlers.h"
#include "dap/session/program_loader.h"
#include "dap/session/session.h"
#include "dap/targets/live_target.h"
#include "dap/targets/recorded_live_target.h"
#include "dap/targets/replay_target.h"

namespace scanback::dap {

namespace fs = std::filesystem;

namespace {

// The launch arguments as the session keeps them: the token has done its work.
json withoutAuthToken(json args) {
  args.erase("authToken");
  return args;
}

// `startAt`: "end" (default), "start", or a cycle number.
StartAt startAtArgument(const json& args) {
  StartAt at;
  if (!args.contains("startAt")) return at;
  const json& value = args["startAt"];
  if (value == "end") return at;
  if (value == "start") {
    at.kind = StartAt::Kind::Start;
    return at;
  }
  if (value.is_number_unsigned() || (value.is_number_integer() && value.get<int64_t>() >= 0)) {
    at.kind = StartAt::Kind::Cycle;
    at.cycle = value.get<uint64_t>();
    return at;
  }
  throw DapError(fmt::format("'startAt' must be \"end\", \"start\" or a cycle number, not {}", value.dump()));
}

// A replay session: the program and its sources come from the trace.
Reply launchReplay(Session& session, const json& args, const fs::path& cwd) {
  if (args.contains("program"))
    throw DapError("give 'program' (run it live) or 'trace' (replay a recording), not both");
  const auto trace = optionalMember<std::string>(args, "trace");
  if (!trace || trace->empty()) throw DapError("'trace' must be the path of a trace file");
  const fs::path path = fs::path(*trace).is_absolute() ? fs::path(*trace) : cwd / *trace;
  std::string error;
  std::unique_ptr<ReplayTarget> target = ReplayTarget::open(path.string(), session.targetListener(), error);
  if (!target) throw DapError(fmt::format("cannot replay {}: {}", path.string(), error));
  if (!target->setStartAt(startAtArgument(args), error)) throw DapError(fmt::format("'startAt': {}", error));
  std::shared_ptr<const Program> program = target->program();
  session.output("console", fmt::format("replaying {} (program {})\n", path.string(), program->hash.substr(0, 12)));
  session.stopOnEntry = true;
  session.launchArguments = withoutAuthToken(args);
  session.setTarget(std::move(target), program, cwd.string());
  session.applyStops();
  return Reply{json(), [&session] { session.sendEvent("initialized"); }};
}

// `record`: a trace path, true (the default: a temporary trace) or false (no history). Empty: none.
std::string recordArgument(const json& args, const fs::path& cwd, bool& temporary) {
  temporary = false;
  const json value = args.contains("record") ? args["record"] : json(true);
  if (value == false) return {};
  if (value == true) {
    static std::atomic<uint64_t> sessions{0};
    temporary = true;
    return (fs::temp_directory_path() / fmt::format("scanback-{}-{}.trace", ::getpid(), sessions++)).string();
  }
  if (!value.is_string() || value.get<std::string>().empty())
    throw DapError(fmt::format("'record' must be a trace path, true or false, not {}", value.dump()));
  const fs::path path(value.get<std::string>());
  return (path.is_absolute() ? path : cwd / path).string();
}

}  // namespace

Reply launchRequest(Session& session, const json& args) {
  if (session.launched()) throw DapError("a program is launched already");
  const fs::path cwd = optionalMember<std::string>(args, "cwd").value_or(fs::current_path().string());
  std::error_code ec;
  if (!fs::is_directory(cwd, ec)) throw DapError(fmt::format("'cwd' {} is not a directory", cwd.string()));
  if (args.contains("trace")) return launchReplay(session, args, cwd);
  if (!args.contains("program"))
    throw DapError("missing argument 'program' (the ST file, or an array of files) or 'trace' (a recording to replay)");
  std::shared_ptr<const Program> program = compileProgramArgument(session, args["program"], cwd);

  LiveOptions options;
  if (const auto cycles = optionalMember<int64_t>(args, "cycles")) {
    if (*cycles < 0) throw DapError("'cycles' must not be negative");
    options.cycles = static_cast<uint64_t>(*cycles);
  }
  options.realtime = optionalMember<bool>(args, "realtime").value_or(true);
  if (const auto inputs = optionalMember<std::string>(args, "inputs"))
    options.stimulus = loadInputsArgument(*inputs, cwd, *program);
  bool temporary = false;
  options.recordPath = recordArgument(args, cwd, temporary);
  options.keepTraces = !temporary || optionalMember<bool>(args, "keepTrace").value_or(false);
  const bool nonstop = optionalMember<bool>(args, "nonstop").value_or(false);
  if (nonstop && options.recordPath.empty())
    throw DapError("'nonstop' works on the recorded history: it cannot be combined with 'record': false");
  session.stopOnEntry = optionalMember<bool>(args, "stopOnEntry").value_or(false);
  session.launchArguments = withoutAuthToken(args);
  if (!options.recordPath.empty()) {
    const std::string path = options.recordPath;
    const bool keepTraces = options.keepTraces;
    std::string error;
    std::unique_ptr<Target> target;
    if (nonstop) {
      // The task runs on untouched; the session follows its recording as it grows.
      std::unique_ptr<HistoryFeed> feed = liveFeed(program, std::move(options), session.targetListener(), error);
      if (feed) target = ReplayTarget::follow(std::move(feed), session.targetListener(), error);
    } else {
      auto recorded = std::make_unique<RecordedLiveTarget>(program, std::move(options), session.targetListener());
      if (recorded->startRecording(error)) target = std::move(recorded);
    }
    if (!target) throw DapError(fmt::format("cannot record the session to {}: {}", path, error));
    session.output("console", keepTraces ? fmt::format("recording to {}\n", path)
                                         : fmt::format("recording to {} (removed at the end: set 'keepTrace' to keep "
                                                       "it)\n",
                                                       path));
    session.setTarget(std::move(target), program, cwd.string());
    session.applyStops();
    return Reply{json(), [&session] { session.sendEvent("initialized"); }};
  }
  session.setTarget(std::make_unique<LiveTarget>(program, std::move(options), session.targetListener()), program,
                    cwd.string());
  session.applyStops();
  // Without a recording there is no history: the client hides the reverse buttons. Then, ready
  // for configuration requests (breakpoints resolve against this program): `initialized`.
  return Reply{json(), [&session] {
                 session.sendEvent(
                     "capabilities",
                     json{{"capabilities", json{{"supportsStepBack", false}, {"supportsRestartFrame", false}}}});
                 session.sendEvent("initialized");
               }};
}

}  // namespace scanback::dap
