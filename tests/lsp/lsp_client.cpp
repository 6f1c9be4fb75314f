#include "tests/lsp/lsp_client.h"

#include <fstream>
#include <sstream>
#include <stdexcept>

#include "lsp/text.h"

namespace scanback::lsp::test {

LspClient::LspClient(ServerOptions options)
    : pipe_(net::MemoryPipe::pair()),
      server_(std::make_unique<Server>(*pipe_.server, std::move(options))),
      reader_(*pipe_.client, net::ReaderLimits{}, net::BodyProtocol::JsonRpc),
      writer_(*pipe_.client) {
  thread_ = std::thread([this] {
    exitCode_ = server_->run();
    pipe_.server->close();
  });
}

LspClient::~LspClient() {
  pipe_.client->close();
  thread_.join();
}

json LspClient::read() {
  net::ReadResult r = reader_.next();
  if (!r.isMessage()) throw std::runtime_error("the server's stream ended or sent a malformed message");
  return r.message;
}

json LspClient::nextResponse() {
  for (;;) {
    json m = read();
    if (m.contains("id") && !m.contains("method")) return m;
    notifications_.push_back(std::move(m));
  }
}

json LspClient::request(const std::string& method, json params) {
  const int64_t id = nextId_++;
  json m = {{"jsonrpc", "2.0"}, {"id", id}, {"method", method}};
  if (!params.is_null()) m["params"] = std::move(params);
  if (!writer_.send(m)) throw std::runtime_error("the language server's pipe took no request: " + method);
  for (;;) {
    json r = nextResponse();
    if (r["id"] == id) return r;
  }
}

void LspClient::notify(const std::string& method, json params) {
  if (!writer_.send(json{{"jsonrpc", "2.0"}, {"method", method}, {"params", std::move(params)}}))
    throw std::runtime_error("the language server's pipe took no notification: " + method);
}

void LspClient::sendRaw(const std::string& bytes) {
  std::string error;
  pipe_.client->write(bytes, error);
}

json LspClient::initialize(const std::string& root, json capabilities) {
  json params = {{"processId", nullptr}, {"capabilities", std::move(capabilities)}};
  if (!root.empty()) {
    params["rootUri"] = uriOf(root);
    params["workspaceFolders"] = json::array({{{"uri", uriOf(root)}, {"name", "root"}}});
  } else {
    params["rootUri"] = nullptr;
  }
  json r = request("initialize", params);
  notify("initialized", json::object());
  return r;
}

json LspClient::waitForDiagnostics(const std::string& uri, const std::function<bool(const json&)>& done) {
  for (const json& n : notifications_)
    if (n["method"] == "textDocument/publishDiagnostics" && n["params"]["uri"] == uri && done(n["params"])) {
      json params = n["params"];
      notifications_.clear();
      return params;
    }
  notifications_.clear();
  for (;;) {
    json m = read();
    if (m.value("method", "") == "textDocument/publishDiagnostics" && m["params"]["uri"] == uri && done(m["params"]))
      return m["params"];
  }
}

int LspClient::shutdown() {
  request("shutdown", nullptr);
  notify("exit", nullptr);
  return exitCode();
}

int LspClient::exitCode() {
  // The server closes its end once run() returned: read to the end of the stream.
  for (;;) {
    net::ReadResult r = reader_.next();
    if (r.isEnd()) break;
  }
  thread_.join();
  thread_ = std::thread([] {});
  return exitCode_;
}

std::string readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string uriOf(const std::string& path) { return pathToUri(path); }

json positionOf(const std::string& text, const std::string& word, int nth, int offset) {
  size_t at = std::string::npos, from = 0;
  for (int i = 0; i <= nth; ++i) {
    at = text.find(word, from);
    if (at == std::string::npos) throw std::runtime_error("no occurrence " + std::to_string(nth) + " of " + word);
    from = at + 1;
  }
  uint32_t line = 0;
  size_t lineStart = 0;
  for (size_t i = 0; i < at; ++i)
    if (text[i] == '\n') {
      ++line;
      lineStart = i + 1;
    }
  return json{{"line", line}, {"character", at - lineStart + static_cast<size_t>(offset)}};
}

}  // namespace scanback::lsp::test
