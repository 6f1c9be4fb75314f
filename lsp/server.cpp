#include "lsp/server.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "vm/base/out_of_memory.h"
#include "vm/base/version.h"
#include "vm/compiler/compiler.h"

namespace scanback::lsp {

namespace {

namespace fs = std::filesystem;

// How many `.st` files a workspace folder may hold before the rest are left out (a home folder
// opened by mistake must not make the server read the whole disk).
constexpr size_t kMaxWorkspaceFiles = 2000;

// LSP's SymbolKind numbers.
int lspSymbolKind(SymbolKind k) {
  switch (k) {
    case SymbolKind::Program: return 2;        // Module
    case SymbolKind::FunctionBlock: return 5;  // Class
    case SymbolKind::Function: return 12;
    case SymbolKind::Method: return 6;
    case SymbolKind::Interface: return 11;
    case SymbolKind::Struct: return 23;
    case SymbolKind::Enum: return 10;
    case SymbolKind::TypeAlias: return 26;  // TypeParameter: the nearest there is to a type name
    case SymbolKind::EnumValue: return 22;
    case SymbolKind::Variable: return 13;
    case SymbolKind::Field: return 8;
    case SymbolKind::Configuration: return 3;  // Namespace
    case SymbolKind::Resource: return 3;
    case SymbolKind::Task: return 24;             // Event
    case SymbolKind::ProgramInstance: return 19;  // Object
  }
  return 13;
}

// LSP's CompletionItemKind numbers.
int completionKind(const Symbol& s) {
  switch (s.kind) {
    case SymbolKind::Program: return 9;        // Module
    case SymbolKind::FunctionBlock: return 7;  // Class
    case SymbolKind::Function: return 3;
    case SymbolKind::Method: return 2;
    case SymbolKind::Interface: return 8;
    case SymbolKind::Struct: return 22;
    case SymbolKind::Enum:
    case SymbolKind::TypeAlias: return 13;
    case SymbolKind::EnumValue: return 20;
    case SymbolKind::Field: return 5;
    case SymbolKind::Variable: return s.var && s.var->constant ? 21 : 6;
    default: return 6;
  }
}

bool isIdentifier(std::string_view name) {
  if (name.empty()) return false;
  if (!((name[0] >= 'A' && name[0] <= 'Z') || (name[0] >= 'a' && name[0] <= 'z') || name[0] == '_')) return false;
  for (const char c : name)
    if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) return false;
  Diagnostics d;
  const std::vector<Token> tokens = lex(name, 0, d);
  return !d.hasErrors() && tokens.size() == 2 && tokens[0].kind == TokenKind::Identifier;
}

struct Snippet {
  const char* label;
  const char* body;
};
constexpr Snippet kSnippets[] = {
    {"IF", "IF ${1:condition} THEN\n\t$0\nEND_IF;"},
    {"IF ELSE", "IF ${1:condition} THEN\n\t$2\nELSE\n\t$0\nEND_IF;"},
    {"CASE", "CASE ${1:selector} OF\n\t${2:0}:\n\t\t$0\nEND_CASE;"},
    {"FOR", "FOR ${1:i} := ${2:1} TO ${3:10} DO\n\t$0\nEND_FOR;"},
    {"WHILE", "WHILE ${1:condition} DO\n\t$0\nEND_WHILE;"},
    {"REPEAT", "REPEAT\n\t$0\nUNTIL ${1:condition}\nEND_REPEAT;"},
    {"VAR", "VAR\n\t${1:name} : ${2:INT};\nEND_VAR"},
    {"VAR_INPUT", "VAR_INPUT\n\t${1:name} : ${2:BOOL};\nEND_VAR"},
    {"VAR_OUTPUT", "VAR_OUTPUT\n\t${1:name} : ${2:BOOL};\nEND_VAR"},
    {"FUNCTION_BLOCK",
     "FUNCTION_BLOCK ${1:Name}\nVAR_INPUT\n\t$2\nEND_VAR\nVAR_OUTPUT\n\t$3\nEND_VAR\n$0\nEND_FUNCTION_BLOCK"},
    {"FUNCTION", "FUNCTION ${1:Name} : ${2:INT}\nVAR_INPUT\n\t$3\nEND_VAR\n$0\nEND_FUNCTION"},
    {"PROGRAM", "PROGRAM ${1:Name}\nVAR\n\t$2\nEND_VAR\n$0\nEND_PROGRAM"},
};

constexpr const char* kTypeNames[] = {"BOOL",  "SINT", "INT",  "DINT",  "LINT",   "USINT",  "UINT",  "UDINT",
                                      "ULINT", "BYTE", "WORD", "DWORD", "LWORD",  "REAL",   "LREAL", "TIME",
                                      "LTIME", "DATE", "TOD",  "DT",    "STRING", "WSTRING"};

// The semantic token legend (initialize's semanticTokensProvider): indexes into these.
constexpr const char* kTokenTypes[] = {"enumMember", "variable", "parameter", "function", "class",
                                       "struct",     "enum",     "method",    "macro",    "type"};
constexpr const char* kTokenModifiers[] = {"declaration", "readonly", "functionBlockInstance"};
enum TokenType { TEnumMember, TVariable, TParameter, TFunction, TClass, TStruct, TEnum, TMethod, TMacro, TType };

const json& member(const json& object, const char* name) {
  if (!object.is_object() || !object.contains(name))
    throw RpcError{kInvalidParams, fmt::format("'{}' is missing", name)};
  return object[name];
}

std::string stringMember(const json& object, const char* name) {
  const json& v = member(object, name);
  if (!v.is_string()) throw RpcError{kInvalidParams, fmt::format("'{}' is not a string", name)};
  return v.get<std::string>();
}

uint32_t unsignedMember(const json& object, const char* name) {
  const json& v = member(object, name);
  if (!v.is_number_unsigned() || v.get<uint64_t>() > UINT32_MAX)
    throw RpcError{kInvalidParams, fmt::format("'{}' is not a uinteger", name)};
  return v.get<uint32_t>();
}

bool skippedFolder(const fs::path& p) {
  const std::string name = p.filename().string();
  return name.empty() || name[0] == '.' || name == "node_modules" || name == "build" || name.rfind("build-", 0) == 0;
}

bool isStFile(const fs::path& p) {
  std::string ext = p.extension().string();
  return equalsIgnoreCase(ext, ".st");
}

}  // namespace

