#include <fmt/format.h>

#include <filesystem>

#include "dap/handlers/handlers.h"
#include "dap/session/session.h"
#include "dap/targets/attach_feed.h"
#include "dap/targets/replay_target.h"

namespace scanback::dap {

namespace {

constexpr const char* kAttachIsReadOnly =
    "not available in attach mode: an attached session works on the history the runtime streams and never "
    "changes the runtime (setVariable, setExpression and stReload are refused)";

}  // namespace

// Attaches to a runtime started with `scanback run --control` (dap/targets/attach_feed.h): a
// session like a nonstop one, on the history the runtime streams, which never halts its task. A
// refusal (no runtime, a wrong token, debugging disabled) fails the request and leaves the session
// as it was, disconnected.
Reply attachRequest(Session& session, const json& args) {
  if (session.launched()) throw DapError("a program is launched or attached already");
  const AttachArguments attach = readAttachArguments(args);
  std::string error;
  AttachOptions options;
  options.endpoint = attach.endpoint;
  options.token = attach.authToken;
  std::unique_ptr<HistoryFeed> feed = attachFeed(options, session.targetListener(), error);
  if (!feed) throw DapError(fmt::format("cannot attach: {}", error));
  std::unique_ptr<ReplayTarget> target =
      ReplayTarget::follow(std::move(feed), session.targetListener(), error, /*fromNewest=*/true);
  if (!target) throw DapError(fmt::format("cannot attach: {}", error));
  target->setReadOnlyReason(kAttachIsReadOnly);
  std::shared_ptr<const Program> program = target->program();
  const std::string cwd = attach.cwd.value_or(std::filesystem::current_path().string());
  session.output("console", fmt::format("attached to {} (program {}); the runtime runs on\n", attach.endpoint.text(),
                                        program->hash.substr(0, 12)));
  session.stopOnEntry = false;
  session.stopDebuggee = [options](std::string& why) { return stopRuntime(options, why); };
  session.setTarget(std::move(target), program, cwd);
  session.applyStops();
  return Reply{json(), [&session] { session.sendEvent("initialized"); }};
}

}  // namespace scanback::dap
