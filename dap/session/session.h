// One debug session: reads requests from a stream, runs each through its handler
// (dap/handlers/), sends the response, and relays what the target reports as events.
//
// Every request is handled on the session's thread, in order. A handler returns the response body
// (or throws DapError); the response is sent, then the handler's afterResponse runs — which is how
// "the response comes before the event" is kept for every request that resumes or stops the
// target. Errors, malformed messages and unknown commands become error responses here, in one
// place.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "dap/protocol/arguments.h"
#include "dap/protocol/protocol.h"
#include "dap/session/breakpoints.h"
#include "dap/session/history_reader.h"
#include "dap/session/sources.h"
#include "dap/session/variables.h"
#include "dap/targets/target.h"
#include "net/message_reader.h"
#include "net/message_writer.h"
#include "net/stream.h"

namespace scanback::dap {

// What the client said in `initialize`.
struct ClientSettings {
  bool linesStartAt1 = true;
  bool columnsStartAt1 = true;
  bool supportsVariableType = false;
  bool supportsRunInTerminal = false;
};

class Session final : private TargetListener {
 public:
  // `log` receives the adapter's own diagnostics (malformed messages without a seq); default:
  // stderr.
  explicit Session(net::Stream& stream, std::function<void(const std::string&)> log = {});
  ~Session() override;

  // Serves requests until `disconnect` or the end of the stream.
  void run();
  // From now on `launch` and `attach` are refused unless their `authToken` argument is `token`
  // (a server any local process can connect to: net/auth_token.h).
  void requireAuthToken(std::string token) { authToken_ = std::move(token); }
  // Called once, on the session's thread, when the client has proven itself: `initialize`
  // answered and, when a token is required, a `launch` or `attach` that carried it. A server lifts
  // its handshake deadline then (net::Connection::established); a session after that may be idle
  // for hours.
  void onEstablished(std::function<void()> established) { onEstablished_ = std::move(established); }

  // ---- for handlers
  void sendEvent(const std::string& event, json body = json());
  void output(std::string_view category, const std::string& text) override;
  ClientSettings& client() { return client_; }

  bool launched() const { return target_ != nullptr; }
  // Where a target reports to (this session).
  TargetListener& targetListener() { return *this; }
  void setTarget(std::unique_ptr<Target> target, std::shared_ptr<const Program> program,
                 const std::string& baseDirectory);
  // Where sources not at their recorded paths are looked for, and how others are named (a replay
  // launch's `sourceFolders` and `sourceScheme`); set before setTarget.
  SourceOptions sourceOptions;
  // What relative paths in requests are relative to: the launch's `cwd`, or the trace's directory.
  const std::string& baseDirectory() const { return baseDirectory_; }
  Target& target();        // DapError when no program was launched
  Target& pausedTarget();  // DapError unless the target is paused
  // The newest program version: what breakpoints and sources resolve against. The paused VM may
  // still be finishing a cycle of the version before a reload: what it shows is read with
  // vm().program().
  const Program& program();
  const std::shared_ptr<const Program>& programPtr() const { return program_; }
  // Counts reloads (0 for the launched version): names the layout data breakpoint ids refer to.
  uint32_t programVersion() const { return programVersion_; }
  // After stReload: the new version's sources and breakpoints, re-resolved with their ids. The
  // breakpoints whose verification, line or column changed are returned (for `breakpoint` events).
  std::vector<Breakpoint> replaceProgram(std::shared_ptr<const Program> program);
  SourceMap& sources();
  BreakpointManager& breakpoints();
  VariableStore& variables();

  // Hands the current breakpoints to the target (a new generation).
  void applyStops();
  // Before resuming the target: variable references and frame ids become invalid.
  void resuming();
  // The paused VM's frame with this id (1 = innermost); DapError when there is none.
  Frame frame(int64_t frameId);
  // A stop between cycles, at the end of one of thread `threadId`'s task (a search's stop after
  // the cycle's last statement, a seek to a cycle's end), has no call stack: its one frame is the
  // task's last program, shown at its END_PROGRAM line. Nullopt when the stop is inside a cycle or
  // of another thread.
  std::optional<Frame> endOfCycleFrame(int64_t threadId);

  // Lines and columns as the client counts them.
  int64_t lineOut(uint32_t line) const { return client_.linesStartAt1 ? line : int64_t{line} - 1; }
  int64_t columnOut(uint32_t column) const { return client_.columnsStartAt1 ? column : int64_t{column} - 1; }
  // Any integer a client sends converts without overflow (the largest stays itself: no such line).
  int64_t lineIn(int64_t line) const { return client_.linesStartAt1 || line == INT64_MAX ? line : line + 1; }
  int64_t columnIn(int64_t column) const {
    return client_.columnsStartAt1 || column == INT64_MAX ? column : column + 1;
  }
  // A Breakpoint/BreakpointLocation's line and column fields, converted for the client.
  void convertOut(Breakpoint& b) const;

  bool stopOnEntry = false;
  // An attached session: stops the runtime (disconnect with terminateDebuggee). False with `error`.
  std::function<bool(std::string&)> stopDebuggee;
  // A launched session's arguments (stReload defaults to its `program`, `cwd` and `inputs`); none
  // before `launch`, and for an attached session.
  std::optional<LaunchArguments> launchArguments;
  bool configurationDone = false;
  bool initialized = false;
  // Ends the session once the current response is sent.
  void end() { ending_ = true; }
  // Sends `terminated` once.
  void sendTerminated();
  // The session's own reader of the target's history (scanback/signals; scanback/timeline while
  // the target runs).
  HistoryReader& historyReader() { return historyReader_; }
  // A reader of another recording (scanback/signals' `trace`: the compare's other side, whose
  // values a lane draws over the session's own), opened once per path and kept beside the
  // session's own, so asking both sides for each lane does not reopen either.
  HistoryReader& comparedReader() { return comparedReader_; }

 private:
  void dispatch(const json& message);
  // DapError unless `arguments` carries the token (requireAuthToken) as 'authToken'.
  void checkAuthToken(const std::string& command, const json& arguments) const;
  void respond(const json& request, bool success, const json& body, const std::string& message);
  void send(json message);
  void stopped(const StopInfo& stop) override;
  void exited(int exitCode) override;
  void log(const std::string& text);

  net::MessageReader reader_;
  net::MessageWriter writer_;
  std::function<void(const std::string&)> log_;
  // Taken with the message's seq and held while it is written: seq order is wire order, whichever
  // thread sends.
  std::mutex sendMutex_;
  int64_t seq_ = 1;
  std::atomic<bool> terminatedSent_{false};
  bool ending_ = false;
  std::optional<std::string> authToken_;  // required by launch and attach when set
  bool authenticated_ = false;            // a launch or attach carried the token
  std::function<void()> onEstablished_;   // until called
  ClientSettings client_;
  std::unique_ptr<Target> target_;
  std::shared_ptr<const Program> program_;
  uint32_t programVersion_ = 0;
  std::string baseDirectory_;
  std::unique_ptr<SourceMap> sources_;
  std::unique_ptr<BreakpointManager> breakpoints_;
  std::unique_ptr<VariableStore> variables_;
  HistoryReader historyReader_;
  HistoryReader comparedReader_;
};

}  // namespace scanback::dap