Server::Server(net::Stream& stream, ServerOptions options)
    : options_(std::move(options)), reader_(stream, net::ReaderLimits{}, net::BodyProtocol::JsonRpc), writer_(stream) {
  if (!options_.log) options_.log = [](const std::string& text) { std::cerr << "scanback lsp: " << text << "\n"; };
  diagnostics_ = std::thread([this] { diagnosticsLoop(); });
}

Server::~Server() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  diagnostics_.join();
}

int Server::run() {
  while (!exit_) {
    net::ReadResult r = reader_.next();
    if (r.isEnd()) {
      if (!r.endError.empty()) options_.log("reading: " + r.endError);
      break;
    }
    if (r.isError()) {
      // The message's id is unknown: JSON-RPC answers with a null one.
      options_.log(r.error.toString());
      // JSON that is not an object is an Invalid Request; anything that could not be read as JSON
      // (a bad header, a body that is not UTF-8 or not JSON) a Parse error.
      const bool notObject = r.error.what.find("not an object") != std::string::npos;
      replyError(nullptr, notObject ? kInvalidRequest : kParseError, r.error.toString());
      continue;
    }
    handle(r.message);
  }
  return shutdown_ && exit_ ? 0 : 1;
}

void Server::send(json message) {
  message["jsonrpc"] = "2.0";
  std::string error;
  if (!writer_.send(message, &error)) options_.log("writing: " + error);
}

void Server::reply(const json& id, json result) { send(json{{"id", id}, {"result", std::move(result)}}); }

void Server::replyError(const json& id, int code, const std::string& message) {
  send(json{{"id", id}, {"error", {{"code", code}, {"message", message}}}});
}

void Server::handle(const json& message) {
  if (!message.is_object()) {
    replyError(nullptr, kInvalidRequest, "a message is a JSON object");
    return;
  }
  json id = nullptr;
  const bool hasId = message.contains("id");
  if (hasId) {
    const json& v = message["id"];
    if (v.is_number_integer() || v.is_string()) id = v;
  }
  auto jsonrpc = message.find("jsonrpc");
  if (jsonrpc == message.end() || *jsonrpc != "2.0") {
    replyError(id, kInvalidRequest, "'jsonrpc' must be \"2.0\"");
    return;
  }
  auto method = message.find("method");
  if (method == message.end()) {
    if (message.contains("result") || message.contains("error")) return;  // a response: the server asks nothing
    replyError(id, kInvalidRequest, "a message without 'method' that is no response");
    return;
  }
  if (!method->is_string()) {
    replyError(id, kInvalidRequest, "'method' is not a string");
    return;
  }
  if (hasId && id.is_null()) {
    replyError(nullptr, kInvalidRequest, "'id' is neither an integer nor a string");
    return;
  }
  static const json kNoParams = json::object();
  auto paramsIt = message.find("params");
  // `params` may be left out; a null one (some clients send it for `shutdown`) means the same.
  const json& params = paramsIt == message.end() || paramsIt->is_null() ? kNoParams : *paramsIt;
  if (!params.is_object() && !params.is_array()) {
    if (hasId) replyError(id, kInvalidParams, "'params' is neither an object nor an array");
    return;
  }
  const std::string& name = method->get_ref<const std::string&>();
  if (!hasId) {
    try {
      notification(name, params);
    } catch (const RpcError& e) {
      options_.log(fmt::format("{}: {}", name, e.message));
    } catch (const nlohmann::json::exception& e) {
      options_.log(fmt::format("{}: malformed params", name));
    } catch (const std::bad_alloc& e) {
      options_.log(outOfMemoryText(e, "handling " + name));
    }
    return;
  }
  try {
    if (shutdown_) throw RpcError{kInvalidRequest, "the server is shut down: only 'exit' is accepted"};
    if (!initialized_ && name != "initialize") throw RpcError{kServerNotInitialized, "'initialize' comes first"};
    reply(id, dispatch(name, params));
  } catch (const RpcError& e) {
    replyError(id, e.code, e.message);
  } catch (const nlohmann::json::exception& e) {
    replyError(id, kInvalidParams, fmt::format("malformed params of {}", name));
  } catch (const std::bad_alloc& e) {
    replyError(id, kRequestFailed, outOfMemoryText(e, "answering " + name));
  }
}

