#include "tests/lsp/lsp_shapes.h"

namespace scanback::lsp::test {

namespace {

bool isUinteger(const json& v) { return v.is_number_unsigned() || (v.is_number_integer() && v.get<int64_t>() >= 0); }

bool before(const json& a, const json& b) {
  return a["line"].get<uint64_t>() < b["line"].get<uint64_t>() ||
         (a["line"] == b["line"] && a["character"].get<uint64_t>() <= b["character"].get<uint64_t>());
}

std::string checkDocumentSymbol(const json& s, const std::string& where) {
  if (!s.is_object()) return where + ": not an object";
  if (!s.contains("name") || !s["name"].is_string() || s["name"].get<std::string>().empty())
    return where + ": 'name' is missing or empty";
  if (!s.contains("kind") || !s["kind"].is_number_integer() || s["kind"] < 1 || s["kind"] > 26)
    return where + ": 'kind' is not a SymbolKind (1..26)";
  if (auto e = checkRange(s.value("range", json()), where + ".range"); !e.empty()) return e;
  if (auto e = checkRange(s.value("selectionRange", json()), where + ".selectionRange"); !e.empty()) return e;
  if (!before(s["range"]["start"], s["selectionRange"]["start"]) ||
      !before(s["selectionRange"]["end"], s["range"]["end"]))
    return where + ": selectionRange is not contained in range";
  if (s.contains("detail") && !s["detail"].is_string()) return where + ": 'detail' is not a string";
  if (s.contains("children")) {
    if (!s["children"].is_array()) return where + ": 'children' is not an array";
    for (size_t i = 0; i < s["children"].size(); ++i)
      if (auto e = checkDocumentSymbol(s["children"][i], where + ".children[" + std::to_string(i) + "]"); !e.empty())
        return e;
  }
  return "";
}

}  // namespace

std::string checkResponse(const json& m) {
  if (!m.is_object()) return "response: not an object";
  if (m.value("jsonrpc", "") != "2.0") return "response: 'jsonrpc' is not \"2.0\"";
  if (!m.contains("id") || !(m["id"].is_number_integer() || m["id"].is_string() || m["id"].is_null()))
    return "response: 'id' is missing or of the wrong type";
  if (m.contains("result") == m.contains("error")) return "response: not exactly one of 'result' and 'error'";
  if (m.contains("error")) {
    const json& e = m["error"];
    if (!e.is_object() || !e.contains("code") || !e["code"].is_number_integer() || !e.contains("message") ||
        !e["message"].is_string())
      return "response: 'error' lacks an integer 'code' or a string 'message'";
  }
  return "";
}

std::string checkNotification(const json& m) {
  if (!m.is_object()) return "notification: not an object";
  if (m.value("jsonrpc", "") != "2.0") return "notification: 'jsonrpc' is not \"2.0\"";
  if (!m.contains("method") || !m["method"].is_string()) return "notification: 'method' is missing";
  if (m.contains("id")) return "notification: has an 'id'";
  return "";
}

std::string checkPosition(const json& v, const std::string& where) {
  if (!v.is_object()) return where + ": not an object";
  if (!v.contains("line") || !isUinteger(v["line"])) return where + ": 'line' is not a uinteger";
  if (!v.contains("character") || !isUinteger(v["character"])) return where + ": 'character' is not a uinteger";
  return "";
}

std::string checkRange(const json& v, const std::string& where) {
  if (!v.is_object()) return where + ": not an object";
  if (auto e = checkPosition(v.value("start", json()), where + ".start"); !e.empty()) return e;
  if (auto e = checkPosition(v.value("end", json()), where + ".end"); !e.empty()) return e;
  if (!before(v["start"], v["end"])) return where + ": end before start";
  return "";
}

std::string checkLocation(const json& v, const std::string& where) {
  if (!v.is_object()) return where + ": not an object";
  if (!v.contains("uri") || !v["uri"].is_string()) return where + ": 'uri' is not a string";
  return checkRange(v.value("range", json()), where + ".range");
}

std::string checkInitializeResult(const json& v) {
  if (!v.is_object() || !v.contains("capabilities") || !v["capabilities"].is_object())
    return "InitializeResult: 'capabilities' is missing";
  const json& c = v["capabilities"];
  if (c.contains("positionEncoding") && c["positionEncoding"] != "utf-16" && c["positionEncoding"] != "utf-8" &&
      c["positionEncoding"] != "utf-32")
    return "InitializeResult: 'positionEncoding' is not a PositionEncodingKind";
  if (c.contains("textDocumentSync")) {
    const json& s = c["textDocumentSync"];
    if (s.is_object()) {
      if (s.contains("change") && (!s["change"].is_number_integer() || s["change"] < 0 || s["change"] > 2))
        return "InitializeResult: textDocumentSync.change is not a TextDocumentSyncKind";
    } else if (!s.is_number_integer()) {
      return "InitializeResult: 'textDocumentSync' is neither options nor a kind";
    }
  }
  if (c.contains("semanticTokensProvider")) {
    const json& legend = c["semanticTokensProvider"].value("legend", json());
    if (!legend.is_object() || !legend.contains("tokenTypes") || !legend["tokenTypes"].is_array() ||
        !legend.contains("tokenModifiers") || !legend["tokenModifiers"].is_array())
      return "InitializeResult: semanticTokensProvider.legend lacks tokenTypes or tokenModifiers";
  }
  if (v.contains("serverInfo") &&
      (!v["serverInfo"].is_object() || !v["serverInfo"].contains("name") || !v["serverInfo"]["name"].is_string()))
    return "InitializeResult: serverInfo.name is not a string";
  return "";
}

std::string checkPublishDiagnostics(const json& p) {
  if (!p.is_object() || !p.contains("uri") || !p["uri"].is_string())
    return "PublishDiagnosticsParams: 'uri' is missing";
  if (p.contains("version") && !p["version"].is_number_integer())
    return "PublishDiagnosticsParams: 'version' is not an integer";
  if (!p.contains("diagnostics") || !p["diagnostics"].is_array())
    return "PublishDiagnosticsParams: 'diagnostics' is not an array";
  for (size_t i = 0; i < p["diagnostics"].size(); ++i) {
    const json& d = p["diagnostics"][i];
    const std::string where = "diagnostics[" + std::to_string(i) + "]";
    if (auto e = checkRange(d.value("range", json()), where + ".range"); !e.empty()) return e;
    if (!d.contains("message") || !d["message"].is_string()) return where + ": 'message' is not a string";
    if (d.contains("severity") && (!d["severity"].is_number_integer() || d["severity"] < 1 || d["severity"] > 4))
      return where + ": 'severity' is not a DiagnosticSeverity";
    if (d.contains("source") && !d["source"].is_string()) return where + ": 'source' is not a string";
  }
  return "";
}

std::string checkDocumentSymbols(const json& v) {
  if (!v.is_array()) return "DocumentSymbol[]: not an array";
  for (size_t i = 0; i < v.size(); ++i)
    if (auto e = checkDocumentSymbol(v[i], "[" + std::to_string(i) + "]"); !e.empty()) return e;
  return "";
}

std::string checkSymbolInformation(const json& v) {
  if (!v.is_array()) return "SymbolInformation[]: not an array";
  for (size_t i = 0; i < v.size(); ++i) {
    const json& s = v[i];
    const std::string where = "[" + std::to_string(i) + "]";
    if (!s.contains("name") || !s["name"].is_string()) return where + ": 'name' is not a string";
    if (!s.contains("kind") || !s["kind"].is_number_integer() || s["kind"] < 1 || s["kind"] > 26)
      return where + ": 'kind' is not a SymbolKind";
    if (auto e = checkLocation(s.value("location", json()), where + ".location"); !e.empty()) return e;
    if (s.contains("containerName") && !s["containerName"].is_string())
      return where + ": 'containerName' is not a string";
  }
  return "";
}

std::string checkHover(const json& v) {
  if (!v.is_object() || !v.contains("contents")) return "Hover: 'contents' is missing";
  const json& c = v["contents"];
  if (!c.is_object() || (c.value("kind", "") != "markdown" && c.value("kind", "") != "plaintext") ||
      !c.contains("value") || !c["value"].is_string())
    return "Hover: 'contents' is not MarkupContent";
  if (v.contains("range")) return checkRange(v["range"], "Hover.range");
  return "";
}

std::string checkCompletionList(const json& v) {
  if (!v.is_object() || !v.contains("isIncomplete") || !v["isIncomplete"].is_boolean())
    return "CompletionList: 'isIncomplete' is not a boolean";
  if (!v.contains("items") || !v["items"].is_array()) return "CompletionList: 'items' is not an array";
  for (size_t i = 0; i < v["items"].size(); ++i) {
    const json& item = v["items"][i];
    const std::string where = "items[" + std::to_string(i) + "]";
    if (!item.contains("label") || !item["label"].is_string()) return where + ": 'label' is not a string";
    if (item.contains("kind") && (!item["kind"].is_number_integer() || item["kind"] < 1 || item["kind"] > 25))
      return where + ": 'kind' is not a CompletionItemKind";
    if (item.contains("insertTextFormat") && item["insertTextFormat"] != 1 && item["insertTextFormat"] != 2)
      return where + ": 'insertTextFormat' is not 1 or 2";
    for (const char* s : {"detail", "sortText", "filterText", "insertText"})
      if (item.contains(s) && !item[s].is_string()) return where + ": '" + s + "' is not a string";
  }
  return "";
}

std::string checkSignatureHelp(const json& v) {
  if (!v.is_object() || !v.contains("signatures") || !v["signatures"].is_array())
    return "SignatureHelp: 'signatures' is not an array";
  for (const json& s : v["signatures"]) {
    if (!s.contains("label") || !s["label"].is_string()) return "SignatureInformation: 'label' is not a string";
    if (s.contains("parameters")) {
      for (const json& p : s["parameters"]) {
        const json& l = p.value("label", json());
        if (l.is_string()) continue;
        if (!l.is_array() || l.size() != 2 || !isUinteger(l[0]) || !isUinteger(l[1]) || l[0] > l[1] ||
            l[1].get<size_t>() > s["label"].get<std::string>().size())
          return "ParameterInformation: 'label' is neither a string nor offsets into the signature's label";
      }
    }
  }
  for (const char* f : {"activeSignature", "activeParameter"})
    if (v.contains(f) && !isUinteger(v[f])) return std::string("SignatureHelp: '") + f + "' is not a uinteger";
  return "";
}

std::string checkWorkspaceEdit(const json& v) {
  if (!v.is_object() || !v.contains("changes") || !v["changes"].is_object())
    return "WorkspaceEdit: 'changes' is missing";
  for (const auto& [uri, edits] : v["changes"].items()) {
    if (!edits.is_array()) return "WorkspaceEdit: the edits of " + uri + " are not an array";
    for (const json& e : edits) {
      if (auto r = checkRange(e.value("range", json()), "TextEdit.range"); !r.empty()) return r;
      if (!e.contains("newText") || !e["newText"].is_string()) return "TextEdit: 'newText' is not a string";
    }
  }
  return "";
}

std::string checkPrepareRename(const json& v) {
  if (!v.is_object()) return "prepareRename: not an object";
  if (auto e = checkRange(v.value("range", json()), "prepareRename.range"); !e.empty()) return e;
  if (!v.contains("placeholder") || !v["placeholder"].is_string())
    return "prepareRename: 'placeholder' is not a string";
  return "";
}

std::string checkSemanticTokens(const json& v) {
  if (!v.is_object() || !v.contains("data") || !v["data"].is_array()) return "SemanticTokens: 'data' is not an array";
  if (v["data"].size() % 5 != 0) return "SemanticTokens: 'data' is not a multiple of 5 long";
  for (const json& n : v["data"])
    if (!isUinteger(n)) return "SemanticTokens: 'data' holds something that is not a uinteger";
  return "";
}

}  // namespace scanback::lsp::test
