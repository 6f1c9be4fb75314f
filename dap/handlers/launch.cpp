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

// A replay session: the program and its sources come from the trace.
Reply launchReplay(Session& session, LaunchArguments launch) {
  const fs::path cwd = launch.cwd;
  const fs::path path = fs::path(*launch.trace).is_absolute() ? fs::path(*launch.trace) : cwd / *launch.trace;
  std::string error;
  std::unique_ptr<ReplayTarget> target = ReplayTarget::open(path.string(), session.targetListener(), error);
  if (!target) throw DapError(fmt::format("cannot replay {}: {}", path.string(), error));
  if (!target->setStartAt(launch.startAt, error)) throw DapError(fmt::format("'startAt': {}", error));
  std::shared_ptr<const Program> program = target->program();
  session.output("console", fmt::format("replaying {} (program {})\n", path.string(), program->hash.substr(0, 12)));
  session.stopOnEntry = true;
  session.sourceOptions =
      SourceOptions{launch.sourceFolders, launch.sourceScheme, fs::absolute(path).lexically_normal().string()};
  session.launchArguments = std::move(launch);
  session.setTarget(std::move(target), program, cwd.string());
  session.applyStops();
  return Reply{json(), [&session] { session.sendEvent("initialized"); }};
}

// The trace a live session records to: the path given (relative to `cwd`), a new temporary one
// (`temporary` set), or none (empty).
std::string recordPath(const RecordArgument& record, const fs::path& cwd, bool& temporary) {
  temporary = false;
  switch (record.kind) {
    case RecordArgument::Kind::Off: return {};
    case RecordArgument::Kind::Temporary: {
      static std::atomic<uint64_t> sessions{0};
      temporary = true;
      return (fs::temp_directory_path() / fmt::format("scanback-{}-{}.trace", ::getpid(), sessions++)).string();
    }
    case RecordArgument::Kind::Path: break;
  }
  const fs::path path(record.path);
  return (path.is_absolute() ? path : cwd / path).string();
}

}  // namespace

Reply launchRequest(Session& session, const json& args) {
  if (session.launched()) throw DapError("a program is launched already");
  LaunchArguments launch = readLaunchArguments(args);
  if (launch.replay()) return launchReplay(session, std::move(launch));
  const fs::path cwd = launch.cwd;
  std::shared_ptr<const Program> program = compileProgramArgument(session, launch.program, cwd, launch.dialect);

  LiveOptions options;
  if (launch.cycles) options.cycles = *launch.cycles;
  options.realtime = launch.realtime;
  if (launch.inputs) options.stimulus = loadInputsArgument(*launch.inputs, cwd, *program);
  bool temporary = false;
  options.recordPath = recordPath(launch.record, cwd, temporary);
  options.keepTraces = !temporary || launch.keepTrace;
  const bool nonstop = launch.nonstop;
  session.stopOnEntry = launch.stopOnEntry;
  session.launchArguments = std::move(launch);
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