json Server::dispatch(const std::string& method, const json& params) {
  if (method == "initialize") return initialize(params);
  if (method == "shutdown") {
    shutdown_ = true;
    return nullptr;
  }
  if (method == "textDocument/documentSymbol") return documentSymbol(params);
  if (method == "workspace/symbol") return workspaceSymbol(params);
  if (method == "textDocument/definition" || method == "textDocument/declaration") return definition(params);
  if (method == "textDocument/references") return references(params);
  if (method == "textDocument/hover") return hover(params);
  if (method == "textDocument/completion") return completion(params);
  if (method == "textDocument/signatureHelp") return signatureHelp(params);
  if (method == "textDocument/prepareRename") return prepareRename(params);
  if (method == "textDocument/rename") return rename(params);
  if (method == "textDocument/semanticTokens/full") return semanticTokens(params);
  throw RpcError{kMethodNotFound, fmt::format("unknown method '{}'", method)};
}

void Server::notification(const std::string& method, const json& params) {
  if (method == "exit") {
    exit_ = true;
    return;
  }
  if (!initialized_ || shutdown_) return;  // the protocol drops notifications before initialize
  if (method == "textDocument/didOpen") return didOpen(params);
  if (method == "textDocument/didChange") return didChange(params);
  if (method == "textDocument/didClose") return didClose(params);
  // initialized, didSave, $/cancelRequest (requests are answered in order, at once), $/setTrace,
  // workspace/didChangeConfiguration: nothing to do.
}

// ------------------------------------------------------------------ lifecycle

json Server::initialize(const json& params) {
  if (initialized_) throw RpcError{kInvalidRequest, "'initialize' was already sent"};
  if (!params.is_object()) throw RpcError{kInvalidParams, "'params' is not an object"};
  // UTF-8 positions when the client offers them (fewer conversions), else UTF-16, the default.
  const json* encodings = nullptr;
  if (auto caps = params.find("capabilities"); caps != params.end() && caps->is_object())
    if (auto general = caps->find("general"); general != caps->end() && general->is_object())
      if (auto e = general->find("positionEncodings"); e != general->end() && e->is_array()) encodings = &*e;
  if (encodings)
    for (const json& e : *encodings)
      if (e == "utf-8") encoding_ = PositionEncoding::Utf8;
  std::string folder;
  if (auto folders = params.find("workspaceFolders");
      folders != params.end() && folders->is_array() && !folders->empty()) {
    const json& first = (*folders)[0];
    if (first.is_object() && first.contains("uri") && first["uri"].is_string())
      folder = uriToPath(first["uri"].get<std::string>()).value_or("");
  }
  if (folder.empty())
    if (auto root = params.find("rootUri"); root != params.end() && root->is_string())
      folder = uriToPath(root->get<std::string>()).value_or("");
  if (folder.empty())
    if (auto root = params.find("rootPath"); root != params.end() && root->is_string())
      folder = root->get<std::string>();
  initialized_ = true;
  if (!folder.empty()) loadWorkspace(folder);

  json legend = {{"tokenTypes", json::array()}, {"tokenModifiers", json::array()}};
  for (const char* t : kTokenTypes) legend["tokenTypes"].push_back(t);
  for (const char* m : kTokenModifiers) legend["tokenModifiers"].push_back(m);
  return json{{"capabilities",
               {{"positionEncoding", encoding_ == PositionEncoding::Utf8 ? "utf-8" : "utf-16"},
                {"textDocumentSync", {{"openClose", true}, {"change", 1}}},
                {"documentSymbolProvider", true},
                {"workspaceSymbolProvider", true},
                {"definitionProvider", true},
                {"declarationProvider", true},
                {"referencesProvider", true},
                {"hoverProvider", true},
                {"completionProvider", {{"triggerCharacters", {".", "#", "("}}, {"resolveProvider", false}}},
                {"signatureHelpProvider", {{"triggerCharacters", {"(", ","}}}},
                {"renameProvider", {{"prepareProvider", true}}},
                {"semanticTokensProvider", {{"legend", legend}, {"full", true}}}}},
              {"serverInfo", {{"name", "scanback"}, {"version", kScanbackVersion}}}};
}

