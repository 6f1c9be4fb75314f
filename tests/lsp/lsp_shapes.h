// The shapes the LSP 3.17 specification gives the messages the server sends
// (https://microsoft.github.io/language-server-protocol/specifications/lsp/3.17/specification/):
// each check returns "" when `value` has every field the specification requires, with its type
// and range of values, and otherwise says what is wrong, where. There is no official JSON schema
// of LSP to validate against, so the required fields are checked here, type by type.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

namespace scanback::lsp::test {

using json = nlohmann::json;

// ResponseMessage: jsonrpc "2.0", id (integer, string or null), exactly one of result and error
// (ResponseError: integer code, string message).
std::string checkResponse(const json& m);
// NotificationMessage: jsonrpc "2.0", string method, no id.
std::string checkNotification(const json& m);
std::string checkPosition(const json& v, const std::string& where = "position");
std::string checkRange(const json& v, const std::string& where = "range");
std::string checkLocation(const json& v, const std::string& where = "location");
std::string checkInitializeResult(const json& v);
std::string checkPublishDiagnostics(const json& params);
std::string checkDocumentSymbols(const json& v);    // DocumentSymbol[]
std::string checkSymbolInformation(const json& v);  // SymbolInformation[]
std::string checkHover(const json& v);
std::string checkCompletionList(const json& v);
std::string checkSignatureHelp(const json& v);
std::string checkWorkspaceEdit(const json& v);
std::string checkPrepareRename(const json& v);
std::string checkSemanticTokens(const json& v);

}  // namespace scanback::lsp::test
