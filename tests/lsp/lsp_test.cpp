// The language server (lsp/) through a scripted client (lsp_client.h): every message it sends is
// checked against the shapes LSP 3.17 requires (lsp_shapes.h), every feature on examples/plant and
// on small programs written here.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <regex>

#include "lsp/text.h"
#include "tests/lsp/lsp_client.h"
#include "tests/lsp/lsp_shapes.h"
#include "tests/support/shell.h"
#include "vm/compiler/compiler.h"

namespace scanback::lsp::test {
namespace {

namespace fs = std::filesystem;

const std::string kPlant = std::string(SCANBACK_SOURCE_DIR) + "/examples/plant";

// A folder of .st files for one test, removed at its end.
class Folder {
 public:
  Folder() {
    path_ =
        fs::temp_directory_path() / ("scanback-lsp-" + std::to_string(::getpid()) + "-" + std::to_string(counter()++));
    fs::create_directories(path_);
  }
  ~Folder() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  std::string write(const std::string& name, const std::string& text) {
    std::ofstream(path_ / name, std::ios::binary) << text;
    return (path_ / name).string();
  }
  std::string path() const { return path_.string(); }

 private:
  static int& counter() {
    static int n = 0;
    return n;
  }
  fs::path path_;
};

// A response's result, its shape checked as a response.
json resultOf(const json& response) {
  EXPECT_EQ(checkResponse(response), "");
  EXPECT_TRUE(response.contains("result")) << response.dump();
  return response.value("result", json());
}

int errorCode(const json& response) {
  EXPECT_EQ(checkResponse(response), "");
  EXPECT_TRUE(response.contains("error")) << response.dump();
  return response.contains("error") ? response["error"]["code"].get<int>() : 0;
}

json textDocument(const std::string& path) { return json{{"uri", uriOf(path)}}; }

void open(LspClient& c, const std::string& path, const std::string& text, int version = 1) {
  c.notify("textDocument/didOpen",
           {{"textDocument", {{"uri", uriOf(path)}, {"languageId", "st"}, {"version", version}, {"text", text}}}});
}

void change(LspClient& c, const std::string& path, const std::string& text, int version) {
  c.notify("textDocument/didChange", {{"textDocument", {{"uri", uriOf(path)}, {"version", version}}},
                                      {"contentChanges", json::array({{{"text", text}}})}});
}

json at(const std::string& path, const json& position) {
  return json{{"textDocument", textDocument(path)}, {"position", position}};
}

std::vector<std::string> labels(const json& completion) {
  std::vector<std::string> out;
  for (const json& i : completion["items"]) out.push_back(i["label"]);
  return out;
}

bool has(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

// Occurrences of `word` as a whole identifier in `text`, outside comments: what references must find.
size_t occurrences(const std::string& text, const std::string& word) {
  std::string code;  // the text with its comments blanked
  for (size_t i = 0; i < text.size(); ++i) {
    if (text.compare(i, 2, "(*") == 0) {
      const size_t end = text.find("*)", i + 2);
      i = end == std::string::npos ? text.size() : end + 1;
      code += ' ';
      continue;
    }
    if (text.compare(i, 2, "//") == 0) {
      while (i < text.size() && text[i] != '\n') ++i;
      code += '\n';
      continue;
    }
    code += text[i];
  }
  const std::regex re("\\b" + word + "\\b", std::regex::icase);
  return static_cast<size_t>(std::distance(std::sregex_iterator(code.begin(), code.end(), re), std::sregex_iterator()));
}

// ------------------------------------------------------------------ lifecycle and malformed input

TEST(Lsp, InitializeAnswersCapabilitiesAndShutdownExitsWithZero) {
  LspClient c;
  const json init = resultOf(c.initialize(""));
  EXPECT_EQ(checkInitializeResult(init), "");
  const json& caps = init["capabilities"];
  EXPECT_EQ(caps["positionEncoding"], "utf-16");  // the client offered nothing else
  for (const char* p : {"definitionProvider", "declarationProvider", "referencesProvider", "hoverProvider",
                        "documentSymbolProvider", "workspaceSymbolProvider"})
    EXPECT_EQ(caps[p], true) << p;
  EXPECT_EQ(caps["textDocumentSync"]["change"], 1);
  EXPECT_EQ(init["serverInfo"]["name"], "scanback");
  EXPECT_EQ(c.shutdown(), 0);
}

TEST(Lsp, ExitWithoutShutdownExitsWithOne) {
  LspClient c;
  c.initialize("");
  c.notify("exit", nullptr);
  EXPECT_EQ(c.exitCode(), 1);
}

TEST(Lsp, RequestsBeforeInitializeAndAfterShutdownAreRefused) {
  LspClient c;
  EXPECT_EQ(errorCode(c.request("textDocument/hover", at("/x.st", {{"line", 0}, {"character", 0}}))), -32002);
  c.initialize("");
  EXPECT_EQ(errorCode(c.request("initialize", {{"processId", nullptr}, {"capabilities", json::object()}})), -32600);
  resultOf(c.request("shutdown", nullptr));
  EXPECT_EQ(errorCode(c.request("workspace/symbol", {{"query", ""}})), -32600);
  c.notify("exit", nullptr);
  EXPECT_EQ(c.exitCode(), 0);
}

TEST(Lsp, MalformedMessagesGetJsonRpcErrorsAndTheServerGoesOn) {
  LspClient c;
  c.initialize("");
  // Not JSON: Parse error, with a null id.
  c.sendRaw("Content-Length: 9\r\n\r\n{\"id\": 1,");
  json r = c.nextResponse();
  EXPECT_EQ(errorCode(r), -32700);
  EXPECT_TRUE(r["id"].is_null());
  // No Content-Length: the framing's error, answered the same way.
  c.sendRaw("Content-Type: x\r\n\r\n");
  EXPECT_EQ(errorCode(c.nextResponse()), -32700);
  // JSON, but not JSON-RPC 2.0.
  c.sendRaw(net::MessageWriter::frame(json{{"id", 7}, {"method", "workspace/symbol"}}));
  r = c.nextResponse();
  EXPECT_EQ(errorCode(r), -32600);
  EXPECT_EQ(r["id"], 7);
  c.sendRaw(net::MessageWriter::frame(json::array({1, 2})));
  EXPECT_EQ(errorCode(c.nextResponse()), -32600);
  c.sendRaw(net::MessageWriter::frame(json{{"jsonrpc", "2.0"}, {"id", true}, {"method", "shutdown"}}));
  EXPECT_EQ(errorCode(c.nextResponse()), -32600);
  c.sendRaw(net::MessageWriter::frame(json{{"jsonrpc", "2.0"}, {"id", 8}, {"method", 5}}));
  EXPECT_EQ(errorCode(c.nextResponse()), -32600);
  // Unknown method; params of the wrong shape.
  EXPECT_EQ(errorCode(c.request("textDocument/frobnicate", json::object())), -32601);
  EXPECT_EQ(errorCode(c.request("textDocument/definition", {{"textDocument", 5}})), -32602);
  EXPECT_EQ(errorCode(c.request("textDocument/definition", {{"textDocument", {{"uri", "file:///nowhere.st"}}},
                                                            {"position", {{"line", -1}, {"character", 0}}}})),
            -32602);
  c.sendRaw(
      net::MessageWriter::frame(json{{"jsonrpc", "2.0"}, {"id", 9}, {"method", "workspace/symbol"}, {"params", 3}}));
  EXPECT_EQ(errorCode(c.nextResponse()), -32602);
  // Malformed notifications are dropped without an answer; the next request is answered.
  c.notify("textDocument/didChange", {{"textDocument", 1}});
  c.notify("textDocument/didOpen", json::object());
  EXPECT_EQ(checkSymbolInformation(resultOf(c.request("workspace/symbol", {{"query", ""}}))), "");
  EXPECT_EQ(c.shutdown(), 0);
}

// ------------------------------------------------------------------ diagnostics

TEST(Lsp, DiagnosticsOfAnEditReplaceTheDocumentsAndReachOtherFiles) {
  Folder f;
  for (const char* name : {"config.st", "fbs.st", "programs.st", "types.st"})
    f.write(name, readFile(kPlant + "/" + name));
  const std::string programs = f.path() + "/programs.st", types = f.path() + "/types.st";
  LspClient c;
  c.initialize(f.path());
  c.server().waitForDiagnostics();
  // The plant compiles: nothing published as an error.
  for (const json& n : c.notifications()) {
    EXPECT_EQ(checkNotification(n), "");
    for (const json& d : n["params"]["diagnostics"]) EXPECT_NE(d["severity"], 1) << d.dump();
  }
  const std::string text = readFile(programs);
  open(c, programs, text);
  // A missing ';': the error where it is missing, just after the statement (issue 31).
  const std::string broken = std::regex_replace(text, std::regex("hornLatch := FALSE;"), "hornLatch := FALSE",
                                                std::regex_constants::format_first_only);
  change(c, programs, broken, 2);
  json p = c.waitForDiagnostics(uriOf(programs), [](const json& d) { return !d["diagnostics"].empty(); });
  EXPECT_EQ(checkPublishDiagnostics(p), "");
  EXPECT_EQ(p["version"], 2);
  ASSERT_EQ(p["diagnostics"].size(), 1u);
  EXPECT_EQ(p["diagnostics"][0]["severity"], 1);
  EXPECT_NE(p["diagnostics"][0]["message"].get<std::string>().find("expected ';'"), std::string::npos);
  EXPECT_EQ(p["diagnostics"][0]["range"]["start"],
            positionOf(broken, "hornLatch := FALSE", 0, static_cast<int>(std::string("hornLatch := FALSE").size())));
  // `scanback check` of the same project says the same place: the diagnostic's start is its line
  // and column (1-based there).
  {
    Folder g;
    std::string files;
    for (const char* name : {"config.st", "fbs.st", "types.st"})
      files += " " + scanback::test::shellQuote(g.write(name, readFile(kPlant + "/" + name)));
    files += " " + scanback::test::shellQuote(g.write("programs.st", broken));
    const scanback::test::ShellResult check = scanback::test::runScanback("check" + files);
    EXPECT_EQ(check.exitCode, 1) << check.err;
    const json start = p["diagnostics"][0]["range"]["start"];
    const std::string where = "programs.st:" + std::to_string(start["line"].get<int>() + 1) + ":" +
                              std::to_string(start["character"].get<int>() + 1) + ": error: expected ';'";
    EXPECT_NE((check.out + check.err).find(where), std::string::npos) << where << " in\n" << check.out << check.err;
  }
  // Fixed: the document's diagnostics are replaced by none.
  change(c, programs, text, 3);
  p = c.waitForDiagnostics(uriOf(programs), [](const json& d) { return d["diagnostics"].empty(); });
  EXPECT_EQ(p["version"], 3);
  // An edit of types.st (open) breaks programs.st (closed now, from disk): multi-file.
  c.notify("textDocument/didClose", {{"textDocument", textDocument(programs)}});
  const std::string typesText = readFile(types);
  open(c, types, typesText);
  change(c, types, std::regex_replace(typesText, std::regex("LineState :"), "LineStates :"), 2);
  p = c.waitForDiagnostics(uriOf(programs), [](const json& d) { return !d["diagnostics"].empty(); });
  EXPECT_EQ(checkPublishDiagnostics(p), "");
  EXPECT_FALSE(p.contains("version"));  // not open
  bool named = false;
  for (const json& d : p["diagnostics"])
    named |= d["message"].get<std::string>().find("LineState") != std::string::npos;
  EXPECT_TRUE(named) << p.dump();
  EXPECT_EQ(c.shutdown(), 0);
}

TEST(Lsp, ABurstOfEditsEndsWithTheLastVersionsDiagnosticsNeverAnOlderOneAfterIt) {
  Folder f;
  const std::string text = "PROGRAM P\nVAR\n  x : INT;\nEND_VAR\nx := 1;\nEND_PROGRAM\n";
  const std::string path = f.write("p.st", text);
  LspClient c;
  c.initialize(f.path());
  open(c, path, text);
  // Twenty edits sent at once, alternately broken and fixed; the last one is broken.
  for (int v = 2; v <= 21; ++v) change(c, path, v % 2 ? "PROGRAM P\nx := ;\nEND_PROGRAM\n" : text, v);
  json p = c.waitForDiagnostics(uriOf(path), [](const json& d) { return d.value("version", 0) == 21; });
  EXPECT_FALSE(p["diagnostics"].empty()) << p.dump();
  // Every publication so far came in version order (a compile of older text never lands last).
  c.server().waitForDiagnostics();
  EXPECT_EQ(resultOf(c.request("workspace/symbol", {{"query", "P"}})).size(), 1u);
  int64_t last = 0;
  for (const json& n : c.notifications())
    if (n["params"]["uri"] == uriOf(path)) {
      EXPECT_GE(n["params"]["version"].get<int64_t>(), last);
      last = n["params"]["version"];
    }
  EXPECT_EQ(c.shutdown(), 0);
}

TEST(Lsp, WarningsArePublishedWithTheirSeverity) {
  Folder f;
  // CODESYS's implicit narrowing: a warning (docs/language.md), not an error.
  const std::string main =
      f.write("main.st",
              "PROGRAM Main\nVAR\n  d : DINT := 70000;\n  i : INT;\nEND_VAR\ni := d;\nEND_PROGRAM\n"
              "CONFIGURATION C\n  TASK T(INTERVAL := T#10ms);\n  PROGRAM M WITH T : Main;\nEND_CONFIGURATION\n");
  LspClient c;
  c.initialize(f.path());
  json p = c.waitForDiagnostics(uriOf(main), [](const json& d) { return !d["diagnostics"].empty(); });
  EXPECT_EQ(checkPublishDiagnostics(p), "");
  EXPECT_EQ(p["diagnostics"][0]["severity"], 2);
  EXPECT_EQ(p["diagnostics"][0]["range"]["start"]["line"], 5);
  c.shutdown();
}

// ------------------------------------------------------------------ navigation on the plant

class LspPlant : public ::testing::Test {
 protected:
  void SetUp() override {
    client.initialize(kPlant);
    programs = kPlant + "/programs.st";
    fbs = kPlant + "/fbs.st";
    programsText = readFile(programs);
    fbsText = readFile(fbs);
  }
  void TearDown() override { EXPECT_EQ(client.shutdown(), 0); }
  LspClient client;
  std::string programs, fbs, programsText, fbsText;
};

TEST_F(LspPlant, DocumentSymbolsOutlineThePousAndTheirVariables) {
  const json symbols = resultOf(client.request("textDocument/documentSymbol", {{"textDocument", textDocument(fbs)}}));
  EXPECT_EQ(checkDocumentSymbols(symbols), "");
  const json* pid = nullptr;
  for (const json& s : symbols)
    if (s["name"] == "PidCtrl") pid = &s;
  ASSERT_NE(pid, nullptr);
  EXPECT_EQ((*pid)["kind"], 5);
  EXPECT_EQ((*pid)["selectionRange"]["start"], positionOf(fbsText, "PidCtrl"));
  bool kp = false, reset = false;
  for (const json& child : (*pid)["children"]) {
    kp |= child["name"] == "kp" && child["detail"] == "REAL";
    reset |= child["name"] == "Reset" && child["kind"] == 6;
  }
  EXPECT_TRUE(kp && reset) << pid->dump();
}

TEST_F(LspPlant, WorkspaceSymbolsFindDeclarationsInEveryFile) {
  const json symbols = resultOf(client.request("workspace/symbol", {{"query", "pidc"}}));
  EXPECT_EQ(checkSymbolInformation(symbols), "");
  ASSERT_EQ(symbols.size(), 1u);
  EXPECT_EQ(symbols[0]["name"], "PidCtrl");
  EXPECT_EQ(symbols[0]["location"]["uri"], uriOf(fbs));
  const json all = resultOf(client.request("workspace/symbol", {{"query", ""}}));
  bool lineState = false;
  for (const json& s : all) lineState |= s["name"] == "LineState" && s["kind"] == 10;
  EXPECT_TRUE(lineState);
}

TEST_F(LspPlant, DefinitionAndDeclarationJumpAcrossFiles) {
  // `motor.Reset()`: the method of MotorCtl in fbs.st.
  json loc =
      resultOf(client.request("textDocument/definition", at(programs, positionOf(programsText, "motor.Reset", 0, 7))));
  EXPECT_EQ(checkLocation(loc), "");
  EXPECT_EQ(loc["uri"], uriOf(fbs));
  // MotorCtl's Reset, the one after `FUNCTION_BLOCK MotorCtl` (PidCtrl has one too).
  const size_t motorCtl = fbsText.find("FUNCTION_BLOCK MotorCtl");
  const size_t reset = fbsText.find("METHOD Reset", motorCtl);
  EXPECT_EQ(loc["range"]["start"], positionOf(fbsText.substr(0, reset) + "@", "@", 0, 7));
  // A local variable: its declaration in the same file.
  loc = resultOf(
      client.request("textDocument/declaration", at(programs, positionOf(programsText, "hornLatch := FALSE", 0, 2))));
  EXPECT_EQ(loc["uri"], uriOf(programs));
  EXPECT_EQ(loc["range"]["start"], positionOf(programsText, "hornLatch"));
  // A type in a declaration: the FB.
  loc = resultOf(client.request("textDocument/definition", at(programs, positionOf(programsText, ": MotorCtl", 0, 3))));
  EXPECT_EQ(loc["uri"], uriOf(fbs));
  EXPECT_EQ(loc["range"]["start"], positionOf(fbsText, "FUNCTION_BLOCK MotorCtl", 0, 15));
  // An enumeration value: in types.st.
  loc = resultOf(client.request("textDocument/definition", at(programs, positionOf(programsText, ":= Idle", 0, 4))));
  EXPECT_EQ(loc["uri"], uriOf(kPlant + "/types.st"));
  // A keyword: nothing.
  EXPECT_TRUE(
      resultOf(client.request("textDocument/definition", at(programs, positionOf(programsText, "END_VAR")))).is_null());
}

TEST_F(LspPlant, ReferencesFindEveryUseAndOnlyThoseOfTheSymbol) {
  const json refs =
      resultOf(client.request("textDocument/references", {{"textDocument", textDocument(programs)},
                                                          {"position", positionOf(programsText, "hornLatch")},
                                                          {"context", {{"includeDeclaration", true}}}}));
  ASSERT_TRUE(refs.is_array());
  for (const json& r : refs) EXPECT_EQ(checkLocation(r), "");
  EXPECT_EQ(refs.size(), occurrences(programsText, "hornLatch"));
  const json without =
      resultOf(client.request("textDocument/references", {{"textDocument", textDocument(programs)},
                                                          {"position", positionOf(programsText, "hornLatch")},
                                                          {"context", {{"includeDeclaration", false}}}}));
  EXPECT_EQ(without.size() + 1, refs.size());
  // `Reset` of MotorCtl, not PidCtrl's nor AlarmLatch's: calls through MotorCtl instances only.
  const json resets =
      resultOf(client.request("textDocument/references", {{"textDocument", textDocument(programs)},
                                                          {"position", positionOf(programsText, "motor.Reset", 0, 7)},
                                                          {"context", {{"includeDeclaration", true}}}}));
  for (const json& r : resets) {
    const std::string& text = r["uri"] == uriOf(fbs) ? fbsText : programsText;
    const json& start = r["range"]["start"];
    size_t line = 0, offset = 0;
    while (line < start["line"].get<size_t>()) offset = text.find('\n', offset) + 1, ++line;
    const std::string before = text.substr(offset, start["character"].get<size_t>());
    // Each is the declaration, the result assignment inside it, or a call on a MotorCtl.
    EXPECT_TRUE(before.find("motor") != std::string::npos || before.find("METHOD") != std::string::npos ||
                before.find_first_not_of(" ") == std::string::npos)
        << before;
  }
  EXPECT_GE(resets.size(), 2u);
}

TEST_F(LspPlant, HoverShowsTypeAddressInitialValueAndComment) {
  json h = resultOf(client.request("textDocument/hover", at(programs, positionOf(programsText, "startPb", 1, 1))));
  EXPECT_EQ(checkHover(h), "");
  const std::string v = h["contents"]["value"];
  EXPECT_NE(v.find("startPb AT %IX0.0 : BOOL"), std::string::npos) << v;
  EXPECT_NE(v.find("start push button"), std::string::npos) << v;
  h = resultOf(client.request("textDocument/hover", at(fbs, positionOf(fbsText, "kp :"))));
  const std::string kp = h["contents"]["value"];
  EXPECT_NE(kp.find("(VAR_INPUT) kp : REAL := 1.0"), std::string::npos) << kp;
  EXPECT_NE(kp.find("proportional gain"), std::string::npos) << kp;
  // A standard block's output.
  h = resultOf(client.request("textDocument/hover", at(programs, positionOf(programsText, "starvedTimer.Q", 0, 13))));
  EXPECT_NE(h["contents"]["value"].get<std::string>().find("Q : BOOL"), std::string::npos) << h.dump();
  // A POU: its kind, parameters and the comment above it.
  h = resultOf(client.request("textDocument/hover", at(fbs, positionOf(fbsText, "ScaleAnalog"))));
  const std::string scale = h["contents"]["value"];
  EXPECT_NE(scale.find("FUNCTION ScaleAnalog : REAL"), std::string::npos) << scale;
  EXPECT_NE(scale.find("raw : INT"), std::string::npos) << scale;
  EXPECT_NE(scale.find("Scale a raw analog input"), std::string::npos) << scale;
}

TEST_F(LspPlant, CompletionOffersMembersParametersNamesKeywordsAndSnippets) {
  // After `motor.`: MotorCtl's variables and methods, no locals.
  json r =
      resultOf(client.request("textDocument/completion", at(programs, positionOf(programsText, "motor.Reset", 0, 6))));
  EXPECT_EQ(checkCompletionList(r), "");
  std::vector<std::string> l = labels(r);
  EXPECT_TRUE(has(l, "Reset") && has(l, "timeout")) << r.dump();
  EXPECT_FALSE(has(l, "hornLatch"));
  // A standard block's fields.
  r = resultOf(
      client.request("textDocument/completion", at(programs, positionOf(programsText, "starvedTimer.Q", 0, 13))));
  l = labels(r);
  EXPECT_TRUE(has(l, "Q") && has(l, "ET") && has(l, "IN") && has(l, "PT"));
  EXPECT_FALSE(has(l, "running"));  // internal state
  // Names in scope by prefix, keywords and snippets.
  open(client, programs, programsText);
  const std::string typed = programsText + "\nPROGRAM Extra\nVAR\n  hornLocal : BOOL;\nEND_VAR\nhorn\nEND_PROGRAM\n";
  change(client, programs, typed, 2);
  const json where = positionOf(typed, "\nhorn\n", 0, 5);
  r = resultOf(client.request("textDocument/completion",
                              at(programs, {{"line", where["line"].get<int>() + 1}, {"character", 4}})));
  l = labels(r);
  EXPECT_TRUE(has(l, "hornLocal"));
  EXPECT_FALSE(has(l, "hornLatch"));  // LineControl's, not visible in Extra
  const std::string ifTyped = std::regex_replace(typed, std::regex("\nhorn\n"), "\nI\n");
  change(client, programs, ifTyped, 3);
  const json ifAt = positionOf(ifTyped, "\nI\n", 0, 2);
  r = resultOf(client.request("textDocument/completion",
                              at(programs, {{"line", ifAt["line"].get<int>() + 1}, {"character", 1}})));
  bool keyword = false, snippet = false;
  for (const json& i : r["items"]) {
    keyword |= i["label"] == "IF" && i["kind"] == 14;
    snippet |= i["label"] == "IF" && i["kind"] == 15 && i["insertTextFormat"] == 2;
  }
  EXPECT_TRUE(keyword && snippet) << r.dump();
  // In a call: the block's parameters, named.
  r = resultOf(client.request("textDocument/completion", at(programs, positionOf(programsText, "fillTimer(", 0, 10))));
  l = labels(r);
  EXPECT_TRUE(has(l, "IN := ") && has(l, "PT := ") && has(l, "Q => ")) << r.dump();
}

TEST_F(LspPlant, SignatureHelpFollowsTheArguments) {
  // A user function: `ScaleAnalog(raw, lo, hi)` as TankControl calls it.
  const size_t call = programsText.find("ScaleAnalog(");
  ASSERT_NE(call, std::string::npos);
  const json first = positionOf(programsText, "ScaleAnalog(", 0, 12);
  json r = resultOf(client.request("textDocument/signatureHelp", at(programs, first)));
  EXPECT_EQ(checkSignatureHelp(r), "");
  ASSERT_EQ(r["signatures"].size(), 1u);
  EXPECT_EQ(r["signatures"][0]["parameters"].size(), 3u);
  EXPECT_EQ(r["activeParameter"], 0);
  EXPECT_NE(r["signatures"][0]["label"].get<std::string>().find("ScaleAnalog(raw := INT"), std::string::npos);
  const size_t comma = programsText.find(',', call);
  const json second = positionOf(programsText.substr(0, comma + 1) + "@", "@");
  r = resultOf(client.request("textDocument/signatureHelp", at(programs, second)));
  EXPECT_EQ(r["activeParameter"], 1);
  // A standard block called with named arguments: the one named.
  r = resultOf(
      client.request("textDocument/signatureHelp", at(programs, positionOf(programsText, "fillTimer(IN", 0, 13))));
  EXPECT_NE(r["signatures"][0]["label"].get<std::string>().find("fillTimer("), std::string::npos) << r.dump();
}

TEST_F(LspPlant, SemanticTokensMarkEnumValuesInstancesAndAddresses) {
  const json legend = resultOf(client.request("workspace/symbol", {{"query", "x"}}));  // any request: the server is up
  (void)legend;
  json r = resultOf(client.request("textDocument/semanticTokens/full", {{"textDocument", textDocument(programs)}}));
  EXPECT_EQ(checkSemanticTokens(r), "");
  // Decode, and look at the token of `Idle` in `state : LineState := Idle;`, of `%IX0.0` and of `motor`.
  const json idle = positionOf(programsText, ":= Idle", 0, 3);
  const json address = positionOf(programsText, "%IX0.0");
  const json motor = positionOf(programsText, "motor :");
  uint32_t line = 0, character = 0;
  int found = 0;
  const json& d = r["data"];
  for (size_t i = 0; i + 4 < d.size(); i += 5) {
    line += d[i].get<uint32_t>();
    character = d[i] == 0 ? character + d[i + 1].get<uint32_t>() : d[i + 1].get<uint32_t>();
    const json here = {{"line", line}, {"character", character}};
    if (here == idle) found += d[i + 3] == 0 ? 1 : 100;               // enumMember
    if (here == address) found += d[i + 3] == 8 ? 1 : 100;            // macro
    if (here == motor) found += (d[i + 4].get<int>() & 4) ? 1 : 100;  // functionBlockInstance
  }
  EXPECT_EQ(found, 3);
}

TEST_F(LspPlant, RenameOfAPouEditsEveryFileAndTheProjectStillCompiles) {
  json prep = resultOf(client.request("textDocument/prepareRename", at(fbs, positionOf(fbsText, "PidCtrl"))));
  EXPECT_EQ(checkPrepareRename(prep), "");
  EXPECT_EQ(prep["placeholder"], "PidCtrl");
  json edit = resultOf(client.request("textDocument/rename", {{"textDocument", textDocument(fbs)},
                                                              {"position", positionOf(fbsText, "PidCtrl")},
                                                              {"newName", "PidController"}}));
  EXPECT_EQ(checkWorkspaceEdit(edit), "");
  EXPECT_GE(edit["changes"].size(), 2u);  // fbs.st and where it is used
  // Apply the edits and compile: the renamed project still compiles, and no PidCtrl is left.
  SourceSet sources;
  for (const char* name : {"config.st", "fbs.st", "programs.st", "types.st"}) {
    const std::string path = kPlant + "/" + name;
    std::string text = readFile(path);
    const LineMap lines(text);
    std::vector<std::pair<size_t, size_t>> spans;
    if (edit["changes"].contains(uriOf(path)))
      for (const json& e : edit["changes"][uriOf(path)])
        spans.emplace_back(
            lines.offset(Position{e["range"]["start"]["line"], e["range"]["start"]["character"]},
                         PositionEncoding::Utf16),
            lines.offset(Position{e["range"]["end"]["line"], e["range"]["end"]["character"]}, PositionEncoding::Utf16));
    std::sort(spans.rbegin(), spans.rend());
    for (auto [from, to] : spans) text.replace(from, to - from, "PidController");
    EXPECT_EQ(occurrences(text, "PidCtrl"), 0u) << name;
    sources.add(name, text);
  }
  Diagnostics d;
  EXPECT_NE(compileProject(sources, d), nullptr) << d.format(sources);
  // Not an identifier, or a keyword: refused.
  EXPECT_EQ(errorCode(client.request("textDocument/rename", {{"textDocument", textDocument(fbs)},
                                                             {"position", positionOf(fbsText, "PidCtrl")},
                                                             {"newName", "END_IF"}})),
            -32803);
  EXPECT_EQ(errorCode(client.request("textDocument/rename", {{"textDocument", textDocument(fbs)},
                                                             {"position", positionOf(fbsText, "PidCtrl")},
                                                             {"newName", "1x"}})),
            -32803);
}

// ------------------------------------------------------------------ small programs

TEST(Lsp, ResolvesInheritanceMethodsStructMembersAndQualifiedEnumValues) {
  Folder f;
  const std::string text =
      "TYPE Mode : (Off, Slow, Fast); END_TYPE\n"
      "TYPE Point : STRUCT x : REAL; y : REAL; END_STRUCT END_TYPE\n"
      "FUNCTION_BLOCK Base\nVAR_INPUT\n  speed : INT; // the speed\nEND_VAR\nEND_FUNCTION_BLOCK\n"
      "FUNCTION_BLOCK Derived EXTENDS Base\nVAR\n  where : Point;\n  m : Mode;\nEND_VAR\n"
      "METHOD Go : BOOL\nVAR_INPUT\n  steps : INT;\nEND_VAR\nspeed := steps;\nwhere.x := 1.0;\nm := Mode#Fast;\nGo := "
      "TRUE;\nEND_METHOD\n"
      "END_FUNCTION_BLOCK\n";
  const std::string path = f.write("oop.st", text);
  LspClient c;
  c.initialize(f.path());
  // `speed` in Derived's method: Base's input.
  json loc = resultOf(c.request("textDocument/definition", at(path, positionOf(text, "speed := steps"))));
  EXPECT_EQ(loc["range"]["start"], positionOf(text, "speed : INT"));
  // `steps`: the method's own input.
  loc = resultOf(c.request("textDocument/definition", at(path, positionOf(text, "steps;"))));
  EXPECT_EQ(loc["range"]["start"], positionOf(text, "steps : INT"));
  // `where.x`: Point's field.
  loc = resultOf(c.request("textDocument/definition", at(path, positionOf(text, "where.x", 0, 6))));
  EXPECT_EQ(loc["range"]["start"], positionOf(text, "x : REAL"));
  // `Mode#Fast`.
  loc = resultOf(c.request("textDocument/definition", at(path, positionOf(text, "Mode#Fast", 0, 5))));
  EXPECT_EQ(loc["range"]["start"], positionOf(text, "Fast)"));
  // `Go := TRUE`: the method's result, which is the method.
  loc = resultOf(c.request("textDocument/definition", at(path, positionOf(text, "Go := TRUE"))));
  EXPECT_EQ(loc["range"]["start"], positionOf(text, "Go : BOOL"));
  // Completion after `Mode#` and after `where.`
  open(c, path, text);
  const std::string typed = std::regex_replace(text, std::regex("m := Mode#Fast;"), "m := Mode#");
  change(c, path, typed, 2);
  json r = resultOf(c.request("textDocument/completion", at(path, positionOf(typed, "Mode#\n", 0, 5))));
  std::vector<std::string> l = labels(r);
  EXPECT_TRUE(has(l, "Off") && has(l, "Slow") && has(l, "Fast")) << r.dump();
  EXPECT_EQ(l.size(), 3u);
  // Hover on the inherited input shows its comment.
  json h = resultOf(c.request("textDocument/hover", at(path, positionOf(text, "speed := steps"))));
  EXPECT_NE(h["contents"]["value"].get<std::string>().find("the speed"), std::string::npos) << h.dump();
  // Rename of the variable: declaration and use.
  json edit = resultOf(c.request(
      "textDocument/rename",
      {{"textDocument", textDocument(path)}, {"position", positionOf(text, "steps : INT")}, {"newName", "count"}}));
  EXPECT_EQ(edit["changes"][uriOf(path)].size(), 2u);
  // Renaming `steps` to `speed` (visible there, inherited) would change what it means elsewhere:
  // the same-scope clash is refused, an inherited one is the user's call; a local clash:
  EXPECT_EQ(errorCode(c.request("textDocument/rename", {{"textDocument", textDocument(path)},
                                                        {"position", positionOf(text, "where : Point")},
                                                        {"newName", "m"}})),
            -32803);
  c.shutdown();
}

// A REFERENCE TO is used as what it designates (issue 30): `rp.y` goes to the structure's field,
// and a misused REF= is the compiler's error at its place.
TEST(Lsp, AReferenceResolvesAsWhatItDesignatesAndAMisusedRefIsAnError) {
  Folder f;
  const std::string text =
      "TYPE Point : STRUCT x : REAL; y : REAL; END_STRUCT END_TYPE\n"
      "PROGRAM P\nVAR\n  pt : Point;\n  rp : REFERENCE TO Point;\n  n : INT;\nEND_VAR\n"
      "rp REF= pt;\nrp.y := 1.0;\nEND_PROGRAM\n";
  const std::string path = f.write("refs.st", text);
  LspClient c;
  c.initialize(f.path());
  json loc = resultOf(c.request("textDocument/definition", at(path, positionOf(text, "rp.y", 0, 3))));
  EXPECT_EQ(loc["range"]["start"], positionOf(text, "y : REAL")) << loc.dump();
  open(c, path, text);
  const std::string broken = std::regex_replace(text, std::regex("rp REF= pt;"), "rp REF= n;");
  change(c, path, broken, 2);
  json p = c.waitForDiagnostics(uriOf(path), [](const json& d) { return !d["diagnostics"].empty(); });
  ASSERT_EQ(p["diagnostics"].size(), 1u) << p.dump();
  EXPECT_NE(p["diagnostics"][0]["message"].get<std::string>().find("REF= binds a REFERENCE TO Point"),
            std::string::npos)
      << p.dump();
  EXPECT_EQ(p["diagnostics"][0]["range"]["start"], positionOf(broken, "n;"));
  c.shutdown();
}

TEST(Lsp, PositionsCountUtf16UnitsOrUtf8BytesAsNegotiated) {
  Folder f;
  // 'é' is 2 bytes and 1 UTF-16 unit; '😀' 4 bytes and 2 units.
  const std::string text = "PROGRAM P\nVAR\n  x : INT;\nEND_VAR\n(* é😀 *) x := 1;\nEND_PROGRAM\n";
  const std::string path = f.write("u.st", text);
  for (const bool utf8 : {false, true}) {
    LspClient c;
    json caps = utf8 ? json{{"general", {{"positionEncodings", {"utf-8", "utf-16"}}}}} : json::object();
    const json init = resultOf(c.initialize(f.path(), caps));
    EXPECT_EQ(init["capabilities"]["positionEncoding"], utf8 ? "utf-8" : "utf-16");
    const uint32_t column = utf8 ? 13 : 10;  // of `x` on line 4
    json refs = resultOf(c.request("textDocument/references", {{"textDocument", textDocument(path)},
                                                               {"position", {{"line", 4}, {"character", column}}},
                                                               {"context", {{"includeDeclaration", true}}}}));
    ASSERT_EQ(refs.size(), 2u) << refs.dump();
    EXPECT_EQ(refs[1]["range"]["start"]["character"], column);
    EXPECT_EQ(refs[1]["range"]["end"]["character"], column + 1);
    c.shutdown();
  }
}

TEST(LspText, UrisRoundTripWithPercentEncoding) {
  EXPECT_EQ(pathToUri("/a b/ü.st"), "file:///a%20b/%C3%BC.st");
  EXPECT_EQ(uriToPath("file:///a%20b/%C3%BC.st"), "/a b/ü.st");
  EXPECT_EQ(uriToPath("file://localhost/x.st"), "/x.st");
  EXPECT_EQ(uriToPath("untitled:Untitled-1"), std::nullopt);
  EXPECT_EQ(uriToPath("file:///a%2"), std::nullopt);
  EXPECT_EQ(uriToPath("file:///a%00b"), std::nullopt);
}

}  // namespace
}  // namespace scanback::lsp::test