void Server::loadWorkspace(const std::string& folder) {
  std::error_code ec;
  const fs::path rootPath = fs::absolute(folder, ec);
  root_ = rootPath.string();
  size_t count = 0;
  std::vector<fs::path> paths;
  for (fs::recursive_directory_iterator it(rootPath, fs::directory_options::skip_permission_denied, ec), end;
       !ec && it != end; it.increment(ec)) {
    if (it->is_directory(ec)) {
      if (skippedFolder(it->path())) it.disable_recursion_pending();
      continue;
    }
    if (!it->is_regular_file(ec) || !isStFile(it->path())) continue;
    if (++count > kMaxWorkspaceFiles) {
      options_.log(fmt::format("{}: more than {} .st files; the rest are left out", root_, kMaxWorkspaceFiles));
      break;
    }
    paths.push_back(it->path());
  }
  if (ec) options_.log(fmt::format("{}: {}", root_, ec.message()));
  std::sort(paths.begin(), paths.end());
  for (const fs::path& p : paths) {
    std::ifstream in(p, std::ios::binary);
    if (!in) continue;
    std::stringstream text;
    text << in.rdbuf();
    const std::string uri = pathToUri(p.string());
    onDisk_.insert(uri);
    setFile(uri, p.string(), std::make_shared<const std::string>(text.str()));
  }
  scheduleDiagnostics();
}

// ------------------------------------------------------------------ documents

void Server::setFile(const std::string& uri, const std::string& path, std::shared_ptr<const std::string> text) {
  if (text)
    files_[uri] = File{path, std::move(text), nullptr};
  else
    files_.erase(uri);
  project_.reset();
}

const Project& Server::project() {
  if (!project_) {
    std::vector<std::shared_ptr<const FileIndex>> files;
    for (auto& [uri, f] : files_) {
      if (!f.index) f.index = std::make_shared<const FileIndex>(uri, f.path, *f.text);
      files.push_back(f.index);
    }
    project_ = std::make_shared<const Project>(std::move(files));
  }
  return *project_;
}

void Server::didOpen(const json& params) {
  const json& doc = member(params, "textDocument");
  const std::string uri = stringMember(doc, "uri");
  Document d;
  d.text = stringMember(doc, "text");
  const json& version = member(doc, "version");
  if (version.is_number_integer()) d.version = version.get<int64_t>();
  const std::string path = uriToPath(uri).value_or(uri);
  setFile(uri, path, std::make_shared<const std::string>(d.text));
  open_[uri] = std::move(d);
  scheduleDiagnostics();
}

void Server::didChange(const json& params) {
  const json& doc = member(params, "textDocument");
  const std::string uri = stringMember(doc, "uri");
  auto it = open_.find(uri);
  if (it == open_.end()) throw RpcError{kInvalidParams, fmt::format("{} is not open", uri)};
  const json& changes = member(params, "contentChanges");
  if (!changes.is_array()) throw RpcError{kInvalidParams, "'contentChanges' is not an array"};
  Document d = it->second;
  for (const json& change : changes) {
    const std::string text = stringMember(change, "text");
    if (!change.contains("range")) {
      d.text = text;
      continue;
    }
    // An incremental change (the server asks for whole documents; a client may still send these).
    const json& r = change["range"];
    const LineMap lines(d.text);
    const json& s = member(r, "start");
    const json& e = member(r, "end");
    size_t from = lines.offset(Position{unsignedMember(s, "line"), unsignedMember(s, "character")}, encoding_);
    size_t to = lines.offset(Position{unsignedMember(e, "line"), unsignedMember(e, "character")}, encoding_);
    if (to < from) std::swap(from, to);
    d.text.replace(from, to - from, text);
  }
  if (const json& v = member(doc, "version"); v.is_number_integer()) d.version = v.get<int64_t>();
  setFile(uri, uriToPath(uri).value_or(uri), std::make_shared<const std::string>(d.text));
  it->second = std::move(d);
  scheduleDiagnostics();
}

void Server::didClose(const json& params) {
  const std::string uri = stringMember(member(params, "textDocument"), "uri");
  if (open_.erase(uri) == 0) return;
  // A file of the workspace folder goes back to its content on disk; any other leaves the project.
  std::shared_ptr<const std::string> replacement;
  const std::string path = uriToPath(uri).value_or(uri);
  if (onDisk_.count(uri)) {
    std::ifstream in(path, std::ios::binary);
    if (in) {
      std::stringstream text;
      text << in.rdbuf();
      replacement = std::make_shared<const std::string>(text.str());
    }
  }
  setFile(uri, path, std::move(replacement));
  scheduleDiagnostics();
}

// ------------------------------------------------------------------ diagnostics

void Server::scheduleDiagnostics() {
  std::vector<Snapshot> files;
  for (const auto& [uri, f] : files_) {
    Snapshot s{uri, f.path, f.text, std::nullopt};
    if (auto d = open_.find(uri); d != open_.end()) s.version = d->second.version;
    files.push_back(std::move(s));
  }
  {
    std::lock_guard lock(mutex_);
    pending_ = std::move(files);
    ++generation_;
    lastEdit_ = std::chrono::steady_clock::now();
  }
  changed_.notify_all();
}

