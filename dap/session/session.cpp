#include "dap/session/session.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <iostream>
#include <string_view>
#include <utility>

#include "dap/handlers/handlers.h"
#include "net/auth_token.h"
#include "vm/base/out_of_memory.h"

namespace scanback::dap {

Session::Session(net::Stream& stream, std::function<void(const std::string&)> log)
    : reader_(stream), writer_(stream), log_(std::move(log)) {}

Session::~Session() {
  // The target's thread reports through this session: stop it first.
  if (target_) target_->terminate();
}

void Session::log(const std::string& text) {
  if (log_)
    log_(text);
  else
    std::cerr << "scanback dap: " << text << "\n";
}

void Session::run() {
  while (!ending_) {
    net::ReadResult read = reader_.next();
    if (read.isEnd()) break;
    if (read.isError()) {
      // With a seq the client gets an error response; without one there is nothing to respond to:
      // the rejection is logged. Either way the session goes on.
      const std::string what = read.error.toString();
      if (read.error.seq) {
        json request{{"seq", *read.error.seq}, {"type", "request"}, {"command", ""}};
        respond(request, false, json(), fmt::format("malformed message: {}", what));
      } else {
        log(fmt::format("rejected a malformed message: {}", what));
      }
      continue;
    }
    dispatch(read.message);
  }
  if (target_) target_->terminate();
}

void Session::dispatch(const json& message) {
  const auto seq = message.find("seq");
  const auto type = message.find("type");
  if (seq == message.end() || !seq->is_number_integer()) {
    log("rejected a message without an integer seq");
    return;
  }
  if (type == message.end() || !type->is_string() || *type != "request") {
    // Responses to reverse requests and stray events: nothing to do with them.
    if (type != message.end() && type->is_string() && *type == "response") return;
    respond(message, false, json(), "only requests are accepted");
    return;
  }
  const auto command = message.find("command");
  if (command == message.end() || !command->is_string()) {
    respond(message, false, json(), "the request has no command");
    return;
  }
  const std::string name = *command;
  const Handler* handler = nullptr;
  for (const Handler& h : handlers())
    if (name == h.command) handler = &h;
  if (!handler) {
    respond(message, false, json(), fmt::format("unknown request '{}'", name));
    return;
  }
  const json arguments = message.contains("arguments") ? message["arguments"] : json::object();
  Reply reply;
  try {
    // The protocol's arguments are always an object; anything else is refused here, for every
    // request, rather than read as "no arguments".
    if (!arguments.is_object()) notAnObject({}, arguments);
    if (authToken_ && (name == "launch" || name == "attach")) {
      checkAuthToken(name, arguments);
      authenticated_ = true;
    }
    if (!initialized && name != "initialize") throw DapError("the session is not initialized: send 'initialize' first");
    reply = handler->run(*this, arguments);
  } catch (const ArgumentError& e) {
    respond(message, false, json(), fmt::format("invalid arguments for '{}': {}", name, e.what()));
    return;
  } catch (const DapError& e) {
    respond(message, false, e.details(), e.what());
    return;
  } catch (const json::exception&) {
    // Every argument is read through dap/protocol's readers, which say what was wrong; this is a
    // last resort, and the library's own text would mean nothing to the user.
    respond(message, false, json(), fmt::format("invalid arguments for '{}': a value has the wrong type", name));
    return;
  } catch (const std::bad_alloc& e) {
    // The request fails; the session (and the server's others) go on (vm/base/out_of_memory.h).
    respond(message, false, json(),
            fmt::format("'{}' failed: {}", name, outOfMemoryText(e, fmt::format("handling '{}'", name))));
    return;
  } catch (const std::exception& e) {
    respond(message, false, json(), fmt::format("'{}' failed: {}", name, e.what()));
    return;
  }
  respond(message, true, reply.body, "");
  if (reply.afterResponse) reply.afterResponse();
}

void Session::checkAuthToken(const std::string& command, const json& arguments) const {
  const auto given = arguments.find("authToken");
  if (given == arguments.end() || !given->is_string()) {
    throw DapError(
        fmt::format("'{}' refused: this adapter serves a TCP port that any local process can reach, so the launch "
                    "configuration must give its token as 'authToken' (scanback dap printed it, or read it from "
                    "--auth-token-file)",
                    command));
  }
  if (!net::sameAuthToken(given->get<std::string>(), *authToken_))
    throw DapError(fmt::format("'{}' refused: 'authToken' is not the token this adapter was started with", command));
}

namespace {
// Requests a client sends by itself to fill its views (often racing with a resume or an ended
// session): their errors appear in the view that asked, or nowhere, never as a popup. An error
// of anything the user asked for (launch, a step, a write, a reload, a seek) is shown to the user.
bool clientAskedForDisplay(std::string_view command) {
  // clang-format off
  // (scanback/flow and scanback/values: the VS Code extension asks them at every stop for the editor's
  // marks and inline values; a live task paused inside a cycle that is not recorded yet has no flow.
  // scanback/forced: asked at every stop for the Forced Values view, it meets a replay that a
  // Continue right after the stop has set moving.)
  static constexpr std::array<std::string_view, 18> kDisplayRequests{
      "threads", "stackTrace", "scopes", "variables", "source", "evaluate", "loadedSources",
      "breakpointLocations", "dataBreakpointInfo", "completions", "exceptionInfo", "readMemory", "modules",
      "scanback/timeline", "scanback/signals", "scanback/flow", "scanback/values", "scanback/forced"};
  // clang-format on
  return std::ranges::find(kDisplayRequests, command) != kDisplayRequests.end();
}
}  // namespace

void Session::respond(const json& request, bool success, const json& body, const std::string& message) {
  json response{
      {"type", "response"},
      {"request_seq", request.value("seq", int64_t{0})},
      {"success", success},
      {"command", request.contains("command") && request["command"].is_string() ? request["command"].get<std::string>()
                                                                                : std::string()}};
  if (!success) {
    response["message"] = message;
    const bool showUser = !clientAskedForDisplay(response["command"].get_ref<const std::string&>());
    json errorBody = body.is_object() ? body : json::object();
    errorBody["error"] = json{{"id", 1}, {"format", message}, {"showUser", showUser}};
    response["body"] = std::move(errorBody);
  } else if (!body.is_null()) {
    response["body"] = body;
  }
  send(std::move(response));
  // Initialized and, with a token, authenticated (even if that launch failed): proven.
  if (onEstablished_ && initialized && (!authToken_ || authenticated_)) std::exchange(onEstablished_, nullptr)();
}

void Session::send(json message) {
  std::lock_guard lock(sendMutex_);
  message["seq"] = seq_++;
  // A message the client cannot take is lost with the connection: the peer has gone (the read
  // loop then sees the end of the stream and the session ends) or stalled (the stream closes
  // itself). Nothing else is left to tell.
  static_cast<void>(writer_.send(message));
}

void Session::sendEvent(const std::string& event, json body) {
  json message{{"type", "event"}, {"event", event}};
  if (!body.is_null()) message["body"] = std::move(body);
  send(std::move(message));
}

void Session::output(std::string_view category, const std::string& text) {
  sendEvent("output", json{{"category", category}, {"output", text}});
}

void Session::sendTerminated() {
  if (!terminatedSent_.exchange(true)) sendEvent("terminated", json::object());
}

void Session::stopped(const StopInfo& stop) {
  json body{{"reason", stopReasonName(stop.reason)}, {"threadId", int64_t{stop.task} + 1}, {"allThreadsStopped", true}};
  if (!stop.breakpointIds.empty()) body["hitBreakpointIds"] = stop.breakpointIds;
  if (!stop.description.empty()) {
    body["description"] = stop.description;
    body["text"] = stop.description;
  }
  sendEvent("stopped", std::move(body));
}

void Session::exited(int exitCode) {
  sendEvent("exited", json{{"exitCode", exitCode}});
  sendTerminated();
}

void Session::setTarget(std::unique_ptr<Target> target, std::shared_ptr<const Program> program,
                        const std::string& baseDirectory) {
  target_ = std::move(target);
  program_ = std::move(program);
  baseDirectory_ = baseDirectory;
  sources_ = std::make_unique<SourceMap>(*program_, baseDirectory, sourceOptions);
  breakpoints_ = std::make_unique<BreakpointManager>(program_);
  variables_ = std::make_unique<VariableStore>();
}

const Program& Session::program() {
  target();
  return *program_;
}

std::vector<Breakpoint> Session::replaceProgram(std::shared_ptr<const Program> program) {
  auto sources = std::make_unique<SourceMap>(*program, baseDirectory_, sourceOptions);
  std::vector<Breakpoint> changed = breakpoints_->rebind(program, *sources);
  program_ = std::move(program);
  sources_ = std::move(sources);
  ++programVersion_;
  for (Breakpoint& b : changed) convertOut(b);
  return changed;
}

Target& Session::target() {
  if (!target_) throw DapError("no program is running: launch one first");
  return *target_;
}

Target& Session::pausedTarget() {
  Target& t = target();
  if (t.finished()) throw DapError("the program has ended");
  if (!t.paused()) throw DapError("the program is running: pause it first");
  return t;
}

SourceMap& Session::sources() {
  target();
  return *sources_;
}

BreakpointManager& Session::breakpoints() {
  target();
  return *breakpoints_;
}

VariableStore& Session::variables() {
  target();
  return *variables_;
}

void Session::applyStops() {
  if (target_) target_->setStops(breakpoints_->stopSet());
}

void Session::resuming() {
  if (variables_) variables_->reset();
}

std::optional<Frame> Session::endOfCycleFrame(int64_t threadId) {
  Target& target = pausedTarget();
  const Vm& vm = target.vm();
  const std::optional<StopInfo> stop = target.lastStop();
  if (vm.inCycle() || !stop || int64_t{stop->task} + 1 != threadId || vm.steps() == 0) return std::nullopt;
  const Program& program = vm.program();
  if (vm.currentTask() != stop->task || stop->task >= program.tasks.size()) return std::nullopt;
  const TaskInfo& task = program.tasks[stop->task];
  if (task.instances.empty()) return std::nullopt;
  // The task's last program: the body that ended the cycle.
  const ProgramInstanceInfo& instance = program.instances.at(task.instances.back());
  return Frame{instance.pou, 0, instance.offset, vm.imageSize(), 0};
}

Frame Session::frame(int64_t frameId) {
  const Vm& vm = pausedTarget().vm();
  const std::vector<Frame> frames = vm.frames();
  if (frames.empty() && frameId == 1) {
    const std::optional<StopInfo> stop = target().lastStop();
    if (stop)
      if (const std::optional<Frame> end = endOfCycleFrame(int64_t{stop->task} + 1)) return *end;
  }
  if (frameId < 1 || static_cast<uint64_t>(frameId) > frames.size())
    throw DapError(fmt::format("no stack frame with id {} (the program may have moved on)", frameId));
  return frames[frames.size() - static_cast<size_t>(frameId)];
}

void Session::convertOut(Breakpoint& b) const {
  if (b.line) b.line = lineOut(static_cast<uint32_t>(*b.line));
  if (b.endLine) b.endLine = lineOut(static_cast<uint32_t>(*b.endLine));
  if (b.column) b.column = columnOut(static_cast<uint32_t>(*b.column));
  if (b.endColumn) b.endColumn = columnOut(static_cast<uint32_t>(*b.endColumn));
}

}  // namespace scanback::dap
