// A DAP client for session tests: runs a Session on an in-memory pipe (its own thread), sends
// requests, and collects every message the session sends, in order, each validated against the
// official DAP schema.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "dap/protocol/protocol.h"
#include "net/stream.h"

namespace scanback::dap::testing {

using namespace std::chrono_literals;

class SessionClient {
 public:
  SessionClient();
  ~SessionClient();

  // Sends a request; returns its seq. `check`: the request must be valid by the schema (tests
  // that send bad requests on purpose say false).
  int64_t send(const std::string& command, json arguments = json::object(), bool check = true);
  // Sends raw bytes (malformed framing tests).
  void sendRaw(const std::string& bytes);
  // Sends a request and waits for its response.
  json request(const std::string& command, json arguments = json::object(), std::chrono::milliseconds timeout = 10s);
  // The response to request `seq`.
  json response(int64_t seq, std::chrono::milliseconds timeout = 10s);
  // The next event called `name` not taken yet (others stay for later calls).
  json event(const std::string& name, std::chrono::milliseconds timeout = 10s);
  // True when no event `name` arrives within `wait`.
  bool noEvent(const std::string& name, std::chrono::milliseconds wait);
  // The first message from index `from` on (in messages()) that `matches`, waiting for it as
  // messages arrive; null after `timeout`.
  json awaitMessage(const std::function<bool(const json&)>& matches, size_t from = 0,
                    std::chrono::milliseconds timeout = 10s);
  // The first `output` event from index `from` on whose text starts with `prefix`, waiting for it.
  json awaitOutput(const std::string& prefix, size_t from = 0, std::chrono::milliseconds timeout = 10s);

  // Every message received so far, in order.
  std::vector<json> messages();
  // Index in messages() of the response to `seq` / of an event (-1 when none yet).
  int indexOfResponse(int64_t seq);
  int indexOfEvent(const std::string& name, size_t from = 0);
  // Messages that did not validate against the schema ("" when all did).
  std::string schemaErrors();
  // What the session logged (rejections without a seq).
  std::vector<std::string> logs();

  // initialize + launch(arguments) + the initialized event, ready for breakpoints.
  void start(json launchArguments, json initializeArguments = json::object());
  // configurationDone.
  void configured();

 private:
  std::unique_ptr<net::Stream> client_, server_;
  std::thread session_, reader_;
  std::mutex mutex_;
  std::condition_variable arrived_;
  std::vector<json> messages_;
  std::vector<bool> taken_;
  std::string schemaErrors_;
  std::vector<std::string> logs_;
  bool ended_ = false;
  int64_t seq_ = 1;
};

// A directory of ST files for one test, removed at the end.
class TempProject {
 public:
  explicit TempProject(const std::vector<std::pair<std::string, std::string>>& files);
  ~TempProject();
  std::string path(const std::string& file) const { return (dir_ / file).string(); }
  const std::filesystem::path& dir() const { return dir_; }

 private:
  std::filesystem::path dir_;
};

}  // namespace scanback::dap::testing