uint64_t Server::publications() const {
  std::lock_guard lock(mutex_);
  return publications_;
}

void Server::waitForDiagnostics() {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [this] { return stopping_ || published_ == generation_; });
}

void Server::diagnosticsLoop() {
  std::unique_lock lock(mutex_);
  for (;;) {
    changed_.wait(lock, [this] { return stopping_ || published_ != generation_; });
    if (stopping_) return;
    // The quiet period: every edit restarts it.
    while (!stopping_ && std::chrono::steady_clock::now() < lastEdit_ + options_.debounce)
      changed_.wait_until(lock, lastEdit_ + options_.debounce);
    if (stopping_) return;
    const uint64_t generation = generation_;
    const std::vector<Snapshot> files = pending_;
    lock.unlock();

    std::vector<json> perFile(files.size(), json::array());
    try {
      SourceSet sources;
      for (const Snapshot& s : files) sources.add(s.path, *s.text);
      Diagnostics diagnostics;
      // Only the diagnostics matter here: the program itself is not run.
      static_cast<void>(compileProject(sources, diagnostics, options_.compile));
      std::vector<LineMap> lines;
      for (const Snapshot& s : files) lines.emplace_back(*s.text);
      for (const Diagnostic& d : diagnostics.items()) {
        const size_t f = d.span.file < files.size() ? d.span.file : 0;
        if (files.empty()) break;
        const int severity = d.severity == Severity::Error ? 1 : d.severity == Severity::Warning ? 2 : 3;
        const Range r = lines[f].range(d.span, encoding_);
        perFile[f].push_back(json{{"range",
                                   {{"start", {{"line", r.start.line}, {"character", r.start.character}}},
                                    {"end", {{"line", r.end.line}, {"character", r.end.character}}}}},
                                  {"severity", severity},
                                  {"source", "scanback"},
                                  {"message", d.message}});
      }
    } catch (const std::bad_alloc& e) {
      options_.log(outOfMemoryText(e, "compiling the project for its diagnostics"));
    }

    lock.lock();
    if (stopping_) return;
    if (generation_ != generation) continue;  // edited meanwhile: compile the newer text instead
    std::set<std::string> now;
    std::vector<json> messages;
    for (size_t i = 0; i < files.size(); ++i) {
      const std::string& uri = files[i].uri;
      // An open document hears of every compile of its text (its version says which); a file on
      // disk only when it has diagnostics, or had some that are gone now.
      if (perFile[i].empty() && !withDiagnostics_.count(uri) && !files[i].version) continue;
      if (!perFile[i].empty()) now.insert(uri);
      json params = {{"uri", uri}, {"diagnostics", std::move(perFile[i])}};
      if (files[i].version) params["version"] = *files[i].version;
      messages.push_back(json{{"method", "textDocument/publishDiagnostics"}, {"params", std::move(params)}});
    }
    // A file that left the project loses its diagnostics.
    for (const std::string& uri : withDiagnostics_)
      if (std::none_of(files.begin(), files.end(), [&](const Snapshot& s) { return s.uri == uri; }))
        messages.push_back(json{{"method", "textDocument/publishDiagnostics"},
                                {"params", {{"uri", uri}, {"diagnostics", json::array()}}}});
    withDiagnostics_ = std::move(now);
    lock.unlock();
    for (json& m : messages) send(std::move(m));
    lock.lock();
    published_ = generation;
    ++publications_;
    changed_.notify_all();
  }
}

// ------------------------------------------------------------------ positions

Server::At Server::at(const json& params) {
  const std::string uri = stringMember(member(params, "textDocument"), "uri");
  const Project& p = project();
  At a;
  a.file = p.file(uri);
  if (!a.file)
    throw RpcError{kInvalidParams, fmt::format("{} is neither open nor a file of the workspace folder", uri)};
  const json& pos = member(params, "position");
  a.file->lines().toSource(Position{unsignedMember(pos, "line"), unsignedMember(pos, "character")}, encoding_, a.line,
                           a.column);
  return a;
}

json Server::range(const FileIndex& file, const SourceSpan& span) const {
  const Range r = file.lines().range(span, encoding_);
  return json{{"start", {{"line", r.start.line}, {"character", r.start.character}}},
              {"end", {{"line", r.end.line}, {"character", r.end.character}}}};
}

json Server::location(const FileIndex& file, const SourceSpan& span) const {
  return json{{"uri", file.uri()}, {"range", range(file, span)}};
}

const Symbol* Server::symbolAt(const At& a) {
  const size_t token = a.file->tokenAt(a.line, a.column);
  if (token == std::string::npos) return nullptr;
  return project().resolve(*a.file, token);
}

// ------------------------------------------------------------------ navigation

