// A scripted LSP client for the tests and the benchmark: a Server (lsp/server.h) on its own thread
// over an in-memory pipe, and the client end that sends requests and notifications and reads what
// comes back. Responses are matched by id; notifications (publishDiagnostics) are kept in arrival
// order. Reads block: a test that waits for something that never comes is ended by ctest's timeout.
#pragma once

#include <nlohmann/json.hpp>

#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "lsp/server.h"
#include "net/message_reader.h"
#include "net/message_writer.h"
#include "net/stream.h"

namespace scanback::lsp::test {

using json = nlohmann::json;

class LspClient {
 public:
  explicit LspClient(ServerOptions options = {});
  ~LspClient();

  // `initialize` with `root` as rootUri and workspace folder (none when empty), then `initialized`.
  json initialize(const std::string& root, json capabilities = json::object());
  // A request; returns the whole response message (with `result` or `error`).
  json request(const std::string& method, json params);
  void notify(const std::string& method, json params);
  // Raw bytes on the wire, for malformed messages.
  void sendRaw(const std::string& bytes);
  // The next response (a message with an id), notifications kept aside.
  json nextResponse();
  // Waits until a publishDiagnostics for `uri` satisfies `done`; returns its params.
  json waitForDiagnostics(const std::string& uri, const std::function<bool(const json&)>& done);
  // Every publishDiagnostics received so far, oldest first.
  const std::deque<json>& notifications() const { return notifications_; }
  // Ends the session with shutdown and exit; the server's exit code.
  int shutdown();
  int exitCode();  // after the stream ended: run()'s result

  Server& server() { return *server_; }
  int64_t nextId() const { return nextId_; }

 private:
  json read();

  net::MemoryPipe::Pair pipe_;
  std::unique_ptr<Server> server_;
  std::thread thread_;
  int exitCode_ = -1;
  net::MessageReader reader_;
  net::MessageWriter writer_;
  std::deque<json> notifications_;
  int64_t nextId_ = 1;
};

// A document's text and URI of examples/plant or a temporary folder.
std::string readFile(const std::string& path);
std::string uriOf(const std::string& path);
// The 0-based position of the `nth` occurrence of `word` in `text`, `offset` characters into it.
json positionOf(const std::string& text, const std::string& word, int nth = 0, int offset = 0);

}  // namespace scanback::lsp::test
