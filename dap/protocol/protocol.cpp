#include "dap/protocol/protocol.h"

namespace scanback::dap {

namespace {
template <class T>
void put(json& j, const char* key, const std::optional<T>& value) {
  if (value) j[key] = *value;
}
}  // namespace

void to_json(json& j, const Source& s) {
  j = json::object();
  j["name"] = s.name;
  if (!s.path.empty()) j["path"] = s.path;
  if (s.sourceReference > 0) j["sourceReference"] = s.sourceReference;
}

void from_json(const json& j, SourceBreakpoint& b) {
  b.line = j.at("line").get<int64_t>();
  b.column = optionalMember<int64_t>(j, "column");
  b.condition = optionalMember<std::string>(j, "condition");
  b.hitCondition = optionalMember<std::string>(j, "hitCondition");
  b.logMessage = optionalMember<std::string>(j, "logMessage");
}

void to_json(json& j, const Breakpoint& b) {
  j = json::object();
  put(j, "id", b.id);
  j["verified"] = b.verified;
  put(j, "message", b.message);
  put(j, "source", b.source);
  put(j, "line", b.line);
  put(j, "column", b.column);
  put(j, "endLine", b.endLine);
  put(j, "endColumn", b.endColumn);
  put(j, "reason", b.reason);
}

void to_json(json& j, const StackFrame& f) {
  j = json::object();
  j["id"] = f.id;
  j["name"] = f.name;
  put(j, "source", f.source);
  j["line"] = f.line;
  j["column"] = f.column;
  put(j, "endLine", f.endLine);
  put(j, "endColumn", f.endColumn);
  put(j, "presentationHint", f.presentationHint);
}

void to_json(json& j, const Scope& s) {
  j = json::object();
  j["name"] = s.name;
  put(j, "presentationHint", s.presentationHint);
  j["variablesReference"] = s.variablesReference;
  put(j, "namedVariables", s.namedVariables);
  put(j, "indexedVariables", s.indexedVariables);
  j["expensive"] = s.expensive;
}

void to_json(json& j, const Variable& v) {
  j = json::object();
  j["name"] = v.name;
  j["value"] = v.value;
  put(j, "type", v.type);
  put(j, "evaluateName", v.evaluateName);
  j["variablesReference"] = v.variablesReference;
  put(j, "namedVariables", v.namedVariables);
  put(j, "indexedVariables", v.indexedVariables);
  if (v.presentationHint) {
    json h = json::object();
    put(h, "kind", v.presentationHint->kind);
    if (!v.presentationHint->attributes.empty()) h["attributes"] = v.presentationHint->attributes;
    j["presentationHint"] = h;
  }
}

void to_json(json& j, const Thread& t) { j = json{{"id", t.id}, {"name", t.name}}; }

}  // namespace scanback::dap