json Server::documentSymbol(const json& params) {
  const std::string uri = stringMember(member(params, "textDocument"), "uri");
  const FileIndex* f = project().file(uri);
  if (!f) throw RpcError{kInvalidParams, fmt::format("{} is neither open nor a file of the workspace folder", uri)};
  const auto& symbols = f->symbols();
  std::vector<json> nodes(symbols.size());
  for (size_t i = 0; i < symbols.size(); ++i) {
    const Symbol& s = symbols[i];
    nodes[i] = json{{"name", s.name.empty() ? "?" : s.name},
                    {"kind", lspSymbolKind(s.kind)},
                    {"range", range(*f, s.range)},
                    {"selectionRange", range(*f, s.span)}};
    const std::string d = project().detail(s);
    if (!d.empty()) nodes[i]["detail"] = d;
  }
  // Children after their parents in `symbols`: attach from the last one up.
  json roots = json::array();
  for (size_t i = symbols.size(); i-- > 0;) {
    if (symbols[i].parent >= 0) {
      json& parent = nodes[static_cast<size_t>(symbols[i].parent)];
      if (!parent.contains("children")) parent["children"] = json::array();
      parent["children"].insert(parent["children"].begin(), std::move(nodes[i]));
    }
  }
  for (size_t i = 0; i < symbols.size(); ++i)
    if (symbols[i].parent < 0) roots.push_back(std::move(nodes[i]));
  return roots;
}

json Server::workspaceSymbol(const json& params) {
  const std::string query = upperCase(stringMember(params, "query"));
  json out = json::array();
  for (const auto& f : project().files())
    for (const Symbol& s : f->symbols()) {
      if (s.kind == SymbolKind::Variable && s.ownerPou) continue;  // a POU's variables: its outline has them
      if (!query.empty() && upperCase(s.name).find(query) == std::string::npos) continue;
      json item = {{"name", s.name}, {"kind", lspSymbolKind(s.kind)}, {"location", location(*f, s.span)}};
      if (!s.container.empty()) item["containerName"] = s.ownerPou ? s.ownerPou->name : s.container;
      out.push_back(std::move(item));
      if (out.size() >= 1000) return out;
    }
  return out;
}

json Server::definition(const json& params) {
  const At a = at(params);
  const Symbol* s = symbolAt(a);
  if (!s || !s->file) return nullptr;
  return location(*s->file, s->span);
}

json Server::references(const json& params) {
  const At a = at(params);
  const Symbol* s = symbolAt(a);
  json out = json::array();
  if (!s || !s->file) return out;
  bool withDeclaration = true;
  if (auto c = params.find("context"); c != params.end() && c->is_object() && c->contains("includeDeclaration"))
    withDeclaration = (*c)["includeDeclaration"] == true;
  for (const Project::Occurrence& o : project().references(*s)) {
    if (!withDeclaration && o.file == s->file && o.span.line == s->span.line && o.span.column == s->span.column)
      continue;
    out.push_back(location(*o.file, o.span));
  }
  return out;
}

json Server::hover(const json& params) {
  const At a = at(params);
  const size_t token = a.file->tokenAt(a.line, a.column);
  if (token == std::string::npos) return nullptr;
  const LexToken& t = a.file->tokens()[token];
  if (t.kind == TokenKind::DirectAddress)
    return json{{"contents", {{"kind", "markdown"}, {"value", fmt::format("direct address `{}`", t.text)}}},
                {"range", range(*a.file, t.span)}};
  const Symbol* s = project().resolve(*a.file, token);
  if (!s) return nullptr;
  return json{{"contents", {{"kind", "markdown"}, {"value", project().describe(*s)}}},
              {"range", range(*a.file, t.span)}};
}

// ------------------------------------------------------------------ editing

