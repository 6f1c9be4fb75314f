// `scanback lsp`: a Language Server Protocol 3.17 server over one byte stream (stdin/stdout).
//
// Messages are framed as the debug adapter's are (net/message_reader.h, net/message_writer.h:
// Content-Length headers), their bodies JSON-RPC 2.0. Requests are answered on the thread that
// reads, in order; a malformed message gets a JSON-RPC error (Parse error, Invalid Request, Method
// not found, Invalid params) and the server reads on. Nothing a client sends ends the server but
// `exit` or the end of the stream.
//
// The project is the workspace folder's `.st` files (read from disk, recursively, hidden folders
// and build output left out) with the open documents in place of their files, plus any other
// open `.st` document. Diagnostics are the compiler's own (compileProject: every error and
// warning of every file), computed on a thread of their own: an edit restarts a short quiet
// period (the debounce); edits that arrive while a compile runs are taken together by the next
// one; each file's diagnostics are replaced whole on every publication. Navigation requests use
// the parser's AST and tokens of the latest text (lsp/project.h).
#pragma once

#include <nlohmann/json.hpp>

#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>

#include "lsp/project.h"
#include "lsp/text.h"
#include "net/message_reader.h"
#include "net/message_writer.h"
#include "net/stream.h"
#include "vm/compiler/compiler.h"

namespace scanback::lsp {

using json = nlohmann::json;

struct ServerOptions {
  // Diagnostics are computed this long after the last edit (a burst of keystrokes is one compile).
  std::chrono::milliseconds debounce{25};
  // How the workspace compiles (`scanback lsp --dialect`).
  CompileOptions compile;
  // The server's own log (malformed messages): default stderr.
  std::function<void(const std::string&)> log;
};

// A JSON-RPC error a handler throws: its code and message reach the client.
struct RpcError {
  int code;
  std::string message;
};

inline constexpr int kParseError = -32700;
inline constexpr int kInvalidRequest = -32600;
inline constexpr int kMethodNotFound = -32601;
inline constexpr int kInvalidParams = -32602;
inline constexpr int kInternalError = -32603;
inline constexpr int kServerNotInitialized = -32002;
inline constexpr int kRequestFailed = -32803;

class Server {
 public:
  explicit Server(net::Stream& stream, ServerOptions options = {});
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Serves until `exit` or the end of the stream. The process's exit code: 0 after `shutdown`
  // then `exit`, 1 otherwise (as the protocol says).
  int run();

  // Handles one message (what run() does with each): for tests and the fuzz target.
  void handle(const json& message);

  // The diagnostics published so far, counted (tests and benchmarks wait on it, never on time).
  uint64_t publications() const;
  // Blocks until the diagnostics of every edit so far are published.
  void waitForDiagnostics();

 private:
  json dispatch(const std::string& method, const json& params);
  void notification(const std::string& method, const json& params);
  void send(json message);
  void reply(const json& id, json result);
  void replyError(const json& id, int code, const std::string& message);

  // ---- requests
  json initialize(const json& params);
  json documentSymbol(const json& params);
  json workspaceSymbol(const json& params);
  json definition(const json& params);
  json references(const json& params);
  json hover(const json& params);
  json completion(const json& params);
  json signatureHelp(const json& params);
  json prepareRename(const json& params);
  json rename(const json& params);
  json semanticTokens(const json& params);

  // ---- documents
  void didOpen(const json& params);
  void didChange(const json& params);
  void didClose(const json& params);
  void loadWorkspace(const std::string& folder);
  // The file's new text (null: it leaves the project). Its index is built when a request needs it.
  void setFile(const std::string& uri, const std::string& path, std::shared_ptr<const std::string> text);
  const Project& project();
  // The file of a request's textDocument and the token and source position of its `position`.
  struct At {
    const FileIndex* file = nullptr;
    uint32_t line = 0, column = 0;  // 1-based, bytes
  };
  At at(const json& params);
  json location(const FileIndex& file, const SourceSpan& span) const;
  json range(const FileIndex& file, const SourceSpan& span) const;
  const Symbol* symbolAt(const At& a);

  // ---- diagnostics (their own thread)
  void scheduleDiagnostics();
  void diagnosticsLoop();

  ServerOptions options_;
  net::MessageReader reader_;
  net::MessageWriter writer_;

  bool initialized_ = false;
  bool shutdown_ = false;
  bool exit_ = false;
  PositionEncoding encoding_ = PositionEncoding::Utf16;
  std::string root_;  // the workspace folder ("" when none)

  struct Document {
    std::string text;
    int64_t version = 0;
  };
  std::map<std::string, Document> open_;  // uri -> open document
  std::set<std::string> onDisk_;          // uris of the workspace folder's files
  struct File {
    std::string path;
    std::shared_ptr<const std::string> text;
    std::shared_ptr<const FileIndex> index;  // of `text`; null until a request needs it
  };
  std::map<std::string, File> files_;       // uri -> its latest text
  std::shared_ptr<const Project> project_;  // null when files_ changed since

  // Shared with the diagnostics thread.
  struct Snapshot {
    std::string uri;
    std::string path;
    std::shared_ptr<const std::string> text;
    std::optional<int64_t> version;
  };
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<Snapshot> pending_;
  uint64_t generation_ = 0;  // edits so far
  uint64_t published_ = 0;   // the generation whose diagnostics are out
  uint64_t publications_ = 0;
  std::chrono::steady_clock::time_point lastEdit_;
  bool stopping_ = false;
  std::set<std::string> withDiagnostics_;  // uris whose last publication was not empty
  std::thread diagnostics_;
};

}  // namespace scanback::lsp
