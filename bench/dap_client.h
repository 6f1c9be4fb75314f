// The DAP client of the benchmarks that drive a session as a debugger front end would
// (dap_replay_bench, nonstop_bench): a scanback::dap::Session runs on its own thread behind an
// in-memory pipe (net::MemoryPipe::pair(), as dap_bench.cpp does), and this process is its client.
//
// A watchdog closes the pipe when a request goes unanswered for the timeout given to the
// constructor: the waiting call then throws a ClientError that names the request. The session's
// thread holds its end of the pipe itself, so after such a hang the client may still be destroyed
// (the session's thread is then detached: it may never return, and the process should end with
// std::_Exit rather than wait for it).
#pragma once

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "dap/protocol/protocol.h"
#include "net/message_reader.h"
#include "net/message_writer.h"
#include "net/stream.h"

namespace scanback::bench {

// Thrown when the session answers wrongly, ends or hangs.
struct ClientError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A client of one Session running on its own thread behind an in-memory pipe.
class DapClient {
 public:
  using json = nlohmann::json;

  // `benchmark` begins every line this client writes to stderr (what the session logs, a hang);
  // `timeoutSeconds`: how long a request may go unanswered before it counts as a hang.
  DapClient(std::string benchmark, double timeoutSeconds);
  ~DapClient() { close(); }
  DapClient(const DapClient&) = delete;
  DapClient& operator=(const DapClient&) = delete;

  // Disconnects and joins the session (abandons it after a hang).
  void close();
  bool hung() const { return hung_; }

  // A request and its response's body. Events read meanwhile are dropped (output is kept for
  // error messages); a `stopped` event here is an error: no request of this kind moves.
  json request(const std::string& command, json arguments);

  // A request that moves the session: its response, then the `stopped` event, whose body is
  // returned.
  json move(const std::string& command, json arguments);

  // The text of the `output` events read since the last request was sent (at most the last 64):
  // for a move, what the session said about it before its `stopped` event (e.g. that the start
  // of the recording was reached).
  const std::vector<std::string>& outputsOfLastRequest() const { return requestOutputs_; }

 private:
  int64_t send(const std::string& command, json arguments);
  json next(const std::string& waitingFor);
  json awaitResponse(int64_t seq, const std::string& command);
  json awaitStopped(const std::string& command);
  std::string lastOutput() const;
  void watch();

  std::string benchmark_;
  double timeoutSeconds_;
  std::unique_ptr<net::Stream> client_;
  std::thread session_;
  std::unique_ptr<net::MessageReader> reader_;
  std::unique_ptr<net::MessageWriter> writer_;
  int64_t seq_ = 1;
  std::vector<std::string> outputs_;         // the last 8, with their category, for error messages
  std::vector<std::string> requestOutputs_;  // see outputsOfLastRequest()
  std::atomic<double> pendingSince_{0};
  std::string pendingCommand_;  // under watchMutex_
  std::thread watchdog_;
  std::mutex watchMutex_;
  std::condition_variable watchWake_;
  bool stopWatch_ = false;
  std::atomic<bool> hung_{false};
  bool closed_ = false;
};

}  // namespace scanback::bench