json Server::completion(const json& params) {
  const At a = at(params);
  const Project& p = project();
  const FileIndex& f = *a.file;
  const auto& tokens = f.tokens();
  // The word being typed, and what comes before it.
  size_t before = f.tokenBefore(a.line, a.column);
  std::string prefix;
  if (before != std::string::npos && tokens[before].kind == TokenKind::Identifier) {
    const LexToken& t = tokens[before];
    if (t.span.endLine == a.line && t.span.endColumn == a.column) {
      prefix = upperCase(t.text);
      before = before == 0 ? std::string::npos : before - 1;
    }
  }
  json items = json::array();
  std::set<std::string> seen;
  auto add = [&](const Symbol& s, const std::string& sortPrefix, std::string insert = "") {
    const std::string upper = upperCase(s.name);
    if (!prefix.empty() && upper.rfind(prefix, 0) != 0) return;
    if (!seen.insert(upper + (insert.empty() ? "" : "=")).second) return;
    json item = {
        {"label", insert.empty() ? s.name : insert}, {"kind", completionKind(s)}, {"sortText", sortPrefix + upper}};
    const std::string d = p.detail(s);
    if (!d.empty()) item["detail"] = d;
    if (!insert.empty()) {
      item["insertText"] = insert;
      item["filterText"] = s.name;
    }
    items.push_back(std::move(item));
  };
  const TokenKind k = before == std::string::npos ? TokenKind::EndOfFile : tokens[before].kind;
  if (k == TokenKind::Dot && before > 0) {
    if (auto type = p.typeOfExpression(f, before - 1))
      for (const Symbol* s : p.members(*type)) {
        if (s->kind == SymbolKind::EnumValue) continue;
        add(*s, "0");
      }
    return json{{"isIncomplete", false}, {"items", std::move(items)}};
  }
  if (k == TokenKind::Hash && before > 0 && tokens[before - 1].kind == TokenKind::Identifier) {
    for (const Symbol* s : p.members(TypeView{nullptr, upperCase(tokens[before - 1].text)}))
      if (s->kind == SymbolKind::EnumValue) add(*s, "0");
    return json{{"isIncomplete", false}, {"items", std::move(items)}};
  }
  // In a call's parentheses, where an argument starts: the callee's parameters, named.
  if ((k == TokenKind::LParen || k == TokenKind::Comma) && before != std::string::npos)
    if (auto call = p.callAt(f, before))
      for (const Symbol* s : p.parameters(call->calleeType)) {
        const bool output =
            s->var ? s->var->section == ast::VarSection::Output : s->nativeSection == VarSection::Output;
        add(*s, "0", s->name + (output ? " => " : " := "));
      }
  for (const Symbol* s : p.visible(f, a.line)) add(*s, s->ownerPou || !s->container.empty() ? "1" : "2");
  auto word = [&](const std::string& label, int kind, const std::string& sortPrefix) {
    if (!prefix.empty() && upperCase(label).rfind(prefix, 0) != 0) return;
    if (!seen.insert(upperCase(label)).second) return;
    items.push_back(json{{"label", label}, {"kind", kind}, {"sortText", sortPrefix + label}});
  };
  for (const char* t : kTypeNames) word(t, 25, "3");
  for (const char* b : {"TON", "TOF", "TP", "R_TRIG", "F_TRIG", "CTU", "CTD", "CTUD", "SR", "RS"}) word(b, 7, "3");
  for (size_t kw = static_cast<size_t>(TokenKind::KwProgram); kw < static_cast<size_t>(TokenKind::Count_); ++kw)
    word(std::string(tokenKindName(static_cast<TokenKind>(kw))), 14, "4");
  for (const Snippet& s : kSnippets) {
    if (!prefix.empty() && upperCase(s.label).rfind(prefix, 0) != 0) continue;
    items.push_back(json{{"label", s.label},
                         {"kind", 15},
                         {"insertText", s.body},
                         {"insertTextFormat", 2},
                         {"detail", "snippet"},
                         {"sortText", std::string("5") + s.label}});
  }
  return json{{"isIncomplete", false}, {"items", std::move(items)}};
}

json Server::signatureHelp(const json& params) {
  const At a = at(params);
  const Project& p = project();
  const FileIndex& f = *a.file;
  const size_t before = f.tokenBefore(a.line, a.column);
  if (before == std::string::npos) return nullptr;
  auto call = p.callAt(f, before);
  if (!call) return nullptr;
  const std::vector<const Symbol*> parameters = p.parameters(call->calleeType);
  // The name as called: a POU's, an instance's (`fillTimer`), or the type of an initial value.
  const LexToken& calleeToken = f.tokens()[call->open - 1];
  const std::string name = call->callee                                ? call->callee->name
                           : calleeToken.kind == TokenKind::Identifier ? std::string(calleeToken.text)
                                                                       : call->calleeType;
  std::string label = name + "(";
  json params_ = json::array();
  for (size_t i = 0; i < parameters.size(); ++i) {
    const Symbol& s = *parameters[i];
    const bool output = s.var ? s.var->section == ast::VarSection::Output : s.nativeSection == VarSection::Output;
    const std::string text = fmt::format("{} {} {}", s.name, output ? "=>" : ":=", typeText(s));
    if (i) label += ", ";
    const size_t from = label.size();
    label += text;
    json param = {{"label", {from, label.size()}}};
    if (s.file) {
      const std::string comment = declarationComment(*s.file, s.span);
      if (!comment.empty()) param["documentation"] = comment;
    }
    params_.push_back(std::move(param));
  }
  label += ")";
  if (call->callee && call->callee->pou && call->callee->pou->returnType && call->callee->file)
    label += " : " + std::string(call->callee->file->slice(call->callee->pou->returnType->span));
  // The parameter named before the cursor in this argument, else the argument's position.
  size_t active = call->argument;
  for (size_t i = before + 1; i-- > call->open + 1;) {
    const LexToken& t = f.tokens()[i];
    if (t.kind == TokenKind::Comma) break;
    if ((t.kind == TokenKind::Assign || t.kind == TokenKind::Arrow) && i > 0) {
      const std::string upper = upperCase(f.tokens()[i - 1].text);
      for (size_t j = 0; j < parameters.size(); ++j)
        if (upperCase(parameters[j]->name) == upper) active = j;
      break;
    }
  }
  json signature = {{"label", label}, {"parameters", params_}};
  if (call->callee && call->callee->pou && call->callee->file) {
    const std::string comment = declarationComment(*call->callee->file, call->callee->span);
    if (!comment.empty()) signature["documentation"] = comment;
  }
  if (parameters.empty())
    active = 0;
  else
    active = std::min(active, parameters.size() - 1);
  return json{{"signatures", {signature}}, {"activeSignature", 0}, {"activeParameter", active}};
}

json Server::prepareRename(const json& params) {
  const At a = at(params);
  const size_t token = a.file->tokenAt(a.line, a.column);
  if (token == std::string::npos) return nullptr;
  const Symbol* s = project().resolve(*a.file, token);
  if (!s || !s->file) return nullptr;
  const LexToken& t = a.file->tokens()[token];
  return json{{"range", range(*a.file, t.span)}, {"placeholder", std::string(t.text)}};
}

json Server::rename(const json& params) {
  const std::string newName = stringMember(params, "newName");
  if (!isIdentifier(newName))
    throw RpcError{kRequestFailed, fmt::format("'{}' is not an identifier (or it is a keyword)", newName)};
  const At a = at(params);
  const Symbol* s = symbolAt(a);
  if (!s || !s->file) throw RpcError{kRequestFailed, "nothing the project declares is at this position"};
  const Project& p = project();
  // A name already visible where the symbol is declared would be captured: refuse.
  if (const Symbol* clash = p.lookup(*s->file, s->span.line, upperCase(newName));
      clash && clash != s && upperCase(newName) != upperCase(s->name) &&
      ((clash->ownerPou && clash->ownerPou == s->ownerPou) || clash->container == s->container))
    throw RpcError{kRequestFailed, fmt::format("'{}' is already declared here ({})", newName, p.detail(*clash))};
  json changes = json::object();
  for (const Project::Occurrence& o : p.references(*s)) {
    changes[o.file->uri()].push_back(json{{"range", range(*o.file, o.span)}, {"newText", newName}});
  }
  return json{{"changes", changes}};
}

json Server::semanticTokens(const json& params) {
  const std::string uri = stringMember(member(params, "textDocument"), "uri");
  const Project& p = project();
  const FileIndex* f = p.file(uri);
  if (!f) throw RpcError{kInvalidParams, fmt::format("{} is neither open nor a file of the workspace folder", uri)};
  json data = json::array();
  uint32_t prevLine = 0, prevChar = 0;
  const auto& tokens = f->tokens();
  for (size_t i = 0; i < tokens.size(); ++i) {
    const LexToken& t = tokens[i];
    int type = -1;
    unsigned modifiers = 0;
    if (t.kind == TokenKind::DirectAddress) {
      type = TMacro;
    } else if (t.kind == TokenKind::Identifier) {
      const Symbol* s = p.resolve(*f, i);
      if (!s) continue;
      if (s->span.line == t.span.line && s->span.column == t.span.column && s->file == f) modifiers |= 1u;
      switch (s->kind) {
        case SymbolKind::EnumValue: type = TEnumMember; break;
        case SymbolKind::Function: type = TFunction; break;
        case SymbolKind::FunctionBlock:
        case SymbolKind::Program:
        case SymbolKind::Interface: type = TClass; break;
        case SymbolKind::Method: type = TMethod; break;
        case SymbolKind::Struct: type = TStruct; break;
        case SymbolKind::Enum: type = TEnum; break;
        case SymbolKind::TypeAlias: type = TType; break;
        case SymbolKind::Variable:
        case SymbolKind::Field: {
          type = s->var && (s->var->section == ast::VarSection::Input || s->var->section == ast::VarSection::Output ||
                            s->var->section == ast::VarSection::InOut)
                     ? TParameter
                     : TVariable;
          if (s->var && s->var->constant) modifiers |= 2u;
          if (auto ty = p.typeOf(*s); ty && !ty->ref && !ty->name.empty()) {
            const auto [from, to] = p.globals().equal_range(ty->name);
            bool block = p.isStandardBlock(ty->name);
            for (auto it = from; it != to; ++it)
              if (it->second->kind == SymbolKind::FunctionBlock) block = true;
            if (block) modifiers |= 4u;
          }
          break;
        }
        default: continue;
      }
    } else {
      continue;
    }
    if (t.span.endLine != t.span.line) continue;  // the protocol's tokens are on one line
    const Range r = f->lines().range(t.span, encoding_);
    const uint32_t deltaLine = r.start.line - prevLine;
    const uint32_t deltaChar = deltaLine == 0 ? r.start.character - prevChar : r.start.character;
    data.push_back(deltaLine);
    data.push_back(deltaChar);
    data.push_back(r.end.character - r.start.character);
    data.push_back(type);
    data.push_back(modifiers);
    prevLine = r.start.line;
    prevChar = r.start.character;
  }
  return json{{"data", std::move(data)}};
}

}  // namespace scanback::lsp
